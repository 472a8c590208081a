"""Binary RR ``get_epsilon`` speed: construction + ``get_epsilon(1e-6)`` of
``ShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency=A)``, CPU time of the first call in a
FRESH process after the imports (``cold``: block-law caches empty, what a script pays), and of the
same call again with a new accountant (``warm``: process-wide caches filled), min / median over
``--runs`` processes; optionally callgrind instructions of the cold call (``--instr``, load-proof).

Usage::

    python bench/binrr_speed.py                          # the grid n = 1e3..1e6, eps0 = 0.5..4, both adjacencies
    python bench/binrr_speed.py --ns 1e4 --eps0 1 --adj replace --runs 5 --instr
    python bench/binrr_speed.py --lattice                # the lattice/blocks engine (docs/accountant_atoms.md §7-§11)

By default two-atom laws take the exact sum of docs/accountant_atoms.md §12; ``--lattice`` runs every
call inside ``lattice_for_two_atoms()`` (the engine before §12), for before/after tables in one tree.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DELTA = 1e-6


def child(n: int, eps0: float, adj: str, instr: bool, lattice: bool = False) -> None:
    import contextlib

    import sharpdp.shuffle  # noqa: F401  (imports not charged)
    from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
    from sharpdp.shuffle.accountant.driver import lattice_for_two_atoms

    kw = {} if adj == "default" else {"adjacency": adj}

    def call() -> float:
        with lattice_for_two_atoms() if lattice else contextlib.nullcontext():
            return ShuffleAccountant(RandomizedResponse(2, eps0), n, **kw).get_epsilon(DELTA)

    if instr:
        import _instr

        region = _instr.Region()
        region.start()
        eps = call()
        region.dump("cold")
        print(json.dumps(dict(eps=eps)))
        return
    t0 = time.process_time()
    eps = call()
    cold = time.process_time() - t0
    t0 = time.process_time()
    call()
    warm = time.process_time() - t0
    print(json.dumps(dict(eps=eps, cold=cold, warm=warm)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns", default="1e3,1e4,1e5,1e6")
    ap.add_argument("--eps0", default="0.5,1,2,4")
    ap.add_argument("--adj", default="replace,default", help="comma list of replace, zero_out, default")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--instr", action="store_true", help="also callgrind instructions of the cold call")
    ap.add_argument("--lattice", action="store_true", help="the lattice/blocks engine for two-atom laws (before §12)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(int(float(a.child[0])), float(a.child[1]), a.child[2], a.child[3] == "1",
              len(a.child) > 4 and a.child[4] == "1")
        return
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=os.path.dirname(os.path.abspath(__file__)), check=False).stdout.strip()
    except OSError:
        commit = "?"
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    engine = "lattice/blocks engine (--lattice)" if a.lattice else "exact two-atom sum (docs/accountant_atoms.md §12)"
    print(f"binary RR get_epsilon({DELTA:g}), sharpdp {commit}, {now}, {engine}, {a.runs} fresh processes per cell, "
          f"CPU ms (process_time), load average at start {os.getloadavg()[0]:.2f}")
    print("| A | eps0 | n | eps | cold min / median | warm min |" + (" cold instructions |" if a.instr else ""))
    print("|---|---|---|---|---|---|" + ("---|" if a.instr else ""))
    me = os.path.abspath(__file__)
    lat = "1" if a.lattice else "0"
    for adj in a.adj.split(","):
        for e0 in a.eps0.split(","):
            for ns in a.ns.split(","):
                n = int(float(ns))
                cold, warm, eps = [], [], None
                for _ in range(a.runs):
                    p = subprocess.run([sys.executable, me, "--child", str(n), e0, adj, "0", lat], capture_output=True,
                                       text=True, check=True)
                    r = json.loads(p.stdout.strip().splitlines()[-1])
                    cold.append(r["cold"] * 1e3)
                    warm.append(r["warm"] * 1e3)
                    eps = r["eps"]
                row = (f"| {adj} | {e0} | {n:.0e} | {eps:.7g} | {min(cold):.1f} / {statistics.median(cold):.1f} "
                       f"| {min(warm):.1f} |")
                if a.instr:
                    import _instr

                    counts, _ = _instr.count([sys.executable, me, "--child", str(n), e0, adj, "1", lat])
                    row += f" {counts['cold'] / 1e6:.1f} M |"
                print(row, flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
