// Python-free kernels of the exact blocks of atom laws (docs/accountant.md §5, docs/accountant_atoms.md
// §3; the Python side is python/sharpdp/shuffle/accountant/blocks.py). Header-only: plain pointers and
// sizes in, caller-allocated arrays and named structs out. Each function repeats, operation by
// operation and in the same order, the numpy expression it replaces, so its results are the same
// doubles (no fused multiply-add: every function is compiled with fp-contract=off).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#if defined(__GNUC__) && !defined(__clang__)
#define SHARPDP_NO_FMA __attribute__((optimize("fp-contract=off")))
#else
#define SHARPDP_NO_FMA
#endif

namespace sharpdp {
namespace kernels {
namespace blocks {

constexpr double kU = 1.1102230246251565e-16;  // 2^-53

// Result of block_values: the largest |value| and whether every value is finite.
struct Values {
  double max_abs;
  bool finite;
};

// The block values of blocks._block_law: value_r = sum_j c_rj a_j for each count vector r, as Sum2
// (compensated sum) of the exact products c_rj hi_j, c_rj lo_j (a = hi + lo, blocks._split), in the
// order c hi_0, ..., c hi_{m-1}, c lo_0, ..., c lo_{m-1}. counts: rows x m doubles, column-major.
// The rows run in chunks of kChunk with the row innermost (one column of counts at a time, a loop the
// compiler vectorises): every row still sees the same operations in the same order, so each value is the
// same double as the row-by-row loop's (session 48, docs/composition.md §2.32).
constexpr std::size_t kChunk = 512;

SHARPDP_NO_FMA inline Values block_values(const double* counts, std::size_t rows, std::size_t m, const double* hi,
                                          const double* lo, double* value) {
  if (m == 0) throw std::invalid_argument("block_values: at least one atom is needed");
  double max_abs = 0.0;
  bool finite = true;
  double comp[kChunk];
  for (std::size_t r0 = 0; r0 < rows; r0 += kChunk) {
    const std::size_t nr = std::min(kChunk, rows - r0);
    double* acc = value + r0;  // the running sums live in the output
    const double h0 = hi[0];
    const double* c0 = counts + r0;
    for (std::size_t i = 0; i < nr; ++i) {
      acc[i] = c0[i] * h0;
      comp[i] = 0.0;
    }
    for (std::size_t t = 1; t < 2 * m; ++t) {
      const std::size_t j = t < m ? t : t - m;
      const double x = t < m ? hi[j] : lo[j];
      const double* cj = counts + j * rows + r0;
      for (std::size_t i = 0; i < nr; ++i) {
        const double a0 = acc[i];
        const double col = cj[i] * x;
        const double tot = a0 + col;
        const double z = tot - a0;
        comp[i] = comp[i] + ((a0 - (tot - z)) + (col - z));
        acc[i] = tot;
      }
    }
    for (std::size_t i = 0; i < nr; ++i) acc[i] = acc[i] + comp[i];
    for (std::size_t i = 0; i < nr; ++i) {
      const double v = acc[i];
      if (!std::isfinite(v)) finite = false;
      max_abs = std::max(max_abs, std::fabs(v));
    }
  }
  return {max_abs, finite};
}

// FiniteLaw.cells followed by _BlockLaw.cells: the atoms v (probabilities p, relative probability
// error rel_p, any order) in the fine cells [x0 + i h, x0 + (i + 1) h), i < K, summed in the atoms'
// order: masses m, local moments w and error bounds em, ew (arrays of K, zeroed by the caller).
SHARPDP_NO_FMA inline void atom_cells(const double* v, const double* p, std::size_t na, double x0, double h,
                                      std::size_t K, double rel_p, double* m, double* w, double* em, double* ew) {
  if (K == 0) throw std::invalid_argument("atom_cells: K must be >= 1");
  const double top = x0 + static_cast<double>(K) * h;
  std::vector<std::int64_t> cnt(K, 0);
  const double kmax = static_cast<double>(K - 1);
  for (std::size_t i = 0; i < na; ++i) {
    const double vi = v[i];
    if (!(vi >= x0 && vi < top)) continue;  // [x0, x0 + K h): the partition of prob_below / prob_above
    const double pin = p[i];
    // vi >= x0, so vi - x0 >= 0 (rounding is monotone) and t >= 0 (h > 0: else no atom is in the window):
    // |vi - x0| / h is t itself, and min(max(floor(t), 0), kmax) is kmax for t >= kmax (an integer) and the
    // truncation of t below it (0 <= t < kmax < 2^63): the same doubles as the floor, without its call
    const double t = (vi - x0) / h;
    const double jf = t < kmax ? static_cast<double>(static_cast<std::int64_t>(t)) : kmax;
    const auto j = static_cast<std::size_t>(jf);
    const double frac = std::min(std::max(t - jf, 0.0), 1.0);
    const double fe = (4.0 * kU) * (t + 1.0);
    m[j] = m[j] + pin;
    w[j] = w[j] + pin * frac;
    ew[j] = ew[j] + pin * fe;
    ++cnt[j];
  }
  for (std::size_t j = 0; j < K; ++j) {
    const double r = (static_cast<double>(cnt[j]) + 4.0) * kU;
    const double emj = r * m[j];
    const double ewj = ew[j] * (1.0 + r) + r * w[j];
    em[j] = (emj + rel_p * m[j]) + 1e-300;
    ew[j] = (ewj + rel_p * w[j]) + 1e-300;
  }
}

// Log of an estimate (not a bound) of D_up for n users of the atom law (a, pa), blanket mass gamma in
// (0, 1] (blocks._log_value_estimate, docs/accountant.md §5.2): the Chernoff bound
// E[S_+] <= e^{n Lambda(th) - 1}/th at th with n Lambda'(th) th = 1 (doubling from 1e-3/(n max|a|),
// then 60 geometric bisection steps), Lambda(th) = log(1 - gamma + gamma E[e^{th L}]), divided by
// 1 + th sqrt(n Lambda''(th)) and by n gamma. Requires max|a| > 0 finite and max a > 0; -inf when the
// result is not finite. Only sizes the truncation of the block law.
inline double log_value_estimate(const double* a, const double* pa, std::size_t m, double gamma, double n) {
  const double lg = std::log(gamma);
  const double l1g = gamma < 1.0 ? std::log1p(-gamma) : -std::numeric_limits<double>::infinity();
  double amax = 0.0;
  for (std::size_t j = 0; j < m; ++j) amax = std::max(amax, std::fabs(a[j]));
  struct Lam {
    double lam, d1, d2;
  };
  auto lam = [&](double th) -> Lam {
    double mx = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < m; ++j) mx = std::max(mx, th * a[j]);
    double z = 0.0, za = 0.0, zaa = 0.0;
    for (std::size_t j = 0; j < m; ++j) {
      const double w = pa[j] * std::exp(th * a[j] - mx);
      z += w;
      za += w * a[j];
      zaa += w * a[j] * a[j];
    }
    const double big = lg + (mx + std::log(z));
    const double lam0 = std::isinf(l1g) ? big : std::max(l1g, big) + std::log1p(std::exp(-std::fabs(l1g - big)));
    const double r = std::exp(big - lam0);
    const double d1 = r * za / z;
    return {lam0, d1, std::max(r * zaa / z - d1 * d1, 0.0)};
  };
  double lo = 1e-3 / (n * amax), hi = lo;
  for (int i = 0; i < 200; ++i) {
    hi *= 2.0;
    if (n * lam(hi).d1 * hi > 1.0) break;
  }
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(lo * hi);
    if (n * lam(mid).d1 * mid > 1.0)
      hi = mid;
    else
      lo = mid;
  }
  const double th = std::sqrt(lo * hi);
  const Lam L = lam(th);
  const double out = n * L.lam - 1.0 - std::log(th) - std::log1p(th * std::sqrt(n * L.d2)) - std::log(n * gamma);
  return std::isfinite(out) ? out : -std::numeric_limits<double>::infinity();
}

// Running compensated (Kahan) sum of blocks._log_comb: out[0] = 0, out[j + 1] = the sum after term j.
SHARPDP_NO_FMA inline void kahan_prefix(const double* terms, std::size_t n, double* out) {
  double s = 0.0, c = 0.0;
  out[0] = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    const double y = terms[j] - c;
    const double tt = s + y;
    c = (tt - s) - y;
    s = tt;
    out[j + 1] = s;
  }
}

// Pascal's triangle rows 0..ms (row-major (ms + 1) x (ms + 1), entries above the diagonal 0) as
// blocks._block_weights builds it.
SHARPDP_NO_FMA inline void pascal(std::size_t ms, double* binom) {
  const std::size_t W = ms + 1;
  std::fill(binom, binom + W * W, 0.0);
  for (std::size_t x = 0; x <= ms; ++x) binom[x * W] = 1.0;
  for (std::size_t x = 1; x <= ms; ++x)
    for (std::size_t c = 1; c <= x; ++c) binom[x * W + c] = binom[(x - 1) * W + c] + binom[(x - 1) * W + c - 1];
}

// The multinomial part of the block weights of blocks._block_weights: for each count vector r
// (counts: rows x m, int64, column-major), prob_r = prod_j binom[rest_j, c_j] * pa_j^c_j with
// rest_j = M_r - c_0 - ... - c_{j-1}, the powers by repeated multiplication, in the Python order
// (prob *= binom * pw, one column after another). binom: Pascal's rows 0..ms as from pascal().
SHARPDP_NO_FMA inline void multinomial(const std::int64_t* counts, std::size_t rows, std::size_t m, const double* pa,
                                       std::size_t ms, const double* binom, double* prob) {
  const std::size_t W = ms + 1;
  std::vector<double> pw(m * W);
  for (std::size_t j = 0; j < m; ++j) {
    pw[j * W] = 1.0;
    for (std::size_t c = 1; c <= ms; ++c) pw[j * W + c] = pw[j * W + c - 1] * pa[j];
  }
  for (std::size_t r = 0; r < rows; ++r) {
    std::int64_t rest = 0;
    for (std::size_t j = 0; j < m; ++j) rest += counts[j * rows + r];
    double pr = 1.0;
    for (std::size_t j = 0; j < m; ++j) {
      const std::int64_t c = counts[j * rows + r];
      if (c < 0 || rest < c || static_cast<std::size_t>(rest) > ms)
        throw std::invalid_argument("multinomial: counts must be >= 0 with row sums <= ms");
      pr = pr * (binom[static_cast<std::size_t>(rest) * W + static_cast<std::size_t>(c)] *
                 pw[j * W + static_cast<std::size_t>(c)]);
      rest -= c;
    }
    prob[r] = pr;
  }
}

// numpy's sum of a contiguous float64 array (np.sum / np.add.reduce, numpy 2.x: the identity 0.0 plus the pairwise
// sum of all n terms in one inner loop): below 8 terms a running sum from 0.0, up to 128 eight running sums
// combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) then the rest, above that the two halves (the
// first a multiple of 8 terms). The same operations in the same order, so the same double (checked against numpy
// by tests/test_blk48_block_stats.py; its summation tree has depth <= 25 within 128 terms plus one per
// halving, so its error is at most (26 + log2 n) u (1 + 1e-10) sum|terms|).
// term(i) gives the i-th term (computed on the fly: the same double as an array of the terms would hold).
template <class Term>
SHARPDP_NO_FMA inline double pairwise_sum(const Term& term, std::size_t a, std::size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (std::size_t i = 0; i < n; ++i) res += term(a + i);
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = term(a + j);
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] += term(a + i + j);
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += term(a + i);
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(term, a, n2) + pairwise_sum(term, a + n2, n - n2);
}

template <class Term>
SHARPDP_NO_FMA inline double numpy_sum(const Term& term, std::size_t n) {
  return 0.0 + pairwise_sum(term, 0, n);
}

// The terms of law_stats' and tail_sum's sums (named functors, so that fp-contract=off applies to them too).
struct ProductTerm {
  const double *v, *p;
  SHARPDP_NO_FMA double operator()(std::size_t i) const { return v[i] * p[i]; }
};
struct SquareTerm {
  const double *v, *p;
  double mean;
  SHARPDP_NO_FMA double operator()(std::size_t i) const {
    const double d = v[i] - mean;
    return (d * d) * p[i];
  }
};
struct ArrayTerm {
  const double* a;
  SHARPDP_NO_FMA double operator()(std::size_t i) const { return a[i]; }
};

// What blocks._BlockLaw.__init__ reads of a block law's atoms (v, p): the extremes of all values, those of the
// values of positive probability, sum(v p) (the mean) and sum((v - mean)^2 p), each sum as numpy's. ok is false
// where numpy's expressions must decide: a sum not finite (then some v or p is not finite, or a product
// overflowed), an extreme that is a zero (numpy's min / max may return -0.0 or 0.0), no probability positive.
struct Stats {
  bool ok;
  double vmin, vmax, smin, smax, mean, var_sum;
};

SHARPDP_NO_FMA inline Stats law_stats(const double* v, const double* p, std::size_t n) {
  Stats s{false, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  if (n == 0) return s;
  // (extremes in two interleaved running sets: min and max of finite doubles, zeros aside, are the same double in
  // any order; a NaN is skipped here and caught by the sums)
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double lo0 = kInf, lo1 = kInf, hi0 = -kInf, hi1 = -kInf, slo0 = kInf, slo1 = kInf, shi0 = -kInf, shi1 = -kInf;
  std::size_t i = 0;
  for (; i + 1 < n; i += 2) {
    const double x0 = v[i], x1 = v[i + 1];
    lo0 = x0 < lo0 ? x0 : lo0;
    lo1 = x1 < lo1 ? x1 : lo1;
    hi0 = x0 > hi0 ? x0 : hi0;
    hi1 = x1 > hi1 ? x1 : hi1;
    const double y0 = p[i] > 0.0 ? x0 : kInf, y1 = p[i + 1] > 0.0 ? x1 : kInf;
    const double z0 = p[i] > 0.0 ? x0 : -kInf, z1 = p[i + 1] > 0.0 ? x1 : -kInf;
    slo0 = y0 < slo0 ? y0 : slo0;
    slo1 = y1 < slo1 ? y1 : slo1;
    shi0 = z0 > shi0 ? z0 : shi0;
    shi1 = z1 > shi1 ? z1 : shi1;
  }
  if (i < n) {
    const double x0 = v[i];
    lo0 = x0 < lo0 ? x0 : lo0;
    hi0 = x0 > hi0 ? x0 : hi0;
    if (p[i] > 0.0) {
      slo0 = x0 < slo0 ? x0 : slo0;
      shi0 = x0 > shi0 ? x0 : shi0;
    }
  }
  const double vmin = std::min(lo0, lo1), vmax = std::max(hi0, hi1);
  const double smin = std::min(slo0, slo1), smax = std::max(shi0, shi1);
  if (!(smin <= smax) || vmin == 0.0 || vmax == 0.0 || smin == 0.0 || smax == 0.0) return s;
  const double mean = numpy_sum(ProductTerm{v, p}, n);
  if (!std::isfinite(mean)) return s;  // (finite: every v p finite, so every v and p finite)
  const double var_sum = numpy_sum(SquareTerm{v, p, mean}, n);
  if (!std::isfinite(var_sum)) return s;
  s = {true, vmin, vmax, smin, smax, mean, var_sum};
  return s;
}

// _BlockLaw.tail_upper's sum: sum over the atoms with v > T of (v - T) p, in the atoms' order, as numpy's sum of
// the selected terms (work: room for n doubles).
SHARPDP_NO_FMA inline double tail_sum(const double* v, const double* p, std::size_t n, double T, double* work) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (v[i] > T) work[k++] = (v[i] - T) * p[i];
  return numpy_sum(ArrayTerm{work}, k);
}

}  // namespace blocks
}  // namespace kernels
}  // namespace sharpdp
