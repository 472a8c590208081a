// Shifted-log Gaussian release kernel (see histogram.hpp). No Python in here.
#include "histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "common.hpp"

namespace sharpdp {
namespace kernels {
namespace {

// Top 53 bits as a double in [0, 1); the signed cast avoids the slow unsigned-64 conversion.
inline double unit53(std::uint64_t bits) {
  return static_cast<double>(static_cast<std::int64_t>(bits >> 11)) * 0x1.0p-53;
}

// 1.0 if u < f else 0.0, from the sign bit of u - f (never -0.0 in round-to-nearest): a
// compare-and-branch here is mispredicted half the time and triples the rounding cost.
inline double below(double u, double f) {
  const double d = u - f;
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return static_cast<double>(static_cast<std::int64_t>(b >> 63));
}

// exp(x) for |x| <= 700: Cody-Waite reduction x = k ln2 + t, |t| <= ln2/2, degree-13 Taylor
// polynomial (truncation < 5e-18 relative) and exponent-bit scaling; about 1 ulp. Written
// branch-free so the release loop vectorises (glibc's exp does not, without -ffast-math).
inline double exp_bounded(double x) {
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 trailing zero bits: k * kLn2Hi exact
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kShift = 0x1.8p52;                     // rounds x log2(e) to an integer
  double kd = x * kLog2e + kShift;
  std::uint64_t ki;
  std::memcpy(&ki, &kd, sizeof ki);
  kd -= kShift;
  const double t = (x - kd * kLn2Hi) - kd * kLn2Lo;
  double p = 1.0 / 6227020800.0;
  p = p * t + 1.0 / 479001600.0;
  p = p * t + 1.0 / 39916800.0;
  p = p * t + 1.0 / 3628800.0;
  p = p * t + 1.0 / 362880.0;
  p = p * t + 1.0 / 40320.0;
  p = p * t + 1.0 / 5040.0;
  p = p * t + 1.0 / 720.0;
  p = p * t + 1.0 / 120.0;
  p = p * t + 1.0 / 24.0;
  p = p * t + 1.0 / 6.0;
  p = p * t + 0.5;
  p = p * t + 1.0;
  p = p * t + 1.0;
  const std::uint64_t scale_bits = (ki - 0x4338000000000000ULL + 1023ULL) << 52;  // 2^k
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  return p * scale;
}

constexpr std::size_t kChunk = 256;

// x86-64 with GCC: compile the two hot loops also for AVX2 (4 doubles per vector instead of
// SSE2's 2) and pick the version at load time (ifunc). No FMA target: the result stays
// bit-identical to the SSE2 build (no contraction of a * b + c), on every machine.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SHARPDP_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SHARPDP_AVX2_CLONES
#endif

// Counts must be integers in [0, 2^53); NaN fails every comparison. Integrality without a
// double -> int64 conversion (scalar before AVX-512): for 0 <= x < 2^52, (x + 2^52) - 2^52
// rounds x to an integer, so it equals x iff x is one; every double in [2^52, 2^53) is one.
SHARPDP_AVX2_CLONES bool counts_ok(const double* x, std::size_t len) {
  bool ok = true;
  for (std::size_t k = 0; k < len; ++k) {
    const double v = x[k];
    const double r = (v + 0x1.0p52) - 0x1.0p52;
    ok &= (v >= 0.0) & (v < 0x1.0p53) & ((v >= 0x1.0p52) | (r == v));
  }
  return ok;
}

// y = [(x + c) exp(sigma z + drift) - c]_+ (vectorised: no calls, no branches).
SHARPDP_AVX2_CLONES void shifted_log(const double* x, const double* z, double* y, std::size_t len, double c,
                                     double sigma, double drift) {
  for (std::size_t k = 0; k < len; ++k) {
    const double v = (x[k] + c) * exp_bounded(sigma * z[k] + drift) - c;
    y[k] = v > 0.0 ? v : 0.0;  // clip; also maps -0.0 to +0.0
  }
}

}  // namespace

void shifted_log_release(const double* in, std::size_t n, double c, double sigma, const StreamKey& key, bool integer,
                         int threads, double* res) {
  if (!(c > 0.0) || !std::isfinite(c)) throw std::invalid_argument("c must be finite and > 0");
  // sigma = Phi^-1(p) with p < 1 is below 8.3 and |Z| <= 14 (ziggurat tail from 53-bit uniforms),
  // so sigma Z - sigma^2 stays far inside exp_bounded's domain |x| <= 700.
  if (!(sigma > 0.0) || !(sigma <= 9.0)) throw std::invalid_argument("sigma must be in (0, 9]");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  const ZigguratNormalTables& zig = ziggurat_normal_tables();
  const double drift = -sigma * sigma;
  parallel_blocks(sampler_blocks(n), threads, [&](std::size_t b) {
    Rng rng(key, b);
    const std::size_t hi = std::min(n, (b + 1) * kSamplerBlockRows);
    double z[kChunk];
    for (std::size_t lo = b * kSamplerBlockRows; lo < hi; lo += kChunk) {
      const std::size_t len = std::min(kChunk, hi - lo);
      for (std::size_t k = 0; k < len; ++k) z[k] = rng.normal_ziggurat(zig);
      const double* x = in + lo;
      double* y = res + lo;
      if (!counts_ok(x, len)) throw std::invalid_argument("counts must be integers in [0, 2**53)");
      shifted_log(x, z, y, len, c, sigma, drift);
      if (integer) {
        for (std::size_t k = 0; k < len; ++k) {
          // floor of y >= 0 by truncation (std::floor is a libm call without SSE4.1);
          // doubles >= 2^52 are integers already
          const double fl = y[k] < 0x1.0p52 ? static_cast<double>(static_cast<std::int64_t>(y[k])) : y[k];
          y[k] = fl + below(unit53(rng.next()), y[k] - fl);
        }
      }
    }
  });
}

}  // namespace kernels
}  // namespace sharpdp
