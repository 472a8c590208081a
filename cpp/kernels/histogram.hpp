// Python-free kernel of the shifted-log Gaussian release ("Better privacy guarantees for larger
// groups: count-dependent zCDP", eq. (4)): y = [(n + c) exp(sigma Z - sigma^2) - c]_+, optionally
// followed by mean-preserving stochastic rounding. Blocks of kSamplerBlockRows counts, block b
// drawing from Rng(key, b): the output is identical for any thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common.hpp"

namespace sharpdp {
namespace kernels {

// counts[0..n): non-negative integers below 2^53 (float64), else std::invalid_argument;
// c > 0 finite; 0 < sigma <= 9; out[0..n) receives the release (clipped at 0, rounded to an
// integer by mean-preserving stochastic rounding when `integer`).
void shifted_log_release(const double* counts, std::size_t n, double c, double sigma, const StreamKey& key,
                         bool integer, int threads, double* out);

}  // namespace kernels
}  // namespace sharpdp
