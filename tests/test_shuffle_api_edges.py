"""Edges of the accountant, calibration and laws API: bad arguments refused naming them, extreme
valid inputs answered (or refused with the reason) at once, and the refinement's stop at the size
cap (docs/sampling.md §4 for the sampler's charge)."""

from __future__ import annotations

import json
import math

import mpmath as mp
import pytest
from scipy.special import ndtr

import sharpdp.shuffle as SH
import sharpdp.shuffle.accountant.plain as P
from _cli import run as _run
from sharpdp.shuffle.randomizers.bmg import _CHI_UP_LARGE, _bmg_up_variance, bmg_chi_up


# ---------------------------------------------------------------- calibration arguments
@pytest.mark.parametrize("fn,args", [(SH.calibrate_bmg, (100, 1.0, 1e-6, 1)),
                                     (SH.calibrate_gaussian, (100, 1.0, 1e-6))])
@pytest.mark.parametrize("bad", ["a", 1, 0.0, [True]])
def test_calibrate_progress_refused(fn, args, bad):
    with pytest.raises(TypeError, match=r"^progress must be True, False or None"):
        fn(*args, progress=bad)


@pytest.mark.parametrize("fn,args", [(SH.calibrate_bmg, (1000, 1e6, 1e-6, 1)),
                                     (SH.calibrate_gaussian, (1000, 1e6, 1e-6)),
                                     (SH.calibrate_bmg, (1000, 700.5, 1e-6, 1))])
def test_calibrate_epsilon_above_700_refused(fn, args):
    with pytest.raises(ValueError, match=r"^epsilon: .* above 700"):
        fn(*args)


@pytest.mark.parametrize("delta", [5e-324, 1e-300, 1.99e-36])
def test_calibrate_delta_below_sampler_floor(delta):
    # n dim 1e-38 = 2e-36 (n = 100, dim = 2): every certified value includes the sampler's charge
    # (1 + e^eps) n sampler_tv > n dim 1e-38 (BlanketMixedGaussian.sampler_tv's definition)
    assert SH.BlanketMixedGaussian(0.5, 1e-3, 2).sampler_tv > 2 * 1e-38
    with pytest.raises(ValueError, match=r"^delta: .*release sampler"):
        SH.calibrate_bmg(100, 1.0, delta, 2)
    with pytest.raises(ValueError, match=r"^delta: .*release sampler"):
        SH.calibrate_gaussian(200, 1.0, delta)


def test_calibrate_infeasible_above_the_floor_says_why():
    """Just above n 1e-38 the sampler's charge (which grows with sigma0) still exceeds delta at every
    sigma0 searched: the error says where the search stopped and the smallest certified value."""
    with pytest.raises(RuntimeError, match=r"no feasible randomizer found for delta = 2.5e-36: .*sigma0 = "
                                           r"1e\+12 .*smallest certified upper value was .*release sampler"):
        SH.calibrate_gaussian(200, 1.0, 2.5e-36)


def test_calibrate_rounds_too_many_names_rounds():
    with pytest.raises(ValueError, match=r"^rounds: 1000000000 rounds are too many") as info:
        SH.calibrate_bmg(100, 1.0, 1e-6, 1, rounds=10**9, progress=False)
    assert "value_discretization_interval" not in str(info.value)  # not a parameter of calibrate_bmg


# ---------------------------------------------------------------- accountant arguments
def test_accountant_integer_valued_float_n():
    rr = SH.RandomizedResponse(3, 1.0)
    acc = SH.ShuffleAccountant(rr, 1e2)
    assert acc.n == 100 and type(acc.n) is int
    assert acc.get_delta(0.5) == SH.ShuffleAccountant(rr, 100).get_delta(0.5)
    for bad in (1.5, 100.0000001, math.nan, math.inf):
        with pytest.raises(ValueError, match=r"^n must be"):
            SH.ShuffleAccountant(rr, bad)


# ---------------------------------------------------------------- laws
def test_lognormal_negative_b_is_the_decreasing_law():
    """b < 0 is not a scale: L = a + b exp(r Z - r^2/2) decreasing in Z (used by the BMG's laws);
    its mean and distribution match the closed forms. r (the log-scale) must be > 0."""
    law = SH.LognormalLaw(0.0, -1.0, 1.0)
    assert law.mean() == pytest.approx(-1.0, rel=1e-12)
    # P(L < -1) = P(Z > 1/2), P(L > -e^{-1}) = P(Z < -1/2)
    p, err = law.prob_below(-1.0)
    assert abs(p - ndtr(-0.5)) <= err + 1e-15
    q, err = law.prob_above(-math.exp(-1.0))
    assert abs(q - ndtr(-0.5)) <= err + 1e-15
    assert law.support()[1] <= 0.0
    with pytest.raises(ValueError, match=r"\br\b"):
        SH.LognormalLaw(0.0, 1.0, -1.0)


# ---------------------------------------------------------------- BMG indices at huge sigma0
@pytest.mark.parametrize("gamma", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("sigma0", [1e5, 1e160, 1e300])
def test_bmg_chi_lo_huge_sigma0(gamma, sigma0):
    mp.mp.dps = 50
    s = mp.mpf(sigma0)
    ref = mp.sqrt(gamma / ((1 - mp.mpf(gamma)) ** 2 * mp.expm1(1 / s**2)))
    got = SH.BlanketMixedGaussian(gamma, sigma0, 2).chi_lo
    assert abs(got - float(ref)) <= 1e-14 * float(ref)


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9])
def test_bmg_chi_up_large_sigma0(gamma):
    # above the switch: the leading term s / (1 - gamma); at the switch it agrees with the quadrature
    s = _CHI_UP_LARGE
    quad = 1.0 / math.sqrt(max(_bmg_up_variance(gamma, s, 1.0, x) for x in (-1.0, 1.0)))
    assert abs(bmg_chi_up(gamma, s * (1 + 1e-15)) - quad) <= 1e-9 * quad
    assert bmg_chi_up(gamma, 1e300) == pytest.approx(1e300 / (1 - gamma), rel=1e-15)
    if gamma == 0.0:  # chi_chua's series: chi^2 = s^2 - 9/2 + ...
        assert bmg_chi_up(0.0, 1e200) == pytest.approx(SH.gaussian_chi_chua(1e200), rel=1e-15)


def test_cli_account_huge_sigma0(capsys):
    code, out, err = _run(capsys, "account", "--gamma", "0.5", "--sigma0", "1e300", "--n", "100",
                          "--epsilon", "1", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["randomizer"]["chi_lo"] == pytest.approx(math.sqrt(0.5) / 0.5 * 1e300, rel=1e-14)
    assert res["randomizer"]["mse_single"] is None  # d sigma0^2 / (1 - gamma)^2 overflows a double: JSON null
    assert res["delta_upper"] <= 1.0
    code, out, err = _run(capsys, "account", "--gamma", "0.5", "--sigma0", "1e300", "--n", "100", "--epsilon", "1")
    assert code == 0 and "mse_single = inf" in out, err


# ---------------------------------------------------------------- refinement at the size cap
def test_refine_stops_when_the_capped_clamp_dominates(monkeypatch):
    """Gaussian randomizer (heavy-tailed law), n = 1000, eps = 18: the upper clamp is at its cap and
    its term is the whole upper value. One pass is kept; without the rule the next (finer) pass is
    no smaller (its cap is lower), so the kept value is within 1/0.9 of any refinement."""
    gam, law = SH.GaussianRandomizer(1.0, 1).privacy_amplification_laws(18.0)[0]
    passes = []
    orig = P.lattice_pass

    def counting(*a, **k):
        r = orig(*a, **k)
        passes.append(r)
        return r

    monkeypatch.setattr(P, "lattice_pass", counting)
    kept = P.certify_law(law, gam, 1000, 1e-2, 1, max_rounds=1)
    assert len(passes) == 1
    assert passes[0].tail_T > 0.9 * passes[0].upper and kept.upper == passes[0].upper
    monkeypatch.setattr(P, "_CLAMP_BOUND", math.inf)  # the rule off: the finer pass is made
    passes.clear()
    full = P.certify_law(law, gam, 1000, 1e-2, 1, max_rounds=1)
    assert len(passes) == 2
    assert passes[1].upper >= 0.9 * passes[0].upper  # (the finer pass is no better)
    assert full.upper <= kept.upper <= full.upper / 0.9
