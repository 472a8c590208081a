// Session 48 (mgf48, docs/accountant_tail.md §78): log_mgf and chernoff_edge_bound on the pmfs of pmfs.bin
// (bench/bench_mgf48_log_mgf.py), float.hex-style output (%a) for a bit-for-bit diff of two builds, CPU time on stderr.
// g++ -std=c++17 -O3 -ffp-contract=off -Icpp/kernels bench/mgf48_log_mgf_harness.cpp cpp/kernels/accountant.cpp
// ./a.out [reps]   (EDGE=1: only the six Chernoff edges of the first pmf)
#include "accountant.hpp"
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cmath>
#include <ctime>
#include <cstdlib>
using namespace sharpdp::kernels;
int main(int argc, char** argv) {
  FILE* f = std::fopen("pmfs.bin", "rb");
  int64_t K, k0; double h; int idx = 0;
  const int reps = argc > 1 ? atoi(argv[1]) : 1;
  double cpu = 0;
  while (std::fread(&K, 8, 1, f) == 1) {
    std::fread(&k0, 8, 1, f); std::fread(&h, 8, 1, f);
    std::vector<double> g(K); std::fread(g.data(), 8, K, f);
    double xs = 1.0 / (std::fabs((double)k0 * h) + std::fabs((double)(k0 + K) * h) + h);
    for (int r = 0; r < reps; ++r)
    for (int i = -400; i <= 400; ++i) { if (getenv("EDGE")) break;
      for (double sg : {1.0, -1.0}) {
        double lam = sg * xs * std::pow(10.0, i / 40.0);  // 1e-10 .. 1e10 times the node scale
        clock_t c0 = clock();
        Mgf M = log_mgf(g.data(), K, k0, h, lam);
        cpu += double(clock() - c0) / CLOCKS_PER_SEC;
        if (r == 0) std::printf("%d %a %a %a %a %a\n", idx, lam, M.L, M.d1, M.d2, M.err);
      }
    }
    if (idx == 0) {
      for (int r = 0; r < reps; ++r) for (int dir : {1, -1}) for (double lt : {-16.221907228776452, -5.0, -40.0}) {
        clock_t c0 = clock();
        ChernoffEdge E = chernoff_edge_bound(g.data(), K, k0, h, 1e8, lt, dir, 4.1043514617288965e-06);
        cpu += double(clock() - c0) / CLOCKS_PER_SEC;
        if (r == 0) std::printf("edge %d %a %a %a\n", dir, lt, E.edge, E.allowance);
      }
    }
    ++idx;
  }
  std::fprintf(stderr, "cpu %.4f\n", cpu);
}
