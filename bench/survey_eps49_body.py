"""§8.28's placement against delta (docs/accountant.md §8.29.6): get_epsilon(delta) of GaussianRandomizer(s0, 1) with
limits.EPS48_BODY_START = 0.9 and limits.EPS49_BODY_SMALL = C (0: off), one process, every cell: the number of phase-2
probes, whether §8.28's gate opened, the answer's offset from the shape start x0 (in xtol) and the CPU s.

    python bench/survey_eps49_body.py --small 0.5 [--sigmas 2,3,4.6,8] [--ns 1e8,1e9] [--deltas 1e-8,1e-9,1e-10,1e-12]
"""
from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
    from sharpdp.shuffle.accountant import limits
    from sharpdp.shuffle.accountant import search as S

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", type=float, default=0.5)
    ap.add_argument("--sigmas", default="2,3,4.6,8")
    ap.add_argument("--ns", default="1e8,1e9")
    ap.add_argument("--deltas", default="1e-8,1e-9,1e-10,1e-12")
    a = ap.parse_args()
    limits.EPS49_BODY_SMALL = a.small
    rec: dict = {}
    ob, op = S.body_start, S.probe

    def bs(*args):
        r = ob(*args)
        rec.update(x0=args[2], open=r[1])
        return r

    def pr(*args, **kw):
        rec["probes"] = rec.get("probes", 0) + 1
        return op(*args, **kw)
    S.body_start, S.probe = bs, pr
    for n in (int(float(x)) for x in a.ns.split(",")):
        for s in (float(x) for x in a.sigmas.split(",")):
            for d in (float(x) for x in a.deltas.split(",")):
                rec.clear()
                t = time.process_time()
                e = ShuffleAccountant(GaussianRandomizer(s, 1), n).get_epsilon(d)
                t = time.process_time() - t
                off = (e / rec["x0"] - 1.0) / 1e-3 if "x0" in rec and e > 0 else None
                print(json.dumps(dict(s0=s, n=n, delta=d, answer=e.hex(), probes=rec.get("probes"),
                                      open=rec.get("open"), answer_over_x0_xtol=off, cpu=round(t, 3))), flush=True)


if __name__ == "__main__":
    main()
