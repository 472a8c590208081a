// Test harness of tests/test_review_revlatcpp.py: the unmodified kernel source with a scripted word prefix
// (then the real ChaCha20 stream), optional portable division (HARNESS_PORTABLE) and a smaller limb
// count (HARNESS_LIMBS); its helpers exported with C linkage for ctypes.

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>
#include "lattice_privunit.hpp"
namespace sharpdp { namespace kernels {
struct HarnessScript { const std::uint64_t* w = nullptr; std::size_t n = 0; };
inline thread_local HarnessScript g_script;
inline thread_local std::size_t g_words_read = 0;
class HarnessRng {
 public:
  HarnessRng(const StreamKey& key, std::uint64_t stream) : rng_(key, stream) {}
  std::uint64_t next() { ++g_words_read; return pos_ < g_script.n ? g_script.w[pos_++] : rng_.next(); }
 private:
  Rng rng_;
  std::size_t pos_ = 0;
};
}}
#define Rng HarnessRng
#ifdef HARNESS_PORTABLE
#undef __x86_64__
#endif
#ifdef HARNESS_LIMBS
#define kLatticeLimbs HARNESS_LIMBS
#endif
#include "lattice_privunit.cpp"
using namespace sharpdp;
using namespace sharpdp::kernels;
namespace {
Big from_arr(const std::uint64_t* a, int n) { Big b; b.n = n; for (int i = 0; i < n; ++i) b.l[i] = a[i]; b.trim(); return b; }
int to_arr(const Big& b, std::uint64_t* out) { for (int i = 0; i < b.n; ++i) out[i] = b.l[i]; return b.n; }
StreamKey key_of(const unsigned char* k) { return StreamKey::from_bytes(k); }
}
extern "C" {
int h_limbs() { return kLatticeLimbs; }
void h_set_script(const std::uint64_t* w, std::size_t n) { g_script.w = w; g_script.n = n; }
std::size_t h_words_read() { return g_words_read; }
void h_reset_words() { g_words_read = 0; }
// returns -2 on overflow, else result length. op: 0 add, 1 sub, 2 mul, 3 shl, 4 shr, 5 low_bits
int h_arith(int op, const std::uint64_t* a, int an, const std::uint64_t* b, int bn, int k, std::uint64_t* out) {
  try {
    Big A = from_arr(a, an), B = from_arr(b, bn), R;
    switch (op) {
      case 0: add(A, B, R); break;
      case 1: sub(A, B, R); break;
      case 2: mul(A, B, R); break;
      case 3: shl(A, k, R); break;
      case 4: shr(A, k, R); break;
      case 5: low_bits(A, k, R); break;
      case 6: add(A, B, A); R = A; break;          // aliasing r == a
      case 7: shr(A, k, A); R = A; break;
      case 8: low_bits(A, k, A); R = A; break;
      case 9: sub(A, B, A); R = A; break;
    }
    return to_arr(R, out);
  } catch (const LatticeOverflow&) { return -2; }
}
std::uint64_t h_divmod_small(const std::uint64_t* a, int an, std::uint64_t d, std::uint64_t* q, int* qn) {
  Big A = from_arr(a, an); const std::uint64_t r = divmod_small(A, d, A); *qn = to_arr(A, q); return r;
}
void h_window128(const std::uint64_t* a, int an, int shift, std::uint64_t* out2) {
  const unsigned __int128 v = window128(from_arr(a, an), shift);
  out2[0] = static_cast<std::uint64_t>(v); out2[1] = static_cast<std::uint64_t>(v >> 64);
}
std::uint64_t h_div128(std::uint64_t hi, std::uint64_t lo, std::uint64_t k) {
  return div128((static_cast<unsigned __int128>(hi) << 64) | lo, k);
}
// coins with a scripted prefix; return result, *words = words read
int h_bernoulli(const unsigned char* key, std::uint64_t stream, const std::uint64_t* num, int nn, std::uint64_t k, int e, std::size_t* words) {
  g_words_read = 0; LatticeBits r(key_of(key), stream); const int res = r.bernoulli(from_arr(num, nn), k, e); *words = g_words_read; return res;
}
int h_bernoulli_exp(const unsigned char* key, std::uint64_t stream, const std::uint64_t* num, int nn, int e, std::size_t* words) {
  g_words_read = 0; LatticeBits r(key_of(key), stream); const int res = r.bernoulli_exp(from_arr(num, nn), e); *words = g_words_read; return res;
}
// count draws of (bits(kb), then discrete gaussian(s)) repeated `reps` times; outputs signed mags as limbs (8 per value)
int h_dgauss(const unsigned char* key, std::uint64_t stream, int s, int reps, std::uint64_t* out, int* neg, std::size_t* words) {
  g_words_read = 0;
  try {
    LatticeBits r(key_of(key), stream);
    for (int i = 0; i < reps; ++i) { Big m; bool ng; r.discrete_gaussian(s, ng, m); neg[i] = ng; for (int j = 0; j < 10; ++j) out[10 * i + j] = j < m.n ? m.l[j] : 0; }
  } catch (const LatticeOverflow&) { return -2; }
  *words = g_words_read; return 0;
}
int h_dlap(const unsigned char* key, std::uint64_t stream, int s, int reps, std::uint64_t* out, int* neg, std::size_t* words) {
  g_words_read = 0;
  try {
    LatticeBits r(key_of(key), stream);
    for (int i = 0; i < reps; ++i) { Big m; bool ng; r.discrete_laplace(s, ng, m); neg[i] = ng; for (int j = 0; j < 10; ++j) out[10 * i + j] = j < m.n ? m.l[j] : 0; }
  } catch (const LatticeOverflow&) { return -2; }
  *words = g_words_read; return 0;
}
int h_bits(const unsigned char* key, std::uint64_t stream, const int* ks, int m, std::uint64_t* out) {  // out: 10 limbs each
  LatticeBits r(key_of(key), stream);
  for (int i = 0; i < m; ++i) { Big b; r.bits(ks[i], b); for (int j = 0; j < 10; ++j) out[10 * i + j] = j < b.n ? b.l[j] : 0; }
  return 0;
}
int h_sample(const double* x, std::size_t n, std::size_t dim, std::uint64_t p_num, int p_exp, double theta, int scale_bits,
             const unsigned char* key, std::uint64_t stream0, int threads, std::size_t width, std::uint64_t* limbs, std::int32_t* row_bits) {
  try { lattice_privunit_sample(x, n, dim, p_num, p_exp, theta, scale_bits, key_of(key), stream0, threads, width, limbs, row_bits); }
  catch (const std::exception&) { return -1; }
  return 0;
}
}
