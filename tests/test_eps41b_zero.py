"""Session 41 (eps41b): get_epsilon's answer 0 certified by the second moment of the sum (docs/accountant.md §8.21,
``zero_moments.zero_upper``, ``limits.EPS41B_ZERO_MOMENTS``).

References independent of the rule: D_up(0) = E[S_+] / (n gamma) computed exactly by enumeration (atom laws, small n),
the laws' moments by numpy sums and by the heavy form's closed forms (docs/accountant_tail.md §23), fresh certified
brackets of get_delta_bounds(0) (lower values), and the search with the rule off."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math
import time

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.concentrated_moments import law_moments
from sharpdp.shuffle.accountant.zero_moments import law_higher, law_moments_up, moment_lower, moment_upper, zero_lower, zero_upper
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.round_cache import clear_caches

from _main_floats34 import switch


def _exact_dup0(law, gamma: float, n: int) -> float:
    """E[S_+] / (n gamma) at small n for an atom law: the pmf of S by repeated convolution over the atoms (each user
    0 with probability 1 - gamma, else an atom), values kept exactly as sums in a dict."""
    v, p = law.atoms()
    one = {0.0: 1.0 - gamma}
    for x, q in zip(v.tolist(), p.tolist()):
        one[x] = one.get(x, 0.0) + gamma * q
    dist = {0.0: 1.0}
    for _ in range(n):
        nxt: dict[float, float] = {}
        for s, ps in dist.items():
            for x, q in one.items():
                k = round(s + x, 12)
                nxt[k] = nxt.get(k, 0.0) + ps * q
        dist = nxt
    return math.fsum(ps * max(s, 0.0) for s, ps in dist.items()) / (n * gamma)


@pytest.mark.parametrize("k, eps0", [(2, 1.0), (3, 0.5), (4, 2.0)])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
@pytest.mark.parametrize("n", [3, 8, 20])
def test_krr_upper_above_exact(k, eps0, adjacency, n):
    """k-RR at eps = 0: the bound is >= the exact D_up(0) (enumeration) and within the second moment's factor
    (<= 2.5 exact here); its moment bracket holds numpy's moments."""
    for gamma, law in laws_for(RandomizedResponse(k, eps0), 0.0, adjacency):
        gamma = float(gamma)
        v, p = law.atoms()
        mu_lo, mu_hi, m2 = law_moments_up(law)
        mu, mm2 = float(np.dot(p, v)), float(np.dot(p, v * v))
        assert mu_lo <= mu <= mu_hi and mm2 <= m2 <= mm2 * (1 + 1e-12) + 1e-300
        exact = _exact_dup0(law, gamma, n)
        u = moment_upper(law, gamma, n)
        assert exact <= u <= 2.5 * exact
        m2_lo, m4 = law_higher(law)
        assert m2_lo <= mm2 and float(np.dot(p, v ** 4)) <= m4
        assert 0.5 * exact <= moment_lower(law, gamma, n) <= exact  # (Hoelder's lower value, §8.21: 0.59-0.73 here)


@pytest.mark.parametrize("make", [lambda: GaussianRandomizer(1.0, 1), lambda: BlanketMixedGaussian(0.171, 0.78, 1),
                                  lambda: BlanketMixedGaussian(0.3, 0.6, 1)])
def test_continuous_moments(make):
    """Lognormal parts: the bracket of E L holds 0 (eps = 0: E L = 1 - e^0) and the float mean, and E L^2 agrees with
    the float moments and, where the law has one, with the heavy form's closed form (E (L - a)^2, §23) to 1e-9."""
    for adjacency in ("zero_out", "replace") if not isinstance(make(), GaussianRandomizer) else ("zero_out",):
        for _, law in laws_for(make(), 0.0, adjacency):
            mu_lo, mu_hi, m2 = law_moments_up(law)
            assert mu_lo <= 0.0 <= mu_hi and mu_hi - mu_lo < 1e-9
            ref = law.std() ** 2 + law.mean() ** 2
            assert ref <= m2 <= ref * (1 + 1e-9)
            if law.heavy_form() is not None:
                f = law.heavy_form()
                lo, hi, c2 = law_moments(law)
                assert m2 <= (c2 - 2 * f.a * lo - f.a * f.a) * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("make, n, adjacency", [
    (lambda: GaussianRandomizer(1.0, 1), 10**4, "zero_out"),
    (lambda: GaussianRandomizer(1.0, 1), 10**6, "zero_out"),
    (lambda: RandomizedResponse(4, 1.0), 10**4, "replace"),
    (lambda: BlanketMixedGaussian(0.171, 0.78, 1), 10**4, "replace"),
    (lambda: BlanketMixedGaussian(0.3, 0.6, 1), 3000, "zero_out"),
])
def test_zero_upper_against_fresh_bracket(make, n, adjacency):
    """zero_upper >= a fresh certified lower value at 0 (get_delta_bounds), and within 1.5x of its upper value
    (the second moment against the first: sqrt(pi / 2) = 1.25 for a normal sum)."""
    clear_caches()
    acc = ShuffleAccountant(make(), n, adjacency)
    z = zero_upper(acc)
    lo, up = acc.get_delta_bounds(0.0)
    assert z is not None and lo <= z <= 1.5 * up
    assert 0.0 < zero_lower(acc) <= up
    assert zero_lower(acc) >= (0.3 * lo if n >= 10**6 else 0.0)  # (at small n the fourth moment's n E X^4 term leads)


def test_gauss_1e8_answer_zero_fast():
    """GaussianRandomizer(1), n = 1e8, get_epsilon(1e-3): 0.0 at once (16-20 s before: get_delta(0)'s report), and
    get_delta(0) afterwards <= delta (the bound entered the monotone memo); the bound is above law 0's certified
    lower value at 0 (a loose report, 0.6 s) and below delta."""
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8)
    t = time.process_time()
    assert acc.get_epsilon(1e-3) == 0.0
    assert time.process_time() - t < 2.0
    z = zero_upper(acc)
    assert z is not None and z <= 1e-3
    rep = acc._report(0.0, 0.5, (0,))
    assert rep.lower <= z <= 1.5 * rep.upper
    assert acc._memo_u[0] <= z and acc._memo_e[0] == 0.0


@pytest.mark.parametrize("frac", [1.5, 0.7])
def test_switch_off_and_on_agree(monkeypatch, frac):
    """BMG(0.171, 0.78), n = 1e4: delta = frac * zero_upper. 1.5: the answer 0 with the rule and without it (get_delta(0)
    is below zero_upper there); 0.7 (below the fresh get_delta(0)): the rule does not fire and the answer is the rule-off float (a positive answer,
    certified by a fresh get_delta)."""
    make, n = (lambda: BlanketMixedGaussian(0.171, 0.78, 1)), 10**4
    clear_caches()
    z = zero_upper(ShuffleAccountant(make(), n))
    assert z is not None
    delta = frac * z
    clear_caches()
    on = float(ShuffleAccountant(make(), n).get_epsilon(delta))
    switch(monkeypatch, "EPS41B_ZERO_MOMENTS", False)
    off = float(ShuffleAccountant(make(), n).get_epsilon(delta))
    assert on == off
    assert (on == 0.0) == (frac > 1.0)
    clear_caches()
    assert float(ShuffleAccountant(make(), n).get_delta(on)) <= delta


@pytest.mark.parametrize("on", [False, True])
def test_refutation_same_answer(monkeypatch, on):
    """BMG(0.171, 0.781), n = 1e8, get_epsilon(1e-6): the fourth-moment lower value of D_up(0) (1.18e-4 > delta)
    rules out the answer 0 instead of the loose pass; the answer is the same float with the rule off and on, and the
    lower value lies below the second moment's certified upper value at 0 (the certified reports at 0 cost 19 s here;
    the enumeration and fresh-bracket tests above check the lower value against independent references)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    make, n = (lambda: BlanketMixedGaussian(0.171, 0.781, 1)), 10**8
    switch(monkeypatch, "EPS41B_ZERO_LOWER", on)
    e = float(ShuffleAccountant(make(), n).get_epsilon(1e-6))
    assert e == 0.0009962525045252232  # (the answer of both: rule off and on, fresh processes, §8.21)
    acc = ShuffleAccountant(make(), n)
    low = zero_lower(acc)
    assert 1e-6 < low <= zero_upper(acc)
