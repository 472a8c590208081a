"""``get_epsilon(1e-6)`` CPU over one ``get_delta_bounds`` CPU, on a representative subset of the
regime map's cells at n <= 1e6 (bench/README.md "Regime map", cause 5; goal: <= 3x).

Each call runs in a fork of this process after ``import sharpdp.shuffle`` (the regime map's
``--isolate fork``: :func:`bench_regimes.timed`), so every call starts with cold caches and pays
the same first-call costs; CPU time is ``time.process_time`` of the child, best of ``--reps``.
The ratio is the regime map's: family (a) divides by ``get_delta_bounds`` at the cell's epsilon
(calibrate_bmg's pick at that epsilon; the calibration itself is not timed), families (b)-(d) by
``get_delta_bounds`` at the epsilon that ``get_epsilon`` returned.

Before/after: run the same script under two checkouts and compare (``--json`` stores a run,
``--against`` prints a stored run's ratios next to this one's)::

    /work/venv/main/bin/python bench/geteps_ratio.py --json before.json      # the code before
    python bench/geteps_ratio.py --json after.json --against before.json      # this checkout
    python bench/geteps_ratio.py --render after.json --against before.json    # tables only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_regimes as BR  # noqa: E402

SUBSET: tuple[tuple, ...] = (
    *(("a", "BMG", None, n, e) for n in (10**2, 10**3, 10**4, 10**5, 10**6) for e in (0.01, 0.1, 1.0, 4.0)),
    *(("b", f"Gauss s0={s}", dict(kind="gaussian", sigma0=s), n, None)
      for s in (0.5, 1.0, 2.0, 4.6) for n in (10**2, 10**3, 10**4, 10**5, 10**6)),
    *(("c", f"10-RR e0={e0:g}", dict(kind="krr", k=10, eps0=e0), n, None)
      for e0, ns in ((1.0, (10**3,)), (4.0, (10**2, 10**4)), (8.0, (10**4,))) for n in ns),
    *(("c", "2-RR e0=1", dict(kind="krr", k=2, eps0=1.0), n, None) for n in (10**3,)),
    *(("d", "PrivUnit", dict(kind="privunit", params=list(BR.PRIVUNIT)), n, None) for n in (10**2, 10**4)),
)
#: ``--large``: the regime map's cells at n = 1e8 and 1e9 of the Gaussian randomizer and PrivUnit (seconds per call)
LARGE: tuple[tuple, ...] = (
    *(("b", f"Gauss s0={s}", dict(kind="gaussian", sigma0=s), n, None) for s in (0.5, 1.0, 2.0, 4.6) for n in (10**8, 10**9)),
    *(("d", "PrivUnit", dict(kind="privunit", params=list(BR.PRIVUNIT)), n, None) for n in (10**8, 10**9)),
)


def count_calls(spec: dict, n: int) -> dict:
    """Deterministic cost of one ``get_epsilon(1e-6)`` on a fresh accountant (in a fork): the number of
    reports computed (``_report_laws`` calls at the accountant's rel_tol: get_delta values; cache hits are
    not counted), of loose reports (other rel_tol), of phase 2's probes and of upper-only passes (phase 1
    and the refit)."""
    from sharpdp.shuffle import ShuffleAccountant
    from sharpdp.shuffle import accountant as A
    from sharpdp.shuffle.accountant import search as S

    c = {"reports": 0, "loose_reports": 0, "upper_only": 0, "probes": 0}
    orig_rl, orig_uv, orig_pr = A.ShuffleAccountant._report_laws, S.upper_value, S.probe

    def rl(self, eps, rel_tol, *a, **k):
        c["reports" if rel_tol == self.rel_tol else "loose_reports"] += 1
        return orig_rl(self, eps, rel_tol, *a, **k)

    def uv(*a, **k):
        c["upper_only"] += 1
        return orig_uv(*a, **k)

    def pr(*a, **k):
        c["probes"] += 1
        return orig_pr(*a, **k)

    A.ShuffleAccountant._report_laws, S.upper_value, S.probe = rl, uv, pr
    try:
        acc = ShuffleAccountant(BR._randomizer(spec), n, BR._adjacency(spec))
        c["answer"] = float(acc.get_epsilon(BR.DELTA))
    finally:
        A.ShuffleAccountant._report_laws, S.upper_value, S.probe = orig_rl, orig_uv, orig_pr
    return c


def _forked(fn, *args) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            os.write(w, json.dumps(fn(*args)).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks).decode() or "{}")


def _best(call: str, n: int, eps: float, spec: dict, reps: int, timeout: float) -> dict:
    best: dict = {}
    for _ in range(reps):
        r = BR.timed(call, n, eps, spec, timeout)
        if "cpu" not in r:
            return r
        if not best or r["cpu"] < best["cpu"]:
            best = r
    return best


def run(reps: int, timeout: float, families: str, ns: set | None, labels: set | None = None,
        large: bool = False) -> list[dict]:
    rows = []
    for fam, label, spec, n, eps in SUBSET + (LARGE if large else ()):
        if fam not in families or (ns is not None and n not in ns) or (labels is not None and label not in labels):
            continue
        row: dict = dict(family=fam, label=label, n=n, eps=eps)
        if fam == "a":
            cal = BR.timed("calibrate_bmg", n, eps, None, 10 * timeout)
            spec = (dict(kind="bmg", gamma=cal["gamma"], sigma0=cal["sigma0"]) if "gamma" in cal
                    else BR._template_bmg(n, eps))
        row["spec"] = spec
        row["counts"] = _forked(count_calls, spec, n)
        e = _best("epsilon", n, 0.0, spec, reps, timeout) if reps > 0 else {}
        row["get_epsilon"] = e
        row["answer"] = row["counts"].get("answer", math.nan)
        if "epsilon" in e:
            row["answer"] = e["epsilon"]
            row["delta_bounds"] = _best("delta_bounds", n, eps if fam == "a" else e["epsilon"], spec, reps,
                                        timeout)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


#: ``--calibrations``: both calibrations over n in 1e2..1e6 x these epsilons at delta = 1e-6 (docs/calibration.md §3)
CAL_EPS = (0.001, 0.01, 0.1, 1.0, 8.0)


def calibrations() -> list[dict]:
    """Accountant evaluations, CPU seconds and the answer of ``calibrate_gaussian`` and ``calibrate_bmg`` (d = 1) over
    n in {1e2, ..., 1e6} x CAL_EPS, delta = 1e-6, one call each in this process (caches cleared before each;
    BMG n = 100, eps = 8 left out: seconds per evaluation, bench/README.md regime map cause 3)."""
    from sharpdp.shuffle.calibration.bmg import calibrate_bmg_report
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report
    from sharpdp.shuffle.round_cache import clear_caches

    rows = []
    for fn in ("gauss", "bmg"):
        for n in (10**2, 10**3, 10**4, 10**5, 10**6):
            for eps in CAL_EPS:
                if fn == "bmg" and n == 100 and eps == 8.0:
                    continue
                clear_caches()
                t = time.process_time()
                rep = (calibrate_gaussian_report(n, eps, BR.DELTA) if fn == "gauss"
                       else calibrate_bmg_report(n, eps, BR.DELTA, 1))
                r = rep.randomizer
                rows.append(dict(fn=fn, n=n, eps=eps, cpu=time.process_time() - t, evals=rep.evaluations,
                                 sigma0=r.sigma0, gamma=getattr(r, "gamma", 0.0), up=rep.delta_bounds[1]))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def _ratio(r: dict) -> float:
    e, d = r.get("get_epsilon", {}).get("cpu"), (r.get("delta_bounds") or {}).get("cpu")
    return e / d if e is not None and d else float("nan")


def _counts(r: dict) -> str:
    c = r.get("counts")
    if not c:
        return "-"
    loose = f" (+{c['loose_reports']} loose)" if c.get("loose_reports") else ""
    return f"{c['reports']}{loose} / {c['probes']} / {c['upper_only']}"


def _key(r: dict) -> tuple:
    return (r["family"], r["label"], r["n"], r["eps"])


def table(rows: list[dict], before: list[dict] | None) -> str:
    old = {_key(r): r for r in before or []}
    head = ("| family | randomizer | n | eps (a) | answer | get_epsilon | get_delta_bounds | ratio | reports / "
            "probes / upper-only passes |")
    sep = "|---|---|---|---|---|---|---|---|---|"
    if before is not None:
        head += " answer before | ratio before | counts before |"
        sep += "---|---|---|"
    out = [head, sep]
    for r in rows:
        e = r.get("get_epsilon", {})
        d = r.get("delta_bounds") or {}
        line = (f"| {r['family']} | {r['label']} | {r['n']:.0e} | {r['eps'] if r['eps'] is not None else '-'} | "
                f"{r.get('answer', float('nan')):.6g} | {e.get('cpu', float('nan')):.3f} s | "
                f"{d.get('cpu', float('nan')):.3f} s | {_ratio(r):.2f} | {_counts(r)} |")
        if before is not None:
            b = old.get(_key(r), {})
            line += f" {b.get('answer', float('nan')):.6g} | {_ratio(b) if b else float('nan'):.2f} | {_counts(b)} |"
        out.append(line)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3,
                    help="fresh processes per call, best taken (default 3; 0: the call counts only, no timing)")
    ap.add_argument("--timeout", type=float, default=20.0, help="CPU seconds per call (default 20)")
    ap.add_argument("--families", default="abcd")
    ap.add_argument("--ns", default=None, help="restrict to these n, comma separated")
    ap.add_argument("--json", default=None, help="write this run's rows here")
    ap.add_argument("--against", default=None, help="a stored run (--json) to print side by side")
    ap.add_argument("--render", default=None, help="run nothing: print the stored run in this file")
    ap.add_argument("--isolate", choices=("fork", "instr"), default="fork",
                    help="fork (CPU seconds, default) or instr: each timed call in a fresh interpreter under callgrind "
                    "(bench/_instr.py), every 'CPU s' figure then 1e9 instructions (load-proof)")
    ap.add_argument("--labels", default=None, help="restrict to these randomizer labels, comma separated")
    ap.add_argument("--large", action="store_true", help="add the cells at n = 1e8 and 1e9 of (b) and (d)")
    ap.add_argument("--calibrations", action="store_true",
                    help="instead: evaluations and CPU of both calibrations over n 1e2..1e6 x eps in CAL_EPS (--json)")
    ap.add_argument("--no-early", action="store_true",
                    help="phase 2's probes without law 0's early decision (docs/accountant.md §8.7): the code before")
    args = ap.parse_args(argv)
    if args.calibrations:
        rows = calibrations()
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh)
        print(f"evaluations {sum(r['evals'] for r in rows)}, CPU {sum(r['cpu'] for r in rows):.2f} s; over 1 s: "
              + ", ".join(f"{r['fn']} n={r['n']:.0e} eps={r['eps']:g} {r['cpu']:.2f} s ({r['evals']})"
                          for r in rows if r["cpu"] > 1.0))
        return 0
    before = None
    if args.against:
        with open(args.against) as fh:
            before = json.load(fh)
    if args.render:
        with open(args.render) as fh:
            rows = json.load(fh)
    else:
        import sharpdp.shuffle  # noqa: F401  (imported once, before any fork)
        from sharpdp.shuffle.accountant import probe as P

        P.EARLY = not args.no_early

        BR._ISOLATION.update(mode=args.isolate, mem_gb=3.0)
        ns = None if args.ns is None else {int(float(x)) for x in args.ns.split(",")}
        t0 = time.time()
        load0 = os.getloadavg()
        rows = run(args.reps, args.timeout, args.families, ns,
                   None if args.labels is None else set(args.labels.split(",")), args.large)
        print(f"wall {time.time() - t0:.0f} s, load average {load0[0]:.1f} -> {os.getloadavg()[0]:.1f}")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh)
    print(table(rows, before))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
