"""Generate tests/data/krr_large_every_class_reference.json: the scipy reference over EVERY class at n = N_EXACT + 1
(4001) of tests/test_review_krr_large.py, for the tests whose parameters are fixed:

* test_bracket_contains_the_max_over_every_class (three (eps0, eps)): max_j delta_j(eps), its class, and every
  class whose value is >= 0.9 of the maximum (the class a report names must reach its lower value, within
  rel_tol = 1e-2 of the maximum, so it is among these: a class not stored fails that check, as it would live);
* test_range_bound_against_every_class_of_the_range (n = 1200 .. 2000): the class of the maximum and the
  maximum over each range of the test (with its class);
* test_get_epsilon_certificate_against_every_class (four (eps0, d, xtol)): max_j delta_j and its class at a grid
  of eps around the answer get_epsilon gave when this file was made (the answer, answer / (1 + xtol), and steps
  of xtol / 4 from -1.5 xtol to +0.5 xtol): each delta_j is non-increasing in eps, so a stored point p <= answer
  with max <= d certifies the answer over every class, and a stored point q >= answer / (1 + xtol) with max > d
  shows some class above d there.

The values are ``_ref_all`` of the test module (scipy pmfs, every class's count law convolved and summed term by
term: 1.2-3.2 s of CPU per eps0 for the laws). sharpdp is used only to choose where to look (get_epsilon's answer),
never for a stored value. The tests recompute a few classes live (the stored maxima's classes, the ends) and
require them to equal the stored values to 1e-12 relative, so a changed reference function shows up as a stale
store. Run from the repository root (~25 s of CPU):

    python tests/data/make_krr_large_every_class_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_review_krr_large import N_EXACT, _ALL_LAWS, _ref_all, range_bound_ranges  # noqa: E402

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse  # noqa: E402

N = N_EXACT + 1
BRACKET_CASES = [(4.0, 0.3), (0.3, 0.1), (30.0, 10.0)]
EPSILON_CASES = [(4.0, 4.3e-4, 1e-6), (1.0, 1e-300, 1e-3), (0.3, 1e-6, 1e-3), (30.0, 1e-9, 1e-3)]
RANGE_CASES = [(4.0, 1500, 0.3), (0.3, 2000, 0.05), (1.0, 1200, 0.0)]


def main() -> None:
    out: dict = {"source": "tests/data/make_krr_large_every_class_reference.py", "n": N, "bracket": [],
                 "epsilon": [], "ranges": []}
    for e0, n, eps in RANGE_CASES:  # test_range_bound_against_every_class_of_the_range: each range's maximum
        ref = _ref_all(e0, n, eps)
        jm = int(np.argmax(ref))
        rows = {f"{j1} {j2}": [float(ref[j1:j2 + 1].max()), j1 + int(np.argmax(ref[j1:j2 + 1]))]
                for j1, j2 in range_bound_ranges(n, jm)}
        out["ranges"].append({"e0": e0, "n": n, "eps": eps, "argmax": jm, "ranges": rows})
        print("ranges", e0, n, eps, jm, flush=True)
    for e0, eps in BRACKET_CASES:
        ref = _ref_all(e0, N, eps)
        top = float(ref.max())
        keep = {str(j): float(ref[j]) for j in np.flatnonzero(ref >= 0.9 * top).tolist()}
        out["bracket"].append({"e0": e0, "eps": eps, "max": top, "argmax": int(np.argmax(ref)), "classes": keep})
        print("bracket", e0, eps, top, len(keep), flush=True)
    for e0, d, xtol in EPSILON_CASES:
        er = ExactShuffleAccountant(RandomizedResponse(2, e0), N).get_epsilon(d, xtol=xtol)
        pts = sorted({er, er / (1 + xtol)} | {er * (1 + k * xtol / 4) for k in range(-6, 3)})
        pts = [p for p in pts if 0.0 <= p < e0]
        rows = []
        for p in pts:
            ref = _ref_all(e0, N, p)
            rows.append({"eps": p, "max": float(ref.max()), "argmax": int(np.argmax(ref))})
        out["epsilon"].append({"e0": e0, "d": d, "xtol": xtol, "eps_made": er, "points": rows})
        print("epsilon", e0, d, xtol, er, flush=True)
        _ALL_LAWS.clear()
    path = HERE / "krr_large_every_class_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
