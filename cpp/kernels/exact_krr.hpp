// Python-free kernel of the sharp accountant of shuffled binary randomized response: the certified
// bracket of one class delta_j(eps) in O(w) work (docs/sharp_krr.md §4.10, §4.12; the Python side is
// python/sharpdp/shuffle/exact_krr/branch_bound.py, OneClass). Header-only: plain numbers in, a named
// struct out. Every rounding is bounded and charged on the safe side exactly as in §4.10; the only
// difference from the numpy path is how the binomial windows are built (§4.12: a multiplicative
// recurrence of the pmf ratios instead of summed logarithms; its error bound is derived there).
// Tail levels up to 300 nats only (the pmf ratios then stay in the normal range); the 745-nat
// level stays on the numpy path.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <stdexcept>
#include <vector>

namespace sharpdp {
namespace kernels {
namespace exact_krr {

constexpr double kU = 1.1102230246251565e-16;  // 2^-53, unit roundoff
constexpr double kUlpCall = 8 * kU;            // one libm call (exp, log, expm1): 4 ulp (§4)
constexpr double kMaxNats = 300.0;             // deepest tail level served here (§4.12)
// The hot functions are also compiled for AVX2 (four-lane vectors; no FMA, so no contraction of a
// product and a sum into one rounding), chosen at load time where the CPU has it (GCC, x86-64 Linux).
// Vectorisation does not reorder a floating-point sum (no -ffast-math), so both versions compute the
// same doubles (§4.12).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(SHARPDP_KRR_NO_CLONES)
#define SHARPDP_KRR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SHARPDP_KRR_CLONES
#endif

constexpr std::int64_t kBand = 1;              // half-width of the first band of terms (§4.10)

// Certified bracket of one class and the diagnostics of the evaluation.
struct ClassBracket {
  double lower;   // <= delta_j(eps)
  double upper;   // >= delta_j(eps)
  double charge;  // the larger truncation charge (a or b times the left-out mass)
  std::int64_t ws;         // length of the shorter window (the dot products)
  std::int64_t wl;         // length of the longer window
  std::int64_t terms;      // terms evaluated (band search and the ambiguous middle)
};

// A binomial window: pmf on [lo, lo + pmf.size() - 1], rel the entrywise relative error bound of pmf
// (and of the true pmf restricted to the window, §4.2). (The tail sums of the longer window are
// formed inside the one tail dot product of an evaluation, §4.12, not stored.)
// Storage of a window: a vector whose resize leaves new entries uninitialised (binom_window writes
// every entry it keeps; zeroing first cost a pass over memory per window, §4.12).
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() noexcept = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* ptr) noexcept {
    ::new (static_cast<void*>(ptr)) U;  // default-initialised: no write
  }
  template <class U, class... Args>
  void construct(U* ptr, Args&&... args) {
    ::new (static_cast<void*>(ptr)) U(std::forward<Args>(args)...);
  }
};
using PmfVector = std::vector<double, NoInitAllocator<double>>;

struct Window {
  std::int64_t lo = 0;
  PmfVector pmf;     // unnormalised: the pmf is pmf[i] * scale (§4.12)
  double scale = 1.0;
  double rel = 0.0;
};

inline double tail_exponent(std::int64_t m, double pi, double pi_c, std::int64_t k) {
  const double x = static_cast<double>(k) / static_cast<double>(m);
  const double t1 = x > 0 ? x * std::log(x / pi) : 0.0;
  const double t2 = x < 1 ? (1 - x) * std::log((1 - x) / pi_c) : 0.0;
  return static_cast<double>(m) * (t1 + t2);
}

// Smallest window [lo, hi] of Bin(m, pi) whose two tails each have mass <= exp(-(nats + 1)) (Chernoff,
// §4.1; the same bisection as binomial.chernoff_edges).
inline void chernoff_edges(std::int64_t m, double pi, double pi_c, double nats, std::int64_t& lo_out,
                           std::int64_t& hi_out) {
  if (m == 0) {
    lo_out = hi_out = 0;
    return;
  }
  const double need = nats + 1.0;
  const double mean = static_cast<double>(m) * pi;
  std::int64_t lo = 0;
  if (tail_exponent(m, pi, pi_c, 0) >= need) {
    std::int64_t a = 0, b = static_cast<std::int64_t>(std::floor(mean));
    if (tail_exponent(m, pi, pi_c, b) >= need) a = b;
    while (b - a > 1) {
      const std::int64_t mid = (a + b) / 2;
      if (tail_exponent(m, pi, pi_c, mid) >= need) a = mid; else b = mid;
    }
    lo = a + 1;
  }
  std::int64_t hi = m;
  if (tail_exponent(m, pi, pi_c, m) >= need) {
    std::int64_t a = static_cast<std::int64_t>(std::ceil(mean)), b = m;
    if (tail_exponent(m, pi, pi_c, a) >= need) b = a;
    while (b - a > 1) {
      const std::int64_t mid = (a + b) / 2;
      if (tail_exponent(m, pi, pi_c, mid) >= need) b = mid; else a = mid;
    }
    hi = b - 1;
  }
  lo_out = lo;
  hi_out = hi;
}

// Bin(m, pi) on its window at level nats (§4.1, §4.12). rho = pi / (1 - pi) = exp(+-eps0) is computed
// here by one exp call (relative error kUlpCall). From the anchor k0 (the mode up to rounding; any
// anchor is valid) the ratios pmf(k)/pmf(k - 1) = ((m - k + 1)/k) rho are multiplied outward: per
// step one ratio of exact integers below 2^53 (at most five roundings, two ratios sharing one division),
// rho's own error and one product into the running value, so |log(w_k / w_true_k)| <= 1.01 |k - k0|
// (6u + kUlpCall) (§4.12).
// Every w_k >= e^-(nats + 1) / (m + 1) (method of types at the window's edges, unimodality inside):
// no underflow for nats <= 300.
SHARPDP_KRR_CLONES inline void binom_window(std::int64_t m, double pi, double pi_c, double log_odds, double nats, Window& w) {
  w.pmf.clear();
  if (m == 0) {
    w.lo = 0;
    w.pmf.push_back(1.0);
    w.scale = 1.0;
    w.rel = 0.0;
    return;
  }
  std::int64_t lo, hi;
  chernoff_edges(m, pi, pi_c, nats, lo, hi);
  const double rho = std::exp(log_odds);
  const double rho_inv = std::exp(-log_odds);  // 1/rho within kUlpCall, as rho: a product replaces the quotient
  const auto size = static_cast<std::size_t>(hi - lo + 1);
  w.lo = lo;
  w.pmf.resize(size);  // every entry is written below
  std::int64_t k0 = static_cast<std::int64_t>(std::floor(static_cast<double>(m + 1) * pi));
  k0 = std::min(std::max(k0, lo), hi);
  double* v = w.pmf.data();
  const double md = static_cast<double>(m);
  // The ratios pmf(k)/pmf(k - 1) = ((m - k + 1)/k) rho (k > k0) and pmf(k - 1)/pmf(k) =
  // (k/(m - k + 1)) rho_inv (lo < k <= k0), rho_inv = exp(-log_odds) = 1/rho within kUlpCall like rho
  // (a product where a quotient by rho would stand, one rounding each), two per division inside the
  // groups below, one division each in the last steps. Two ratios from one division (the division is
  // the costly operation): x1/y1 = (x1 y2) (1/(y1 y2)), x2/y2 = (x2 y1) (1/(y1 y2)), then the product
  // with rho or rho_inv: five roundings per ratio (y1 y2, the reciprocal, x y, the product with it,
  // rho) where one division had two, plus rho's own error (§4.12). They are multiplied outward from
  // w_k0 = 1 four steps at a time: with r1..r4 the next four ratios and run the current value, the
  // entries are run r1, run (r1 r2), run ((r1 r2) r3) and run ((r1 r2)(r3 r4)), the last the new
  // run: an entry s steps from k0 carries at most s product roundings (1, 2, 3, 4 in a group), as
  // with the one-step recurrence (§4.12), on a dependency chain of one product per four entries. The
  // normalising sum: four accumulators (a positive sum: its bound does not depend on the order).
  double acc[4] = {1.0, 0.0, 0.0, 0.0};  // w_k0 = 1
  // integers below 2^53 are exact in double: kd counts k
  auto up_ratio = [&](double kd) { return ((md - kd + 1.0) / kd) * rho; };
  auto down_ratio = [&](double kd) { return (kd / (md - kd + 1.0)) * rho_inv; };
  // The groups are formed in blocks of kBlockGroups: first the block's ratios (independent of
  // one another, so the loop vectorises: two-lane divisions), then its running products (the one
  // dependency chain); only the schedule differs from forming each ratio inside the product loop.
  constexpr std::int64_t kBlockGroups = 128;
  double g1[kBlockGroups], g2[kBlockGroups], g3[kBlockGroups], g4[kBlockGroups];
  {
    double run = 1.0;
    std::int64_t k = k0 + 1;
    const std::int64_t ngroups = hi >= k0 + 4 ? (hi - k0) / 4 : 0;  // whole groups k .. k + 3 <= hi
    for (std::int64_t g0 = 0; g0 < ngroups; g0 += kBlockGroups) {
      const std::int64_t nb = std::min(kBlockGroups, ngroups - g0);
      const double kb = static_cast<double>(k);
      const int nbi = static_cast<int>(nb);
      for (int g = 0; g < nbi; ++g) {  // up_pair(kd), up_pair(kd + 2), written out (int g: vector conversion)
        const double kd = kb + 4.0 * static_cast<double>(g), kd2 = kd + 2.0;
        const double inv1 = 1.0 / (kd * (kd + 1.0)), inv2 = 1.0 / (kd2 * (kd2 + 1.0));
        g1[g] = (((md - kd + 1.0) * (kd + 1.0)) * inv1) * rho;
        g2[g] = (((md - kd) * kd) * inv1) * rho;
        g3[g] = (((md - kd2 + 1.0) * (kd2 + 1.0)) * inv2) * rho;
        g4[g] = (((md - kd2) * kd2) * inv2) * rho;
      }
      double* e = v + (k - lo);
      for (std::int64_t g = 0; g < nb; ++g, e += 4) {
        const double r1 = g1[g], r2 = g2[g], r3 = g3[g], r4 = g4[g];
        const double r12 = r1 * r2;
        const double w1 = run * r1, w2 = run * r12, w3 = run * (r12 * r3), w4 = run * (r12 * (r3 * r4));
        e[0] = w1;
        e[1] = w2;
        e[2] = w3;
        e[3] = w4;
        acc[0] += w1;
        acc[1] += w2;
        acc[2] += w3;
        acc[3] += w4;
        run = w4;
      }
      k += 4 * nb;
    }
    for (double kd = static_cast<double>(k); k <= hi; ++k, kd += 1.0) {
      run *= up_ratio(kd);
      v[k - lo] = run;
      acc[0] += run;
    }
  }
  {
    // entry k - 1 from entry k, k = k0, k0 - 1, .., lo + 1
    double run = 1.0;
    std::int64_t k = k0;
    const std::int64_t ngroups = k0 - 3 >= lo + 1 ? (k0 - lo) / 4 : 0;  // whole groups k - 3 >= lo + 1
    for (std::int64_t g0 = 0; g0 < ngroups; g0 += kBlockGroups) {
      const std::int64_t nb = std::min(kBlockGroups, ngroups - g0);
      const double kb = static_cast<double>(k);
      const int nbi = static_cast<int>(nb);
      for (int g = 0; g < nbi; ++g) {  // down_pair(kd), down_pair(kd - 2), written out
        const double kd = kb - 4.0 * static_cast<double>(g), kd2 = kd - 2.0;
        const double inv1 = 1.0 / ((md - kd + 1.0) * (md - kd + 2.0));
        const double inv2 = 1.0 / ((md - kd2 + 1.0) * (md - kd2 + 2.0));
        g1[g] = ((kd * (md - kd + 2.0)) * inv1) * rho_inv;
        g2[g] = (((kd - 1.0) * (md - kd + 1.0)) * inv1) * rho_inv;
        g3[g] = ((kd2 * (md - kd2 + 2.0)) * inv2) * rho_inv;
        g4[g] = (((kd2 - 1.0) * (md - kd2 + 1.0)) * inv2) * rho_inv;
      }
      double* e = v + (k - 1 - lo);  // entries k - 1, k - 2, k - 3, k - 4 of the first group
      for (std::int64_t g = 0; g < nb; ++g, e -= 4) {
        const double r1 = g1[g], r2 = g2[g], r3 = g3[g], r4 = g4[g];
        const double r12 = r1 * r2;
        const double w1 = run * r1, w2 = run * r12, w3 = run * (r12 * r3), w4 = run * (r12 * (r3 * r4));
        e[0] = w1;
        *(e - 1) = w2;
        *(e - 2) = w3;
        *(e - 3) = w4;
        acc[0] += w1;
        acc[1] += w2;
        acc[2] += w3;
        acc[3] += w4;
        run = w4;
      }
      k -= 4 * nb;
    }
    for (double kd = static_cast<double>(k); k > lo; --k, kd -= 1.0) {
      run *= down_ratio(kd);
      v[k - 1 - lo] = run;
      acc[0] += run;
    }
  }
  v[k0 - lo] = 1.0;
  const double total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  // one reciprocal (charged below) instead of a division. The entries are not multiplied by it
  // (a pass over the window); the window's pmf is the entries times scale, and the consumer multiplies
  // each value by the product of its two windows' scales (§4.12: two roundings per value where the
  // product in each window had one per entry, charged below as before).
  w.scale = 1.0 / total;
  const auto steps = static_cast<double>(std::max(hi - k0, k0 - lo));
  const double e_log = 1.01 * steps * (6 * kU + kUlpCall);  // five roundings per ratio, one per product
  const double left = 2.0 * std::exp(-(nats + 1.0)) * (1 + 4 * kUlpCall);  // left-out mass, t
  // entry and normalising sum each within e_log in the log; the sum's roundings (a positive sum of
  // size terms), the reciprocal's and the product's; the true normalisation differs by a factor in
  // [1, 1/(1 - t)] (the left-out mass t, §4.2, §4.12): relative error (1 + x)/(1 - t) - 1 = (x + t)/(1 - t),
  // not x + t (short by t^2 where t is not tiny: m = 10, pi = 1/2, nats just below 10 log 2 - 1)
  const double x = std::expm1(2 * e_log + 2 * kUlpCall + 1.01 * (static_cast<double>(size) + 3) * kU) * (1 + 4 * kU);
  w.rel = (x + left) / (1.0 - left);  // (its own rounding, a few u of rel, is inside §4.10's 1.01 (rel_A + rel_B))
}

// A per-thread cache of binomial windows (they do not depend on eps: the branch and bound meets the
// same ranges at every eps of a search, and the two halves of a range each share one window with
// it, §4.11), keyed by every input of binom_window, so a hit is the same doubles; cleared when it
// holds more than its cap (below). A window is built before it is inserted (an exception
// leaves nothing behind). The storage of cleared windows no longer in use is kept and reused for
// new windows: fresh memory costs a page fault per 512 doubles, more than building the window
// (measured: ~15 000 faults in one get_epsilon at n = 1e6 before), so the cap bounds the memory
// touched, and the memory held (capacities, spares included, each under the cap): 6e5 doubles, or 8
// windows of the size being built (n = 1e9:
// windows of ~2.5e5 doubles, which are also the costly ones to rebuild).
constexpr std::size_t kCacheElements = 600000;
constexpr std::size_t kCacheWindows = 8;
struct WindowKey {
  std::int64_t m;
  double pi, pi_c, log_odds, nats;
  bool mirrored = false;  // a mirror image (cached_window_or_mirror), never returned by cached_window
  bool operator==(const WindowKey& o) const {
    return m == o.m && pi == o.pi && pi_c == o.pi_c && log_odds == o.log_odds && nats == o.nats &&
           mirrored == o.mirrored;
  }
};
struct WindowKeyHash {
  std::size_t operator()(const WindowKey& k) const {
    std::size_t h = std::hash<std::int64_t>()(k.m);
    for (double x : {k.pi, k.pi_c, k.log_odds, k.nats}) h = h * 1000003u ^ std::hash<double>()(x);
    return h ^ static_cast<std::size_t>(k.mirrored);
  }
};
struct WindowCache {
  std::unordered_map<WindowKey, std::shared_ptr<Window>, WindowKeyHash> map;
  std::size_t elements = 0;
  std::vector<PmfVector> spare;  // storage of cleared windows, reused by binom_window
};

// The per-thread cache itself (one per thread, shared by cached_window and cached_window_or_mirror).
inline WindowCache& window_cache() {
  thread_local WindowCache cache;
  return cache;
}

// Insert a built window into the cache, clearing it first when it would hold more than its cap (the
// storage of cleared windows not in use kept as spares, under the same cap).
inline void cache_insert(WindowCache& cache, const WindowKey& key, const std::shared_ptr<Window>& w) {
  // memory held, not the window's size: reused storage keeps its capacity, so counting sizes would let
  // alternating large and small windows accumulate large spares without bound
  const std::size_t add = w->pmf.capacity();
  const std::size_t cap = std::max(kCacheElements, kCacheWindows * add);
  if (cache.elements + add > cap) {
    std::size_t kept = 0;  // the spares together also stay under the cap
    for (const auto& s : cache.spare) kept += s.capacity();
    for (auto& kv : cache.map) {  // windows in use stay alive through their shared_ptr, untouched
      const std::size_t c = kv.second->pmf.capacity();
      if (kv.second.use_count() == 1 && c > 0 && kept + c <= cap) {
        kept += c;
        cache.spare.push_back(std::move(kv.second->pmf));
      }
    }
    cache.map.clear();
    cache.elements = 0;
  }
  cache.map.emplace(key, w);
  cache.elements += add;
}

inline std::shared_ptr<const Window> cached_window(std::int64_t m, double pi, double pi_c, double log_odds,
                                                   double nats) {
  WindowCache& cache = window_cache();
  const WindowKey key{m, pi, pi_c, log_odds, nats};
  auto it = cache.map.find(key);
  if (it != cache.map.end()) return it->second;
  auto w = std::make_shared<Window>();
  if (!cache.spare.empty()) {
    w->pmf.swap(cache.spare.back());  // (binom_window overwrites every entry it keeps)
    cache.spare.pop_back();
  }
  binom_window(m, pi, pi_c, log_odds, nats, *w);
  cache_insert(cache, key, w);
  return w;
}

// The window of Bin(m, pi) as the mirror image of a cached window of Bin(m, pi_c) (docs/sharp_krr.md
// §4.16): Bin(m, pi)(k) = Bin(m, 1 - pi)(m - k), so the entries reversed, first index m - (last index),
// the same scale and entrywise bound rel, and each tail outside the window is the other window's
// opposite tail (<= e^-(nats + 1)). Used where the mirror is cached (the two-ended sweep of the branch
// and bound evaluates a range and its mirror image one after the other); else cached_window. The
// doubles then differ from binom_window's for Bin(m, pi) (another anchor and direction), not the bounds;
// mirror images are cached under their own key (mirrored = true), so cached_window never returns one
// (its hits stay binom_window's doubles).
inline std::shared_ptr<const Window> cached_window_or_mirror(std::int64_t m, double pi, double pi_c,
                                                             double log_odds, double nats) {
  WindowCache& cache = window_cache();
  auto it = cache.map.find(WindowKey{m, pi, pi_c, log_odds, nats});  // built directly
  if (it != cache.map.end()) return it->second;
  const WindowKey key{m, pi, pi_c, log_odds, nats, true};  // a mirror image made before
  it = cache.map.find(key);
  if (it != cache.map.end()) return it->second;
  auto mit = cache.map.find(WindowKey{m, pi_c, pi, -log_odds, nats});  // the other side, built directly
  if (mit == cache.map.end()) return cached_window(m, pi, pi_c, log_odds, nats);
  const std::shared_ptr<const Window> src = mit->second;  // kept alive through cache_insert's clearing
  auto w = std::make_shared<Window>();
  if (!cache.spare.empty()) {
    w->pmf.swap(cache.spare.back());
    cache.spare.pop_back();
  }
  const std::size_t size = src->pmf.size();
  w->pmf.resize(size);  // every entry is written below
  const double* from = src->pmf.data();
  double* to = w->pmf.data();
  for (std::size_t i = 0; i < size; ++i) to[i] = from[size - 1 - i];
  w->lo = m - (src->lo + static_cast<std::int64_t>(size) - 1);
  w->scale = src->scale;
  w->rel = src->rel;
  cache_insert(cache, key, w);
  return w;
}

// The four values U_win(kb .. kb + 3) over the products i in [ilo, ihi] common to them, before the scale
// sc, into s (class_bracket's four-value pass, §4.12): four interleaved partial sums per value (i mod 4),
// so the additions form sixteen short chains (a positive sum in another order: §4.3's bound holds).
SHARPDP_KRR_CLONES inline void pass4(const double* A, const double* B, std::int64_t kb, std::int64_t ilo,
                                     std::int64_t ihi, double* s) {
  double s0[4] = {}, s1[4] = {}, s2[4] = {}, s3[4] = {};
  std::int64_t i = ilo;
  for (; i + 3 <= ihi; i += 4) {
    const double* bp = B + (kb - i);
    for (int t = 0; t < 4; ++t) {
      s0[t] += A[i] * bp[t];
      s1[t] += A[i + 1] * bp[t - 1];
      s2[t] += A[i + 2] * bp[t - 2];
      s3[t] += A[i + 3] * bp[t - 3];
    }
  }
  for (; i <= ihi; ++i) {
    const double* bp = B + (kb - i);
    const double a0 = A[i];
    for (int t = 0; t < 4; ++t) s0[t] += a0 * bp[t];
  }
  for (int t = 0; t < 4; ++t) s[t] = (s0[t] + s1[t]) + (s2[t] + s3[t]);
}

// The tail dot product of class_bracket (§4.10, §4.12): the sum over c >= k_in of U_win before the
// scale sc, from the windows A (length ws) and B (length wl) as stored (a free function, so that it has
// its AVX2 version too).
SHARPDP_KRR_CLONES inline double tail_dot(const double* A, std::int64_t ws, const double* B, std::int64_t wl,
                                          std::int64_t k_in) {
  const std::int64_t k = std::max<std::int64_t>(k_in, 0);  // (U_win vanishes below 0)
  const std::int64_t i_start = std::max<std::int64_t>(0, k - (wl - 1));
  if (i_start > ws - 1) return 0.0;
  const std::int64_t i_end = std::min(ws - 1, k);  // last i with k - i >= 0
  auto bsum = [&](std::int64_t l1, std::int64_t l2) -> double {  // sum(B[l1..l2]), four accumulators
    double c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    std::int64_t l = l1;
    for (; l + 3 <= l2; l += 4) {
      c0 += B[l];
      c1 += B[l + 1];
      c2 += B[l + 2];
      c3 += B[l + 3];
    }
    for (; l <= l2; ++l) c0 += B[l];
    return (c0 + c1) + (c2 + c3);
  };
  double acc[4], s[4] = {0.0, 0.0, 0.0, 0.0};
  std::int64_t seg[5];
  const std::int64_t mlen = i_end - i_start + 1;  // >= 1 when k >= i_start; else no middle stretch
  const double top = bsum(k - i_start + 1, wl - 1);  // Bt(k - i_start + 1)
  double total = top;
  if (mlen > 0) {
    for (int t = 0; t <= 4; ++t) seg[t] = i_start + (mlen * t) / 4;
    acc[0] = top;
    for (int t = 0; t < 4; ++t) {  // B[k - i] for i in segment t: l in [k - seg[t+1] + 1, k - seg[t]]
      const double ss = bsum(k - seg[t + 1] + 1, k - seg[t]);
      if (t < 3) acc[t + 1] = acc[t] + ss;
      total += ss;
    }
    std::int64_t len[4];
    for (int t = 0; t < 4; ++t) len[t] = seg[t + 1] - seg[t];
    const std::int64_t common = std::min(std::min(len[0], len[1]), std::min(len[2], len[3]));
    for (std::int64_t d = 0; d < common; ++d) {
      for (int t = 0; t < 4; ++t) {
        const std::int64_t i = seg[t] + d;
        acc[t] += B[k - i];
        s[t] += A[i] * acc[t];
      }
    }
    for (int t = 0; t < 4; ++t)
      for (std::int64_t i = seg[t] + common; i < seg[t + 1]; ++i) {
        acc[t] += B[k - i];
        s[t] += A[i] * acc[t];
      }
  }
  // i > i_end: the whole of B (k - i < 0), times the remaining mass of A
  double rest = 0.0;
  if (i_end + 1 <= ws - 1) {
    double c0 = 0, c1 = 0;
    std::int64_t i = i_end + 1;
    for (; i + 1 <= ws - 1; i += 2) {
      c0 += A[i];
      c1 += A[i + 1];
    }
    for (; i <= ws - 1; ++i) c0 += A[i];
    rest = (c0 + c1) * total;
  }
  return ((s[0] + s[1]) + (s[2] + s[3])) + rest;
}

// Certified bracket of delta_j(eps) for the class j of a population of npop users at tail level
// nats <= 300 (§4.10): a = -p expm1(eps - eps0), b = q expm1(eps + eps0), e = expm1(eps) with relative
// error bounds ra, rb, re (computed by the caller, §4.4); p, q (and q, p as 1 - pi) the two report
// probabilities.
// mirror: the windows may be mirror images of cached ones (cached_window_or_mirror, §4.16); false: the
// windows of binom_window as before.
SHARPDP_KRR_CLONES inline ClassBracket class_bracket(double eps0, double p, double q, double a, double b, double e, double ra,
                                  double rb, double re, std::int64_t npop, std::int64_t j, double nats,
                                  bool mirror = false) {
  if (!(nats > 0 && nats <= kMaxNats)) throw std::invalid_argument("nats must be in (0, 300]");
  if (npop < 1 || j < 0 || j > npop - 1) throw std::invalid_argument("need 0 <= j <= npop - 1");
  const std::shared_ptr<const Window> pa =
      mirror ? cached_window_or_mirror(j, p, q, eps0, nats) : cached_window(j, p, q, eps0, nats);
  const std::shared_ptr<const Window> pb = mirror ? cached_window_or_mirror(npop - 1 - j, q, p, -eps0, nats)
                                                  : cached_window(npop - 1 - j, q, p, -eps0, nats);
  const Window& WA = *pa;
  const Window& WB = *pb;
  const std::int64_t a0 = WA.lo, b0 = WB.lo;
  const Window* SA = &WA;
  const Window* SB = &WB;
  if (WA.pmf.size() > WB.pmf.size()) std::swap(SA, SB);
  const double* A = SA->pmf.data();
  const double* B = SB->pmf.data();
  const auto ws = static_cast<std::int64_t>(SA->pmf.size());
  const auto wl = static_cast<std::int64_t>(SB->pmf.size());
  const std::int64_t nk = ws + wl - 1;
  const double wsd = static_cast<double>(ws), wld = static_cast<double>(wl);
  // the windows hold unnormalised entries (binom_window): each value and tail is a sum of their
  // products times sc, two roundings (sc, the product) in place of the product by its window's scale
  // of each entry of A and of B, which rel_A and rel_B charge (§4.12)
  const double sc = SA->scale * SB->scale;
  const double r = 1.01 * (SA->rel + SB->rel + kU) + 1.02 * (wsd + wld + 2) * kU;
  const double aP = a * (1 + ra + r + 16 * kU), aM = a * (1 - ra - r - 16 * kU);
  const double bP = b * (1 + rb + r + 16 * kU), bM = b * (1 - rb - r - 16 * kU);
  const double eP = e * (1 + re + r + 16 * kU), eM = e * (1 - re - r - 16 * kU);
  const double tiny_term = (a + b + 4.0) * (wsd + 2.0) * 4e-323;
  const double tiny_phi = (a + e + 4.0) * (wsd + 2.0) * (wld + 4.0) * 4e-323;
  std::int64_t nterms = 0;

  auto U_dot = [&](std::int64_t k) -> double {
    const std::int64_t i1 = std::max<std::int64_t>(0, k - (wl - 1)), i2 = std::min(ws - 1, k);
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    std::int64_t i = i1;
    for (; i + 3 <= i2; i += 4) {
      s0 += A[i] * B[k - i];
      s1 += A[i + 1] * B[k - i - 1];
      s2 += A[i + 2] * B[k - i - 2];
      s3 += A[i + 3] * B[k - i - 3];
    }
    for (; i <= i2; ++i) s0 += A[i] * B[k - i];
    return (s0 + s1) + (s2 + s3);
  };
  // U_win(k), k = c - a0 - b0 (zero outside [0, nk - 1]): a dot product of length <= ws, four
  // accumulators (a positive sum: its error bound does not depend on the order). Each value is
  // computed once per call and remembered (the band search, the ambiguous middle and Phi meet the
  // same k): the same double each time, so the bounds are those of one evaluation.
  std::vector<std::pair<std::int64_t, double>> memo;
  auto known = [&](std::int64_t k) -> bool {
    for (const auto& kv : memo)
      if (kv.first == k) return true;
    return false;
  };
  // U_win(kb .. kb + kPass - 1), kPass = 4, in one pass over A (four dot products sharing the loads of
  // A[i] and of the overlapping B[k - i]; each value is still a positive sum of its own products, whose
  // bound does not depend on the order, §4.3), remembered like U's values. Only values not yet
  // remembered are stored (a remembered value keeps its double). Four interleaved partial sums
  // per value (i mod 4), so the additions form sixteen short chains instead of four long ones.
  constexpr std::int64_t kPass = 4;
  auto Upass = [&](std::int64_t kb) {
    const std::int64_t ilo = std::max<std::int64_t>(0, kb + kPass - 1 - (wl - 1));  // products i common
    const std::int64_t ihi = std::min(ws - 1, kb);                                // to the kPass values
    double s[kPass] = {};
    if (ihi >= ilo) pass4(A, B, kb, ilo, ihi, s);
    for (std::int64_t t = 0; t < kPass; ++t) {  // the products outside the common range
      const std::int64_t k = kb + t;
      if (k < 0 || k >= nk || known(k)) continue;
      const std::int64_t i1 = std::max<std::int64_t>(0, k - (wl - 1)), i2 = std::min(ws - 1, k);
      double v = ihi >= ilo ? s[t] : 0.0;
      const std::int64_t c1 = ihi >= ilo ? std::min(ilo - 1, i2) : i2;
      for (std::int64_t i = i1; i <= c1; ++i) v += A[i] * B[k - i];
      if (ihi >= ilo)
        for (std::int64_t i = std::max(ihi + 1, i1); i <= i2; ++i) v += A[i] * B[k - i];
      memo.emplace_back(k, v * sc);
    }
  };
  auto U = [&](std::int64_t k) -> double {
    if (k < 0 || k >= nk) return 0.0;
    for (const auto& kv : memo)
      if (kv.first == k) return kv.second;
    const double v = U_dot(k) * sc;
    memo.emplace_back(k, v);
    return v;
  };
  // sum over c >= k of U_win = sum_i A[i] Bt(k - i), Bt(l) = sum(B[max(l, 0):]) (0 for l >= wl).
  // For i < k - wl + 1 the term is 0; for i > k, Bt = the whole of B; in between, Bt(k - i) grows by
  // one entry B[k - i] per step of i. That middle stretch is cut into four segments whose starting
  // tail sums come from the segment sums of B, and the four running sums advance together
  // (independent chains instead of one). Every tail sum is a positive sum of at most |B| entries,
  // every partial sum of products a positive sum of at most |A| products, whatever the order
  // (§4.3, §4.10: the bound r does not depend on it).
  auto tail = [&](std::int64_t k_in) -> double { return tail_dot(A, ws, B, wl, k_in) * sc; };
  std::vector<double> lo_t, up_t;
  // (lower, upper) of the terms a U(k - 1) - b U(k), k = k1..k2 (§4.5)
  auto terms = [&](std::int64_t k1, std::int64_t k2) {
    lo_t.clear();
    up_t.clear();
    if (k2 < k1) return;
    for (std::int64_t k = k1 - 1; k <= k2; ++k)  // the values not yet known, four at a time
      if (k >= 0 && k < nk && !known(k)) {
        Upass(k);
        k += kPass - 1;
      }
    double X = U(k1 - 1);
    for (std::int64_t k = k1; k <= k2; ++k) {
      const double Y = U(k);
      lo_t.push_back(X * aM - Y * bP - tiny_term);
      up_t.push_back(X * aP - Y * bM + tiny_term);
      X = Y;
    }
    nterms += k2 - k1 + 1;
  };

  const double mu = static_cast<double>(j) * p + static_cast<double>(npop - 1 - j) * q - static_cast<double>(a0 + b0);
  const double var = static_cast<double>(npop - 1) * p * q;
  double guess = a > 0 ? mu + var * std::log(b / a) + 0.5 : static_cast<double>(nk);
  if (std::isnan(guess)) guess = 0.0;  // (0 * inf: any start is valid, the search is certified)
  std::int64_t k_le = -1, k_gt = nk + 1;
  const double gc = std::min(std::max(std::nearbyint(guess), 0.0), static_cast<double>(nk));
  std::int64_t center = static_cast<std::int64_t>(gc);
  std::int64_t half = kBand, step = 2 * kBand;
  while (k_gt - k_le - 1 > 2 * half + 1) {
    const std::int64_t b_le = k_le, b_gt = k_gt;
    const std::int64_t k1 = std::max(center - half, k_le + 1), k2 = std::min(center + half, k_gt - 1);
    terms(k1, k2);
    bool any_le = false, any_gt = false;
    for (std::int64_t k = k1; k <= k2; ++k) {
      const auto t = static_cast<std::size_t>(k - k1);
      if (up_t[t] <= 0 && k <= nk - 1) {
        any_le = true;
        k_le = std::max(k_le, k);
      }
      if (!any_gt && lo_t[t] > 0) {
        any_gt = true;
        k_gt = std::min(k_gt, k);
      }
    }
    if (any_le && any_gt) break;
    if (k_le == b_le && k_gt == b_gt) {
      half *= 2;
    } else if (any_le) {
      center = std::min(k_le + step, k_gt - 1);
    } else if (any_gt) {
      center = std::max(k_gt - step, k_le + 1);
    }
    step *= 2;
  }
  double mid_lo = 0.0, mid_up = 0.0;
  std::int64_t nmid = 0;
  if (k_gt - k_le > 1) {
    terms(k_le + 1, k_gt - 1);
    nmid = static_cast<std::int64_t>(lo_t.size());
    for (std::size_t t = 0; t < lo_t.size(); ++t) {
      mid_lo += std::max(lo_t[t], 0.0);
      mid_up += std::max(up_t[t], 0.0);
    }
  }
  const double cut = 4.0 * std::exp(-nats) * (1 + 4 * kUlpCall);  // mass left out of U_win (§4.6)
  const double up_cut = a * (1 + ra) * cut * (1 + 2 * kU);
  const double lo_cut = b * (1 + rb) * cut * (1 + 2 * kU);
  const double X = U(k_gt - 1), T = tail(k_gt);
  const double p_lo = X * aM - T * eP - tiny_phi, p_up = X * aP - T * eM + tiny_phi;
  const double nm = static_cast<double>(nmid);
  const double up_sum = (mid_up + std::max(p_up, 0.0)) * (1 + 1.01 * (nm + 2) * kU);
  const double up = std::min((up_sum + up_cut) * (1 + 2 * kU), 1.0);
  double lo = mid_lo * (1 - 1.01 * (nm + 2) * kU) + p_lo;
  lo = std::max(lo - lo_cut - 4 * kU * (std::fabs(lo) + lo_cut + tiny_phi), 0.0);
  return ClassBracket{lo, up, std::max(up_cut, lo_cut), ws, wl, nterms};
}

}  // namespace exact_krr
}  // namespace kernels
}  // namespace sharpdp
