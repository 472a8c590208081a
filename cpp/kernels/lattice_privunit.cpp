// LatticePrivUnit's exact sampler (lattice_privunit.hpp): fixed-width exact integers, CKS discrete
// Gaussians (Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential Privacy", Algorithms
// 1-3), the exact cone test. Mirrors the Python reference step by step, including its use of the words.
#include "lattice_privunit.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace sharpdp {
namespace kernels {
namespace {

// A value needed more than kLatticeLimbs limbs: the row is left to the reference.
struct LatticeOverflow {};

// Unsigned integer, little-endian 64-bit limbs l[0..n), no leading zero limb (n = 0 is zero).
// Copies move only the used limbs.
struct Big {
  int n = 0;
  std::uint64_t l[kLatticeLimbs];

  Big() {}  // NOLINT: limbs beyond n are never read
  explicit Big(std::uint64_t v) : n(v != 0 ? 1 : 0) { l[0] = v; }
  Big(const Big& o) : n(o.n) { std::copy(o.l, o.l + o.n, l); }
  Big& operator=(const Big& o) {
    if (this != &o) {
      n = o.n;
      std::copy(o.l, o.l + o.n, l);
    }
    return *this;
  }
  bool zero() const { return n == 0; }
  void trim() {
    while (n > 0 && l[n - 1] == 0) --n;
  }
  int bit_length() const { return n == 0 ? 0 : 64 * (n - 1) + (64 - __builtin_clzll(l[n - 1])); }
};

inline void check_size(int n) {
  if (n > kLatticeLimbs) throw LatticeOverflow{};
}

int cmp(const Big& a, const Big& b) {
  if (a.n != b.n) return a.n < b.n ? -1 : 1;
  for (int i = a.n - 1; i >= 0; --i)
    if (a.l[i] != b.l[i]) return a.l[i] < b.l[i] ? -1 : 1;
  return 0;
}

// r = a + b (r may be a or b).
void add(const Big& a, const Big& b, Big& r) {
  const Big& lo = a.n < b.n ? a : b;
  const Big& hi = a.n < b.n ? b : a;
  const int ln = lo.n, hn = hi.n;
  unsigned __int128 carry = 0;
  for (int i = 0; i < hn; ++i) {
    carry += static_cast<unsigned __int128>(hi.l[i]) + (i < ln ? lo.l[i] : 0);
    r.l[i] = static_cast<std::uint64_t>(carry);
    carry >>= 64;
  }
  r.n = hn;
  if (carry != 0) {
    check_size(hn + 1);
    r.l[hn] = static_cast<std::uint64_t>(carry);
    r.n = hn + 1;
  }
}

// r = a - b, a >= b (r may be a or b).
void sub(const Big& a, const Big& b, Big& r) {
  const int an = a.n, bn = b.n;
  std::uint64_t borrow = 0;
  for (int i = 0; i < an; ++i) {
    const std::uint64_t bi = i < bn ? b.l[i] : 0;
    const std::uint64_t d1 = a.l[i] - bi;
    const std::uint64_t b1 = a.l[i] < bi ? 1 : 0;
    r.l[i] = d1 - borrow;
    borrow = b1 | (d1 < borrow ? 1 : 0);
  }
  r.n = an;
  r.trim();
}

// r = a << k (r distinct from a).
void shl(const Big& a, int k, Big& r) {
  if (a.n == 0) {
    r.n = 0;
    return;
  }
  const int w = k / 64, b = k % 64;
  const int n = a.n + w + 1;
  check_size(n - 1);
  for (int i = 0; i < w; ++i) r.l[i] = 0;
  if (b == 0) {
    for (int i = 0; i < a.n; ++i) r.l[i + w] = a.l[i];
    r.n = a.n + w;
    return;
  }
  std::uint64_t prev = 0;
  for (int i = 0; i < a.n; ++i) {
    r.l[i + w] = (a.l[i] << b) | prev;
    prev = a.l[i] >> (64 - b);
  }
  if (prev != 0) {
    check_size(n);
    r.l[a.n + w] = prev;
    r.n = n;
  } else {
    r.n = n - 1;
  }
}

// r = a >> k (r may be a).
void shr(const Big& a, int k, Big& r) {
  const int w = k / 64, b = k % 64;
  if (w >= a.n) {
    r.n = 0;
    return;
  }
  const int n = a.n - w;
  for (int i = 0; i < n; ++i) {
    std::uint64_t v = a.l[i + w] >> b;
    if (b != 0 && i + w + 1 < a.n) v |= a.l[i + w + 1] << (64 - b);
    r.l[i] = v;
  }
  r.n = n;
  r.trim();
}

// r = a mod 2^k (r may be a).
void low_bits(const Big& a, int k, Big& r) {
  const int w = k / 64, b = k % 64;
  if (w >= a.n) {
    if (&r != &a) r = a;
    return;
  }
  for (int i = 0; i < w; ++i) r.l[i] = a.l[i];
  int n = w;
  if (b != 0) {
    r.l[w] = a.l[w] & ((std::uint64_t{1} << b) - 1);
    n = w + 1;
  }
  r.n = n;
  r.trim();
}

// r = a * b (r distinct from a and b).
void mul(const Big& a, const Big& b, Big& r) {
  if (a.n == 0 || b.n == 0) {
    r.n = 0;
    return;
  }
  if (a.n == 1 && b.n == 1) {
    const unsigned __int128 p = static_cast<unsigned __int128>(a.l[0]) * b.l[0];
    r.l[0] = static_cast<std::uint64_t>(p);
    r.l[1] = static_cast<std::uint64_t>(p >> 64);
    r.n = r.l[1] != 0 ? 2 : 1;
    return;
  }
  const int n = a.n + b.n;
  check_size(n - 1);
  const int cap = n < kLatticeLimbs ? n : kLatticeLimbs;
  for (int i = 0; i < cap; ++i) r.l[i] = 0;
  for (int i = 0; i < a.n; ++i) {
    unsigned __int128 carry = 0;
    for (int j = 0; j < b.n; ++j) {
      carry += static_cast<unsigned __int128>(a.l[i]) * b.l[j] + r.l[i + j];
      r.l[i + j] = static_cast<std::uint64_t>(carry);
      carry >>= 64;
    }
    if (i + b.n < kLatticeLimbs) {
      r.l[i + b.n] = static_cast<std::uint64_t>(carry);
    } else if (carry != 0) {
      throw LatticeOverflow{};
    }
  }
  r.n = cap;
  r.trim();
}

// q = a / d, returns a mod d (d >= 1; q may be a).
std::uint64_t divmod_small(const Big& a, std::uint64_t d, Big& q) {
  unsigned __int128 rem = 0;
  const int n = a.n;
  for (int i = n - 1; i >= 0; --i) {
    const unsigned __int128 cur = (rem << 64) | a.l[i];
    q.l[i] = static_cast<std::uint64_t>(cur / d);
    rem = cur % d;
  }
  q.n = n;
  q.trim();
  return static_cast<std::uint64_t>(rem);
}

// floor(a / 2^shift) as 128 bits, shift in (-128, 6144], the caller knowing that it is < 2^128.
unsigned __int128 window128(const Big& a, int shift) {
  if (shift < 0) {
    unsigned __int128 v = 0;
    for (int i = a.n - 1; i >= 0; --i) v = (v << 64) | a.l[i];  // a < 2^(128 + shift): at most two limbs
    return v << (-shift);
  }
  const int w = shift / 64, b = shift % 64;
  auto limb = [&](int i) -> std::uint64_t { return i < a.n ? a.l[i] : 0; };
  const std::uint64_t l0 = limb(w), l1 = limb(w + 1), l2 = limb(w + 2);
  std::uint64_t lo = l0, hi = l1;
  if (b != 0) {
    lo = (l0 >> b) | (l1 << (64 - b));
    hi = (l1 >> b) | (l2 << (64 - b));
  }
  return (static_cast<unsigned __int128>(hi) << 64) | lo;
}

// floor(h / k) for h < k 2^64 (the quotient fits in 64 bits).
inline std::uint64_t div128(unsigned __int128 h, std::uint64_t k) {
  const auto hi = static_cast<std::uint64_t>(h >> 64), lo = static_cast<std::uint64_t>(h);
  if (hi == 0) return lo / k;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  std::uint64_t q, r;
  __asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(k) : "cc");
  (void)r;
  return q;
#else
  return static_cast<std::uint64_t>(h / k);
#endif
}

inline int bit_length64(std::uint64_t v) { return v == 0 ? 0 : 64 - __builtin_clzll(v); }

// Exact uniform integers and Bernoulli coins from one ChaCha20 stream (the reference's _Bits):
// 64-bit words most significant bits first; bits() keeps an accumulator of fewer than 64 bits across
// calls; bernoulli() consumes whole fresh words.
class LatticeBits {
 public:
  LatticeBits(const StreamKey& key, std::uint64_t stream) : rng_(key, stream) {}

  // k fresh bits as an integer in [0, 2^k).
  void bits(int k, Big& out) {
    if (nbits_ >= k) {  // k < 64 here
      nbits_ -= k;
      out = Big(k == 0 ? 0 : acc_ >> nbits_);
      acc_ &= nbits_ == 0 ? 0 : (std::uint64_t{1} << nbits_) - 1;
      return;
    }
    Big t(acc_);
    while (nbits_ < k) {  // t = (t << 64) | word
      const std::uint64_t w = rng_.next();
      check_size(t.n + 1);
      if (t.n == 0) {
        t = Big(w);
      } else {
        for (int i = t.n; i > 0; --i) t.l[i] = t.l[i - 1];
        t.l[0] = w;
        ++t.n;
      }
      nbits_ += 64;
    }
    nbits_ -= k;
    acc_ = nbits_ == 0 ? 0 : (t.n > 0 ? t.l[0] : 0) & ((std::uint64_t{1} << nbits_) - 1);
    shr(t, nbits_, out);
  }

  bool bit() {
    Big b;
    bits(1, b);
    return !b.zero();
  }

  // Bernoulli(num / (k 2^e)): the first differing base-2^64 digit of a uniform U (fresh words) and of
  // num / den decides [U < num / den]; equal digits to the end of num / den's expansion: false.
  bool bernoulli(const Big& num, std::uint64_t k, int e) {
    // num >= k 2^e iff floor(num / 2^e) >= k (k 2^e has no bits below e)
    const int bl = num.bit_length(), bk = bit_length64(k);
    if (bl > e + bk) return true;
    if (bl == e + bk && static_cast<std::uint64_t>(window128(num, e)) >= k) return true;
    {  // first digit c = floor(num 2^64 / (k 2^e)) < 2^64 from a 128-bit window; the rest only on a tie
      const unsigned __int128 h = window128(num, e - 64);  // < k 2^64
      const std::uint64_t c = k == 1 ? static_cast<std::uint64_t>(h) : div128(h, k);
      const std::uint64_t w = rng_.next();
      if (w != c) return w < c;
    }
    Big den, r, x, hi, lo;
    r = num;
    bool first = true;
    while (true) {
      shl(r, 64, x);  // x = r 2^64 = c den + r', den = k 2^e
      shr(x, e, hi);
      low_bits(x, e, lo);
      const std::uint64_t rk = divmod_small(hi, k, hi);  // hi < k 2^64: the quotient c is one limb
      const std::uint64_t c = hi.n > 0 ? hi.l[0] : 0;
      shl(Big(rk), e, r);
      add(r, lo, r);
      if (!first) {
        const std::uint64_t w = rng_.next();
        if (w != c) return w < c;
      }
      first = false;  // the first digit's word was drawn (and tied) above
      if (r.zero()) return false;
    }
  }

  // Bernoulli(exp(-num / 2^e)) (CKS Algorithm 1 and its extension to gamma > 1).
  bool bernoulli_exp(const Big& num, int e) {
    const int bl = num.bit_length();  // num <= 2^e: the common case, no copy
    if (bl <= e || (bl == e + 1 && num.l[num.n - 1] == (std::uint64_t{1} << (e % 64)) && [&] {
          for (int i = 0; i < num.n - 1; ++i)
            if (num.l[i] != 0) return false;
          return true;
        }()))
      return bernoulli_exp_le1(num, e);
    Big cur = num, den;
    shl(Big(1), e, den);
    const Big one(1);
    while (cmp(cur, den) > 0) {
      if (!bernoulli_exp_le1(one, 0)) return false;
      sub(cur, den, cur);
    }
    return bernoulli_exp_le1(cur, e);
  }

  // P(Y = y) proportional to exp(-|y| / t), t = 2^s (CKS Algorithm 2): sign and magnitude.
  void discrete_laplace(int s, bool& neg, Big& mag) {
    const Big one(1);
    Big u, v_shift;
    while (true) {
      bits(s, u);  // below(2^s): bit_length(2^s - 1) = s bits, never rejected
      if (!bernoulli_exp(u, s)) continue;
      std::uint64_t v = 0;
      while (bernoulli_exp(one, 0)) ++v;
      shl(Big(v), s, v_shift);
      add(u, v_shift, mag);
      neg = bit();
      if (neg && mag.zero()) continue;
      return;
    }
  }

  // P(Y = y) proportional to exp(-y^2 / (2 sigma^2)), sigma = 2^s (CKS Algorithm 3, t = sigma).
  void discrete_gaussian(int s, bool& neg, Big& mag) {
    Big sigma, a, a2;
    shl(Big(1), s, sigma);
    while (true) {
      discrete_laplace(s, neg, mag);
      if (cmp(mag, sigma) >= 0) {
        sub(mag, sigma, a);
      } else {
        sub(sigma, mag, a);
      }
      mul(a, a, a2);
      if (bernoulli_exp(a2, 2 * s + 1)) return;
    }
  }

 private:
  bool bernoulli_exp_le1(const Big& num, int e) {
    std::uint64_t k = 1;  // K = first k with A_k = 0, A_k ~ Bernoulli(gamma / k); P(K odd) = exp(-gamma)
    while (bernoulli(num, k, e)) ++k;
    return (k & 1) == 1;
  }

  Rng rng_;
  std::uint64_t acc_ = 0;
  int nbits_ = 0;
};

// v = (neg ? -1 : 1) mant 2^exp2, mant odd (or v = 0: mant = 0).
void dyadic(double v, bool& neg, std::uint64_t& mant, int& exp2) {
  neg = v < 0;
  mant = 0;
  exp2 = 0;
  if (v == 0) return;
  int ex = 0;
  const double f = std::frexp(std::fabs(v), &ex);  // |v| = f 2^ex, f in [0.5, 1)
  mant = static_cast<std::uint64_t>(std::ldexp(f, 53));
  exp2 = ex - 53;
  while ((mant & 1) == 0) {
    mant >>= 1;
    ++exp2;
  }
}

// Exact membership in K_x = {z : <z, x> >= theta |z| |x|}: X = x / 2^(min exponent) is an integer vector
// with x's direction (the test is homogeneous in X), theta = a / 2^eb.
class LatticeCone {
 public:
  LatticeCone(const double* x, std::size_t dim, double theta) : xabs_(dim), xneg_(dim) {
    std::vector<std::uint64_t> mant(dim);
    std::vector<int> ex(dim);
    int emin = 0;
    bool any = false;
    for (std::size_t j = 0; j < dim; ++j) {
      bool ng = false;
      dyadic(x[j], ng, mant[j], ex[j]);
      xneg_[j] = ng;
      if (mant[j] != 0 && (!any || ex[j] < emin)) emin = ex[j];
      any = any || mant[j] != 0;
    }
    xx_ = Big(0);
    Big sq;
    for (std::size_t j = 0; j < dim; ++j) {
      shl(Big(mant[j]), mant[j] != 0 ? ex[j] - emin : 0, xabs_[j]);
      mul(xabs_[j], xabs_[j], sq);
      add(xx_, sq, xx_);
    }
    bool tneg = false;
    std::uint64_t ta = 0;
    int te = 0;
    dyadic(theta, tneg, ta, te);
    nonneg_ = theta >= 0;
    two_eb_ = ta == 0 ? 0 : -2 * te;  // |theta| < 1: te < 0
    Big a(ta);
    mul(a, a, a2_);
  }

  bool contains(const std::vector<Big>& z, const std::vector<char>& zneg) const {
    Big pos(0), negs(0), t, sabs, zz(0), s2, lhs, r1, rhs;
    for (std::size_t j = 0; j < z.size(); ++j) {
      mul(z[j], xabs_[j], t);
      if ((zneg[j] != 0) != xneg_[j]) {
        add(negs, t, negs);
      } else {
        add(pos, t, pos);
      }
      mul(z[j], z[j], t);
      add(zz, t, zz);
    }
    const bool s_nonneg = cmp(pos, negs) >= 0;
    if (s_nonneg) {
      sub(pos, negs, sabs);
    } else {
      sub(negs, pos, sabs);
    }
    mul(sabs, sabs, s2);
    shl(s2, two_eb_, lhs);  // s^2 b^2
    mul(a2_, zz, r1);
    mul(r1, xx_, rhs);  // a^2 |z|^2 |X|^2
    const int c = cmp(lhs, rhs);
    if (nonneg_) return s_nonneg && c >= 0;
    return s_nonneg || c <= 0;
  }

 private:
  std::vector<Big> xabs_;
  std::vector<bool> xneg_;
  Big xx_, a2_;
  int two_eb_ = 0;
  bool nonneg_ = true;
};

// Entry magnitude m with sign into `width` two's complement limbs; false if it does not fit.
bool store(const Big& m, bool neg, std::size_t width, std::uint64_t* out) {
  const int bl = m.bit_length();
  if (static_cast<std::size_t>(bl) + 1 > 64 * width) return false;
  for (std::size_t i = 0; i < width; ++i) out[i] = static_cast<int>(i) < m.n ? m.l[i] : 0;
  if (neg) {
    unsigned __int128 carry = 1;
    for (std::size_t i = 0; i < width; ++i) {
      carry += static_cast<std::uint64_t>(~out[i]);
      out[i] = static_cast<std::uint64_t>(carry);
      carry >>= 64;
    }
  }
  return true;
}

constexpr std::size_t kLatticeBlockRows = 16;

}  // namespace

void lattice_privunit_sample(const double* x, std::size_t n, std::size_t dim, std::uint64_t p_num, int p_exp,
                             double theta, int scale_bits, const StreamKey& key, std::uint64_t stream0,
                             int threads, std::size_t width, std::uint64_t* limbs, std::int32_t* row_bits,
                             std::uint64_t max_proposals) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: all cores)");
  if (dim < 1) throw std::invalid_argument("dim must be >= 1");
  if (p_exp < 1 || p_exp > 1074 || p_num == 0 || (p_num >> 53) != 0 || (p_exp < 64 && p_num >= (std::uint64_t{1} << p_exp)))
    throw std::invalid_argument("p = p_num 2^-p_exp must lie in (0, 1) with p_num < 2^53, 1 <= p_exp <= 1074");
  if (!(theta > -1.0 && theta < 1.0)) throw std::invalid_argument("theta must lie in (-1, 1)");
  if (scale_bits < 0 || scale_bits > 480) throw std::invalid_argument("scale_bits must lie in [0, 480]");
  if (width < 1 || width > static_cast<std::size_t>(kLatticeLimbs)) throw std::invalid_argument("width must be in [1, 96]");
  for (std::size_t i = 0; i < n; ++i) {
    bool nonzero = false;
    for (std::size_t j = 0; j < dim; ++j) {
      const double v = x[i * dim + j];
      if (!std::isfinite(v)) throw std::invalid_argument("x must be finite");
      nonzero = nonzero || v != 0;
    }
    if (!nonzero) throw std::invalid_argument("x must have nonzero rows");
  }
  const Big p_big(p_num);
  const std::size_t nblocks = (n + kLatticeBlockRows - 1) / kLatticeBlockRows;
  parallel_blocks(nblocks, threads, [&](std::size_t b) {
    std::vector<Big> z(dim);
    std::vector<char> zneg(dim);
    const std::size_t hi = std::min(n, (b + 1) * kLatticeBlockRows);
    for (std::size_t i = b * kLatticeBlockRows; i < hi; ++i) {
      std::int32_t bits = -1;
      try {
        const LatticeCone cone(x + i * dim, dim, theta);
        LatticeBits rnd(key, stream0 + i);
        const bool inside = rnd.bernoulli(p_big, 1, p_exp);
        bool found = false;
        for (std::uint64_t tries = 0; max_proposals == 0 || tries < max_proposals; ++tries) {
          for (std::size_t j = 0; j < dim; ++j) {
            bool ng = false;
            rnd.discrete_gaussian(scale_bits, ng, z[j]);
            zneg[j] = ng ? 1 : 0;
          }
          if (cone.contains(z, zneg) == inside) {
            found = true;
            break;
          }
        }
        bits = found ? 0 : -2;
        for (std::size_t j = 0; j < dim && bits >= 0; ++j) {
          if (!store(z[j], zneg[j] != 0, width, limbs + (i * dim + j) * width)) bits = -1;
          else bits = std::max(bits, static_cast<std::int32_t>(z[j].bit_length()));
        }
      } catch (const LatticeOverflow&) {
        bits = -1;
      }
      row_bits[i] = bits;
      if (bits < 0)
        for (std::size_t k = 0; k < dim * width; ++k) limbs[i * dim * width + k] = 0;
    }
  });
}

}  // namespace kernels
}  // namespace sharpdp
