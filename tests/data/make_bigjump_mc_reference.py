"""Print GAUSS_N1E4_MC of tests/test_shuffle_bigjump_speed_choices.py: the conditional Monte Carlo
reference (mean, standard error) of test_coarser_first_step_gaussian_n1e4.

GaussianRandomizer sigma0 = 0.6957646, eps = 8, x vs bot, n = 1e4: ``mc_max`` of
tests/test_shuffle_bigjump_review.py on ``ref_gauss(0.6957646, 8.0, "x_bot")`` (the law from its
closed form, independent of the library's laws) with 20,000 samples and seed 7, about 3.5 s of CPU
(the others' sum needs ~3e7 draws), so the value is stored; the test recomputes a 2,000-sample
estimate (another seed) live and requires the stored mean within 4.5 standard errors of it, so a
change of the reference shows up as a stale value. Run from the repository root:

    python tests/data/make_bigjump_mc_reference.py
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from test_shuffle_bigjump_review import mc_max, ref_gauss  # noqa: E402

if __name__ == "__main__":
    gr, ref = ref_gauss(0.6957646, 8.0, "x_bot")
    mean, se = mc_max(ref, gr, 10**4, 20000, np.random.default_rng(7))
    print(f"GAUSS_N1E4_MC = ({mean!r}, {se!r})")
