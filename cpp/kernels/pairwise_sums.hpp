// Window sums of the far tail's jump term in one pass, with numpy's own summation order (docs/accountant_tail.md §80):
// for weights w and a pmf q on a window of N nodes,
//   s = sum_i fl(w_i q_i),   a = sum_i |fl(w_i q_i)|,   ss = sum_i fl(w_i w_i),
// each sum in the order of numpy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src, `pairwise_sum`:
// below 8 terms a running sum from 0; up to 128 terms 8 running sums of the terms i mod 8, added as
// ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the terms past the last multiple of 8 one by one; above 128
// the first n2 = n/2 - (n/2 mod 8) terms and the rest summed apart and added). np.sum of a contiguous float64 array is
// +0.0 plus that sum over the whole array, so the three values are np.sum(w * q), np.sum(np.abs(w * q)) and np.sum(w * w)
// double for double (every product and sum one IEEE operation, rounded to nearest; no product fused into a sum:
// -ffp-contract=off on the binding's unit, see below). Header-only, Python-free.
#pragma once

#include <cmath>
#include <cstddef>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sharpdp {
namespace kernels {
namespace pairwise {

struct Sums {
  double s;   // sum of w q
  double a;   // sum of |w q|
  double ss;  // sum of w w (0 where not asked for)
};

// (no product fused into a sum: clang by the pragma; GCC by -ffp-contract=off on the binding's translation unit,
// CMakeLists.txt)
#if defined(__clang__)
#define SHARPDP_PW_NOCONTRACT _Pragma("clang fp contract(off)")
#else
#define SHARPDP_PW_NOCONTRACT
#endif

// the three pairwise sums over w[0..n), q[0..n) (ss only where `squares`)
template <bool squares>
inline Sums pairwise_sums(const double* w, const double* q, std::size_t n) {
  SHARPDP_PW_NOCONTRACT
  if (n < 8) {
    double s = 0.0, a = 0.0, ss = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double p = w[i] * q[i];
      s += p;
      a += std::fabs(p);
      if (squares) {
        const double sq = w[i] * w[i];
        ss += sq;
      }
    }
    return {s, a, ss};
  }
  if (n <= 128) {
    double rs[8], ra[8], rq[8];
    std::size_t i = 8;
    const std::size_t m = n - (n % 8);
#if defined(__SSE2__)
    // the 8 running sums in 4 SSE2 lanes of 2 (sum j in lane j: each lane operation is the scalar one on its element)
    const __m128d absmask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
    __m128d S[4], A[4], Q[4];
    for (std::size_t l = 0; l < 4; ++l) {
      const __m128d x = _mm_loadu_pd(w + 2 * l);
      const __m128d p = _mm_mul_pd(x, _mm_loadu_pd(q + 2 * l));
      S[l] = p;
      A[l] = _mm_and_pd(p, absmask);
      Q[l] = squares ? _mm_mul_pd(x, x) : _mm_setzero_pd();
    }
    for (; i < m; i += 8) {
      for (std::size_t l = 0; l < 4; ++l) {
        const __m128d x = _mm_loadu_pd(w + i + 2 * l);
        const __m128d p = _mm_mul_pd(x, _mm_loadu_pd(q + i + 2 * l));
        S[l] = _mm_add_pd(S[l], p);
        A[l] = _mm_add_pd(A[l], _mm_and_pd(p, absmask));
        if (squares) Q[l] = _mm_add_pd(Q[l], _mm_mul_pd(x, x));
      }
    }
    for (std::size_t l = 0; l < 4; ++l) {
      _mm_storeu_pd(rs + 2 * l, S[l]);
      _mm_storeu_pd(ra + 2 * l, A[l]);
      _mm_storeu_pd(rq + 2 * l, Q[l]);
    }
#else
    for (std::size_t j = 0; j < 8; ++j) {
      const double p = w[j] * q[j];
      rs[j] = p;
      ra[j] = std::fabs(p);
      rq[j] = squares ? w[j] * w[j] : 0.0;
    }
    for (; i < m; i += 8) {
      for (std::size_t j = 0; j < 8; ++j) {
        const double p = w[i + j] * q[i + j];
        rs[j] += p;
        ra[j] += std::fabs(p);
        if (squares) {
          const double sq = w[i + j] * w[i + j];
          rq[j] += sq;
        }
      }
    }
#endif
    Sums r{((rs[0] + rs[1]) + (rs[2] + rs[3])) + ((rs[4] + rs[5]) + (rs[6] + rs[7])),
           ((ra[0] + ra[1]) + (ra[2] + ra[3])) + ((ra[4] + ra[5]) + (ra[6] + ra[7])),
           squares ? ((rq[0] + rq[1]) + (rq[2] + rq[3])) + ((rq[4] + rq[5]) + (rq[6] + rq[7])) : 0.0};
    for (; i < n; ++i) {
      const double p = w[i] * q[i];
      r.s += p;
      r.a += std::fabs(p);
      if (squares) {
        const double sq = w[i] * w[i];
        r.ss += sq;
      }
    }
    return r;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  const Sums x = pairwise_sums<squares>(w, q, n2);
  const Sums y = pairwise_sums<squares>(w + n2, q + n2, n - n2);
  return {x.s + y.s, x.a + y.a, x.ss + y.ss};
}

// (s, a, ss) of w, q on n nodes; ss computed only where `squares` (else 0). np.sum adds the pairwise sum to the
// reduction's identity +0.0 (so that a sum of -0.0 terms is +0.0): the same here
inline Sums weighted_sums(const double* w, const double* q, std::size_t n, bool squares) {
  const Sums r = squares ? pairwise_sums<true>(w, q, n) : pairwise_sums<false>(w, q, n);
  return {0.0 + r.s, 0.0 + r.a, 0.0 + r.ss};
}

#undef SHARPDP_PW_NOCONTRACT

}  // namespace pairwise
}  // namespace kernels
}  // namespace sharpdp
