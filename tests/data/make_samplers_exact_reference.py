"""Generate tests/data/samplers_exact_reference.json for tests/test_samplers_exact.py::test_table_entries_within_2_pow_minus_127_of_mpmath.

For s = 294.4 and 460 (the large scales): the number of entries J and the sha256 (entries_digest) of the 60-digit
mpmath reference rounded to integers, nint(2^128 erf((j + 1/2) / (s sqrt 2))) for j < J, J the smallest
magnitude with 1 - erf((J + 1/2) / (s sqrt 2)) <= 1e-38 (the test checks J's minimality live). No sharpdp code.
Run from the repository root (~1.5 s of CPU):

    python tests/data/make_samplers_exact_reference.py
"""

from __future__ import annotations

import mpmath

from _store import DATA as HERE, write_store  # noqa: E402  (puts tests/ on sys.path)

from test_samplers_exact import _cdf60, entries_digest  # noqa: E402

SCALES = (294.4, 460.0)


def main() -> None:
    out: dict = {"source": "tests/data/make_samplers_exact_reference.py", "scales": {}}
    for s in SCALES:
        with mpmath.workdps(60):
            J = 0
            while 1 - _cdf60(s, J) > mpmath.mpf("1e-38"):
                J += 1
            ref = [int(mpmath.nint(_cdf60(s, j) * mpmath.mpf(2) ** 128)) for j in range(J)]
        out["scales"][repr(s)] = {"size": J, "sha256": entries_digest(ref)}
        print(s, J, flush=True)
    write_store(HERE / "samplers_exact_reference.json", out)


if __name__ == "__main__":
    main()
