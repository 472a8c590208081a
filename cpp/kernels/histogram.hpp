// Python-free kernels of the shifted-log Gaussian release ("Better privacy guarantees for larger
// groups: count-dependent zCDP", eq. (4)): v = (n + c) exp(sigma Z - sigma^2) - c.
//
// grid_release (the release of the library): the released value is the grid value nearest to
// v (clipped at 0), sampled EXACTLY by inversion of its bin law (docs/histogram_release.md):
// bin j has probability F(j + 1) - F(j), F(j) = Phi(b(t_j)), t_j the lower boundary of bin j,
// b(t) = (log((t + c)/(n + c)) + sigma^2)/sigma. One 64-bit word w0 gives the interval
// U in [w0 2^-64, (w0 + 1) 2^-64); a candidate bin from an approximate inverse normal CDF
// (Wichura's AS241) is verified with double evaluations carrying stated error bounds; an
// interval that the bounds cannot place inside one bin (rare) is reported with 3 more words
// drawn right after w0, for an exact resolution by the caller.
//
// shifted_log_release_float: the former floating-point release (v computed in double from a
// ziggurat normal). NOT floating-point safe (docs/histogram_release.md §1); kept as the speed
// reference of bench/bench_histogram.py and for the attack tests.
//
// Blocks of kSamplerBlockRows counts, block b drawing from Rng(key, b): outputs are identical
// for any thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common.hpp"

namespace sharpdp {
namespace kernels {

// Grid: with g = 2^-grid_bits, values j g for 0 <= j < 2^(kGridSigBits + 1), then a floating-point
// grid with kGridSigBits + 1 significant bits: (2^kGridSigBits + r) 2^e g for e >= 1,
// 0 <= r < 2^kGridSigBits, at index j = ((e + 1) << kGridSigBits) + r. Relative spacing <= 2^-30.
constexpr int kGridSigBits = 30;
constexpr int kGridMinBits = 0;
constexpr int kGridMaxBits = 60;
// Last index (e <= 900): its bin is [t_last, inf). Every grid value is a finite double.
constexpr std::uint64_t kGridLastIndex = (std::uint64_t{902} << kGridSigBits) - 1;

// The grid value of index j (j <= kGridLastIndex).
double grid_value(std::uint64_t j, int grid_bits);

// The kernel's branch-free exp (Cody-Waite reduction, degree-13 Taylor, Horner), for tests of
// its proved error bound (relative error <= 2^-47 on [-700, 700], docs/histogram_release.md §4.5).
// x must lie in [-700, 700] (std::invalid_argument otherwise).
double exp_bounded_value(double x);
// The kernel's tail probability p ~ Phi(-a) = P(Z <= -a) from its table and Hermite series, and the
// proved bound err >= |p - Phi(-a)| (docs/histogram_release.md §4.6), for tests of that bound.
// a must lie in [0, 6] (std::invalid_argument otherwise).
void phi_tail_value(double a, double& p, double& err);
// An index whose value is nearest to v (ties either way); 0 for v <= 0 or NaN; capped at kGridLastIndex.
std::uint64_t grid_index(double v, int grid_bits);
// The vectorised pass of the release's candidate indices: out[i] = grid_index(v[i], grid_bits) for
// every double v[i] (tests/cpp/kernels_check.cpp checks it).
void grid_index_vectorised(const double* v, std::size_t n, int grid_bits, std::uint64_t* out);
// Stochastic rounding of grid value j to floor(y) or floor(y) + 1, up with probability y - floor(y)
// EXACTLY (y is dyadic: the top bits of `word` are compared with its fraction).
double grid_round(std::uint64_t j, int grid_bits, std::uint64_t word);

// An interval the double bounds could not place inside one bin.
struct AmbiguousDraw {
  std::uint64_t index;      // position in the counts
  std::uint64_t candidate;  // the bin it is next to (or inside)
  std::uint64_t words[4];   // w0 (U's first 64 bits) and the 3 words drawn after it
  std::uint64_t round_word; // the rounding word (integer output; else 0)
};

struct GridReleaseResult {
  std::vector<AmbiguousDraw> ambiguous;  // in index order; their out[] entries are NaN
  std::uint64_t steps = 0;               // candidate corrections (diagnostics)
};

// counts[0..n): non-negative integers below 2^53 (float64), else std::invalid_argument; c > 0
// finite; 0 < sigma <= 9; grid_bits in [kGridMinBits, kGridMaxBits]. out[0..n) receives the grid
// values (integer-valued after exact stochastic rounding when `integer`); NaN where ambiguous.
GridReleaseResult grid_release(const double* counts, std::size_t n, double c, double sigma, int grid_bits,
                               const StreamKey& key, bool integer, int threads, double* out);

// The inversion step alone, for given first words w0[i] (tests of the verified bounds):
// bins[i] = the bin of U in [w0 2^-64, (w0 + 1) 2^-64) for count counts[i] and decided[i] = 1, or
// decided[i] = 0 (bins[i] = the candidate) where the bounds cannot place the interval in one bin.
void grid_invert(const double* counts, const std::uint64_t* w0, std::size_t n, double c, double sigma, int grid_bits,
                 std::uint64_t* bins, unsigned char* decided);

// The former float release: y = [(n + c) exp(sigma Z - sigma^2) - c]_+ in double, optionally
// followed by stochastic rounding. Same preconditions (no grid).
void shifted_log_release_float(const double* counts, std::size_t n, double c, double sigma, const StreamKey& key,
                               bool integer, int threads, double* out);

}  // namespace kernels
}  // namespace sharpdp
