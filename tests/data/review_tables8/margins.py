"""Margins of sharpdp._tables._erf_entries_range (review rev-tables8; results in README.md).

1. K: for 1 800 scales (1 500 log-spaced over [9.873, 20 000], 300 uniform in [9.87, 40]) the series
   length the code picks (read off its rounding shift) and the Cramer remainder bound at it, in
   mpmath at 300 bits, with the sharp-enough constant 2/sqrt(pi) 1.086435; also whether K - 1 would
   already have met it.
2. Error before rounding: acc / 2^shift against 2^128 erf at 400 bits for several scales, with
   _TAYLOR_SLACK = 64 (the code), 60, 56, 48 (shortened series) and 300 (evaluation floor), plus the
   distance of the true values to the nearest rounding boundary and a check of the direct
   evaluation against the correctly rounded value.

Run: python tests/data/review_tables8/margins.py (about 2 minutes; loads the worktree's _tables.py
by path, numpy and mpmath only).
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys
import time

import mpmath
import numpy as np

_SRC = pathlib.Path(__file__).resolve().parents[3] / "python" / "sharpdp" / "_tables.py"
_spec = importlib.util.spec_from_file_location("sharpdp_tables_under_review", _SRC)
T = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = T
_spec.loader.exec_module(T)


def run(J, sc):
    rec = []
    T.divmod = lambda a, b: (rec.append((a, b)), divmod(a, b))[1]
    try:
        out = T._erf_entries_range(J, sc)
    finally:
        del T.divmod
    return out, rec


def k_of(s):
    sc = T._scale(T._context(), s)
    _, rec = run(2 * T._TAYLOR_BLOCK + 1, sc)
    shift = rec[0][1].bit_length() - 1
    return (shift - T._TAYLOR_SLACK - 16) // 5, sc


def k_check():
    mp = mpmath.mp.clone()
    mp.prec = 300

    def bound(K, sc):
        h = 1 / mp.mpf(sc)
        return (2 / mp.sqrt(mp.pi) * mp.mpf("1.086435") * mp.power(2, mp.mpf(K) / 2) * mp.sqrt(mp.factorial(K))
                * (32 * h) ** (K + 1) / mp.factorial(K + 1))

    ss = [float(v) for v in np.geomspace(9.8729, 20000, 1500)]
    ss += [float(v) for v in np.random.default_rng(1).uniform(9.87, 40, 300)]
    worst, minimal = -1e9, 0
    for s in ss:
        K, sc = k_of(s)
        worst = max(worst, float(mp.log(bound(K, sc), 2)))
        minimal += float(mp.log(bound(K - 1, sc), 2)) > -192
    print(f"K: {len(ss)} scales, max log2 remainder bound at the chosen K = {worst:.3f} (target -192); "
          f"K minimal in {minimal}", flush=True)


def margins(s, every, prec=400):
    J = T._search_J(s)
    sc = T._scale(T._context(), s)
    fast, rec = run(J, sc)
    ctx = mpmath.mp.clone()
    ctx.prec = prec
    scx = ctx.mpf(sc)
    picks = [*range(0, J, every), J - 1]
    direct = dict(zip(picks, T._erf_entries(picks, sc)))
    worst, dist, bad = -1e9, 1e9, 0
    for j in picks:
        a, b = rec[j]
        true = ctx.ldexp(ctx.erf((2 * j + 1) / (2 * scx)), 128)
        err = abs(ctx.mpf(a - b // 2) / b - true)
        worst = max(worst, float(ctx.log(err, 2)) if err else -1e9)
        d = abs(true - ctx.floor(true) - ctx.mpf(0.5))
        dist = min(dist, float(ctx.log(d, 2)))
        bad += direct[j] != int(ctx.nint(true)) or fast[j] != direct[j]
    K = (rec[0][1].bit_length() - 1 - T._TAYLOR_SLACK - 16) // 5
    return dict(s=s, J=J, K=K, log2_err=round(worst, 1), log2_min_dist=round(dist, 1), checked=len(picks), bad=bad)


def main():
    t = time.time()
    k_check()
    cases = [(9.872909814593655, 1), (40.0, 1), (300.0, 7), (4096.0, 101), (12800.0, 331)]
    for slack in (64, 60, 56, 48, 300):
        T._TAYLOR_SLACK = slack
        for s, every in cases[: 4 if slack != 64 else 5]:
            print(f"slack {slack}:", margins(s, every, prec=700 if slack == 300 else 400), flush=True)
    T._TAYLOR_SLACK = 64
    print(f"{time.time() - t:.0f} s")


if __name__ == "__main__":
    main()
