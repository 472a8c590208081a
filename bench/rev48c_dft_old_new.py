"""Review rev48c: dft_low of session 47 (6c4537e9) against session 48's, e and z~ compared by hex through
bench/dft48_dft_low_harness.cpp. Build (in DIR):
  git show 6c4537e9:cpp/kernels/dft_taylor.hpp > DIR/old.hpp; cp cpp/kernels/dft_taylor.hpp DIR/new.hpp
  sed 's/dft_taylor::dft_blocks(/dft_taylor::dft_blocks<Sum2>(/' bench/dft48_dft_low_harness.cpp > DIR/hold.cpp
  g++ -O3 -ffp-contract=off -std=c++17 -IDIR -DHDR='"old.hpp"' DIR/hold.cpp -o DIR/hold  (hnew: the harness, new.hpp)
Run: python bench/rev48c_dft_old_new.py DIR. Result (22:59-23:02 UTC): 7,680 inputs, every input with a finite e equal
(e and every z~); 1,670 differ, all NaN / inf inputs (e = inf in both): the NaNs' sign, and the refused frequencies
NaN instead of stale values (docs/accountant_tail.md §75.1)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np


def run(exe: str, y: np.ndarray, K: int, d: str) -> list[str]:
    with open(f"{d}/in.bin", "wb") as f:
        np.array([y.size, K], dtype=np.int64).tofile(f)
        y.astype(np.float64).tofile(f)
    return subprocess.run([exe, f"{d}/in.bin"], capture_output=True, text=True, check=True).stdout.split()


def vec(N: int, seed: int, kind: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.random(N) * (rng.random(N) < 0.7)
    if kind == 1:
        y = y * np.where(rng.random(N) < 0.5, -1.0, 1.0)
    elif kind == 2:
        y[rng.random(N) < 0.3] = 5e-324
        y[rng.random(N) < 0.2] = -0.0
    elif kind == 3:
        y = y * np.exp(rng.uniform(-700, 0, N))
    elif kind == 4:
        y = y * 1e-150
    elif kind == 5:
        y = np.zeros(N)
    elif kind == 6:
        y[N // 2] = np.nan
    elif kind == 7:
        y[0] = np.inf
    elif kind == 8:
        y = rng.random(N) * (rng.random(N) < 0.01)
    return y


def cases() -> list[tuple[int, int]]:
    out = [(N, K) for N in range(1, 80) for K in sorted({0, 1, N // 2, N // 4})]
    for q in (5, 37):
        for r in (0, 1, 2, 4, 8, 16, 32, 33, 48, 56, 60, 62, 63):
            for N in {64 * q + r, 64 * q - r}:
                kmx = min(N // 2, int(5.4 * N / (2 * math.pi * 32)))
                out += [(N, K) for K in sorted({0, 1, 6, 7, 8, 9, 15, 16, 17, kmx, N // 2})]
    for N in (2**16 - 1, 2**16, 2**16 + 1, 2**16 + 2, 2**16 + 4, 2**16 + 8, 2**16 + 16, 2**16 + 32, 100000, 3 * 2**14,
              2**20 + 3):
        out += [(N, K) for K in (0, 7, 8, 63, min(N // 2, int(5.4 * N / (2 * math.pi * 32))))]
    return out


def main(d: str) -> None:
    bad = n = 0
    for i, (N, K) in enumerate(cases()):
        for kind in range(9):
            if N > 5000 and kind not in (0, 1, 8):
                continue
            y = vec(N, i * 10 + kind, kind)
            a, b = run(f"{d}/hold", y, K, d), run(f"{d}/hnew", y, K, d)
            n += 1
            kc = K if a[0] not in ("inf", "nan", "-nan") else min(K, int(5.4 * N / (2 * math.pi * 32)))
            if a[0] != b[0] or a[1:3 + 2 * kc] != b[1:3 + 2 * kc]:
                bad += 1
                print("differs", N, K, kind, "(NaN input)" if kind in (6, 7) else "")
    print("inputs", n, "differing", bad)


if __name__ == "__main__":
    main(sys.argv[1])
