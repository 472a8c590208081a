"""Generate tests/data/bigjump_switch_plain_reference.json: the plain engine's certified bracket
(``certify_law``, rel_tol 1e-2; ~3.6 s of CPU) on the BMG replace law of
tests/test_shuffle_bigjump_switch.py::test_switched_law_against_the_plain_engine (``plain_reference`` of that
module, at its PLAIN_CASE), which the test computed live before. Run from the repository root:

    python tests/data/make_bigjump_switch_plain_reference.py
"""

from __future__ import annotations

from _store import DATA as HERE, write_store  # noqa: E402  (puts tests/ on sys.path)

from test_shuffle_bigjump_switch import PLAIN_CASE, plain_reference  # noqa: E402


def main() -> None:
    out = HERE / "bigjump_switch_plain_reference.json"
    row = {"source": "tests/data/make_bigjump_switch_plain_reference.py", "case": list(PLAIN_CASE),
           "plain": plain_reference()}
    write_store(out, row)


if __name__ == "__main__":
    main()
