"""The refinement's round-off stop (docs/accountant.md §6.3): CPU seconds of one call each, in fresh
processes (bench_replace.run: imports and kernels warmed first, time.process_time), for the cell whose
leg x-vs-bot carries FFT round-off above the rel_tol budget: GaussianRandomizer(4.6), n = 10,
get_delta_bounds(4.0), replace-one (through bot) and zero-out; also the leg alone is in
tests/test_round22_roundoff_stop.py.

Usage: ``python bench/bench_roundoff_stop.py [--repeat 3]``.
"""

from __future__ import annotations

import argparse

from bench_replace import best

CELLS = [("GaussianRandomizer(4.6, 1)", 10, adj, "delta", 4.0) for adj in ("replace", "zero_out")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args()
    for rnd, n, adj, what, x in CELLS:
        r = best(rnd, n, adj, what, x, a.repeat, a.timeout)
        cpu = "error " + r["error"] if r.get("cpu") is None else f"{r['cpu']:.3f} s"
        print(f"{rnd} n={n} {adj} eps={x}: cpu {cpu}, value {r.get('value')}")


if __name__ == "__main__":
    main()
