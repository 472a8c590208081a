// The one compiled extension, sharpdp._core. Each area's pybind11 binding (bind_<area>.cpp)
// registers itself into its own submodule; the arithmetic
// lives in the Python-free kernels under cpp/kernels/.
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace sharpdp {
void register_accountant(py::module_& m);
void register_samplers(py::module_& m);
void register_histogram(py::module_& m);
void register_crlb(py::module_& m);
void register_blocks(py::module_& m);
void register_exact_krr(py::module_& m);
}  // namespace sharpdp

PYBIND11_MODULE(_core, m) {
  m.doc() = "sharpdp compiled core (internal; use the sharpdp.* Python API)";
  auto acc = m.def_submodule("accountant", "FFT accountant kernels");
  auto smp = m.def_submodule("samplers", "Vectorised local-randomizer samplers");
  auto his = m.def_submodule("histogram", "Shifted-log Gaussian release kernels");
  auto crl = m.def_submodule("crlb", "Recursive privacy-preserving Fisher/CRLB updates");
  auto krr = m.def_submodule("exact_krr", "Sharp shuffled binary RR: one class in O(w)");
  sharpdp::register_accountant(acc);
  sharpdp::register_samplers(smp);
  sharpdp::register_histogram(his);
  sharpdp::register_crlb(crl);
  sharpdp::register_exact_krr(krr);
  sharpdp::register_blocks(acc);  // (the atom-law block kernels: functions of sharpdp._core.accountant)
}
