// Certified blanket divergence of a two-atom law in O(sqrt n) work (docs/accountant_atoms.md §12).
//
// L in {a1, a2}, a1 < 0 < a2, P(L = a2) = p2 (P(L = a1) = 1 - p2 exactly), B_i ~ Bern(gamma):
//   D_up = E[(sum_{i<=n} B_i L_i)_+] / (n gamma)
//        = (a2 - a1)/(n gamma) sum_M P(N = M) G(M, M beta),  N ~ Bin(n, gamma), beta = -a1/(a2 - a1),
//   G(M, t) = E[(c_M - t)_+], c_M ~ Bin(M, p2).
// Every quantity is carried as an interval [lo, hi] rounded outwards after each operation (§12.3),
// so the returned bracket holds whatever the accumulated rounding; the truncations of N and c are
// charged on the upper end (§12.4). Header-only, plain numbers in, a named struct out; errors are
// std::invalid_argument naming the parameter.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "exact_krr.hpp"

namespace sharpdp {
namespace kernels {
namespace two_atom {

constexpr double kU = 1.1102230246251565e-16;  // 2^-53
constexpr double kTiny = 2.0 * 4.9406564584124654e-324;  // two subnormal quanta

// Outward rounding of one computed result z >= 0 of a single correctly rounded operation (§12.3):
// |z - exact| <= ulp(z)/2 (subnormal: half a quantum); the exact z (1 + 2u) = z + m ulp(z) (z = m 2^e,
// 1 <= m < 2) is at least the double z + ulp(z), so its rounding is too, and z (1 - 2u) = z - m ulp(z)
// rounds to at most z - ulp(z) (exactly representable); two subnormal quanta cover the subnormal range.
// (Used on z >= 0 only; a negative z in dn, where the exact value is known to be >= 0, ends at 0 by the
// caller's max.)
inline double up(double z) { return z * (1.0 + 2.0 * kU) + kTiny; }
inline double dn(double z) { return z * (1.0 - 2.0 * kU) - kTiny; }

struct Iv {
  double lo, hi;
};
inline Iv exact(double x) { return {x, x}; }
// non-negative intervals (lo clamped at 0 where the exact value is known to be >= 0)
inline Iv add(Iv a, Iv b) { return {std::max(0.0, dn(a.lo + b.lo)), up(a.hi + b.hi)}; }
inline Iv mul(Iv a, Iv b) { return {std::max(0.0, dn(a.lo * b.lo)), up(a.hi * b.hi)}; }
inline Iv mulc(Iv a, double c) { return {std::max(0.0, dn(a.lo * c)), up(a.hi * c)}; }  // c >= 0 exact
// a - b of two non-negative quantities whose exact difference is >= 0
inline Iv sub_nn(Iv a, Iv b) { return {std::max(0.0, dn(a.lo - b.hi)), std::max(0.0, up(a.hi - b.lo))}; }
inline Iv div(Iv a, Iv b) { return {std::max(0.0, dn(a.lo / b.hi)), up(a.hi / b.lo)}; }
// the quotient x/y of two exact non-negative integers below 2^53 (one rounding)
inline Iv ratio(double x, double y) { const double q = x / y; return {std::max(0.0, dn(q)), up(q)}; }
// (a subnormal result of ldexp is rounded to nearest: the lower end moves down by a quantum, the upper up)
inline Iv scale2(Iv a, int e) {
  return {std::max(0.0, std::ldexp(a.lo, e) - (e < 0 ? kTiny : 0.0)), std::ldexp(a.hi, e) + (e < 0 ? kTiny : 0.0)};
}

struct Result {
  double lower, upper;      // lower <= D_up <= upper
  double charge;            // truncation charge included in upper (D units)
  std::int64_t m_lo, m_hi;  // window of the number of active users
  std::int64_t c_terms;     // terms of the start sum at m_lo
  bool ok;                  // false: the start sum would need an unbounded walk (caller falls back)
};

// Chernoff tail level (nats) of every window: its left-out mass is <= 2 e^-(nats + 1) (exact_krr §4.1)
constexpr double kNormNats = 36.0;
// factor e^1e-4 on every left-out mass: the edges' tail exponent in doubles is off by up to ~4e-5 nats at
// n ~ 1e9-1e12 (cancellation), which the edges' extra nat does not cover since the charges use e^-(nats + 1)
// itself (§12.4)
constexpr double kEdgeMargin = 1.0002;  // >= e^1e-4 = 1.000100005...

// State of c_M ~ Bin(M, p2) at the threshold k: P = P(c = k), T = P(c > k), G = E[(c - k)_+] (§12.2)
struct State {
  std::int64_t k;
  Iv P, T, G;
};

// Start state at M >= 1, threshold k in [0, M - 1] (§12.2, start): the pmf of Bin(M, p2) from its
// mode by ratio products, normalised by the window sum (true sum within a factor 1/(1 - t)), the sums
// G, T over c > k until the geometric remainder bound (ratios decrease in c) is below 2^-64 of them.
inline bool start_state(std::int64_t M, std::int64_t k, double p2, double q2, Iv rho, State& s,
                        std::int64_t& terms) {
  std::int64_t lc, hc;
  exact_krr::chernoff_edges(M, p2, q2, kNormNats, lc, hc);
  const double t = 2.0 * std::exp(-(kNormNats + 1.0)) * kEdgeMargin;
  const double md = static_cast<double>(M);
  std::int64_t mode = static_cast<std::int64_t>(std::floor((md + 1.0) * p2));
  mode = std::min(std::max(mode, lc), hc);
  const std::int64_t a = std::min(lc, k);  // lowest entry needed
  if (mode - a > 8 * (hc - lc + 1) + 1000) return false;
  // weights w(c) relative to w(mode) = 1, downward then upward; the sum S over every computed entry
  Iv S = exact(1.0), Pk = exact(mode == k ? 1.0 : 0.0);
  Iv G = exact(0.0), T = exact(0.0);
  if (mode > k) {  // entries above k from the mode count in G and T
    T = exact(1.0);
    G = exact(static_cast<double>(mode - k));
  }
  Iv rinv = div(exact(1.0), rho);
  Iv w = exact(1.0);
  for (std::int64_t c = mode; c > a; --c) {  // w(c - 1) = w(c) c / (M - c + 1) / rho
    w = mul(mul(w, ratio(static_cast<double>(c), md - static_cast<double>(c) + 1.0)), rinv);
    const std::int64_t cc = c - 1;
    if (cc >= lc) S = add(S, w);
    if (cc == k) Pk = w;
    if (cc > k) {
      T = add(T, w);
      G = add(G, mulc(w, static_cast<double>(cc - k)));
    }
  }
  w = exact(1.0);
  terms = 0;
  for (std::int64_t c = mode; c < M; ++c) {  // w(c + 1) = w(c) (M - c)/(c + 1) rho
    const std::int64_t cc = c + 1;
    Iv r = mul(ratio(md - static_cast<double>(c), static_cast<double>(cc)), rho);
    w = mul(w, r);
    ++terms;
    if (cc <= hc) S = add(S, w);
    if (cc == k) Pk = w;
    if (cc > k) {
      T = add(T, w);
      G = add(G, mulc(w, static_cast<double>(cc - k)));
    }
    if (cc > hc && (cc > k + 1 || w.hi < 0x1p-1000)) {
      // remainder beyond cc: the ratio r at cc bounds every later one (decreasing in c), so
      // sum_{c > cc} (c - k)_+ w(c) <= w(cc) ((cc - k)_+ r/(1 - r) + r/(1 - r)^2), sum_{c > cc} w(c) <= w(cc) r/(1 - r);
      // stopped once below 2^-64 of G, or below 2^-1000 absolute (a start below 2^-1000: D_up far below
      // the value floor; then P(c = k) <= w(cc) too where k > cc, the pmf decreasing there)
      const Iv rn = mul(ratio(md - static_cast<double>(cc), static_cast<double>(cc + 1)), rho);
      if (rn.hi < 1.0) {
        const double om = dn(1.0 - rn.hi);  // <= 1 - r
        const double g1 = up(up(rn.hi / om) / om);                               // >= r/(1 - r)^2
        const double t1 = up(rn.hi / om);                                         // >= r/(1 - r)
        const double ex = static_cast<double>(std::max<std::int64_t>(cc - k, 0));
        const double gr = up(w.hi * up(up(ex * t1) + g1));
        const double tr = up(w.hi * t1);
        if (gr <= 0x1p-64 * G.lo || gr < 0x1p-1000) {
          G.hi = up(G.hi + gr);
          T.hi = up(T.hi + tr);
          if (cc < k) Pk = {0.0, w.hi};
          break;
        }
      }
    }
    if (terms > 64 * (hc - lc + 1) + 100000) return false;
  }
  // normalisation: Z in [S.lo, S.hi / (1 - t)]
  const Iv Z = {S.lo, up(S.hi / dn(1.0 - t))};
  s.k = k;
  s.P = div(Pk, Z);
  s.T = div(T, Z);
  s.G = div(G, Z);
  return true;
}

// Fresh tail sums of c ~ Bin(m, p2) above k (§12.3, deep tails): T = P(c > k), G = E[(c - k)_+] from
// P1 = P(c = k) by the pmf ratios r_j = P(c = j + 1)/P(c = j) = (m - j)/(j + 1) rho, decreasing in j,
// until the geometric remainder bound (ratio r_j) is below 2^-60 of the sums or 2^-1000 absolute (used
// where r_k <= 1/2: a few dozen terms, each with a relative error, where the subtractions of the k step
// would carry a constant absolute error into values that decay geometrically).
inline void fresh_tail(std::int64_t m, std::int64_t k, Iv P1, Iv rho, Iv& T, Iv& G) {
  const double md = static_cast<double>(m);
  T = exact(0.0);
  G = exact(0.0);
  Iv w = P1;
  for (std::int64_t j = k; j < m; ++j) {
    const double jd = static_cast<double>(j);
    w = mul(mul(w, ratio(md - jd, jd + 1.0)), rho);  // P(c = j + 1)
    T = add(T, w);
    G = add(G, mulc(w, static_cast<double>(j + 1 - k)));
    if (j + 1 < m) {
      const Iv rn = mul(ratio(md - jd - 1.0, jd + 2.0), rho);  // bounds every later ratio
      if (rn.hi < 1.0) {
        const double om = dn(1.0 - rn.hi);
        const double t1 = up(rn.hi / om), g1 = up(up(rn.hi / om) / om);
        const double ex = static_cast<double>(j + 1 - k);
        const double gr = up(w.hi * up(up(ex * t1) + g1)), tr = up(w.hi * t1);
        if ((gr <= 0x1p-60 * G.lo && tr <= 0x1p-60 * T.lo) || gr < 0x1p-1000) {
          G.hi = up(G.hi + gr);
          T.hi = up(T.hi + tr);
          return;
        }
      }
    }
  }
}

// D_up of the two-atom law (a1, a2; p2) with blanket mass gamma and n users (§12).
inline Result bracket(double a1, double a2, double p2, double gamma, std::int64_t n) {
  if (!(std::isfinite(a1) && a1 < 0.0)) throw std::invalid_argument("a1: must be finite and < 0, got " + std::to_string(a1));
  if (!(std::isfinite(a2) && a2 > 0.0)) throw std::invalid_argument("a2: must be finite and > 0, got " + std::to_string(a2));
  if (!(p2 > 0.0 && p2 < 1.0)) throw std::invalid_argument("p2: must be in (0, 1), got " + std::to_string(p2));
  if (!(gamma > 0.0 && gamma <= 1.0)) throw std::invalid_argument("gamma: must be in (0, 1], got " + std::to_string(gamma));
  if (n < 1 || n > (std::int64_t{1} << 40)) throw std::invalid_argument("n: must be in [1, 2^40], got " + std::to_string(n));
  Result res{0.0, 0.0, 0.0, 0, 0, 0, true};
  const double nd = static_cast<double>(n);
  // q2 = 1 - p2 and 1 - gamma: one rounding each
  const double q2d = 1.0 - p2;
  const Iv q2 = {dn(q2d), up(q2d)};
  const Iv rho = div(exact(p2), q2);  // p2 / q2
  // beta = -a1/(a2 - a1): d = a2 - a1 (one rounding), beta = -a1/d (one more)
  const double dd = a2 - a1;
  const Iv d = {dn(dd), up(dd)};
  const Iv beta = div(exact(-a1), d);
  // the window of M: the normalisation window of Bin(n, gamma) and, for E[L] < 0, the window of the
  // tilted law N'' ~ Bin(n, gamma phi/(1 - gamma + gamma phi)) that carries E[S_+; N = M] (§12.4)
  std::int64_t lo, hi;
  double charge = 0.0;
  const double tN = gamma == 1.0 ? 0.0 : 2.0 * std::exp(-(kNormNats + 1.0)) * kEdgeMargin;
  if (gamma == 1.0) {
    lo = hi = n;
  } else {
    exact_krr::chernoff_edges(n, gamma, 1.0 - gamma, kNormNats, lo, hi);
    const double mean_l = p2 * a2 + (1.0 - p2) * a1;
    const double th = std::log((-(1.0 - p2) * a1) / (p2 * a2)) / dd;  // argmin of phi (any theta > 0 is valid)
    double phi = 2.0;
    if (mean_l < 0.0 && th > 0.0 && std::isfinite(th)) {
      // phi(th) = (1 - p2) e^{th a1} + p2 e^{th a2}, rounded up: two exp calls (4 ulp each), three roundings
      // (the products th * a rounded before exp: a relative error |th a| u in each exponential, so the margin
      // grows with them; below phi < 1 the exponents are at most ~log(1/p2))
      const double ea = std::fabs(th * a1) + std::fabs(th * a2);
      phi = ((1.0 - p2) * std::exp(th * a1) + p2 * std::exp(th * a2)) * (1.0 + (64.0 + 4.0 * ea) * kU);
    }
    if (phi < 1.0) {
      // E[S_+ | M] <= phi^M / (e th) (x_+ <= e^{th x}/(e th)); sum over M outside W of P(N = M) phi^M
      // = (1 - gamma + gamma phi)^n P(N'' outside W) (§12.4)
      const double g2 = gamma * phi / (1.0 - gamma + gamma * phi);
      const double lvl = kNormNats + 0.5 * std::log(nd + 1.0);
      std::int64_t l2, h2;
      exact_krr::chernoff_edges(n, g2, 1.0 - g2, lvl, l2, h2);
      lo = std::min(lo, l2);
      hi = std::max(hi, h2);
      const double lf = nd * std::log1p(gamma * (phi - 1.0));  // log (1 - gamma + gamma phi)^n <= 0
      // the same bound over every M: D_up <= (1 - gamma + gamma phi)^n / (e th n gamma); far below the
      // double range's useful part (2^-996), it is the answer (lower 0) without the sum (§12.4)
      const double whole = std::exp(lf * (1.0 - 1e-9) + 1e-9) / (std::exp(1.0) * th) / (nd * gamma) * (1.0 + 1e-6);
      if (whole < 0x1p-996) {
        res.upper = up(whole);
        res.charge = res.upper;
        res.m_lo = res.m_hi = 0;
        return res;
      }
      const double t2 = 2.0 * std::exp(-(lvl + 1.0)) * kEdgeMargin;
      charge = std::exp(lf * (1.0 - 1e-9) + 1e-9) * t2 / (std::exp(1.0) * th) / (nd * gamma) * (1.0 + 1e-6);
    } else {
      // E[S_+ | M] <= M p2 a2 <= n p2 a2: the mass outside W times that
      charge = tN * p2 * a2 / gamma * (1.0 + 1e-6);
    }
  }
  res.m_lo = lo;
  res.m_hi = hi;
  // t(M) bracket: [tl, th] contains M beta
  auto t_lo = [&](std::int64_t M) { return std::max(0.0, dn(static_cast<double>(M) * beta.lo)); };
  auto t_hi = [&](std::int64_t M) { return up(static_cast<double>(M) * beta.hi); };
  // start state at M = lo
  State s{0, exact(1.0), exact(0.0), exact(0.0)};  // M = 0: c = 0, k = 0
  std::int64_t M = lo;
  if (M >= 1) {
    std::int64_t k0 = static_cast<std::int64_t>(std::floor(t_lo(M)));
    k0 = std::min(std::max(k0, std::int64_t{0}), M);
    if (k0 == M) {  // t >= M: G = 0 for every c (beta >= 1 cannot happen for a1 < 0 < a2, but rounding)
      k0 = M - 1;
    }
    if (!start_state(M, k0, p2, q2.lo, rho, s, res.c_terms)) {
      res.ok = false;
      return res;
    }
  }
  // the pmf of N by ratio products from w(lo) = 1 (normalised at the end), rescaled by 2^-900 when large
  const Iv rg = gamma == 1.0 ? exact(1.0) : div(exact(gamma), Iv{dn(1.0 - gamma), up(1.0 - gamma)});
  Iv w = exact(1.0), Sw = exact(0.0), acc = exact(0.0);
  for (;; ++M) {
    // contribution of M: w_M [G(M, t_hi), G(M, t_lo)] (G convex decreasing in t, slope -T_k on [k, k + 1))
    const double tl = t_lo(M), thv = t_hi(M);
    const double f = tl - static_cast<double>(s.k);  // exact (Sterbenz, or k = 0), in [0, 1)
    const double fh = up(thv - static_cast<double>(s.k));
    const Iv Gt = {std::max(0.0, dn(s.G.lo - up(fh * s.T.hi))), std::max(0.0, up(s.G.hi - dn(f * s.T.lo)))};
    if (M >= lo && M <= hi) {
      Sw = add(Sw, w);
      acc = add(acc, mul(w, Gt));
    }
    if (M >= hi) break;
    // step M -> M + 1 at the same k (§12.2): T += p2 P, G += p2 (T + P), P *= (M + 1) q2/(M + 1 - k)
    const double m1 = static_cast<double>(M + 1);
    const Iv PT = add(s.P, s.T);
    s.G = add(s.G, mulc(PT, p2));
    s.T = add(s.T, mulc(s.P, p2));
    s.P = mul(mul(s.P, ratio(m1, m1 - static_cast<double>(s.k))), q2);
    // pmf of N: w *= (n - M)/(M + 1) gamma/(1 - gamma)
    w = mul(mul(w, ratio(nd - static_cast<double>(M), m1)), rg);
    if (w.hi > 0x1p900) {
      w = scale2(w, -900);
      Sw = scale2(Sw, -900);
      acc = scale2(acc, -900);
    }
    // advance k while k + 1 <= t_lo(M + 1): P(k+1) = P(k) (M+1-k)/(k+1) rho, G(k+1) = G - T, T(k+1) = T - P(k+1)
    const double tn = t_lo(M + 1);
    while (static_cast<double>(s.k + 1) <= tn && s.k + 1 < M + 1) {
      const double kd = static_cast<double>(s.k);
      s.P = mul(mul(s.P, ratio(m1 - kd, kd + 1.0)), rho);
      ++s.k;
      const Iv rk = mul(ratio(m1 - kd - 1.0, kd + 2.0), rho);  // P(k + 2)/P(k + 1) at M + 1
      // fresh sums where the subtraction would lose (r <= 1/2), and also up to r <= 0.9 once G's interval has
      // widened (the subtraction carries G's absolute error into values that decay: §12.2); not up to r < 1,
      // where the fresh sums would cost O(sqrt M) per step
      if (rk.hi <= 0.5 || (rk.hi <= 0.9 && s.G.hi - s.G.lo > 0x1p-36 * s.G.lo)) {
        fresh_tail(M + 1, s.k, s.P, rho, s.T, s.G);
      } else {
        s.G = sub_nn(s.G, s.T);
        s.T = sub_nn(s.T, s.P);
      }
    }
  }
  // D = d acc / (n gamma Z), Z in [Sw, Sw/(1 - tN)] (the window holds the normalisation window)
  const Iv ng = {dn(nd * gamma), up(nd * gamma)};
  const Iv Z = {Sw.lo, up(Sw.hi / dn(1.0 - tN))};
  const Iv D = div(mul(d, acc), mul(ng, Z));
  res.lower = std::isfinite(D.lo) ? D.lo : 0.0;  // (atoms near the double range's top: a2 - a1 overflows)
  res.charge = charge;
  res.upper = up(D.hi + charge);
  return res;
}

}  // namespace two_atom
}  // namespace kernels
}  // namespace sharpdp
