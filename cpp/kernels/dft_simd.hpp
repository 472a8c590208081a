// The power step's accurate DFT (docs/accountant.md §3.6.4) vectorised ACROSS frequencies with AVX2, chosen at run
// time (docs/accountant_tail.md §67.1). Included by accountant.cpp only, which CMakeLists.txt compiles with
// -ffp-contract=off; power() calls dft_lanes and finishes each frequency with dft_put (its value s + c and bound).
//
// Each lane is one frequency and runs exactly the scalar dft_accurate's operations on the same doubles in the same
// order: the twiddle index m0 = r_j k mod N advanced by k or formed anew (integers, exact), reduced to [0, N/2] with
// the sign sg; the twiddle (cos, sin) read from the same table; the products y_j cs and (sg y_j) sn; the two Sum2
// additions t = s + x, z = t - s, c = c + ((s - (t - z)) + (x - z)), s = t. IEEE-754 addition, subtraction and
// multiplication of doubles give the same result in a vector lane as in a scalar register (round to nearest, no
// extended precision on x86-64; the target is "avx2" without "fma" and the file is compiled with
// -ffp-contract=off, so no product is fused into an addition), so every frequency's (s, c) pair, hence its value and
// bound, is the same double as the scalar code's: the DFT's floats do not depend on the machine or on this path.
// The plain path stays (and runs) on every other CPU and compiler.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SHARPDP_NO_SIMD)
#define SHARPDP_DFT_AVX2 1
#include <immintrin.h>
#endif

namespace sharpdp {
namespace kernels {
namespace dft_simd {

// 1: use the AVX2 path where the CPU has it; 0: the plain path always (tests compare the two: set_enabled).
inline std::atomic<int>& enabled_flag() {
  static std::atomic<int> flag{1};
  return flag;
}

// Whether this CPU (and its OS: libgcc's check includes XCR0's YMM state) runs AVX2 code and the build has the path.
inline bool cpu_has_avx2() {
#ifdef SHARPDP_DFT_AVX2
  static const bool ok = __builtin_cpu_supports("avx2") != 0;
  return ok;
#else
  return false;
#endif
}

inline bool active() { return enabled_flag().load(std::memory_order_relaxed) != 0 && cpu_has_avx2(); }

#ifdef SHARPDP_DFT_AVX2
// V vectors of 4 frequencies ks[0 .. 4V) over the nonzeros (r_j, y_j), j < nnz, with the interleaved twiddle table
// tab (tab[2m] = cos, tab[2m + 1] = sin of 2 pi (m / N), m in [0, N/2]). Writes each frequency's Sum2 pairs:
// out[4 f + 0, 1] = (s, c) of the real part, out[4 f + 2, 3] = (s, c) of the imaginary part.
template <int V>
__attribute__((target("avx2"))) void dft_lanes(const std::int64_t* r, const double* y, std::size_t nnz,
                                                const std::int64_t* ks, std::int64_t N, const double* tab,
                                                double* out) {
  __m256d rs[V], rc[V], is[V], ic[V];
  __m256i m0[V], kv[V];
  const __m256i Nv = _mm256_set1_epi64x(N), Nm1 = _mm256_set1_epi64x(N - 1);
  const __m256d neg1 = _mm256_set1_pd(-1.0), pos1 = _mm256_set1_pd(1.0);
  for (int v = 0; v < V; ++v) {
    rs[v] = rc[v] = is[v] = ic[v] = _mm256_setzero_pd();
    m0[v] = _mm256_setzero_si256();
    kv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ks + 4 * v));
  }
  alignas(32) std::int64_t mm[4 * V];
  std::int64_t rprev = -2;
  for (std::size_t j = 0; j < nnz; ++j) {
    const std::int64_t rj = r[j];
    const bool step = rj == rprev + 1;
    rprev = rj;
    const __m256d yv = _mm256_set1_pd(y[j]);
    __m256d sgv[V];
    for (int v = 0; v < V; ++v) {
      __m256i m;
      if (step) {  // m0 += k; if (m0 >= N) m0 -= N
        m = _mm256_add_epi64(m0[v], kv[v]);
        m = _mm256_sub_epi64(m, _mm256_and_si256(_mm256_cmpgt_epi64(m, Nm1), Nv));
      } else {  // m0 = (r_j k) % N (r, k < N <= 2^26: no overflow)
        alignas(32) std::int64_t t[4];
        for (int b = 0; b < 4; ++b) t[b] = (rj * ks[4 * v + b]) % N;
        m = _mm256_load_si256(reinterpret_cast<const __m256i*>(t));
      }
      m0[v] = m;
      // if (2 m > N) { m = N - m; sg = 1 } else sg = -1
      const __m256i refl = _mm256_cmpgt_epi64(_mm256_add_epi64(m, m), Nv);
      const __m256i mr = _mm256_blendv_epi8(m, _mm256_sub_epi64(Nv, m), refl);
      sgv[v] = _mm256_blendv_pd(neg1, pos1, _mm256_castsi256_pd(refl));
      _mm256_store_si256(reinterpret_cast<__m256i*>(mm + 4 * v), mr);
    }
    for (int v = 0; v < V; ++v) {
      // the four (cos, sin) pairs: a = (c0, s0, c2, s2), b = (c1, s1, c3, s3)
      const std::int64_t* q = mm + 4 * v;
      const __m256d a = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(tab + 2 * q[0])),
                                             _mm_loadu_pd(tab + 2 * q[2]), 1);
      const __m256d b = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(tab + 2 * q[1])),
                                             _mm_loadu_pd(tab + 2 * q[3]), 1);
      const __m256d cs = _mm256_unpacklo_pd(a, b), sn = _mm256_unpackhi_pd(a, b);
      // re: Sum2 add of y_j cs
      {
        const __m256d x = _mm256_mul_pd(yv, cs);
        const __m256d t = _mm256_add_pd(rs[v], x);
        const __m256d z = _mm256_sub_pd(t, rs[v]);
        const __m256d e = _mm256_add_pd(_mm256_sub_pd(rs[v], _mm256_sub_pd(t, z)), _mm256_sub_pd(x, z));
        rc[v] = _mm256_add_pd(rc[v], e);
        rs[v] = t;
      }
      // im: Sum2 add of (sg y_j) sn
      {
        const __m256d x = _mm256_mul_pd(_mm256_mul_pd(sgv[v], yv), sn);
        const __m256d t = _mm256_add_pd(is[v], x);
        const __m256d z = _mm256_sub_pd(t, is[v]);
        const __m256d e = _mm256_add_pd(_mm256_sub_pd(is[v], _mm256_sub_pd(t, z)), _mm256_sub_pd(x, z));
        ic[v] = _mm256_add_pd(ic[v], e);
        is[v] = t;
      }
    }
  }
  for (int v = 0; v < V; ++v) {
    alignas(32) double a[4], b[4], c[4], d[4];
    _mm256_store_pd(a, rs[v]);
    _mm256_store_pd(b, rc[v]);
    _mm256_store_pd(c, is[v]);
    _mm256_store_pd(d, ic[v]);
    for (int l = 0; l < 4; ++l) {
      double* o = out + 4 * (4 * v + l);
      o[0] = a[l];
      o[1] = b[l];
      o[2] = c[l];
      o[3] = d[l];
    }
  }
}
#endif

}  // namespace dft_simd
}  // namespace kernels
}  // namespace sharpdp
