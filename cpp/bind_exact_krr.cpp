// pybind11 binding of the sharp binary-RR class kernel (kernels/exact_krr.hpp) as
// sharpdp._core.exact_krr. The GIL is released around the kernel; its std::invalid_argument becomes
// ValueError.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>

#include "kernels/exact_krr.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

py::tuple class_bracket_impl(double eps0, double p, double q, double a, double b, double e, double ra, double rb,
                             double re, std::int64_t npop, std::int64_t j, double nats, bool mirror,
                             bool copy_mirrors = false) {
  kernels::exact_krr::ClassBracket r;
  {
    py::gil_scoped_release nogil;
    r = kernels::exact_krr::class_bracket(eps0, p, q, a, b, e, ra, rb, re, npop, j, nats, mirror, copy_mirrors);
  }
  return py::make_tuple(r.lower, r.upper, r.charge, r.ws, r.wl, r.terms);
}

py::tuple class_bracket(double eps0, double p, double q, double a, double b, double e, double ra, double rb,
                        double re, std::int64_t npop, std::int64_t j, double nats) {
  return class_bracket_impl(eps0, p, q, a, b, e, ra, rb, re, npop, j, nats, false);
}

// class_bracket whose windows may be mirror images of cached ones (docs/sharp_krr.md §4.16; the
// branch and bound's ranges). Private name: not in the stubs (python/sharpdp/_core.pyi).
py::tuple class_bracket_mirror(double eps0, double p, double q, double a, double b, double e, double ra,
                               double rb, double re, std::int64_t npop, std::int64_t j, double nats) {
  return class_bracket_impl(eps0, p, q, a, b, e, ra, rb, re, npop, j, nats, true);
}

// Test hook (tests/test_krr21b_reverse.py): the mirror path with every mirror image copied instead of
// read in place (docs/sharp_krr.md §4.16: the two give the same doubles).
py::tuple class_bracket_mirror_copy(double eps0, double p, double q, double a, double b, double e, double ra,
                                    double rb, double re, std::int64_t npop, std::int64_t j, double nats) {
  return class_bracket_impl(eps0, p, q, a, b, e, ra, rb, re, npop, j, nats, true, true);
}

// Test hook (tests/test_review_rev_krr6.py): one binomial window of §4.12 as the kernel builds it,
// (first index, pmf entries, entrywise relative error bound rel).
py::tuple binom_window(std::int64_t m, double pi, double pi_c, double log_odds, double nats) {
  if (m < 0 || !(nats > 0 && nats <= kernels::exact_krr::kMaxNats))
    throw std::invalid_argument("need m >= 0 and nats in (0, 300]");
  kernels::exact_krr::Window w;
  kernels::exact_krr::binom_window(m, pi, pi_c, log_odds, nats, w);
  py::list pmf;  // the pmf: entries times the window's scale (§4.12)
  for (double v : w.pmf) pmf.append(v * w.scale);
  return py::make_tuple(w.lo, pmf, w.rel);
}

}  // namespace

void register_exact_krr(py::module_& m) {
  m.attr("MAX_NATS") = kernels::exact_krr::kMaxNats;
  m.def("class_bracket", &class_bracket, py::arg("eps0"), py::arg("p"), py::arg("q"), py::arg("a"),
        py::arg("b"), py::arg("e"), py::arg("ra"), py::arg("rb"), py::arg("re"), py::arg("npop"), py::arg("j"),
        py::arg("nats"),
        "Certified (lower, upper, charge, ws, wl, terms) of delta_j(eps) of shuffled binary RR, class j of "
        "npop users, tail level nats <= 300 (docs/sharp_krr.md §4.10, §4.12).");
  m.def("_class_bracket_mirror", &class_bracket_mirror, py::arg("eps0"), py::arg("p"), py::arg("q"), py::arg("a"),
        py::arg("b"), py::arg("e"), py::arg("ra"), py::arg("rb"), py::arg("re"), py::arg("npop"), py::arg("j"),
        py::arg("nats"),
        "class_bracket whose binomial windows may be mirror images of cached ones (docs/sharp_krr.md §4.16).");
  m.def("_class_bracket_mirror_copy", &class_bracket_mirror_copy, py::arg("eps0"), py::arg("p"), py::arg("q"),
        py::arg("a"), py::arg("b"), py::arg("e"), py::arg("ra"), py::arg("rb"), py::arg("re"), py::arg("npop"),
        py::arg("j"), py::arg("nats"),
        "Test hook: _class_bracket_mirror with mirror images copied, not read in place (docs/sharp_krr.md §4.16).");
  m.def("_binom_window", &binom_window, py::arg("m"), py::arg("pi"), py::arg("pi_c"), py::arg("log_odds"),
        py::arg("nats"),
        "Test hook: (lo, pmf, rel) of the kernel's window of Bin(m, pi) at the level nats, pi / pi_c = "
        "exp(log_odds) (docs/sharp_krr.md §4.12).");
}

}  // namespace sharpdp
