#include <pybind11/pybind11.h>

#include "common.hpp"

namespace py = pybind11;

namespace sharpdp {
// Samplers of the discrete / spherical local randomizers (RR, k-RR, PrivUnit).
void register_ldp_samplers(py::module_& m) { (void)m; }
}  // namespace sharpdp
