"""Session 49 (eng49, docs/composition.md §2.34): a light round's 300-point privacy profile in this fresh process, its CPU
time (``time.process_time``) and the lattice engine's parts (``--parts``: inclusive CPU totals of the engine, the
forward and inverse FFTs, the power step, the window sums); ``--spectral`` turns ``limits.ENG49_SPECTRAL_SUM`` on;
``--instr`` counts the profile's instructions under callgrind instead (bench/_instr.py; load-proof); ``--hex`` writes
the profile's float.hex (compare two venvs with ``cmp``).

    python bench/bench_eng49_engine.py krr --parts
    python bench/bench_eng49_engine.py privunit --spectral --hex /tmp/on.json
    python bench/bench_eng49_engine.py krr --instr
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_blk48_block_law import ROUNDS, _timed  # noqa: E402  (one round table and timer for both benches)


def _instrument(totals: dict) -> None:
    """Wrap the engine, the FFTs and the native kernels it calls (inclusive CPU totals and call counts)."""
    import sharpdp.shuffle.accountant.fft as F
    import sharpdp.shuffle.accountant.lattice as L

    def timed(label, f):
        return _timed(totals, label, f)

    core = F.kernels()

    class Kernels:
        def __getattr__(self, name):
            return timed("core." + name, getattr(core, name))

    kernels = Kernels()
    F.kernels = L.kernels = lambda: kernels
    rfft, irfft = np.fft.rfft, np.fft.irfft
    F._rfft_pair = lambda: (timed("numpy rfft", rfft), timed("numpy irfft", irfft))
    L.engine = timed("lattice.engine", L.engine)
    L.window_sum = timed("spectral_sum.window_sum", L.window_sum)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("round", choices=sorted(ROUNDS))
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--spectral", action="store_true", help="limits.ENG49_SPECTRAL_SUM on")
    ap.add_argument("--parts", action="store_true")
    ap.add_argument("--instr", action="store_true", help="callgrind instruction count of the profile")
    ap.add_argument("--hex", default=None, help="write the profile's float.hex here (JSON list)")
    a = ap.parse_args(argv)
    if a.instr:
        import _instr

        args = [sys.executable, __file__, a.round, "--n", str(a.n)] + (["--spectral"] if a.spectral else [])
        counts, _ = _instr.count(args, env={"SHARPDP_ENG49_INSTR": "1"})
        print(f"{a.round} n={a.n:.0e} profile{' spectral' if a.spectral else ''}: {counts.get('profile', 0):,} instructions")
        return
    import os

    import bench_regimes as R
    from sharpdp.shuffle import ShuffleAccountant, clear_caches
    from sharpdp.shuffle.accountant import limits

    limits.ENG49_SPECTRAL_SUM = bool(a.spectral)
    spec, top = ROUNDS[a.round]
    totals: dict = {}
    if a.parts:
        _instrument(totals)
    region = None
    if os.environ.get("SHARPDP_ENG49_INSTR"):
        import _instr

        region = _instr.Region()
    acc = ShuffleAccountant(R._randomizer(spec), int(a.n), "replace")
    clear_caches()
    if region is not None:
        region.start()
    t = time.process_time()
    out = np.asarray(acc.privacy_profile(np.linspace(0.0, top, 300)), float)
    cpu = time.process_time() - t
    if region is not None:
        region.dump("profile")
    print(f"{a.round} n={a.n:.0e} profile{' spectral' if a.spectral else ''}: {cpu:.3f} s CPU")
    for k, (s, c) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        print(f"  {k:28s} {s:7.3f} s  {c:5d} calls")
    if a.hex:
        with open(a.hex, "w") as fh:
            json.dump([float(x).hex() for x in out], fh)


if __name__ == "__main__":
    main()
