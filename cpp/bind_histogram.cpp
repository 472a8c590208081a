// pybind11 binding of the histogram kernels (kernels/histogram.hpp) as sharpdp._core.histogram.
// The GIL is released around the kernels; their std::invalid_argument becomes ValueError.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "bind_key.hpp"
#include "kernels/histogram.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

using InF = py::array_t<double, py::array::c_style | py::array::forcecast>;
using InU = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;

py::tuple release(const InF& counts, double c, double sigma, int grid_bits, const py::bytes& key_bytes,
                  bool integer, int threads) {
  const auto n = static_cast<std::size_t>(counts.size());
  py::array_t<double> out(counts.request().shape);
  const double* in = counts.data();
  double* res = out.mutable_data();
  kernels::GridReleaseResult r;
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release nogil;
    r = kernels::grid_release(in, n, c, sigma, grid_bits, key, integer, threads, res);
  }
  const auto m = static_cast<py::ssize_t>(r.ambiguous.size());
  py::array_t<std::uint64_t> index(m), cand(m), round_word(m);
  py::array_t<std::uint64_t> words({m, static_cast<py::ssize_t>(4)});
  auto pi = index.mutable_unchecked<1>();
  auto pc = cand.mutable_unchecked<1>();
  auto pr = round_word.mutable_unchecked<1>();
  auto pw = words.mutable_unchecked<2>();
  for (py::ssize_t i = 0; i < m; ++i) {
    const auto& d = r.ambiguous[static_cast<std::size_t>(i)];
    pi(i) = d.index;
    pc(i) = d.candidate;
    pr(i) = d.round_word;
    for (py::ssize_t w = 0; w < 4; ++w) pw(i, w) = d.words[w];
  }
  return py::make_tuple(out, index, cand, words, round_word, r.steps);
}

void check_bits(int grid_bits) {
  if (grid_bits < kernels::kGridMinBits || grid_bits > kernels::kGridMaxBits)
    throw std::invalid_argument("grid_bits must be an integer in [0, 60]");
}

py::array_t<double> grid_values(const InU& index, int grid_bits, const py::object& round_words) {
  check_bits(grid_bits);
  const auto n = static_cast<std::size_t>(index.size());
  py::array_t<double> out(index.request().shape);
  const std::uint64_t* j = index.data();
  double* y = out.mutable_data();
  for (std::size_t i = 0; i < n; ++i)
    if (j[i] > kernels::kGridLastIndex) throw std::invalid_argument("index: beyond the last grid index");
  if (round_words.is_none()) {
    for (std::size_t i = 0; i < n; ++i) y[i] = kernels::grid_value(j[i], grid_bits);
    return out;
  }
  const InU w = round_words.cast<InU>();
  if (static_cast<std::size_t>(w.size()) != n) throw std::invalid_argument("round_words: one word per index");
  const std::uint64_t* pw = w.data();
  for (std::size_t i = 0; i < n; ++i) y[i] = kernels::grid_round(j[i], grid_bits, pw[i]);
  return out;
}

py::array_t<std::uint64_t> grid_index(const InF& values, int grid_bits) {
  check_bits(grid_bits);
  const auto n = static_cast<std::size_t>(values.size());
  py::array_t<std::uint64_t> out(values.request().shape);
  const double* v = values.data();
  std::uint64_t* j = out.mutable_data();
  for (std::size_t i = 0; i < n; ++i) j[i] = kernels::grid_index(v[i], grid_bits);
  return out;
}

py::array_t<double> release_float(const InF& counts, double c, double sigma, const py::bytes& key_bytes,
                                  bool integer, int threads) {
  const auto n = static_cast<std::size_t>(counts.size());
  py::array_t<double> out(counts.request().shape);
  const double* in = counts.data();
  double* res = out.mutable_data();
  {
    const StreamKey key = stream_key(key_bytes);
    py::gil_scoped_release nogil;
    kernels::shifted_log_release_float(in, n, c, sigma, key, integer, threads, res);
  }
  return out;
}

py::tuple invert(const InF& counts, const InU& w0, double c, double sigma, int grid_bits) {
  const auto n = static_cast<std::size_t>(counts.size());
  if (static_cast<std::size_t>(w0.size()) != n) throw std::invalid_argument("w0: one word per count");
  py::array_t<std::uint64_t> bins(static_cast<py::ssize_t>(n));
  py::array_t<bool> decided(static_cast<py::ssize_t>(n));
  std::vector<unsigned char> dec(n);
  kernels::grid_invert(counts.data(), w0.data(), n, c, sigma, grid_bits, bins.mutable_data(), dec.data());
  bool* pd = decided.mutable_data();
  for (std::size_t i = 0; i < n; ++i) pd[i] = dec[i] != 0;
  return py::make_tuple(bins, decided);
}

py::array_t<double> exp_bounded(const InF& x) {
  const auto n = static_cast<std::size_t>(x.size());
  py::array_t<double> out(x.request().shape);
  const double* in = x.data();
  double* y = out.mutable_data();
  for (std::size_t i = 0; i < n; ++i) y[i] = kernels::exp_bounded_value(in[i]);
  return out;
}

py::tuple phi_tail(const InF& a) {
  const auto n = static_cast<std::size_t>(a.size());
  py::array_t<double> p(static_cast<py::ssize_t>(n)), err(static_cast<py::ssize_t>(n));
  const double* in = a.data();
  double* pp = p.mutable_data();
  double* pe = err.mutable_data();
  for (std::size_t i = 0; i < n; ++i) kernels::phi_tail_value(in[i], pp[i], pe[i]);
  return py::make_tuple(p, err);
}

}  // namespace

void register_histogram(py::module_& m) {
  m.attr("GRID_SIG_BITS") = kernels::kGridSigBits;
  m.attr("GRID_LAST_INDEX") = kernels::kGridLastIndex;
  m.def("release", &release, py::arg("counts"), py::arg("c"), py::arg("sigma"), py::arg("grid_bits"),
        py::arg("key"), py::arg("integer") = false, py::arg("threads") = 0,
        "Exact grid release of the shifted-log Gaussian mechanism (docs/histogram_release.md). Returns "
        "(out, index, candidate, words, round_word, steps): out holds the released values, NaN at the ambiguous "
        "positions `index` (uint64), whose candidate bins, 4 uniform words (w0 first) and rounding words are "
        "given for an exact resolution; steps counts candidate corrections.");
  m.def("grid_values", &grid_values, py::arg("index"), py::arg("grid_bits"), py::arg("round_words") = py::none(),
        "Grid values of the indices (uint64); with round_words, exactly stochastically rounded to integers.");
  m.def("grid_index", &grid_index, py::arg("values"), py::arg("grid_bits"),
        "An index of the grid value nearest to each value (0 for values <= 0), as uint64.");
  m.def("invert", &invert, py::arg("counts"), py::arg("w0"), py::arg("c"), py::arg("sigma"), py::arg("grid_bits"),
        "The kernel's inversion step for given first words w0 (uint64), for tests of its verified bounds: "
        "(bins, decided); where decided is False the bounds could not place the interval in one bin.");
  m.def("_exp_bounded", &exp_bounded, py::arg("x"),
        "Test hook (private): the release kernel's branch-free exp on [-700, 700] (relative error <= 2^-47, "
        "docs/histogram_release.md section 4.5), for tests of that bound.");
  m.def("_phi_tail", &phi_tail, py::arg("a"),
        "Test hook (private): the release kernel's table tail probability Phi(-a) for a in [0, 6] and its proved "
        "error bound, (p, err) (docs/histogram_release.md section 4.6), for tests of that bound.");
  m.def("release_float", &release_float, py::arg("counts"), py::arg("c"), py::arg("sigma"), py::arg("key"),
        py::arg("integer") = false, py::arg("threads") = 0,
        "The former floating-point release [(n + c) exp(sigma Z - sigma^2) - c]_+ (NOT floating-point safe: "
        "porous, docs/histogram_release.md section 1); speed reference only. Its normals are those of "
        "sharpdp._core.samplers.standard_normals(counts.size, key) when integer is False.");
}

}  // namespace sharpdp
