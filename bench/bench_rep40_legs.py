"""Replace-one through bot: legs certified per call, their rel_tols and CPU, beside the zero-out call (rep40).

Each cell runs in a fork after a warm-up (imports and kernels not charged): get_delta_bounds(eps) of
ShuffleAccountant(GaussianRandomizer(s0, 1), n, "replace") with every engine certification of a leg counted
(ViaBottom.leg's cache misses: leg j, e, rel_tol, CPU s), then the zero-out call at the same cell.

Usage: ``python bench/bench_rep40_legs.py [--sigmas 0.46,1,2,4.6] [--ns 10,1000,100000] [--eps ...] [--json out]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

EPS = (1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0)


def _cell(s0: float, n: int, eps: float) -> dict:
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    import os as _os

    from sharpdp.shuffle.accountant import limits

    for kv in filter(None, _os.environ.get("REP40_SET", "").split(";")):  # (an experiment's settings: NAME=value)
        k, v = kv.split("=")
        obj, name = (limits, k) if "." not in k else (__import__("sharpdp.shuffle.accountant.via_bottom",
                                                                  fromlist=["ViaBottom"]).ViaBottom, k.split(".")[1])
        setattr(obj, name, eval(v))
    acc = ShuffleAccountant(GaussianRandomizer(s0, 1), n, "replace")
    vb = acc._bottom
    legs: list = []
    orig = vb.bottom._report

    def counted(e, rel_tol, *a, **k):
        t = time.process_time()
        r = orig(e, rel_tol, *a, **k)
        legs.append((k.get("only") is vb.legs[1] if vb.legs[0] is not vb.legs[1] else -1, e, rel_tol,
                     k.get("negligible", 0.0), time.process_time() - t))
        return r

    vb.bottom._report = counted
    t0 = time.process_time()
    lo, up = acc.get_delta_bounds(eps)
    rep = time.process_time() - t0
    z = ShuffleAccountant(GaussianRandomizer(s0, 1), n, "zero_out")
    t0 = time.process_time()
    z.get_delta_bounds(eps)
    zo = time.process_time() - t0
    return dict(s0=s0, n=n, eps=eps, lo=float(lo), up=float(up), rep=rep, zo=zo, legs=legs)


def _forked(s0: float, n: int, eps: float) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = json.dumps(_cell(s0, n, eps)).encode()
        except Exception as exc:  # noqa: BLE001
            out = json.dumps(dict(s0=s0, n=n, eps=eps, error=repr(exc))).encode()
        with os.fdopen(w, "wb") as fh:
            fh.write(out)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sigmas", default="0.46,1,2,4.6")
    ap.add_argument("--ns", default="10,1000,100000")
    ap.add_argument("--eps", default=",".join(map(str, EPS)))
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    ShuffleAccountant(GaussianRandomizer(2.0, 1), 7, "replace").get_delta(1.3)  # warm-up (not charged)
    for s0 in map(float, a.sigmas.split(",")):
        for n in (int(float(x)) for x in a.ns.split(",")):
            for eps in map(float, a.eps.split(",")):
                c = _forked(s0, n, eps)
                if "error" in c:
                    print(json.dumps(c), flush=True)
                    continue
                nl = len(c["legs"])
                lt = sum(x[4] for x in c["legs"])
                print(f"s0={s0:g} n={n:g} eps={eps:g} rep={c['rep']:.3f} zo={c['zo']:.3f} "
                      f"ratio={c['rep'] / max(c['zo'], 1e-3):.1f} legs={nl} legcpu={lt:.3f} "
                      f"up={c['up']:.4g} gap={(c['up'] - c['lo']) / c['lo'] if c['lo'] > 0 else float('inf'):.2%}",
                      flush=True)
                if a.json:
                    with open(a.json, "a") as fh:
                        fh.write(json.dumps(c) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
