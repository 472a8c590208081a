"""Generate tests/data/bigjump_switch_mc_reference.json: the conditional Monte Carlo references (mean, standard
error) of tests/test_shuffle_bigjump_switch.py, ``mc_reference`` of that module for every name of MC_CASES
(``mc_max`` of tests/test_shuffle_bigjump_review.py on the BMG law from its definition, 20,000 samples, fixed
seeds: the doubles the tests computed live before, ~1.3 s of CPU in all). The test of the clamped cap recomputes
its own (the cheapest, ~0.13 s) live and requires it to equal the stored one. Run from the repository root:

    python tests/data/make_bigjump_switch_mc_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_shuffle_bigjump_switch import MC_CASES, mc_reference  # noqa: E402


def main() -> None:
    out = HERE / "bigjump_switch_mc_reference.json"
    rows = {name: list(mc_reference(name)) for name in MC_CASES}
    out.write_text(json.dumps({"source": "tests/data/make_bigjump_switch_mc_reference.py", **rows}, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
