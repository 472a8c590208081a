"""Generate tests/data/bmg_mc_reference.json: the plain Monte Carlo references of
tests/test_shuffle_accountant.py::test_bmg_monte_carlo, ``bmg_mc`` of that module (10^6 replications, seed 12345,
numpy only) for every case of BMG_MC_CASES: [(mean, se)] per order of the pair, the doubles the test computed live
before (~1 s of CPU at n = 30). The test recomputes the n = 10 case live and requires it to equal the store. Run
from the repository root:

    python tests/data/make_bmg_mc_reference.py
"""

from __future__ import annotations

from _store import DATA as HERE, write_store  # noqa: E402  (puts tests/ on sys.path)

from test_shuffle_accountant import BMG_MC_CASES, bmg_mc  # noqa: E402


def main() -> None:
    out = HERE / "bmg_mc_reference.json"
    rows = {repr(c): bmg_mc(*c) for c in BMG_MC_CASES}
    write_store(out, {"source": "tests/data/make_bmg_mc_reference.py", **rows})


if __name__ == "__main__":
    main()
