// pybind11 binding of the recursive privacy-preserving Fisher / CRLB / private RLS state
// (kernels/crlb.hpp) as sharpdp._core.crlb.PPState. Python validates every input; dimension
// errors of the kernel (std::invalid_argument) become ValueError. The batch update runs
// without the GIL.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "kernels/crlb.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

using kernels::CMapR;
using kernels::CMapV;
using kernels::PPState;
using Eigen::Index;

CMapR as_rmat(const py::array_t<double, py::array::c_style | py::array::forcecast>& a, const char* name) {
  if (a.ndim() != 2) throw std::invalid_argument(std::string(name) + " must be 2-dimensional");
  return CMapR(a.data(), a.shape(0), a.shape(1));
}

using Arr = py::array_t<double, py::array::c_style | py::array::forcecast>;

}  // namespace

void register_crlb(py::module_& m) {
  py::class_<PPState>(m, "PPState")
      .def(py::init<Index, bool, double>(), py::arg("n"), py::arg("track_crlb"), py::arg("rcond"))
      .def(
          "update",
          [](PPState& s, const Arr& H, const Arr& Sw, const Arr& S, const Arr& U) {
            const CMapR h = as_rmat(H, "H_k"), sw = as_rmat(Sw, "Sigma_w_k"), ss = as_rmat(S, "S_k");
            const CMapR u = as_rmat(U, "U_k");
            s.check_idle();
            s.update(h, sw, ss, &u);  // one step: keep the GIL (no concurrent mutation)
          },
          py::arg("H"), py::arg("Sigma_w"), py::arg("S"), py::arg("U"))
      .def(
          "rls_update",
          [](PPState& s, const Arr& y, const Arr& H, const Arr& Sw, const Arr& S, const Arr& U, const Arr& d) {
            if (y.ndim() != 1 || d.ndim() != 1) throw std::invalid_argument("y_k and d_k must be 1-dimensional");
            const CMapV yv(y.data(), y.shape(0)), dv(d.data(), d.shape(0));
            const CMapR h = as_rmat(H, "H_k"), sw = as_rmat(Sw, "Sigma_w_k"), ss = as_rmat(S, "S_k");
            const CMapR u = as_rmat(U, "U_k");
            s.check_idle();
            return s.rls_update(yv, h, sw, ss, &u, dv);
          },
          py::arg("y"), py::arg("H"), py::arg("Sigma_w"), py::arg("S"), py::arg("U"), py::arg("d"))
      .def(
          "update_zero_u_batch",
          [](PPState& s, const Arr& H, const Arr& Sw, const Arr& S) {
            if (H.ndim() != 3 || Sw.ndim() != 3 || S.ndim() != 3)
              throw std::invalid_argument("batch arrays must be 3-dimensional");
            const Index K = H.shape(0), m = H.shape(1);
            if (H.shape(2) != s.n()) throw std::invalid_argument("H must have n columns");
            if (Sw.shape(0) != K || S.shape(0) != K || Sw.shape(1) != m || Sw.shape(2) != m || S.shape(1) != m ||
                S.shape(2) != m)
              throw std::invalid_argument("batch arrays have inconsistent shapes");
            const double *h = H.data(), *sw = Sw.data(), *ss = S.data();
            s.check_idle();
            s.busy = true;
            try {
              py::gil_scoped_release rel;
              s.update_zero_u_batch(h, sw, ss, K, m);
            } catch (...) {
              s.busy = false;
              throw;
            }
            s.busy = false;
          },
          py::arg("H"), py::arg("Sigma_w"), py::arg("S"))
      .def_property_readonly("k", &PPState::k)
      .def_property_readonly("M", &PPState::M)
      .def_property_readonly("k0", &PPState::k0)
      .def_property_readonly("dense", &PPState::dense)
      .def("fisher", [](const PPState& s) { s.check_idle(); return s.fisher(); })
      .def("covariance",
           [](const PPState& s) -> py::object {
             s.check_idle();
             return s.has_crlb() ? py::cast(s.covariance()) : py::none();
           })
      .def("estimate",
           [](const PPState& s) -> py::object {
             s.check_idle();
             return s.has_crlb() ? py::cast(s.estimate()) : py::none();
           })
      .def("S_delta", [](const PPState& s) { s.check_idle(); return s.SD_dense(); });
}

}  // namespace sharpdp
