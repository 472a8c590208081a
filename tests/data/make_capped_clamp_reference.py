"""Generate tests/data/capped_clamp_reference.json: the plain engine with its capped-clamp rule off on the
Gaussian law of tests/test_shuffle_api_edges.py::test_refine_stops_when_the_capped_clamp_dominates
(``capped_clamp_reference`` of that module at its CAPPED_CLAMP_CASE: the upper values of both lattice passes
and of the result, ~3.5 s of CPU), which the test computed live before. Run from the repository root:

    python tests/data/make_capped_clamp_reference.py
"""

from __future__ import annotations

from _store import DATA as HERE, write_store  # noqa: E402  (puts tests/ on sys.path)

from test_shuffle_api_edges import CAPPED_CLAMP_CASE, capped_clamp_reference  # noqa: E402


def main() -> None:
    out = HERE / "capped_clamp_reference.json"
    row = {"source": "tests/data/make_capped_clamp_reference.py", "case": list(CAPPED_CLAMP_CASE),
           **capped_clamp_reference()}
    write_store(out, row)


if __name__ == "__main__":
    main()
