"""Generate tests/data/smalln_jump_reference.json: exact D_up of two finite laws at n = 500 (and 30).

D_up = sum_j C(n-1, j) g^j (1-g)^(n-1-j) E[(S_{j+1})_+]/(j+1) of a finite law (values, probs) with
blanket mass g, by exact convolution in Fractions: ``_exact_dup`` of tests/test_review_smalln.py, the
reference of its ``test_finite_bracket_at_jump_n_max`` (n = JUMP_N_MAX = 500 costs ~11 s of CPU there,
so the values are stored; the n = 30 rows are recomputed by the test and must match exactly). Stored
as exact fractions "numerator/denominator". Run from the repository root:

    python tests/data/make_smalln_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_review_smalln import JUMP_N_MAX, JUMP_N_MAX_CASES, _exact_dup  # noqa: E402

CHECK_N = 30  # rows recomputed at test time


def main() -> None:
    rows = []
    for vals, probs, gamma in JUMP_N_MAX_CASES:
        for n in (JUMP_N_MAX, CHECK_N):
            d = _exact_dup(vals, probs, gamma, n)
            rows.append({"values": vals, "probs": probs, "gamma": gamma, "n": n,
                         "dup": f"{d.numerator}/{d.denominator}"})
    out = HERE / "smalln_jump_reference.json"
    out.write_text(json.dumps({"source": "tests/data/make_smalln_reference.py", "rows": rows}, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
