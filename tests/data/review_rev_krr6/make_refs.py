"""Make refs.json for tests/test_review_rev_krr6.py: `python tests/data/review_rev_krr6/make_refs.py`.

The exact values come from refs.py (mpmath, no sharpdp code). sharpdp is used here only to choose
*where* to look (the eps at which delta ~ 1e-24 or 1e-6, the class a report names, the returned
eps of get_epsilon); every stored value is an independent mpmath evaluation at that point.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time

import mpmath as mp

sys.path.insert(0, os.path.dirname(__file__))
import refs  # noqa: E402

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse  # noqa: E402

E0S = (0.1, 0.5, 1.0, 4.0, 8.0)
SMALL_N = (2, 3, 4, 5, 6, 7, 8, 9, 13, 17, 31, 50)
S = lambda x: mp.nstr(x, 40, strip_zeros=False) if x else "0"  # noqa: E731
out: dict = {"small": [], "class": [], "acc": [], "eps": []}
t0 = time.time()
PARTIAL = os.environ.get("REFS_PARTIAL")  # a file of finished stages to resume from (optional)
if PARTIAL and os.path.exists(PARTIAL):
    with open(PARTIAL) as f:
        out.update(json.load(f))


def stage_done(name: str) -> bool:
    return bool(out[name])


def save_partial() -> None:
    if PARTIAL:
        with open(PARTIAL, "w") as f:
            json.dump(out, f)


def small_eps(e0, n):
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    e24 = acc.get_epsilon(1e-24, xtol=1e-6)
    return [0.0, 1e-300, e0 * 1e-6, e0 / 3, 0.9 * e0, e0 * (1 - 1e-9), math.nextafter(e0, 0.0), e24]


# 1. every class at small n (kernel and accountant): exact delta_j for every j
for e0 in (() if stage_done("small") else E0S):
    for n in SMALL_N:
        laws = refs.small_laws(e0, n)
        for eps in small_eps(e0, n):
            out["small"].append({"e0": e0, "n": n, "eps": eps,
                                 "deltas": [S(d) for d in refs.small_class_deltas(e0, eps, laws)]})
print("small", time.time() - t0, flush=True)
save_partial()

# 2. single classes at n = 1e3 .. 1e5 (kernel): ends, their neighbours, the middle, one more
for e0 in (() if stage_done("class") else E0S):
    for n in (1000, 1003, 10_000, 100_001):
        acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
        e24 = acc.get_epsilon(1e-24)
        e6 = acc.get_epsilon(1e-6)
        N = n - 1
        js = sorted({0, 1, N // 3, N // 2, N - 1, N})
        for eps in sorted({0.0, e0 / 10, e0 / 3, e24, e6} - {e0}):
            for j in js:
                d = refs.class_delta(e0, eps, n, j)
                out["class"].append({"e0": e0, "n": n, "eps": eps, "j": j, "delta": S(d)})
    print("class", e0, time.time() - t0, flush=True)
save_partial()

# 3. get_delta_bounds at n = 1e3 .. 1e5 (tables at 1e3, branch and bound above): exact values of the
# reported class (lower <= it) and of a spread of classes (upper >= each); eps < eps0 (delta = 0 above)
for e0 in (() if stage_done("acc") else E0S):
    for n in (1000, 10_000, 100_000):
        acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
        e24 = acc.get_epsilon(1e-24)
        e6 = acc.get_epsilon(1e-6)
        N = n - 1
        for eps in sorted({0.0, e0 / 3, e24, e6} - {e0}):
            fresh = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
            rep = fresh.report(eps)
            jw = rep.terms["worst_class_j"]
            js = sorted({0, 1, 2, N // 2, N - 2, N - 1, N, jw} | {round(N * k / 8) for k in range(1, 8)}
                        | {min(max(jw + s, 0), N) for s in (-3, -1, 1, 3)})
            vals = {j: S(refs.class_delta(e0, eps, n, j, deep=False)) for j in js}  # (TINY: an upper bound)
            out["acc"].append({"e0": e0, "n": n, "eps": eps, "jw": jw, "deltas": vals})
    print("acc", e0, time.time() - t0, flush=True)
save_partial()

# 4. get_epsilon (fresh accountants): exact max over classes near the returned eps (the classes of
# the largest delta there: every class at n <= 1000 by the 80-digit laws or the tables' ranking)
for e0, n, d in ((0.5, 50, 1e-6), (4.0, 50, 1e-12), (1.0, 1000, 1e-6), (8.0, 1000, 1e-12),
                 (0.1, 10_000, 1e-6), (1.0, 10_000, 1e-24), (4.0, 10_000, 1e-6), (0.5, 100_000, 1e-6),
                 (8.0, 100_000, 1e-12)):
    xtol = 1e-3
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    er = acc.get_epsilon(d, xtol=xtol)
    N = n - 1
    if n <= 1000:  # classes ranked by the tables at er (their brackets are ~1e-8 wide)
        lo_j, up_j = acc._classes.row_brackets(er)
        order = sorted(range(n), key=lambda j: -up_j[j])
        js = sorted(set(order[:4]) | {0, N})
    else:
        rep = ExactShuffleAccountant(RandomizedResponse(2, e0), n).report(er)
        jw = rep.terms["worst_class_j"]
        js = sorted({0, 1, N // 2, N - 1, N, jw} | {min(max(jw + s, 0), N) for s in (-2, 2)})
    grid = sorted({er, er / (1 + xtol), er * (1 - xtol / 2), er * (1 - xtol / 8), er * (1 - xtol / 32),
                   er * (1 - xtol / 128)})
    pts = []
    for eps in grid:
        pts.append({"eps": eps, "max": S(max(refs.class_delta(e0, eps, n, j, deep=False) for j in js))})
    out["eps"].append({"e0": e0, "n": n, "d": d, "xtol": xtol, "eps_made": er, "js": js, "points": pts})
    print("eps", e0, n, d, time.time() - t0, flush=True)

with open(os.path.join(os.path.dirname(__file__), "refs.json"), "w") as f:
    json.dump(out, f)
print("done", time.time() - t0)
