"""libm and the kernel's ndtr against glibc's long-double functions (review rev-cells; docs/accountant.md §2.3).

Build the harness first (it includes the kernel header, -O3 as the module):
    g++ -O3 -shared -fPIC -I cpp -o /tmp/rev_cells_harness.so tests/data/review_rev_cells/ndtr_harness.cpp
then run this script. Results on the review machine (glibc, Debian 12, x86-64; 2e6 arguments per range):
exp <= 0.50 ulp, expm1 <= 0.68, log1p <= 0.66, log <= 0.51, asinh <= 1.09, erf <= 0.77, erfc <= 3.10 (x < 26.5;
above, erfc is subnormal), all far inside the assumed 8 ulp and the charged 64; the kernel's ndtr: at most 0.38 of
its allowance (64 + 2 z^2) ulp on [-37.5, -8] (857 ulp at z ~ -36, always below (z^2 + 10) ulp, the proof's bound),
0.23 on [-8, -1], 0.04 on [-1.5, 1.5], 0.01 on [1, 40]; 8000 of those cross-checked against mpmath at 40 digits.
"""

import ctypes

import numpy as np

LIB = ctypes.CDLL("/tmp/rev_cells_harness.so")
PTR = ctypes.POINTER(ctypes.c_double)
EPS = 2.0 ** -52
N = 2_000_000


def call(f, *arrs):
    n = len(arrs[0])
    out = np.empty(n)
    args = [a.ctypes.data_as(PTR) for a in arrs] + [out.ctypes.data_as(PTR), ctypes.c_long(n)]
    getattr(LIB, f)(*args)
    return out


def scan(name, x):
    r = call(name, x) / EPS
    i = int(np.nanargmax(r))
    print(f"{name:8s} max {r[i]:.3f} ulp at x={x[i]!r}  (n={len(x)})")


def main():
    rng = np.random.default_rng(1)
    scan("r_exp", rng.uniform(-700, 709, N))
    scan("r_exp", rng.uniform(-40, 40, N))
    scan("r_expm1", rng.uniform(0, 50, N))
    scan("r_expm1", 10 ** rng.uniform(-20, 1, N))
    scan("r_log1p", 10 ** rng.uniform(-300, 0, N))
    scan("r_log", 10 ** rng.uniform(-307, 308, N))
    scan("r_asinh", 10 ** rng.uniform(-300, 0, N))
    scan("r_erfc", rng.uniform(0.70, 26.5, N))
    scan("r_erf", rng.uniform(-0.7072, 0.7072, N))
    for lo, hi in [(-37.5, -8), (-8, -1), (-1.5, 1.5), (1, 40), (-37.5, -36)]:
        z = rng.uniform(lo, hi, N)
        v = call("k_ndtr", z)
        rel = call("l_rel_ndtr", z, v)
        ratio = rel / call("k_rel", z)
        u = rel / EPS
        i = int(np.argmax(ratio))
        print(f"ndtr z in [{lo},{hi}]: max rel/allowance {ratio[i]:.4f} at z={z[i]!r}; max ulp {u.max():.2f}; "
              f"max (ulp - z^2 - 10) {float(np.max(u - z * z - 10)):.2f}")


if __name__ == "__main__":
    main()
