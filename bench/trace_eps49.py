"""Trace of one get_epsilon(1e-6) (docs/accountant.md §8.29) in a fresh process: the start's choices (first_point,
shape_start, the gates of §8.25, §8.26.3, §8.28), phase 1's upper-only passes, every report (rel_tol, bracket / delta,
CPU s) and every phase-2 probe. ``--set NAME=VALUE`` sets limits.NAME (repeatable).

    python bench/trace_eps49.py bmg:0.020184369008040444:0.4564324504091077 1e8 [--set EPS49_X=1] [--delta 1e-6]
    python bench/trace_eps49.py gauss:2 1e5
"""
from __future__ import annotations

import sys
import time


def main() -> None:
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
    from sharpdp.shuffle import accountant as A
    from sharpdp.shuffle.accountant import limits
    from sharpdp.shuffle.accountant import search as S

    kind, *ps = sys.argv[1].split(":")
    n = int(float(sys.argv[2]))
    for i, a in enumerate(sys.argv):
        if a == "--set":
            name, val = sys.argv[i + 1].split("=")
            setattr(limits, name, type(getattr(limits, name))(float(val)))
    rnd = GaussianRandomizer(float(ps[0]), 1) if kind == "gauss" else BlanketMixedGaussian(float(ps[0]), float(ps[1]), 1)
    acc = ShuffleAccountant(rnd, n)
    delta = float(sys.argv[sys.argv.index("--delta") + 1]) if "--delta" in sys.argv else 1e-6

    def wrap(mod, name, fmt):
        orig = getattr(mod, name)

        def f(*a, **k):
            t = time.process_time()
            r = orig(*a, **k)
            print(f"  {name}: {fmt(a, k, r)} {time.process_time() - t:.3f}s", flush=True)
            return r
        setattr(mod, name, f)
    wrap(A.ShuffleAccountant, "_report", lambda a, k, r: f"eps={a[1]:.10g} rel={a[2]:g} [{r.lower / delta:.5f}, "
         f"{r.upper / delta:.5f}] law {r.law_index}")
    wrap(S, "probe", lambda a, k, r: f"eps={a[1]:.10g} -> {r / delta:.5f}")
    wrap(S, "first_point", lambda a, k, r: f"g={r[0]:.10g} k_j={r[1]}")
    wrap(S, "shape_start", lambda a, k, r: f"{r}")
    wrap(S, "start_probe", lambda a, k, r: f"{r}")
    wrap(S, "body_start", lambda a, k, r: f"{r}")
    wrap(S, "start_look", lambda a, k, r: f"{r}")
    wrap(S, "upper_value", lambda a, k, r: f"gamma={a[1]:.4g} -> {r / delta:.5f}")
    t = time.process_time()
    e = acc.get_epsilon(delta)
    print(f"answer {e!r} {e.hex()} CPU {time.process_time() - t:.3f}s", flush=True)


if __name__ == "__main__":
    main()
