"""docs/calibration.md §20: one calibration in this process with the given switches, CPU time and its evaluations.

Usage: python bench/bench_cal48_safe_step.py FUNC N EPS START_MAX SAFE_STEP [NAME=VALUE ...]  (FUNC gauss or bmg;
switches 0 / 1; each NAME=VALUE sets limits.NAME to the Python literal VALUE, e.g. CAL49_ONE_LOOSE=0.25: §21).
Prints one JSON line: CPU s (time.process_time of the whole call), evaluations, the calls (sigma0 or (gamma, sigma0),
rel_tol, bracket / delta), the answer (float.hex) and a fresh accountant's upper value at it / delta."""

from __future__ import annotations

import ast
import json
import sys
import time

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.calibration import search as S
from sharpdp.shuffle.calibration.bmg import calibrate_bmg_report
from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report


def main() -> None:
    func, n, eps, start_max, safe = sys.argv[1], int(float(sys.argv[2])), float(sys.argv[3]), sys.argv[4], sys.argv[5]
    limits.CAL46_START_MAX = start_max == "1"
    limits.CAL48_SAFE_STEP = safe == "1"
    extra = dict(a.split("=", 1) for a in sys.argv[6:])
    for name, value in extra.items():
        if not hasattr(limits, name):
            raise ValueError(f"unknown switch limits.{name}")
        setattr(limits, name, ast.literal_eval(value))
    delta = 1e-6
    calls = []
    orig = S.closed_then_full

    def traced(r, n_, adj, e, d, rel=S.CERT_REL_TOL, skip=float("inf")):
        t0 = time.process_time()
        out = orig(r, n_, adj, e, d, rel, skip)
        calls.append((repr(r), rel, out[0] / delta, out[1] / delta, round(time.process_time() - t0, 3)))
        return out

    S.closed_then_full = traced
    t0 = time.process_time()
    rep = (calibrate_gaussian_report(n, eps, delta) if func == "gauss" else calibrate_bmg_report(n, eps, delta, 1))
    cpu = time.process_time() - t0
    r = rep.randomizer
    fresh = ShuffleAccountant(r, n, rel_tol=rep.rel_tol).get_delta_bounds(eps)[1] / delta
    sig = r.sigma0 if func == "gauss" else (r.gamma, r.sigma0)
    print(json.dumps({"func": func, "n": n, "eps": eps, "start_max": start_max, "safe": safe, "extra": extra,
                      "cpu": round(cpu, 3),
                      "evals": rep.evaluations, "calls": calls, "answer": repr(sig),
                      "hex": float(r.sigma0).hex(), "rel_tol": rep.rel_tol, "fresh_up": fresh}))


if __name__ == "__main__":
    main()
