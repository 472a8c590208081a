"""Generate tests/data/smalln_geteps_reference.json: the references of
tests/test_review_smalln.py::test_get_epsilon_is_certified_n2.

For each (sigma0, delta) of GETEPS_N2: the answer eps of ShuffleAccountant(GaussianRandomizer(sigma0, 1), 2,
sampler_charge=False).get_epsilon(delta) (stored as float.hex, the key of the values) and the true D_up at eps
and at 0.995 eps, each the max over both orders of ``_gauss_dup2`` (D_up at n = 2 from the definition: closed-form
stop-loss and one mpmath quadrature, mp.dps = 20), by ``geteps_n2_refs`` of the test module (~1.3 s of CPU per
case). The test uses the stored values only when the library's answer is the stored eps (else it computes them).
Run from the repository root:

    python tests/data/make_smalln_geteps_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import sharpdp.shuffle as sh  # noqa: E402
from test_review_smalln import GETEPS_N2, geteps_n2_refs  # noqa: E402


def main() -> None:
    cases = {}
    for s, delta in GETEPS_N2:
        eps = sh.ShuffleAccountant(sh.GaussianRandomizer(s, 1), 2, sampler_charge=False).get_epsilon(delta)
        ref, ref2 = geteps_n2_refs(s, eps)
        cases[f"{s!r}-{delta!r}"] = {"eps": eps.hex(), "ref": ref, "ref_995": ref2}
    out = HERE / "smalln_geteps_reference.json"
    out.write_text(json.dumps({"source": "tests/data/make_smalln_geteps_reference.py", "cases": cases}, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
