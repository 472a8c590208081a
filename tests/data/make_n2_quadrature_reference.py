"""Generate tests/data/n2_quadrature_reference.json: the references of
tests/test_shuffle_accountant_edges.py::test_n2_against_quadrature, ``n2_reference`` of that module (D_up of the
BMG at n = 2 by the mpmath quadrature of tests/_bmg_reference.py, 25 digits, rounded to a double) for every case of
N2_CASES, ~1.9 s of CPU in all. The test recomputes the last case (0.3 s) and requires it to equal the store.
Run from the repository root:

    python tests/data/make_n2_quadrature_reference.py
"""

from __future__ import annotations

from _store import DATA as HERE, write_store  # noqa: E402  (puts tests/ on sys.path)

from test_shuffle_accountant_edges import N2_CASES, n2_reference  # noqa: E402


def main() -> None:
    out = HERE / "n2_quadrature_reference.json"
    rows = {repr(c): n2_reference(*c) for c in N2_CASES}
    write_store(out, {"source": "tests/data/make_n2_quadrature_reference.py", **rows})


if __name__ == "__main__":
    main()
