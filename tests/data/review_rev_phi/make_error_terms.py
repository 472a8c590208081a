"""Offline reference for tests/test_review_rev_phi.py::test_each_error_term_of_the_proof_against_mpmath.

Run from the repository root with the package installed:
    python tests/data/review_rev_phi/make_error_terms.py
Writes error_terms.json: for every third adversarial point a of the test (its _adversarial_points), the
cell k and offset s of the documented algorithm (phi_tail_doc) and the exact series value
S = (Phi(-a) - Phi(-a_k)) / (phi(a_k) s) by mpmath (1400 bits where |s| < 2^-30, where the difference
cancels ~-log2|s| bits, 160 bits elsewhere), printed with 40 significant digits (about 133 bits; the test needs far less than 2^-53 relative).
The test reads S from here, recomputes Phi(-a) at 160 bits for every point, and recomputes S live at
a spread of points (both precisions), which must equal the stored digits.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import mpmath

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from tests.test_review_rev_phi import TABLE, _adversarial_points, phi_tail_doc  # noqa: E402

DIGITS = 40


def s_exact(a: float, k: int, s: float):
    """(Phi(-a) - Phi(-a_k)) / (phi(a_k) s) as the test computes it."""
    with mpmath.workprec(160):
        ak = mpmath.mpf(k) / 128
        pk = mpmath.npdf(ak)
        with mpmath.workprec(1400 if abs(s) < 2.0**-30 else 160):
            return (mpmath.ncdf(-mpmath.mpf(a)) - mpmath.ncdf(-ak)) / (pk * s)


def main() -> None:
    rows = []
    for a in _adversarial_points()[::3].tolist():
        _, _, k, s, _, _, _ = phi_tail_doc(a)
        rows.append([a.hex(), k, s.hex(), None if s == 0.0 else mpmath.nstr(s_exact(a, k, s), DIGITS)])
    head = {"table_sha256": hashlib.sha256(TABLE.read_bytes()).hexdigest(), "digits": DIGITS}
    body = ",\n".join(json.dumps(r) for r in rows)  # one point per line
    text = json.dumps(head)[:-1] + ', "points": [\n' + body + "\n]}\n"
    json.loads(text)
    (Path(__file__).resolve().parent / "error_terms.json").write_text(text)
    print(f"{len(rows)} points written")


if __name__ == "__main__":
    main()
