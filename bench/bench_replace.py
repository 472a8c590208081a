"""Replace-one against zero-out at the same (randomizer, n, eps): CPU seconds of one call each, the
ratio and the values (docs/accountant.md §9.3).

Each measurement runs in a fresh process (imports and the compiled kernels warmed by a small
unrelated call first, so only the call itself is timed; no cache of the accountant is shared), CPU
time by time.process_time; ``--repeat k`` takes the minimum of k fresh processes. Cells:

* randomizers: GaussianRandomizer(sigma0) for sigma0 in {0.46, 1, 3} (replace-one through bot) and
  BlanketMixedGaussian (0.0409, 0.596), (0.02, 0.5) (their own replace law);
* n in {50, 1e3, 1e5, 1e6}; eps in {0.1, 1, 4} (get_delta_bounds) and get_epsilon(1e-6).

Usage: ``python bench/bench_replace.py [--only SUBSTRING] [--n 50,1000] [--eps 0.1,1] [--repeat 3]
[--no-epsilon] [--timeout 120] [--json out.json]``. A cell over the timeout prints ">T".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

RANDOMIZERS = {
    "gauss0.46": "GaussianRandomizer(0.46, 1)",
    "gauss1": "GaussianRandomizer(1.0, 1)",
    "gauss3": "GaussianRandomizer(3.0, 1)",
    "bmg(0.0409,0.596)": "BlanketMixedGaussian(0.0409, 0.596, 1)",
    "bmg(0.02,0.5)": "BlanketMixedGaussian(0.02, 0.5, 1)",
}
NS = (50, 1000, 10**5, 10**6)
EPS = (0.1, 1.0, 4.0)
DELTA = 1e-6

_CHILD = r"""
import json, sys, time
from sharpdp.shuffle import ShuffleAccountant, GaussianRandomizer, BlanketMixedGaussian
ShuffleAccountant(GaussianRandomizer(2.0, 1), 7).get_delta(1.3)  # warm imports and kernels (not timed)
ShuffleAccountant(GaussianRandomizer(2.0, 1), 7, adjacency="replace").get_delta(1.3)
rnd, n, adj, what, x = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
acc = ShuffleAccountant(eval(rnd), n, adjacency=adj)
t = time.process_time()
if what == "delta":
    lo, up = acc.get_delta_bounds(x)
    out = [float(lo), float(up)]
else:
    out = [float(acc.get_epsilon(x))]
print(json.dumps({"cpu": time.process_time() - t, "value": out}))
"""


def run(rnd: str, n: int, adj: str, what: str, x: float, timeout: float) -> dict:
    """One fresh process; {"cpu": s, "value": [...]} or {"cpu": None, "error": ...}."""
    try:
        p = subprocess.run([sys.executable, "-c", _CHILD, rnd, str(n), adj, what, repr(x)], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"cpu": None, "error": f">{timeout:g}s"}
    if p.returncode != 0:
        return {"cpu": None, "error": (p.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def best(rnd: str, n: int, adj: str, what: str, x: float, repeat: int, timeout: float) -> dict:
    """The minimum CPU of ``repeat`` fresh processes (the values must agree: a fresh object each time)."""
    runs = [run(rnd, n, adj, what, x, timeout) for _ in range(repeat)]
    ok = [r for r in runs if r.get("cpu") is not None]
    if not ok:
        return runs[0]
    return min(ok, key=lambda r: r["cpu"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="randomizer keys containing this substring (comma list)")
    ap.add_argument("--n", default=",".join(str(n) for n in NS))
    ap.add_argument("--eps", default=",".join(str(e) for e in EPS))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--no-epsilon", action="store_true", help="skip get_epsilon(1e-6)")
    ap.add_argument("--no-delta", action="store_true", help="skip get_delta_bounds")
    ap.add_argument("--json", default="", help="write the rows there")
    a = ap.parse_args()
    keys = [k for k in RANDOMIZERS if not a.only or any(s in k for s in a.only.split(","))]
    ns = [int(float(s)) for s in a.n.split(",") if s]
    epss = [float(s) for s in a.eps.split(",") if s]
    print(f"# load {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores); CPU s, min of {a.repeat} fresh processes")
    print(f"{'randomizer':18s} {'n':>8s} {'call':>12s} {'replace s':>10s} {'zero s':>8s} {'ratio':>7s}  "
          "replace value | zero-out value")
    rows = []
    for k in keys:
        for n in ns:
            calls = ([] if a.no_delta else [("delta", e) for e in epss]) + \
                    ([] if a.no_epsilon else [("epsilon", DELTA)])
            for what, x in calls:
                r = best(RANDOMIZERS[k], n, "replace", what, x, a.repeat, a.timeout)
                z = best(RANDOMIZERS[k], n, "zero_out", what, x, a.repeat, a.timeout)
                rc, zc = r.get("cpu"), z.get("cpu")
                ratio = f"{rc / zc:7.1f}" if rc is not None and zc else "      -"
                label = f"delta({x:g})" if what == "delta" else f"eps({x:g})"

                def fmt(d: dict) -> str:
                    return " ".join(f"{v:.6g}" for v in d["value"]) if "value" in d else d.get("error", "?")

                print(f"{k:18s} {n:8d} {label:>12s} {rc if rc is not None else float('nan'):10.3f} "
                      f"{zc if zc is not None else float('nan'):8.3f} {ratio}  {fmt(r)} | {fmt(z)}", flush=True)
                rows.append({"randomizer": k, "n": n, "call": what, "x": x, "replace": r, "zero_out": z})
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"load": os.getloadavg()[0], "repeat": a.repeat, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
