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

void bmg_sample(const double* xin, std::size_t n, std::size_t d, double gamma, double sigma0, const StreamKey& key,
                int threads, double max_norm2, double* y, std::uint64_t row_offset, std::uint64_t total_rows) {
  if (!(gamma >= 0.0 && gamma < 1.0)) throw std::invalid_argument("gamma must be in [0, 1)");
  if (!(sigma0 > 0.0) || !std::isfinite(sigma0)) throw std::invalid_argument("sigma0 must be finite and > 0");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  if (!(max_norm2 > 0.0)) throw std::invalid_argument("max_norm2 must be > 0");
  // x holds the global rows [row_offset, row_offset + n) of a table of `total` rows. Global block b
  // covers rows [b K, min(total, (b + 1) K)) and draws from Rng(key, b): first the normals of all
  // its rows, then one uniform per row. A slice that starts or ends inside a block replays (and
  // discards) the draws of the rows outside it, so its messages are bit-identical to the same
  // rows of one call on the whole table. With the defaults (0, 0) this is the whole table.
  const std::size_t g_begin = static_cast<std::size_t>(row_offset);
  const std::size_t total = total_rows == 0 ? g_begin + n : static_cast<std::size_t>(total_rows);
  if (total < g_begin + n) throw std::invalid_argument("total_rows must be >= row_offset + len(x)");
  const std::size_t b_first = g_begin / kSamplerBlockRows;
  const std::size_t nblocks = n == 0 ? 0 : (g_begin + n - 1) / kSamplerBlockRows - b_first + 1;
  parallel_blocks(nblocks, threads, [&](std::size_t lb) {
    const std::size_t b = b_first + lb;
    Rng rng(key, b);
    const std::size_t g0 = b * kSamplerBlockRows;                  // global block [g0, g1)
    const std::size_t g1 = std::min(total, g0 + kSamplerBlockRows);
    const std::size_t s0 = std::max(g0, g_begin);                  // rows of x in it: [s0, s1)
    const std::size_t s1 = std::min(g1, g_begin + n);
    const std::size_t r0 = s0 - g_begin;                           // local rows [r0, r1)
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
    rng.normals_ziggurat(y + r0 * d, (r1 - r0) * d);
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

void krr_sample(const std::int64_t* in, std::size_t n, std::int64_t k, double p_keep, const StreamKey& key,
                int threads, std::int64_t* y) {
  if (k < 2) throw std::invalid_argument("k must be >= 2");
  if (!(p_keep >= 0.0 && p_keep <= 1.0)) throw std::invalid_argument("p_keep must be in [0, 1]");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  const double km1 = static_cast<double>(k - 1);
  parallel_blocks(sampler_blocks(n), threads, [&](std::size_t b) {
    Rng rng(key, b);
    const std::size_t end = std::min(n, (b + 1) * kSamplerBlockRows);
    for (std::size_t i = b * kSamplerBlockRows; i < end; ++i) {
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

}  // namespace kernels
}  // namespace sharpdp
