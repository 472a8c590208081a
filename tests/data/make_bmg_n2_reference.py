"""Generate tests/data/bmg_n2_reference.json: D_up at n = 2 of the blanket-mixed Gaussian from the mpmath
reference of tests/test_shuffle_accountant_edges.py (25 digits, rounded to a double; ``bmg_n2_reference`` of
tests/test_smalln_jump.py) at every case of its BMG_N2_CASES (0.3-0.6 s of CPU each), keyed by the case's repr,
values in float.hex. test_bmg_n2_two_user_quadrature_against_mpmath reads them and recomputes the cheapest case,
requiring it to equal the stored value (the store is current). Run from the repository root:

    python tests/data/make_bmg_n2_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_smalln_jump import BMG_N2_CASES, bmg_n2_reference  # noqa: E402


def main() -> None:
    rows = {repr(c): bmg_n2_reference(*c).hex() for c in BMG_N2_CASES}
    text = json.dumps({"source": "tests/data/make_bmg_n2_reference.py (bmg_n2_reference of tests/test_smalln_jump.py)",
                       **rows}, indent=1) + "\n"
    (HERE / "bmg_n2_reference.json").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
