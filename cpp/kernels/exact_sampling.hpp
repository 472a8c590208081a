// Integer-exact sampling primitives of the release samplers (docs/sampling.md): every probability
// is an integer threshold compared against uniform random 64-bit words, never a floating-point
// uniform. Templated on the generator (any class with `std::uint64_t next()` returning 64 uniform
// bits), Python-free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sharpdp {
namespace kernels {

// Cumulative distribution table (CDT) of a law on {0, 1, ..., size - 1}, in 128-bit fixed point:
// entry j is T[j] = hi[j] 2^64 + lo[j], the CDF at j times 2^128 (rounded to nearest); the last
// entry (j = size - 1) is a sentinel, never read: it receives the remaining mass 1 - T[size-2] 2^-128.
// guide has 2^guide_bits entries: guide[b] = the smallest j with T[j] > b 2^(128 - guide_bits)
// (capped at size - 1), the first candidate for a uniform whose top guide_bits bits are b.
struct CdtTable {
  const std::uint64_t* hi;
  const std::uint64_t* lo;
  std::size_t size;
  const std::uint32_t* guide;
  int guide_bits;
};

// Draw j = min{j : U < T[j]} (size - 1 if none) for U uniform on [0, 2^128): U = u1 2^64 + u2 with
// u1 = rng.next() and u2 drawn lazily, only when u1 equals the high word of an entry (probability
// at most (comparisons) 2^-64), so that one 64-bit word is used on the fast path. The law of the
// result is exactly P(j) = (T[j] - T[j-1]) 2^-128 (T[-1] = 0, T[size-1] = 2^128). The running time
// depends on j (not constant-time; docs/sampling.md, timing).
template <class R>
inline std::size_t cdt_sample(const CdtTable& t, R& rng) {
  const std::uint64_t u1 = rng.next();
  std::size_t j = t.guide[u1 >> (64 - t.guide_bits)];
  const std::size_t last = t.size - 1;
  bool have_u2 = false;
  std::uint64_t u2 = 0;
  while (j < last) {
    const std::uint64_t h = t.hi[j];
    if (u1 < h) break;
    if (u1 == h) {
      if (!have_u2) {
        u2 = rng.next();
        have_u2 = true;
      }
      if (u2 < t.lo[j]) break;
    }
    ++j;
  }
  return j;
}

// Uniform integer in [0, range), range >= 1, exactly (Lemire, "Fast random integer generation in an
// interval", ACM Transactions on Modeling and Computer Simulation, 2019: multiply-shift with
// rejection of the biased low part).
template <class R>
inline std::uint64_t uniform_below(std::uint64_t range, R& rng) {
  unsigned __int128 m = static_cast<unsigned __int128>(rng.next()) * range;
  auto low = static_cast<std::uint64_t>(m);
  if (low < range) {
    const std::uint64_t threshold = (0 - range) % range;  // 2^64 mod range
    while (low < threshold) {
      m = static_cast<unsigned __int128>(rng.next()) * range;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

// Random bits, 64 per generator word, consumed from the least significant bit up.
template <class R>
class BitReservoir {
 public:
  explicit BitReservoir(R& rng) : rng_(rng) {}
  std::uint64_t bit() {
    if (left_ == 0) {
      word_ = rng_.next();
      left_ = 64;
    }
    const std::uint64_t b = word_ & 1u;
    word_ >>= 1;
    --left_;
    return b;
  }

 private:
  R& rng_;
  std::uint64_t word_ = 0;
  int left_ = 0;
};

}  // namespace kernels
}  // namespace sharpdp
