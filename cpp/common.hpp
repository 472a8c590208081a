// Shared infrastructure of the compiled core: counter-based random streams and
// a deterministic block-parallel loop. No Python in here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace sharpdp {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro256++ (Blackman & Vigna), written from the published recurrence.
class Rng {
 public:
  // Stream for (seed, block): every block of work gets its own stream, so the
  // output never depends on how blocks are spread over threads.
  Rng(std::uint64_t seed, std::uint64_t block) {
    std::uint64_t sm = seed ^ (0xD1B54A32D192ED03ULL * (block + 1));
    for (auto& w : s_) w = splitmix64(sm);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform on [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1): never exactly 0, safe inside log().
  double uniform_open() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
  // Pair of independent standard normals (Marsaglia polar method).
  void normal_pair(double& a, double& b) {
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    a = u * f;
    b = v * f;
  }
  // Fill out[0..count) with standard normals.
  void normals(double* out, std::size_t count) {
    std::size_t i = 0;
    for (; i + 1 < count; i += 2) normal_pair(out[i], out[i + 1]);
    if (i < count) {
      double spare;
      normal_pair(out[i], spare);
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

inline int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// Run body(block) for block in [0, nblocks) on up to `threads` threads.
// Exceptions thrown in workers are captured and the first one is rethrown
// on the calling thread (none escapes a worker).
template <class Body>
void parallel_blocks(std::size_t nblocks, int threads, Body&& body) {
  const std::size_t nt = std::min<std::size_t>(static_cast<std::size_t>(resolve_threads(threads)),
                                               std::max<std::size_t>(nblocks, 1));
  if (nt <= 1) {
    for (std::size_t b = 0; b < nblocks; ++b) body(b);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> pool;
  pool.reserve(nt);
  for (std::size_t t = 0; t < nt; ++t) {
    pool.emplace_back([&, t] {
      try {
        for (std::size_t b = t; b < nblocks; b += nt) body(b);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace sharpdp
