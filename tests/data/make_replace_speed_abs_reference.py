"""Generate tests/data/replace_speed_abs_reference.json: the "old" values of
tests/test_replace_speed_abs.py (leg B of each split certified to rel_tol alone: ABS_SHARE = 0 on a fresh
replace-one accountant, rel_tol 1e-2).

For each cell of ``CELLS`` the report's certified bracket (lower, upper) at eps, and the answer of
get_epsilon(1e-6) at sigma0 = 3, n = 1000. They cost ~3 s of CPU together, so they are stored; the test
recomputes the cheapest cell live and requires it to match, so a change of the engine's values shows up as
a stale reference. Run from the repository root:

    python tests/data/make_replace_speed_abs_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_replace_speed_abs import CELLS, DECIDE, _acc  # noqa: E402


def main() -> None:
    reports = []
    for sigma0, n, eps in CELLS:
        r = _acc(sigma0, n, share=0.0).report(eps)
        reports.append({"sigma0": sigma0, "n": n, "epsilon": eps, "lower": r.lower, "upper": r.upper})
    sigma0, n, delta = DECIDE
    e_old = _acc(sigma0, n, share=0.0).get_epsilon(delta)
    out = HERE / "replace_speed_abs_reference.json"
    out.write_text(json.dumps({"source": "tests/data/make_replace_speed_abs_reference.py", "rel_tol": 1e-2,
                               "reports": reports,
                               "get_epsilon": {"sigma0": sigma0, "n": n, "delta": delta, "epsilon": e_old}},
                              indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
