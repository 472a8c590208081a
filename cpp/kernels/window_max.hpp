// The maxima of a window weight that docs/accountant_tail.md §51.1's TV bound reads (python/sharpdp/shuffle/accountant/
// tv_weight.py, `TvWeights.bound`; §80), in one pass: max w, min w, max_{i < i0} w_i and
// max_{i >= i0} (w_i - (x_i - s0) c), each as numpy's np.max / np.min gives it (NaN where a term is NaN; a zero maximum's sign may differ from numpy's; the maximum
// of a set of doubles does not depend on the order, and each difference is the same two IEEE operations numpy
// performs: r = x - s0, r = r c, w - r; no product fused into a sum). Header-only, Python-free.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

namespace sharpdp {
namespace kernels {
namespace window_max {

struct Maxima {
  double w_max;   // max w (NaN where any w is NaN)
  double w_min;   // min w (likewise)
  double below;   // max of w[0..i0) (-inf where i0 = 0)
  double above;   // max of w_i - (x_i - s0) c over [i0, n) (-inf where i0 = n)
};

// (no product fused into a sum: clang by the pragma; GCC by -ffp-contract=off on the binding's translation unit,
// CMakeLists.txt)
#if defined(__clang__)
#define SHARPDP_WM_NOCONTRACT _Pragma("clang fp contract(off)")
#else
#define SHARPDP_WM_NOCONTRACT
#endif

inline Maxima maxima(const double* w, const double* x, std::size_t n, std::size_t i0, double s0,
                                     double c) {
  SHARPDP_WM_NOCONTRACT
  const double inf = std::numeric_limits<double>::infinity();
  double mx = -inf, mn = inf, lo = -inf, hi = -inf;
  bool nan_lo = false, nan_up = false, nan_hi = false;
  const std::size_t m = i0 < n ? i0 : n;
  for (std::size_t i = 0; i < m; ++i) {  // (NaN: every comparison false, the maxima keep their value; flagged apart)
    const double v = w[i];
    nan_lo |= v != v;
    mx = v > mx ? v : mx;
    mn = v < mn ? v : mn;
  }
  lo = mx;
  for (std::size_t i = m; i < n; ++i) {
    const double v = w[i];
    double r = x[i] - s0;
    r = r * c;
    const double d = v - r;
    nan_up |= v != v;
    nan_hi |= d != d;
    mx = v > mx ? v : mx;
    mn = v < mn ? v : mn;
    hi = d > hi ? d : hi;
  }
  const bool nan_w = nan_lo || nan_up;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {nan_w ? nan : mx, nan_w ? nan : mn, nan_lo ? nan : lo, nan_hi ? nan : hi};
}

#undef SHARPDP_WM_NOCONTRACT

}  // namespace window_max
}  // namespace kernels
}  // namespace sharpdp
