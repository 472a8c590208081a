// Review rev-krr8: the krr7 AVX2 clones against the default build, bit for bit (docs/sharp_krr.md §4.12 (vi)).
// Built twice from cpp/kernels/exact_krr.hpp: with the clones (the AVX2 version is chosen on this CPU) and
// with -DSHARPDP_KRR_NO_CLONES; both print every double of the windows and brackets as hex for random
// inputs (a fixed generator); the two outputs must be identical. Also run a third build with -mavx2 -mfma
// and -ffp-contract=fast to show the check can fail (contraction changes doubles).
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <cstring>
#include "kernels/exact_krr.hpp"
using namespace sharpdp::kernels::exact_krr;
static std::uint64_t st = 88172645463325252ull;
static double urand() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (st >> 11) * (1.0 / 9007199254740992.0); }
static void hx(double x) { std::uint64_t b; std::memcpy(&b, &x, 8); std::printf("%016llx ", (unsigned long long)b); }
int main(int argc, char** argv) {
  const int ncase = argc > 1 ? std::atoi(argv[1]) : 400;
  const double U = 1.1102230246251565e-16, ULP = 8 * U;
  std::uint64_t hsum = 1469598103934665603ull;
  auto mix = [&](double x) { std::uint64_t b; std::memcpy(&b, &x, 8); hsum = (hsum ^ b) * 1099511628211ull; };
  for (int c = 0; c < ncase; ++c) {
    const double e0 = std::exp(std::log(1e-3) + urand() * (std::log(12.0) - std::log(1e-3)));
    const int dec = static_cast<int>(urand() * 9.0);
    std::int64_t n = 2 + static_cast<std::int64_t>(std::pow(10.0, dec * urand() + (dec > 6 ? 1 : 0)));
    if (n > 1000000000) n = 1000000000;
    const std::int64_t j = static_cast<std::int64_t>(urand() * static_cast<double>(n - 1));
    const double nats = 1.0 + urand() * 299.0;
    const double eps = urand() < 0.2 ? 0.0 : urand() * e0;
    const double lp = -std::log1p(std::exp(-e0));
    const double p = std::exp(lp), q = std::exp(lp - e0);
    auto rel = [&](double z) { return z == 0.0 ? 0.0 : ULP + (e0 + 1) * (2 * ULP + U) + ULP + U * (1 + std::fabs(z)) * 1.01 + 2 * U; };
    const double a = -p * std::expm1(eps - e0), b = q * std::expm1(eps + e0), e = std::expm1(eps);
    // window-heavy work is bounded: skip the largest interior windows at tiny eps0 (too slow for a test)
    if (static_cast<double>(n) * p * q * nats > 2e9) continue;
    Window w;
    binom_window(j, p, q, e0, nats, w);
    mix(static_cast<double>(w.lo)); mix(w.scale); mix(w.rel);
    for (double x : w.pmf) mix(x);
    ClassBracket r = class_bracket(e0, p, q, a, b, e, rel(eps - e0), rel(eps + e0), ULP + 2 * U, n, j, nats);
    mix(r.lower); mix(r.upper); mix(r.charge); mix(static_cast<double>(r.terms));
    std::printf("%d %.17g %lld %lld %.17g %.17g ", c, e0, (long long)n, (long long)j, nats, eps);
    hx(r.lower); hx(r.upper); hx(w.scale); std::printf("%zu\n", w.pmf.size());
  }
  std::printf("HASH %016llx\n", (unsigned long long)hsum);
  return 0;
}
