"""Microbenchmark of LognormalLaw.cells: the compiled kernel (cpp/kernels/lognormal_cells.hpp, the library's
path) against the numpy reference it replaced (tests/_lognormal_cells_reference.py), side by side.

``python bench/bench_cells.py [--ks 1000,10000,100000] [--repeat 5]`` prints, per grid size K, the best CPU
time (``time.process_time``) of one ``cells`` call of each, on a heavy-tailed BMG replace law (two terms) and a
zero-out law (one term), grids spanning the laws' bodies (mostly narrow cells at large K), and the load
average. ``--pair`` times instead the heavy round's dominating pair alone (bench/bench_composition.py's
``heavy`` round: export_interval, then dominating_pair; CPU seconds, caches cleared, the one-time imports of
sharpdp.interop.dp_accounting done before the timed or counted region), ``--profile`` its
``privacy_profile`` on 300 points of [0, 5] (a fresh accountant); with ``--instr`` each of them is counted instead
in a fresh process under callgrind (instructions, load-proof: bench/_instr.py), e.g.
``python bench/bench_cells.py --pair --profile --instr``. ``--power`` times instead the power step's accurate DFT (one
``power`` call of the compiled core on three synthetic windows, best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import sys
import time

import numpy as np

from sharpdp.shuffle.laws import LognormalLaw

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from _lognormal_cells_reference import cells_reference  # noqa: E402

LAWS = {
    "two-term (replace, r=1.3)": LognormalLaw(0.4, 0.9, 1.3, weight=2.0, b_minus=-0.7),
    "one-term (zero-out, r=2.5)": LognormalLaw(-0.2, 1.5, 2.5, z_lo=-4.0),
}


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def cells_table(ks, repeat):
    rows = [f"load average {os.getloadavg()[0]:.2f}; best of {repeat} CPU seconds per call"]
    rows.append(f"{'law':28s} {'K':>8s} {'numpy ref':>11s} {'C++':>11s} {'speed-up':>9s}")
    for name, law in LAWS.items():
        lo = law.a - 3.0 * law.std()
        for K in ks:
            h = 8.0 * law.std() / K

            def lib(law=law, lo=lo, h=h, K=K):
                law._cells_memo = None  # (a fresh grid each time: the per-call memo not measured)
                law.cells(lo, h, K)

            t_ref = _best(lambda law=law, lo=lo, h=h, K=K: cells_reference(law, lo, h, K), repeat)
            t_cpp = _best(lib, repeat)
            rows.append(f"{name:28s} {K:8d} {t_ref:11.5f} {t_cpp:11.5f} {t_ref / t_cpp:8.1f}x")
    return rows


def _heavy_accountant():
    from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches

    clear_caches()
    return ShuffleAccountant(BlanketMixedGaussian(0.04089409561900239, 0.5960134902126553, 1), 10**5)


def _pair_api():
    """(export_interval, dominating_pair), imported before any timed or counted region: the first import of
    sharpdp.interop.dp_accounting loads dp_accounting and scipy.signal (~0.6 s CPU, once per process), which is
    not the pair's work."""
    from sharpdp.interop.dp_accounting import export_interval
    from sharpdp.shuffle import dominating_pair

    return export_interval, dominating_pair


def _export_and_pair(acc) -> float:
    """export_interval then dominating_pair; returns export_interval's CPU seconds (imports done beforehand:
    :func:`_pair_api`)."""
    export_interval, dominating_pair = _pair_api()
    t = time.process_time()
    dx = export_interval(acc)
    t_dx = time.process_time() - t
    dominating_pair(acc, dx, progress=False)
    return t_dx


def _profile(acc) -> None:
    acc.privacy_profile(np.linspace(0.0, 5.0, 300))


def heavy_pair():
    acc = _heavy_accountant()
    _pair_api()
    t = time.process_time()
    t_dx = _export_and_pair(acc)
    total = time.process_time() - t
    return [f"load average {os.getloadavg()[0]:.2f}; heavy round pair: export_interval {t_dx:.2f} s + "
            f"dominating_pair {total - t_dx:.2f} s CPU"]


def heavy_profile():
    acc = _heavy_accountant()
    t = time.process_time()
    _profile(acc)
    return [f"load average {os.getloadavg()[0]:.2f}; heavy round privacy_profile (300 points of [0, 5]): "
            f"{time.process_time() - t:.2f} s CPU"]


def _instr_worker(what: str) -> None:
    """Counted child (under callgrind): the call alone between the counters' start and dump."""
    import _instr

    acc = _heavy_accountant()
    if what == "pair":
        _pair_api()
    region = _instr.Region()
    region.start()
    _export_and_pair(acc) if what == "pair" else _profile(acc)
    region.dump(what)


def heavy_instr(whats):
    import _instr

    rows = []
    for what in whats:
        got, _ = _instr.count([sys.executable, __file__, "--instr-worker", what])
        label = "export + pair" if what == "pair" else "300-point profile"
        rows.append(f"heavy round {label}: {got[what] / 1e9:.2f} G instructions (callgrind)")
    return rows


def power_table(repeat):
    """The power step with its accurate DFT (cpp/kernels/accountant.cpp ``power``): best CPU seconds of one call on
    three synthetic transforms (a narrow bulk plus a heavy tail, the shapes of the far-tail treatment's windows at
    n = 1e8, 1e6 and 100), every qualifying frequency recomputed within the engine's budget of 2e7 multiply-adds."""
    from sharpdp._core_loader import core

    rows = [f"load average {os.getloadavg()[0]:.2f}; best of {repeat} CPU seconds per power call"]
    for N, K, n in ((2025000, 442370, 1e8), (291600, 61443, 1e6), (65610, 29560, 100.0)):
        k = np.arange(K + 1)
        g = np.exp(-0.5 * (k * 10 * math.sqrt(n) / N) ** 2) + 1e-6 * (1 + k) ** -1.5
        y = np.bincount(k % N, weights=g / g.sum(), minlength=N)
        z = np.fft.rfft(y)
        rec = core.accountant.power(z, n, 3e-11, N, y, 1e-300, 2e7)[3]
        t = _best(lambda z=z, n=n, N=N, y=y: core.accountant.power(z, n, 3e-11, N, y, 1e-300, 2e7), repeat)
        rows.append(f"N={N:8d} nonzeros={K + 1:7d} n={n:9.0f} recomputed={rec:5d} {t:9.4f} s")
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pair", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--instr", action="store_true", help="with --pair / --profile: callgrind instruction counts")
    ap.add_argument("--power", action="store_true", help="the power step's accurate DFT instead (best of --repeat)")
    a = ap.parse_args(argv)
    whats = [w for w, on in (("pair", a.pair), ("profile", a.profile)) if on]
    if a.power:
        rows = power_table(a.repeat)
    elif a.instr and whats:
        rows = heavy_instr(whats)
    elif whats:
        rows = [r for w in whats for r in (heavy_pair() if w == "pair" else heavy_profile())]
    else:
        rows = cells_table([int(k) for k in a.ks.split(",")], a.repeat)
    print("\n".join(rows))


if __name__ == "__main__":
    np.seterr(all="ignore")
    if len(sys.argv) == 3 and sys.argv[1] == "--instr-worker":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        _instr_worker(sys.argv[2])
    else:
        main()
