// Shifted-log Gaussian release (seed 000, eq. 4): y = [(n + c) exp(sigma Z - sigma^2) - c]_+,
// optionally followed by mean-preserving stochastic rounding. Work is split into fixed blocks,
// each with its own Rng(seed, block), so the output is identical for any thread count.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "common.hpp"

namespace py = pybind11;

namespace sharpdp {
namespace {

// Ziggurat sampler for the standard normal (Marsaglia & Tsang 2000), 256 layers,
// written from the published construction. Layer 0 is the base strip plus the tail.
class NormalZiggurat {
 public:
  static constexpr int kLayers = 256;
  static constexpr double kR = 3.6541528853610088;   // right edge of the base layer
  static constexpr double kV = 4.92867323399e-3;     // common layer area

  NormalZiggurat() {
    x_[0] = kV / f(kR);
    x_[1] = kR;
    for (int i = 1; i < kLayers - 1; ++i) {
      const double y = kV / x_[i] + f(x_[i]);
      x_[i + 1] = y < 1.0 ? std::sqrt(-2.0 * std::log(y)) : 0.0;
    }
    x_[kLayers] = 0.0;
    for (int i = 0; i <= kLayers; ++i) fx_[i] = f(x_[i]);
    fx_[0] = 0.0;  // bottom of the base strip
  }

  double operator()(Rng& rng) const {
    for (;;) {
      const std::uint64_t bits = rng.next();
      const int i = static_cast<int>(bits & 0xFFu);
      // sign from bit 8, applied without a (50 % mispredicted) branch
      const double sign = kSign[(bits >> 8) & 1u];
      const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;
      const double x = u * x_[i];
      if (x < x_[i + 1]) return sign * x;  // inside the inner rectangle
      if (i == 0) {                                  // tail beyond kR
        double t, e;
        do {
          t = -std::log(rng.uniform_open()) / kR;
          e = -std::log(rng.uniform_open());
        } while (2.0 * e < t * t);
        return sign * (kR + t);
      }
      // wedge of layer i: y uniform between f(x_i) and f(x_{i+1})
      const double y = fx_[i] + rng.uniform() * (fx_[i + 1] - fx_[i]);
      if (y < f(x)) return sign * x;
    }
  }

 private:
  static constexpr double kSign[2] = {1.0, -1.0};
  static double f(double x) { return std::exp(-0.5 * x * x); }
  std::array<double, kLayers + 1> x_{};
  std::array<double, kLayers + 1> fx_{};
};

const NormalZiggurat& ziggurat() {
  static const NormalZiggurat z;
  return z;
}

constexpr std::size_t kBlock = 1 << 15;

py::array_t<double> release(py::array_t<double, py::array::c_style | py::array::forcecast> counts,
                            double c, double sigma, std::uint64_t seed, bool integer, int threads) {
  if (!(c > 0.0) || !std::isfinite(c)) throw std::invalid_argument("c must be finite and > 0");
  if (!(sigma > 0.0) || !std::isfinite(sigma)) throw std::invalid_argument("sigma must be finite and > 0");
  const auto n = static_cast<std::size_t>(counts.size());
  py::array_t<double> out(counts.request().shape);
  const double* in = counts.data();
  double* res = out.mutable_data();
  for (std::size_t k = 0; k < n; ++k)
    if (!(in[k] >= 0.0) || !std::isfinite(in[k]))
      throw std::invalid_argument("counts must be finite and >= 0");
  const NormalZiggurat& zig = ziggurat();
  const double drift = -sigma * sigma;
  {
    py::gil_scoped_release nogil;
    const std::size_t nblocks = (n + kBlock - 1) / kBlock;
    parallel_blocks(nblocks, threads, [&](std::size_t b) {
      Rng rng(seed, b);
      const std::size_t lo = b * kBlock;
      const std::size_t hi = std::min(n, lo + kBlock);
      for (std::size_t k = lo; k < hi; ++k) {
        const double z = zig(rng);
        double y = (in[k] + c) * std::exp(sigma * z + drift) - c;
        y = y > 0.0 ? y : 0.0;  // also maps -0.0 to +0.0
        if (integer) {
          const double fl = std::floor(y);
          y = fl + (rng.uniform() < y - fl ? 1.0 : 0.0);
        }
        res[k] = y;
      }
    });
  }
  return out;
}

py::array_t<double> normals(std::size_t size, std::uint64_t seed, int threads) {
  py::array_t<double> out(static_cast<py::ssize_t>(size));
  double* res = out.mutable_data();
  const NormalZiggurat& zig = ziggurat();
  {
    py::gil_scoped_release nogil;
    const std::size_t nblocks = (size + kBlock - 1) / kBlock;
    parallel_blocks(nblocks, threads, [&](std::size_t b) {
      Rng rng(seed, b);
      const std::size_t hi = std::min(size, (b + 1) * kBlock);
      for (std::size_t k = b * kBlock; k < hi; ++k) res[k] = zig(rng);
    });
  }
  return out;
}

}  // namespace

void register_histogram(py::module_& m) {
  m.def("release", &release, py::arg("counts"), py::arg("c"), py::arg("sigma"), py::arg("seed"),
        py::arg("integer") = false, py::arg("threads") = 0,
        "Shifted-log Gaussian release, eq. (4) of seed 000, clipped at 0; integer=True adds "
        "mean-preserving stochastic rounding. counts: float64 array of non-negative integers.");
  m.def("normals", &normals, py::arg("size"), py::arg("seed"), py::arg("threads") = 0,
        "Standard normals from the ziggurat sampler used by release (for tests).");
}

}  // namespace sharpdp
