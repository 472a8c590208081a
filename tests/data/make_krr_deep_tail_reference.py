"""Generate tests/data/krr_deep_tail_reference.json: the 320-bit class values delta_j(eps) of
tests/test_shuffle_exact_krr_review.py::test_n_max_deep_tail_level.

RandomizedResponse(2, eps0 = 1), n = N_EXACT (4000), eps = 0.5, classes j in {0, n // 2, n - 2, n - 1}
(n - 1 is the worst class of the accountant's tables, 1.41e-155): ``_mp_class`` of the test module (mpmath
at ``_prec(eps0)`` bits), stored with 100 significant digits (more than the 322 bits: the string parses
back to the same mpf at that precision). The middle class costs ~2.7 s of CPU (the other three ~0.15 s
each), so the values are stored; the test recomputes the cheap classes live and requires them to equal
the stored ones, so a change of the reference function shows up as a stale store. Run from the
repository root:

    python tests/data/make_krr_deep_tail_reference.py
"""

from __future__ import annotations

import json
import pathlib
import sys

import mpmath as mp

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from test_shuffle_exact_krr_review import N_EXACT, _mp_class  # noqa: E402

N, EPS0, EPS = N_EXACT, 1.0, 0.5


def main() -> None:
    rows = {str(j): mp.nstr(_mp_class(N, EPS0, EPS, j), 100, min_fixed=1, max_fixed=0)
            for j in sorted({0, N // 2, N - 2, N - 1})}
    out = HERE / "krr_deep_tail_reference.json"
    out.write_text(json.dumps({"source": "tests/data/make_krr_deep_tail_reference.py", "n": N, "epsilon0": EPS0,
                               "epsilon": EPS, "classes": rows}, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
