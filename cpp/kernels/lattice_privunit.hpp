// Python-free kernel of LatticePrivUnit's exact sampler (docs/sampling.md §10.6): the same algorithm,
// word for word, as the pure-Python reference (sharpdp/shuffle/randomizers/_lattice_reference.py), on
// fixed-width exact integers. Message i draws from ChaCha20 stream (stream0 + i) of the key only, so the
// output depends on (key, i, x_i), never on `threads`.
//
// Arithmetic: unsigned integers of at most kLatticeLimbs 64-bit limbs (6144 bits), little-endian, with
// their used length. Every Bernoulli denominator of the algorithm is k 2^e with k < 2^64 (p's dyadic
// denominator; t = sigma = 2^s; 2 sigma^2 = 2^(2s+1); k times those inside CKS Algorithm 1), so the long
// division of the lazy comparison needs a multi-limb numerator and a single-limb divisor only. The cone
// test's products (|z| < 2^(s+65), x's reduced dyadic integers below 2^1076, theta's denominator up to
// 2^1074) stay below 2^5520 for every scale_bits <= 480; a value that would not fit (it would take a discrete-Laplace
// geometric count of 2^64, probability about exp(-2^64)) aborts the row, which is then reported
// as not done (row_bits = -1) for the caller to draw with the reference (same stream: same message).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common.hpp"

namespace sharpdp {
namespace kernels {

constexpr int kLatticeLimbs = 96;

// Messages of LatticePrivUnit for the rows of x (n, dim), row-major float64 (finite, nonzero rows;
// only their exact dyadic direction is used). p = p_num 2^-p_exp (p_num >= 1 odd or p_exp = 0 not
// allowed: 0 < p < 1), theta in (-1, 1) read as its exact dyadic value, sigma = 2^scale_bits,
// scale_bits in [0, 480]. Output: limbs (n, dim, width) uint64, each entry z_ij in two's complement
// over `width` little-endian limbs; row_bits (n,) int32 = max_j bit_length(|z_ij|), or -1 when the
// row was not done (an intermediate beyond the fixed width or z_ij not representable in `width`
// limbs). max_proposals > 0 caps the vectors proposed per message: a row that reaches the cap is
// abandoned with row_bits = -2 (the caller refuses the release; 0: no cap, the exact algorithm).
// Throws std::invalid_argument on bad parameters or a row that is not finite or is zero.
void lattice_privunit_sample(const double* x, std::size_t n, std::size_t dim, std::uint64_t p_num, int p_exp,
                             double theta, int scale_bits, const StreamKey& key, std::uint64_t stream0,
                             int threads, std::size_t width, std::uint64_t* limbs, std::int32_t* row_bits,
                             std::uint64_t max_proposals = 0);

}  // namespace kernels
}  // namespace sharpdp
