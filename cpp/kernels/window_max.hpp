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

#if defined(__clang__)
#define SHARPDP_WM_NOCONTRACT _Pragma("clang fp contract(off)")
#define SHARPDP_WM_ATTR
#elif defined(__GNUC__)
#define SHARPDP_WM_NOCONTRACT
#define SHARPDP_WM_ATTR __attribute__((optimize("fp-contract=off")))
#else
#define SHARPDP_WM_NOCONTRACT
#define SHARPDP_WM_ATTR
#endif

SHARPDP_WM_ATTR inline Maxima maxima(const double* w, const double* x, std::size_t n, std::size_t i0, double s0,
                                     double c) {
  SHARPDP_WM_NOCONTRACT
  const double inf = std::numeric_limits<double>::infinity();
  double mx = -inf, mn = inf, lo = -inf, hi = -inf;
  bool nan_w = false, nan_lo = false, nan_hi = false;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = w[i];
    if (std::isnan(v)) {
      nan_w = true;
      nan_lo = nan_lo || i < i0;
    } else {
      mx = v > mx ? v : mx;
      mn = v < mn ? v : mn;
    }
    if (i < i0) {
      lo = v > lo ? v : lo;
    } else {
      double r = x[i] - s0;
      r = r * c;
      const double d = v - r;
      if (std::isnan(d)) nan_hi = true;
      hi = d > hi ? d : hi;
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {nan_w ? nan : mx, nan_w ? nan : mn, nan_lo ? nan : lo, nan_hi ? nan : hi};
}

#undef SHARPDP_WM_NOCONTRACT
#undef SHARPDP_WM_ATTR

}  // namespace window_max
}  // namespace kernels
}  // namespace sharpdp
