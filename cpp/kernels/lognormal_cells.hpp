// Certified hat-lattice cells of a lognormal law (docs/accountant.md §2.3).
//
// L = a + G e^{rV - r^2/2} - S e^{-rV - r^2/2}, V ~ N(0, 1) restricted to (v_lo, v_hi), times a mass
// multiplier `weight` (G, S >= 0, not both 0: L increases in V). For the grid x_k = x0 + h k, cell j is
// {x_j < L < x_{j+1}}; for every cell the kernel returns its mass m_j, its hat weight
// w_j = min(E[L - x_j; cell] / h, m_j) and absolute error bounds em_j, ew_j such that the exact values lie in
// [m_j - em_j, m_j + em_j] and [w_j - ew_j, w_j + ew_j] (the cells being those between the computed V-edges).
//
// Every cell is computed from its own two edges by the same operations whatever K, x0 or the caller's
// blocking, so the result does not depend on how a grid is split. The allowances for libm (glibc) are those
// of docs/accountant.md §2.3 ("libm allowances"): exp, log, log1p, expm1, asinh within 64 ulp relative;
// ndtr(z) = erfc(-z/sqrt 2)/2 (erf in the middle) within (64 + 2 z^2) ulp relative for z < 0 and 64 ulp for
// z >= 0, and the flush allowance phi(z)/|z| + 1e-323 below z = -37.5.
// Header-only, plain numbers and pointers in, caller-allocated arrays out; errors are std::invalid_argument
// naming the parameter.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace sharpdp {
namespace kernels {
namespace lognormal {

constexpr double kEps = 2.220446049250313e-16;  // 2^-52 (one ulp at 1)
constexpr double kU = kEps / 2.0;                // unit roundoff 2^-53
constexpr double kRho = 64.0 * kEps;             // exp/log/log1p/expm1/asinh allowance
// A cell is "narrow" when its length D in the oriented variable V (from the anchor v* where L = x_j, so
// u = v - v* lies in [u0, u1] with 0 <= u0 < u1 =: D) satisfies D (|v*| + r + 1) <= kNarrow = 1/4. Error of the
// 8-point Gauss-Legendre rule (Trefethen, Approximation Theory and Approximation Practice, Thm 19.3: the
// (m+1)-point rule's error <= (64/15) M rho^-2m / (rho^2 - 1) on [-1, 1] for f analytic with |f| <= M in the
// Bernstein ellipse E_rho; 8 points: rho^-14), rho = 16 (both integrands are entire): the ellipse's semi-major axis
// is a = (rho + 1/rho)/2 = 8.03, so |u - c| <= a l/2 on it (c the cell centre, l <= D its length) and
// |u| <= (1 + a) c <= 4.52 D. Mass integrand e(u) = exp(-v* u - u^2/2): |e| on the ellipse over min e on the cell
// <= exp(5.52 D|v*| + 10.7 D^2) <= e^1.38 (D|v*| + D <= 1/4), and the [-1, 1] integral is >= 2 min e, so the
// relative error is <= (64/15) e^1.38 16^-14 / 255 / 2 < 5e-19. Moment integrand g(u) = [P expm1(ru) - M
// expm1(-ru)] e(u), P, M >= 0 (both terms >= 0 for real u >= 0): |g| <= (P + M) r|u| e^{r|u|} |e| on the ellipse
// (|e^w - 1| <= e^|w| - 1 <= |w| e^|w|), while on the cell g >= (P + M e^{-rD}) r u min e, whose integral is
// >= 2 c (P + M e^{-rD}) r min e with c >= |u|max / (1 + a). Hence M / integral <= ((1 + a)/2) exp(5.52 (D|v*| +
// rD) + 10.7 D^2) < 18 and the relative error is < (64/15) 18 16^-14 / 255 < 5e-18. The one-term law (M = 0) is
// the special case. kGlRel: 1e-14 plus 64 ulp for the rounding of the weights and exponentials (docs/accountant.md
// §2.3; before session 42 this comment read the theorem with rho^-16 for 8 points at rho = 8, one power of rho^2
// short: review rev42, tests/test_review_rev42_cells.py).
constexpr double kNarrow = 0.25;
// Fewer nodes for the narrower cells (docs/accountant_tail.md §64, Lemma 64.1): with kappa = u1 (|v*| + r + 1) (u1 the
// cell's upper end in u), the n-point Gauss-Legendre rule's truncation error relative to each of the cell's
// integrals (the mass, and each of the moment's two non-negative terms) is at most
// 2 c_n (T(2n) kappa^2n + 2n T(2n-1) kappa^(2n-1)) e^kappa, c_n = (n!)^4 / ((2n + 1) ((2n)!)^3) (the real-variable
// remainder c_n l^(2n+1) f^(2n)(xi)), T(k) the sum of |coefficients| of the Hermite polynomial He_k: 7.41e-15 for
// 2 points at kappa <= kNarrow2 = 1e-4, 4.56e-15 for 3 points at kappa <= 1/128, 8.5e-15 for 4 points at
// kappa <= 1/16, each with the nodes' placement (< 1e-15) inside kGlRel's 1e-14. Taken where the law's `rule` is
// not 0 (limits.CELLS_TWO_NODE or limits.CELLS_FEW_NODES; 0: the 8-point rule in every narrow cell, main's floats).
// (Session 42's 2-point rule at kappa <= 1/500 was not proven: its moment error reached 1.4e-11, §62.2; these tiers
// replace it.)
constexpr double kNarrow2 = 1e-4;
constexpr double kNarrow3 = 1.0 / 128.0;
constexpr double kNarrow4 = 1.0 / 16.0;
constexpr double kGlRel = 1e-14 + 64.0 * kEps;
constexpr double kInf = std::numeric_limits<double>::infinity();
// the smallest subnormal 2^-1074: a product or exp whose result is subnormal is off by up to 1/2 of it
// (64 of it for exp), absolutely, which no relative allowance covers (review: tests/test_review_rev_cells.py)
constexpr double kTiny = 0x1p-1074;
constexpr double kMinNormal = 0x1p-1022;

// 8-point Gauss-Legendre rule on [0, 1] (numpy.polynomial.legendre.leggauss(8), mapped: (x + 1)/2, w/2)
constexpr double kGlX[8] = {0x1.454e34f5339a0p-6, 0x1.a06d536d82f88p-4, 0x1.e5dad4f9af698p-3,
                            0x1.a214dac30e32fp-2, 0x1.2ef5929e78e68p-1, 0x1.86894ac19425ap-1,
                            0x1.cbf255924fa0fp-1, 0x1.f5d58e5856633p-1};
constexpr double kGlW[8] = {0x1.9ea1d04ca03aep-5, 0x1.c76fb531d2b94p-4, 0x1.413c50a25560ep-3,
                            0x1.736360b19933dp-3, 0x1.736360b19933dp-3, 0x1.413c50a25560ep-3,
                            0x1.c76fb531d2b94p-4, 0x1.9ea1d04ca03aep-5};
// 2-point Gauss-Legendre rule on [0, 1]: nodes (1 -+ 1/sqrt 3)/2 rounded to double, weights 1/2 (exact)
constexpr double kGl2X[2] = {0.21132486540518711775, 0.78867513459481288225};
constexpr double kGl2W[2] = {0.5, 0.5};
// 3-point rule on [0, 1]: (1 -+ sqrt(3/5))/2 and 1/2, weights 5/18, 4/9, 5/18 (mpmath, rounded to nearest)
constexpr double kGl3X[3] = {0x1.cda042f0236e1p-4, 0x1p-1, 0x1.c64bf7a1fb924p-1};
constexpr double kGl3W[3] = {0x1.1c71c71c71c72p-2, 0x1.c71c71c71c71cp-2, 0x1.1c71c71c71c72p-2};
// 4-point rule on [0, 1]: (1 -+ sqrt(3/7 +- (2/7) sqrt(6/5)))/2, weights (18 -+ sqrt 30)/72 (mpmath, rounded to nearest)
constexpr double kGl4X[4] = {0x1.1c6490c2719ecp-4, 0x1.51ee013116102p-2, 0x1.5708ff6774f7fp-1,
                             0x1.dc736de7b1cc3p-1};
constexpr double kGl4W[4] = {0x1.64340f7e7b66bp-3, 0x1.4de5f840c24cap-2, 0x1.4de5f840c24cap-2,
                             0x1.64340f7e7b66bp-3};

inline double sqrt2pi() { return std::sqrt(2.0 * 3.141592653589793); }

// Small arguments' exp and expm1 by Taylor polynomials in Horner form (docs/accountant_tail.md §76.1, Lemma 76.1):
// for |y| <= kSmallArg = 2^-7, exp_small(y) and expm1_small(y) lie within 4u relative of e^y and e^y - 1 (coefficients
// fl(1/k!); degree 7 (exp) and 8 (expm1) for |y| > 2^-13, degree 4 and 5 for |y| <= 2^-13, the 2-node cells' range:
// each truncation below 5e-19 relative), far inside the 64 ulp the cells charge per libm exponential. Taken in the narrow
// cells' node loops where the law's rule has bit kRuleSmallExp (limits.GAUSS48_SMALL_EXP); any other argument
// (|y| > 2^-7, NaN) goes to libm.
constexpr double kSmallArg = 0x1p-7;
constexpr double kTinyArg = 0x1p-13;
constexpr int kRuleFewNodes = 1;  // rule bit: the narrower cells by 2, 3 or 4 nodes (§64.1)
constexpr int kRuleSmallExp = 2;  // rule bit: exp_small / expm1_small in the narrow cells' nodes (§76.1)
inline bool small_arg(double y) { return std::fabs(y) <= kSmallArg; }
inline double exp_small(double y) {
  double s;
  if (std::fabs(y) <= kTinyArg) {
    s = 1.0 / 24.0;
  } else {
    s = 1.0 / 5040.0;
    s = 1.0 / 720.0 + y * s;
    s = 1.0 / 120.0 + y * s;
    s = 1.0 / 24.0 + y * s;
  }
  s = 1.0 / 6.0 + y * s;
  s = 0.5 + y * s;
  s = 1.0 + y * s;
  return 1.0 + y * s;
}
inline double expm1_small(double x) {
  double s;
  if (std::fabs(x) <= kTinyArg) {
    s = 1.0 / 120.0;
  } else {
    s = 1.0 / 40320.0;
    s = 1.0 / 5040.0 + x * s;
    s = 1.0 / 720.0 + x * s;
    s = 1.0 / 120.0 + x * s;
  }
  s = 1.0 / 24.0 + x * s;
  s = 1.0 / 6.0 + x * s;
  s = 0.5 + x * s;
  s = 1.0 + x * s;
  return x * s;
}

// Phi(z) on the accurate side of erf/erfc (cephes' ndtr form): 0.5 + 0.5 erf(z/sqrt 2) for |z| < 1,
// else erfc(|z|/sqrt 2)/2 (or 1 minus it for z > 0). The argument z/sqrt 2 is z * fl(1/sqrt 2): two
// roundings, relative 2u, which costs ~z^2 u relative in the far tail (§2.3).
// Below z = -37.5 (Phi(z) < 4.6e-308: subnormal or 0) the value is returned as 0: the flush allowance charged
// there (ndtr_flush) is at least the whole true value, so nothing is lost, and no subnormal masses reach the
// lattice (docs/accountant.md §2.3).
inline double ndtr(double z) {
  if (z < -37.5) return 0.0;
  const double x = z * 0.70710678118654752440;
  if (std::fabs(x) < 0.70710678118654752440) return 0.5 + 0.5 * std::erf(x);
  const double y = 0.5 * std::erfc(std::fabs(x));
  return x > 0 ? 1.0 - y : y;
}

// relative error allowance of ndtr(z): (64 + 2 min(z^2, 1e4)) ulp for finite z < 0, 64 ulp otherwise
inline double ndtr_rel(double z) {
  return (std::isfinite(z) && z < 0) ? (64.0 + 2.0 * std::min(z * z, 1e4)) * kEps : kRho;
}

// absolute allowance where ndtr(z) goes subnormal or flushes (z < -37.5): Mills' phi(z)/|z| (1.01 times,
// covering the exp's own error) plus the smallest subnormals
inline double ndtr_flush(double z) {
  if (!(z < -37.5 && std::isfinite(z))) return 0.0;
  return 1.01 * std::exp(-0.5 * z * z) / (std::fabs(z) * sqrt2pi()) + 1e-323;
}

// np.clip(x, lo, hi)'s rule min(max(x, lo), hi), a NaN anywhere propagating
inline double clip(double x, double lo, double hi) {
  const double t = (x >= lo || x != x) ? x : lo;
  return (t <= hi || t != t) ? t : hi;
}

struct Prob {
  double p, err;
};

// ndtr(z) with its relative and flush allowances
struct NdtrTerm {
  double z, v, rel, flush;
};

// The last two ndtr terms, looked up by the argument's value: a wide cell's upper edge is the next cell's lower
// edge, so half the terms of a run of wide cells are the previous cell's (the same argument gives the same
// floats: a pure saving, no value changes; -0.0 and 0.0 give the same terms; NaN never matches).
class NdtrMemo {
 public:
  NdtrTerm get(double z) {
    if (t_[0].z == z) return t_[0];
    if (t_[1].z == z) return t_[1];
    NdtrTerm& t = t_[next_];
    next_ ^= 1;
    t = {z, ndtr(z), ndtr_rel(z), ndtr_flush(z)};
    return t;
  }

 private:
  NdtrTerm t_[2] = {{std::nan(""), 0, 0, 0}, {std::nan(""), 0, 0, 0}};
  int next_ = 0;
};

// P(z1 < Z < z2) on the small side, with its absolute error bound
inline Prob interval_prob(double z1, double z2, NdtrMemo& memo) {
  const bool upper = z1 > 0;
  const double zA = upper ? -z1 : z2, zB = upper ? -z2 : z1;
  const NdtrTerm a = memo.get(zA), b = memo.get(zB);
  const double d = a.v - b.v;
  const double p = (d >= 0.0 || d != d) ? d : 0.0;
  return {p, a.rel * a.v + b.rel * b.v + kU * p + a.flush + b.flush};
}

inline Prob interval_prob(double z1, double z2) {
  NdtrMemo memo;
  return interval_prob(z1, z2, memo);
}

// A law, its parameters checked, with the logarithms the edge formula uses.
class Law {
 public:
  Law(double a, double G, double S, double r, double v_lo, double v_hi, double weight)
      : a_(a), G_(G), S_(S), r_(r), vlo_(v_lo), vhi_(v_hi), w_(weight) {
    init_checks(a, G, S, r, v_lo, v_hi, weight);
  }
  // the same law whose narrower cells take fewer nodes where rule != 0 (kNarrow2, kNarrow3, kNarrow4: §64)
  Law(double a, double G, double S, double r, double v_lo, double v_hi, double weight, int rule)
      : a_(a), G_(G), S_(S), r_(r), vlo_(v_lo), vhi_(v_hi), w_(weight), rule_(rule) {
    init_checks(a, G, S, r, v_lo, v_hi, weight);
  }

 private:
  void init_checks(double a, double G, double S, double r, double v_lo, double v_hi, double weight) {
    if (!std::isfinite(a)) throw std::invalid_argument("lognormal_cells: a must be finite, got " + std::to_string(a));
    if (!(G >= 0 && std::isfinite(G))) throw std::invalid_argument("lognormal_cells: G must be finite and >= 0");
    if (!(S >= 0 && std::isfinite(S))) throw std::invalid_argument("lognormal_cells: S must be finite and >= 0");
    if (G == 0 && S == 0) throw std::invalid_argument("lognormal_cells: G and S must not both be 0");
    if (!(r > 0 && std::isfinite(r))) throw std::invalid_argument("lognormal_cells: r must be finite and > 0");
    if (std::isnan(v_lo) || std::isnan(v_hi) || !(v_lo <= v_hi))
      throw std::invalid_argument("lognormal_cells: v_lo, v_hi must satisfy v_lo <= v_hi");
    if (!(weight > 0 && std::isfinite(weight)))
      throw std::invalid_argument("lognormal_cells: weight must be finite and > 0");
    logG_ = G > 0 ? std::log(G) : 0.0;
    logS_ = S > 0 ? std::log(S) : 0.0;
    // log kappa, kappa^2 = G S e^{-r^2} (kept as a logarithm: kappa underflows for r > ~38.6)
    lk_ = (G > 0 && S > 0) ? 0.5 * (logG_ + logS_) - 0.5 * r * r : -kInf;
    lGS_ = (G > 0 && S > 0) ? 0.5 * (logS_ - logG_) : 0.0;
  }

 public:

  // V where L = x (-inf/+inf beyond the range): the cancellation-free root of the quadratic in e^{rv}
  // (docs/accountant.md §2.3; the larger term from |q| in the log domain when kappa <= |q|, else from
  // kappa by asinh).
  double v(double x) const {
    const double q = x - a_;
    const double aq = std::fabs(q);
    const double la = std::log(aq);
    const double d = lk_ - la;  // log(kappa/|q|) (-inf when kappa = 0 or |q| = inf; +inf/NaN when q = 0)
    double v;
    if (d <= 0 && aq > 0) {
      // (kappa = 0, the one-term laws: d = -inf, xs = 0 and log1p(0) = 0 exactly; the calls are skipped)
      const double xs = d == -kInf ? 0.0 : std::exp(std::min(d, 0.0));
      const double lb_q = xs == 0.0 ? la : la + std::log1p(2.0 * xs * xs / (1.0 + std::sqrt(1.0 + 4.0 * xs * xs)));
      if (q >= 0)
        v = G_ > 0 ? (lb_q - logG_) / r_ + 0.5 * r_ : kInf;
      else
        v = S_ > 0 ? -(lb_q - logS_) / r_ - 0.5 * r_ : -kInf;
    } else {
      const double tk = aq == 0 ? 0.0 : std::asinh(0.5 * std::exp(-std::max(d, 0.0)));
      if (q >= 0)
        v = G_ > 0 ? (lGS_ + tk) / r_ : kInf;
      else
        v = S_ > 0 ? (lGS_ - tk) / r_ : -kInf;
    }
    if (G_ == 0 && q >= 0) v = kInf;
    if (S_ == 0 && q <= 0) v = -kInf;
    return v;
  }

  struct Local {
    double p, ep, val, err;
  };
  // P(lo < V < hi) and E[L - c; lo < V < hi] = (a - c) p + G q+ - S q- by the closed forms (unweighted), with
  // absolute error bounds (three products and two sums: 4u on the absolute terms)
  // (memo: three NdtrMemo, for the shifts 0, -r, +r)
  Local local(double lo, double hi, double c, NdtrMemo* memo) const {
    // an empty V-interval (hi <= lo: a cell below or above the law's range, both edges clipped to the same end)
    // is exactly {0, 0, 0, 0}, as in stop_loss below, not 0 within the ndtr allowances: the cells are the events
    // between the computed V-edges, so an empty one has mass and moments exactly 0; the edges' own rounding is
    // charged in the cell/edge terms where they are computed (docs/accountant_tail.md §29)
    if (hi <= lo) return {0.0, 0.0, 0.0, 0.0};  // (NaN edges fall through: NaN propagates as before)
    const double r = r_;
    const Prob P0 = interval_prob(lo, hi, memo[0]);
    // a term whose coefficient is 0 (S = 0: the one-term laws; or G = 0) is not computed: its probability and
    // bound (finite, >= +0) enter only as products with that coefficient, which are then sign(coefficient) 0 either
    // way, so every result is the same double (docs/accountant_tail.md §69.1, Lemma 69.1)
    const Prob Pp = G_ != 0.0 ? interval_prob(lo - r, hi - r, memo[1]) : Prob{0.0, 0.0};
    const Prob Pm = S_ != 0.0 ? interval_prob(lo + r, hi + r, memo[2]) : Prob{0.0, 0.0};
    const double A = (a_ - c) * P0.p, Bp = G_ * Pp.p, Bm = S_ * Pm.p;
    const double err = std::fabs(a_ - c) * P0.err + G_ * Pp.err + S_ * Pm.err + 4 * kU * (std::fabs(A) + Bp + Bm);
    return {P0.p, P0.err, A + Bp - Bm, err};
  }

  // Bracket [lo, up] of E[(L - t)_+] (weighted) at each threshold t[i] (docs/accountant.md §2.3): the closed
  // form on {L > t} = (v(t), v_hi), its error bound added/subtracted, then 1 -+ 1e-12; 0 where that is empty.
  void stop_loss(const double* t, std::size_t n, double* lo_out, double* up_out) const {
    const double v_top = v(kInf);
    NdtrMemo memo[3];
    for (std::size_t i = 0; i < n; ++i) {
      const double lo = clip(v(t[i]), vlo_, vhi_);
      const double hi = clip(v_top, lo, vhi_);
      if (!(hi > lo)) {
        lo_out[i] = up_out[i] = 0.0;
        continue;
      }
      const Local l = local(lo, hi, t[i], memo);
      // (+ 4 kTiny, then +- 2 kTiny after weighting: the products that land subnormal, kTiny/2 each, which the
      // relative 1 -+ 1e-12 does not cover: a tiny weight or coefficient gave up = 0 below a positive exact value)
      const double err = l.err + 4 * kTiny;
      const double pv = (l.val >= 0.0 || l.val != l.val) ? l.val : 0.0;
      const double dv = l.val - err;
      up_out[i] = w_ * (pv + err) * (1 + 1e-12) + 2 * kTiny;
      const double lw = w_ * ((dv >= 0.0 || dv != dv) ? dv : 0.0) * (1 - 1e-12) - 2 * kTiny;
      // (an overflowing lower bound is clamped to the largest double: the exact value is then at least that)
      lo_out[i] = (lw >= 0.0 || lw != lw) ? std::min(lw, std::numeric_limits<double>::max()) : 0.0;
    }
  }

  // The exact error of s = fl(a - b) (Knuth's two-sum: a - b = s + diff_err(a, b, s) exactly, no overflow)
  static double diff_err(double a, double b, double s) {
    const double ap = s + b, bp = s - ap;
    return (a - ap) + (-b - bp);
  }

  // One cell: x_j = xj, V-edges lo < hi (clipped), vs = v(x_j) unclipped; h the grid step.
  // Writes (m, w, em, ew), weighted.
  void cell(double xj, double vs, double lo, double hi, double h, NdtrMemo* memo, double* m_out, double* w_out,
            double* em_out, double* ew_out) const {
    const double r = r_;
    const double u0 = lo - vs, u1 = hi - vs;
    const double kap = u1 * (std::fabs(vs) + r + 1.0);
    const bool nar = std::isfinite(vs) && (hi > lo) && (kap <= kNarrow) && (u0 >= 0);
    double m, em, wh, ew, flo = 0.0;
    bool under = false;  // phi(v*) subnormal or 0 in a narrow cell
    if (!nar) {
      const Local l = local(lo, hi, xj, memo);
      m = l.p;
      em = l.ep;
      wh = (l.val >= 0.0 || l.val != l.val) ? l.val : 0.0;
      // the three products (a - c) p, G q+, S q- where subnormal: kTiny/2 each (none on an empty cell: exact 0s)
      ew = l.err + (hi > lo ? 4 * kTiny : 0.0);
    } else {
      // narrow: 8-point Gauss-Legendre in u = v - v* from the anchor v* (docs/accountant.md §2.3)
      const double a0 = u0, span = u1 - u0;
      const bool two = G_ > 0 && S_ > 0;
      // P = G e^{r v* - r^2/2}, M = S e^{-r v* - r^2/2}; where the exponential alone is below the normal range
      // (subnormal or 0: its relative accuracy is lost, and a large G or S would scale the loss up, e.g.
      // G = 1e300, r = 40, v* = 1.5 gives e^{-740} ~ 4e-322 with 1% error while P ~ 4e-22) the product is
      // formed in the log domain, exp(log G + (r v* - r^2/2)), charged log's 64 ulp on log G and the sum's rounding
      const double eP = G_ > 0 ? std::exp(r * vs - 0.5 * r * r) : 0.0;
      const double eM = S_ > 0 ? std::exp(-r * vs - 0.5 * r * r) : 0.0;
      const bool lP = G_ > 0 && eP < kMinNormal, lM = S_ > 0 && eM < kMinNormal;
      const double P = lP ? std::exp(logG_ + (r * vs - 0.5 * r * r)) : G_ * eP;
      const double M = lM ? std::exp(logS_ + (-r * vs - 0.5 * r * r)) : S_ * eM;
      double sb = 0.0, sg = 0.0;
      // the nodes' exponents first, then the 16 libm calls in two tight loops, then the sums: the same operations
      // on the same doubles in the same order as one loop per node (docs/accountant_tail.md §60.2: fewer values
      // spilled around each call)
      // (fewer nodes for the narrower cells where the law's rule is set: docs/accountant_tail.md §64.1)
      int ng = 8;
      const double* gx = kGlX;
      const double* gw = kGlW;
      if ((rule_ & kRuleFewNodes) != 0 && kap <= kNarrow2) {
        ng = 2, gx = kGl2X, gw = kGl2W;
      } else if ((rule_ & kRuleFewNodes) != 0 && kap <= kNarrow3) {
        ng = 3, gx = kGl3X, gw = kGl3W;
      } else if ((rule_ & kRuleFewNodes) != 0 && kap <= kNarrow4) {
        ng = 4, gx = kGl4X, gw = kGl4W;
      }
      double ba[8], ea[8];
      for (int g = 0; g < ng; ++g) {
        const double U = a0 + span * gx[g];
        ba[g] = -vs * U - 0.5 * U * U;
        ea[g] = r * U;
      }
      if ((rule_ & kRuleSmallExp) != 0) {
        // (§76.1: the same products and sums below, each node's exponentials by Lemma 76.1's polynomials where the
        // argument is small)
        for (int g = 0; g < ng; ++g) ba[g] = small_arg(ba[g]) ? exp_small(ba[g]) : std::exp(ba[g]);
        for (int g = 0; g < ng; ++g) ea[g] = small_arg(ea[g]) ? expm1_small(ea[g]) : std::expm1(ea[g]);
      } else {
        for (int g = 0; g < ng; ++g) ba[g] = std::exp(ba[g]);
        for (int g = 0; g < ng; ++g) ea[g] = std::expm1(ea[g]);
      }
      // e^{ru} - 1 and e^{-ru} - 1 = -(e^{ru} - 1)/e^{ru} from one expm1 (ru >= 0: U >= u0 >= 0): the
      // quotient and the sum 1 + E add two roundings (2u) and E/(1 + E) is no more sensitive to E's own
      // error than E itself (relative factor 1/(1 + E) <= 1), all inside the 64 ulp charged per exponential
      for (int g = 0; g < ng; ++g) {
        const double base = ba[g];
        const double E = ea[g];
        double grow;
        if (two)
          grow = P * E - M * (-(E / (1.0 + E)));
        else if (S_ > 0)
          grow = -(M * (-(E / (1.0 + E))));
        else
          grow = P * E;
        if (g == 0) {
          sb = base * gw[0];
          sg = (grow * base) * gw[0];
        } else {
          sb += base * gw[g];
          sg += (grow * base) * gw[g];
        }
      }
      const double phi = std::exp(-0.5 * vs * vs) / sqrt2pi();
      const double mm = phi * span * sb;
      const double w0 = phi * span * sg;
      const double d = (a_ - xj) + (P - M);
      // exp of an argument rounded to u (|r v*| + r^2): relative error of P, M
      const double lgs = std::max(lP ? std::fabs(logG_) : 0.0, lM ? std::fabs(logS_) : 0.0);
      const double rel_pm = 4 * kU * (std::fabs(r * vs) + r * r) + kRho + (4 * kU + kRho) * lgs;
      const double e_d = rel_pm * (P + M) + 3 * kU * (std::fabs(a_ - xj) + P + M + std::fabs(d));
      const double ww = w0 + d * mm;
      // phi(v*) = exp(-v*^2/2) carries the rounding of its argument: (v*^2/2 + 4) 2u relative
      const double phi_rel = (0.5 * vs * vs + 4.0) * 2.0 * kU;
      m = mm;
      em = (kGlRel + phi_rel) * mm;
      wh = (ww >= 0.0 || ww != ww) ? ww : 0.0;
      // + 256 kTiny: the subnormal roundings no relative term covers (P and M within 65 kTiny each where
      // subnormal; per node P E, M E/(1 + E), the product with the node's weight and base; phi span sg, d mm):
      // at most ~140 kTiny in all (review: tests/test_review_rev_cells.py; docs/accountant.md §2.3)
      ew = ((kGlRel + rel_pm + phi_rel) * w0 + e_d * mm + std::fabs(d) * (kGlRel + phi_rel) * mm +
            4 * kU * std::fabs(ww)) + 256 * kTiny;
      // A cell cut by the law's truncation (u0 > 0): fl(lo - v*) and fl(hi - v*) round by up to u|u0|, u|u1|, an
      // absolute move of the rule's interval that kGlRel (relative to the span) does not cover where u0 >> span.
      // Their exact errors (two-sum) times the integrands' bounds on the cell (base <= e^kappa, |grow| <= (P + M)
      // expm1(kappa), kappa <= kNarrow) are charged; nothing where both differences are exact (docs/accountant.md
      // §2.3, "Cut cells")
      if (u0 > 0.0) {
        const double mv = std::fabs(diff_err(lo, vs, u0)) + std::fabs(diff_err(hi, vs, u1));
        if (mv > 0.0) {
          const double dens = 1.01 * phi * std::exp(kNarrow) * mv;
          em += dens;
          ew += 1.01 * dens * ((P + M) * std::expm1(kNarrow) + std::fabs(d));
        }
      }
      // phi(v*) subnormal or 0: the whole true mass (weighted, log domain) plus phi's subnormal rounding
      if (phi < 1e-290) {
        under = true;
        const double lf = std::log(w_) + std::log(span) + kNarrow - 0.5 * (vs * vs) - std::log(sqrt2pi());
        flo = 1.01 * std::exp(lf) + w_ * span * std::exp(kNarrow) * 1e-323;
      }
    }
    const double wt = w_;
    const double q = wh / h;
    double w = (q <= m || q != q) ? q : m;  // np.minimum (NaN propagates)
    if (q != q) {
      // no moment (|a - x_j| overflows for a and x_j of opposite signs near the double range: inf * 0): the hat
      // weight is only known to lie in [-inf, m]; w = m with an infinite bound (review: a NaN here before)
      w = m;
      ew = kInf;
    }
    *m_out = wt * m;
    *em_out = wt * em * (1 + 4 * kU) + 4 * kU * wt * m + flo;
    if ((wh > 0 && q < 2.3e-308) || (ew > 0 && ew / h < 2.3e-308)) {
      // wh/h or ew/h below the normal range (h huge, values tiny) before a weight (up to ~1e243) scales them
      // up: weigh first, then divide (each step relative u where normal; a subnormal result half a quantum,
      // covered by the 4 quanta added; an overflow of wh wt gives inf and the min picks wt m, of ew wt an
      // infinite, still valid, bound)
      const double W0 = (wh * wt) / h, Wm = wt * m;
      const double W = (W0 <= Wm || W0 != W0) ? W0 : Wm;
      *w_out = W;
      *ew_out = ((ew * wt) / h + 4 * kU * W) * (1 + 4 * kU) + 4 * kU * W + flo + 2e-323;
    } else {
      *w_out = wt * w;
      *ew_out = wt * (ew / h + 4 * kU * w) * (1 + 4 * kU) + 4 * kU * wt * w + flo;
    }
    // Below the normal range the products above round absolutely (half a subnormal quantum each, at most six
    // per bound, and the far-tail allowance's exp(lf) may itself flush: all of them lost when e.g. a weight < 1
    // scales a 1e-323 allowance to 0): 4 quanta added wherever a weighted bound is subnormal while the cell's
    // unweighted quantities are not all 0 or its phi(v*) flushed (§2.3).
    if (*em_out < 2.3e-308 && (em > 0 || m > 0 || under)) *em_out += 2e-323;
    if (*ew_out < 2.3e-308 && (ew > 0 || w > 0 || m > 0 || under)) *ew_out += 2e-323;
    // An unweighted mass below the normal range is not resolved (its products with the coefficients of the
    // moment may underflow before a large weight scales them up): there the hat weight, which lies in
    // [0, mass], is bounded by the mass bound itself, |w - w_exact| <= m + em (§2.3).
    if (m < 2.3e-308 && (em > 0 || under)) {
      const double bm = (*m_out + *em_out) * (1 + 4 * kU);
      if (!(*ew_out >= bm)) *ew_out = bm;
    }
  }

  // Cells k_start .. k_end - 1 of the grid x0 + h k, written to out[0 .. k_end - k_start).
  void cells(double x0, double h, std::int64_t k_start, std::int64_t k_end, double* m, double* w, double* em,
             double* ew) const {
    if (k_end <= k_start) return;
    double x_prev = x0 + h * static_cast<double>(k_start);
    double v_prev = v(x_prev);
    NdtrMemo memo[3];
    for (std::int64_t k = k_start; k < k_end; ++k) {
      const double x_next = x0 + h * static_cast<double>(k + 1);
      const double v_next = v(x_next);
      const double lo = clip(v_prev, vlo_, vhi_);
      const double hi = clip(v_next, lo, vhi_);
      const auto i = static_cast<std::size_t>(k - k_start);
      cell(x_prev, v_prev, lo, hi, h, memo, m + i, w + i, em + i, ew + i);
      x_prev = x_next;
      v_prev = v_next;
    }
  }

 private:
  double a_, G_, S_, r_, vlo_, vhi_, w_;
  double logG_ = 0.0, logS_ = 0.0, lk_ = 0.0, lGS_ = 0.0;
  int rule_ = 0;
};

inline void check_grid(double x0, double h, std::int64_t K) {
  if (!std::isfinite(x0)) throw std::invalid_argument("lognormal_cells: x0 must be finite");
  if (!(h > 0 && std::isfinite(h))) throw std::invalid_argument("lognormal_cells: h must be finite and > 0");
  if (K < 0) throw std::invalid_argument("lognormal_cells: K must be >= 0, got " + std::to_string(K));
}

}  // namespace lognormal
}  // namespace kernels
}  // namespace sharpdp
