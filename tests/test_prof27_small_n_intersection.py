"""The few-user bracket intersected with the engine's (docs/composition.md §2.6; ``driver._with_small_n``).

Reference: the deep-tail closed form of docs/accountant_tail.md §18 (``concentrated.certify``, an independent
construction: the number of active users, a clamp T0, Bennett's inequality on the body), evaluated here at a loose
rel_tol of its own so that it returns its bracket, on the law raised (upper end) and lowered (lower end) by its value
error. Both brackets contain the true D_up, so the certified bracket must meet the reference's and, where the
engine alone missed its target by orders of magnitude (the Gaussian randomizer's tail at n = 100: upper 5.8e-10
at eps = 10 against a true value near 3.7e-11), be within the few-user bracket's width of it.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.accountant.closed_forms import small_n_bracket
from sharpdp.shuffle.laws import laws_for

N = 100


def _reference(eps):
    """[lower, upper] of D_up from §18's closed form (the first law: x vs bot, the larger one here)."""
    gamma, law = laws_for(GaussianRandomizer(1.0, 1), eps, "zero_out")[0]
    up = concentrated.certify(law.shifted(up=True), float(gamma), N, 1.0, far_tail.choose_T0)
    lo = concentrated.certify(law.shifted(up=False), float(gamma), N, 1.0, far_tail.choose_T0)
    return lo.lower, up.upper


def test_gaussian_tail_bracket_meets_closed_form():
    eps = 10.0
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), N)
    lo, up = acc.get_delta_bounds(eps)
    r_lo, r_up = _reference(eps)
    assert 3.5e-11 < r_lo <= r_up < 4.0e-11  # (the reference's own bracket: 1.7 % wide)
    assert lo <= r_up and up >= r_lo  # both contain the true value
    assert up <= 1.5 * r_up  # without the intersection: 5.77e-10, 15x
    assert lo >= 0.9 * r_lo  # without it: 3.8e-16


@pytest.mark.parametrize("eps", [11.0, 12.0])
def test_gaussian_tail_within_few_user_bracket(eps):
    """Beyond the closed form's range of §18: the certified bracket lies within the few-user bracket of every law
    and above each law's single-active-user lower value (1 - gamma)^(n - 1) E[L_+] (§6.7)."""
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), N)
    lo, up = acc.get_delta_bounds(eps)
    jbs = [small_n_bracket(law, float(g), N, acc.rel_tol) for g, law in laws_for(acc.randomizer, eps, "zero_out")]
    jl = max(b[0] for b in jbs if b is not None)
    ju = max(b[1] for b in jbs if b is not None)
    assert jl <= lo <= up <= ju * (1 + 1e-12)
    assert up <= 1.5 * jl  # the few-user bracket is ~20-30 % wide here; the engine alone gave 1.6e-12 / 1.7e-10
    for g, law in laws_for(acc.randomizer, eps, "zero_out"):
        e_lo = law.stop_loss([0.0])[0][0]  # lower end of E[L_+]
        assert up >= (1 - float(g)) ** (N - 1) * e_lo * (1 - 1e-9)


def test_negligible_returns_the_few_user_value():
    """Below ``negligible`` the few-user upper value is returned as it is (an upper value below the caller's
    threshold, docs/accountant.md §9.4): at or below it, and at or above the closed form's lower value."""
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), N)
    lo, up = acc.get_delta_bounds(14.0, lower=False, negligible=1e-13)
    assert up <= 1e-13
    full = ShuffleAccountant(GaussianRandomizer(1.0, 1), N).get_delta_bounds(14.0)
    assert up >= full[0]
