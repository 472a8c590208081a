"""The shift charge of the stored law's rounding on the far-tail path (docs/accountant_tail.md §14):
positive_prob_up bounds P(L_1 + S_{n-1} > 0) (Monte Carlo with a 5-sigma margin), and the lower value it gives
stays below the certified upper value of the law lowered by the rounding and close to its lower value."""

import math

import numpy as np
import pytest

from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws.bmg import bmg_laws


@pytest.mark.parametrize("gamma,sigma0,eps,n", [(0.5, 1.0, 1.0, 4), (0.3, 0.8, 1.0, 100), (0.3, 1.0, 1.0, 40)])
def test_bound_covers_monte_carlo(gamma, sigma0, eps, n):
    g, law = bmg_laws(gamma, sigma0, eps, "zero_out")[0]  # x vs bot: a + (1 - gamma) exp(r Z - r^2/2)
    r = far_tail.certify_bigjump(law, g, n, 1e-2, 1)
    q = far_tail.positive_prob_up(law, g, n, r)
    rng = np.random.default_rng(7)
    M = min(400_000, 10_000_000 // n)
    s = np.zeros(M)
    for j in range(n):
        x = law.a + law.b * np.exp(rng.standard_normal(M) / sigma0 - 0.5 / sigma0**2)
        s += x if j == 0 else x * (rng.random(M) < g)
    p = float(np.mean(s > 0))  # P(L_1 + S_{n-1} > 0): user 1 active, the others with probability g
    assert 0.0 < p < 1.0
    assert q >= p - 5.0 * math.sqrt(p * (1 - p) / M)
    assert q < 1.0  # (the bound is not the trivial one here)


def test_lower_value_against_the_lowered_law():
    # the heavy round of bench/bench_composition.py at eps = 3: the stored law's rounding d is ~1e-5 of the value
    # (the branch of §14 replaces the second run)
    gamma, sigma0, n, eps = 0.04089409561900239, 0.5960134902126553, 10**5, 3.0
    g, law = bmg_laws(gamma, sigma0, eps, "zero_out")[0]
    b = far_tail.try_certify(law, g, n, 1e-2, 1)
    run = law.shifted(up=True)
    r = far_tail.certify_bigjump(run, g, n, 1e-2, 1)
    d = run.moved_by + law.value_error
    assert d > 1e-6 * r.lower  # (this is the branch under test)
    low = far_tail.certify_bigjump(law.shifted(up=False), g, n, 1e-2, 1)
    assert b.lower <= low.upper
    assert b.lower >= low.lower * (1 - 1e-5)
    assert b.lower < r.lower
