"""Review rev43 (session 43): attack on docs/accountant_tail.md §62.1 (``limits.CHERNOFF_LOG_STEP``, switched ON here:
the lead turns it on this session) at the sizes where the rule acts (nn up to 1e8; rev42's exact convolutions stopped
at nn = 25).

The law: two atoms on the lattice, x = k0 h (mass 1 - p) and x = (k0 + K - 1) h (mass p): a far atom, so the tilted
mean grows like e^{lam (K - 1) h} (the creeping region of Newton's step that §62.1's step on the logarithms targets).
Its nn-fold sum is S = h (k0 nn + (K - 1) J), J ~ Bin(nn, p): P(S >= b) = P(J >= c), P(S <= a) = P(J <= c'),
E[(S - b)_+] = h (K - 1) (E[J 1{J >= c}] - t P(J >= c)) with E[J 1{J >= c}] = nn p P(Bin(nn - 1, p) >= c - 1), all by
mpmath's regularised incomplete beta at 40 digits (no sharpdp code). Claims: each of ``Chernoff.log_p_above``,
``log_p_below``, ``log_excess`` is >= the exact log value (1e-9 slack) with the rule on; the rule did form its step
(not idle); and the whole accountant's brackets with the rule on meet the rule-off brackets on the cells of §62.1.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import chernoff
from sharpdp.shuffle.accountant.chernoff import Chernoff

from _main_floats34 import switch
from _rev43_mp import digits_fixture


_digits = digits_fixture(40)  # (mpmath's digits for every reference here, set per test)


def _ge(n: int, p: float, c: int) -> mpmath.mpf:
    """P(Bin(n, p) >= c)."""
    if c <= 0:
        return mpmath.mpf(1)
    if c > n:
        return mpmath.mpf(0)
    return mpmath.betainc(c, n - c + 1, 0, p, regularized=True)


def _exact_logs(nn: int, p: float, K: int, t: float) -> tuple[float, float, float]:
    """(log P(J >= t), log P(J <= t), log E[(J - t)_+]) for J ~ Bin(nn, p), t real."""
    c = math.ceil(t)
    above = _ge(nn, p, c)
    below = 1 - _ge(nn, p, math.floor(t) + 1)
    ex = nn * mpmath.mpf(p) * _ge(nn - 1, p, c - 1) - mpmath.mpf(t) * above
    lg = lambda v: float(mpmath.log(v)) if v > 0 else -math.inf  # noqa: E731
    return lg(above), lg(below), lg(ex)


def _law(K: int, p: float) -> np.ndarray:
    g = np.zeros(K)
    g[0], g[-1] = 1.0 - p, p
    return g


def _spy(monkeypatch) -> list:
    used: list = []
    orig = chernoff.log_newton_t
    monkeypatch.setattr(chernoff, "log_newton_t", lambda *a: used.append(orig(*a)) or used[-1])
    return used


def _check(nn: int, mean_j: float, K: int, h: float, k0: int, zs) -> None:
    p = mean_j / nn
    ch = Chernoff(_law(K, p), np.zeros(K), k0, h, nn)
    sd = math.sqrt(nn * p * (1 - p))
    for z in zs:
        t = mean_j + z * max(sd, 1.0)
        if t <= 0 or t >= nn:
            continue
        b = h * (k0 * nn + (K - 1) * t)
        la, lb, le = _exact_logs(nn, p, K, t)
        le += math.log(h * (K - 1)) if math.isfinite(le) else 0.0
        if math.isfinite(la):
            assert ch.log_p_above(b) >= la - 1e-9, ("above", nn, mean_j, K, z, ch.log_p_above(b), la)
        if math.isfinite(lb):
            assert ch.log_p_below(b) >= lb - 1e-9, ("below", nn, mean_j, K, z, ch.log_p_below(b), lb)
        if math.isfinite(le) and le > -700:
            assert ch.log_excess(b) >= le - 1e-9, ("excess", nn, mean_j, K, z, ch.log_excess(b), le)


@pytest.mark.parametrize("nn", [10**4, 10**6, 10**8])
@pytest.mark.parametrize("mean_j", [0.3, 5.0, 80.0])
def test_two_atom_sums_against_mpmath(monkeypatch, nn, mean_j):
    switch(monkeypatch, "CHERNOFF_LOG_STEP", True)
    used = _spy(monkeypatch)
    _check(nn, mean_j, 1001, 0.01, -1, (-2.0, 0.5, 2.0, 6.0, 20.0))
    if mean_j >= 5.0:  # (a Poisson-like sum at mean 0.3 and nn >= 1e6 never forms it: checked, still bounded)
        assert any(math.isfinite(u) for u in used)  # (the logarithms' step was formed: the rule ran)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(log_nn=st.floats(1.0, 8.0), log_mean=st.floats(-1.5, 2.5), K=st.integers(2, 3000),
       h=st.sampled_from([0.001, 0.1, 1.0]), k0=st.integers(-50, 0), z=st.floats(-3.0, 25.0))
def test_two_atom_sums_property(monkeypatch, log_nn, log_mean, K, h, k0, z):
    switch(monkeypatch, "CHERNOFF_LOG_STEP", True)
    nn = int(10**log_nn)
    mean_j = min(10**log_mean, 0.5 * nn)
    _check(nn, mean_j, K, h, k0, (z,))


CELLS = [(lambda: GaussianRandomizer(0.5, 1), 10**8, 0.1), (lambda: GaussianRandomizer(0.5, 1), 10**8, 0.01),
         (lambda: GaussianRandomizer(1.0, 1), 10**6, 0.01), (lambda: BlanketMixedGaussian(0.198, 0.833, 1), 10**6, 0.01)]


@pytest.mark.parametrize("i", range(len(CELLS)))
def test_accountant_on_meets_off(monkeypatch, i):
    mk, n, eps = CELLS[i]
    with monkeypatch.context() as mp:
        switch(mp, "CHERNOFF_LOG_STEP", False)
        off = ShuffleAccountant(mk(), n).get_delta_bounds(eps)
    switch(monkeypatch, "CHERNOFF_LOG_STEP", True)
    on = ShuffleAccountant(mk(), n).get_delta_bounds(eps)
    clear_caches()
    assert max(on[0], off[0]) <= min(on[1], off[1]), (on, off)
    assert abs(on[1] / off[1] - 1.0) <= 1e-6  # (only lam moved: the values agree to far within rel_tol)
