"""Benchmark smoke set with stored baselines: catches a > 20 % slowdown under any load.

A few hot cells (the accountant's k-RR / Gaussian / BMG cells, the composition query, the C++
samplers), each run in its own fresh interpreter. Two measures per cell:

* ``instr`` (default): instructions executed ("Ir"), counted by valgrind's callgrind
  (``bench/_instr.py``; ``perf stat -e instructions`` is not supported on this VM). Load-proof and
  repeatable to < 0.1 %: the figure to compare across commits. Two regions per process:
  ``cold`` = the first call after the imports (what a fresh process pays: block-law caches empty,
  lazy imports), ``warm`` = the same call again (process-wide caches filled).
* ``cpu``: ``time.process_time`` of the cold call, min and median over ``--runs`` fresh processes
  (no RLIMIT_CPU, so no 4 ms quantisation); moves with the load, a cross-check only.

Baselines are JSON files ``bench/baselines/<commit>.json``, <commit> the last commit that changed
the measured code (python/, cpp/, the build files; "+dirty" with local changes there): date, load,
versions, per cell: cold/warm instructions, CPU min/median, the call's answer.

Usage::

    python bench/smoke.py --save                         # measure HEAD, write bench/baselines/<commit>.json
    python bench/smoke.py --compare bench/baselines/5af8544.json   # exit 1 if a cell is > 20 % slower
    python bench/smoke.py --compare OLD.json --against NEW.json     # compare two stored files, run nothing
    python bench/smoke.py --cells krr2_e1_n1e4 --mode cpu --runs 5  # one cell, CPU time only
    python bench/smoke.py --cells krr2_e1_n1e4 --mode profile        # cProfile of the cold call (stderr)

The whole set takes about a minute of CPU in ``instr`` mode (callgrind runs ~50x slower than
native, the imports run uninstrumented).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pickle
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _instr  # noqa: E402  (bench/ helpers)
from _common import BMG_HEAVY, COMPOSE, build_pair, code_commit, git  # noqa: E402

DELTA = 1e-6
THRESHOLD = 0.20


# ----------------------------------------------------------------------------- cells
def _krr(k, eps0, n):
    from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant

    return lambda: ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency="replace").get_epsilon(DELTA)


def _gauss():
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    return lambda: ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**3).get_delta_bounds(1.0)[1]


def _bmg():
    from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant

    return lambda: ShuffleAccountant(BlanketMixedGaussian(*BMG_HEAVY, 1), 10**4).get_epsilon(DELTA)


def _compose(pair_file):
    from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, ShuffleAccountant

    with open(pair_file, "rb") as fh:
        pair = pickle.load(fh)
    acc = ShuffleAccountant(BlanketMixedGaussian(COMPOSE["gamma"], COMPOSE["sigma0"], 1), COMPOSE["n"])

    def call():
        ca = ComposedAccountant([(acc, COMPOSE["rounds"])], COMPOSE["dx"])
        ca._pairs = [pair]  # built once by the parent
        return ca.get_epsilon(DELTA)

    return call


def _bmg_sampler():
    import numpy as np

    from sharpdp.shuffle import BlanketMixedGaussian

    x = np.random.default_rng(0).uniform(-0.1, 0.1, (10**5, 10))
    bmg = BlanketMixedGaussian(0.95, 4.6, 10)
    return lambda: float(bmg.sample(x, rng=1, threads=1)[0, 0])


def _histogram():
    import numpy as np

    from sharpdp.histogram import ShiftedLogGaussian

    counts = np.random.default_rng(0).integers(0, 10_000, 10**6).astype(np.float64)
    mech = ShiftedLogGaussian(0.2)
    return lambda: float(mech.release(counts, rng=1, integer=True, threads=1)[0])


CELLS = {
    "krr2_e1_n1e4": ("binary RR eps0=1 n=1e4 get_epsilon (replace)", lambda a: _krr(2, 1.0, 10**4)),
    "krr2_e8_n1e7": ("binary RR eps0=8 n=1e7 get_epsilon (replace)", lambda a: _krr(2, 8.0, 10**7)),
    "krr10_e1_n1e5": ("10-RR eps0=1 n=1e5 get_epsilon (replace)", lambda a: _krr(10, 1.0, 10**5)),
    "gauss1_n1e3": ("Gaussian s0=1 n=1e3 get_delta_bounds(1) upper (zero-out)", lambda a: _gauss()),
    "bmg_heavy_n1e4": ("BMG(0.0463, 0.758) n=1e4 get_epsilon (zero-out)", lambda a: _bmg()),
    "compose10_bmg": ("ComposedAccountant 10 x BMG(0.95, 4.6) n=1e6 get_epsilon", lambda a: _compose(a["pair_file"])),
    "bmg_sampler": ("BMG(0.95, 4.6) sampler n=1e5 d=10, 1 thread", lambda a: _bmg_sampler()),
    "histogram": ("ShiftedLogGaussian(0.2) integer release of 1e6 counts, 1 thread", lambda a: _histogram()),
}


# ----------------------------------------------------------------------------- child
def child(name: str, extra: dict, mode: str) -> None:
    import sharpdp.shuffle  # noqa: F401  (not charged)

    call = CELLS[name][1](extra)
    if mode == "instr":
        region = _instr.Region()
        region.start()
        value = call()
        region.dump("cold")
        region.start()
        call()
        region.dump("warm")
        print(json.dumps(dict(value=float(value))))
        return
    if mode == "profile":  # where the cold call's time goes (cProfile; its overhead inflates small calls)
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        call()
        prof.disable()
        for key in ("tottime", "cumulative"):
            pstats.Stats(prof, stream=sys.stderr).sort_stats(key).print_stats(25)
        return
    t0 = time.process_time()
    value = call()
    print(json.dumps(dict(value=float(value), cpu=time.process_time() - t0)))


def _child_argv(name: str, extra: dict, mode: str) -> list[str]:
    return [sys.executable, os.path.abspath(__file__), "--child", name, "--extra", json.dumps(extra), "--mode", mode]


def measure(names, mode: str, runs: int) -> dict:
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        extra = {"pair_file": build_pair(tmp)} if "compose10_bmg" in names else {}
        for name in names:
            cell: dict = {"what": CELLS[name][0]}
            try:
                if mode in ("instr", "both"):
                    counts, stdout = _instr.count(_child_argv(name, extra, "instr"))
                    cell.update(instr_cold=counts["cold"], instr_warm=counts["warm"],
                                value=json.loads(stdout.strip().splitlines()[-1])["value"])
                if mode in ("cpu", "both"):
                    cpu = []
                    for _ in range(runs):
                        p = subprocess.run(_child_argv(name, extra, "cpu"), capture_output=True, text=True, check=False)
                        if p.returncode != 0:
                            raise RuntimeError((p.stderr.strip().splitlines() or ["?"])[-1])
                        r = json.loads(p.stdout.strip().splitlines()[-1])
                        cpu.append(r["cpu"])
                        cell["value"] = r["value"]
                    cell.update(cpu_min=min(cpu), cpu_median=statistics.median(cpu), cpu_runs=cpu)
            except (RuntimeError, KeyError, IndexError, ValueError) as exc:  # a cell this checkout cannot run
                cell = {"what": CELLS[name][0], "error": str(exc)[:200]}
            out[name] = cell
            print(f"  {name}: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                           for k, v in cell.items() if k not in ("what", "cpu_runs")),
                  file=sys.stderr, flush=True)
    return out


def record(cells: dict, mode: str) -> dict:
    import numpy

    return dict(commit=code_commit(), bench_commit=git("rev-parse", "--short", "HEAD"),
                commit_date=git("log", "-1", "--format=%cI", code_commit().split("+")[0]),
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                load=os.getloadavg(), mode=mode, python=platform.python_version(), numpy=numpy.__version__,
                valgrind=_version(["valgrind", "--version"]), cells=cells)


def _version(cmd) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "absent"


def compare(base: dict, new: dict, threshold: float) -> tuple[str, list[str]]:
    """Markdown table new / base per cell and measure; the list of regressions (> threshold).

    Instruction counts decide where both files have them; CPU medians otherwise (noisy: a CPU-only
    regression is flagged, but read it with the load averages of both files)."""
    lines = [f"base {base['commit']} ({base['date']}, load {base['load'][0]:.2f}) -> new {new['commit']} "
             f"({new['date']}, load {new['load'][0]:.2f}); regression: > {threshold:.0%} more",
             "", "| cell | measure | base | new | new / base | |", "|---|---|---|---|---|---|"]
    bad = []
    for name, b in base["cells"].items():
        c = new["cells"].get(name)
        if c is None or "error" in c or "error" in b:
            why = "not measured" if c is None else (c.get("error") or b.get("error"))[:60]
            lines.append(f"| {name} | - | - | {why} | - | |")
            continue
        measures = [m for m in ("instr_cold", "instr_warm") if m in b and m in c]
        decisive = set(measures) or {"cpu_median"}
        measures += [m for m in ("cpu_min", "cpu_median") if m in b and m in c]
        for m in measures:
            r = c[m] / b[m]
            flag = r > 1 + threshold and m in decisive
            if flag:
                bad.append(f"{name} {m}: {r:.3f}x")
            fmt = (lambda v: f"{v / 1e6:.1f} M") if m.startswith("instr") else (lambda v: f"{v * 1e3:.1f} ms")
            lines.append(f"| {name} | {m} | {fmt(b[m])} | {fmt(c[m])} | {r:.3f} | {'SLOWER' if flag else ''} |")
        # (valgrind computes long double at double precision: answers under callgrind can move in
        # the last digits, so only changes beyond 1e-9 relative are shown)
        if "value" in b and "value" in c and abs(c["value"] - b["value"]) > 1e-9 * abs(b["value"]):
            lines.append(f"| {name} | answer | {b['value']:.9g} | {c['value']:.9g} | {c['value'] / b['value']:.6f} | |")
    return "\n".join(lines), bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--extra", default="{}", help=argparse.SUPPRESS)
    ap.add_argument("--mode", choices=("instr", "cpu", "both", "profile"), default="instr")
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per cell in cpu mode (default 3)")
    ap.add_argument("--cells", default=None, help="comma list (default: all): " + ", ".join(CELLS))
    ap.add_argument("--save", nargs="?", const="", default=None,
                    help="write the results (default path bench/baselines/<commit>.json)")
    ap.add_argument("--compare", help="baseline JSON: flag cells > --threshold slower, exit 1 if any")
    ap.add_argument("--against", help="with --compare: a second stored JSON instead of a new run")
    ap.add_argument("--threshold", type=float, default=THRESHOLD)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, json.loads(args.extra), args.mode)
        return 0
    names = list(CELLS) if args.cells is None else args.cells.split(",")
    unknown = [n for n in names if n not in CELLS]
    if unknown or args.runs < 1:
        print(f"smoke.py: error: unknown cell(s) {unknown}" if unknown else "smoke.py: error: --runs must be >= 1",
              file=sys.stderr)
        return 2
    if args.mode == "profile":
        with tempfile.TemporaryDirectory() as tmp:
            extra = {"pair_file": build_pair(tmp)} if "compose10_bmg" in names else {}
            for name in names:
                print(f"## {name}: {CELLS[name][0]}", file=sys.stderr, flush=True)
                subprocess.run(_child_argv(name, extra, "profile"), check=True)
        return 0
    if args.mode in ("instr", "both") and _instr.available():
        print(f"smoke.py: error: instruction counts need {_instr.available()}; use --mode cpu", file=sys.stderr)
        return 2
    base = None
    if args.compare:
        with open(args.compare) as fh:
            base = json.load(fh)
        if args.cells is None:
            names = [n for n in base["cells"] if n in CELLS]
    if args.against:
        with open(args.against) as fh:
            new = json.load(fh)
    else:
        new = record(measure(names, args.mode, args.runs), args.mode)
    if args.save is not None:
        path = args.save or os.path.join(HERE, "baselines", new["commit"].replace("+", "-") + ".json")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as fh:
            json.dump(new, fh, indent=1)
        print(f"saved {path}")
    if base is None:
        if args.save is None:
            print(json.dumps(new, indent=1))
        return 0
    table, bad = compare(base, new, args.threshold)
    print(table)
    print(("REGRESSION: " + "; ".join(bad)) if bad else f"no cell more than {args.threshold:.0%} slower")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
