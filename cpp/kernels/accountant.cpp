// Python-free kernels of the certified FFT accountant (see accountant.hpp). The bounds are
// derived in docs/accountant.md §3-§4, section named at each function.
#include "accountant.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "dft_simd.hpp"
#include "dft_taylor.hpp"

namespace sharpdp {
namespace kernels {
namespace {

using ssize = std::ptrdiff_t;
constexpr double kU = 0x1.0p-53;

// Compensated summation (Ogita, Rump & Oishi 2005, Sum2; their Prop. 4.5):
// |get() - sum| <= u |sum| + gamma_{m-1}^2 sum |x_i|,  gamma_m = m u / (1 - m u).
struct Sum2 {
  double s = 0, c = 0;
  void add(double x) {
    const double t = s + x;
    const double z = t - s;
    c += (s - (t - z)) + (x - z);
    s = t;
  }
  double get() const { return s + c; }
};


// The log pmf of a kernel call and, for its terms of positive mass, the values log_mgf_logs reads at every lam: the
// log, its absolute value and the node x = (k0 + k) h, each the same double as computed in the loop before (session
// 33: one pass over the positive terms per evaluation, docs/accountant_tail.md §42.1; the same sums in the same order).
struct LogPmf {
  std::vector<double> lg;  // log g_k (-inf where g_k <= 0), every k
  std::vector<double> l, al, x;  // the terms with lg finite, in increasing k
  std::int64_t k0;
  double h;
};

LogPmf logs_fresh(const double* g, ssize K, std::int64_t k0, double h) {
  LogPmf P;
  P.k0 = k0;
  P.h = h;
  P.lg.resize(static_cast<std::size_t>(K));
  std::size_t pos = 0;  // (the positive terms counted first: one allocation of l, al, x; the same doubles)
  for (ssize k = 0; k < K; ++k) pos += g[k] > 0 ? 1 : 0;
  P.l.reserve(pos);
  P.al.reserve(pos);
  P.x.reserve(pos);
  for (ssize k = 0; k < K; ++k) {
    const double l = g[k] > 0 ? std::log(g[k]) : -std::numeric_limits<double>::infinity();
    P.lg[static_cast<std::size_t>(k)] = l;
    if (std::isinf(l)) continue;
    P.l.push_back(l);
    P.al.push_back(std::fabs(l));
    P.x.push_back(static_cast<double>(k0 + k) * h);
  }
  return P;
}

// The last two LogPmfs of this thread, each with a copy of the pmf it was computed from (docs/accountant_tail.md §60.1):
// the accountant evaluates the log-mgf of a lattice pmf (and of its upper pmf g + eta) at many lam (the tilt, the
// Chernoff edges, the Chernoff bounds' searches), and each evaluation took K logarithms of the same pmf before. A call
// whose (K, k0, h) and pmf bits equal a kept entry's reuses its LogPmf: the logarithms of the same doubles, so the same
// doubles bit for bit. Pmfs over kLogsKeep terms are not kept (memory: at most 2 x 40 bytes x kLogsKeep per thread).
constexpr std::size_t kLogsKeep = std::size_t{1} << 19;
struct LogsMemo {
  std::vector<double> g;  // the pmf's bits (compared with memcmp: -0.0 and NaN payloads included)
  LogPmf P;
  bool ok = false;
};

const LogPmf& logs(const double* g, ssize K, std::int64_t k0, double h, LogPmf& local) {
  thread_local LogsMemo memo[2];
  thread_local int last = 0;  // the entry used last
  const auto n = static_cast<std::size_t>(K);
  for (int i = 0; i < 2; ++i) {
    LogsMemo& e = memo[(last + i) % 2];
    if (e.ok && e.P.k0 == k0 && std::memcmp(&e.P.h, &h, sizeof h) == 0 && e.g.size() == n &&
        (n == 0 || std::memcmp(e.g.data(), g, n * sizeof(double)) == 0)) {
      last = (last + i) % 2;
      return e.P;
    }
  }
  if (n > kLogsKeep) {
    local = logs_fresh(g, K, k0, h);
    return local;
  }
  last = 1 - last;  // (the entry not used last is replaced)
  LogsMemo& e = memo[last];
  e.ok = false;  // (an exception below leaves no stale entry)
  e.P = logs_fresh(g, K, k0, h);
  e.g.assign(g, g + n);
  e.ok = true;
  return e.P;
}

Mgf log_mgf_logs(const LogPmf& P, double lam) {
  const auto K = static_cast<std::int64_t>(P.lg.size());
  const std::int64_t k0 = P.k0;
  const double h = P.h;
  double mx = -std::numeric_limits<double>::infinity();
  for (std::int64_t k = 0; k < K; ++k)
    mx = std::max(mx, P.lg[static_cast<std::size_t>(k)] + lam * static_cast<double>(k0 + k) * h);
  double s0 = 0, s1 = 0, s2 = 0;
  // error budget of L (docs/accountant.md §3.5.1): W = sum_k e_k (delta_k + 2u), delta_k the bound
  // on the exponent's error, dm = max (|l_k| + |lam x_k|), m = the number of terms
  double W = 0, dm = 0, m = 0;
  const std::size_t F = P.l.size();
  const double* Lp = P.l.data();
  const double* Ap = P.al.data();
  const double* Xp = P.x.data();
  // in chunks: the exponents, their exponentials in a tight loop, then the sums, the same operations on the same
  // doubles in the same order as one loop per term (docs/accountant_tail.md §60.2: fewer values spilled around exp)
  constexpr std::size_t kChunk = 256;
  double ex[kChunk];
  for (std::size_t j0 = 0; j0 < F; j0 += kChunk) {
    const std::size_t j1 = std::min(F, j0 + kChunk);
    for (std::size_t j = j0; j < j1; ++j) ex[j - j0] = Lp[j] + lam * Xp[j] - mx;
    for (std::size_t j = j0; j < j1; ++j) ex[j - j0] = std::exp(ex[j - j0]);
    for (std::size_t j = j0; j < j1; ++j) {
      const double l = Lp[j];
      const double x = Xp[j];
      const double e = ex[j - j0];
      s0 += e;
      s1 += e * x;
      s2 += e * x * x;
      const double lp = Ap[j] + std::fabs(lam * x);
      W += e * (kU * (3.02 * lp + std::fabs(l + lam * x - mx)) + 2.0 * kU);
      dm = std::max(dm, lp);
      m += 1.0;
    }
  }
  const double m1 = s1 / s0;
  const double ls = std::log(s0);
  const double L = mx + ls;
  // |L - log sum_k g_k e^{lam (k0 + k) h}| <= err, in exact arithmetic on the stored g_k
  double err = std::numeric_limits<double>::infinity();
  const double dmax = kU * (4.04 * dm + 1.01 * std::fabs(mx)) + 2.0 * kU;  // >= every delta_k + 2u
  const double gm = m * kU / (1.0 - m * kU);  // gamma_{m-1} <= gamma_m: the naive sum of m terms >= 0
  if (s0 > 0 && dmax <= 0.009 && gm < 0.1) {
    const double r = gm * (1.0 + gm) + 1.02 * W * (1.0 + (m + 2.0) * kU) / s0;
    if (r < 0.5) err = (r / (1.0 - r) + 2.0 * kU * std::fabs(ls) + kU * std::fabs(L)) * 1.001;
  }
  return {L, m1, std::max(s2 / s0 - m1 * m1, 0.0), err};
}

// Accurate DFT of the folded tilted pmf y (length N) at frequency k: z_k = sum_r y_r e^{-2 pi i r k / N},
// over the nonzero entries (r_j, y_j). Error bound (per component, then |.|_2 <= sqrt 2 max):
//  - twiddle: the angle 2 pi m/N (m = r k mod N reduced to [0, N/2]) is formed with relative error
//    <= 3.01 u, i.e. absolute <= 3.01 pi u < 9.5 u; cos/sin add <= 2 ulp <= 4 u: |tw~ - tw| <= 14 u;
//  - product y_j tw~: relative u;
//  - compensated summation (Ogita, Rump & Oishi 2005, Sum2, Prop. 4.5):
//    |res - s| <= u |s| + gamma_{m-1}^2 sum |p_j|, gamma_m = m u / (1 - m u).
// So |z~_k - z_k| <= sqrt 2 [(15 u + 2 gamma^2) sum|y_j| + u (|Re| + |Im|)] (with a 1% margin).
// The twiddles of dft_accurate, tw(m) = (cos a, sin a) with a = 2 pi (m / N), m in [0, N/2]: when the
// recomputed frequencies need many more twiddles than N/2 + 1, power() tabulates them once (cos, sin interleaved:
// one cache line per lookup). Each entry is the same expression as the direct computation, so the DFT's values
// (and its bound) are the same bit for bit.
// The largest N whose twiddles power() tabulates (2^22 before session 47; docs/accountant_tail.md §72.1).
constexpr std::int64_t kTwiddleMaxN = std::int64_t{1} << 23;

struct Twiddles {
  std::vector<double> cs;  // cs[2m] = cos a, cs[2m + 1] = sin a; empty: compute each twiddle directly
};

inline void twiddle(const Twiddles& tw, std::int64_t m, double Nd, double& cs, double& sn) {
  if (!tw.cs.empty()) {
    cs = tw.cs[2 * static_cast<std::size_t>(m)];
    sn = tw.cs[2 * static_cast<std::size_t>(m) + 1];
    return;
  }
  const double a = 2.0 * M_PI * (static_cast<double>(m) / Nd);
  cs = std::cos(a);
  sn = std::sin(a);
}

Twiddles twiddle_table(std::int64_t N) {
  Twiddles tw;
  const std::size_t H = static_cast<std::size_t>(N / 2 + 1);
  tw.cs.resize(2 * H);
  const double Nd = static_cast<double>(N);
  const std::size_t nb = (H + 4095) / 4096;
  parallel_blocks(nb, 0, [&](std::size_t blk) {
    for (std::size_t m = blk * 4096; m < std::min(H, blk * 4096 + 4096); ++m) {
      const double a = 2.0 * M_PI * (static_cast<double>(m) / Nd);
      tw.cs[2 * m] = std::cos(a);
      tw.cs[2 * m + 1] = std::sin(a);
    }
  });
  return tw;
}

// The twiddle tables of the process kept by N (docs/accountant_tail.md §67.2; docs/composition.md §2.34): a process
// builds tables of the same lengths again and again (get_epsilon's probes; a privacy profile's passes alternate among
// a dozen FFT lengths), and a table's N/2 + 1 sincos cost about as much as the DFT that reads it. A kept table is the
// same doubles as a fresh one (the same expression per entry), so the DFT's values do not depend on whether it was
// kept. Tables are shared read-only (shared_ptr to const) under a mutex: concurrent calls (the GIL is released) never
// see a table being filled. The most recently used first, at most kKeptTables of them and kKeptBytes in all beyond
// the first two (two tables of the largest N, 2^23, 64 MB each: the table's own cap since session 47, §72.1 there).
constexpr std::size_t kKeptTables = 16;
constexpr std::size_t kKeptBytes = std::size_t{136} << 20;

struct KeptTwiddles {
  std::mutex mu;
  std::vector<std::pair<std::int64_t, std::shared_ptr<const Twiddles>>> kept;  // most recently used first
  std::vector<std::pair<std::int64_t, double>> spent;  // twiddles computed directly so far, by N (the last 64 Ns)
};

KeptTwiddles& kept_twiddles() {
  static KeptTwiddles k;
  return k;
}

// (under the lock) the kept table of N, moved to the front, or null
std::shared_ptr<const Twiddles> kept_find(KeptTwiddles& k, std::int64_t N) {
  for (std::size_t i = 0; i < k.kept.size(); ++i)
    if (k.kept[i].first == N) {
      auto e = k.kept[i];
      k.kept.erase(k.kept.begin() + static_cast<std::ptrdiff_t>(i));
      k.kept.insert(k.kept.begin(), e);
      return e.second;
    }
  return nullptr;
}

std::shared_ptr<const Twiddles> twiddle_table_kept(std::int64_t N) {
  KeptTwiddles& k = kept_twiddles();
  {
    std::lock_guard<std::mutex> lock(k.mu);
    if (auto t = kept_find(k, N)) return t;
  }
  auto fresh = std::make_shared<const Twiddles>(twiddle_table(N));
  std::lock_guard<std::mutex> lock(k.mu);
  if (auto t = kept_find(k, N)) return t;  // (another call kept one meanwhile: the same doubles)
  k.kept.insert(k.kept.begin(), {N, fresh});
  std::size_t bytes = 0, keep = 0;
  for (; keep < k.kept.size() && keep < kKeptTables; ++keep) {
    bytes += k.kept[keep].second->cs.size() * sizeof(double);
    if (keep >= 2 && bytes > kKeptBytes) break;
  }
  k.kept.resize(keep);
  return fresh;
}

// The twiddles of power()'s accurate DFT needing `direct` twiddles on N points (the DFT's doubles are the same in
// every case): the kept table of N where there is one; else a fresh table (then kept) where the twiddles computed
// directly for N so far, this call's included, reach 2 (N/2 + 1) (one call's alone before session 49); else none
// (computed directly, and counted).
std::shared_ptr<const Twiddles> twiddles_for(std::int64_t N, double direct) {
  if (N > kTwiddleMaxN) return std::make_shared<const Twiddles>();
  const double need = 2.0 * static_cast<double>(N / 2 + 1);
  KeptTwiddles& k = kept_twiddles();
  {
    std::lock_guard<std::mutex> lock(k.mu);
    if (auto t = kept_find(k, N)) return t;
    std::size_t i = 0;
    while (i < k.spent.size() && k.spent[i].first != N) ++i;
    const double total = direct + (i < k.spent.size() ? k.spent[i].second : 0.0);
    if (total < need) {
      if (i < k.spent.size()) {
        k.spent[i].second = total;
      } else {
        if (k.spent.size() >= 64) k.spent.erase(k.spent.begin());
        k.spent.emplace_back(N, total);
      }
      return std::make_shared<const Twiddles>();
    }
    if (i < k.spent.size()) k.spent.erase(k.spent.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return twiddle_table_kept(N);
}

// Accurate DFT of the folded tilted pmf y (length N) at frequency k: z_k = sum_r y_r e^{-2 pi i r k / N},
// over the nonzero entries (r_j, y_j). Error bound (per component, then |.|_2 <= sqrt 2 max):
//  - twiddle: the angle 2 pi m/N (m = r k mod N reduced to [0, N/2]) is formed with relative error
//    <= 3.01 u, i.e. absolute <= 3.01 pi u < 9.5 u; cos/sin add <= 2 ulp <= 4 u: |tw~ - tw| <= 14 u;
//  - product y_j tw~: relative u;
//  - compensated summation (Ogita, Rump & Oishi 2005, Sum2, Prop. 4.5):
//    |res - s| <= u |s| + gamma_{m-1}^2 sum |p_j|, gamma_m = m u / (1 - m u).
// So |z~_k - z_k| <= sqrt 2 [(15 u + 2 gamma^2) sum|y_j| + u (|Re| + |Im|)] (with a 1% margin).
// m = r_j k mod N is formed exactly (integers; consecutive r_j step m by k). B frequencies share one pass over
// (r_j, y_j), each with its own sums in the same order: the values do not depend on B.
// One frequency's twiddle at node r_j: its index m0 = r_j k mod N advanced by k (step: r_j = r_{j-1} + 1) or formed
// anew, reduced to [0, N/2] with the sign sg of the imaginary part.
inline void dft_twiddle(bool step, std::int64_t rj, std::int64_t k, std::int64_t N, double Nd, const Twiddles& tw,
                        std::int64_t& m0, double& cs, double& sn, double& sg) {
  if (step) {
    m0 += k;
    if (m0 >= N) m0 -= N;
  } else {
    m0 = (rj * k) % N;  // r, k < N <= 2^26: no overflow
  }
  std::int64_t m = m0;
  sg = -1.0;  // e^{-i a}: imaginary part -sin a
  if (2 * m > N) {
    m = N - m;
    sg = 1.0;
  }
  twiddle(tw, m, Nd, cs, sn);
}

// the DFT's value and bound from its two compensated sums (the bound of the comment above)
inline void dft_put(double zr, double zi, double mcount, double ysum, std::complex<double>& z, double& err) {
  const double g = mcount * kU / (1.0 - mcount * kU);
  z = {zr, zi};
  err = std::sqrt(2.0) * ((15.0 * kU + 2.0 * g * g) * ysum + kU * (std::fabs(zr) + std::fabs(zi))) * 1.01;
}

template <int B>
void dft_accurate(const std::vector<std::int64_t>& r, const std::vector<double>& y, double ysum, const std::int64_t* ks,
                  std::int64_t N, const Twiddles& tw, std::complex<double>* z, double* err) {
  Sum2 re[B], im[B];
  std::int64_t m0[B] = {};
  const double Nd = static_cast<double>(N);
  std::int64_t rprev = -2;
  for (std::size_t j = 0; j < r.size(); ++j) {
    const bool step = r[j] == rprev + 1;
    rprev = r[j];
    const double yj = y[j];
    for (int b = 0; b < B; ++b) {
      double cs, sn, sg;
      dft_twiddle(step, r[j], ks[b], N, Nd, tw, m0[b], cs, sn, sg);
      re[b].add(yj * cs);
      im[b].add(sg * yj * sn);
    }
  }
  for (int b = 0; b < B; ++b) dft_put(re[b].get(), im[b].get(), static_cast<double>(r.size()), ysum, z[b], err[b]);
}

inline double log_phibar(double x) {
  // log Phibar(x), an upper value: erfc for x < 30 (relative error < 64u, covered by the
  // caller's margin), else the Mills-ratio bound Phibar(x) <= phi(x)/x.
  if (x < 30.0) return std::log(0.5 * std::erfc(x / std::sqrt(2.0)));
  return -0.5 * x * x - std::log(x * std::sqrt(2.0 * M_PI));
}

}  // namespace

std::size_t lattice_size(std::size_t ncells, std::int64_t J, const char* who) {
  if (J < 1 || ncells % static_cast<std::size_t>(J) != 0)
    throw std::invalid_argument(std::string(who) + ": cell arrays must have equal length, a multiple of J");
  return ncells / static_cast<std::size_t>(J);
}

// Lattice pmf of the hat-rounded clamped variable (docs/accountant.md §3.2): cell j of [x0 + jh,
// x0 + (j+1)h] sends m_j - w_j to node j and w_j to node j+1; clamp atoms at both ends.
// The cells may be given J times finer (fine cell i = [x0 + i h/J, x0 + (i+1) h/J], local
// moment w_i in units of h/J): they are merged exactly, m_j = sum m_i, w_j = sum (l m_i + w_i)/J
// with l = i - jJ (finer cells keep the law's quadrature on its accurate narrow-cell path).
// The returned pmf is the hat law of a moment bound w_j^+ >= w_j (see below), an upper law.
void assemble(const Cells& cells, std::int64_t J, const ClampAtoms& atoms, double* psi, double* eta) {
  const ssize K = static_cast<ssize>(lattice_size(cells.ncells, J, "assemble"));
  std::fill(psi, psi + K + 1, 0.0);
  std::fill(eta, eta + K + 1, 0.0);
  double* P = psi;
  double* E = eta;
  const double *M = cells.m, *W = cells.w, *EM = cells.em, *EW = cells.ew;
  const double lo_mass = atoms.lo_mass, lo_err = atoms.lo_err, hi_mass = atoms.hi_mass, hi_err = atoms.hi_err;
  const double invJ = 1.0 / static_cast<double>(J);
  const double rnd = (static_cast<double>(J) + 4.0) * kU;  // merging sums (J terms, exact scalings)
  for (ssize j = 0; j < K; ++j) {
    double mj = 0, wj = 0, emj = 0, ewj = 0;
    for (ssize l = 0; l < J; ++l) {
      const ssize i = j * J + l;
      const double mi = M[i];
      const double wi = std::min(std::max(W[i], 0.0), mi);
      mj += mi;
      wj += (static_cast<double>(l) * mi + wi) * invJ;
      emj += EM[i];
      ewj += (static_cast<double>(l + 1) * EM[i] + EW[i]) * invJ;  // (+EM: the clamp of w_i to m_i)
    }
    if (J > 1) {
      emj += rnd * mj;
      ewj += 2.0 * rnd * wj + rnd * mj;
    }
    // Moment errors become an upward shift instead of a TV error: w_j + ewj >= the true
    // moment, so the cell's hat law with that moment is stochastically larger than the true
    // one (E[(S)_+] only grows). Only the mass errors (<= emj, plus <= emj through the
    // clamp to m_j) remain as pmf errors.
    wj = std::min(std::max(wj, 0.0) + ewj * (1.0 + 4.0 * kU) + 2.0 * kU * wj, mj);
    P[j] += mj - wj;
    P[j + 1] += wj;
    E[j] += 2.0 * emj + 2.0 * kU * mj;
    E[j + 1] += emj + 2.0 * kU * wj;
  }
  P[0] += lo_mass;
  E[0] += lo_err;
  P[K] += hi_mass;
  E[K] += hi_err;
  for (ssize j = 0; j <= K; ++j) E[j] = E[j] * (1.0 + 8.0 * kU) + 4.0 * kU * P[j];
}

// Lattice pmf of a convex-order LOWER discretisation (docs/accountant.md §4.2, "centroid on the lattice").
// Input: J fine cells per lattice step (fine cell i = [x0 + i h/J, x0 + (i+1) h/J], mass m_i,
// local moment w_i = E[(L - x_i)/(h/J); cell], errors em_i, ew_i) plus the clamp atoms at
// node 0 and node K = ncells/J. Consecutive fine cells (the cell cut at a group's end is
// split by an independent coin: a randomised sigma-field) are merged into groups whose
// conditional mean is (in exact arithmetic) the lattice node t_g; the group's mass goes to
// t_g. The first node >= (mean of the group's first piece) + 1e-6 is its target. The last,
// unfinished group goes to the floor of a certified lower value of its mean.
// Outputs psi, eta (pmf error bounds) and mom_err, where mom_err[k] >= sum over the groups
// assigned to node k of |computed - true moment of the group about k| (lattice units).
void lower_lattice(const Cells& cells, std::int64_t J, const ClampAtoms& atoms, bool down, double* psi,
                   double* eta, double* mom_err) {
  const auto NC = static_cast<ssize>(cells.ncells);
  const std::int64_t K = static_cast<std::int64_t>(lattice_size(cells.ncells, J, "lower_lattice"));
  std::fill(psi, psi + K + 1, 0.0);
  std::fill(eta, eta + K + 1, 0.0);
  std::fill(mom_err, mom_err + K + 1, 0.0);
  double* P = psi;
  double* E = eta;
  double* ME = mom_err;
  const double *M = cells.m, *W = cells.w, *EM = cells.em, *EW = cells.ew;
  const double lo_mass = atoms.lo_mass, lo_err = atoms.lo_err, hi_mass = atoms.hi_mass, hi_err = atoms.hi_err;
  const double invJ = 1.0 / static_cast<double>(J);
  bool active = false;
  std::int64_t t = 0;
  double Mg = 0, D = 0, De = 0, Me = 0, Dabs = 0, cnt = 0;
  // item: mass mi at left edge xl (lattice units) with moment-offset wl (mass * (mean - xl))
  auto item = [&](double mi, double xl, double wl, double emi, double ewi) {
    while (mi > 0) {
      if (!active) {
        // the nearest node above c (the margin 1e-6 >> the rounding of d, ~u K, keeps the first
        // piece's moment about t negative, so every group takes mass): a group borrows the mass that
        // lifts its mean to t from the next pieces, a variance loss ~ (t - c) x (their distance)
        const double c = xl + std::min(std::max(wl / mi, 0.0), invJ);
        t = static_cast<std::int64_t>(std::ceil(c + 1e-6));
        active = true;
        Mg = D = De = Me = Dabs = cnt = 0;
      }
      const double dt = xl - static_cast<double>(t);
      const double d = mi * dt + wl;  // moment of the item about t
      const double de = emi * std::fabs(dt) + ewi + 4 * kU * (std::fabs(mi * dt) + std::fabs(wl));
      if (D + d < 0 || d <= 0) {
        Mg += mi; D += d; De += de; Me += emi; Dabs += std::fabs(d); cnt += 1;
        return;
      }
      const double a = std::min(-D / d, 1.0);  // fraction closing the group at mean t
      Mg += a * mi; De += a * de; Me += a * emi; Dabs += std::fabs(a * d) + std::fabs(D);
      P[down ? K - t : t] += Mg;
      E[down ? K - t : t] += Me + (cnt + 4) * kU * Mg;
      ME[down ? K - t : t] += De + (cnt + 4) * kU * Dabs;
      active = false;
      mi *= (1 - a); wl *= (1 - a); emi *= (1 - a); ewi *= (1 - a);
      if (a >= 1.0) return;
    }
  };
  // down: the same sweep in the reflected coordinate y = K - x (from the top end down), so the
  // unfinished last group sits at the bottom end, where the tilt gives it little weight.
  const double Kd = static_cast<double>(K);
  item(down ? hi_mass : lo_mass, 0.0, 0.0, down ? hi_err : lo_err, 0.0);
  for (ssize ii = 0; ii < NC; ++ii) {
    const ssize i = down ? NC - 1 - ii : ii;
    const double mi = M[i];
    if (mi <= 0) continue;
    const double wi = std::min(std::max(W[i], 0.0), mi) * invJ;  // mass * (mean - left edge)
    const double xl = static_cast<double>(i) * invJ;
    if (down)
      item(mi, Kd - xl - invJ, mi * invJ - wi, EM[i], (EW[i] + EM[i]) * invJ);
    else
      item(mi, xl, wi, EM[i], (EW[i] + EM[i]) * invJ);  // (+EM: the clamp of w_i to m_i)
  }
  item(down ? lo_mass : hi_mass, Kd, 0.0, down ? lo_err : hi_err, 0.0);
  if (active && Mg > 0 && -D <= 1e-9 * Mg) {
    // balanced up to rounding: assign t and count the deficit as overshoot
    P[down ? K - t : t] += Mg;
    E[down ? K - t : t] += Me + (cnt + 4) * kU * Mg;
    ME[down ? K - t : t] += std::fabs(D) + De + (cnt + 8) * kU * Dabs;
  } else if (active && Mg > 0) {
    // certified lower value of the group mean (in x), floored to the lattice: never an overshoot
    const double sg = down ? 1.0 : -1.0;  // bound the y-mean from above (down) or below (up)
    const double num = D + sg * (De + (cnt + 8) * kU * Dabs);
    const double den = (num < 0) == down ? Mg + Me : Mg - Me * (1 + 4 * kU);
    const double tol = 1e-9 * (1.0 + static_cast<double>(std::llabs(t)));
    const double ym = den > 0 ? static_cast<double>(t) + num / den + sg * tol : (down ? Kd + 1.0 : -1.0);
    const double lo_mean = down ? Kd - ym : ym;
    std::int64_t k = static_cast<std::int64_t>(std::floor(lo_mean));
    k = std::max<std::int64_t>(std::min<std::int64_t>(k, K), 0);
    // (all mass lies in [node 0, node K], so node 0 never exceeds the true mean)
    P[k] += Mg;
    E[k] += Me + (cnt + 4) * kU * Mg;
  }
  for (ssize j = 0; j <= K; ++j) {
    E[j] = E[j] * (1.0 + 8.0 * kU) + 4.0 * kU * P[j];
    ME[j] *= 1 + 1e-6;
  }
}

Mgf log_mgf(const double* g, std::size_t K, std::int64_t k0, double h, double lam) {
  LogPmf local;
  return log_mgf_logs(logs(g, static_cast<ssize>(K), k0, h, local), lam);
}

double solve_theta(const double* g, std::size_t K, std::int64_t k0, double h, double theta_floor) {
  LogPmf local;
  const LogPmf& G = logs(g, static_cast<ssize>(K), k0, h, local);
  Mgf M = log_mgf_logs(G, theta_floor);
  if (M.d1 >= 0) return theta_floor;
  // safeguarded Newton (Lambda' is increasing, Lambda'' = the tilted variance); any theta >= the
  // floor gives a valid tilt, the root only makes it efficient. How the root is found is a choice of speed
  // (docs/accountant_tail.md §25): the first upper end is tried at Newton's step from the floor (below a convex
  // Lambda', a right-skewed tilted law, the tangent's root is at or above the root: one evaluation, where the
  // doubling from 1/h took ten to twenty), the doubling search remains where it is not an upper end, and a bracket
  // spanning more than a factor 4 is bisected geometrically.
  double lo = theta_floor, hi = std::numeric_limits<double>::infinity(), x = theta_floor;
  const double x1 = M.d2 > 0 ? theta_floor - M.d1 / M.d2 : 0.0;
  if (std::isfinite(x1) && x1 > theta_floor) {
    const Mgf M1 = log_mgf_logs(G, x1);
    if (M1.d1 >= 0) {
      hi = x = x1;
      M = M1;
    } else {
      lo = x1;
    }
  }
  if (!std::isfinite(hi)) {
    double top = std::max(2.0 * lo, 1.0 / h);
    Mgf Mt = log_mgf_logs(G, top);
    for (int i = 0; i < 200 && Mt.d1 < 0; ++i) {
      lo = top;
      top *= 2.0;
      Mt = log_mgf_logs(G, top);
    }
    if (Mt.d1 < 0) throw std::domain_error("tilt: no positive mass");
    hi = x = top;
    M = Mt;
  }
  double dx_prev = hi - lo;
  for (int i = 0; i < 100; ++i) {  // M = Lambda at x, lo <= x <= hi, Lambda'(lo) < 0 <= Lambda'(hi)
    if (M.d1 < 0) lo = x; else hi = x;
    if (hi - lo <= 1e-12 * hi) return 0.5 * (lo + hi);
    double xn = M.d2 > 0 ? x - M.d1 / M.d2 : lo;
    // (a Newton step that leaves the bracket or does not halve the previous step, e.g. from the right of a steeply
    // convex Lambda', is replaced by a bisection: Numerical Recipes' rtsafe rule)
    if (!(xn > lo && xn < hi) || std::fabs(xn - x) > 0.5 * dx_prev)
      xn = (lo > 0 && hi > 4.0 * lo) ? std::sqrt(lo * hi) : 0.5 * (lo + hi);
    dx_prev = std::fabs(xn - x);
    const bool done = dx_prev <= 1e-10 * x;
    x = xn;
    if (done) break;
    M = log_mgf_logs(G, x);
  }
  return x;
}

Tilt tilt(const double* g, const double* eta, std::size_t Ksz, std::int64_t k0, double h, double theta, double* out) {
  const auto K = static_cast<ssize>(Ksz);
  const double* G = g;
  const double* Et = eta;
  double* O = out;
  LogPmf local;
  const Mgf M = log_mgf_logs(logs(G, K, k0, h, local), theta);
  double tau = 0;
  Sum2 ms;
  // the exponents, then their exponentials in a tight loop (in place in out), then the products and sums: the same
  // operations on the same doubles in the same order as one loop per term (docs/accountant_tail.md §60.2)
  for (ssize k = 0; k < K; ++k) O[k] = theta * static_cast<double>(k0 + k) * h - M.L;
  for (ssize k = 0; k < K; ++k) O[k] = std::exp(O[k]);
  for (ssize k = 0; k < K; ++k) {
    const double ex = O[k];
    O[k] = G[k] * ex;
    ms.add(O[k]);
    tau += Et[k] * ex * (1.0 + 1e-12) + O[k] * kU * (std::fabs(theta * static_cast<double>(k0 + k) * h) + std::fabs(M.L) + 8.0);
  }
  // the mass by compensated summation (all terms >= 0): relative error <= u + gamma_K^2
  const double mass = ms.get();
  const double gK = static_cast<double>(K) * kU / (1.0 - static_cast<double>(K) * kU);
  const double mrel = 2.0 * kU + 2.0 * gK * gK;
  tau += mass * mrel;
  tau *= 1.0 + static_cast<double>(K + 2) * kU;  // (rounding of the sum of the bounds)
  return {M.L, M.d1, M.d2, tau, mass * (1.0 + mrel)};
}

// Smallest edge b certified by one Chernoff bound: P(S >= b) <= exp(log_target) (dir=+1) or
// P(S <= b) <= exp(log_target) (dir=-1): b(lam) = dir (n log M(dir lam) - log_target)/lam,
// minimised over lam > 0 (any lam is valid: the best value evaluated is returned). With
// l(lam) = log M(dir lam), the objective (n l - log_target)/lam is stationary where
// phi(lam) = n (lam l' - l) + log_target = 0, and phi' = n lam l'' >= 0: safeguarded Newton on
// phi inside [lam_scale e^-12, lam_scale e^12] (geometric bisection when a step leaves it).
ChernoffEdge chernoff_edge_bound(const double* gt, std::size_t K, std::int64_t k0, double h, double n,
                                 double log_target, int dir, double lam_scale) {
  LogPmf local;
  const LogPmf& G = logs(gt, static_cast<ssize>(K), k0, h, local);
  double allowance = std::numeric_limits<double>::infinity();
  const double sgn = dir > 0 ? 1.0 : -1.0;
  double a = lam_scale * std::exp(-12.0), b = lam_scale * std::exp(12.0), lam = lam_scale;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 60; ++i) {
    const Mgf M = log_mgf_logs(G, sgn * lam);
    const double obj = (n * M.L - log_target) / lam;
    if (obj < best) {
      best = obj;
      // exponent -lam b + n L_exact <= log_target + n err + the rounding of obj (§3.5.1)
      allowance = (n * M.err + 1.01 * kU * (3.0 * std::fabs(n * M.L) + 2.0 * std::fabs(log_target))) * 1.001;
    }
    const double phi = n * (lam * sgn * M.d1 - M.L) + log_target, dphi = n * lam * M.d2;
    if (phi < 0) a = lam; else b = lam;
    double next = dphi > 0 ? lam - phi / dphi : 0.0;
    if (!(next > a && next < b)) next = std::sqrt(a * b);
    if (std::fabs(next - lam) <= 1e-6 * lam || b <= a * (1.0 + 1e-9)) break;
    lam = next;
  }
  return {sgn * best, allowance};
}

double chernoff_edge(const double* gt, std::size_t K, std::int64_t k0, double h, double n, double log_target,
                     int dir, double lam_scale) {
  return chernoff_edge_bound(gt, K, k0, h, n, log_target, dir, lam_scale).edge;
}

// The complex logarithm of the power step, the same doubles as std::log (docs/accountant_tail.md §42.1). glibc's clog
// (s_clog_template.c) computes Re log z = log1p(x^2 + y^2 - 1) / 2 on its branch 1/2 <= x < 1, y >= eps/2,
// x^2 + y^2 >= 1/2 (x = max(|Re z|, |Im z|), y = the other), with x^2 + y^2 - 1 from __x2y2m1: the exact products
// x^2 = a1 + a0, y^2 = b1 + b0 (Dekker), the five terms with -1 ordered by absolute value by qsort, four
// error-free additions each followed by another qsort of the terms above, and the sum from the largest term down.
// Its six qsort calls (a stable merge sort of at most five doubles through a comparison callback) cost more than the
// rest of the power step at the frequencies of |z| near 1, most of them for a few hundred users. clog_same runs the
// same operations with a stable insertion sort, which yields the same order (a stable sort's output is unique), so
// the same doubles; Im log z = atan2(Im z, Re z) as there. Every other z goes to std::log. clog_same checks the
// identity once per process on 1024 points of that branch (ties |Re z| = |Im z| and |z| within 2^-40 of 1
// included; clog_same_mismatches runs the same check on more points, for tests/cpp/kernels_check.cpp); where any
// differs (another libm), std::log is used throughout.
namespace {
inline void sort_abs(double* v, int m) {
  for (int i = 1; i < m; ++i) {
    const double x = v[i], ax = std::fabs(x);
    int j = i - 1;
    while (j >= 0 && std::fabs(v[j]) > ax) {
      v[j + 1] = v[j];
      --j;
    }
    v[j + 1] = x;
  }
}

inline void square_split(double a, double& hi, double& lo) {  // hi + lo = a^2 exactly (Veltkamp, Dekker)
  hi = a * a;
  const double c = 134217729.0 * a;
  const double ah = c - (c - a), al = a - ah;
  lo = ((ah * ah - hi) + 2.0 * ah * al) + al * al;
}

inline double x2y2m1(double x, double y) {
  double v[5];
  square_split(x, v[1], v[0]);
  square_split(y, v[3], v[2]);
  v[4] = -1.0;
  sort_abs(v, 5);
  for (int i = 0; i <= 3; ++i) {
    const double hi = v[i + 1] + v[i];
    const double lo = (v[i + 1] - hi) + v[i];
    v[i + 1] = hi;
    v[i] = lo;
    sort_abs(v + i + 1, 4 - i);
  }
  return v[4] + v[3] + v[2] + v[1] + v[0];
}

inline bool clog_branch(double ax, double ay) {
  return ax < 1.0 && ax >= 0.5 && ay >= std::numeric_limits<double>::epsilon() / 2 && ax * ax + ay * ay >= 0.5;
}

inline std::complex<double> clog_fast(const std::complex<double>& z) {
  double ax = std::fabs(z.real()), ay = std::fabs(z.imag());
  if (ax < ay) std::swap(ax, ay);
  if (clog_branch(ax, ay)) return {std::log1p(x2y2m1(ax, ay)) / 2, std::atan2(z.imag(), z.real())};
  return std::log(z);
}

std::size_t clog_mismatches(std::size_t count) {
  std::uint64_t st = 0x9E3779B97F4A7C15ULL;
  auto next = [&st]() {  // splitmix64: a fixed sequence, no global state
    std::uint64_t r = (st += 0x9E3779B97F4A7C15ULL);
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ULL;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBULL;
    return r ^ (r >> 31);
  };
  auto unit = [&next]() { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  std::size_t bad = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double r = (i % 4 == 3) ? 1.0 - std::ldexp(1.0, -static_cast<int>(next() % 40) - 1) : 0.71 + 0.29 * unit();
    const double a = 2.0 * M_PI * unit();
    std::complex<double> z = std::polar(r, a);
    if (i % 8 == 5) z = {z.real(), (i % 16 == 5) ? z.real() : -z.real()};
    const std::complex<double> u = std::log(z), v = clog_fast(z);
    bad += !(u.real() == v.real() && u.imag() == v.imag());
  }
  return bad;
}

// (checked when the library is loaded: the import, not the first call of a process forked after it, pays it)
const bool kClogSame = clog_mismatches(1024) == 0;

inline std::complex<double> clog_same(const std::complex<double>& z) {
  return kClogSame ? clog_fast(z) : std::log(z);
}
}  // namespace

std::size_t clog_same_mismatches(std::size_t count) { return clog_mismatches(count); }

void round_out(const double* x, std::size_t n, double* out, bool upward) {
  const double c = 4.0 * 0x1p-53;  // 4u (a power of 2: Python's 4 * U)
  if (upward) {
    for (std::size_t i = 0; i < n; ++i) {
      const double t = std::fabs(x[i]) * c;
      out[i] = (x[i] + t) + 1e-300;
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const double t = std::fabs(x[i]) * c;
      out[i] = (x[i] - t) - 1e-300;
    }
  }
}

// The low frequencies 0..K of y's DFT by blocks with a Taylor expansion of the phase, and their bound
// (cpp/kernels/dft_taylor.hpp; docs/accountant_tail.md §72.2).
double dft_low(const double* y, std::int64_t N, std::int64_t K, std::complex<double>* z) {
  return dft_taylor::dft_blocks(y, N, K, z, [](std::size_t nb, auto&& body) { parallel_blocks(nb, 0, body); });
}

bool set_dft_simd(int on) {
  dft_simd::enabled_flag().store(on != 0 ? 1 : 0);
  return dft_simd::active();
}

// Power step (docs/accountant.md §3.6.3-3.6.4): Q = exp(n Log z) per frequency, z the computed rfft of the
// tilted pmf with componentwise error <= e. Returns the l2 norms over the full (Hermitian)
// spectrum of the bound on |Q~ - Q| and of Q~. Error model per frequency:
//   |z~^n - z^n| <= n e (|z~| + e)^(n-1)   (mean value theorem on the segment)
//   evaluating exp(n Log z~): exponent error <= n (2u (|log|z~|| + pi + 1)) + u |n Log z~|,
//   so relative error <= expm1(that) + 4u.
// The FFT's normwise bound e is pessimistic (~ C log2 N u sqrt N); the frequencies whose
// mean-value term n e (|z~| + e)^(n-1) exceeds thr are recomputed by dft_accurate from y (the
// folded vector, nonzeros only) with their own tiny bound, largest terms first, within a
// budget of max_work multiply-adds. Returns also the number of frequencies recomputed.
// power()'s loops run on one thread up to these sizes (docs/composition.md §2.34.2: a thread's start costs ~30 us of
// CPU, the loop ~5 ns a frequency; on 2 cores shared by several processes the second thread rarely shortens a call)
constexpr std::size_t kPowerThreadBlocks = 16;  // frequencies by 8192: M <= 131,072
constexpr double kPowerThreadWork = 4e6;  // the accurate DFT's multiply-adds

Power power(const std::complex<double>* z, std::size_t Msz, double n, double e, std::int64_t N, const double* y,
            double thr, double max_work, std::complex<double>* out) {
  const auto M = static_cast<ssize>(Msz);
  std::complex<double>* Op = out;
  const std::complex<double>* Zp = z;
  // the recomputed frequencies by k, with their DFT and its bound (every other frequency: Zp and e); a sorted list,
  // not arrays of M entries (their allocation and page faults cost more than the loop: docs/composition.md §2.34)
  struct Fix {
    std::int64_t k;
    std::complex<double> z;
    double e;
  };
  std::vector<Fix> fixes;
  {
    if (e > 0 && thr > 0 && n > 1) {
      std::vector<std::pair<double, std::int64_t>> big;
      // n e (|z| + e)^(n-1) > thr  <=>  |z| > zc - e (a cheap pre-test on |z|^2, with a margin)
      const double lne = std::log(n * e), lthr = std::log(thr);
      const double zc = std::exp((lthr - lne) / (n - 1.0)) * (1.0 - 1e-12) - e;
      const double zc2 = zc > 0 ? zc * zc : -1.0;
      for (ssize k = 0; k < M; ++k) {
        if (std::norm(Zp[k]) <= zc2) continue;
        const double lb = lne + (n - 1.0) * std::log(std::abs(Zp[k]) + e);
        if (lb > lthr) big.emplace_back(lb, static_cast<std::int64_t>(k));
      }
      const double* Y = y;
      std::vector<std::int64_t> rr;
      std::vector<double> yy;
      double ysum = 0;
      if (!big.empty())  // (no frequency to recompute: the nonzeros of y are not needed)
        for (std::int64_t i = 0; i < N; ++i)
          if (Y[i] != 0.0) {
            rr.push_back(i);
            yy.push_back(Y[i]);
            ysum += std::fabs(Y[i]);
          }
      ysum *= 1.0 + static_cast<double>(N) * kU * 1.01;
      const double nnz = std::max<double>(1.0, static_cast<double>(rr.size()));
      const std::size_t cap = static_cast<std::size_t>(max_work / nnz);
      if (big.size() > cap) {
        std::nth_element(big.begin(), big.begin() + static_cast<std::ptrdiff_t>(cap), big.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        big.resize(cap);
      }
      if (!big.empty()) {
        // tabulate the twiddles when the DFT's calls on N need at least 2 times as many (one call's alone before session
        // 49; 4 before session 33: the same doubles) (at most 2^22 + 1 entries, 64 MB; 2^21 + 1 before session 47,
        // docs/accountant_tail.md §72.1: the same doubles)
        const double direct = static_cast<double>(big.size()) * static_cast<double>(rr.size());
        // (the table kept across calls by N: the same doubles, docs/accountant_tail.md §67.2)
        const std::shared_ptr<const Twiddles> twp = twiddles_for(N, direct);
        const Twiddles& tw = *twp;
        std::vector<std::complex<double>> zacc(big.size());
        std::vector<double> eacc(big.size());
        const bool simd = dft_simd::active();
        (void)simd;
        const std::size_t nb = (big.size() + 15) / 16;
        // (one thread below kPowerThreadWork multiply-adds: starting threads costs more; the same doubles either way)
        parallel_blocks(nb, direct < kPowerThreadWork ? 1 : 0, [&](std::size_t blk) {
          const std::size_t i1 = std::min(big.size(), blk * 16 + 16);
          std::int64_t ks[4];
          std::size_t i = blk * 16;
#ifdef SHARPDP_DFT_AVX2
          if (simd && !tw.cs.empty()) {  // eight (then four) frequencies per pass in AVX2 lanes (§67.1 of
            // docs/accountant_tail.md): each lane the scalar code's doubles; a short tail padded with its last frequency
            std::int64_t k8[8];
            double sc[32];
            while (i < i1) {
              const std::size_t cnt = std::min<std::size_t>(i1 - i, 8);
              const std::size_t w = cnt > 4 ? 8 : 4;
              for (std::size_t b = 0; b < w; ++b) k8[b] = big[i + std::min(b, cnt - 1)].second;
              if (w == 8)
                dft_simd::dft_lanes<2>(rr.data(), yy.data(), rr.size(), k8, N, tw.cs.data(), sc);
              else
                dft_simd::dft_lanes<1>(rr.data(), yy.data(), rr.size(), k8, N, tw.cs.data(), sc);
              for (std::size_t b = 0; b < cnt; ++b)
                dft_put(sc[4 * b] + sc[4 * b + 1], sc[4 * b + 2] + sc[4 * b + 3], static_cast<double>(rr.size()),
                        ysum, zacc[i + b], eacc[i + b]);
              i += cnt;
            }
          }
#endif
          for (; i + 4 <= i1; i += 4) {  // four frequencies per pass over y
            for (int b = 0; b < 4; ++b) ks[b] = big[i + static_cast<std::size_t>(b)].second;
            dft_accurate<4>(rr, yy, ysum, ks, N, tw, &zacc[i], &eacc[i]);
          }
          for (; i < i1; ++i) dft_accurate<1>(rr, yy, ysum, &big[i].second, N, tw, &zacc[i], &eacc[i]);
        });
        for (std::size_t i = 0; i < big.size(); ++i) fixes.push_back({big[i].second, zacc[i], eacc[i]});
        std::sort(fixes.begin(), fixes.end(), [](const Fix& a, const Fix& b) { return a.k < b.k; });
      }
    }
  }
  const std::size_t nb = static_cast<std::size_t>((M + 8191) / 8192);
  std::vector<double> e2(nb, 0.0), qq(nb, 0.0);
  // Negligible frequencies (docs/accountant.md §3.6.3): if |z~| (rounded up) + e <= r_skip =
  // e^{-760/(n-1)}, then |z~|^n <= e^{-760} (q is 0 in double) and n e (|z~| + e)^{n-1} <=
  // n e e^{-760}: the per-frequency bound is below 1e-300 and the transcendental functions are
  // skipped. Those bounds are charged together at the end as 1e-300 per frequency (in l2 norm,
  // with the Hermitian weight 2), which covers them: b <= e^{-759} (1 + n e) < 1e-300 (n e <= 1).
  double skip2 = -1.0;  // compare |z~|^2 against this (negative: never skip)
  if (n > 1) {
    const double rs = std::exp(-760.0 / (n - 1.0)) * (1.0 - 1e-12);
    const double zs = (rs - e) / (1.0 + 8.0 * kU);
    if (zs > 0 && n * e <= 1.0) skip2 = zs * zs * (1.0 - 1e-12);
  }
  std::vector<std::int64_t> nskip(nb, 0);
  {
    // (one thread up to kPowerThreadBlocks blocks: starting threads costs more than the loop; the same doubles either way,
    // each block's sums combined in block order below)
    parallel_blocks(nb, nb <= kPowerThreadBlocks ? 1 : 0, [&](std::size_t blk) {
      const ssize k1 = static_cast<ssize>(blk) * 8192;
      const ssize k2 = std::min<ssize>(M, k1 + 8192);
      double a2 = 0, b2 = 0;
      // the negligible test of every frequency first, in a loop without branches (the same comparisons as below)
      char skip[8192];
      for (ssize k = k1; k < k2; ++k) skip[k - k1] = std::norm(Zp[k]) <= skip2;
      auto fx = std::lower_bound(fixes.begin(), fixes.end(), static_cast<std::int64_t>(k1),
                                 [](const Fix& a, std::int64_t k) { return a.k < k; });
      for (ssize k = k1; k < k2; ++k) {
        const bool fixed = fx != fixes.end() && fx->k == static_cast<std::int64_t>(k);
        const std::complex<double> zk = fixed ? fx->z : Zp[k];
        const double ee = fixed ? fx->e : e;
        if (fixed) ++fx;
        if (!fixed && skip[k - k1]) {  // (fixed frequencies have their own, smaller, bound)
          Op[k] = std::complex<double>(0.0, 0.0);
          ++nskip[blk];
          continue;
        }
        // |z| from the squared norm (no hypot: |z| <= ~1 here), rounded up by 4u for the bound
        const double az = std::sqrt(std::norm(zk)) * (1.0 + 4.0 * kU);
        std::complex<double> q(0.0, 0.0);
        double rel = 0, aq = 0;  // (aq = |q|: one hypot per frequency, the same double as before)
        // |z|^n below 1e-320: q is 0 in double; the bound below covers |q| itself.
        const double lq = az > 0 ? n * std::log(az) : -std::numeric_limits<double>::infinity();
        double b = 0;
        if (lq > -736.0) {
          const std::complex<double> lz = clog_same(zk);  // (= std::log(zk), §42.1)
          q = std::exp(n * lz);
          const double ex = n * 2.0 * kU * (std::fabs(lz.real()) + M_PI + 1.0) + kU * n * std::abs(lz);
          rel = std::expm1(ex) + 4.0 * kU;
          aq = std::abs(q);
          b = aq * rel;
        } else if (lq > -std::numeric_limits<double>::infinity()) {
          b = std::exp(lq + 1.0);  // the dropped value itself (and its rounding)
        }
        if (ee > 0) b += n * ee * std::exp((n - 1.0) * std::log(az + ee));
        const bool single = (k == 0) || (N % 2 == 0 && k == M - 1);
        const double wgt = single ? 1.0 : 2.0;
        a2 += wgt * b * b;
        b2 += wgt * aq * aq;
        Op[k] = q;
      }
      e2[blk] = a2;
      qq[blk] = b2;
    });
  }
  double err2 = 0, q2 = 0, ns = 0;
  for (std::size_t b = 0; b < nb; ++b) {
    err2 += e2[b];
    q2 += qq[b];
    ns += static_cast<double>(nskip[b]);
  }
  // the skipped frequencies: at most 1e-300 each, weight <= 2 in the squared norm
  return {std::sqrt(err2) * (1.0 + 1e-10) + 1e-300 * std::sqrt(2.0 * ns), std::sqrt(q2),
          static_cast<std::int64_t>(fixes.size())};
}

// Sums over the window W = {sa, ..., sa + N - 1} (lattice units; value s h):
//   E    = sum_{s>0} s h e^{-theta s h} q(s),       fnorm = ||s_+ h e^{-theta s h}||_2,
//   gap  = sum_s q(s) e^{-theta s h} Psi((|s h| - t)_+),  gnorm = ||those weights||_2,
// with Psi(u) = sqrt(2 pi v) Phibar(u / sqrt v). q is the circular n-fold pmf: position r
// holds s with s = n k0 + r (mod N).
WindowSums window_sums(const double* q, std::size_t Nsz, std::int64_t nk0, std::int64_t sa, double h, double theta,
                       double t, double v) {
  const auto N = static_cast<ssize>(Nsz);
  const double* Q = q;
  double E = 0, f2 = 0, gap = 0, g2 = 0, Ea = 0, ga = 0;
  const double sv = std::sqrt(v);
  const double lpsi0 = 0.5 * std::log(2.0 * M_PI * v);
  {
    const std::int64_t NN = static_cast<std::int64_t>(N);
    std::int64_t off = ((sa - nk0) % NN + NN) % NN;  // position of s = sa
    for (std::int64_t i = 0; i < NN; ++i) {
      const std::int64_t s = sa + i;
      const std::int64_t r = (off + i) % NN;
      const double x = static_cast<double>(s) * h;
      const double qv = Q[r];
      if (s > 0) {
        const double f = x * std::exp(-theta * x);
        E += f * qv;
        Ea += f * std::fabs(qv);
        f2 += f * f;
      }
      if (v > 0) {
        const double u = std::max(std::fabs(x) - t, 0.0);
        const double lw = lpsi0 + log_phibar(u / sv) - theta * x;
        const double w = lw > 700 ? std::exp(700.0) : std::exp(lw);
        gap += w * qv;
        ga += w * std::fabs(qv);
        g2 += w * w;
      }
    }
  }
  // Summation rounding: error <= N u sum|a_i| (the caller adds it from Ea, ga).
  return {E, std::sqrt(f2), gap, std::sqrt(g2), Ea, ga};
}

}  // namespace kernels
}  // namespace sharpdp
