"""Generate tests/data/gaussian_n2_reference.json: D_up at n = 2 of the Gaussian randomizer's zero-out
pair x vs bot from its definition (mpmath, 40 digits): ``gaussian_n2_reference`` of tests/test_smalln_jump.py
at the three (sigma0, eps) of its test_gaussian_n2_against_mpmath, which reads them and recomputes one
(the cheapest), requiring it to equal the stored value (the store is current); tests/test_smalln2_decide.py
reads them too (0.25-0.4 s of CPU each). Run from the repository root:

    python tests/data/make_gaussian_n2_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_smalln_jump import GAUSSIAN_N2_CASES, gaussian_n2_reference  # noqa: E402


def main() -> None:
    rows = [{"sigma0": s.hex(), "epsilon": e.hex(), "d_up": gaussian_n2_reference(s, e).hex()}
            for s, e in GAUSSIAN_N2_CASES]
    source = "tests/data/make_gaussian_n2_reference.py (gaussian_n2_reference of tests/test_smalln_jump.py)"
    text = json.dumps({"source": source, "rows": rows}, indent=1) + "\n"
    (HERE / "gaussian_n2_reference.json").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
