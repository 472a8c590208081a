// Sampler kernels (see samplers.hpp). No Python in here.
#include "samplers.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common.hpp"

namespace sharpdp {
namespace kernels {

namespace {

// The rows of a (possibly sliced) table handled by block b: global block [g0, g1) and its part
// [s0, s1) inside the slice [g_begin, g_begin + n); local rows [s0 - g_begin, s1 - g_begin).
struct BlockRows {
  std::size_t g0, g1, s0, s1;
};

struct SliceBlocks {
  std::size_t g_begin, total, b_first, nblocks;
  SliceBlocks(std::size_t n, std::uint64_t row_offset, std::uint64_t total_rows)
      : g_begin(static_cast<std::size_t>(row_offset)),
        total(total_rows == 0 ? static_cast<std::size_t>(row_offset) + n : static_cast<std::size_t>(total_rows)) {
    if (total < g_begin + n) throw std::invalid_argument("total_rows must be >= row_offset + len(x)");
    b_first = g_begin / kSamplerBlockRows;
    nblocks = n == 0 ? 0 : (g_begin + n - 1) / kSamplerBlockRows - b_first + 1;
  }
  BlockRows rows(std::size_t b, std::size_t n) const {
    BlockRows r{};
    r.g0 = b * kSamplerBlockRows;
    r.g1 = std::min(total, r.g0 + kSamplerBlockRows);
    r.s0 = std::max(r.g0, g_begin);
    r.s1 = std::min(r.g1, g_begin + n);
    return r;
  }
};

void check_row(const double* xi, std::size_t d, double max_norm2, std::size_t i) {
  double norm2 = 0.0;
  for (std::size_t j = 0; j < d; ++j) norm2 += xi[j] * xi[j];
  if (!(norm2 <= max_norm2)) {
    if (!std::isfinite(norm2))
      throw std::invalid_argument("x must contain only finite values (found NaN or inf in row " + std::to_string(i) +
                                  ")");
    throw std::invalid_argument("x: every row must lie in the unit L2 ball, row " + std::to_string(i) +
                                " has norm " + std::to_string(std::sqrt(norm2)));
  }
}

// Stochastic rounding of v onto Z (docs/sampling.md §2.1, §9.2): floor(v), and the threshold
// ceil(frac(v) 2^64) below which a uniform 64-bit word rounds up to floor(v) + 1. Needs |v| <= 2^52
// (checked by the callers): then floor, frac = v - floor(v) and frac 2^64 are exact.
// floor(v) and the test "round up" of stochastic rounding, which holds with probability
// ceil(frac 2^64) 2^-64 for one 64-bit word w, frac = v - floor(v) in [0, 1), |v| <= 2^52.
struct GridFloor {
  std::int64_t floor;
  bool can_round_up;     // frac > 0
  std::uint64_t up_last; // round up iff can_round_up and w <= up_last
  bool up(std::uint64_t w) const { return can_round_up && w <= up_last; }
};

inline GridFloor grid_floor(double v) {
  auto fl = static_cast<std::int64_t>(v);  // truncation, then floor
  fl -= static_cast<double>(fl) > v ? 1 : 0;
  if (fl == -1 && v > -1.0) {
    // v in (-1, 0): 1 + v need not be a double (|v| < 1/2), so use a = -v 2^64 (exact, < 2^64):
    // ceil((1 + v) 2^64) = 2^64 - floor(a) > 0 words round up: w <= 2^64 - 1 - floor(a)
    return {fl, true, ~static_cast<std::uint64_t>(-v * 0x1p64)};
  }
  // v = fl, or fl >= 0, or fl <= -2 with v in [fl, fl + 1): v - fl is exact (0, or Sterbenz),
  // and so is t = frac 2^64 < 2^64; ceil(t) words round up
  const double t = (v - static_cast<double>(fl)) * 0x1p64;
  auto up = static_cast<std::uint64_t>(t);
  up += static_cast<double>(up) < t ? 1 : 0;
  return {fl, up > 0, up - 1};
}

// One rounded-Gaussian integer: |D| from the CDT, a uniform sign bit from the reservoir.
inline std::int64_t signed_cdt_sample(const CdtTable& noise, Rng& rng, BitReservoir<Rng>& signs) {
  const auto mag = static_cast<std::int64_t>(cdt_sample(noise, rng));
  return signs.bit() ? -mag : mag;
}

void check_table(const CdtTable& noise, int threads) {
  if (noise.size < 1 || noise.guide_bits < 1 || noise.guide_bits > 24)
    throw std::invalid_argument("noise: empty table or guide_bits outside [1, 24]");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
}

}  // namespace

void bmg_grid_sample(const double* xin, std::size_t n, std::size_t d, std::uint64_t blanket_threshold,
                     int grid_bits, double scale, const CdtTable& noise, const StreamKey& key, int threads,
                     double max_norm2, double* y, std::uint64_t row_offset, std::uint64_t total_rows) {
  if (grid_bits < 0 || grid_bits > 52) throw std::invalid_argument("grid_bits must be in [0, 52]");
  if (!(scale > 0.0 && scale <= 1.0)) throw std::invalid_argument("scale must be in (0, 1]");
  if (d == 1 && scale != 1.0) throw std::invalid_argument("scale must be 1 for dim 1");
  check_table(noise, threads);
  if (!(max_norm2 > 0.0)) throw std::invalid_argument("max_norm2 must be > 0");
  const SliceBlocks sl(n, row_offset, total_rows);
  const double h = std::ldexp(1.0, -grid_bits);
  const double inv_h_scaled = std::ldexp(scale, grid_bits);  // scale / h (exact scaling by 2^k)
  const unsigned __int128 radius2 = static_cast<unsigned __int128>(1) << (2 * grid_bits);  // (1/h)^2
  parallel_blocks(sl.nblocks, threads, [&](std::size_t lb) {
    const BlockRows r = sl.rows(sl.b_first + lb, n);
    Rng rng(key, sl.b_first + lb);
    BitReservoir<Rng> signs(rng);
    // Phase 1: the noise D of every coordinate of the block's rows, in row order (the rows
    // outside the slice are drawn and discarded). y holds D (an integer) until phase 2.
    auto noise_value = [&]() -> double { return static_cast<double>(signed_cdt_sample(noise, rng, signs)); };
    for (std::size_t k = (r.s0 - r.g0) * d; k > 0; --k) (void)noise_value();
    for (std::size_t i = r.s0 - sl.g_begin; i < r.s1 - sl.g_begin; ++i)
      for (std::size_t j = 0; j < d; ++j) y[i * d + j] = noise_value();
    for (std::size_t k = (r.g1 - r.s1) * d; k > 0; --k) (void)noise_value();
    // Phase 2: per row one coin word, then d rounding words if the message is informative
    // (the count depends on the coin only, never on x, so rows outside the slice are replayed).
    for (std::size_t i = r.g0; i < r.s0; ++i)
      if (rng.next() >= blanket_threshold)
        for (std::size_t j = 0; j < d; ++j) (void)rng.next();
    for (std::size_t i = r.s0 - sl.g_begin; i < r.s1 - sl.g_begin; ++i) {
      const double* xi = xin + i * d;
      double* yi = y + i * d;
      check_row(xi, d, max_norm2, i);
      if (rng.next() < blanket_threshold) {  // blanket message: h D
        for (std::size_t j = 0; j < d; ++j) yi[j] *= h;
        continue;
      }
      unsigned __int128 m2 = 0;
      for (std::size_t j = 0; j < d; ++j) {
        // v = scale x_j / h; for dim 1, x_j is clamped to [-1, 1] (the tolerance of the norm check).
        const double xj = d == 1 ? std::min(1.0, std::max(-1.0, xi[j])) : xi[j];
        // round up with probability ceil(frac 2^64) 2^-64, |v| <= 2^52
        const GridFloor g = grid_floor(xj * inv_h_scaled);
        const std::uint64_t w = rng.next();
        const std::int64_t m = g.floor + (g.up(w) ? 1 : 0);
        const auto am = static_cast<unsigned __int128>(m < 0 ? -m : m);
        if (m2 <= radius2) m2 += am * am;
        yi[j] = static_cast<double>(static_cast<std::int64_t>(yi[j]) + m);
      }
      if (m2 > radius2)
        throw std::invalid_argument("bmg_grid_sample: the rounded row " + std::to_string(i) +
                                    " left the unit ball (scale too large for the grid)");
      for (std::size_t j = 0; j < d; ++j) yi[j] *= h;  // exact: a power of 2
    }
  });
}

void grid_gaussian_sample(const double* w, std::size_t count, int grid_bits, const CdtTable& noise,
                          const StreamKey& key, int threads, double* out) {
  if (grid_bits < 0 || grid_bits > 52) throw std::invalid_argument("grid_bits must be in [0, 52]");
  check_table(noise, threads);
  const double h = std::ldexp(1.0, -grid_bits);
  const double limit = std::ldexp(1.0, 52 - grid_bits);  // |w| < 2^52 h: v = w / h is < 2^52 in magnitude
  for (std::size_t i = 0; i < count; ++i)
    if (!(std::fabs(w[i]) < limit))
      throw std::invalid_argument("w: value " + std::to_string(i) +
                                  (std::isfinite(w[i]) ? " has |w| >= 2^(52 - grid_bits) (choose fewer grid_bits)"
                                                       : " is not finite"));
  parallel_blocks(sampler_blocks(count), threads, [&](std::size_t b) {
    Rng rng(key, b);
    BitReservoir<Rng> signs(rng);
    const std::size_t end = std::min(count, (b + 1) * kSamplerBlockRows);
    for (std::size_t i = b * kSamplerBlockRows; i < end; ++i) {
      const GridFloor g = grid_floor(std::ldexp(w[i], grid_bits));  // exact scaling by 2^k
      const std::int64_t r = g.floor + (g.up(rng.next()) ? 1 : 0);
      // |r + D| < 2^52 + size: exact in a double, and times h (a power of 2) exactly
      out[i] = std::ldexp(static_cast<double>(r + signed_cdt_sample(noise, rng, signs)), -grid_bits);
    }
  });
}

void bmg_sample_float_reference(const double* xin, std::size_t n, std::size_t d, double gamma, double sigma0,
                                const StreamKey& key, int threads, double max_norm2, double* y,
                                std::uint64_t row_offset, std::uint64_t total_rows) {
  if (!(gamma >= 0.0 && gamma < 1.0)) throw std::invalid_argument("gamma must be in [0, 1)");
  if (!(sigma0 > 0.0) || !std::isfinite(sigma0)) throw std::invalid_argument("sigma0 must be finite and > 0");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  if (!(max_norm2 > 0.0)) throw std::invalid_argument("max_norm2 must be > 0");
  // Block b draws from Rng(key, b): first the normals of all its rows, then one uniform per row;
  // rows outside the slice are drawn and discarded (see bmg_grid_sample).
  const SliceBlocks sl(n, row_offset, total_rows);
  parallel_blocks(sl.nblocks, threads, [&](std::size_t lb) {
    const BlockRows r = sl.rows(sl.b_first + lb, n);
    Rng rng(key, sl.b_first + lb);
    const std::size_t r0 = r.s0 - sl.g_begin, r1 = r.s1 - sl.g_begin;
    double skip[64];
    auto discard_normals = [&](std::size_t count) {
      while (count > 0) {
        const std::size_t len = std::min<std::size_t>(count, 64);
        rng.normals_ziggurat(skip, len);
        count -= len;
      }
    };
    discard_normals((r.s0 - r.g0) * d);
    rng.normals_ziggurat(y + r0 * d, (r1 - r0) * d);
    discard_normals((r.g1 - r.s1) * d);
    for (std::size_t i = r.g0; i < r.s0; ++i) rng.uniform();
    for (std::size_t i = r0; i < r1; ++i) {
      double* yi = y + i * d;
      const double* xi = xin + i * d;
      check_row(xi, d, max_norm2, i);
      if (rng.uniform() >= gamma) {  // informative message: N(x_i, sigma0^2 I)
        for (std::size_t j = 0; j < d; ++j) yi[j] = sigma0 * yi[j] + xi[j];
      } else {  // blanket message: N(0, sigma0^2 I)
        for (std::size_t j = 0; j < d; ++j) yi[j] *= sigma0;
      }
    }
  });
}

void keystream_words(const StreamKey& key, std::uint64_t stream, std::size_t count, std::uint64_t* out) {
  Rng rng(key, stream);
  for (std::size_t i = 0; i < count; ++i) out[i] = rng.next();
}

void standard_normals(std::size_t count, const StreamKey& key, int threads, double* y) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  parallel_blocks(sampler_blocks(count), threads, [&](std::size_t b) {
    Rng rng(key, b);
    const std::size_t i0 = b * kSamplerBlockRows;
    rng.normals_ziggurat(y + i0, std::min(count, i0 + kSamplerBlockRows) - i0);
  });
}

void krr_sample(const std::int64_t* in, std::size_t n, std::int64_t k, std::uint64_t keep_threshold,
                const StreamKey& key, int threads, std::int64_t* y) {
  if (k < 2) throw std::invalid_argument("k must be >= 2");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  const auto range = static_cast<std::uint64_t>(k);
  parallel_blocks(sampler_blocks(n), threads, [&](std::size_t b) {
    Rng rng(key, b);
    const std::size_t end = std::min(n, (b + 1) * kSamplerBlockRows);
    for (std::size_t i = b * kSamplerBlockRows; i < end; ++i) {
      if (in[i] < 0 || in[i] >= k) throw std::invalid_argument("x must hold categories in [0, k)");
      y[i] = rng.next() < keep_threshold ? in[i] : static_cast<std::int64_t>(uniform_below(range, rng));
    }
  });
}

void sphere_complete(const double* vin, const double* tin, std::size_t n, std::size_t d, const StreamKey& key,
                     int threads, double* y) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  parallel_blocks(sampler_blocks(n), threads, [&](std::size_t b) {
    Rng rng(key, b);
    std::vector<double> g(d);
    const std::size_t end = std::min(n, (b + 1) * kSamplerBlockRows);
    for (std::size_t i = b * kSamplerBlockRows; i < end; ++i) {
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

void finite_sample(const std::int64_t* lo, const std::uint64_t* up, std::size_t n, const std::uint64_t* cum,
                   const std::int64_t* last, std::size_t rows, std::size_t m, const StreamKey& key, int threads,
                   std::int64_t* y) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  if (rows < 1 || m < 1) throw std::invalid_argument("the table must have at least one row and one output");
  for (std::size_t r = 0; r < rows; ++r)
    if (last[r] < 0 || static_cast<std::size_t>(last[r]) >= m)
      throw std::invalid_argument("last must hold output indices in [0, m)");
  const auto nrows = static_cast<std::int64_t>(rows);
  parallel_blocks(sampler_blocks(n), threads, [&](std::size_t b) {
    Rng rng(key, b);
    const std::size_t end = std::min(n, (b + 1) * kSamplerBlockRows);
    for (std::size_t i = b * kSamplerBlockRows; i < end; ++i) {
      if (lo[i] < 0 || lo[i] >= nrows || (up[i] != 0 && lo[i] + 1 >= nrows))
        throw std::invalid_argument("x: an input row index is outside the table");
      const std::uint64_t u = rng.next();
      const std::uint64_t v = rng.next();
      const auto row = static_cast<std::size_t>(lo[i] + (u < up[i] ? 1 : 0));
      const std::uint64_t* c = cum + row * m;
      // first j < last with v < c[j] (c is non-decreasing): std::upper_bound
      y[i] = static_cast<std::int64_t>(std::upper_bound(c, c + last[row], v) - c);
    }
  });
}

}  // namespace kernels
}  // namespace sharpdp
