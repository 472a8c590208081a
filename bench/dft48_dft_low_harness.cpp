// One call of Lemma 72.1's DFT by blocks (cpp/kernels/dft_taylor.hpp, serial) on an input written by
// bench/bench_dft48_dft_low.py --dump; prints e and z~_0..z~_K as hex floats (compare builds with md5sum). The
// instruction counts of docs/accountant_tail.md §75.3:
//   g++ -O3 -ffp-contract=off -std=c++17 -I. -DHDR='"cpp/kernels/dft_taylor.hpp"' bench/dft48_dft_low_harness.cpp -o h
//   valgrind --tool=callgrind --toggle-collect='run_dft*' ./h /tmp/y_4_0.bin
// (HDR: any version of the header, e.g. `git show REV:cpp/kernels/dft_taylor.hpp > old.hpp`).
#include HDR
#include <cstdio>
#include <vector>

struct Sum2 {  // accountant.cpp's
  double s = 0, c = 0;
  void add(double x) {
    const double t = s + x;
    const double z = t - s;
    c += (s - (t - z)) + (x - z);
    s = t;
  }
  double get() const { return s + c; }
};

__attribute__((noinline)) double run_dft(const double* y, std::int64_t N, std::int64_t K, std::complex<double>* z) {
  return sharpdp::kernels::dft_taylor::dft_blocks(
      y, N, K, z, [](std::size_t nb, auto&& body) { for (std::size_t b = 0; b < nb; ++b) body(b); });
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  FILE* f = std::fopen(argv[1], "rb");
  std::int64_t hd[2];
  if (!f || std::fread(hd, 8, 2, f) != 2) return 1;
  std::vector<double> y(static_cast<std::size_t>(hd[0]));
  if (std::fread(y.data(), 8, y.size(), f) != y.size()) return 1;
  std::fclose(f);
  std::vector<std::complex<double>> z(static_cast<std::size_t>(hd[1] + 1));
  const double e = run_dft(y.data(), hd[0], hd[1], z.data());
  std::printf("%a", e);
  for (const auto& v : z) std::printf(" %a %a", v.real(), v.imag());
  std::printf("\n");
  return 0;
}
