"""Generate tests/data/bottom_pair_reference.json: the finely split replace-one bound through bot of
tests/test_shuffle_composition.py::test_replace_through_bottom_pair.

GaussianRandomizer(sigma0=8, dim=1), n = 1000, replace, rel_tol 3e-3: for each eps, the minimum over
splits e1 = f eps of the accountant's certified leg values A(e1) + e^{e1} B(eps - e1) (21 even f, then
21 around the best: ``_optimal_split`` of the test module), and the best f. The search costs ~3.7 s of
CPU (252 leg certifications), so the values are stored; the test recomputes the split at the stored f
(two legs per eps) and requires it to match the stored value, so a change of the engine's leg values
shows up as a stale reference.

Also the accountant's privacy profile on the test's grid (``BOTTOM_PAIR_GRID``: 8 distinct |eps|, each a
split search, ~4 s of CPU), which the PLD must dominate; the test recomputes its last point live (one
split search) and requires it to match. Run from the repository root:

    python tests/data/make_bottom_pair_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_shuffle_composition import (  # noqa: E402
    BOTTOM_PAIR_EPS, BOTTOM_PAIR_GRID, _bottom_pair_accountant, _optimal_split)


def main() -> None:
    a = _bottom_pair_accountant()
    rows = []
    for eps in BOTTOM_PAIR_EPS:
        f, v = _optimal_split(a, eps)
        rows.append({"epsilon": eps, "f": f, "value": v})
    profile = [{"epsilon": float(e), "delta": float(d)}
               for e, d in zip(BOTTOM_PAIR_GRID, _bottom_pair_accountant().privacy_profile(BOTTOM_PAIR_GRID))]
    out = HERE / "bottom_pair_reference.json"
    out.write_text(json.dumps({"source": "tests/data/make_bottom_pair_reference.py", "sigma0": 8.0, "n": 1000,
                               "rel_tol": 3e-3, "rows": rows, "profile": profile}, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
