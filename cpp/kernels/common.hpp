// Shared infrastructure of the compiled core: keyed ChaCha20 random streams (a CSPRNG) and
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

// 256-bit key of the ChaCha20 streams, as eight little-endian 32-bit words. Python hands it
// over as 32 bytes (sharpdp._rng.core_key): fresh OS entropy for a release, or derived from a
// user's seed in the reproducible (not private unless the seed is secret) mode.
struct StreamKey {
  std::uint32_t w[8];
  // Little-endian words of a 32-byte buffer.
  static StreamKey from_bytes(const unsigned char* bytes) {
    StreamKey k{};
    for (int i = 0; i < 8; ++i)
      k.w[i] = static_cast<std::uint32_t>(bytes[4 * i]) | (static_cast<std::uint32_t>(bytes[4 * i + 1]) << 8) |
               (static_cast<std::uint32_t>(bytes[4 * i + 2]) << 16) |
               (static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24);
    return k;
  }
};

// ChaCha20 keystream (Bernstein 2008, "ChaCha, a variant of Salsa20"; the block function of RFC 8439
// §2.3 with the original 64-bit block counter in state words 12-13 and a 64-bit nonce in words 14-15),
// written from the specification. Stream `stream` of a key is the keystream with nonce = stream, read
// as little-endian 64-bit words in order: the same bytes as encrypting zeros with that key and the
// 16-byte IETF nonce (counter 0 as 8 LE bytes, then stream as 8 LE bytes). Every block of work gets
// its own stream, so output never depends on how blocks are spread over threads. Four ChaCha blocks
// are computed at once, lane by lane, so that compilers vectorise the rounds.
class Rng {
 public:
  Rng(const StreamKey& key, std::uint64_t stream) {
    static constexpr std::uint32_t kSigma[4] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
    for (int i = 0; i < 4; ++i) in_[i] = kSigma[i];
    for (int i = 0; i < 8; ++i) in_[4 + i] = key.w[i];
    in_[12] = 0;
    in_[13] = 0;
    in_[14] = static_cast<std::uint32_t>(stream);
    in_[15] = static_cast<std::uint32_t>(stream >> 32);
  }
  std::uint64_t next() {
    if (pos_ == kWords) refill();
    return buf_[pos_++];
  }
  // out[0..count) = the next count words: the same words, in the same order, as count calls of next().
  void fill(std::uint64_t* out, std::size_t count) {
    while (count > 0) {
      if (pos_ == kWords) refill();
      const std::size_t avail = static_cast<std::size_t>(kWords - pos_);
      const std::size_t take = count < avail ? count : avail;
      std::memcpy(out, buf_ + pos_, take * sizeof(std::uint64_t));
      pos_ += static_cast<int>(take);
      out += take;
      count -= take;
    }
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
  static constexpr int kLanes = 4;                // ChaCha blocks per refill
  static constexpr int kWords = kLanes * 8;         // 64-bit words per refill
  // The next four keystream blocks (counters c, c+1, c+2, c+3) into buf_, in keystream order.
  // Lane l of every vector holds block c + l (GCC/Clang vector extensions: SSE2/NEON registers;
  // other compilers get the same arithmetic on plain arrays).
#if defined(__GNUC__) || defined(__clang__)
  typedef std::uint32_t Lanes __attribute__((vector_size(4 * kLanes)));
  static Lanes rotl(Lanes v, int k) { return (v << k) | (v >> (32 - k)); }
  static Lanes splat(std::uint32_t v) { return Lanes{v, v, v, v}; }
#else
  struct Lanes {
    std::uint32_t v[kLanes];
    std::uint32_t& operator[](int l) { return v[l]; }
    std::uint32_t operator[](int l) const { return v[l]; }
    Lanes& operator+=(const Lanes& o) { for (int l = 0; l < kLanes; ++l) v[l] += o.v[l]; return *this; }
    Lanes operator^(const Lanes& o) const { Lanes r; for (int l = 0; l < kLanes; ++l) r.v[l] = v[l] ^ o.v[l]; return r; }
    Lanes operator+(const Lanes& o) const { Lanes r = *this; r += o; return r; }
  };
  static Lanes rotl(Lanes a, int k) {
    for (int l = 0; l < kLanes; ++l) a.v[l] = (a.v[l] << k) | (a.v[l] >> (32 - k));
    return a;
  }
  static Lanes splat(std::uint32_t v) { return Lanes{{v, v, v, v}}; }
#endif
  static void quarter(Lanes& a, Lanes& b, Lanes& c, Lanes& d) {
    a += b; d = rotl(d ^ a, 16);
    c += d; b = rotl(b ^ c, 12);
    a += b; d = rotl(d ^ a, 8);
    c += d; b = rotl(b ^ c, 7);
  }
  void refill() {
    Lanes s[16];
    for (int i = 0; i < 16; ++i) s[i] = splat(in_[i]);
    const std::uint64_t c0 = (static_cast<std::uint64_t>(in_[13]) << 32) | in_[12];
    auto lo = [c0](std::uint64_t l) { return static_cast<std::uint32_t>(c0 + l); };
    auto hi = [c0](std::uint64_t l) { return static_cast<std::uint32_t>((c0 + l) >> 32); };
#if defined(__GNUC__) || defined(__clang__)
    s[12] = Lanes{lo(0), lo(1), lo(2), lo(3)};
    s[13] = Lanes{hi(0), hi(1), hi(2), hi(3)};
#else
    s[12] = Lanes{{lo(0), lo(1), lo(2), lo(3)}};
    s[13] = Lanes{{hi(0), hi(1), hi(2), hi(3)}};
#endif
    Lanes x[16];
    for (int i = 0; i < 16; ++i) x[i] = s[i];
    for (int round = 0; round < 10; ++round) {  // 20 rounds: 10 column + diagonal double rounds
      quarter(x[0], x[4], x[8], x[12]); quarter(x[1], x[5], x[9], x[13]);
      quarter(x[2], x[6], x[10], x[14]); quarter(x[3], x[7], x[11], x[15]);
      quarter(x[0], x[5], x[10], x[15]); quarter(x[1], x[6], x[11], x[12]);
      quarter(x[2], x[7], x[8], x[13]); quarter(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; ++i) x[i] += s[i];
    for (int l = 0; l < kLanes; ++l)
      for (int i = 0; i < 16; i += 2)
        buf_[l * 8 + i / 2] = static_cast<std::uint64_t>(x[i][l]) | (static_cast<std::uint64_t>(x[i + 1][l]) << 32);
    const std::uint64_t c4 = c0 + kLanes;
    in_[12] = static_cast<std::uint32_t>(c4);
    in_[13] = static_cast<std::uint32_t>(c4 >> 32);
    pos_ = 0;
  }
  std::uint32_t in_[16];
  std::uint64_t buf_[kWords];
  int pos_ = kWords;
};

// Rows (values, for scalar outputs) per random stream, for every sampler of the core: block b
// draws from Rng(key, b) only, so the output depends on (key, inputs), never on threads.
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
