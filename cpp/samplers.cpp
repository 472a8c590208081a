// Vectorised samplers of the shuffle-model local randomizers (seed 001, §4).
//
// Work is split into blocks of kBlockRows input rows; block b draws from its
// own stream Rng(seed, b), so the output depends only on (seed, inputs) and
// never on the number of threads.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

constexpr std::size_t kBlockRows = 4096;

// Blanket-mixed Gaussian (Algorithm "Blanket-Mixed Gaussian Mechanism"): for
// each row x_i, Y_i = sigma0 * Z_i + (1 - B_i) x_i with Z_i ~ N(0, I_d) and
// B_i ~ Bernoulli(gamma). gamma = 0 is the Gaussian randomizer.
// Rows must satisfy |x_i|_2^2 <= max_norm2 and be finite (checked in the same pass).
py::array_t<double> bmg_sample(const py::array_t<double, py::array::c_style | py::array::forcecast>& x,
                               double gamma, double sigma0, std::uint64_t seed, int threads,
                               double max_norm2) {
  if (x.ndim() != 2) throw std::invalid_argument("x must be 2-dimensional (n, dim)");
  if (!(gamma >= 0.0 && gamma < 1.0)) throw std::invalid_argument("gamma must be in [0, 1)");
  if (!(sigma0 > 0.0) || !std::isfinite(sigma0)) throw std::invalid_argument("sigma0 must be finite and > 0");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  if (!(max_norm2 > 0.0)) throw std::invalid_argument("max_norm2 must be > 0");
  const auto n = static_cast<std::size_t>(x.shape(0));
  const auto d = static_cast<std::size_t>(x.shape(1));
  py::array_t<double> out({x.shape(0), x.shape(1)});
  const double* xin = x.data();
  double* y = out.mutable_data();
  const std::size_t nblocks = (n + kBlockRows - 1) / kBlockRows;
  {
    py::gil_scoped_release release;
    parallel_blocks(nblocks, threads, [&](std::size_t b) {
      Rng rng(seed, b);
      const std::size_t r0 = b * kBlockRows;
      const std::size_t r1 = std::min(n, r0 + kBlockRows);
      double* yb = y + r0 * d;
      rng.normals_ziggurat(yb, (r1 - r0) * d);
      for (std::size_t i = r0; i < r1; ++i) {
        double* yi = y + i * d;
        const double* xi = xin + i * d;
        double norm2 = 0.0;
        for (std::size_t j = 0; j < d; ++j) norm2 += xi[j] * xi[j];
        if (!(norm2 <= max_norm2)) {
          if (!std::isfinite(norm2))
            throw std::invalid_argument("x must contain only finite values (found NaN or inf in row " +
                                        std::to_string(i) + ")");
          throw std::invalid_argument("x: every row must lie in the unit L2 ball, row " + std::to_string(i) +
                                      " has norm " + std::to_string(std::sqrt(norm2)));
        }
        if (rng.uniform() >= gamma) {  // informative message: N(x_i, sigma0^2 I)
          for (std::size_t j = 0; j < d; ++j) yi[j] = sigma0 * yi[j] + xi[j];
        } else {  // blanket message: N(0, sigma0^2 I)
          for (std::size_t j = 0; j < d; ++j) yi[j] *= sigma0;
        }
      }
    });
  }
  return out;
}

// Standard normals from the ziggurat generator, in the same block layout
// (kBlockRows values per block); exposed for distribution tests.
py::array_t<double> standard_normals(std::size_t count, std::uint64_t seed, int threads) {
  py::array_t<double> out(static_cast<py::ssize_t>(count));
  double* y = out.mutable_data();
  const std::size_t nblocks = (count + kBlockRows - 1) / kBlockRows;
  {
    py::gil_scoped_release release;
    parallel_blocks(nblocks, threads, [&](std::size_t b) {
      Rng rng(seed, b);
      const std::size_t i0 = b * kBlockRows;
      rng.normals_ziggurat(y + i0, std::min(count, i0 + kBlockRows) - i0);
    });
  }
  return out;
}

}  // namespace

void register_samplers(py::module_& m) {
  m.attr("BLOCK_ROWS") = kBlockRows;
  m.def("bmg_sample", &bmg_sample, py::arg("x"), py::arg("gamma"), py::arg("sigma0"), py::arg("seed"),
        py::arg("threads") = 0, py::arg("max_norm2") = 1.0,
        "Blanket-mixed Gaussian messages for the rows of x (n, dim) -> (n, dim) float64; raises "
        "ValueError if a row is not finite or has squared L2 norm > max_norm2.");
  m.def("standard_normals", &standard_normals, py::arg("count"), py::arg("seed"), py::arg("threads") = 0,
        "count standard normals (ziggurat), deterministic in seed for any thread count.");
}

}  // namespace sharpdp
