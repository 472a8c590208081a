// The jump term's stop-loss bracket between evaluated nodes (python/sharpdp/shuffle/accountant/jump.py,
// `stop_loss_grid`; docs/accountant_tail.md §4 and §80): on the grid t_j = t0 + j dt, j < k, with the law's certified
// bracket [lo_c[i], up_c[i]] at the nodes idx[0] = 0 < idx[1] < ... < idx[m-1] = k - 1 and pa[i] >= P(L > ta[i]),
// ta[i] < t_idx[i], node j of the segment [idx[i], idx[i+1]) (the last node in the last segment) gets
//   up_j = (((1 - f) ua + f ub) + 8u max(ua, ub)) (1 + 1e-12),   f = min(max((j - ia) / (ib - ia), 0), 1),
//   lo_j = max((la - (pa (t_j - ta)) (1 + 1e-12)) - 8u la, 0) (1 - 1e-12),
// and the nodes themselves their own values: every operation the one numpy performs in `stop_loss_grid`'s array form,
// in the same order (IEEE, rounded to nearest, no product fused into a sum), so the same doubles (the chord's and the
// tangent's proof: §4). Header-only, Python-free.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace sharpdp {
namespace kernels {
namespace stop_loss_fill {

constexpr double kU = 1.1102230246251565e-16;  // 2^-53

// numpy's maximum: NaN where either is NaN
inline double np_max(double a, double b) { return (std::isnan(a) || a >= b) ? a : b; }

struct Nodes {
  const std::int64_t* idx;  // m increasing node indices, idx[0] = 0, idx[m-1] = k - 1
  const double* lo_c;       // the law's bracket at those nodes
  const double* up_c;
  const double* pa;  // P(L > ta) upper values
  const double* ta;  // ta < t_idx
  std::size_t m;     // >= 2
};

// (no product fused into a sum: clang by the pragma; GCC by -ffp-contract=off on the binding's translation unit,
// CMakeLists.txt)
#if defined(__clang__)
#define SHARPDP_SLF_NOCONTRACT _Pragma("clang fp contract(off)")
#else
#define SHARPDP_SLF_NOCONTRACT
#endif

// fills lo[0..k), up[0..k) (k = idx[m-1] + 1)
inline void fill(double t0, double dt, const Nodes& nd, double* lo, double* up) {
  SHARPDP_SLF_NOCONTRACT
  const double eps8 = 8.0 * kU;
  for (std::size_t i = 0; i + 1 < nd.m; ++i) {
    const std::int64_t ia = nd.idx[i], ib = nd.idx[i + 1];
    const std::int64_t jend = (i + 2 == nd.m) ? ib + 1 : ib;  // (the last node in the last segment)
    const double ua = nd.up_c[i], ub = nd.up_c[i + 1], la = nd.lo_c[i], pa = nd.pa[i], ta = nd.ta[i];
    const double mu = eps8 * np_max(ua, ub), ml = eps8 * la;
    const auto den = static_cast<double>(ib - ia);
    for (std::int64_t j = ia; j < jend; ++j) {
      double f = static_cast<double>(j - ia) / den;
      f = f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);  // (np.clip; f is never NaN here)
      const double a = (1.0 - f) * ua;
      const double b = f * ub;
      double u = a + b;
      u = u + mu;
      up[j] = u * (1 + 1e-12);
      const double jd = static_cast<double>(j) * dt;
      const double t = jd + t0;
      double d = t - ta;
      d = pa * d;
      d = d * (1 + 1e-12);
      double l = la - d;
      l = l - ml;
      l = np_max(l, 0.0);
      lo[j] = l * (1 - 1e-12);
    }
  }
  for (std::size_t i = 0; i < nd.m; ++i) {
    up[nd.idx[i]] = nd.up_c[i];
    lo[nd.idx[i]] = nd.lo_c[i];
  }
}

#undef SHARPDP_SLF_NOCONTRACT

}  // namespace stop_loss_fill
}  // namespace kernels
}  // namespace sharpdp
