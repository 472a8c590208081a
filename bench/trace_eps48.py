"""Trace of one get_epsilon(1e-6) (docs/accountant.md §8.28): every report (its rel_tol, bracket / delta, CPU s) and
every phase-2 probe (value / delta, CPU s), in a fresh process; ``--body C`` sets limits.EPS48_BODY_START = C (on).

    python bench/trace_eps48.py gauss:2 1e8 [--body 0.9]      # GaussianRandomizer(2, 1)
    python bench/trace_eps48.py bmg:0.0389:0.529 1e8 [--delta 1e-9]
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
    if "--body" in sys.argv:
        limits.EPS48_BODY_START = float(sys.argv[sys.argv.index("--body") + 1])
    rnd = GaussianRandomizer(float(ps[0]), 1) if kind == "gauss" else BlanketMixedGaussian(float(ps[0]), float(ps[1]), 1)
    acc = ShuffleAccountant(rnd, n)
    delta = float(sys.argv[sys.argv.index("--delta") + 1]) if "--delta" in sys.argv else 1e-6
    orig_rep, orig_probe = A.ShuffleAccountant._report, S.probe

    def rep(self, eps, rel_tol, *a, **k):
        t = time.process_time()
        r = orig_rep(self, eps, rel_tol, *a, **k)
        print(f"  report eps={eps:.10g} rel={rel_tol:g} [{r.lower / delta:.5f}, {r.upper / delta:.5f}] "
              f"{time.process_time() - t:.2f}s", flush=True)
        return r

    def prb(acc_, e, *a, **k):
        t = time.process_time()
        u = orig_probe(acc_, e, *a, **k)
        print(f" probe eps={e:.10g} -> {u / delta:.5f} {time.process_time() - t:.2f}s", flush=True)
        return u
    A.ShuffleAccountant._report = rep
    S.probe = prb
    t = time.process_time()
    e = acc.get_epsilon(delta)
    print(f"answer {e!r} {e.hex()} CPU {time.process_time() - t:.2f}s", flush=True)


if __name__ == "__main__":
    main()
