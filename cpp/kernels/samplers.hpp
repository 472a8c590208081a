// Python-free sampler kernels of the shuffle-model local randomizers (Takagi, "Shuffling-aware
// optimization for private vector mean estimation", Section 4). Arrays are row-major, caller-
// allocated; errors are thrown as std::invalid_argument (ValueError in Python). Work is split
// into blocks of kSamplerBlockRows rows, block b drawing from Rng(key, b): the output depends on
// (key, inputs) only, never on `threads` (0: all cores).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "exact_sampling.hpp"

namespace sharpdp {
namespace kernels {

// Blanket-mixed Gaussian on the grid h Z^d, h = 2^-grid_bits (docs/sampling.md §2): the release
// sampler. Row i: x~_i = stochastic rounding of scale * x_i onto h Z^d (up with probability the
// fractional part, as a 64-bit threshold); B_i = [u < blanket_threshold] for a 64-bit word u, i.e.
// B_i ~ Bernoulli(gamma') with gamma' = blanket_threshold 2^-64; D_i has i.i.d. coordinates drawn
// from `noise` (the CDT of |D|, D the rounded Gaussian round(s Z)) with a uniform sign bit; out_i =
// h D_i if B_i else x~_i + h D_i. Every output is an exact multiple of h. For dim 1 (scale must be 1)
// x is clamped to [-1, 1] first; for dim >= 2 the rounded row is checked in exact integer
// arithmetic to lie in the unit ball (std::invalid_argument otherwise: the scale is too large).
// Throws if a row of x is not finite or has squared L2 norm > max_norm2. Draws per block: first the
// noise of all its rows (CDT words and sign bits), then per row one coin word and, for an
// informative message only, dim rounding words (a count independent of x); slices (row_offset, total_rows) replay the draws of the block's other rows, so the output
// depends only on (key, x, global row), never on threads or partitioning.
void bmg_grid_sample(const double* x, std::size_t n, std::size_t d, std::uint64_t blanket_threshold, int grid_bits,
                     double scale, const CdtTable& noise, const StreamKey& key, int threads, double max_norm2,
                     double* out, std::uint64_t row_offset = 0, std::uint64_t total_rows = 0);

// Whitened Gaussian release on the grid h Z, h = 2^-grid_bits (docs/sampling.md §9): out_i =
// h (R_i + D_i) with R_i = floor(w_i / h) + [u_i < ceil(frac(w_i / h) 2^64)] (stochastic rounding
// of w_i, one 64-bit word u_i: R_i = ceil(w_i / h - U_i), U_i = u_i 2^-64) and D_i drawn from `noise`
// (the CDT of |D|, D = round(s Z), s = 1 / h for the whitened unit-variance noise) with a uniform
// sign bit. Every output is an exact multiple of h. Value i belongs to block i / kSamplerBlockRows,
// which draws from Rng(key, block): per value the rounding word, then the CDT word(s); sign bits come
// 64 per word from the same stream. Throws if some |w_i| >= 2^(52 - grid_bits) or is not finite.
void grid_gaussian_sample(const double* w, std::size_t count, int grid_bits, const CdtTable& noise,
                          const StreamKey& key, int threads, double* out);

// FLOATING-POINT REFERENCE, NOT A RELEASE SAMPLER (tests and benchmarks only: its low-order bits
// depend on x, docs/sampling.md §2). out_i = sigma0 Z_i + (1 - B_i) x_i, Z_i ~ N(0, I_d) (ziggurat),
// B_i ~ Bernoulli(gamma) from a 53-bit float uniform; same arguments and checks as the former
// release sampler.
void bmg_sample_float_reference(const double* x, std::size_t n, std::size_t d, double gamma, double sigma0,
                                const StreamKey& key, int threads, double max_norm2, double* out,
                                std::uint64_t row_offset = 0, std::uint64_t total_rows = 0);

// out[0..count) = the first count 64-bit words of stream `stream` of the ChaCha20 generator keyed by
// `key` (common.hpp Rng): the raw CSPRNG output, for tests against an independent ChaCha20.
void keystream_words(const StreamKey& key, std::uint64_t stream, std::size_t count, std::uint64_t* out);

// count standard normals (ziggurat) into out, kSamplerBlockRows values per stream.
void standard_normals(std::size_t count, const StreamKey& key, int threads, double* out);

// k-ary randomized response of the categories x[0..n) in [0, k), in blanket form (docs/sampling.md
// §5): keep x_i if a 64-bit word is < keep_threshold (probability keep_threshold 2^-64), else output
// a uniform category of [0, k) (Lemire's exact method). Throws on a category outside [0, k).
void krr_sample(const std::int64_t* x, std::size_t n, std::int64_t k, std::uint64_t keep_threshold,
                const StreamKey& key, int threads, std::int64_t* out);

// PrivUnit's completion: out_i = t_i v_i + sqrt(1 - t_i^2) w_i, w_i uniform on the unit sphere
// orthogonal to the unit row v_i; v and out have shape (n, d), t shape (n,).
void sphere_complete(const double* v, const double* t, std::size_t n, std::size_t d, const StreamKey& key,
                     int threads, double* out);

// Finite randomizer (docs/sampling.md §10): a table of `rows` output laws on {0, ..., m - 1}, row r
// given by its cumulative 64-bit thresholds cum[r m + j] = N[r, 0] + ... + N[r, j] (N[r, .] integers
// summing to 2^64) for j < last[r], where last[r] is the row's last output of positive mass (so
// every stored threshold is < 2^64). Value i: one 64-bit word u picks the row lo[i] + [u < up[i]]
// (stochastic input rounding; up[i] = 0: row lo[i]), a second word v the output, the smallest
// j < last[row] with v < cum[row m + j], else last[row]; so P(out = j | row) = N[row, j] 2^-64
// exactly, and outputs of mass 0 never occur. Two words per value, always (a count independent of
// the input); block b = i / kSamplerBlockRows draws from Rng(key, b), so the output depends on (key,
// lo, up) only, never on threads. Throws if lo[i] is outside [0, rows), or up[i] > 0 and
// lo[i] + 1 >= rows, or a last[r] is outside [0, m).
void finite_sample(const std::int64_t* lo, const std::uint64_t* up, std::size_t n, const std::uint64_t* cum,
                   const std::int64_t* last, std::size_t rows, std::size_t m, const StreamKey& key, int threads,
                   std::int64_t* out);

}  // namespace kernels
}  // namespace sharpdp
