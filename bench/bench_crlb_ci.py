"""How often ``sharpdp crlb`` 5.2 flags a step, per seed (``sharpdp.cli.crlb.CI_CALIBRATION_52``, docs/cli.md §3.2).

Usage: ``python bench/bench_crlb_ci.py FIRST_SEED END_SEED`` (about 2 s of CPU per seed). Prints one line per seed
(seed, steps with a bound, steps with the MSE below the bound, steps whose MSE interval lies wholly below the bound
(the rule of session 33), steps flagged (the interval of mse - bound, the bound's error from sigma2 included, wholly
below 0: ``sharpdp.cli.crlb.intervals_52``), steps whose MSE interval lies wholly above the bound) and two summary
lines: for each rule the share of steps, the seeds with none, the most in one seed.
"""

from __future__ import annotations

import sys

import numpy as np

from sharpdp.apps import crlb_experiments as E
from sharpdp.cli.crlb import intervals_52


def main(first: int, end: int) -> None:
    totals = {"ci_wholly_below_bound": [0, 0, 0], "flagged": [0, 0, 0]}  # steps, seeds with none, most in one seed
    steps = 0
    for seed in range(first, end):
        r = E.recursive_identification(repetitions=10, rng=np.random.default_rng(seed), progress=False)
        iv = intervals_52(r)
        ok = ~np.isnan(r["bound"])
        high = int((iv["mse_ci_low"][ok] > r["bound"][ok]).sum())
        counts = {k: int(iv[k].sum()) for k in totals}
        print(seed, int(ok.sum()), int((r["mse"][ok] < r["bound"][ok]).sum()), counts["ci_wholly_below_bound"],
              counts["flagged"], high, flush=True)
        steps += int(ok.sum())
        for k, c in counts.items():
            t = totals[k]
            t[0], t[1], t[2] = t[0] + c, t[1] + (c == 0), max(t[2], c)
    for k, (n, none, most) in totals.items():
        print(f"{k}: share {n / steps:.4f} ({n} of {steps} steps); seeds with none {none} of {end - first}; most {most}")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
