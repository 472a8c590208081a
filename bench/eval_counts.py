"""Certified evaluations of ``get_epsilon(1e-6)`` and of the calibrations, by kind, per regime-map cell.

Each call runs in a fork (fresh caches) and counts what it asks of the accountant:

* ``get_epsilon`` (families (a) BMG at calibrate_bmg's pick, (b) GaussianRandomizer): phase 1's upper-only passes
  (``up``), loose looks (reports at rel_tol 0.1, ``look``), phase 2's probes split into those decided above delta by
  law 0 alone (``early``, docs/accountant.md §8.7) and those that computed a whole report (``full``), with the CPU
  seconds each kind took (docs/accountant.md §8);
* ``calibrate_bmg(n, eps, 1e-6, 1)`` / ``calibrate_gaussian(n, eps, 1e-6)``: evaluations at the search's loose
  rel_tol 0.1 and at the certifying 1e-2 (docs/calibration.md §6, §7), with their CPU seconds.

The counts are deterministic (the same on any machine); the seconds are not (load). Usage::

    python bench/eval_counts.py --families ab --ns 1e8 --eps 0.001,0.01 --json /tmp/x.jsonl
    python bench/eval_counts.py --render /tmp/x.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_regimes as BR  # noqa: E402
from geteps_ratio import _forked  # noqa: E402


def geteps_counts(spec: dict, n: int) -> dict:
    """One fresh ``get_epsilon(1e-6)`` with its accountant calls counted and timed by kind."""
    from sharpdp.shuffle import ShuffleAccountant
    from sharpdp.shuffle import accountant as A
    from sharpdp.shuffle.accountant import search as S

    c: dict = {k: 0 for k in ("up", "look", "early", "full")}
    c.update({f"{k}_cpu": 0.0 for k in ("up", "look", "probe")})
    orig_rep, orig_uv, orig_pr = A.ShuffleAccountant._report, S.upper_value, S.probe
    has = A.ShuffleAccountant._has_report

    def rep(self, eps, rel_tol, *a, **k):
        if rel_tol == S._LOOK_REL and not self._reports.get((eps, rel_tol, None, False, 0.0)):
            t = time.process_time()
            out = orig_rep(self, eps, rel_tol, *a, **k)
            c["look"] += 1
            c["look_cpu"] += time.process_time() - t
            return out
        return orig_rep(self, eps, rel_tol, *a, **k)

    def uv(*a, **k):
        t = time.process_time()
        out = orig_uv(*a, **k)
        c["up"] += 1
        c["up_cpu"] += time.process_time() - t
        return out

    def pr(acc, e, *a, **k):
        t = time.process_time()
        out = orig_pr(acc, e, *a, **k)
        c["probe_cpu"] += time.process_time() - t
        c["full" if has(acc, e) else "early"] += 1
        return out

    A.ShuffleAccountant._report, S.upper_value, S.probe = rep, uv, pr
    try:
        t = time.process_time()
        c["answer"] = float(ShuffleAccountant(BR._randomizer(spec), n, BR._adjacency(spec)).get_epsilon(BR.DELTA))
        c["cpu"] = time.process_time() - t
    finally:
        A.ShuffleAccountant._report, S.upper_value, S.probe = orig_rep, orig_uv, orig_pr
    return c


def calibration_counts(kind: str, n: int, eps: float) -> dict:
    """One ``calibrate_bmg`` (kind "bmg", d = 1) or ``calibrate_gaussian`` (kind "gauss") at delta = 1e-6, its
    evaluations counted and timed by rel_tol."""
    from sharpdp.shuffle.calibration import search as CS
    from sharpdp.shuffle.calibration.bmg import calibrate_bmg_report
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report

    c: dict = {"loose": 0, "cert": 0, "loose_cpu": 0.0, "cert_cpu": 0.0}
    orig = CS.closed_then_full

    def ctf(r, n_, adj, e, d, rel_tol=CS.CERT_REL_TOL, *a):
        t = time.process_time()
        out = orig(r, n_, adj, e, d, rel_tol, *a)
        key = "cert" if rel_tol == CS.CERT_REL_TOL else "loose"
        c[key] += 1
        c[f"{key}_cpu"] += time.process_time() - t
        return out

    CS.closed_then_full = ctf
    try:
        t = time.process_time()
        rep = (calibrate_bmg_report(n, eps, BR.DELTA, 1) if kind == "bmg" else calibrate_gaussian_report(n, eps, BR.DELTA))
        c["cpu"] = time.process_time() - t
    finally:
        CS.closed_then_full = orig
    r = rep.randomizer
    c.update(sigma0=r.sigma0, gamma=getattr(r, "gamma", 0.0), mse=r.mse_single, up=rep.delta_bounds[1])
    return c


def run(families: str, ns: list[int], eps_list: list[float], sigmas: list[float], out) -> None:
    for n in ns:
        for eps in eps_list:
            for kind in ("bmg", "gauss"):
                if (kind == "bmg" and "a" in families) or (kind == "gauss" and "b" in families):
                    cal = _forked(calibration_counts, kind, n, eps)
                    row = dict(call=f"calibrate_{kind}", n=n, eps=eps, **cal)
                    print(json.dumps(row), file=out, flush=True)
                    if kind == "bmg" and "sigma0" in cal:
                        spec = dict(kind="bmg", gamma=cal["gamma"], sigma0=cal["sigma0"])
                        row = dict(call="get_epsilon", family="a", n=n, eps=eps, spec=spec, **_forked(geteps_counts, spec, n))
                        print(json.dumps(row), file=out, flush=True)
        if "b" in families:
            for s in sigmas:
                spec = dict(kind="gaussian", sigma0=s)
                row = dict(call="get_epsilon", family="b", n=n, eps=None, spec=spec, **_forked(geteps_counts, spec, n))
                print(json.dumps(row), file=out, flush=True)


def render(path: str) -> str:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    out = ["| call | n | eps / randomizer | CPU s | counts (CPU s) | answer |", "|---|---|---|---|---|---|"]
    for r in rows:
        if r["call"] == "get_epsilon":
            what = (f"BMG({r['spec']['gamma']:.3g}, {r['spec']['sigma0']:.3g}) @ {r['eps']}" if r["family"] == "a"
                    else f"Gauss s0={r['spec']['sigma0']}")
            cnt = (f"{r.get('up')} up ({r.get('up_cpu', 0):.2f}), {r.get('look')} look ({r.get('look_cpu', 0):.2f}), "
                   f"{r.get('early')} early + {r.get('full')} full probes ({r.get('probe_cpu', 0):.2f})")
            ans = f"{r.get('answer', float('nan')):.7g}"
        else:
            what = str(r["eps"])
            cnt = f"{r.get('loose')} loose ({r.get('loose_cpu', 0):.2f}) + {r.get('cert')} cert ({r.get('cert_cpu', 0):.2f})"
            ans = f"s0={r.get('sigma0', float('nan')):.6g} g={r.get('gamma', 0):.4g} Err1={r.get('mse', float('nan')):.6g}"
        out.append(f"| {r['call']} | {r['n']:.0e} | {what} | {r.get('cpu', float('nan')):.2f} | {cnt} | {ans} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default="ab", help="a (BMG: calibrate_bmg and get_epsilon at its pick), b (Gauss)")
    ap.add_argument("--ns", default="1e8", help="comma separated n")
    ap.add_argument("--eps", default="0.001,0.01,0.1", help="comma separated epsilons (calibrations, family a)")
    ap.add_argument("--sigmas", default=",".join(str(s) for s in BR.GAUSS_SIGMAS), help="family b's sigma0")
    ap.add_argument("--json", default=None, help="write the rows here (JSON lines; default stdout)")
    ap.add_argument("--render", default=None, help="run nothing: print the stored rows as a table")
    args = ap.parse_args(argv)
    if args.render:
        print(render(args.render))
        return 0
    ns = [int(float(v)) for v in args.ns.split(",")]
    eps_list = [float(v) for v in args.eps.split(",")]
    sigmas = [float(v) for v in args.sigmas.split(",")]
    out = open(args.json, "w") if args.json else sys.stdout
    try:
        run(args.families, ns, eps_list, sigmas, out)
    finally:
        if args.json:
            out.close()
    if args.json:
        print(render(args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())
