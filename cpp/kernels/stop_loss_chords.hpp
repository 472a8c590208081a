// A law's stop-loss bracket at many sorted thresholds from its certified bracket at every stride-th of them
// (docs/accountant_tail.md §71.1, Lemma 71.1): f(t) = E[(L - t)_+] is convex and non-increasing in t for every law,
// so between two nodes t_i < t_j the chord of the nodes' upper values is an upper value, and the secants of the
// neighbouring nodes (h before i, l after j), extended into the gap, are lower values:
//   upper = min(u_i (1 - lam) + u_j lam + 16u (u_i + u_j) + 2^-1070, u_i),  lam = (t - t_i)/(t_j - t_i)
//   lower = max(l_i + s_lo (t - t_i) - 16u (|l_i| + |s_lo (t - t_i)|) - 1e-300 (1 + t - t_i),
//               l_j - s_up (t_j - t) - 16u (|l_j| + |s_up (t_j - t)|) - 1e-300 (1 + t_j - t),  l_j,  0)
//   s_lo = (l_i - u_h)/(t_i - t_h) <= f's secant on [t_h, t_i] <= f'(t_i+),
//   s_up = (u_l - l_j)/(t_l - t_j) >= f's secant on [t_j, t_l] >= f'(t_j-).
// The allowances cover every rounding of these few operations (the proof in §71.1). A gap is taken where each of
// its values has upper - lower <= tol lower + (u_i - l_i) + (u_j - l_j); the other gaps' thresholds are computed by
// `exact` too. A gap after a node whose upper value is 0 is exactly 0 (f >= 0 non-increasing).
// Header-only; `exact(const double* t, size_t n, double* lo, double* up)` is the law's certified bracket.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace sharpdp {
namespace kernels {
namespace chords {

constexpr double kU = 1.1102230246251565e-16;  // 2^-53

// true where t[0..n) is finite and non-decreasing
inline bool sorted_finite(const double* t, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(t[i])) return false;
    if (i > 0 && !(t[i] >= t[i - 1])) return false;
  }
  return true;
}

template <class Exact>
void chord_bracket(const Exact& exact, const double* t, std::size_t n, double* lo, double* up, std::size_t stride,
                   double tol) {
  if (n == 0) return;
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < n; i += stride) idx.push_back(i);
  if (idx.back() != n - 1) idx.push_back(n - 1);
  const std::size_t m = idx.size();
  std::vector<double> tn(m), fl(m), fu(m);
  for (std::size_t g = 0; g < m; ++g) tn[g] = t[idx[g]];
  exact(tn.data(), m, fl.data(), fu.data());
  for (std::size_t g = 0; g < m; ++g) {
    lo[idx[g]] = fl[g];
    up[idx[g]] = fu[g];
  }
  std::vector<double> redo_t;
  std::vector<std::size_t> redo_k;
  for (std::size_t g = 0; g + 1 < m; ++g) {
    const std::size_t i = idx[g], j = idx[g + 1];
    if (j == i + 1) continue;
    const double ti = tn[g], tj = tn[g + 1], ui = fu[g], uj = fu[g + 1], li = fl[g], lj = fl[g + 1];
    if (ui == 0.0) {  // f(t) <= f(t_i) <= 0 beyond node i
      for (std::size_t k = i + 1; k < j; ++k) lo[k] = up[k] = 0.0;
      continue;
    }
    const bool has_h = g >= 1, has_l = g + 2 < m;
    const double s_lo = has_h ? (li - fu[g - 1]) / (ti - tn[g - 1]) : 0.0;
    const double s_up = has_l ? (fu[g + 2] - lj) / (tn[g + 2] - tj) : 0.0;
    const double slack0 = (ui - li) + (uj - lj);
    const double d = tj - ti, alw = 16.0 * kU * (ui + uj) + 0x1p-1070;
    bool ok = true;
    for (std::size_t k = i + 1; k < j; ++k) {
      const double tk = t[k];
      const double lam = (tk - ti) / d;
      const double ch = (ui * (1.0 - lam) + uj * lam) + alw;
      const double u = std::min(ch, ui);
      double l = std::max(lj, 0.0);
      if (has_h) {
        const double dk = tk - ti, term = s_lo * dk;
        const double fwd = (li + term) - 16.0 * kU * (std::fabs(li) + std::fabs(term)) - 1e-300 * (1.0 + dk);
        l = fwd > l ? fwd : l;
      }
      if (has_l) {
        const double dk = tj - tk, term = s_up * dk;
        const double bwd = (lj - term) - 16.0 * kU * (std::fabs(lj) + std::fabs(term)) - 1e-300 * (1.0 + dk);
        l = bwd > l ? bwd : l;
      }
      if (!(u - l <= tol * l + slack0)) {  // (NaN fails)
        ok = false;
        break;
      }
      lo[k] = l;
      up[k] = u;
    }
    if (!ok) {
      for (std::size_t k = i + 1; k < j; ++k) {
        redo_t.push_back(t[k]);
        redo_k.push_back(k);
      }
    }
  }
  if (!redo_t.empty()) {
    std::vector<double> rl(redo_t.size()), ru(redo_t.size());
    exact(redo_t.data(), redo_t.size(), rl.data(), ru.data());
    for (std::size_t q = 0; q < redo_k.size(); ++q) {
      lo[redo_k[q]] = rl[q];
      up[redo_k[q]] = ru[q];
    }
  }
}

}  // namespace chords
}  // namespace kernels
}  // namespace sharpdp
