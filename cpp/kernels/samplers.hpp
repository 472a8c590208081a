// Python-free sampler kernels of the shuffle-model local randomizers (Takagi, "Shuffling-aware
// optimization for private vector mean estimation", Section 4). Arrays are row-major, caller-
// allocated; errors are thrown as std::invalid_argument (ValueError in Python). Work is split
// into blocks of kSamplerBlockRows rows, block b drawing from Rng(key, b): the output depends on
// (key, inputs) only, never on `threads` (0: all cores).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common.hpp"

namespace sharpdp {
namespace kernels {

// Blanket-mixed Gaussian: out_i = sigma0 Z_i + (1 - B_i) x_i, Z_i ~ N(0, I_d) (ziggurat),
// B_i ~ Bernoulli(gamma); x and out have shape (n, d). Throws if a row of x is not finite or
// has squared L2 norm > max_norm2, or if gamma, sigma0, threads, max_norm2 are out of range.
// x may be the global rows [row_offset, row_offset + n) of a table of total_rows rows (0: row_offset
// + n); the output is then those rows of one call on the whole table (streams keyed by global row).
void bmg_sample(const double* x, std::size_t n, std::size_t d, double gamma, double sigma0, const StreamKey& key,
                int threads, double max_norm2, double* out, std::uint64_t row_offset = 0,
                std::uint64_t total_rows = 0);

// out[0..count) = the first count 64-bit words of stream `stream` of the ChaCha20 generator keyed by
// `key` (common.hpp Rng): the raw CSPRNG output, for tests against an independent ChaCha20.
void keystream_words(const StreamKey& key, std::uint64_t stream, std::size_t count, std::uint64_t* out);

// count standard normals (ziggurat) into out, kSamplerBlockRows values per stream.
void standard_normals(std::size_t count, const StreamKey& key, int threads, double* out);

// k-ary randomized response of the categories x[0..n) in [0, k): keep with probability
// p_keep, else one of the k - 1 other symbols uniformly. Throws on a category outside [0, k).
void krr_sample(const std::int64_t* x, std::size_t n, std::int64_t k, double p_keep, const StreamKey& key,
                int threads, std::int64_t* out);

// PrivUnit's completion: out_i = t_i v_i + sqrt(1 - t_i^2) w_i, w_i uniform on the unit sphere
// orthogonal to the unit row v_i; v and out have shape (n, d), t shape (n,).
void sphere_complete(const double* v, const double* t, std::size_t n, std::size_t d, const StreamKey& key,
                     int threads, double* out);

}  // namespace kernels
}  // namespace sharpdp
