// The accurate DFT of the low frequencies 0..K of a folded pmf y (length N) by blocks of B = 64 nodes with a Taylor
// expansion of the phase inside each block (docs/accountant_tail.md §72.2, Lemma 72.1): O(P nnz + K nb P) work
// (nb = the non-empty blocks, P = 10 terms) instead of the plain accurate DFT's O(K nnz), with a certified bound on
// |z~_k - z_k| (complex modulus, the exact z_k = sum_x y_x e^{-2 pi i k x / N} of the stored doubles). Included by
// accountant.cpp only (compiled with -ffp-contract=off: no product is fused into an addition, every bound below
// counts one rounding per operation).
//
// Block b covers the nodes x = c_b + d, c_b = bB + H (H = B/2 = 32), d in [-32, 31], t = d / 32 in [-1, 1): t^p is
// exact for p <= 9 (d^p < 2^53 and a power-of-2 scale). With alpha = 2 pi k H / N (a = |alpha|),
//   z_k = sum_b e^{-i 2 pi k c_b / N} S_b,   S_b = sum_{p<P} (-i alpha)^p / p! M_{b,p} + R_b,
//   M_{b,p} = sum_{x in b} y_x t^p,          |R_b| <= Y_b a^P / P! / (1 - a / (P + 1))   (|t| <= 1, a < P + 1).
// Rounding (u = 2^-53, every Y below a computed upper value of the stored |y|'s sum):
//  * M~_{b,p}: Sum2 of the products y t^p (one rounding each): |M~ - M| <= u |M~| + u A + gamma_63^2 (1 + u) A
//    (+ the products' underflow, charged in the final 1e-300), A = sum |y| |t|^p <= Y_b; so <= 2.001 u Y_b (1.0001).
//  * alpha~ = fl(fl(2 pi) fl(kH / N)) with relative error <= 3.01 u; w~_p = fl(fl(w~_{p-1} alpha~) / p) within
//    (5.02 p u) w_p (w_p = a^p / p!); T~_p = fl(w~_p M~_p) within w_p dM + (5.03 p + 1.01) u w_p 1.001 Y_b.
//  * S~_r = fl(M~_0 + fl(((T8 - T6) + T4) - T2)), S~_i = fl(fl(((T9 - T7) + T5) - T3) + T1) negated: plain sums of at
//    most 5 terms, gamma_4 sum |T~_p| <= 4.01 u 1.01 (e^a - 1) Y_b, and the last addition u |S~_r|.
//  So |S~_b,r - S_b,r| + |S~_b,i - S_b,i| <= F Y_b with F = 1.01 [2.001 u e^a + u sum_{p>=1} (5.03 p + 1.01) w_p 1.001
//    + 4.01 u 1.01 (e^a - 1) + u e^a 1.01 + a^P / P! / (1 - a / (P + 1))] (e^a bounds sum_p w_p and |S~_b| / Y_b).
//  * The twiddle (cos, sin) of theta_b = 2 pi (m / N), m = k c_b mod N reduced to [0, N/2] (integers, exact): the
//    plain accurate DFT's expression, each component within 14 u (docs/accountant.md §3.6.4).
//  * Re z~ = Sum2 over b of fl(c~ S~_r) and fl(s~ S~_i), Im z~ of fl(c~ S~_i) and -fl(s~ S~_r): per component
//    |err| <= 14 u G + F Y + u (1 + 14 u) G + u |Re z~| + gamma_{2nb}^2 (1 + u)(1 + 14 u) G, G = sum_b (|S~_r| + |S~_i|)
//    (accumulated, rounded up).
// The bound returned: the largest over k of sqrt(err_re^2 + err_im^2) (1.01) + 1e-300 (every underflow: at most
// 4 (nnz + nb P) products, each within 2^-1074).
// Session 48 (docs/accountant_tail.md §75; the same doubles as session 47's one-operation-at-a-time code, so the
// bound above is unchanged): the twiddles from a table of the angles that occur (multiples of gcd(H, N)), each entry
// the direct expression; the frequencies swept kC at a time over the blocks (one division per block and chunk); the
// moments' and the frequencies' Sum2 accumulators, products and short sums in SIMD lanes (GCC / Clang vector types:
// IEEE operations lane by lane, -ffp-contract=off: nothing fused), each lane one accumulator's operations in order.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace sharpdp {
namespace kernels {
namespace dft_taylor {

constexpr double kUt = 1.1102230246251565e-16;  // 2^-53
constexpr int kB = 64, kH = 32, kP = 10;
constexpr int kC = 8;  // frequencies per chunk (one parallel task; a choice of speed only)
constexpr int kL = 2;  // doubles per vector (SSE2's, the baseline x86-64 build's width)
constexpr int kPv = (kP + kL - 1) / kL * kL;  // kP rounded up to whole vectors
#if (defined(__GNUC__) || defined(__clang__)) && !defined(SHARPDP_NO_VECTOR_EXT)
typedef double VL __attribute__((vector_size(8 * kL)));  // GCC / Clang vector: IEEE operations lane by lane
typedef long long VI __attribute__((vector_size(8 * kL)));  // its bits

inline VL absv(const VL x) {  // fabs lane by lane (the sign bit cleared)
  VI bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits &= VI{} + 0x7fffffffffffffffLL;
  VL r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}
#else
// Other compilers (MSVC; or -DSHARPDP_NO_VECTOR_EXT, which tests/test_lead48_dft_portable.py builds to check that it
// gives the same doubles): the lanes as a plain array with the same operations lane by lane
struct VL {
  double v[kL];
  double& operator[](int i) { return v[i]; }
  double operator[](int i) const { return v[i]; }
};
template <class F>
inline VL lanes(F f) {
  VL r;
  for (int i = 0; i < kL; ++i) r.v[i] = f(i);
  return r;
}
inline VL operator+(const VL a, const VL b) { return lanes([&](int i) { return a.v[i] + b.v[i]; }); }
inline VL operator-(const VL a, const VL b) { return lanes([&](int i) { return a.v[i] - b.v[i]; }); }
inline VL operator*(const VL a, const VL b) { return lanes([&](int i) { return a.v[i] * b.v[i]; }); }
inline VL operator+(const VL a, const double b) { return lanes([&](int i) { return a.v[i] + b; }); }
inline VL operator+(const double a, const VL b) { return lanes([&](int i) { return a + b.v[i]; }); }
inline VL operator*(const VL a, const double b) { return lanes([&](int i) { return a.v[i] * b; }); }
inline VL operator-(const VL a) { return lanes([&](int i) { return -a.v[i]; }); }
inline VL& operator+=(VL& a, const VL b) { return a = a + b; }
inline VL absv(const VL x) { return lanes([&](int i) { return std::fabs(x.v[i]); }); }
#endif

// Sum2's add (Ogita, Rump & Oishi 2005; accountant.cpp's Sum2::add) lane by lane: sv the sums, cv their corrections
// (Sum2's get() is sv + cv)
inline void add2(VL& sv, VL& cv, const VL x) {
  const VL t = sv + x;
  const VL zz = t - sv;
  cv += (sv - (t - zz)) + (x - zz);
  sv = t;
}

// z[0..K] and the returned bound e: |z~_k - z_k| <= e for every k <= K (complex modulus). y: N doubles. The sums are
// Ogita, Rump & Oishi's Sum2 (accountant.cpp's Sum2: add(x), get()), here in SIMD lanes (add2 above, the same
// operations); par(nb, body): the caller's parallel loop (the values do not depend on it: each frequency's sums run in
// one order).
template <class Par>
double dft_blocks(const double* y, std::int64_t N, std::int64_t K, std::complex<double>* z, Par&& par) {
  // the non-empty blocks' centres and moments
  std::vector<std::int64_t> cb;
  std::vector<double> mom;  // kP per block
  double ysum = 0;
  // t^p for t = d / H, d = x - c_b in [-H, H): exact (p <= 9: |d|^p <= 2^45 scaled by a power of 2), so tabulated once
  // (padded with zeros to kPv lanes)
  alignas(16) double tpw[kB][kPv] = {};
  for (int d = -kH; d < kH; ++d) {
    const double t = static_cast<double>(d) / static_cast<double>(kH);  // exact
    double tp = 1.0;
    for (int p = 0; p < kP; ++p) {
      tpw[d + kH][p] = tp;
      tp *= t;
    }
  }
  const std::int64_t nbl = (N + kB - 1) / kB;
  for (std::int64_t b = 0; b < nbl; ++b) {
    const std::int64_t x0 = b * kB, x1 = std::min<std::int64_t>(N, x0 + kB), c = x0 + kH;
    std::uint64_t any = 0;  // the OR of the block's bits, sign bits shifted out: 0 iff every y[x] == 0.0 (vectorised)
    for (std::int64_t x = x0; x < x1; ++x) {
      std::uint64_t bits;
      std::memcpy(&bits, y + x, sizeof bits);
      any |= bits << 1;
    }
    if (any == 0) continue;
    // the kP moments' Sum2 accumulators in the lanes of kL-double vectors: each lane's operations and their order are
    // one accumulator's (IEEE lane by lane, nothing fused: the same doubles as one Sum2 per moment)
    VL ms[kPv / kL] = {}, mc[kPv / kL] = {};
    for (std::int64_t x = x0; x < x1; ++x) {
      const double yx = y[x];
      if (yx == 0.0) continue;
      ysum += std::fabs(yx);
      const double* tp = tpw[x - c + kH];
      const VL yv = VL{} + yx;
      for (int q = 0; q < kPv / kL; ++q) {
        VL tq;
        std::memcpy(&tq, tp + kL * q, sizeof tq);
        add2(ms[q], mc[q], yv * tq);
      }
    }
    cb.push_back(c % N);  // (reduced once: the twiddles use c_b mod N)
    for (int p = 0; p < kP; ++p) mom.push_back(ms[p / kL][p % kL] + mc[p / kL][p % kL]);
  }
  const double Y = ysum * (1.0 + static_cast<double>(N) * kUt * 1.01) + 1e-300;  // >= sum |y| (plain sum of N terms)
  const std::size_t nb = cb.size();
  const double nbd = static_cast<double>(nb);
  const double g2 = std::pow(2.0 * nbd * kUt / (1.0 - 2.0 * nbd * kUt), 2);  // gamma_{2 nb}^2
  std::vector<double> errk(static_cast<std::size_t>(K + 1), 0.0);
  const double Nd = static_cast<double>(N);
  // The blocks' twiddles from a table of the angles that occur (docs/accountant_tail.md §75.1; the same doubles):
  // every reduced index m is a multiple of g = gcd(kH, N) (kH | c_b and g | N), so where the frequencies' blocks need
  // more than the N / (2g) + 1 angles, they are tabulated once, each entry the direct expression of its m.
  const std::int64_t g = std::gcd(static_cast<std::int64_t>(kH), N);  // a power of 2
  int gsh = 0;
  while ((std::int64_t{1} << gsh) < g) ++gsh;
  const std::int64_t ntab = N / (2 * g) + 1;
  std::vector<double> tab;  // tab[2j] = cos, tab[2j + 1] = sin of 2 pi ((g j) / N); empty: each twiddle directly
  if (static_cast<double>(K + 1) * nbd > static_cast<double>(ntab)) {
    tab.resize(2 * static_cast<std::size_t>(ntab));
    const std::size_t ntb = static_cast<std::size_t>((ntab + 4095) / 4096);
    par(ntb, [&](std::size_t tb) {
      const std::int64_t j0 = static_cast<std::int64_t>(tb) * 4096, j1 = std::min<std::int64_t>(ntab, j0 + 4096);
      for (std::int64_t j = j0; j < j1; ++j) {
        const double ang = 2.0 * M_PI * (static_cast<double>(g * j) / Nd);
        tab[2 * static_cast<std::size_t>(j)] = std::cos(ang);
        tab[2 * static_cast<std::size_t>(j) + 1] = std::sin(ang);
      }
    });
  }
  const std::size_t nchunk = static_cast<std::size_t>((K + 1 + kC - 1) / kC);
  par(nchunk, [&](std::size_t ch) {
    // kC consecutive frequencies per chunk, swept together over the blocks (each frequency's sums in block order, as
    // one at a time: the same doubles; one division per block for the reduced indices, then a step of c_b per k)
    const std::int64_t k0 = static_cast<std::int64_t>(ch) * kC, k1 = std::min<std::int64_t>(K + 1, k0 + kC);
    double w[kC][kP], F[kC];
    int nk = 0;  // the chunk's frequencies with a < (P + 1) / 2, a prefix (a grows with k)
    for (std::int64_t k = k0; k < k1; ++k, ++nk) {
      const double al = (2.0 * M_PI) * (static_cast<double>(k * kH) / Nd);
      double* wk = w[nk];
      wk[0] = 1.0;
      for (int p = 1; p < kP; ++p) wk[p] = (wk[p - 1] * al) / static_cast<double>(p);
      // F (in the header's notation), every term a positive double, with a 1.01 margin
      const double a = std::fabs(al) * (1.0 + 8.0 * kUt);  // >= the exact alpha (al within 3.01 u)
      const double ea = std::exp(a) * (1.0 + 4.0 * kUt);
      double wa = 1.0, sw = 0.0;
      for (int p = 1; p < kP; ++p) {
        wa = wa * a / p * (1.0 + 3.0 * kUt);  // >= a^p / p!
        sw += (5.03 * p + 1.01) * wa;
      }
      double trunc = 1.0;
      for (int p = 1; p <= kP; ++p) trunc = trunc * a / p;
      if (!(a < 0.5 * (kP + 1))) break;  // (not reached at the callers' frequencies; flagged by errk = inf below)
      trunc = trunc / (1.0 - a / (kP + 1)) * 1.01;
      F[nk] = 1.01 * (2.001 * 1.0001 * kUt * ea + kUt * sw * 1.001 + 4.01 * kUt * 1.01 * (ea - 1.0) +
                      kUt * ea * 1.01 + trunc);
    }
    for (std::int64_t k = k0 + nk; k < k1; ++k) z[k] = {std::nan(""), std::nan("")};  // (e = inf: not read)
    if (nk == 0) return;
    // The chunk's kC frequencies in the lanes of kC / kL vectors: lane j's operations and their order are frequency
    // k0 + j's own (products, the short sums, fabs, Sum2's add: IEEE lane by lane, nothing fused), so the same doubles
    // as one frequency at a time; lanes past nk compute with w = 0 and are not read.
    constexpr int nq = kC / kL;
    VL wv[kP][nq] = {}, Gv[nq] = {}, rs[nq] = {}, rc[nq] = {}, is[nq] = {}, ic[nq] = {};
    for (int j = 0; j < nk; ++j)
      for (int p = 0; p < kP; ++p) wv[p][j / kL][j % kL] = w[j][p];
    alignas(16) double csj[kC], snj[kC];
    for (std::size_t b = 0; b < nb; ++b) {
      const double* M = &mom[b * kP];
      const std::int64_t c = cb[b];
      std::int64_t mk = c * k0 % N;  // c_b k mod N at k = k0 (c_b, k < N <= 2^31: no overflow)
      for (int j = 0; j < nk; ++j) {
        // twiddle of theta = 2 pi k c_b / N: e^{-i theta} = cos - i sin
        std::int64_t m = mk;
        mk += c;  // the next frequency's index
        if (mk >= N) mk -= N;
        double sg = 1.0;  // sin theta = sg sin(2 pi (m' / N)), m' the reduced index
        if (2 * m > N) {
          m = N - m;
          sg = -1.0;
        }
        if (!tab.empty()) {
          const std::size_t jt = static_cast<std::size_t>(m >> gsh);  // m / g
          csj[j] = tab[2 * jt];
          snj[j] = sg * tab[2 * jt + 1];
        } else {
          const double ang = 2.0 * M_PI * (static_cast<double>(m) / Nd);
          csj[j] = std::cos(ang);
          snj[j] = sg * std::sin(ang);
        }
      }
      for (int j = nk; j < kC; ++j) csj[j] = snj[j] = 0.0;
      for (int q = 0; q < nq; ++q) {
        const VL T1 = wv[1][q] * M[1], T2 = wv[2][q] * M[2], T3 = wv[3][q] * M[3], T4 = wv[4][q] * M[4];
        const VL T5 = wv[5][q] * M[5], T6 = wv[6][q] * M[6], T7 = wv[7][q] * M[7], T8 = wv[8][q] * M[8];
        const VL T9 = wv[9][q] * M[9];
        const VL sr = M[0] + (((T8 - T6) + T4) - T2);
        const VL si = -((((T9 - T7) + T5) - T3) + T1);
        Gv[q] += absv(sr) + absv(si);
        VL cs, sn;
        std::memcpy(&cs, csj + kL * q, sizeof cs);
        std::memcpy(&sn, snj + kL * q, sizeof sn);
        // (cs - i sn)(sr + i si) = cs sr + sn si + i (cs si - sn sr)
        add2(rs[q], rc[q], cs * sr);
        add2(rs[q], rc[q], sn * si);
        add2(is[q], ic[q], cs * si);
        add2(is[q], ic[q], -(sn * sr));
      }
    }
    for (int j = 0; j < nk; ++j) {
      const int q = j / kL, l = j % kL;
      const double zr = rs[q][l] + rc[q][l], zi = is[q][l] + ic[q][l];  // Sum2's get()
      z[k0 + j] = {zr, zi};
      const double Gu = Gv[q][l] * (1.0 + 1.01 * nbd * kUt);
      const double base = (15.0 * kUt * (1.0 + 14.0 * kUt) + g2 * 1.01) * Gu + F[j] * Y;
      const double er = base + kUt * std::fabs(zr), ei = base + kUt * std::fabs(zi);
      // sqrt(er^2 + ei^2) where the squares are not subnormal (the sum >= 2^-968: each square's rounding within 2^-1075
      // absolute, ~2^-107 of the sum); er + ei (>= the modulus, exactly) below, where a square would round into the
      // subnormals (rev48c: a bound below its scaled value) or to 0 (a refusal): docs/accountant_tail.md §75.6
      const double s2 = er * er + ei * ei;
      errk[static_cast<std::size_t>(k0 + j)] = (s2 >= 0x1p-968 ? std::sqrt(s2) : er + ei) * 1.01;
    }
  });
  double e = 0.0;
  for (std::int64_t k = 0; k <= K; ++k) {
    const double ek = errk[static_cast<std::size_t>(k)];
    if (!(ek > 0.0)) return std::numeric_limits<double>::infinity();
    e = std::max(e, ek);
  }
  return e + 1e-300;
}

}  // namespace dft_taylor
}  // namespace kernels
}  // namespace sharpdp
