// Standalone check of the Python-free kernels (cpp/kernels): built and run by
// tests/test_misc34_kernels_check.py (with the command of .ci/run, which runs it too) with a plain C++17
// compiler, no Python or pybind11.
// Prints "ok" when every check passes, otherwise a message and exit status 1.
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "accountant.hpp"
#include "histogram.hpp"
#include "samplers.hpp"

namespace k = sharpdp::kernels;

static int fail(const char* what) {
  std::printf("FAIL: %s\n", what);
  return 1;
}

// A generator that replays given 64-bit words (exact_sampling.hpp takes any class with next()).
struct ReplayRng {
  std::vector<std::uint64_t> words;
  std::size_t used = 0;
  std::uint64_t next() { return words.at(used++); }
};

static bool cdt_draw(const k::CdtTable& t, std::vector<std::uint64_t> words, std::size_t expect_j,
                     std::size_t expect_used) {
  ReplayRng r{std::move(words)};
  return k::cdt_sample(t, r) == expect_j && r.used == expect_used;
}

// A fixed test key (the library's keys are 32 bytes from Python: OS entropy or a seeded draw).
static sharpdp::StreamKey test_key(std::uint32_t v) {
  sharpdp::StreamKey key{};
  for (int i = 0; i < 8; ++i) key.w[i] = v + static_cast<std::uint32_t>(i);
  return key;
}

int main() {
  // the power step's complex logarithm: the same doubles as std::log (docs/accountant_tail.md §42.1)
  if (k::clog_same_mismatches(200000) != 0) return fail("clog_same differs from std::log");
  const sharpdp::StreamKey key42 = test_key(42), key7 = test_key(7);
  const std::size_t n = 3 * 4096 + 17;
  std::vector<double> z1(n), z4(n);
  k::standard_normals(n, key42, 1, z1.data());
  k::standard_normals(n, key42, 4, z4.data());
  if (z1 != z4) return fail("standard_normals depends on threads");
  double m = 0.0, v = 0.0;
  for (double z : z1) m += z;
  m /= static_cast<double>(n);
  for (double z : z1) v += (z - m) * (z - m);
  v /= static_cast<double>(n - 1);
  // 5-sigma bands for the mean and the variance of n standard normals
  if (std::fabs(m) > 5.0 / std::sqrt(static_cast<double>(n))) return fail("normal mean");
  if (std::fabs(v - 1.0) > 5.0 * std::sqrt(2.0 / static_cast<double>(n))) return fail("normal variance");

  // the float reference BMG with gamma = 0 and x = 0 is sigma0 times the same normals
  std::vector<double> x(n, 0.0), y(n);
  k::bmg_sample_float_reference(x.data(), n, 1, 0.0, 2.0, key42, 2, 1.0, y.data());
  for (std::size_t i = 0; i < n; ++i)
    if (y[i] != 2.0 * z1[i]) return fail("bmg_sample_float_reference(gamma=0, x=0) != sigma0 * standard_normals");
  bool threw = false;
  x[5] = 2.0;  // outside the unit ball
  try {
    k::bmg_sample_float_reference(x.data(), n, 1, 0.0, 2.0, key42, 2, 1.0, y.data());
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  if (!threw) return fail("bmg_sample_float_reference accepted a row outside the unit ball");

  // CDT: entries T[0] = 5 2^64 + 100, T[1] = 5 2^64 + 200, then the sentinel; guide on 1 bit.
  // The second word is drawn only on a tie of the high words, and reused along the tie.
  {
    const std::uint64_t hi[3] = {5, 5, ~0ULL}, lo[3] = {100, 200, ~0ULL};
    const std::uint32_t guide[2] = {0, 2};
    const k::CdtTable t{hi, lo, 3, guide, 1};
    if (!cdt_draw(t, {4}, 0, 1) || !cdt_draw(t, {6}, 2, 1) || !cdt_draw(t, {1ULL << 63}, 2, 1))
      return fail("cdt_sample without a tie");
    if (!cdt_draw(t, {5, 99}, 0, 2) || !cdt_draw(t, {5, 100}, 1, 2) || !cdt_draw(t, {5, 199}, 1, 2) ||
        !cdt_draw(t, {5, 200}, 2, 2))
      return fail("cdt_sample on a tie of the high words (lazy second word)");
  }
  // Lemire: range 3, 2^64 mod 3 = 1: a word whose product has low part 0 (< 1) is rejected
  {
    ReplayRng r{{0, ~0ULL}};
    if (k::uniform_below(3, r) != 2 || r.used != 2) return fail("uniform_below rejection");
    ReplayRng r2{{1ULL << 63}};
    if (k::uniform_below(4, r2) != 2 || r2.used != 1) return fail("uniform_below value");
  }
  // grid BMG with the one-entry table (noise always 0) and gamma' = 0: x rounded onto 2^-2 Z
  {
    const std::uint64_t hi[1] = {~0ULL}, lo[1] = {~0ULL};
    const std::uint32_t guide[2] = {0, 0};
    const k::CdtTable t{hi, lo, 1, guide, 1};
    std::vector<double> xs(n, 0.5), ys(n);
    xs[3] = 0.3;  // between 0.25 and 0.5
    k::bmg_grid_sample(xs.data(), n, 1, 0, 2, 1.0, t, key42, 2, 1.0, ys.data());
    for (std::size_t i = 0; i < n; ++i)
      if (i != 3 && ys[i] != 0.5) return fail("bmg_grid_sample moved a grid input");
    if (ys[3] != 0.25 && ys[3] != 0.5) return fail("bmg_grid_sample rounding outside the neighbours");
    std::vector<double> ys2(n);
    k::bmg_grid_sample(xs.data(), n, 1, 0, 2, 1.0, t, key42, 1, 1.0, ys2.data());
    if (ys != ys2) return fail("bmg_grid_sample depends on threads");
    k::bmg_grid_sample(xs.data(), n, 1, ~0ULL, 2, 1.0, t, key42, 2, 1.0, ys.data());  // always blanket
    for (double v : ys)
      if (v != 0.0) return fail("bmg_grid_sample blanket message not h D");
  }

  // k-RR keeps the input with probability keep_threshold 2^-64 (0.7), else a uniform category
  std::vector<std::int64_t> c(n, 1), out(n);
  k::krr_sample(c.data(), n, 5, static_cast<std::uint64_t>(0.7 * 18446744073709551616.0), key7, 3, out.data());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (out[i] < 0 || out[i] >= 5) return fail("krr_sample output outside [0, k)");
    kept += out[i] == 1;
  }
  const double p = static_cast<double>(kept) / static_cast<double>(n);
  const double pk = 0.7 + 0.3 / 5.0;  // kept, or the uniform category hit the input
  if (std::fabs(p - pk) > 5.0 * std::sqrt(pk * (1 - pk) / static_cast<double>(n))) return fail("krr keep rate");

  // the release of count 0 with c = 1: y = [exp(sigma Z - sigma^2) - 1]_+ on the shared stream
  std::vector<double> counts(n, 0.0), rel(n);
  k::shifted_log_release_float(counts.data(), n, 1.0, 0.5, key42, false, 2, rel.data());
  for (std::size_t i = 0; i < n; ++i) {
    const double expect = std::fmax(std::exp(0.5 * z1[i] - 0.25) - 1.0, 0.0);
    if (std::fabs(rel[i] - expect) > 1e-12 * (1.0 + expect)) return fail("release != eq. (4) on the shared stream");
  }
  // the grid release: values on the grid 2^-10 (or NaN where left to the caller), the same for 1 and 3 threads
  {
    std::vector<double> g1(n), g3(n);
    const k::GridReleaseResult r1 = k::grid_release(counts.data(), n, 1.0, 0.5, 10, key42, false, 1, g1.data());
    const k::GridReleaseResult r3 = k::grid_release(counts.data(), n, 1.0, 0.5, 10, key42, false, 3, g3.data());
    if (r1.ambiguous.size() != r3.ambiguous.size()) return fail("grid_release ambiguous draws depend on threads");
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isnan(g1[i])) continue;
      if (!(g1[i] == g3[i]) || g1[i] < 0.0 || g1[i] * 1024.0 != std::floor(g1[i] * 1024.0))
        return fail("grid_release value off the grid or thread-dependent");
    }
    for (std::uint64_t j : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 31, (std::uint64_t{5} << 30) + 7})
      if (k::grid_index(k::grid_value(j, 10), 10) != j) return fail("grid_index(grid_value(j)) != j");
  }
  // the branch-free grid index of the release's candidate pass equals grid_index for every double:
  // special values, the ends of the fixed-spacing range, grid values, midpoints and their neighbours,
  // and random bit patterns (a fixed xorshift sequence), at several grid exponents
  {
    std::vector<double> vs = {0.0, -0.0, -1.0, 1e-320, 0.25, 0.5, 1.0, 1.5, 2.5, 0x1.0p31 - 0.5, 0x1.0p31 - 1.0,
                              0x1.0p31, 0x1.0p31 + 0.5, 0x1.0p32 - 0.5, 0x1.0p62, 1e300, 1.7e308,
                              std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min()};
    for (std::uint64_t j = 0; j < (std::uint64_t{40} << 30); j += (std::uint64_t{1} << 25) + 12345) {
      const double g = k::grid_value(j, 0), g1 = k::grid_value(j + 1, 0);
      vs.push_back(g);
      vs.push_back(0.5 * (g + g1));
      vs.push_back(std::nextafter(0.5 * (g + g1), 0.0));
      vs.push_back(std::nextafter(0.5 * (g + g1), 1e308));
    }
    std::uint64_t st = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 200000; ++i) {
      st ^= st << 13;
      st ^= st >> 7;
      st ^= st << 17;
      double d;
      std::memcpy(&d, &st, sizeof d);
      vs.push_back(d);
      vs.push_back(static_cast<double>(st >> 11) * 0x1.0p-20);
    }
    std::vector<double> sv(vs.size());
    std::vector<std::uint64_t> got(vs.size()), got_s(vs.size());
    for (int bits : {0, 7, 10, 33, 60}) {
      for (std::size_t i = 0; i < vs.size(); ++i) sv[i] = std::ldexp(vs[i], -bits);  // the same grid positions
      k::grid_index_vectorised(vs.data(), vs.size(), bits, got.data());
      k::grid_index_vectorised(sv.data(), sv.size(), bits, got_s.data());
      for (std::size_t i = 0; i < vs.size(); ++i)
        if (got[i] != k::grid_index(vs[i], bits) || got_s[i] != k::grid_index(sv[i], bits))
          return fail("grid_index_vectorised != grid_index");
    }
  }

  // --- accountant kernels, against closed forms ---
  {
    const double h = 0.5, lam = 0.7;
    const double g2[2] = {0.5, 0.5};  // mass 1/2 at 0 and at h
    const k::Mgf mg = k::log_mgf(g2, 2, 0, h, lam);
    const double ez = std::exp(lam * h);
    if (std::fabs(mg.L - std::log(0.5 + 0.5 * ez)) > 1e-15) return fail("log_mgf value");
    if (std::fabs(mg.d1 - h * ez / (1.0 + ez)) > 1e-15) return fail("log_mgf mean");
    if (std::fabs(mg.d2 - h * h * ez / ((1.0 + ez) * (1.0 + ez))) > 1e-15) return fail("log_mgf variance");

    // one lattice step: cell mass 0.6 with moment 0.3 (units of h), clamp atoms 0.2 at both ends
    const double m[1] = {0.6}, w[1] = {0.3}, em[1] = {0.0}, ew[1] = {0.0};
    double psi[2], eta[2];
    k::assemble({m, w, em, ew, 1}, 1, {0.2, 0.0, 0.2, 0.0}, psi, eta);
    if (std::fabs(psi[0] - 0.5) > 1e-15 || std::fabs(psi[1] - 0.5) > 1e-15) return fail("assemble hat law");
    if (psi[1] < 0.5 || eta[0] < 0 || eta[1] < 0) return fail("assemble: not an upper law / negative bound");
    bool threw_lat = false;
    try {
      k::assemble({m, w, em, ew, 1}, 2, {0.2, 0.0, 0.2, 0.0}, psi, eta);  // J = 2 does not divide 1 cell
    } catch (const std::invalid_argument&) {
      threw_lat = true;
    }
    if (!threw_lat) return fail("assemble accepted J not dividing the cells");

    // tilt at theta = 0 leaves the pmf unchanged, with Lambda = log(mass) = 0
    double gt[2];
    const k::Tilt tl = k::tilt(g2, eta, 2, 0, h, 0.0, gt);
    if (gt[0] != 0.5 || gt[1] != 0.5 || std::fabs(tl.log_mgf) > 1e-15 || tl.tau < 0) return fail("tilt at 0");

    // power n = 2 of the rfft of y = (1/2, 1/2, 0, 0): z = (1, (1 - i)/2, 0), z^2 = (1, -i/2, 0)
    const double y[4] = {0.5, 0.5, 0.0, 0.0};
    const std::complex<double> z[3] = {{1.0, 0.0}, {0.5, -0.5}, {0.0, 0.0}};
    std::complex<double> q[3];
    const k::Power pw = k::power(z, 3, 2.0, 0.0, 4, y, 0.0, 1e6, q);
    if (std::abs(q[0] - 1.0) > 1e-15 || std::abs(q[1] - std::complex<double>(0.0, -0.5)) > 1e-15 || q[2] != 0.0)
      return fail("power: z^2");
    if (!(pw.err_norm >= 0) || std::fabs(pw.q_norm - std::sqrt(1.0 + 2.0 * 0.25)) > 1e-15) return fail("power norms");

    // window sums: E = sum_{s > 0} s h q(s) at theta = 0
    const double qq[4] = {0.0, 0.25, 0.5, 0.25};
    const k::WindowSums ws = k::window_sums(qq, 4, 0, 0, 1.0, 0.0, 0.0, 0.0);
    if (std::fabs(ws.E - 2.0) > 1e-15 || std::fabs(ws.Ea - 2.0) > 1e-15) return fail("window_sums E");
  }
  std::printf("ok\n");
  return 0;
}
