// Samplers of the discrete / spherical local randomizers (k-RR, PrivUnit).
// Python validates and converts every argument; the loops below assume their
// preconditions, run without the GIL and split the work into fixed blocks with
// one Rng(seed, block) stream each, so the output never depends on threads.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "common.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

constexpr std::size_t kBlock = 1 << 14;  // rows per random stream

std::size_t n_blocks(std::size_t n) { return (n + kBlock - 1) / kBlock; }

// k-ary randomized response: keep x with probability p_keep, otherwise output
// one of the k - 1 other symbols uniformly.
py::array_t<std::int64_t> krr_sample(py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> x,
                                     std::int64_t k, double p_keep, std::uint64_t seed, int threads) {
  if (k < 2) throw std::invalid_argument("k must be >= 2");
  if (!(p_keep >= 0.0 && p_keep <= 1.0)) throw std::invalid_argument("p_keep must be in [0, 1]");
  if (x.ndim() != 1) throw std::invalid_argument("x must be 1-dimensional");
  const auto n = static_cast<std::size_t>(x.shape(0));
  py::array_t<std::int64_t> out(static_cast<py::ssize_t>(n));
  const std::int64_t* in = x.data();
  std::int64_t* y = out.mutable_data();
  {
    py::gil_scoped_release release;
    const double km1 = static_cast<double>(k - 1);
    parallel_blocks(n_blocks(n), threads, [&](std::size_t b) {
      Rng rng(seed, b);
      const std::size_t end = std::min(n, (b + 1) * kBlock);
      for (std::size_t i = b * kBlock; i < end; ++i) {
        if (in[i] < 0 || in[i] >= k) throw std::invalid_argument("x must hold categories in [0, k)");
        const double u = rng.uniform();
        if (u < p_keep) {
          y[i] = in[i];
        } else {
          auto j = static_cast<std::int64_t>(rng.uniform() * km1);
          if (j > k - 2) j = k - 2;
          y[i] = j < in[i] ? j : j + 1;
        }
      }
    });
  }
  return out;
}

// Given unit inputs v (n, d) and inner products t (n,), return
// Y = t v + sqrt(1 - t^2) w with w uniform on the unit sphere orthogonal to v.
py::array_t<double> sphere_complete(py::array_t<double, py::array::c_style | py::array::forcecast> v,
                                    py::array_t<double, py::array::c_style | py::array::forcecast> t,
                                    std::uint64_t seed, int threads) {
  if (v.ndim() != 2) throw std::invalid_argument("x must be 2-dimensional");
  if (t.ndim() != 1 || t.shape(0) != v.shape(0)) throw std::invalid_argument("t must have shape (n,)");
  const auto n = static_cast<std::size_t>(v.shape(0));
  const auto d = static_cast<std::size_t>(v.shape(1));
  py::array_t<double> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(d)});
  const double* vin = v.data();
  const double* tin = t.data();
  double* y = out.mutable_data();
  {
    py::gil_scoped_release release;
    parallel_blocks(n_blocks(n), threads, [&](std::size_t b) {
      Rng rng(seed, b);
      std::vector<double> g(d);
      const std::size_t end = std::min(n, (b + 1) * kBlock);
      for (std::size_t i = b * kBlock; i < end; ++i) {
        const double* vi = vin + i * d;
        double* yi = y + i * d;
        const double ti = tin[i];
        if (d == 1) {  // S^0: the orthogonal complement is {0}
          yi[0] = ti * vi[0];
          continue;
        }
        double norm2 = 0.0;
        while (norm2 <= 0.0) {  // a zero projection has probability 0; redraw if it happens
          rng.normals(g.data(), d);
          double dot = 0.0;
          for (std::size_t j = 0; j < d; ++j) dot += g[j] * vi[j];
          norm2 = 0.0;
          for (std::size_t j = 0; j < d; ++j) {
            g[j] -= dot * vi[j];
            norm2 += g[j] * g[j];
          }
        }
        const double s = std::sqrt(std::max(0.0, 1.0 - ti * ti) / norm2);
        for (std::size_t j = 0; j < d; ++j) yi[j] = ti * vi[j] + s * g[j];
      }
    });
  }
  return out;
}

}  // namespace

void register_ldp_samplers(py::module_& m) {
  m.def("krr_sample", &krr_sample, py::arg("x"), py::arg("k"), py::arg("p_keep"), py::arg("seed"),
        py::arg("threads") = 0,
        "k-ary randomized response on categories x in [0, k) (int64, shape (n,)).");
  m.def("sphere_complete", &sphere_complete, py::arg("v"), py::arg("t"), py::arg("seed"),
        py::arg("threads") = 0,
        "Y = t v + sqrt(1 - t^2) w, w uniform on the sphere orthogonal to v (rows of v unit).");
}
}  // namespace sharpdp
