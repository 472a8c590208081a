"""Generate tests/data/krr8_range_levels_reference.json for tests/test_krr8_range_levels.py.

* "ranges": test_range_upper_at_the_range_level_above_every_class_n_1e4: at the eps get_epsilon(1e-6) gave when
  this file was made (n = 1e4 + 1, eps0 = 0.5, 2), the maximum over every class of each range of the test of
  tests/_krr_reference.class_delta_scipy (full-support scipy pmfs, np.convolve) and its class;
* "small_n": test_get_epsilon_against_exact_enumeration_small_n: the 40-digit maximum over every class
  (_exact_max_delta of the test module) and its class at a grid of eps around the answer (the answer,
  answer / (1 + 1e-3) (1 - 1e-9), relative steps of 2.5e-4 from -1.5e-3 to +5e-4).

sharpdp is used only to choose where to look (get_epsilon's answers); the values are the reference functions'.
Run from the repository root (~30 s of CPU):

    python tests/data/make_krr8_range_levels_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import mpmath as mp
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _krr_reference import class_delta_scipy  # noqa: E402
from test_krr8_range_levels import RANGES_N, SMALL_N_CASES, _exact_class_laws, range_list  # noqa: E402

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse  # noqa: E402


def _max_and_class(n: int, eps0: float, eps: float) -> tuple[mp.mpf, int]:
    """_exact_max_delta of the test module with the class attaining it."""
    p, q, laws = _exact_class_laws(n, eps0)
    with mp.workdps(40):
        a = p - mp.e**mp.mpf(eps) * q
        b = mp.e**mp.mpf(eps) * p - q
        N = n - 1
        vals = [mp.fsum(max(a * (U[c - 1] if c >= 1 else 0) - b * (U[c] if c <= N else 0), 0) for c in range(N + 2))
                for U in laws]
        j = max(range(len(vals)), key=lambda i: vals[i])
        return vals[j], j


def main() -> None:
    out: dict = {"source": "tests/data/make_krr8_range_levels_reference.py", "ranges": {}, "small_n": {}}
    n = RANGES_N
    for eps0 in (0.5, 2.0):
        eps = ExactShuffleAccountant(RandomizedResponse(2, eps0), n).get_epsilon(1e-6)
        for j1, j2 in range_list(n):
            d = np.array([class_delta_scipy(n, eps0, j, eps) for j in range(j1, j2 + 1)])
            out["ranges"][f"{eps0!r} {j1} {j2}"] = {"eps": eps, "max": float(d.max()), "argmax": j1 + int(np.argmax(d))}
        print("ranges", eps0, eps, flush=True)
    for n, eps0, target in SMALL_N_CASES:
        er = ExactShuffleAccountant(RandomizedResponse(2, eps0), n).get_epsilon(target)
        pts = sorted({er, er / (1 + 1e-3) * (1 - 1e-9)} | {er * (1 + k * 2.5e-4) for k in range(-6, 3)})
        rows = []
        for x in pts:
            m, j = _max_and_class(n, eps0, x)
            rows.append({"eps": x, "max": mp.nstr(m, 40, min_fixed=1, max_fixed=0), "argmax": j})
        out["small_n"][f"{n} {eps0!r} {target!r}"] = rows
        print("small_n", n, eps0, target, er, flush=True)
    path = HERE / "krr8_range_levels_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
