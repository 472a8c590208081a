"""Generate tests/data/exact_krr_scipy_reference.json for tests/test_shuffle_exact_krr.py::test_brute_force_every_class_scipy.

For each (n, eps0, eps) of the test: ``_scipy_threshold_form`` of the test module over every class (scipy pmfs, FFT
convolution, the threshold form of docs/sharp_krr.md §3; no sharpdp code), and stored: the maximum, its class, and
the classes the test reads (0, 1, n // 2, n - 1, the maximum's mirror n - 1 - j, and every class whose value is
within 1e-6 relative of the maximum: the class a report names must be one of these to pass the test's 1e-7
comparison). Run from the repository root (~3 s of CPU):

    python tests/data/make_exact_krr_scipy_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_shuffle_exact_krr import _scipy_threshold_form  # noqa: E402

CASES = [(1000, 1.0, 0.1), (1000, 4.0, 1.2), (2000, 1.0, 0.06)]


def main() -> None:
    out: dict = {"source": "tests/data/make_exact_krr_scipy_reference.py", "cases": []}
    for n, e0, eps in CASES:
        ref = _scipy_threshold_form(n, e0, eps)
        top, j = float(ref.max()), int(np.argmax(ref))
        keep = {0, 1, n // 2, n - 1, j, n - 1 - j} | set(np.flatnonzero(ref >= top * (1 - 1e-6)).tolist())
        out["cases"].append({"n": n, "e0": e0, "eps": eps, "max": top, "argmax": j,
                             "classes": {str(k): float(ref[k]) for k in sorted(keep)}})
        print(n, e0, eps, top, j, len(keep), flush=True)
    path = HERE / "exact_krr_scipy_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
