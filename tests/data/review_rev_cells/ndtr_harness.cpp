// ctypes harness: the kernel's own ndtr / allowances and raw glibc functions (review rev-cells)
#include "kernels/lognormal_cells.hpp"
#include <cmath>
extern "C" {
void k_ndtr(const double* z, double* out, long n) { for (long i = 0; i < n; ++i) out[i] = sharpdp::kernels::lognormal::ndtr(z[i]); }
void k_rel(const double* z, double* out, long n) { for (long i = 0; i < n; ++i) out[i] = sharpdp::kernels::lognormal::ndtr_rel(z[i]); }
void k_flush(const double* z, double* out, long n) { for (long i = 0; i < n; ++i) out[i] = sharpdp::kernels::lognormal::ndtr_flush(z[i]); }
void f_erfc(const double* x, double* o, long n) { for (long i = 0; i < n; ++i) o[i] = std::erfc(x[i]); }
void f_erf(const double* x, double* o, long n) { for (long i = 0; i < n; ++i) o[i] = std::erf(x[i]); }
void f_exp(const double* x, double* o, long n) { for (long i = 0; i < n; ++i) o[i] = std::exp(x[i]); }
void f_expm1(const double* x, double* o, long n) { for (long i = 0; i < n; ++i) o[i] = std::expm1(x[i]); }
void f_log1p(const double* x, double* o, long n) { for (long i = 0; i < n; ++i) o[i] = std::log1p(x[i]); }
void f_log(const double* x, double* o, long n) { for (long i = 0; i < n; ++i) o[i] = std::log(x[i]); }
void f_asinh(const double* x, double* o, long n) { for (long i = 0; i < n; ++i) o[i] = std::asinh(x[i]); }
}
extern "C" {
// long double references (x87 80-bit: 64-bit significand, ~2^11 times finer than double)
void l_ndtr(const double* z, double* out, long n) {
  for (long i = 0; i < n; ++i) {
    long double x = (long double)z[i] * 0.707106781186547524400844362104849039L;
    out[i] = (double)(x < 0 ? 0.5L * erfcl(-x) : 1.0L - 0.5L * erfcl(x));
  }
}
void l_rel_ndtr(const double* z, const double* v, double* out, long n) {  // |v - Phi| / Phi
  for (long i = 0; i < n; ++i) {
    long double x = (long double)z[i] * 0.707106781186547524400844362104849039L;
    long double t = x < 0 ? 0.5L * erfcl(-x) : 1.0L - 0.5L * erfcl(x);
    out[i] = (double)(fabsl((long double)v[i] - t) / t);
  }
}
#define REL(name, fd, fl) void name(const double* x, double* out, long n) { \
  for (long i = 0; i < n; ++i) { long double t = fl((long double)x[i]); double d = fd(x[i]); \
    out[i] = (double)(fabsl((long double)d - t) / fabsl(t)); } }
REL(r_exp, std::exp, expl) REL(r_expm1, std::expm1, expm1l) REL(r_log1p, std::log1p, log1pl)
REL(r_log, std::log, logl) REL(r_asinh, std::asinh, asinhl) REL(r_erfc, std::erfc, erfcl) REL(r_erf, std::erf, erfl)
}
