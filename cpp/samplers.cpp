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
                               double max_norm2, std::uint64_t row_offset, std::uint64_t total_rows) {
  if (x.ndim() != 2) throw std::invalid_argument("x must be 2-dimensional (n, dim)");
  if (!(gamma >= 0.0 && gamma < 1.0)) throw std::invalid_argument("gamma must be in [0, 1)");
  if (!(sigma0 > 0.0) || !std::isfinite(sigma0)) throw std::invalid_argument("sigma0 must be finite and > 0");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  if (!(max_norm2 > 0.0)) throw std::invalid_argument("max_norm2 must be > 0");
  const auto n = static_cast<std::size_t>(x.shape(0));
  const auto d = static_cast<std::size_t>(x.shape(1));
  // x holds the global rows [row_offset, row_offset + n) of a table of total_rows rows
  // (total_rows = 0: row_offset + n). Global block b covers rows [b K, min(total, (b + 1) K)) and
  // draws from Rng(seed, b): first the normals of all its rows, then one uniform per row. A slice
  // that starts or ends inside a block replays (and discards) the draws of the rows outside it, so
  // its messages are bit-identical to the same rows of one call on the whole table.
  const std::size_t g_begin = static_cast<std::size_t>(row_offset);
  const std::size_t total = total_rows == 0 ? g_begin + n : static_cast<std::size_t>(total_rows);
  if (total < g_begin + n) throw std::invalid_argument("total_rows must be >= row_offset + len(x)");
  py::array_t<double> out({x.shape(0), x.shape(1)});
  const double* xin = x.data();
  double* y = out.mutable_data();
  const std::size_t b_first = g_begin / kBlockRows;
  const std::size_t nblocks = n == 0 ? 0 : (g_begin + n - 1) / kBlockRows - b_first + 1;
  {
    py::gil_scoped_release release;
    parallel_blocks(nblocks, threads, [&](std::size_t lb) {
      const std::size_t b = b_first + lb;
      Rng rng(seed, b);
      const std::size_t g0 = b * kBlockRows;                        // global block [g0, g1)
      const std::size_t g1 = std::min(total, g0 + kBlockRows);
      const std::size_t s0 = std::max(g0, g_begin);                 // rows of x in it: [s0, s1)
      const std::size_t s1 = std::min(g1, g_begin + n);
      const std::size_t r0 = s0 - g_begin;                          // local rows [r0, r1)
      const std::size_t r1 = s1 - g_begin;
      double skip[64];
      auto discard_normals = [&](std::size_t count) {
        while (count > 0) {
          const std::size_t len = std::min<std::size_t>(count, 64);
          rng.normals_ziggurat(skip, len);
          count -= len;
        }
      };
      discard_normals((s0 - g0) * d);
      double* yb = y + r0 * d;
      rng.normals_ziggurat(yb, (r1 - r0) * d);
      discard_normals((g1 - s1) * d);
      for (std::size_t i = g0; i < s0; ++i) rng.uniform();
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
        py::arg("threads") = 0, py::arg("max_norm2") = 1.0, py::arg("row_offset") = 0,
        py::arg("total_rows") = 0,
        "Blanket-mixed Gaussian messages for the rows of x (n, dim) -> (n, dim) float64; raises "
        "ValueError if a row is not finite or has squared L2 norm > max_norm2. x may be the global "
        "rows [row_offset, row_offset + n) of a table of total_rows rows (0: row_offset + n): the "
        "messages are then those of one call on the whole table.");
  m.def("standard_normals", &standard_normals, py::arg("count"), py::arg("seed"), py::arg("threads") = 0,
        "count standard normals (ziggurat), deterministic in seed for any thread count.");
}

}  // namespace sharpdp
