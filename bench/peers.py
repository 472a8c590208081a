"""sharpdp and its peers side by side: fresh processes, alternated, >= 3 runs each, CPU time.

Every timed call runs in a FRESH interpreter (``python bench/peers.py --child ...``) that imports
its code and builds its inputs first (not timed), then times the one call with
``time.process_time`` (all threads of the process, no ``RLIMIT_CPU``, so no 4 ms quantisation); a
wall-clock watchdog (``--timeout``) kills a call that runs away. The runs of one cell alternate
sharpdp and each peer (A B C A B C ...), so a change of load hits both sides. The load average
(1 min) is read before and after each cell and printed with it.

Peers (each only where it computes the same quantity):

* ``wang``: ``unifiedamplification.amplificationUB`` (Wang et al., "Privacy Amplification via
  Shuffling: Unified, Simplified, and Tightened", numerical variation-ratio bound), from a checkout
  given by ``--wang PATH`` (the folder holding ``unifiedamplification.py``; never copied here).
  k-RR parameters p = e^eps0, beta = (e^eps0 - 1)/(e^eps0 + k - 1), q = e^eps0 (their table).
  Its bisection runs on [0, eps0]; T is set so that eps0 2^-T <= 1e-3 eps, eps the answer of
  sharpdp in the same cell (sharpdp's relative xtol 1e-3): matched precision.
* ``clones``: ``computeamplification.numericalanalysis`` (Feldman, McMillan & Talwar, "Hiding Among
  the Clones", generic eps0-LDP bound, so looser than k-RR's own for k > 2), from ``--clones PATH``;
  upper bound, ``step`` = ``--clones-step`` (their example's 100), T matched as above.
* ``dp_accounting`` (PyPI): PLD self-composition of the same dominating pair (composition cell).

A peer that is not installed or not pointed to is printed as "absent", never quoted. A cell no
peer computes (the BMG) prints sharpdp alone.

Cells (delta = 1e-6):

* ``krr``: ``ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace")``: construction +
  ``get_epsilon(1e-6)``; k in {2, 10}, eps0 in {1, 8}, n = 1e3 .. 1e7.
* ``bmg``: the heavy-tailed BMG(0.0463, 0.758) that ``calibrate_bmg`` picks at n = 1e4, eps = 1
  (zero-out): construction + ``get_epsilon(1e-6)``.
* ``compose``: 10 rounds of BMG(0.95, 4.6) at n = 1e6 (zero-out), dominating pair on a 1e-6 lattice
  built once by the parent and loaded by every child: ``ComposedAccountant.get_epsilon(1e-6)``
  against dp_accounting's ``self_compose(10).get_epsilon_for_delta(1e-6)`` on that pair.

Usage::

    python bench/peers.py --wang ~/src/PrivacyAmplification --clones ~/src/ml-shuffling-amplification \\
        --runs 3 --json peers.json
    python bench/peers.py --cells krr --k 2 --eps0 1 --ns 1e3,1e4 --wang PATH     # a subset

Prints one Markdown row per (cell, peer): sharpdp min / median, peer min / median (CPU s), the
ratio peer / sharpdp of the medians (and of the minima), both answers and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import BMG_HEAVY, COMPOSE, build_pair, code_commit  # noqa: E402  (bench/ helpers)

DELTA = 1e-6
REL_XTOL = 1e-3  # sharpdp's get_epsilon precision (relative), matched in the peers' bisections


# ----------------------------------------------------------------------------- cells
def cell_name(cell: dict) -> str:
    if cell["cell"] == "krr":
        return f"{cell['k']}-RR eps0={cell['eps0']:g} n={cell['n']:.0e}"
    if cell["cell"] == "bmg":
        return f"BMG({cell['gamma']:.3g},{cell['sigma0']:.3g}) n={cell['n']:.0e}"
    return f"compose {cell['rounds']}x BMG({cell['gamma']:g},{cell['sigma0']:g}) n={cell['n']:.0e}"


def cells(kinds, ks, eps0s, ns) -> list[dict]:
    out = []
    if "krr" in kinds:
        out += [dict(cell="krr", k=k, eps0=e0, n=n) for k in ks for e0 in eps0s for n in ns]
    if "bmg" in kinds:
        out.append(dict(cell="bmg", gamma=BMG_HEAVY[0], sigma0=BMG_HEAVY[1], n=10**4))
    if "compose" in kinds:
        out.append(dict(cell="compose", **COMPOSE))
    return out


PEERS_OF = {"krr": ("wang", "clones"), "bmg": (), "compose": ("dp_accounting",)}


def peer_status(peer: str, args) -> str | None:
    """None if the peer can run here, else why not (printed as "absent: ...")."""
    if peer == "dp_accounting":
        try:
            import dp_accounting  # noqa: F401
        except ImportError:
            return "absent (pip install dp-accounting)"
        return None
    path, module = (args.wang, "unifiedamplification.py") if peer == "wang" else (args.clones, "computeamplification.py")
    if not path:
        return f"absent (--{peer} PATH not given)"
    if not os.path.isfile(os.path.join(path, module)):
        return f"absent ({module} not in {path})"
    return None


def matched_iterations(upper: float, eps_ref: float | None, default: int = 12) -> int:
    """Bisection steps T on [0, upper] with upper 2^-T <= REL_XTOL eps_ref (sharpdp's precision)."""
    if not eps_ref or not math.isfinite(eps_ref) or eps_ref <= 0 or upper <= 0:
        return default
    return max(1, math.ceil(math.log2(upper / (REL_XTOL * eps_ref))))


# ----------------------------------------------------------------------------- child side
def _setup(task: dict):
    """Imports and inputs (not timed); returns (call, info) with call() -> eps."""
    cell, impl = task["cell"], task["impl"]
    info: dict = {}
    if impl == "sharpdp":
        from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, RandomizedResponse, ShuffleAccountant

        if cell["cell"] == "krr":
            return (lambda: ShuffleAccountant(RandomizedResponse(cell["k"], cell["eps0"]), cell["n"],
                                              adjacency="replace").get_epsilon(DELTA)), info
        if cell["cell"] == "bmg":
            return (lambda: ShuffleAccountant(BlanketMixedGaussian(cell["gamma"], cell["sigma0"], 1),
                                              cell["n"]).get_epsilon(DELTA)), info
        with open(task["pair_file"], "rb") as fh:
            pair = pickle.load(fh)
        acc = ShuffleAccountant(BlanketMixedGaussian(cell["gamma"], cell["sigma0"], 1), cell["n"])
        ca = ComposedAccountant([(acc, cell["rounds"])], cell["dx"])
        ca._pairs = [pair]  # the pair built once by the parent (what dominating_pair returned there)
        return (lambda: ca.get_epsilon(DELTA)), info
    if impl == "dp_accounting":
        from sharpdp.interop.dp_accounting import pld_from_pair

        with open(task["pair_file"], "rb") as fh:
            pld = pld_from_pair(pickle.load(fh))
        return (lambda: pld.self_compose(cell["rounds"]).get_epsilon_for_delta(DELTA)), info
    sys.path.insert(0, task["path"])
    k, eps0, n = cell["k"], cell["eps0"], cell["n"]
    if impl == "wang":
        import unifiedamplification as W

        p = math.exp(eps0)
        beta = (p - 1) / (p + k - 1)
        T = matched_iterations(eps0, task.get("eps_ref"))
        info["T"] = T
        return (lambda: W.amplificationUB(p, beta, p, p, n, DELTA, T)), info
    import computeamplification as CA

    with contextlib.redirect_stdout(sys.stderr):  # it prints when its closed form does not apply
        upper = CA.closedformanalysis(n, eps0, DELTA) if eps0 < math.log(n / (16 * math.log(4 / DELTA))) else eps0
    T = matched_iterations(upper, task.get("eps_ref"))
    info.update(T=T, step=task["step"])
    return (lambda: CA.numericalanalysis(n, eps0, DELTA, T, task["step"], True)), info


def child(task: dict) -> dict:
    call, info = _setup(task)
    w0, t0 = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(sys.stderr):
        eps = call()
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    return dict(cpu=cpu, wall=wall, eps=float(eps), **info)


# ----------------------------------------------------------------------------- parent side
def run_child(task: dict, timeout: float) -> dict:
    """One fresh process; {"timeout": True} if the wall-clock watchdog stopped it."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(task)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1][:120]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def summarize(runs: list[dict]) -> dict:
    cpu = [r["cpu"] for r in runs if "cpu" in r]
    out: dict = {"runs": runs}
    if len(cpu) == len(runs) and cpu:
        out.update(min=min(cpu), median=statistics.median(cpu), eps=runs[0]["eps"])
    elif any(r.get("timeout") for r in runs):
        out["failed"] = "timeout"
    else:
        out["failed"] = next((r["error"] for r in runs if "error" in r), "?")
    return out


def _fmt(s: dict, timeout: float) -> str:
    if "failed" in s:
        return f">{timeout:g} s wall" if s["failed"] == "timeout" else "error: " + s["failed"][:50]
    return f"{s['min']:.3g} / {s['median']:.3g}"


def run_cell(cell: dict, args, status: dict, pair_file: str | None) -> list[dict]:
    base = dict(cell=cell, pair_file=pair_file, step=args.clones_step)
    peers = [p for p in PEERS_OF[cell["cell"]] if p in args.peers]
    live = [p for p in peers if status[p] is None]
    load0 = os.getloadavg()[0]
    runs: dict[str, list] = {"sharpdp": []}
    runs.update({p: [] for p in live})
    eps_ref = None
    for _ in range(args.runs):  # A B C A B C ...
        r = run_child(dict(base, impl="sharpdp"), args.timeout)
        runs["sharpdp"].append(r)
        eps_ref = eps_ref or r.get("eps")
        for p in live:
            path = args.wang if p == "wang" else args.clones
            runs[p].append(run_child(dict(base, impl=p, path=path, eps_ref=eps_ref), args.timeout))
    load = (load0, os.getloadavg()[0])
    sh = summarize(runs["sharpdp"])
    rows = []
    for p in peers or [None]:
        row = dict(cell=cell_name(cell), spec=cell, peer=p, sharpdp=sh, load=load)
        if p is not None and status[p] is not None:
            row["peer_absent"] = status[p]
        elif p is not None:
            row["peer_result"] = summarize(runs[p])
        rows.append(row)
    return rows


def markdown_row(row: dict, timeout: float) -> str:
    sh = row["sharpdp"]
    peer = row["peer"] or "(no peer computes this)"
    if row["peer"] is None:
        pr, ratio, peps = "-", "-", "-"
    elif "peer_absent" in row:
        pr, ratio, peps = row["peer_absent"], "-", "-"
    else:
        ps = row["peer_result"]
        pr = _fmt(ps, timeout)
        if "failed" in ps or "failed" in sh:
            ratio, peps = "-", "-" if "failed" in ps else f"{ps['eps']:.6g}"
        else:
            ratio = f"{ps['median'] / sh['median']:.3g}x ({ps['min'] / sh['min']:.3g}x)"
            extra = ", ".join(f"{k}={ps['runs'][0][k]}" for k in ("T", "step") if k in ps["runs"][0])
            peps = f"{ps['eps']:.6g}" + (f" ({extra})" if extra else "")
    seps = "-" if "failed" in sh else f"{sh['eps']:.6g}"
    return (f"| {row['cell']} | {_fmt(sh, timeout)} | {peer} | {pr} | {ratio} | {seps} | {peps} | "
            f"{row['load'][0]:.2f}-{row['load'][1]:.2f} |")


HEADER = ("| cell | sharpdp CPU s min / median | peer | peer CPU s min / median | peer / sharpdp (medians; minima) | "
          "eps sharpdp | eps peer | load avg (1 min) |\n|---|---|---|---|---|---|---|---|")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--cells", default="krr,bmg,compose", help="comma list of krr, bmg, compose")
    ap.add_argument("--k", default="2,10")
    ap.add_argument("--eps0", default="1,8")
    ap.add_argument("--ns", default="1e3,1e4,1e5,1e6,1e7")
    ap.add_argument("--peers", default="wang,clones,dp_accounting")
    ap.add_argument("--wang", help="folder holding Wang et al.'s unifiedamplification.py")
    ap.add_argument("--clones", help="folder holding the clones paper's computeamplification.py")
    ap.add_argument("--clones-step", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300.0, help="wall-clock seconds per call (watchdog)")
    ap.add_argument("--json", help="write the rows, date, commit and load here")
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    def parse(name, text, conv):
        try:
            return [conv(x) for x in text.split(",")]
        except ValueError:
            raise ValueError(f"{name} must be a comma-separated list of numbers, got {text!r}") from None

    try:
        kinds = set(args.cells.split(","))
        ks = parse("--k", args.k, int)
        eps0s = parse("--eps0", args.eps0, float)
        ns = parse("--ns", args.ns, lambda x: int(float(x)))
        args.peers = set(args.peers.split(","))
        if args.runs < 1:
            raise ValueError("--runs must be >= 1")
        if not kinds <= set(PEERS_OF):
            raise ValueError(f"--cells must be among {sorted(PEERS_OF)}")
    except ValueError as exc:
        print(f"peers.py: error: {exc}", file=sys.stderr)
        return 2
    status = {p: peer_status(p, args) for p in ("wang", "clones", "dp_accounting")}
    todo = cells(kinds, ks, eps0s, ns)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    commit = code_commit()
    print(f"sharpdp {commit}, {started}, {args.runs} runs per side, fresh processes, CPU time (process_time); "
          f"load average at start {os.getloadavg()[0]:.2f}")
    print(HEADER, flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        pair_file = None
        for cell in todo:
            if cell["cell"] == "compose" and pair_file is None:
                pair_file = build_pair(tmp)
            for row in run_cell(cell, args, status, pair_file):
                rows.append(row)
                print(markdown_row(row, args.timeout), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(date=started, commit=commit, runs=args.runs, timeout=args.timeout,
                           wang=args.wang, clones=args.clones, rows=rows), fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
