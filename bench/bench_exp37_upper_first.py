"""Session 37 (exp37): what the export's check of upper-first samples (docs/composition.md §4.10) costs and where it
fires: per round, ``export_interval`` then ``dominating_pair`` in a fresh interpreter with
``limits.EXPORT_UPPER_FIRST_CHECK`` on and off (alternating, best of ``--repeat``; CPU seconds, imports not charged),
the number of samples bracketed by the neighbours' gaps (§2.12) and by the new check, and with ``--ratio`` the largest
ratio of the default PLD's delta to a second accountant's ``get_delta`` where delta >= 1e-12 (61 eps evenly in
[0, 1000 Delta] plus ``--extra``, as tests/test_exp35_export_matrix.py).

``python bench/bench_exp37_upper_first.py [--cells heavy-replace,b2-replace] [--repeat 2] [--ratio]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HEAVY = (0.0462579752243591, 0.7578495751181393)  # calibrate_bmg(1e4, 1, 1e-6, 1)
CELLS = {
    "heavy-replace": ("bmg", HEAVY, 10**4, "replace"),
    "heavy-zero_out": ("bmg", HEAVY, 10**4, "zero_out"),
    "b2-replace": ("bmg", (0.0653, 0.723), 10**4, "replace"),
    "heavy5-zero_out": ("bmg", (0.04089409561900239, 0.5960134902126553), 10**5, "zero_out"),
    "heavy5-replace": ("bmg", (0.04089409561900239, 0.5960134902126553), 10**5, "replace"),
    "private-replace": ("bmg", (0.95, 4.6), 10**4, "replace"),
    "bmg6-zero_out": ("bmg", (0.027018718327855053, 0.5082412099806768), 10**6, "zero_out"),
    "bmg6-replace": ("bmg", (0.027018718327855053, 0.5082412099806768), 10**6, "replace"),
    "gauss2-zero_out": ("gauss", (1.0,), 100, "zero_out"),
    "gauss6-zero_out": ("gauss", (1.0,), 10**6, "zero_out"),
    "gauss4-replace": ("gauss", (1.0,), 10**4, "replace"),
    "krr-replace": ("krr", (10, 2.0), 1000, "replace"),
    "privunit-replace": ("privunit", (0.7, 0.2, 3), 1000, "replace"),
}


def _make(kind, params, n, adj):
    import sharpdp.shuffle as sh

    rnd = {"bmg": lambda: sh.BlanketMixedGaussian(*params, 1), "gauss": lambda: sh.GaussianRandomizer(*params, 1),
           "krr": lambda: sh.RandomizedResponse(*params), "privunit": lambda: sh.PrivUnit(*params)}[kind]()
    return sh.ShuffleAccountant(rnd, n, adj)


def _worker(name: str, on: bool, ratio: bool, extra: list[float]) -> None:
    import numpy as np

    from sharpdp.interop.dp_accounting import export_interval, pld_from_pair
    from sharpdp.shuffle import clear_caches, dominating_pair, pair_accuracy, profile
    from sharpdp.shuffle.accountant import limits
    from sharpdp.shuffle.pair import cover

    limits.EXPORT_UPPER_FIRST_CHECK = on
    counts = {"by_gaps": 0, "by_check": 0}
    orig = profile.capped_cover

    def counting(lo, up, tau, bracket=None, **kw):
        lo_a, up_a = np.asarray(lo, dtype=float), np.asarray(up, dtype=float)
        if tau is not None and kw.get("at") is not None:
            c0 = cover(lo_a, up_a)
            fac = np.where(up_a > 0, c0 / np.where(up_a > 0, up_a, 1.0), 1.0)
            unknown = ~(np.nan_to_num(lo_a) > 0) & (up_a >= pair_accuracy.ACCURATE_FLOOR)
            gaps = unknown & (fac * fac > 1 + tau)
            check = unknown & pair_accuracy.upper_first_loose(kw["at"], lo_a, up_a, c0, tau) & ~gaps
            counts["by_gaps"] += int(gaps.sum())
            counts["by_check"] += int(check.sum()) if on else 0
        return orig(lo, up, tau, bracket, **kw)

    profile.capped_cover = counting
    acc = _make(*CELLS[name])
    clear_caches()
    t = time.process_time()
    dx = export_interval(acc)
    pair = dominating_pair(acc, dx, progress=False)
    out = {"cpu": time.process_time() - t, "values": int(pair.sample_epsilons.size), **counts}
    if ratio:
        pld = pld_from_pair(pair)
        ref = _make(*CELLS[name])
        worst = (0.0, 0.0)
        for e in np.concatenate([np.linspace(0.0, 1000 * dx, 61), extra]).tolist():
            up = float(ref.get_delta_bounds(e)[1])
            if up >= 1e-12:
                worst = max(worst, (float(pld.get_delta_for_epsilon(e)) / up, e))
        out.update(worst=worst[0], at=worst[1])
    print(json.dumps(out), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default=",".join(CELLS))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--ratio", action="store_true")
    ap.add_argument("--extra", default="", help="comma-separated eps added to the ratio's grid")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    extra = [float(x) for x in a.extra.split(",") if x]
    if a.worker:
        _worker(a.worker[0], a.worker[1] == "on", a.ratio, extra)
        return
    print(f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    for name in a.cells.split(","):
        res: dict = {"off": [], "on": []}
        for _ in range(a.repeat):
            for sw in ("off", "on"):
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, sw] + (["--ratio"] if a.ratio else []) \
                    + (["--extra", a.extra] if a.extra else [])
                p = subprocess.run(cmd, capture_output=True, text=True)
                res[sw].append(json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else
                               {"error": (p.stderr.strip().splitlines() or ["?"])[-1]})
        row = [name]
        for sw in ("off", "on"):
            r = res[sw]
            if "error" in r[0]:
                row.append(f"{sw}: error {r[0]['error'][:60]}")
                continue
            cpu = min(x["cpu"] for x in r)
            s = f"{sw}: {cpu:.2f} s, {r[0]['values']} values, bracketed {r[0]['by_gaps']} + {r[0]['by_check']}"
            if "worst" in r[0]:
                s += f", worst {r[0]['worst']:.4f} at eps {r[0]['at']:.3g}"
            row.append(s)
        print(" | ".join(row), f"(load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
