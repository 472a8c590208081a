"""Edges of the accountant, calibration and laws API: bad arguments refused naming them, extreme
valid inputs answered (or refused with the reason) at once, and the refinement's stop at the size
cap (docs/sampling.md §4 for the sampler's charge)."""

from __future__ import annotations

import json
import math
import pathlib

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr

import sharpdp.shuffle as SH
import sharpdp.shuffle.accountant.plain as P
from sharpdp.shuffle.accountant import limits
from _cli import run as _run
from _main_floats34 import machine_same, switch
from sharpdp.shuffle.accountant.driver import certify, upper_value
from sharpdp.shuffle.randomizers.bmg import (_CHI_UP_LARGE, _LOG_UNDERFLOW, _bmg_up_variance, _log_chi_up_bound,
                                            bmg_chi_up)
from test_shuffle_epsilon_speed import _exact_dup


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
    """Just above the refusal floor (1 + e^eps) n (3381 2^-128 + 1e-38) = 7.396e-33 (docs/calibration.md §5; it was
    (1 + e^eps) n 1e-38 = 7.44e-36 before the noise table's rounding term was counted) the sampler's charge (which
    grows with sigma0) still exceeds delta at every sigma0 searched: the error says where the search stopped and the
    smallest certified value; just below it, a ValueError naming delta before any search."""
    with pytest.raises(RuntimeError, match=r"no feasible randomizer found for delta = 8e-33: .*sigma0 = "
                                           r"1e\+12 .*smallest certified upper value was .*release sampler"):
        SH.calibrate_gaussian(200, 1.0, 8e-33)
    with pytest.raises(ValueError, match=r"^delta: 7e-33 is at or below 7.4e-33"):
        SH.calibrate_gaussian(200, 1.0, 7e-33)


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
CAPPED_CLAMP_CASE = (1.0, 18.0, 1000, 1e-2)  # (sigma0, eps, n, rel_tol) of the test below


def capped_clamp_reference() -> dict:
    """The plain engine with the capped-clamp rule off (``_CLAMP_BOUND`` = inf) on CAPPED_CLAMP_CASE's
    Gaussian law: the upper values of its two passes and of its result (~3.5 s of CPU; stored by
    tests/data/make_capped_clamp_reference.py)."""
    sigma0, eps, n, rel_tol = CAPPED_CLAMP_CASE
    gam, law = SH.GaussianRandomizer(sigma0, 1).privacy_amplification_laws(eps)[0]
    passes = []
    orig = P.lattice_pass

    def counting(*a, **k):
        passes.append(orig(*a, **k))
        return passes[-1]

    with pytest.MonkeyPatch.context() as mp_:
        mp_.setattr(P, "lattice_pass", counting)
        mp_.setattr(P, "_CLAMP_BOUND", math.inf)
        mp_.setattr(limits, "END_ATOM_SNAP", False)  # (as the test that reads it: the stored floats are of that rule)
        full = P.certify_law(law, gam, n, rel_tol, 1, max_rounds=1)
    return {"pass_uppers": [r.upper for r in passes], "full_upper": full.upper}


class _SecondPass(Exception):
    """Raised instead of making a second lattice pass."""


def test_refine_stops_when_the_capped_clamp_dominates(monkeypatch):
    """Gaussian randomizer (heavy-tailed law), n = 1000, eps = 18: the upper clamp is at its cap and
    its term is the whole upper value. One pass is kept; without the rule the next (finer) pass is
    asked for, and it is no smaller (its cap is lower), so the kept value is within 1/0.9 of any
    refinement. The run without the rule (~3.5 s of CPU) is stored (tests/data/make_capped_clamp_reference.py):
    here it is only started, to see the second pass asked for, and its first pass must equal the stored one."""
    sigma0, eps, n, rel_tol = CAPPED_CLAMP_CASE
    # (**) session 35, mid35: main's steps on the Gaussian randomizer's sum law (the stored run's passes are theirs;
    # docs/accountant_tail.md §46.2's end-atom steps end on another certified value)
    switch(monkeypatch, "END_ATOM_SNAP", False)
    gam, law = SH.GaussianRandomizer(sigma0, 1).privacy_amplification_laws(eps)[0]
    stored = json.loads((pathlib.Path(__file__).resolve().parent / "data"
                         / "capped_clamp_reference.json").read_text())
    assert tuple(stored["case"]) == CAPPED_CLAMP_CASE
    passes = []
    orig = P.lattice_pass
    done = {}  # a pass is a deterministic function of its arguments: the second run's first pass (the same
    # arguments as the first run's) is not recomputed

    def counting(law_, *a, **k):
        key = (id(law_), a, tuple(sorted(k.items())))
        if key not in done:
            if done:  # a second, different pass (the rule is off): not made
                raise _SecondPass
            done[key] = orig(law_, *a, **k)
        passes.append(done[key])
        return done[key]

    monkeypatch.setattr(P, "lattice_pass", counting)
    kept = P.certify_law(law, gam, n, rel_tol, 1, max_rounds=1)
    assert len(passes) == 1
    assert passes[0].tail_T > 0.9 * passes[0].upper and kept.upper == passes[0].upper
    monkeypatch.setattr(P, "_CLAMP_BOUND", math.inf)  # the rule off: the finer pass is asked for
    passes.clear()
    with pytest.raises(_SecondPass):
        P.certify_law(law, gam, n, rel_tol, 1, max_rounds=1)
    assert len(passes) == 1  # (the first pass again, then a different one)
    first, second = stored["pass_uppers"]
    assert machine_same(first, kept.upper)  # (**) session 42, lead: MACHINE_REL; the stored run's first pass is this one (the store is current)
    assert second >= 0.9 * first  # (the finer pass is no better)
    assert stored["full_upper"] <= kept.upper <= stored["full_upper"] / 0.9


# ---------------------------------------------------------------- BMG indices at tiny sigma0
@pytest.mark.parametrize("gamma", [0.0, 0.3, 0.9, 1e-300])
@pytest.mark.parametrize("sigma0", [5e-324, 1e-300, 1e-160, 1e-10, 0.01, 0.025])
def test_bmg_indices_tiny_sigma0_underflow_to_zero(gamma, sigma0):
    """Below sigma0 ~ 0.025 both indices are below half the smallest subnormal: 0.0 (no
    ZeroDivisionError / OverflowError); the closed-form bound says so."""
    assert _log_chi_up_bound(gamma, sigma0) < _LOG_UNDERFLOW < math.log(5e-324) - math.log(2.0)
    assert bmg_chi_up(gamma, sigma0) == 0.0
    if gamma > 0.0:
        b = SH.BlanketMixedGaussian(gamma, sigma0, 1)
        assert b.chi_lo == 0.0 and b.chi_up == 0.0


@pytest.mark.parametrize("gamma", [0.3, 0.9])
@pytest.mark.parametrize("sigma0", [0.03, 0.04, 0.05, 0.15])
def test_bmg_chi_up_small_sigma0_against_chi_lo(gamma, sigma0):
    """chi_lo <= chi_up always (the denominator gamma phi_0 + (1 - gamma) phi_x >= gamma phi_0), and at
    small sigma0 the phi_x term is negligible where the integrand lives (e^{-5/(2 sigma0^2)} relative at
    the bump y = 2), so chi_up equals the closed form chi_lo to many digits (where the quadrature
    formerly overflowed: sigma0 < ~0.04); both below the closed-form bound."""
    up = bmg_chi_up(gamma, sigma0)
    lo = SH.BlanketMixedGaussian(gamma, sigma0, 1).chi_lo
    assert 0.0 < lo <= up * (1 + 1e-12)
    rel = 1e-11 if sigma0 <= 0.05 else 1e-2
    assert up <= lo * (1 + rel)
    assert math.log(up) <= _log_chi_up_bound(gamma, sigma0)


@pytest.mark.parametrize("sigma0", [0.06, 0.07, 0.1, 0.5])
def test_bmg_chi_up_gamma0_is_chi_chua_at_small_sigma0(sigma0):
    # gamma = 0: the integrals are the closed form V = e^{4a} - 2 e^{2a} + e^{a} (a = 1/sigma0^2)
    assert bmg_chi_up(0.0, sigma0) == pytest.approx(SH.gaussian_chi_chua(sigma0), rel=1e-12)


# ---------------------------------------------------------------- few active users (driver)
def _finite_law(seed):
    rng = np.random.default_rng(seed)
    values = np.concatenate([rng.uniform(-3.0, -0.1, 3), rng.uniform(0.1, 2.0, 3)])
    return SH.FiniteLaw(values, rng.dirichlet(np.ones(values.size)))


@pytest.mark.parametrize("n,gamma", [(2, 0.004), (2, 1e-6), (3, 0.002), (5, 1e-4)])
def test_few_active_users_bracket_holds_brute_force(n, gamma):
    """(n - 1) gamma <~ rel_tol: (1 - gamma)^(n-1) E[L_+] <= D_up <= E[L_+] is the bracket (both modes);
    it contains D_up by enumeration and meets the relative target."""
    law = _finite_law(n)
    exact = _exact_dup(law.values, law.probs, gamma, n)
    r = certify(law, gamma, n, 1e-2, 1)
    assert r.terms["note"].startswith("few active users")
    assert r.lower <= exact <= r.upper and r.upper - r.lower <= 1e-2 * r.lower
    assert upper_value(law, gamma, n, 1e-2, 1, 1e-6, 0.125) >= exact


def test_few_active_users_not_used_when_the_bracket_is_wide():
    law = _finite_law(0)
    r = certify(law, 0.05, 3, 1e-2, 1)  # (1 - 0.05)^2 = 0.9: not within 1 %
    assert not r.terms.get("note", "").startswith("few active users")
    exact = _exact_dup(law.values, law.probs, 0.05, 3)
    assert r.lower <= exact <= r.upper


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 3), log_gamma=st.floats(-12.0, math.log(0.004)))
def test_few_active_users_property(seed, n, log_gamma):
    gamma = math.exp(log_gamma)
    law = _finite_law(seed)
    exact = _exact_dup(law.values, law.probs, gamma, n)
    r = certify(law, gamma, n, 1e-2, 1)
    assert r.lower <= exact * (1 + 1e-12) and exact <= r.upper * (1 + 1e-12)


def test_calibrate_gaussian_two_users_large_epsilon():
    """calibrate_gaussian(2, 50, 1e-6) took ~57 s (every evaluation a heavy-tailed lattice
    refinement). At n = 2 the blanket weight 2 Phibar(1/sigma0) ~ 3e-3 makes the closed-form bracket
    meet the target: a certified sigma0 at once, and a 1 % smaller one is certified infeasible."""
    rep = SH.calibrate_gaussian_report(2, 50.0, 1e-6)
    lo, up = rep.delta_bounds
    assert up <= 1e-6 and lo >= 0.97e-6
    s = rep.randomizer.sigma0
    assert SH.ShuffleAccountant(SH.GaussianRandomizer(s, 1), 2).get_delta(50.0) <= 1e-6
    lo_smaller, _ = SH.ShuffleAccountant(SH.GaussianRandomizer(0.99 * s, 1), 2).get_delta_bounds(50.0)
    assert lo_smaller > 1e-6


# ---------------------------------------------------------------- replace through bot: the sampler's floor
def test_via_bottom_sampler_floor_below_reported_values():
    """ViaBottom.sampler_floor: every reported upper value at eps is at least (3 + e^{min(eps, eps_tau)}) tau
    (the legs' sampler charges); where the mechanism's terms are negligible (eps = 10, 36) it is attained."""
    acc = SH.ShuffleAccountant(SH.GaussianRandomizer(4.0, 1), 100, adjacency="replace")
    vb, zo = acc._bottom, acc._bottom.bottom
    tau, et = zo.sampler_tau, zo.eps_tau
    assert tau > 0.0 and 30.0 < et < 60.0
    for e in (3.0, 10.0, 36.0, 60.0, 700.0):
        floor = vb.sampler_floor(e)
        assert floor == pytest.approx(tau * (3.0 + math.exp(min(e, et))), rel=1e-9)
        assert floor <= acc.report(e).upper
    assert acc.report(36.0).upper <= 1.001 * vb.sampler_floor(36.0)
    # above eps_tau the value at eps_tau (at the floor) is reported, not the split search at eps (which
    # put e1 >= 0.35 eps and reported ~1e6 times the floor at eps = 60)
    for e in (60.0, 700.0):
        r = acc.report(e)
        assert r.upper <= (1 + 1e-2) * vb.sampler_floor(e) and "eps_tau" in r.terms["note"]
    no_charge = SH.ShuffleAccountant(SH.GaussianRandomizer(4.0, 1), 100, adjacency="replace", sampler_charge=False)
    assert no_charge._bottom.sampler_floor(700.0) == 0.0


def test_via_bottom_delta_below_sampler_floor_refused_at_once(monkeypatch):
    """replace get_epsilon(1e-30) of the Gaussian randomizer at n = 1000 certified legs for
    ~22 s before refusing. Since docs/accountant.md §9.9 the refusal certifies one loose leg (leg A at e_c, where the
    sampler charge alone reaches delta, at PROBE_TOL) and no split: more would be the slow search again."""
    acc = SH.ShuffleAccountant(SH.GaussianRandomizer(1.0, 1), 1000, adjacency="replace")
    legs = []
    leg = acc._bottom.leg

    def one_leg(j, e, rel_tol, negligible=0.0):
        legs.append(j)
        if len(legs) > 1:
            raise AssertionError("more than one leg was certified before the refusal")
        return leg(j, e, rel_tol, negligible)

    def no_split(*args, **kwargs):
        raise AssertionError("a split was certified before the refusal")

    monkeypatch.setattr(acc._bottom, "leg", one_leg)
    monkeypatch.setattr(acc._bottom, "split", no_split)
    with pytest.raises(ValueError, match=r"^delta: 1e-30 is below .*release sampler"):
        acc.get_epsilon(1e-30)
