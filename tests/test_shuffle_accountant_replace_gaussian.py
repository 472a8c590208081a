"""Replace-one for the Gaussian randomizer (gamma = 0) through bot, and the exact n = 1 value.

The replace bound is delta_zo(eps/2) (1 + e^{eps/2}) (weak triangle inequality through the
dataset with user 1 replaced by bot). References: at n = 1 the shuffled output is the
randomizer's own output, so the replace delta of the pair (1, -1) is the Gaussian mechanism's
with sensitivity 2 (closed form, a lower bound for any certified value); for n > 1 the
blanket bound of the antipodal pair, built here from the law's closed form (the candidate
worst case, not proven), must stay below the bound through bot.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from sharpdp.conversions import gaussian_mechanism_delta
from sharpdp.shuffle import GaussianRandomizer, LognormalLaw, ShuffleAccountant
from sharpdp.shuffle.laws import SumLaw, laws_for
from sharpdp.shuffle.accountant.plain import certify_law
from _main_floats34 import switch  # noqa: E402


def antipodal_law(sigma0, eps):
    """Law of l_eps = (R_1 - e^eps R_-1)/omega under omega = phi_s(|y| + 1)/g (pair (1, -1))."""
    g = 2.0 * float(ndtr(-1.0 / sigma0))
    ee, r, zl, wt = math.exp(eps), 2.0 / sigma0, 1.0 / sigma0, 1.0 / g
    # y > 0: g e^{2y/s^2} - e^eps g;  y < 0: g - e^eps g e^{2|y|/s^2}
    return g, SumLaw([LognormalLaw(-ee * g, g, r, zl, wt), LognormalLaw(g, -ee * g, r, zl, wt)])


@pytest.mark.parametrize("sigma0", [1.0, 2.0, 4.6])
def test_n1_covers_the_gaussian_mechanism(sigma0):
    acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), 1, "replace")
    assert acc.via_bottom
    for eps in [0.0, 0.1, 0.5, 1.0, 2.0, 4.0]:
        lo, up = acc.get_delta_bounds(eps)
        # the true delta of the Gaussian mechanism (sensitivity 2), 50 digits, rounded down: a certified upper value
        # may sit below gaussian_mechanism_delta, itself an upper value rounded up (~1e-12 relative)
        with mp.workdps(50):
            s = mp.mpf(sigma0)
            truth = mp.ncdf(1 / s - eps * s / 2) - mp.e ** eps * mp.ncdf(-1 / s - eps * s / 2)
        exact = float(truth) * (1 - 1e-15)
        assert exact <= float(gaussian_mechanism_delta(eps, sigma0, sensitivity=2.0)) <= exact * (1 + 1e-9)
        assert lo <= up <= 1.0
        assert up >= exact


@pytest.mark.parametrize("sigma0", [1.0, 4.6])
def test_n1_is_the_closed_form_positive_part(sigma0):
    """At n = 1, D_up = E[L_+]: the closed form, checked against mpmath quadrature of the law."""
    zo = ShuffleAccountant(GaussianRandomizer(sigma0, 1), 1)
    s = mp.mpf(sigma0)
    g = 2 * mp.ncdf(-1 / s)
    for eps in [0.3, 2.0]:
        ee = mp.e ** eps
        # x vs bot: y > 0 contributes (g e^{2y/s^2} - e^eps)_+ under omega = phi_s(y + 1)/g
        pdf = lambda y: mp.npdf(y + 1, 0, s) / g  # noqa: E731
        y0 = s * s * mp.log(ee / g) / 2
        xb = mp.quad(lambda y: (g * mp.e ** (2 * y / (s * s)) - ee) * pdf(y), [max(y0, 0), mp.inf])
        # bot vs x: y < 0 contributes (1 - e^eps g)_+ at mass 1/2 and y > 0 (1 - e^eps g e^{2y/s^2})_+
        y1 = s * s * mp.log(1 / (ee * g)) / 2
        bx = max(1 - ee * g, 0) / 2 + (mp.quad(lambda y: (1 - ee * g * mp.e ** (2 * y / (s * s))) * pdf(y), [0, y1])
                                       if y1 > 0 else 0)
        lo, up = zo.get_delta_bounds(eps)
        ref = float(max(xb, bx))
        assert lo <= ref * (1 + 1e-9) and up >= ref * (1 - 1e-9)
        assert up <= ref * (1 + 1e-9) + 1e-300


@pytest.mark.parametrize("eps", [0.05, 0.2, 1.0])
def test_n1_shortcut_agrees_with_the_fft_path(eps):
    """The closed form at n = 1 and the general FFT path bracket the same value."""
    acc = ShuffleAccountant(GaussianRandomizer(4.6, 1), 1)
    for g, law in laws_for(GaussianRandomizer(4.6, 1), eps, "zero_out"):
        r = certify_law(law, g, 1, 1e-2, 1)
        lo, up = law.tail_upper_bracket(0.0)
        assert r.lower <= up and lo <= r.upper
        assert up <= lo * (1 + 1e-9)
    assert acc.get_delta(eps) == pytest.approx(max(law.tail_upper(0.0) for _, law in
                                                   laws_for(GaussianRandomizer(4.6, 1), eps, "zero_out")), rel=1e-12)


@pytest.mark.parametrize("sigma0,n", [(2.0, 10), (4.6, 100)])
def test_bound_is_the_chain_through_bot(sigma0, n, monkeypatch):
    """The value is A(e1) + e^{e1} B(eps - e1) at the reported split (A: x vs bot, B: bot vs x,
    the zero-out laws of each order), and never above the even split with the max over orders."""
    switch(monkeypatch, "VIA_BOTTOM_BUDGET", False)  # (**) session 35, rep35: pins the reported split's legs at rel_tol of §9.4 (docs/accountant.md §9.12's switch off)
    rep = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace")
    zo = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n)
    for eps in [0.05, 0.3, 1.0]:
        r = rep.report(eps)
        e1 = r.terms["epsilon_split"]
        assert 0 <= e1 <= eps
        e2 = eps - e1 if e1 + (eps - e1) <= eps else math.nextafter(eps - e1, 0.0)
        a, b = zo._report(e1, 1e-2, only=(0,)), zo._report(e2, 1e-2, only=(1,))
        chain = a.upper + math.exp(e1) * b.upper
        assert r.upper == pytest.approx(min(chain, 1.0), rel=1e-12) and r.upper >= min(chain, 1.0)
        assert r.lower == pytest.approx(min(a.lower + math.exp(e1) * b.lower, 1.0), rel=1e-12)
        assert r.lower <= r.upper
        even = zo.get_delta(eps / 2) * (1 + math.exp(eps / 2))
        assert r.upper <= even * (1 + 1e-9)


@pytest.mark.parametrize("eps", [119.0, 1418.0, 5000.0, math.inf])
def test_huge_epsilon(eps):
    # the laws alone (the sampler charge would dominate here by design, docs/sampling.md §4)
    acc = ShuffleAccountant(GaussianRandomizer(4.6, 1), 10, "replace", sampler_charge=False)
    lo, up = acc.get_delta_bounds(eps)
    assert 0.0 <= lo <= up <= 1e-250  # (ndtr flush terms times e^{e1} at e1 ~ 100)
    assert acc.get_delta(eps) <= acc.get_delta(60.0)  # (the value at 60 certifies every larger eps)


def _shuffled_hockey_stick(sigma0, x_rest, eps_list, size, seed):
    """Monte Carlo estimates (mean, standard error), one per eps of eps_list, of the exact
    hockey-stick divergence between the shuffled outputs on (1, x_rest...) and (-1, x_rest...): a
    lower bound on the true delta. The sample and its likelihood ratio do not depend on eps: drawn
    once for all eps (the estimates are those of a separate run per eps with the same seed)."""
    rng = np.random.default_rng(seed)
    mu_p = np.array([1.0, *x_rest])
    mu_q = np.array([-1.0, *x_rest])
    y = mu_p + sigma0 * rng.standard_normal((size, mu_p.size))

    def dens(mu):  # permutation-symmetrised likelihood of the multiset (common factors dropped)
        from itertools import permutations

        return sum(np.exp(-0.5 * np.sum((y - mu[list(p)]) ** 2, axis=1) / sigma0**2)
                   for p in permutations(range(mu.size)))

    dq, dp = dens(mu_q), dens(mu_p)
    out = []
    for eps in eps_list:
        v = np.maximum(1.0 - math.exp(eps) * dq / dp, 0.0)
        out.append((v.mean(), v.std() / math.sqrt(size)))
    return out


@pytest.mark.parametrize("sigma0,x_rest", [(1.5, (0.0, 0.0)), (2.0, (1.0, -1.0)), (2.0, (0.5,))])
def test_bound_covers_the_exact_delta_of_small_shuffles(sigma0, x_rest):
    """The certified value is above a Monte Carlo lower confidence end of an exact delta."""
    n = 1 + len(x_rest)
    acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace")
    eps_list = [0.1, 0.5, 1.5]
    for eps, (est, se) in zip(eps_list, _shuffled_hockey_stick(sigma0, x_rest, eps_list, 200_000, 7)):
        assert est > 20 * se  # a real reference value
        assert acc.get_delta(eps) >= est - 5 * se


@pytest.mark.parametrize("sigma0,n", [(1.0, 1), (4.6, 100), (4.6, 10_000)])
def test_get_epsilon_through_bot(sigma0, n):
    acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace")
    for delta in [1e-3, 1e-6]:
        e = acc.get_epsilon(delta)
        assert acc.get_delta(e) <= delta
        assert acc.get_delta(0.97 * e) > delta  # the search is not needlessly conservative
        if n == 1:
            assert e >= float(np.asarray(_gm_epsilon(delta, sigma0)))
        if (sigma0, n, delta) == (4.6, 10_000, 1e-6):
            # the bracket from the zero-out answers lands where the previous search (fixed-point
            # upper end, halving lower end) did: 0.0209174 (xtol 1e-3)
            assert e == pytest.approx(0.0209174, rel=2e-3)
            assert acc.get_delta(e * (1 - 2e-3)) > delta


def _gm_epsilon(delta, sigma0):
    from sharpdp.conversions import gaussian_mechanism_epsilon

    return gaussian_mechanism_epsilon(delta, sigma0, sensitivity=2.0)


def test_get_epsilon_zero_when_delta_is_large():
    acc = ShuffleAccountant(GaussianRandomizer(4.6, 1), 100, "replace")
    d0 = acc.get_delta(0.0)
    assert acc.get_epsilon(min(d0 * 1.01, 0.99)) == 0.0


def test_cli_account_gaussian_replace(capsys):
    import json

    from sharpdp.cli import main

    assert main(["account", "--gamma", "0", "--sigma0", "4.6", "--n", "100", "--epsilon", "0.3",
                 "--adjacency", "replace", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    acc = ShuffleAccountant(GaussianRandomizer(4.6, 1), 100, "replace")
    assert out["delta"] == pytest.approx(acc.get_delta(0.3), rel=1e-12)


# ------------------------------------------------ regressions from the review of this change
@pytest.mark.parametrize("gamma,s,eps", [(0.5, 20.0, 1.09), (0.5, 1.0, 38.0)])
def test_n1_deep_tail_bracket_contains_the_exact_value(gamma, s, eps):
    """ndtr's relative error grows like z^2 u in the far tail and it flushes to 0 below z ~ -37.6
    (the second case: a subnormal delta); the bracket must still hold the exact value."""
    from sharpdp.shuffle import BlanketMixedGaussian

    mp.mp.dps = 100
    r, ee = 1 / mp.mpf(s), mp.e ** mp.mpf(eps)
    # x vs bot: L = gamma - e^eps + (1 - gamma) e^{rZ - r^2/2}, E[L_+] in closed form
    a, b = gamma - ee, 1 - mp.mpf(gamma)
    z0 = (mp.log(-a / b) + r * r / 2) / r
    xb = b * mp.ncdf(r - z0) + a * mp.ncdf(-z0)
    # bot vs x: L = 1 - e^eps gamma - e^eps (1 - gamma) e^{rZ - r^2/2} (positive below z1)
    c, d = 1 - ee * gamma, ee * (1 - gamma)
    z1 = (mp.log(c / d) + r * r / 2) / r if c > 0 else None
    bx = (c * mp.ncdf(z1) - d * mp.ncdf(z1 - r)) if z1 is not None else 0
    ref = max(xb, bx)
    mp.mp.dps = 40
    lo, up = ShuffleAccountant(BlanketMixedGaussian(gamma, s, 1), 1).get_delta_bounds(eps)
    assert ref > 0
    assert lo <= ref <= up


def test_surcharge_survives_infinite_epsilon():
    from numba import njit
    from scipy.stats import norm

    from sharpdp.shuffle import GeneralRandomizer

    @njit
    def dens(y, x):
        return 0.5 / 6.0 + 0.5 * math.exp(-0.5 * (y - x) ** 2) / math.sqrt(2 * math.pi)

    @njit
    def blank(y):
        return 1.0 / 6.0

    r = GeneralRandomizer(dens, [-1.0, 1.0], (-3.0, 3.0), blanket=blank, gamma=0.5, cells=256, log_curvature=2.0)
    outside = 0.5 * (norm.sf(2.0) + norm.sf(4.0))  # R_1's mass outside the support: delta(inf) >= it at n = 1
    acc = ShuffleAccountant(r, 1)
    assert acc.get_delta(math.inf) >= outside
    assert acc.report(math.inf).upper >= outside


def test_tail_upper_bracket_rejects_a_non_finite_threshold():
    _, law = antipodal_law(4.6, 0.3)
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="T must be finite"):
            law.tail_upper_bracket(bad)
        with pytest.raises(ValueError, match="T must be finite"):
            laws_for(GaussianRandomizer(4.6, 1), 0.3, "zero_out")[0][1].tail_upper_bracket(bad)


@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: the stored chains are session 33's engine's
def test_cap_stop_keeps_the_chain_lower_value(monkeypatch):
    """sigma0 = 0.46, n = 50: the legs are ~0.85 each, every split is above 1 and the value is the
    cap 1 (docs/accountant.md §9, early stop at the cap). The full search reported (0.8209, 1) (the lower
    value of its split's chain: leg B's lower value is 0 at rel_tol 1e-2 on the far-tail path); the one-split
    stop on loose legs (§9.3) reports (1, 1) at f = 0.8, whose chain of certified lower values is >= 1:
    rebuilt from an independent zero-out accountant at the loose targets (leg A 0.1, leg B 30)."""
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    rep = ShuffleAccountant(GaussianRandomizer(0.46, 1), 50, "replace")
    zo = ShuffleAccountant(GaussianRandomizer(0.46, 1), 50)
    eps = 0.1
    r = rep.report(eps)
    assert (r.lower, r.upper) == (1.0, 1.0)
    e1 = r.terms["epsilon_split"]
    assert e1 == pytest.approx(0.8 * eps)
    e2 = eps - e1 if e1 + (eps - e1) <= eps else math.nextafter(eps - e1, 0.0)
    a, b = zo._report(e1, 0.1, only=(0,)), zo._report(e2, 30.0, only=(1,))
    assert a.lower + math.exp(e1) * b.lower >= 1.0
    # every split's chain of certified upper values is above the cap (so is the search's result): stored
    # (CAP_STOP_CHAINS, ~4 s of CPU); the split f = 0.95 (its legs the cheapest: 0.2 s, against 2.5 s at f = 0.35) is
    # recomputed live and must match, so a change of the engine's leg values shows up as a stale reference
    ua = zo._report(0.95 * eps, 1e-2, only=(0,)).upper
    ub = zo._report(eps - 0.95 * eps, 1e-2, only=(1,)).upper
    assert ua + math.exp(0.95 * eps) * ub == pytest.approx(CAP_STOP_CHAINS[0.95], rel=1e-9)
    assert all(v >= 1.0 for v in CAP_STOP_CHAINS.values())


# test_cap_stop_keeps_the_chain_lower_value: zo's chain A(f eps) + e^{f eps} B(eps - f eps) of certified upper
# leg values (rel_tol 1e-2) at eps = 0.1 for sigma0 = 0.46, n = 50; made by
#   zo = ShuffleAccountant(GaussianRandomizer(0.46, 1), 50)
#   {f: zo._report(f * 0.1, 1e-2, only=(0,)).upper
#       + math.exp(f * 0.1) * zo._report(0.1 - f * 0.1, 1e-2, only=(1,)).upper for f in CAP_STOP_CHAINS}
# (re-made when docs/accountant_tail.md §24 tightened the legs' far-tail brackets: every chain 1.5 % lower, e.g.
# f = 0.95 1.75821 -> 1.73312, still above the cap; leg A there [0.81713, 0.82273], leg B [0.82786, 0.82789])
# (**) re-made after the compiled cells' exact empty intervals (docs/accountant_tail.md §29): every chain (an upper
# value) lower, by <= 8.3e-8 relative
# (**) session 28, lead: re-made after big28's body-pass leap (docs/accountant_tail.md §31.2: the legs' body passes
# at a quarter step): every chain (an upper value) lower or equal, by <= 4.4e-6 relative (f = 0.95 1.7331242493743668)
CAP_STOP_CHAINS = {0.1: 1.6542280520367603, 0.35: 1.676654703970741, 0.5: 1.690420567951791,
                   0.8: 1.7186478740129916, 0.95: 1.7331170238862899}


def test_cap_with_lower_one_at_the_reported_split():
    """sigma0 = 0.46, n = 50, eps = 1: (1, 1) as before the early stop; the lower value 1 means the
    chain is >= 1 at the reported split: its certified lower value there, by an independent
    zero-out accountant, is >= 1."""
    rep = ShuffleAccountant(GaussianRandomizer(0.46, 1), 50, "replace")
    zo = ShuffleAccountant(GaussianRandomizer(0.46, 1), 50)
    eps = 1.0
    r = rep.report(eps)
    assert (r.lower, r.upper) == (1.0, 1.0)
    e1 = r.terms["epsilon_split"]
    e2 = eps - e1 if e1 + (eps - e1) <= eps else math.nextafter(eps - e1, 0.0)
    # (the report's split is decided on loose legs, docs/accountant.md §9.3: leg A at 0.1, leg B at 30)
    la, lb = zo._report(e1, 0.1, only=(0,)).lower, zo._report(e2, 30.0, only=(1,)).lower
    assert la + math.exp(e1) * lb >= 1.0
