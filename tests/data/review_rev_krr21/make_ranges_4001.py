"""Make ranges_4001.json for tests/test_review_rev_krr21.py::test_ranges_at_n_4001_above_every_class:
`python tests/data/review_rev_krr21/make_ranges_4001.py` (~5 s of CPU).

The reference is the test module's _delta_f64 (scipy pmfs, every class's count law convolved, float64) over all
4001 classes at each eps where get_epsilon(1e-6) evaluated ranges (eps0 = 0.5, 2): the maximum over the classes
and its class, and per evaluated range (j1, mix) the maximum over its classes and its class. sharpdp is used only
to choose where to look (the ranges the search evaluates, recorded as the test records them); no stored value
comes from it. The test takes these values when the search evaluates exactly the stored (eps, j1, mix), else it
computes every class live (1-1.5 s of CPU per eps0), and it recomputes the deciding classes live.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from test_review_rev_krr21 import _delta_f64, _Recorder  # noqa: E402

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse  # noqa: E402


def main() -> None:
    out: dict = {"source": "tests/data/review_rev_krr21/make_ranges_4001.py", "n": 4001, "cases": {}}
    for e0 in (0.5, 2.0):
        with pytest.MonkeyPatch.context() as mp:
            rec = _Recorder(mp)
            ExactShuffleAccountant(RandomizedResponse(2, e0), 4001).get_epsilon(1e-6)
        by_eps: dict[float, list] = {}
        for _, eps, npop, j1, mix, up, *_ in rec.ranges:
            by_eps.setdefault(eps, []).append((j1, mix))
        rows = {}
        for eps, rs in by_eps.items():
            d = np.array([_delta_f64(4001, e0, j, eps) for j in range(4001)])
            ranges = {f"{j1} {mix}": [float(d[j1:j1 + mix + 1].max()), j1 + int(np.argmax(d[j1:j1 + mix + 1]))]
                      for j1, mix in rs}
            rows[eps.hex()] = {"max": float(d.max()), "argmax": int(np.argmax(d)), "ranges": ranges}
            print(e0, eps, len(rs), flush=True)
        out["cases"][repr(e0)] = rows
    path = HERE / "ranges_4001.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
