// The plain-float log-mgf of a lattice pmf that steers the Chernoff searches' choice of lam (docs/accountant_tail.md
// §60.3): for the support's log pmf lg_i and nodes x_i, z_i = lg_i + x_i lam, m = max z, e_i = exp(max(z_i - m, -700)),
// and the sums s0 = sum e_i, s1 = sum e_i x_i, s2 = sum (e_i x_i) x_i, each by numpy's pairwise summation
// (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum: below 8 terms a plain sum from -0.0, up to 128 terms eight
// accumulators combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) and the rest added in turn, above that the
// halves at n/2 rounded down to a multiple of 8). These are the doubles of the numpy expressions of
// chernoff.Chernoff._approx bit for bit (its exp is libm's, as numpy's float64 exp without AVX-512), computed in one
// pass without five n-long temporaries, and exp(-700) is evaluated once for every clamped term (the same argument,
// the same double). An estimate only: nothing certified depends on these values beyond which lam is tried.
// Header-only, plain pointers and sizes in, a named struct out; errors are std::invalid_argument.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace sharpdp {
namespace kernels {
namespace steer {

struct Sums {
  double m, s0, s1, s2;
};

struct Terms {
  const double* z;  // z_i - m clamped, computed by the caller's first pass (n doubles)
  const double* x;
  double e700;  // exp(-700.0)
};

struct Triple {
  double a, b, c;
};

// the terms i of one leaf: e_i, e_i x_i, (e_i x_i) x_i
inline void leaf_terms(const Terms& T, std::size_t i0, std::size_t n, double* e, double* ex, double* exx) {
  for (std::size_t k = 0; k < n; ++k) {
    const double t = T.z[i0 + k];
    e[k] = t == -700.0 ? T.e700 : std::exp(t);
  }
  for (std::size_t k = 0; k < n; ++k) {
    ex[k] = e[k] * T.x[i0 + k];
    exx[k] = ex[k] * T.x[i0 + k];
  }
}

inline double leaf_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double res = -0.0;
    for (std::size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  double r[8];
  for (int j = 0; j < 8; ++j) r[j] = a[j];
  std::size_t i = 8;
  for (; i < n - (n % 8); i += 8)
    for (int j = 0; j < 8; ++j) r[j] += a[i + static_cast<std::size_t>(j)];
  double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
  for (; i < n; ++i) res += a[i];
  return res;
}

inline Triple pairwise(const Terms& T, std::size_t i0, std::size_t n) {
  if (n <= 128) {
    double e[128], ex[128], exx[128];
    leaf_terms(T, i0, n, e, ex, exx);
    return {leaf_sum(e, n), leaf_sum(ex, n), leaf_sum(exx, n)};
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  const Triple a = pairwise(T, i0, n2), b = pairwise(T, i0 + n2, n - n2);
  return {a.a + b.a, a.b + b.b, a.c + b.c};
}

// z (n doubles of work space) receives z_i - m clamped at -700 (NaN propagated as numpy's maximum does)
inline Sums mgf_steer(const double* lg, const double* x, std::size_t n, double lam, double* z) {
  if (n == 0) throw std::invalid_argument("mgf_steer: the support must not be empty");
  double m = 0.0;
  bool nan = false;
  for (std::size_t i = 0; i < n; ++i) {
    z[i] = lg[i] + x[i] * lam;
    if (z[i] != z[i]) nan = true;
    if (i == 0 || z[i] > m) m = z[i];
  }
  if (nan) m = std::nan("");
  for (std::size_t i = 0; i < n; ++i) {
    const double t = z[i] - m;
    z[i] = (t >= -700.0 || t != t) ? t : -700.0;
  }
  const Terms T{z, x, std::exp(-700.0)};
  const Triple s = pairwise(T, 0, n);
  return {m, s.a, s.b, s.c};
}

}  // namespace steer
}  // namespace kernels
}  // namespace sharpdp
