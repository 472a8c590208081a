"""docs/accountant.md §8.22: a law's mirror image takes the law's bracket moved by its mean (mirror_law)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.accountant.mirror_law import mirror_bracket, mirrored
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import switch


def _dup_by_counts(law, gamma: float, n: int) -> float:
    """E[S_+] / (n gamma) of the stored atom law by enumerating the count vectors (users at 0, at each atom) with
    their multinomial probabilities (an independent reference: no convolution, no rounding of the values)."""
    v, p = (np.asarray(t, float).tolist() for t in law.atoms())
    probs = [1.0 - gamma] + [gamma * q for q in p]
    vals = [0.0] + v
    k = len(vals)
    terms = []
    for cut in itertools.combinations(range(n + k - 1), k - 1):  # stars and bars: counts summing to n
        c = [b - a - 1 for a, b in zip((-1,) + cut, cut + (n + k - 1,))]
        s = math.fsum(ci * x for ci, x in zip(c, vals))
        if s > 0.0:
            logp = math.lgamma(n + 1) - sum(math.lgamma(ci + 1) for ci in c) + \
                sum(ci * math.log(q) for ci, q in zip(c, probs) if ci)
            terms.append(math.exp(logp) * s)
    return math.fsum(terms) / (n * gamma)


def _mean(law) -> float:
    v, p = law.atoms()
    return math.fsum((np.asarray(v) * np.asarray(p)).tolist())


@pytest.mark.parametrize("make", [lambda: RandomizedResponse(2, 1.0), lambda: RandomizedResponse(4, 1.0),
                                  lambda: GaussianRandomizer(1.0, 1), lambda: BlanketMixedGaussian(0.0202, 0.456, 1)])
def test_zero_out_orders_mirrored_at_zero_only(make):
    r = make()
    (g0, a), (g1, b) = laws_for(r, 0.0, "zero_out")
    assert g0 == g1 and mirrored(a, b) and mirrored(b, a)
    (_, a), (_, b) = laws_for(r, 0.25, "zero_out")
    assert not mirrored(a, b) and not mirrored(b, a)
    assert not mirrored(a, a)  # (a law with a heavy upper tail is not its own mirror)


@pytest.mark.parametrize("k, eps0, n", [(2, 1.0, 6), (3, 0.5, 10), (4, 2.0, 15), (4, 1.0, 25)])
def test_mirror_bracket_holds_enumerated_value(k, eps0, n):
    """The two orders at eps = 0 have the same D_up (enumerated), and the mirror bracket from law 0's certified
    bracket contains law 1's enumerated value."""
    (g, a), (_, b) = laws_for(RandomizedResponse(k, eps0), 0.0, "zero_out")
    d0, d1 = _dup_by_counts(a, g, n), _dup_by_counts(b, g, n)
    assert d1 == pytest.approx(d0 - _mean(a), rel=1e-12, abs=1e-15)
    r0 = certify(a, g, n, 1e-2, 1, Bracket())
    assert r0.lower <= d0 * (1 + 1e-12) and d0 <= r0.upper * (1 + 1e-12)
    m = mirror_bracket(r0, a, b)
    assert m.lower <= d1 * (1 + 1e-12) and d1 <= m.upper * (1 + 1e-12)
    assert m.upper - m.lower <= (r0.upper - r0.lower) + 1e-12  # (moved, not widened beyond the charges)


@settings(max_examples=25, deadline=None)
@given(k=st.integers(2, 5), eps0=st.floats(0.1, 3.0), n=st.integers(2, 14))
def test_mirror_bracket_property(k, eps0, n):
    (g, a), (_, b) = laws_for(RandomizedResponse(k, eps0), 0.0, "zero_out")
    assert mirrored(a, b)
    d1 = _dup_by_counts(b, g, n)
    m = mirror_bracket(certify(a, g, n, 1e-2, 1, Bracket()), a, b)
    assert m.lower <= d1 * (1 + 1e-12) and d1 <= m.upper * (1 + 1e-12)


@pytest.mark.parametrize("make, n", [(lambda: GaussianRandomizer(1.0, 1), 10**6),
                                     (lambda: BlanketMixedGaussian(0.95, 4.6, 1), 10**6),
                                     (lambda: GaussianRandomizer(2.0, 1), 10**6)])
def test_report_on_meets_off(monkeypatch, make, n):
    """At eps = 0 the report with the rule on and off (the certified reference) overlap, and the rule's bracket meets
    the report's target; at eps > 0 the rule changes no float."""
    out = {}
    for on in (False, True):
        switch(monkeypatch, "EPS42_MIRROR", on)
        acc = ShuffleAccountant(make(), n)
        out[on] = (acc.get_delta_bounds(0.0), acc.get_delta_bounds(0.3))
    (lo0, up0), (lo1, up1) = out[False][0], out[True][0]
    assert max(lo0, lo1) <= min(up0, up1)
    assert up1 - lo1 <= 1e-2 * lo1 * (1 + 1e-9)
    # (never looser than the reference beyond the mirror's charges, value errors and the mean's bracket: ~1e-8 here)
    assert up1 <= up0 * (1 + 1e-6)
    assert [float(x).hex() for x in out[False][1]] == [float(x).hex() for x in out[True][1]]


def test_small_n_keeps_its_floats(monkeypatch):
    """Below MIRROR_N the driver runs the image law as before: the same floats at eps = 0 (GaussianRandomizer(1), n = 2,
    whose value tests/test_review_rev31b_export.py pins)."""
    out = []
    for on in (False, True):
        switch(monkeypatch, "EPS42_MIRROR", on)
        out.append([float(x).hex() for x in ShuffleAccountant(GaussianRandomizer(1.0, 1), 2).get_delta_bounds(0.0)])
    assert out[0] == out[1]


def test_gaussian_report_monte_carlo():
    """GaussianRandomizer(1), n = 60, eps = 0: the mirror's bracket (law 1 from law 0's) against a Monte Carlo value
    of law 1's D_up = E[(sum_i B_i (1 - e^{x y_i - 1/2} ...))_+] drawn from the randomizer itself: within 5 standard
    errors."""
    rng = np.random.default_rng(7)
    n, m = 60, 100_000
    (g, a), (_, b) = laws_for(GaussianRandomizer(1.0, 1), 0.0, "zero_out")
    assert mirrored(a, b)
    r = mirror_bracket(certify(a, g, n, 1e-2, 1, Bracket()), a, b)
    # law 1 = 1 - R_x / R_BG on Y ~ R_BG: draw L_1 by inverse transform of the stored law's values (its atom with
    # prob 1/2, else a + G e^{rV - r^2/2} - S e^{-rV - r^2/2} with V ~ N(0,1) conditioned on its interval)
    atom, part = b.parts
    v_at = float(atom.atoms()[0][0])
    vv = -np.abs(rng.standard_normal(size=(m, n)))  # V < 0 ...
    while True:  # ... conditioned on V < -1 (rejection)
        bad = vv > -1.0
        if not bad.any():
            break
        vv[bad] = -np.abs(rng.standard_normal(size=int(bad.sum())))
    cont = part.a + part._G * np.exp(part.r * vv - part.r ** 2 / 2) - part._S * np.exp(-part.r * vv - part.r ** 2 / 2)
    vals = np.where(rng.random((m, n)) < 0.5, v_at, cont)
    s = np.sum(np.where(rng.random((m, n)) < g, vals, 0.0), axis=1)
    x = np.maximum(s, 0.0) / (n * g)
    est, se = float(x.mean()), float(x.std() / math.sqrt(m))
    assert r.lower - 5 * se <= est <= r.upper + 5 * se


# docs/accountant.md §8.22.6: get_delta(0) first where the normal estimate of D_up(0) is below delta


@settings(max_examples=20, deadline=None)
@given(k=st.integers(2, 4), eps0=st.sampled_from([0.5, 1.0, 2.0]), f=st.floats(0.7, 1.05))
def test_zero_first_same_answer(k, eps0, f):
    """The rule on and off (the certified reference) give the same float around the answer 0's edge, and an answer 0
    comes with a certified get_delta(0) <= delta."""
    import pytest as _pt

    from sharpdp.shuffle import clear_caches
    from sharpdp.shuffle.accountant import limits
    from sharpdp.shuffle.accountant.zero_moments import zero_upper

    mp = _pt.MonkeyPatch()
    try:
        rz, n = RandomizedResponse(k, eps0), 3000
        delta = f * zero_upper(ShuffleAccountant(rz, n))
        out = []
        for on in (False, True):
            mp.setattr(limits, "EPS42_ZERO_FIRST", on)
            clear_caches()
            acc = ShuffleAccountant(rz, n)
            out.append(acc.get_epsilon(delta))
            if out[-1] == 0.0:
                assert acc.get_delta(0.0) <= delta
        assert out[0].hex() == out[1].hex()
    finally:
        mp.undo()
        clear_caches()


def test_zero_first_gaussian_1e8():
    """GaussianRandomizer(1), n = 1e8, delta = 3e-4 (between D_up(0) ~ 2.86e-4 and the second moment's 3.59e-4): the
    answer 0 with get_delta(0) <= delta (the search first did not end within 250 s; §8.22.6)."""
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8)
    assert acc.get_epsilon(3e-4) == 0.0
    lo, up = acc.get_delta_bounds(0.0)
    assert 2.8e-4 < lo <= up <= 3e-4
