// Shifted-log Gaussian release kernel (see histogram.hpp). No Python in here.
#include "histogram.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common.hpp"
#include "histogram_phi_table.hpp"

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
  // kLn2Hi: 32 significant bits (21 trailing zero bits), so k * kLn2Hi is exact for |k| <= 2^21
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
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

// The positions i < len with flag[i] != skip (flags are 0 or 1), in order, into idx; returns their
// number. Eight flags per 64-bit load, so the common case (no entry) costs almost nothing.
inline std::size_t list_flags(const unsigned char* flag, std::size_t len, unsigned char skip, std::uint16_t* idx) {
  const std::uint64_t all_skip = 0x0101010101010101ULL * skip;
  std::size_t m = 0, i = 0;
  for (; i + 8 <= len; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, flag + i, sizeof w);
    if (w == all_skip) continue;
    for (std::size_t k = i; k < i + 8; ++k)
      if (flag[k] != skip) idx[m++] = static_cast<std::uint16_t>(k);
  }
  for (; i < len; ++i)
    if (flag[i] != skip) idx[m++] = static_cast<std::uint16_t>(i);
  return m;
}

// cond ? x : y by bit masks (a ternary on doubles is kept as a branch and stops vectorisation)
inline double select_bits(bool cond, double x, double y) {
  std::uint64_t xb, yb;
  std::memcpy(&xb, &x, sizeof xb);
  std::memcpy(&yb, &y, sizeof yb);
  const std::uint64_t m = 0 - static_cast<std::uint64_t>(cond);
  const std::uint64_t r = (xb & m) | (yb & ~m);
  double out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

// 2^e for -1022 <= e <= 1023, from its bit pattern (std::ldexp is a slow library call)
inline double pow2(int e) {
  const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
  double r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

// Integers below 2^63 to double through the signed conversion (one instruction; the unsigned
// one branches on the top bit). The same value: both round to nearest.
inline double small_to_double(std::uint64_t x) { return static_cast<double>(static_cast<std::int64_t>(x)); }

// A 32-bit integer as a double, exactly: 2^52 + v from its bit pattern, minus 2^52.
inline double u32_to_double(std::uint64_t v) {
  const std::uint64_t bits = 0x4330000000000000ULL | v;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d - 0x1.0p52;
}

// Any 64-bit word to double, rounded to nearest as static_cast<double> does, bit for bit: the
// high and low halves are exact doubles and their sum is rounded once. No branch (the unsigned
// conversion branches on the top bit) and only integer and double operations that vectorise.
inline double word_to_double(std::uint64_t x) {
  return u32_to_double(x >> 32) * 0x1.0p32 + u32_to_double(x & 0xFFFFFFFFULL);
}

// grid_value() inlined into the release loops (the exported function calls it)
inline double grid_value_inline(std::uint64_t j, int grid_bits) {
  constexpr std::uint64_t kFixedEnd = std::uint64_t{1} << (kGridSigBits + 1);
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kGridSigBits) - 1;
  // exact: j < 2^31 and m < 2^31 are doubles, scaling by powers of two is exact in range
  if (j < kFixedEnd) return small_to_double(j) * pow2(-grid_bits);
  const int e = static_cast<int>(j >> kGridSigBits) - 1;  // 1..900
  return small_to_double((std::uint64_t{1} << kGridSigBits) + (j & kMask)) * pow2(e - grid_bits);
}

// grid_value_inline without a branch, for the vectorised passes: both forms are computed (each
// exact where it applies; the other one is a finite value that is discarded) and selected by
// bits. Integers below 2^32 convert exactly through u32_to_double. Equal to grid_value_inline
// for every j <= kGridLastIndex.
inline double grid_value_flat(std::uint64_t j, int grid_bits) {
  constexpr std::uint64_t kFixedEnd = std::uint64_t{1} << (kGridSigBits + 1);
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kGridSigBits) - 1;
  const double fixed = u32_to_double(j & 0xFFFFFFFFULL) * pow2(-grid_bits);
  const int e = static_cast<int>(j >> kGridSigBits) - 1;  // 1..900 where used; -1 or 0 otherwise
  const double flt = u32_to_double((std::uint64_t{1} << kGridSigBits) + (j & kMask)) * pow2(e - grid_bits);
  return select_bits(j < kFixedEnd, fixed, flt);
}

// grid_index() inlined into the release loops (the exported function calls it)
inline std::uint64_t grid_index_inline(double v, int grid_bits) {
  if (!(v > 0.0)) return 0;
  const double x = v * pow2(grid_bits);
  constexpr double kFixedEnd = 0x1.0p31;  // 2^(kGridSigBits + 1)
  if (!std::isfinite(x)) return kGridLastIndex;
  // (x + 0.5 < 2^31 and below: the signed conversion truncates as the unsigned one does)
  if (x < kFixedEnd - 0.5) return static_cast<std::uint64_t>(static_cast<std::int64_t>(x + 0.5));
  // x in [2^ex, 2^(ex + 1)), read from its exponent bits (x is finite and >= 2^30: normal)
  std::uint64_t xb;
  std::memcpy(&xb, &x, sizeof xb);
  const int ex = static_cast<int>((xb >> 52) & 0x7ff) - 1023;
  const int e = ex - kGridSigBits;  // >= 0
  if (e > 900) return kGridLastIndex;
  const auto r = static_cast<std::uint64_t>(static_cast<std::int64_t>(x * pow2(-e) + 0.5));  // in [2^30, 2^31]
  const std::uint64_t j = (static_cast<std::uint64_t>(e + 1) << kGridSigBits) + r - (std::uint64_t{1} << kGridSigBits);
  return std::min(j, kGridLastIndex);
}

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


// ------------------------------------------------------------------ exact grid release
// Wichura's AS241 (PPND16), "Algorithm AS 241: The Percentage Points of the Normal
// Distribution", Applied Statistics 37 (1988) 477-484: rational approximations of the inverse
// normal CDF with relative error about 1e-16. Only a candidate: every answer is verified.
// lower = min(p, 1 - p) is passed accurately (both tails are computed from the small side).
// The central region |q| <= 0.425 (branch-free: also evaluated over whole chunks).
inline double inverse_normal_cdf_central(double q) {
  const double r = 0.180625 - q * q;
  return q *
           (((((((2509.0809287301226727 * r + 33430.575583588128105) * r + 67265.770927008700853) * r +
                45921.953931549871457) * r + 13731.693765509461125) * r + 1971.5909503065514427) * r +
             133.14166789178437745) * r + 3.387132872796366608) /
           (((((((5226.495278852854561 * r + 28729.085735721942674) * r + 39307.89580009271061) * r +
                21213.794301586595867) * r + 5394.1960214247511077) * r + 687.1870074920579083) * r +
             42.313330701600911252) * r + 1.0);
}

double inverse_normal_cdf(double q, double lower) {
  if (std::fabs(q) <= 0.425) return inverse_normal_cdf_central(q);
  double r = std::sqrt(-std::log(lower));
  double z;
  if (r <= 5.0) {
    r -= 1.6;
    z = (((((((7.7454501427834140764e-4 * r + 0.0227238449892691845833) * r + 0.24178072517745061177) * r +
              1.27045825245236838258) * r + 3.64784832476320460504) * r + 5.7694972214606914055) * r +
           4.6303378461565452959) * r + 1.42343711074968357734) /
        (((((((1.05075007164441684324e-9 * r + 5.475938084995344946e-4) * r + 0.0151986665636164571966) * r +
              0.14810397642748007459) * r + 0.68976733498510000455) * r + 1.6763848301838038494) * r +
           2.05319162663775882187) * r + 1.0);
  } else {
    r -= 5.0;
    z = (((((((2.01033439929228813265e-7 * r + 2.71155556874348757815e-5) * r + 0.0012426609473880784386) * r +
              0.026532189526576123093) * r + 0.29656057182850489123) * r + 1.7848265399172913358) * r +
           5.4637849111641143699) * r + 6.6579046435011037772) /
        (((((((2.04426310338993978564e-15 * r + 1.4215117583164458887e-7) * r + 1.8463183175100546818e-5) * r +
              7.868691311456132591e-4) * r + 0.0148753612908506148525) * r + 0.13692988092273580531) * r +
           0.59983220655588793769) * r + 1.0);
  }
  return q < 0.0 ? -z : z;
}

constexpr double kU = 0x1.0p-53;  // unit roundoff of round-to-nearest double arithmetic
// Assumed relative error bounds of the C library (docs/histogram_release.md §4.2): glibc documents
// at most 1 ulp (log, log1p) and 5 ulp (erfc) on x86-64 (2.3 ulp observed for erfc against mpmath);
// we assume 64 ulp (1 ulp <= 2^-52 relative) for each.
constexpr double kLogErr = 0x1.0p-46;
constexpr double kErfcErr = 0x1.0p-46;
constexpr double kPhiMax = 0.3989422804014328;  // 1/sqrt(2 pi) rounded up: max of the normal density
constexpr double kInvSqrt2 = 0.70710678118654752440;

enum class Side : unsigned { kBelow = 0, kAbove = 1, kAmbiguous = 2 };

struct Count {
  double n, s, inv_s, c, sigma, inv_sigma, s2;  // s = fl(n + c), inv_s = fl(1/s), inv_sigma = fl(1/sigma), s2 = fl(sigma^2)
};

// The interval [w0 2^-64, (w0 + 1) 2^-64) of U and (a 2^-64, (a + 1) 2^-64] of 1 - U
// (a = 2^64 - 1 - w0), each end moved outwards: f_lo <= w0 2^-64, f_hi >= (w0 + 1) 2^-64,
// g_lo <= a 2^-64, g_hi >= (a + 1) 2^-64 (the conversions and products round by <= 1/2 ulp each;
// the 2^-51 factors cover them).
struct Interval {
  double f_lo, f_hi, g_lo, g_hi;
  Interval() = default;
  explicit Interval(std::uint64_t w0) {
    const double w = word_to_double(w0);
    const double a = word_to_double(~w0);
    f_lo = w * (1.0 - 0x1.0p-51) * 0x1.0p-64;
    f_hi = (w + 1.0) * (1.0 + 0x1.0p-51) * 0x1.0p-64;
    g_lo = a * (1.0 - 0x1.0p-51) * 0x1.0p-64;
    g_hi = (a + 1.0) * (1.0 + 0x1.0p-51) * 0x1.0p-64;
  }
};

// Where F(t) = Phi(b(t)) lies relative to U's interval: kBelow when F(t) <= w0 2^-64 certainly,
// kAbove when F(t) >= (w0 + 1) 2^-64 certainly. The computed F carries the error bound of
// docs/histogram_release.md §4; the final sums are widened by 2^-51 relative.
struct Located {
  Side side;
  double p, e, b, db;  // P (F(t) if b <= 0, else 1 - F(t)), its error bound, computed b(t) and its error bound
};

// b(t) and its error bound from L = log((t + c)/(n + c)) and L's error bound dL.
inline void b_of_log(double L, double dL, const Count& k, double& b, double& db) {
  const double num = L + k.s2;
  b = num * k.inv_sigma;
  db = 1.01 * (dL + kU * k.s2 + kU * std::fabs(num)) * k.inv_sigma + 5.0 * kU * std::fabs(b);
}

// x carries 4 roundings relative to x (t - n, n + c, 1/s, the product); log1p's slope is
// <= 1/(1 - 0.5 - 3u) on |x| <= 0.5(1 + 4.1u): 4.01 u |x| * 2.0001 <= 8.2 u |x|
inline double log1p_error(double x, double L) { return 8.2 * kU * std::fabs(x) + 1.01 * kLogErr * std::fabs(L); }

// The side of U's interval, from b(t) +- db and P = 0.5 erfc(|b|/sqrt 2) as computed.
// ep bounds the error of p as an approximation of Phi(-|b|) at the computed b (1.01 kErfcErr p
// for the library erfc, phi_tail's bound for the table).
inline Located classify(double b, double db, double p, double ep, const Interval& u) {
  const double e = kPhiMax * db + ep + 0x1.0p-1000;
  const double up = (p + e) * (1.0 + 0x1.0p-51);
  const double down = (p - e) * (1.0 - 0x1.0p-51);
  // b <= 0: P = F, compared with U's interval; b > 0: P = 1 - F, and F <= w0 2^-64 iff
  // 1 - F >= (a + 1) 2^-64, F >= (w0 + 1) 2^-64 iff 1 - F <= a 2^-64. Below wins if both hold.
  // Both sides are evaluated and selected without a branch (the sign of b is a coin flip).
  // (flags as 0/1 integers: the compiler keeps ternaries on them as branches)
  const unsigned f_side = b <= 0.0;
  const unsigned below = (f_side & unsigned{up <= u.f_lo}) | ((f_side ^ 1u) & unsigned{down >= u.g_hi});
  const unsigned above = (f_side & unsigned{down >= u.f_hi}) | ((f_side ^ 1u) & unsigned{up <= u.g_lo});
  // kBelow = 0, kAbove = 1, kAmbiguous = 2
  const auto side = static_cast<Side>((1u - below) * (2u - above));
  return Located{side, p, e, b, db};
}

inline double half_erfc_abs(double b) { return 0.5 * std::erfc(std::fabs(b) * kInvSqrt2); }

Located locate(double t, const Count& k, const Interval& u) {
  const double x = (t - k.n) * k.inv_s;
  double L, dL;
  if (std::fabs(x) <= 0.5) {
    L = std::log1p(x);
    dL = log1p_error(x, L);
  } else {
    const double a = std::log(t + k.c);
    const double b = std::log(k.s);
    L = a - b;
    dL = 2.02 * kU + 1.01 * kLogErr * (std::fabs(a) + std::fabs(b)) + 1.01 * kU * std::fabs(L);
  }
  double b, db;
  b_of_log(L, dL, k, b, db);
  // P = F(t) when b <= 0, P = 1 - F(t) when b > 0: each from the tail it is small in
  const double p = half_erfc_abs(b);
  return classify(b, db, p, 1.01 * kErfcErr * p, u);
}

constexpr double kInvSqrt2PiLow = 0.3989422804014326;  // 1/sqrt(2 pi) rounded down

// Cheap proof that F(t_hi) >= (w0 + 1) 2^-64 from the evaluation `lo` at the boundary t_lo just
// below (docs/histogram_release.md §4.3): F(t_hi) - F(t_lo) = int_{b(t_lo)}^{b(t_hi)} phi >=
// (b(t_hi) - b(t_lo)) min phi, with b(t_hi) - b(t_lo) = log1p(y)/sigma >= (y - y^2/2)/sigma,
// y = (t_hi - t_lo)/(t_lo + c), and min phi >= phi(B) for B >= |b| on the whole range. Every
// rounding is covered by a factor 1 -+ 2^-50 (8 u) or 2^-44 (the exp library error). In two
// steps: above_setup gives d_lo <= b(t_hi) - b(t_lo) and the exponent of phi(B) (false: y too
// large), above_check decides from exp of that exponent. False means "not proved".
// The arithmetic of above_setup for a given y <= 0.5 (no branch: the chunk loop vectorises it).
inline void above_bounds(const Located& lo, double y, double inv_sigma, double& d_lo, double& arg) {
  const Count k{0.0, 0.0, 0.0, 0.0, 0.0, inv_sigma, 0.0};
  const double y_lo = y * (1.0 - 0x1.0p-50);                             // <= y exact (2 roundings)
  const double l_lo = (y_lo - 0.5 * y_lo * y_lo) * (1.0 - 0x1.0p-50);    // <= log1p(y)
  d_lo = l_lo * k.inv_sigma * (1.0 - 0x1.0p-50);                         // <= b(t_hi) - b(t_lo)
  const double d_hi = y * (1.0 + 0x1.0p-50) * k.inv_sigma * (1.0 + 0x1.0p-50);  // >= it (log1p(y) <= y)
  // B >= |b| on [b - db, b + db + d_hi]; the end sums may cancel, so their rounding is covered by
  // an absolute 4 u (|b| + db + d_hi)
  const double big = (std::max(std::fabs(lo.b - lo.db), std::fabs(lo.b + lo.db + d_hi)) +
                      4.0 * kU * (std::fabs(lo.b) + lo.db + d_hi)) * (1.0 + 0x1.0p-50);
  arg = -0.5 * big * big * (1.0 + 0x1.0p-50);  // <= -B^2/2
}

// y = (t_hi - t_lo)/(t_lo + c); t_hi - t_lo exact (multiples of the local half-step)
inline double above_y(double t_lo, double t_hi, double c) { return (t_hi - t_lo) / (t_lo + c); }

inline bool above_setup(const Located& lo, double t_lo, double t_hi, const Count& k, double& d_lo, double& arg) {
  const double y = above_y(t_lo, t_hi, k.c);
  if (!(y <= 0.5)) return false;
  above_bounds(lo, y, k.inv_sigma, d_lo, arg);
  return true;
}

inline bool above_check(const Located& lo, double d_lo, double exp_arg, const Interval& u) {
  const double phi_lo = exp_arg * kInvSqrt2PiLow * (1.0 - 0x1.0p-44);
  const double mass = d_lo * phi_lo * (1.0 - 0x1.0p-50);  // <= F(t_hi) - F(t_lo)
  // b <= 0: lo.p = F(t_lo) >= lo.p - lo.e; b > 0: lo.p = 1 - F(t_lo) <= lo.p + lo.e, and
  // 1 - F(t_hi) = 1 - F(t_lo) - (F(t_hi) - F(t_lo)). Both evaluated, selected without a branch.
  const double low = ((lo.p - lo.e) + mass) - 0x1.0p-50 * (lo.p + lo.e + mass);
  const double high = ((lo.p + lo.e) - mass) + 0x1.0p-50 * (lo.p + lo.e + mass);
  const unsigned f_side = lo.b <= 0.0;
  return ((f_side & unsigned{low >= u.f_hi}) | ((f_side ^ 1u) & unsigned{high <= u.g_lo})) != 0;
}

bool above_from_below(const Located& lo, double t_lo, double t_hi, const Count& k, const Interval& u) {
  double d_lo, arg;
  return above_setup(lo, t_lo, t_hi, k, d_lo, arg) && above_check(lo, d_lo, std::exp(arg), u);
}

// Lower boundary of bin j >= 1: the midpoint of grid values j - 1 and j (exact: <= 33 bits).
inline double boundary(std::uint64_t j, int grid_bits) {
  return 0.5 * (grid_value_inline(j - 1, grid_bits) + grid_value_inline(j, grid_bits));
}

constexpr int kMaxSteps = 6;

// The bin of U for count k, or false (ambiguous) with j left at the candidate.
// Candidate: z = Phi^-1 at the middle of U's interval, from its smaller tail.
inline double candidate_z(std::uint64_t w0) {
  const double lo = (static_cast<double>(w0) + 0.5) * 0x1.0p-64;
  const double hi = (static_cast<double>(~w0) + 0.5) * 0x1.0p-64;  // 1 - midpoint
  return inverse_normal_cdf(lo - 0.5, std::min(lo, hi));
}

bool invert(const Count& k, int grid_bits, std::uint64_t w0, std::uint64_t& j, std::uint64_t& steps) {
  j = grid_index_inline(k.s * std::exp(k.sigma * candidate_z(w0) - k.s2) - k.c, grid_bits);  // a candidate only
  const Interval u(w0);
  for (int it = 0; it < kMaxSteps; ++it) {
    Located lo{Side::kBelow, 0.0, 0.0, 0.0, 0.0};
    double t_lo = 0.0;
    if (j > 0) {
      t_lo = boundary(j, grid_bits);
      lo = locate(t_lo, k, u);
    }
    if (lo.side == Side::kAbove) {
      --j;
      ++steps;
      continue;
    }
    Side hi = Side::kAbove;
    if (j < kGridLastIndex) {
      const double t_hi = boundary(j + 1, grid_bits);
      if (!(j > 0 && lo.side == Side::kBelow && above_from_below(lo, t_lo, t_hi, k, u))) hi = locate(t_hi, k, u).side;
    }
    if (hi == Side::kBelow) {
      ++j;
      ++steps;
      continue;
    }
    return lo.side == Side::kBelow && hi == Side::kAbove;
  }
  return false;
}

// out[i] = grid_index_inline(v[i], grid_bits) for i < len <= kChunk: vectorised where v <= 0 or NaN
// (index 0) or v 2^k < 2^31 - 1/2 (fixed spacing: the index is trunc(fl(v 2^k + 1/2)), the floor of
// y = fl(v 2^k + 1/2) >= 1/2, taken as RNE(y) by the 2^52 shift minus 1 where that rounded up, and
// read from the bits of floor(y) + 2^52: no conversion instruction, which would not vectorise before
// AVX-512); grid_index_inline for the other entries (large values, +inf).
inline void grid_index_pass(const double* v, std::size_t len, int grid_bits, std::uint64_t* out) {
  const double scale = pow2(grid_bits);
  unsigned char big[kChunk];
  for (std::size_t i = 0; i < len; ++i) {
    const double xs = v[i] * scale;
    const std::uint64_t pos = v[i] > 0.0, fixed = xs < 0x1.0p31 - 0.5;  // pos = 0 for NaN
    const double y = select_bits((pos & fixed) != 0, xs, 0.0) + 0.5;
    const double rn = (y + 0x1.0p52) - 0x1.0p52;             // RNE(y), exact (y < 2^31)
    const double fl = rn - select_bits(rn > y, 1.0, 0.0);    // floor(y) = trunc(y)
    const double g = fl + 0x1.0p52;
    std::uint64_t gb;
    std::memcpy(&gb, &g, sizeof gb);
    out[i] = gb - 0x4330000000000000ULL;  // 0 where pos = 0 (y = 1/2)
    big[i] = static_cast<unsigned char>(pos & (fixed ^ 1u));
  }
  std::uint16_t idx[kChunk];
  const std::size_t m = list_flags(big, len, 0, idx);
  for (std::size_t t = 0; t < m; ++t) out[idx[t]] = grid_index_inline(v[idx[t]], grid_bits);
}

// The candidates' exp(sigma z - sigma^2), z = candidate_z(w0[i]), for a chunk: the central
// branch of AS241 (85 % of the words) and exp_bounded vectorise; the tails call
// inverse_normal_cdf. A candidate is only a starting bin (every bin returned is proved), so
// exp_bounded's ~1 ulp instead of the library exp cannot change a released value.
SHARPDP_AVX2_CLONES void candidate_factors(const std::uint64_t* w0, std::size_t len, double sigma, double s2,
                                           double* v, double* a) {
  double z[kChunk], qs[kChunk];
  for (std::size_t i = 0; i < len; ++i) {
    // q = U - 1/2 to 2^-53 from the top 52 bits (1.f in [1, 2) from its bit pattern: integer
    // operations that vectorise, unlike the 64-bit conversion; a candidate needs no exactness)
    const std::uint64_t one_f = 0x3FF0000000000000ULL | (w0[i] >> 12);
    double u1;
    std::memcpy(&u1, &one_f, sizeof u1);
    const double q = (u1 - 1.5) + 0x1.0p-53;
    qs[i] = q;
    z[i] = inverse_normal_cdf_central(q);
  }
  // the tails (15 %), flagged in a vectorised pass
  unsigned char tail[kChunk];
  for (std::size_t i = 0; i < len; ++i) tail[i] = static_cast<unsigned char>(std::fabs(qs[i]) > 0.425);
  std::uint16_t idx[kChunk];
  const std::size_t m = list_flags(tail, len, 0, idx);
  for (std::size_t t = 0; t < m; ++t) z[idx[t]] = candidate_z(w0[idx[t]]);
  // |z| <= 9.5 for 64-bit words and sigma <= 9: |sigma z - sigma^2| < 200, inside exp_bounded's domain
  for (std::size_t i = 0; i < len; ++i) {
    a[i] = sigma * z[i] - s2;
    v[i] = exp_bounded(a[i]);
  }
}

// Proved relative error bound of exp_bounded on [-700, 700] (docs/histogram_release.md §4.5:
// Cody-Waite reduction, Taylor truncation and Horner's rounding give <= 55 u < 2^-47; this
// constant has a margin of 2). Used where its value enters a proof (the fast path's log and the
// §4.3 mass bound), unlike a candidate.
constexpr double kExpBoundedErr = 0x1.0p-46;

// L = log((t + c)/(n + c)) without a library call (docs/histogram_release.md §4.5): with a the
// candidate's exponent and E = exp_bounded(a) ~ e^a, L = a + log(rho / e^a), rho = (t + c)/(n + c);
// q = fl(rho~ / E) = (rho / e^a)(1 + zeta), |zeta| <= 5.01 u + kExpBoundedErr (5 roundings and E's
// error), and r = q - 1 exactly (Sterbenz, |r| <= 2^-6), so log(rho / e^a) = log1p(r) - log(1 + zeta).
// log1p(r) by its degree-5 Taylor polynomial (Horner): rounding <= 11 u |r| (Higham, "Accuracy and
// Stability of Numerical Algorithms", eq. (5.3), gamma_10 and the coefficients' rounding),
// truncation <= |r|^6 / (6 (1 - |r|)) <= 0.2 r^6. dL bounds |L~ - L|, including a + P's rounding.
constexpr double kFastLogMaxR = 0x1.0p-6;
constexpr double kFastLogConst = 1.01 * (5.01 * 0x1.0p-53 + kExpBoundedErr);
inline double fast_log_series(double r) {
  return r * (1.0 - r * (0.5 - r * (1.0 / 3.0 - r * (0.25 - r * 0.2))));
}
inline double fast_log_error(double r, double L) {
  const double r2 = r * r;
  return kFastLogConst + 11.0 * kU * std::fabs(r) + 0.2 * (r2 * r2 * r2) + 1.01 * kU * std::fabs(L);
}
// The same series at x = (t - n) fl(1/(n + c)) itself, for |x| <= 2^-6 (docs/histogram_release.md
// §4.5): L = log1p(x) with a bound relative to x and no absolute floor (the series in r above
// carries exp_bounded's error, an absolute ~1.5e-14 in L, which exceeds whole bins when sigma is
// tiny, i.e. c large). x~ is off by <= 4.01 u |x| (4 roundings, §4.2 step 1), so log1p(x~) is off by
// <= 4.1 u |x~|; Horner's rounding <= 11 u |x~| and truncation <= 0.2 x~^6 as for r.
inline double fast_log1p_error(double x) {
  const double x2 = x * x;
  return 16.0 * kU * std::fabs(x) + 0.2 * (x2 * x2 * x2);
}
// A series is used only where its bound is below kSeriesBinFrac times the bin's width in L,
// y = (t_hi - t_lo)/(t_lo + c) (else the proof would often fail and cost a scalar invert()).
// Only a choice between proofs: any choice releases the same proved bins.
constexpr double kSeriesBinFrac = 0x1.0p-12;
// A lower bound on every bin's width in L, y = (t_hi - t_lo)/(t_lo + c) (j >= 1): t_hi - t_lo >=
// 2^-k (grid steps are >= 2^-k) and, above 2^(32-k), >= t_lo 2^-32 (31-bit significands), so
// y >= 1/(2^32 + c 2^k) for every t_lo >= 0. Used only to choose proofs.
inline double min_bin_width_in_l(double c, int grid_bits) {
  return 1.0 / (0x1.0p32 + c * pow2(grid_bits));
}

// Phi(-a) for 0 <= a <= 6 without a library call (docs/histogram_release.md §4.6): with a_k = k 2^-7
// the table point nearest a and s = a_k - a (exact, Sterbenz), Phi(-a) = Phi(-a_k) + phi(a_k) s S,
// S = sum_n He_n(a_k) s^n / (n + 1)! (the generating function exp(x t - t^2/2) = sum He_n(x) t^n / n!
// of the Hermite polynomials, integrated from 0 to s), truncated after n = 7 (|s| <= 2^-8: the tail
// is below 0.04 u) and evaluated by the Hermite recurrence and Horner's rule (<= 39 u relative,
// with the truncation). The table entries are the nearest doubles (kPhiTable). `err` bounds
// |p - Phi(-a)|: 1.01 u Phi(-a_k) (the table) + 43.01 u |C| (the correction C = phi(a_k) s S) + u p
// (the final sum), generously rounded up to 2 u, 48 u and 2 u. Branch-free: the chunk loop vectorises it.
constexpr double kPhiTableMax = 6.0;
inline void phi_tail(double a, double& p, double& err) {
  constexpr double kShift = 0x1.8p52;  // rounds a 2^7 to the nearest integer k
  const double kd = a * 128.0 + kShift;
  std::uint64_t kb;
  std::memcpy(&kb, &kd, sizeof kb);
  const std::uint64_t k = kb - 0x4338000000000000ULL;  // 0..768 for 0 <= a <= 6
  const double ak = (kd - kShift) * (1.0 / 128.0);        // exact
  const double s = ak - a;                                 // exact: |s| <= 2^-8, Sterbenz (or a_k = 0)
  const double h1 = ak;
  const double h2 = ak * h1 - 1.0;
  const double h3 = ak * h2 - 2.0 * h1;
  const double h4 = ak * h3 - 3.0 * h2;
  const double h5 = ak * h4 - 4.0 * h3;
  const double h6 = ak * h5 - 5.0 * h4;
  const double h7 = ak * h6 - 6.0 * h5;
  const double S =
      1.0 + s * (h1 * 0.5 +
                 s * (h2 * (1.0 / 6.0) +
                      s * (h3 * (1.0 / 24.0) +
                           s * (h4 * (1.0 / 120.0) +
                                s * (h5 * (1.0 / 720.0) + s * (h6 * (1.0 / 5040.0) + s * (h7 * (1.0 / 40320.0))))))));
  const double t = kPhiTable[k][0];
  const double C = (kPhiTable[k][1] * s) * S;
  p = t + C;
  err = 2.0 * kU * t + 48.0 * kU * std::fabs(C) + 2.0 * kU * p;
}

// p[i] = Phi(-|b[i]|) and ep[i] its error bound where fast[i] (entries that are not fast get finite
// values that are never used): phi_tail for |b| <= 6, else the library erfc (rare: |b| > 6 has
// probability ~2e-9 near the candidate) with the assumed error kErfcErr.
inline void tail_pass(const double* b, const unsigned char* fast, std::size_t len, double* p, double* ep) {
  unsigned char lib[kChunk];
  for (std::size_t i = 0; i < len; ++i) {
    const double a = std::fabs(b[i]);
    const unsigned in = a <= kPhiTableMax;  // false for NaN
    phi_tail(select_bits(in != 0, a, 0.0), p[i], ep[i]);
    lib[i] = static_cast<unsigned char>(unsigned{fast[i] != 0} & (in ^ 1u));
  }
  std::uint16_t idx[kChunk];
  const std::size_t m = list_flags(lib, len, 0, idx);
  for (std::size_t t = 0; t < m; ++t) {
    const std::size_t i = idx[t];
    p[i] = half_erfc_abs(b[i]);
    ep[i] = 1.01 * kErfcErr * p[i];
  }
}

// invert() for a chunk of counts, organised for throughput: the common case (the candidate's bin
// proved from its lower boundary: L by a series, docs/histogram_release.md §4.5; the tail
// probability from the table, §4.6; the upper boundary by the mass bound, §4.3) runs as branch-free
// passes over the chunk that vectorise; the rare entries (a library log1p or erfc, a candidate far
// from its bin) are listed and handled in scalar loops, and every count not proved goes through
// invert(). The result is the same function of the words as invert()'s up to which proof is found
// first: both return only proved bins.
SHARPDP_AVX2_CLONES void invert_chunk(const double* cnt_in, const std::uint64_t* w0, std::size_t len, double c, double sigma, double inv_sigma,
                  double s2, int grid_bits, std::uint64_t* bins, unsigned char* decided, std::uint64_t& steps) {
  // the counts are copied next to the other arrays of the chunk: the passes then read and write
  // memory at fixed relative addresses (the caller's arrays could alias the chunk's stack arrays
  // modulo 4096, which stalls loads behind unrelated stores and made the speed depend on where
  // numpy happened to allocate them)
  alignas(64) double cnt[kChunk];
  std::memcpy(cnt, cnt_in, len * sizeof(double));
  alignas(64) double v[kChunk], a[kChunk], r[kChunk], x[kChunk], L[kChunk], dL[kChunk], p[kChunk], arg[kChunk], d_lo[kChunk],
      inv_s[kChunk], gv[kChunk], tb[kChunk], th[kChunk];
  Interval iv[kChunk];  // U's interval of each word, built once (4 unsigned conversions)
  unsigned char fast[kChunk], series[kChunk];
  candidate_factors(w0, len, sigma, s2, v, a);
  for (std::size_t i = 0; i < len; ++i) inv_s[i] = 1.0 / (cnt[i] + c);
  // narrow: the bins may be narrower in L than 2^12 times the r-series' absolute error floor
  // (large c or a fine grid): choose per count between the series in r, in x and log1p, and take
  // the candidate through expm1. Else (small c, coarse grid) every bin is wide enough for the
  // series in r, and the passes are those of the plain fast path.
  const bool narrow = kFastLogConst > kSeriesBinFrac * min_bin_width_in_l(c, grid_bits);
  // the candidate value (n + c) e^a - c; where narrow and |a| <= 2^-10 as n + (n + c) expm1(a),
  // expm1 by its series ((n + c) v - c loses (n + c) u to cancellation, wider than the bins when
  // c is large). A candidate needs no error bound. (x[] holds the candidate values until the next
  // pass; this loop vectorises, grid_index_inline does not)
  if (narrow) {
    for (std::size_t i = 0; i < len; ++i) {
      const double ai = a[i];
      const double em1 = ai * (1.0 + ai * (0.5 + ai * (1.0 / 6.0 + ai * (1.0 / 24.0 + ai * (1.0 / 120.0)))));
      const double s = cnt[i] + c;
      x[i] = select_bits(std::fabs(ai) <= 0x1.0p-10, cnt[i] + s * em1, s * v[i] - c);
    }
  } else {
    for (std::size_t i = 0; i < len; ++i) x[i] = (cnt[i] + c) * v[i] - c;
  }
  grid_index_pass(x, len, grid_bits, bins);
  // fast[i]: 1 = prove the bin from its lower boundary t_j (then the upper by §4.3); 2 = bin 0,
  // prove F(t_1) >= (w0 + 1) 2^-64 directly (its lower end F(0) = 0 needs no proof)
  // (branch-free: vectorised)
  for (std::size_t i = 0; i < len; ++i) {
    const std::uint64_t j = bins[i];
    const unsigned ok = j < kGridLastIndex, pos = j > 0;
    // tb = boundary(max(j, 1)) and gv = its upper grid value, kept for t_hi = boundary(j + 1)
    const std::uint64_t jb = j + (1u - pos);
    gv[i] = grid_value_flat(jb, grid_bits);
    tb[i] = 0.5 * (grid_value_flat(jb - 1, grid_bits) + gv[i]);
    th[i] = 0.5 * (gv[i] + grid_value_flat(jb + 1, grid_bits));  // boundary(jb + 1)
    // r = (t + c)/(n + c) / exp_bounded(a) - 1 (§4.5): small when the candidate is near t
    // (for j = kGridLastIndex, ok = 0 and r is not used)
    r[i] = ((tb[i] + c) * inv_s[i]) / v[i] - 1.0;
    x[i] = (tb[i] - cnt[i]) * inv_s[i];
    const unsigned small = std::fabs(r[i]) <= kFastLogMaxR;
    const unsigned near = std::fabs(x[i]) <= 0.5;
    series[i] = static_cast<unsigned char>(small);
    fast[i] = static_cast<unsigned char>((ok & (small | near)) * (2u - pos));
  }
  // L at t_lo (§4.5). series[i]: 1 = the series in r from the candidate's exponent, 2 = the series
  // in x, 0 = the library's log1p(x) of §4.2. Not narrow: the series in r where |r| <= 2^-6
  // (nearly every count), else log1p (a candidate far from t, e.g. bin 0 at small counts).
  // Narrow, the first of: the series in r where |r| <= 2^-6 and its bound is below kSeriesBinFrac
  // times the bin's width y in L, or |r| <= 2^-6 and |x| > 1/2; the series in x where |x| <= 2^-6
  // and its bound is below kSeriesBinFrac y (large c: L is tiny and so is this bound); log1p
  // (|x| <= 1/2 here). From here every pass runs over the whole chunk without branches (entries
  // that are not fast compute finite values that are never used) and vectorises; the same bounds
  // as invert().
  if (!narrow) {
    for (std::size_t i = 0; i < len; ++i) {
      const double Ls = a[i] + fast_log_series(r[i]);
      L[i] = Ls;
      dL[i] = fast_log_error(r[i], Ls);
    }
  } else {
    for (std::size_t i = 0; i < len; ++i) {
      // the bin's width times t + c: boundary(j + 1) - boundary(j); y = wb/(t + c)
      const double wb = th[i] - tb[i];
      const double Ls = a[i] + fast_log_series(r[i]);
      const double dLs = fast_log_error(r[i], Ls);
      const double Lx = fast_log_series(x[i]);
      const double dLx = fast_log1p_error(x[i]);
      // dL <= kSeriesBinFrac y without the division
      const double lim = kSeriesBinFrac * wb, scale = tb[i] + c;
      const unsigned use_r = unsigned{std::fabs(r[i]) <= kFastLogMaxR} &
                             (unsigned{dLs * scale <= lim} | unsigned{std::fabs(x[i]) > 0.5});
      const unsigned use_x = (1u - use_r) & unsigned{std::fabs(x[i]) <= kFastLogMaxR} & unsigned{dLx * scale <= lim};
      series[i] = static_cast<unsigned char>(use_r + 2u * use_x);
      L[i] = select_bits(use_r != 0, Ls, Lx);
      dL[i] = select_bits(use_r != 0, dLs, dLx);
    }
  }
  unsigned char lib[kChunk];
  for (std::size_t i = 0; i < len; ++i) lib[i] = static_cast<unsigned char>(unsigned{series[i] == 0} & unsigned{fast[i] != 0});
  std::uint16_t idx[kChunk];
  std::size_t m = list_flags(lib, len, 0, idx);
  for (std::size_t t = 0; t < m; ++t) {
    const std::size_t i = idx[t];
    L[i] = std::log1p(x[i]);
    dL[i] = log1p_error(x[i], L[i]);
  }
  double b[kChunk], db[kChunk], e[kChunk];
  unsigned char side[kChunk], check[kChunk];
  for (std::size_t i = 0; i < len; ++i) {
    const Count k{0.0, 0.0, 0.0, 0.0, 0.0, inv_sigma, s2};
    b_of_log(L[i], dL[i], k, b[i], db[i]);
  }
  double ep[kChunk];
  tail_pass(b, fast, len, p, ep);
  for (std::size_t i = 0; i < len; ++i) iv[i] = Interval(w0[i]);
  for (std::size_t i = 0; i < len; ++i) {
    const Located r = classify(b[i], db[i], p[i], ep[i], iv[i]);
    side[i] = static_cast<unsigned char>(r.side);
    e[i] = r.e;
  }
  // bin 0 (fast 2): decided iff F(t_1) >= (w0 + 1) 2^-64; else (fast 1) a lower end proved below
  // U and y <= 0.5: the upper end is checked by the mass argument (§4.3)
  for (std::size_t i = 0; i < len; ++i) {
    const double y = above_y(tb[i], th[i], c);  // th = boundary(j + 1) where j >= 1 (used only there)
    const Located r{Side::kBelow, p[i], e[i], b[i], db[i]};
    above_bounds(r, y, inv_sigma, d_lo[i], arg[i]);
    const unsigned f1 = fast[i] == 1, f2 = fast[i] == 2;
    decided[i] = static_cast<unsigned char>(f2 & unsigned{side[i] == static_cast<unsigned char>(Side::kAbove)});
    check[i] = static_cast<unsigned char>(f1 & unsigned{side[i] == static_cast<unsigned char>(Side::kBelow)} &
                                          unsigned{y <= 0.5});
  }
  // phi(B)'s exponential by exp_bounded (proved error kExpBoundedErr < the 2^-44 charged in
  // above_check); below -700 (outside its domain) the bound is not needed: 0 proves nothing
  // (check is applied in the next pass)
  for (std::size_t i = 0; i < len; ++i) {
    const double a_in = arg[i];
    const bool in = a_in >= -700.0;
    arg[i] = select_bits(in, exp_bounded(select_bits(in, a_in, -700.0)), 0.0);
  }
  for (std::size_t i = 0; i < len; ++i) {
    const Located r{Side::kBelow, p[i], e[i], b[i], db[i]};
    decided[i] = static_cast<unsigned char>(decided[i] | (check[i] & unsigned{above_check(r, d_lo[i], arg[i], iv[i])}));
  }
  m = list_flags(decided, len, 1, idx);
  for (std::size_t t = 0; t < m; ++t) {
    const std::size_t i = idx[t];
    const Count k{cnt[i], cnt[i] + c, inv_s[i], c, sigma, inv_sigma, s2};
    decided[i] = invert(k, grid_bits, w0[i], bins[i], steps) ? 1 : 0;
  }
}

// out[k] = grid_value(bins[k]) for k < len (vectorised: grid_value_flat equals grid_value_inline)
SHARPDP_AVX2_CLONES void grid_values_pass(const std::uint64_t* bins, std::size_t len, int grid_bits, double* out) {
  for (std::size_t k = 0; k < len; ++k) out[k] = grid_value_flat(bins[k], grid_bits);
}

}  // namespace

double grid_value(std::uint64_t j, int grid_bits) { return grid_value_inline(j, grid_bits); }

void phi_tail_value(double a, double& p, double& err) {
  if (!(a >= 0.0 && a <= kPhiTableMax)) throw std::invalid_argument("a must lie in [0, 6]");
  phi_tail(a, p, err);
}

double exp_bounded_value(double x) {
  if (!(x >= -700.0 && x <= 700.0)) throw std::invalid_argument("x must lie in [-700, 700]");
  return exp_bounded(x);
}

std::uint64_t grid_index(double v, int grid_bits) { return grid_index_inline(v, grid_bits); }

void grid_index_vectorised(const double* v, std::size_t n, int grid_bits, std::uint64_t* out) {
  for (std::size_t lo = 0; lo < n; lo += kChunk) grid_index_pass(v + lo, std::min(kChunk, n - lo), grid_bits, out + lo);
}

namespace {
inline double grid_round_inline(std::uint64_t j, int grid_bits, std::uint64_t word) {
  constexpr std::uint64_t kFixedEnd = std::uint64_t{1} << (kGridSigBits + 1);
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kGridSigBits) - 1;
  // y = m 2^s exactly
  std::uint64_t m;
  int s;
  if (j < kFixedEnd) {
    m = j;
    s = -grid_bits;
  } else {
    m = (std::uint64_t{1} << kGridSigBits) + (j & kMask);
    s = static_cast<int>(j >> kGridSigBits) - 1 - grid_bits;
  }
  if (s >= 0) return small_to_double(m) * pow2(s);  // an integer already
  const int sh = -s;                                         // 1..60
  const std::uint64_t fl = m >> sh;
  const std::uint64_t frac = m & ((std::uint64_t{1} << sh) - 1);
  // P(word >> (64 - sh) < frac) = frac 2^-sh = y - floor(y), exactly
  return small_to_double(fl + ((word >> (64 - sh)) < frac ? 1u : 0u));
}
}  // namespace

double grid_round(std::uint64_t j, int grid_bits, std::uint64_t word) { return grid_round_inline(j, grid_bits, word); }

namespace {
void check_common(double c, double sigma, int threads) {
  if (!(c > 0.0) || !std::isfinite(c)) throw std::invalid_argument("c must be finite and > 0");
  // sigma = Phi^-1(p) with p < 1 is below 8.3
  if (!(sigma > 0.0) || !(sigma <= 9.0)) throw std::invalid_argument("sigma must be in (0, 9]");
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
}
}  // namespace

GridReleaseResult grid_release(const double* in, std::size_t n, double c, double sigma, int grid_bits,
                               const StreamKey& key, bool integer, int threads, double* res) {
  check_common(c, sigma, threads);
  if (grid_bits < kGridMinBits || grid_bits > kGridMaxBits)
    throw std::invalid_argument("grid_bits must be an integer in [0, 60]");
  const double s2 = sigma * sigma;
  const double inv_sigma = 1.0 / sigma;
  const std::size_t nblocks = sampler_blocks(n);
  std::vector<std::vector<AmbiguousDraw>> amb(nblocks);
  std::vector<std::uint64_t> steps(nblocks, 0);
  parallel_blocks(nblocks, threads, [&](std::size_t b) {
    Rng rng(key, b);
    const std::size_t hi = std::min(n, (b + 1) * kSamplerBlockRows);
    for (std::size_t lo = b * kSamplerBlockRows; lo < hi; lo += kChunk) {
      const std::size_t len = std::min(kChunk, hi - lo);
      if (!counts_ok(in + lo, len)) throw std::invalid_argument("counts must be integers in [0, 2**53)");
      // stream order per chunk: the chunk's first words, then for each count in order its 3 more
      // words if deferred and its rounding word if `integer`
      std::uint64_t w0[kChunk], bins[kChunk];
      unsigned char decided[kChunk];
      rng.fill(w0, len);
      invert_chunk(in + lo, w0, len, c, sigma, inv_sigma, s2, grid_bits, bins, decided, steps[b]);
      std::uint16_t idx[kChunk];
      const std::size_t m = list_flags(decided, len, 1, idx);  // the deferred draws
      if (!integer || m == 0) {
        // no word between the deferred draws' (float output), or every count reads exactly one
        // rounding word (integer output, nothing deferred): vectorised passes
        if (!integer) {
          grid_values_pass(bins, len, grid_bits, res + lo);
        } else {
          std::uint64_t rw[kChunk];
          rng.fill(rw, len);
          for (std::size_t k = 0; k < len; ++k) res[lo + k] = grid_round_inline(bins[k], grid_bits, rw[k]);
        }
        for (std::size_t t = 0; t < m; ++t) {
          AmbiguousDraw d{};
          d.index = lo + idx[t];
          d.candidate = bins[idx[t]];
          d.words[0] = w0[idx[t]];
          for (int w = 1; w < 4; ++w) d.words[w] = rng.next();
          amb[b].push_back(d);
          res[lo + idx[t]] = std::numeric_limits<double>::quiet_NaN();
        }
        continue;
      }
      for (std::size_t k = 0; k < len; ++k) {
        if (decided[k]) {
          res[lo + k] = grid_round_inline(bins[k], grid_bits, rng.next());
          continue;
        }
        AmbiguousDraw d{};
        d.index = lo + k;
        d.candidate = bins[k];
        d.words[0] = w0[k];
        for (int w = 1; w < 4; ++w) d.words[w] = rng.next();
        d.round_word = rng.next();
        amb[b].push_back(d);
        res[lo + k] = std::numeric_limits<double>::quiet_NaN();
      }
    }
  });
  GridReleaseResult out;
  for (std::size_t b = 0; b < nblocks; ++b) {
    out.ambiguous.insert(out.ambiguous.end(), amb[b].begin(), amb[b].end());
    out.steps += steps[b];
  }
  return out;
}

void grid_invert(const double* counts, const std::uint64_t* w0, std::size_t n, double c, double sigma, int grid_bits,
                 std::uint64_t* bins, unsigned char* decided) {
  check_common(c, sigma, 1);
  if (grid_bits < kGridMinBits || grid_bits > kGridMaxBits)
    throw std::invalid_argument("grid_bits must be an integer in [0, 60]");
  if (!counts_ok(counts, n)) throw std::invalid_argument("counts must be integers in [0, 2**53)");
  const double s2 = sigma * sigma;
  const double inv_sigma = 1.0 / sigma;
  std::uint64_t steps = 0;
  for (std::size_t lo = 0; lo < n; lo += kChunk) {
    const std::size_t len = std::min(kChunk, n - lo);
    invert_chunk(counts + lo, w0 + lo, len, c, sigma, inv_sigma, s2, grid_bits, bins + lo, decided + lo, steps);
  }
}

void shifted_log_release_float(const double* in, std::size_t n, double c, double sigma, const StreamKey& key,
                               bool integer, int threads, double* res) {
  check_common(c, sigma, threads);
  // |Z| <= 14 (ziggurat tail from 53-bit uniforms): sigma Z - sigma^2 stays far inside
  // exp_bounded's domain |x| <= 700.
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
