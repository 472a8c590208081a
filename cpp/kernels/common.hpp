// Shared infrastructure of the compiled core: counter-based random streams and
// a deterministic block-parallel loop. No Python in here (plain C++17).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__GNUC__) || defined(__clang__)
#define SHARPDP_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define SHARPDP_NOINLINE __declspec(noinline)
#else
#define SHARPDP_NOINLINE
#endif

namespace sharpdp {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Ziggurat tables for the standard normal (Marsaglia & Tsang 2000, "The
// Ziggurat Method for Generating Random Variables", 256 layers), built once
// from the density. Layer i (0 = base) spans heights [f(x[i]), f(x[i+1])],
// x[1] = r is the tail start, x[0] = v / f(r) the base strip's pseudo-width
// and x[256] = 0. r is refined by bisection so that the top layer closes at
// height 1 in double precision (the published r = 3.6541528853610088 leaves
// a 2e-11 mismatch); every layer then has area v exactly up to rounding.
struct ZigguratNormalTables {
  double x[257];
  double f[257];  // f[i] = exp(-x[i]^2 / 2)
  double r;
  ZigguratNormalTables() {
    double lo = 3.6, hi = 3.7;  // top(r) - 1 changes sign inside
    for (int it = 0; it < 200 && hi - lo > 0.0; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (mid == lo || mid == hi) break;
      // Too large an r gives too small a layer area: the stack ends below 1.
      if (build(mid) < 1.0) hi = mid; else lo = mid;
    }
    build(lo);
    r = x[1];
  }

 private:
  // Fill the tables for tail start r; return the height reached by the top layer.
  double build(double r_) {
    const double fr = std::exp(-0.5 * r_ * r_);
    const double v = r_ * fr + 1.2533141373155002512 /* sqrt(pi/2) */ * std::erfc(r_ / std::sqrt(2.0));
    x[0] = v / fr;
    x[1] = r_;
    f[0] = 0.0;  // unused: the base strip's wedge is the tail
    f[1] = fr;
    double top = 0.0;
    for (int i = 1; i < 256; ++i) {
      const double y = f[i] + v / x[i];
      if (i == 255 || y >= 1.0) {
        top = i == 255 ? y : 2.0;  // 2.0: stack closed too early (r too small)
        for (int k = i + 1; k < 257; ++k) { x[k] = 0.0; f[k] = 1.0; }
        break;
      }
      x[i + 1] = std::sqrt(-2.0 * std::log(y));
      f[i + 1] = y;
    }
    return top;
  }
};

inline const ZigguratNormalTables& ziggurat_normal_tables() {
  static const ZigguratNormalTables tables;
  return tables;
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

  // One standard normal by the ziggurat method (tables from
  // ziggurat_normal_tables()). One 64-bit draw on the fast path (~99%):
  // bits 0-7 pick the layer, bit 8 the sign, bits 11-63 the abscissa. The
  // rare tail/wedge cases live out of line and the sign is applied without a
  // branch: both matter for speed (the sign bit is unpredictable).
  double normal_ziggurat(const ZigguratNormalTables& t) {
    for (;;) {
      const std::uint64_t u = next();
      const int i = static_cast<int>(u & 0xFF);
      double z = static_cast<double>(u >> 11) * 0x1.0p-53 * t.x[i];
      if (z >= t.x[i + 1] && !ziggurat_edge(t, i, z)) continue;  // rejected: redraw
      std::uint64_t bits;
      std::memcpy(&bits, &z, sizeof bits);
      bits ^= (u & 0x100) << 55;  // bit 8 -> IEEE sign bit 63
      std::memcpy(&z, &bits, sizeof bits);
      return z;
    }
  }
  // Fill out[0..count) with standard normals (ziggurat; faster than normals()).
  void normals_ziggurat(double* out, std::size_t count) {
    const ZigguratNormalTables& t = ziggurat_normal_tables();
    for (std::size_t i = 0; i < count; ++i) out[i] = normal_ziggurat(t);
  }

 private:
  // Ziggurat outside the layer's core rectangle: layer 0 samples the tail
  // beyond r (Marsaglia 1964; z is replaced by the tail value), other layers
  // accept z if a uniform height in the layer falls under the density.
  SHARPDP_NOINLINE bool ziggurat_edge(const ZigguratNormalTables& t, int i, double& z) {
    if (i == 0) {
      double a, b;
      do {
        a = -std::log(uniform_open()) / t.r;
        b = -std::log(uniform_open());
      } while (2.0 * b < a * a);
      z = t.r + a;
      return true;
    }
    const double y = t.f[i] + uniform() * (t.f[i + 1] - t.f[i]);
    return y < std::exp(-0.5 * z * z);
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// Rows (values, for scalar outputs) per random stream, for every sampler of the core: block b
// draws from Rng(seed, b) only, so the output depends on (seed, inputs), never on threads.
constexpr std::size_t kSamplerBlockRows = 4096;

inline std::size_t sampler_blocks(std::size_t n) { return (n + kSamplerBlockRows - 1) / kSamplerBlockRows; }

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
