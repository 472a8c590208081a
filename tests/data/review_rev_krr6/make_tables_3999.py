"""Make tables_3999.json for tests/test_review_rev_krr6.py::test_get_epsilon_against_fresh_tables at n = 3999:
`python tests/data/review_rev_krr6/make_tables_3999.py` (~10 s of CPU).

The reference is a fresh ExactShuffleAccountant's all-class tables (the numpy path of docs/sharp_krr.md §4.8:
independent windows, log sums; not the C++ class kernel that get_epsilon's branch and bound runs), evaluated
offline at a grid of eps around the answer get_epsilon gave when this file was made: the answer itself, the
point answer / (1 + 1e-3) (1 - 1e-12) that the test needs, and relative steps of 1e-4 from -1.4e-3 to +4e-4
(so a slightly moved answer still finds stored points on both sides). The test uses these points through the
monotonicity of the exact delta in eps: a stored point p <= answer with tables upper(p) <= d certifies the
answer; a stored point q in [answer / (1 + xtol) (1 - 1e-12), answer) with tables lower(q) > d shows the true
eps above answer / (1 + xtol). Building the n = 3999 tables costs 0.4-1.5 s of CPU per eps0.
"""

from __future__ import annotations

import json
import os

import numpy as np

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse

E0S = (0.1, 0.5, 1.0, 4.0, 8.0)
DELTAS = (1e-3, 1e-9, 1e-20)
N = 3999
XTOL = 1e-3

out = []
for e0 in E0S:
    tab = ExactShuffleAccountant(RandomizedResponse(2, e0), N)
    for d in DELTAS:
        er = ExactShuffleAccountant(RandomizedResponse(2, e0), N).get_epsilon(d)
        pts = sorted({er, er / (1 + XTOL) * (1 - 1e-12)} | {er * (1 + k * 1e-4) for k in range(-14, 5)})
        pts = [p for p in pts if 0.0 <= p <= e0]
        lo, up = tab.get_delta_bounds(np.array(pts))
        out.append({"e0": e0, "d": d, "eps_made": er,
                    "points": [{"eps": p, "lower": float(a), "upper": float(b)} for p, a, b in zip(pts, lo, up)]})
        print(e0, d, er, flush=True)
with open(os.path.join(os.path.dirname(__file__), "tables_3999.json"), "w") as f:
    json.dump({"n": N, "xtol": XTOL, "cases": out}, f, indent=1)
