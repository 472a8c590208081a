"""The far-tail treatment's choices of speed (docs/accountant_tail.md §8) against the slower choices
they replace and an independent reference: the power step's accurate DFT run on demand only, and the
coarser first step where the jump term makes the value. Both brackets are certified, so they must
intersect, each must contain the conditional Monte Carlo value (4.5 standard errors), and each must
meet the accuracy target."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail as _bigjump
from sharpdp.shuffle.accountant import jump
from sharpdp.shuffle.accountant import limits as A
from sharpdp.shuffle.laws import laws_for

from test_shuffle_bigjump_review import Z_MC, mc_max, ref_bmg, ref_gauss


def _check(new, old, mean, se):
    assert new.lower <= old.upper and old.lower <= new.upper, (new, old)
    for r in (new, old):
        assert r.lower > 0 and r.upper - r.lower <= 1e-2 * r.lower, r
        assert r.upper >= mean - Z_MC * se and r.lower <= mean + Z_MC * se, (r.lower, r.upper, mean, se)


@pytest.mark.slow
def test_accurate_dft_on_demand_bmg_n100(monkeypatch):
    """BMG(0.0646, 0.561) x vs bot, eps = 8, n = 100 (calibrate_bmg's evaluation): the jump term's FFTs
    without the accurate DFT against the same FFTs with it always."""
    eps, n = 8.0, 100
    g, law = laws_for(BlanketMixedGaussian(0.0646, 0.561, 1), eps, "zero_out")[0]
    g = float(g)
    assert _bigjump.applicable(law, n, 1e-2, g)
    new = _bigjump.certify_bigjump(law, g, n, 1e-2, 1)
    full = jump._fft_law
    monkeypatch.setattr(jump, "_fft_law", lambda *a: full(*a[:-1], A.DFT_WORK))
    old = _bigjump.certify_bigjump(law, g, n, 1e-2, 1)
    gr, ref = ref_bmg(0.0646, 0.561, eps, "x_bot")
    mean, se = mc_max(ref, gr, n, 40000, np.random.default_rng(5))
    _check(new, old, mean, se)


@pytest.mark.slow
def test_coarser_first_step_gaussian_n1e4(monkeypatch):
    """Gaussian randomizer sigma0 = 0.6957646, eps = 8, n = 1e4 (the jump term makes the value): the first
    step sqrt((n - 1) gamma) sd / 256 against sqrt((n - 1) gamma) sd / 4096."""
    eps, n, s0 = 8.0, 10**4, 0.6957646
    g, law = laws_for(GaussianRandomizer(s0, 1), eps, "zero_out")[0]
    g = float(g)
    assert _bigjump.applicable(law, n, 1e-2, g)
    closed = _bigjump.certify_bigjump(law, g, n, 1e-2, 1)  # the closed form of docs/accountant_tail.md §23
    assert closed.N == 0 and 0 < closed.lower <= closed.upper <= closed.lower * (1 + 1e-2)
    assert closed.lower <= GAUSS_N1E4_MC[0] + Z_MC * GAUSS_N1E4_MC[1]
    assert closed.upper >= GAUSS_N1E4_MC[0] - Z_MC * GAUSS_N1E4_MC[1]  # (the conditional Monte Carlo below)
    monkeypatch.setattr(_bigjump.concentrated, "certify", lambda *a, **k: None)  # the FFT treatment, under test here
    new = _bigjump.certify_bigjump(law, g, n, 1e-2, 1)
    monkeypatch.setattr(_bigjump, "_normal_value", lambda *a: float("inf"))  # the former first step
    old = _bigjump.certify_bigjump(law, g, n, 1e-2, 1)
    assert new.h > old.h
    mean, se = GAUSS_N1E4_MC  # mc_max(ref, gr, n, 20000, np.random.default_rng(7)): stored, ~3.5 s of CPU
    gr, ref = ref_gauss(s0, eps, "x_bot")
    live, live_se = mc_max(ref, gr, n, 2000, np.random.default_rng(8))  # the stored value is current
    assert abs(live - mean) <= Z_MC * np.hypot(live_se, se), (live, live_se, mean, se)
    _check(new, old, mean, se)


# test_coarser_first_step_gaussian_n1e4: conditional Monte Carlo (mean, standard error) with 20,000 samples,
# seed 7 (printed by tests/data/make_bigjump_mc_reference.py)
GAUSS_N1E4_MC = (9.96414646049219e-07, 2.8468320442799003e-10)
