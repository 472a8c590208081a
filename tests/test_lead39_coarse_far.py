"""docs/accountant_tail.md §54.5: §54.4's coarser first run only where the one-jump estimate is >= COARSE_FAR_MIN."""
from __future__ import annotations

import pytest

from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant.far_tail_keep import far_factor
from sharpdp.shuffle.laws import laws_for


def _factor(randomizer, n: int, eps: float) -> float:
    gamma, law = laws_for(randomizer, eps, "zero_out")[0]
    return far_factor(law, float(gamma), n)


@pytest.mark.parametrize("randomizer, n, eps", [(GaussianRandomizer(1.0, 1), 10**8, 0.01),
                                                (BlanketMixedGaussian(0.0202, 0.456, 1), 10**8, 0.1)])
def test_small_one_jump_estimate_keeps_the_first_run(randomizer, n, eps, monkeypatch):
    """The two cells where the 16x start missed after §55 (one-jump estimates 4e-10, 1e-6): factor 1; with the gate
    at 0 (§54.4 as built) the body's normal estimate alone chose 4."""
    assert _factor(randomizer, n, eps) == 1.0
    switch(monkeypatch, "COARSE_FAR_MIN", 0.0)
    assert _factor(randomizer, n, eps) == 4.0


@pytest.mark.parametrize("n, eps", [(10**8, 1.0), (10**7, 2.0), (10**9, 0.5)])
def test_large_one_jump_estimate_keeps_the_coarser_start(n, eps):
    """GaussianRandomizer(0.5)'s cells where §54.4 gains (one-jump estimates 5.7e-4 to 3.7e-3): factor 4 still."""
    assert _factor(GaussianRandomizer(0.5, 1), n, eps) == 4.0
