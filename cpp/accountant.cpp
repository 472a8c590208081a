#include <pybind11/pybind11.h>

#include "common.hpp"

namespace py = pybind11;

namespace sharpdp {
void register_accountant(py::module_& m) { (void)m; }
}  // namespace sharpdp
