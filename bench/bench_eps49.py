"""get_epsilon(1e-6) CPU with session 49's search switches (docs/accountant.md §8.29) off, with
limits.EPS49_LOOK_SPARED_N = 10**10 ("look") and with limits.EPS49_JUMP_PROBE = 0.08 ("jump"), alternated, one fresh
process per call, and one fresh get_delta_bounds at each answer. CPU s of ``time.process_time`` around the call
(imports excluded); prints every run and the medians.

    python bench/bench_eps49.py --reps 3 [--cells bmg8,bmg9,bmg8h] [--variants off,look,jump]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CELLS = {  # calibrate_bmg(n, 0.1, 1e-6, 1)'s picks (the map's family (a), eps = 0.1)
    "bmg8": ("bmg", 0.020184369008040444, 0.4564324504091077, 10**8),
    "bmg9": ("bmg", 0.014268009785030579, 0.40485052696623824, 10**9),
    "bmg8h": ("bmg", 0.015291973817911498, 0.41451390781580544, 10**8),  # (its eps = 0.5 pick)
}
VARIANTS = {"off": (10**7, 0.0), "look": (10**10, 0.0), "jump": (10**7, 0.08)}
CHILD = r"""
import json, sys, time
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
kind, g, s, n, (ls, jp), eps = json.loads(sys.argv[1])
limits.EPS49_LOOK_SPARED_N, limits.EPS49_JUMP_PROBE = ls, jp
acc = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n)
t = time.process_time()
r = acc.get_epsilon(1e-6) if eps is None else acc.get_delta_bounds(eps)
t = time.process_time() - t
print(json.dumps([t, float(r) if eps is None else None]))
"""


def run(args: list) -> tuple[float, float | None]:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True, text=True, check=True)
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    a = ap.parse_args()
    for name in a.cells.split(","):
        kind, g, s, n = CELLS[name]
        ts: dict[str, list[float]] = {v: [] for v in a.variants.split(",")}
        gd: dict[str, list[float]] = {v: [] for v in ts}
        ans: dict[str, float] = {}
        for _ in range(a.reps):
            for v in ts:
                t, e = run([kind, g, s, n, VARIANTS[v], None])
                ts[v].append(t)
                ans[v] = e  # type: ignore[assignment]
                gd[v].append(run([kind, g, s, n, VARIANTS[v], e])[0])
                print(f"{name} {v} get_epsilon {t:.3f} s -> {e!r}; get_delta_bounds "
                      f"there {gd[v][-1]:.3f} s", flush=True)
        for v in ts:
            me, md = statistics.median(ts[v]), statistics.median(gd[v])
            print(f"{name} {v} median get_epsilon {me:.3f} s, get_delta_bounds {md:.3f} s,"
                  f" ratio {me / md:.2f}x; answer {ans[v].hex()}", flush=True)


if __name__ == "__main__":
    main()
