// Lemma 72.1's DFT by blocks (cpp/kernels/dft_taylor.hpp) on fixed random inputs (table and direct twiddles, short
// last blocks, K across the 8-frequency chunks): prints a hash of every returned double. tests/test_lead48_dft_portable.py
// builds it with the GCC vector types and with -DSHARPDP_NO_VECTOR_EXT (the plain-array lanes other compilers take)
// and requires the same hash.
#include "dft_taylor.hpp"
#include <cstdio>
#include <random>
#include <vector>
int main() {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  unsigned long long h = 1469598103934665603ULL;
  auto mix = [&](double d) { unsigned long long b; std::memcpy(&b, &d, 8); h = (h ^ b) * 1099511628211ULL; };
  for (std::int64_t N : {64LL, 96LL, 1000LL, 4096LL, 6000LL, 65536LL, 100003LL, 262144LL}) {
    for (std::int64_t K : {0LL, 1LL, 7LL, 8LL, 9LL, 63LL, 200LL}) {
      if (K > N / 2) continue;
      std::vector<double> y(N);
      for (auto& v : y) v = u(g) < 0.3 ? u(g) * std::pow(10.0, -300 * u(g)) : 0.0;
      y[N - 1] = -0.5;
      std::vector<std::complex<double>> z(K + 1);
      double e = sharpdp::kernels::dft_taylor::dft_blocks(y.data(), N, K, z.data(), [](std::size_t nb, auto&& body) {
        for (std::size_t b = 0; b < nb; ++b) body(b); });
      mix(e);
      for (auto& c : z) { mix(c.real()); mix(c.imag()); }
    }
  }
  std::printf("%016llx\n", h);
}
