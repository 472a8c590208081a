"""Generate tests/data/bigjump_mc_cases_reference.json: the conditional Monte Carlo / importance sampling
references (mean, standard error) of tests/test_shuffle_bigjump.py and tests/test_shuffle_bigjump_large_n.py.

* ``cases``: test_bracket_against_conditional_monte_carlo, every (sigma0, n, which) of CASES with the test's
  seed and sample count (``ak_estimate``, or ``is_estimate`` for bot vs x);
* ``production``: test_accountant_uses_the_treatment_at_production_size (600 samples at n = 327 346, seed 3);
* ``n1e8_batches``: the 20 batch means of test_n1e8_heavy_tail_against_conditional_monte_carlo (8 draws each at
  n = 1e8, seed 20261201).

The estimators are the test modules' own functions (independent of the library: the laws from their closed
forms, numpy's Generator with fixed seeds), so the stored doubles are exactly what the tests computed live
before (about 5 s of CPU in all); the tests recompute the cheap cases (n = 100, both estimators) and the first
n = 1e8 batch live and require them to equal the stored values, so a change of an estimator or of numpy's
streams shows up as a stale store. Run from the repository root:

    python tests/data/make_bigjump_mc_cases_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys


HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import test_shuffle_bigjump as B  # noqa: E402
import test_shuffle_bigjump_large_n as L  # noqa: E402


def main() -> None:
    cases = {B.case_key(s0, n, w): list(B.case_mc(s0, n, w)) for s0, n, w in B.CASES}
    production = list(B.production_mc())
    batches = L.n1e8_batches(20)
    out = HERE / "bigjump_mc_cases_reference.json"
    out.write_text(json.dumps({"source": "tests/data/make_bigjump_mc_cases_reference.py", "cases": cases,
                               "production": production, "n1e8_batches": batches}, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
