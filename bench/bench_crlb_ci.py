"""How often the 95 % interval of ``sharpdp crlb`` 5.2's simulated MSE lies wholly below the bound, per seed
(``sharpdp.cli.crlb.CI_CALIBRATION_52``, docs/cli.md §3).

Usage: ``python bench/bench_crlb_ci.py FIRST_SEED END_SEED`` (about 2 s of CPU per seed). Prints one line per seed
(seed, steps with a bound, steps with the MSE below the bound, steps whose interval lies wholly below it, wholly
above it) and a summary line: the share of steps wholly below, the seeds with none, the most in one seed.
"""

from __future__ import annotations

import sys

import numpy as np
from scipy.special import stdtrit

from sharpdp.apps import crlb_experiments as E


def main(first: int, end: int) -> None:
    tq = float(stdtrit(2, 0.975))  # 3 data blocks: 2 degrees of freedom, as sharpdp crlb
    below_ci, steps, none, most = 0, 0, 0, 0
    for seed in range(first, end):
        r = E.recursive_identification(repetitions=10, rng=np.random.default_rng(seed), progress=False)
        ok = ~np.isnan(r["bound"])
        m, s, b = r["mse"][ok], r["mse_stderr"][ok], r["bound"][ok]
        low, high = int((m + tq * s < b).sum()), int((m - tq * s > b).sum())
        print(seed, int(ok.sum()), int((m < b).sum()), low, high, flush=True)
        below_ci, steps, none, most = below_ci + low, steps + int(ok.sum()), none + (low == 0), max(most, low)
    print(f"share wholly below {below_ci / steps:.4f}; seeds with none {none} of {end - first}; most {most}")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
