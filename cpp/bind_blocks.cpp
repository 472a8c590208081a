// pybind11 binding of the atom-law block kernels (kernels/blocks.hpp), registered into
// sharpdp._core.accountant (module.cpp).
// Converts numpy arrays to pointers and sizes, allocates the outputs, releases the GIL around the
// kernels; std::invalid_argument becomes ValueError. Used by python/sharpdp/shuffle/accountant/blocks.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/blocks.hpp"

namespace py = pybind11;
using Arr = py::array_t<double, py::array::c_style | py::array::forcecast>;
using FArr = py::array_t<double, py::array::f_style | py::array::forcecast>;
using FIArr = py::array_t<std::int64_t, py::array::f_style | py::array::forcecast>;

namespace sharpdp {
namespace {

namespace kb = kernels::blocks;

std::size_t size0(const py::array& a) { return static_cast<std::size_t>(a.shape(0)); }

py::tuple block_values(FArr counts, Arr hi, Arr lo, std::int64_t pad) {
  if (counts.ndim() != 2) throw std::invalid_argument("block_values: counts must be a 2-d array");
  const auto rows = static_cast<std::size_t>(counts.shape(0));
  const auto m = static_cast<std::size_t>(counts.shape(1));
  if (size0(hi) != m || size0(lo) != m)
    throw std::invalid_argument("block_values: hi and lo need one entry per column of counts");
  if (pad < 0) throw std::invalid_argument("block_values: pad must be >= 0, got " + std::to_string(pad));
  // (pad zeros after the values: the caller's atom at 0 without a copy of the values, docs/composition.md §2.34.4)
  Arr value(static_cast<py::ssize_t>(rows) + static_cast<py::ssize_t>(pad));
  std::fill(value.mutable_data() + rows, value.mutable_data() + rows + static_cast<std::size_t>(pad), 0.0);
  const double *c = counts.data(), *h = hi.data(), *l = lo.data();
  double* v = value.mutable_data();
  kb::Values r;
  {
    py::gil_scoped_release nogil;
    r = kb::block_values(c, rows, m, h, l, v);
  }
  return py::make_tuple(value, r.max_abs, r.finite);
}

py::tuple atom_cells(Arr v, Arr p, double x0, double h, std::int64_t K, double rel_p) {
  if (size0(v) != size0(p)) throw std::invalid_argument("atom_cells: values and probs must have equal length");
  if (K < 1) throw std::invalid_argument("atom_cells: K must be >= 1, got " + std::to_string(K));
  const auto KK = static_cast<py::ssize_t>(K);
  Arr m(KK), w(KK), em(KK), ew(KK);
  double *pm = m.mutable_data(), *pw = w.mutable_data(), *pem = em.mutable_data(), *pew = ew.mutable_data();
  const double *pv = v.data(), *pp = p.data();
  const std::size_t na = size0(v);
  {
    py::gil_scoped_release nogil;
    std::fill(pm, pm + K, 0.0);
    std::fill(pw, pw + K, 0.0);
    std::fill(pew, pew + K, 0.0);
    kb::atom_cells(pv, pp, na, x0, h, static_cast<std::size_t>(K), rel_p, pm, pw, pem, pew);
  }
  return py::make_tuple(m, w, em, ew);
}

double log_value_estimate(Arr a, Arr pa, double gamma, double n) {
  const std::size_t m = size0(a);
  if (size0(pa) != m || m == 0) throw std::invalid_argument("log_value_estimate: a and pa must be non-empty, of equal length");
  if (!(gamma > 0.0 && gamma <= 1.0)) throw std::invalid_argument("log_value_estimate: gamma must be in (0, 1]");
  if (!(n >= 1.0)) throw std::invalid_argument("log_value_estimate: n must be >= 1");
  const double *pa_ = pa.data(), *a_ = a.data();
  py::gil_scoped_release nogil;
  return kb::log_value_estimate(a_, pa_, m, gamma, n);
}

Arr kahan_prefix(Arr terms) {
  const std::size_t n = size0(terms);
  Arr out(static_cast<py::ssize_t>(n + 1));
  const double* t = terms.data();
  double* o = out.mutable_data();
  py::gil_scoped_release nogil;
  kb::kahan_prefix(t, n, o);
  return out;
}

Arr multinomial(FIArr counts, Arr pa, std::int64_t ms) {
  if (counts.ndim() != 2) throw std::invalid_argument("multinomial: counts must be a 2-d array");
  if (ms < 0 || ms > 100000) throw std::invalid_argument("multinomial: ms must be in [0, 1e5]");
  const auto rows = static_cast<std::size_t>(counts.shape(0));
  const auto m = static_cast<std::size_t>(counts.shape(1));
  if (size0(pa) != m) throw std::invalid_argument("multinomial: pa needs one entry per column of counts");
  Arr prob(static_cast<py::ssize_t>(rows));
  const std::int64_t* c = counts.data();
  const double* a = pa.data();
  double* o = prob.mutable_data();
  const auto S = static_cast<std::size_t>(ms);
  {
    py::gil_scoped_release nogil;
    std::vector<double> binom((S + 1) * (S + 1));
    kb::pascal(S, binom.data());
    kb::multinomial(c, rows, m, a, S, binom.data(), o);
  }
  return prob;
}

py::tuple law_stats(Arr v, Arr p) {
  const std::size_t n = size0(v);
  if (size0(p) != n) throw std::invalid_argument("law_stats: values and probs must have equal length");
  const double *pv = v.data(), *pp = p.data();
  kb::Stats s;
  {
    py::gil_scoped_release nogil;
    s = kb::law_stats(pv, pp, n);
  }
  return py::make_tuple(s.ok, s.vmin, s.vmax, s.smin, s.smax, s.mean, s.var_sum);
}

double tail_sum(Arr v, Arr p, double T) {
  const std::size_t n = size0(v);
  if (size0(p) != n) throw std::invalid_argument("tail_sum: values and probs must have equal length");
  const double *pv = v.data(), *pp = p.data();
  py::gil_scoped_release nogil;
  thread_local std::vector<double> work;  // (kept between calls: no page faults of a fresh buffer per call)
  if (work.size() < n) work.resize(n);
  return kb::tail_sum(pv, pp, n, T, work.data());
}

}  // namespace

void register_blocks(py::module_& m) {
  m.def("block_values", &block_values, py::arg("counts"), py::arg("hi"), py::arg("lo"), py::arg("pad") = 0,
        "values of the count vectors (Sum2 of exact products) followed by pad zeros, max |value|, finite");
  m.def("atom_cells", &atom_cells, "fine cells of an atom law (any order) with its relative probability error");
  m.def("log_value_estimate", &log_value_estimate, "log of the block-truncation sizing estimate of D_up");
  m.def("kahan_prefix", &kahan_prefix, "running compensated sum, 0 first");
  m.def("law_stats", &law_stats, "a block law's extremes, mean and variance sum (numpy's sums), ok flag first");
  m.def("tail_sum", &tail_sum, "sum of (v - T) p over v > T in numpy's order");
  m.def("multinomial", &multinomial, "multinomial part of the block weights (Pascal's triangle, powers)");
}

}  // namespace sharpdp
