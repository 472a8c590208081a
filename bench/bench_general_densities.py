"""CPU of a fresh process that builds GeneralRandomizers from several different densities and samples each.

Goal (the test suite pays it once per test density): the Numba kernels of ``sharpdp._kernels.shuffle``
take the densities as first-class ``float64(float64, float64)`` functions, so they are compiled once
(and cached on disk) instead of once per density; a new density then costs its own compilation only
(a few hundredths of a second), not 0.4-1.5 s of kernel specialisation.

Run: ``python bench/bench_general_densities.py [--densities 6] [--runs 3]``: prints, per fresh process, the
CPU of the imports, of the first density (construction + a 1000-message sample) and of each further one.
Measured 2026-12-03 20:29 UTC (load ~0.7, 2 cores, 2 fresh processes each): before (s17, kernels specialised
per density): first density 1.9-2.1 s, further ones 0.80-1.17 s; after: first 0.52-0.57 s (kernels loaded from
Numba's disk cache), further ones 0.07-0.11 s. A density that is not a plain float64(float64, float64) function
(e.g. with an extra default argument or its own float32 signature) still takes the specialised kernels.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, math, sys, time
t0 = time.process_time()
import numpy as np
from numba import njit
from sharpdp.shuffle import GeneralRandomizer
t1 = time.process_time()
out = {"imports": t1 - t0, "per_density": []}
x = np.random.default_rng(0).choice(np.linspace(-1.0, 1.0, 5), 1000)
for k in range(int(sys.argv[1])):
    s = 0.5 + 0.1 * k  # a global frozen at compilation: a different Numba function each time

    @njit
    def density(y, x):
        return math.exp(-0.5 * ((y - x) / s) ** 2)

    t = time.process_time()
    g = GeneralRandomizer(density, [-1.0, 1.0], (-3.0, 3.0), cells=64)
    g.sample(x, rng=1, allow_unsafe_float=True)
    out["per_density"].append(time.process_time() - t)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--densities", type=int, default=6)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for _ in range(args.runs):
        res = subprocess.run([sys.executable, "-c", CHILD, str(args.densities)], capture_output=True, text=True,
                             check=True)
        r = json.loads(res.stdout.strip().splitlines()[-1])
        per = r["per_density"]
        print(f"imports {r['imports']:.2f} s, first density {per[0]:.2f} s, further "
              + " ".join(f"{t:.2f}" for t in per[1:]) + " s")


if __name__ == "__main__":
    main()
