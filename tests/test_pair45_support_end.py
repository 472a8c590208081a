"""Session 45 (pair45): the export's accuracy claim at an atom law's support end (docs/composition.md §2.28.2).

rev44 found a pair's delta 1.102 x ``get_delta`` at 3-RR (eps0 = 3), n = 30, zero-out, eps = 1.99544, between the
last positive lattice sample and the support end of the round's privacy loss. §2.28.2's lemma: the hockey-stick curve
of ANY pair whose losses lie on the lattice Delta is linear in t = e^eps between neighbouring lattice points, so where
it dominates delta it is at least the chord in t of delta's own values at the two lattice points around eps; at the
support end delta falls to 0 inside the segment and that chord is up to 6x delta there (delta >= 1e-12). The claim's
exact domain is therefore: the pair within 1 % above ``get_delta`` at the lattice points k Delta, and within 1 % above
the chord in t of ``get_delta``'s values at the lattice points around every other eps.

References independent of the accountant: the exact blanket divergence by multinomial enumeration
(tests/test_review_rev44_settled.py's ``exact_blanket`` through its ``_exact_at``), and the chord computed here from lattice values.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches, dominating_pair

from test_review_rev44_settled import _exact_at as _exact

GOAL = 1.01
ACCURATE = 1e-12


def _chord(e: float, dx: float, f) -> tuple[float, float, float]:
    """(chord in t = e^eps of f's values at the lattice points around e, f there): f(k dx), f((k + 1) dx)."""
    k = math.floor(e / dx)
    a, b = k * dx, (k + 1) * dx
    fa, fb = f(a), f(b)
    w = math.exp(e - a) * math.expm1(b - e) / math.expm1(b - a)  # (t_b - t) / (t_b - t_a)
    return fb + w * (fa - fb), fa, fb


@pytest.fixture(scope="module")
def rr3():
    R = RandomizedResponse(3, 3.0)
    pair = dominating_pair(ShuffleAccountant(R, 30, "zero_out"), progress=False)
    yield R, pair
    clear_caches()


def test_no_lattice_pair_meets_the_goal_before_the_support_end(rr3):
    """The lemma's consequence at rev44's cell: the chord of the EXACT divergence's lattice values (the least value
    any dominating pair on this lattice can have) is more than 5x the exact divergence at an eps where it is
    >= 1e-12; the library's pair is at or above the exact divergence and within 1 % above that chord."""
    R, pair = rr3
    dx = float(pair.value_discretization_interval)
    se, sd = np.asarray(pair.sample_epsilons), np.asarray(pair.sample_deltas)
    last = int(np.nonzero(sd > 1e-300)[0][-1])
    a = float(se[last])
    assert abs(se[last + 1] - a - dx) < 1e-12  # (the last positive sample and the next lattice point: one step)
    worst = 0.0
    for e in np.linspace(a, a + dx, 12)[1:-1].tolist():
        ex = _exact(R, e, "zero_out", 30)
        ch, _, fb = _chord(e, dx, lambda x: _exact(R, x, "zero_out", 30))
        d = pair.get_delta(e)
        assert fb == 0.0  # (the support end lies inside the segment)
        assert d >= ex * (1 - 1e-9) and d >= ch * (1 - 1e-9)
        assert d <= GOAL * ch
        if ex >= ACCURATE:
            worst = max(worst, ch / ex)
    assert worst > 5.0


def test_rev44_eps_is_outside_the_claims_domain(rr3):
    """rev44's point: the pair is 1.10x get_delta there, and within 1 % above the chord of get_delta's lattice values
    (the claim as restated in docs/composition.md §2.28.2)."""
    R, pair = rr3
    dx = float(pair.value_discretization_interval)
    e = 1.9954401279999998
    fresh = ShuffleAccountant(R, 30, "zero_out")
    up = fresh.get_delta(e)
    ch, fa, _ = _chord(e, dx, fresh.get_delta)
    assert pair.get_delta(e) > 1.05 * up  # (outside the old statement)
    assert fa >= ACCURATE and pair.get_delta(e) <= GOAL * ch


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.floats(0.0, 1.0), st.integers(0, 940))
def test_lattice_pair_is_linear_in_t_between_lattice_points(rr3, frac, k):
    """The lemma's premise on the object itself: the pair's delta at any eps between lattice points equals the chord
    in t of its values at the two lattice points (up to its rounding margins)."""
    _, pair = rr3
    dx = float(pair.value_discretization_interval)
    e = (k + frac) * dx
    ch, fa, fb = _chord(e, dx, pair.get_delta)
    d = pair.get_delta(e)
    assert d <= 1.0
    assert abs(d - ch) <= 1e-9 * max(fa, 1e-300) + 1e-300, (e, d, ch)


ROUNDS = [(3, 1.0, 40, "replace"), (5, 2.0, 60, "replace"), (2, 0.5, 100, "replace"), (3, 3.0, 30, "zero_out"),
          (4, 2.5, 50, "zero_out")]


@pytest.mark.parametrize("k, eps0, n, adjacency", ROUNDS)
def test_claim_in_its_domain(k, eps0, n, adjacency):
    """The restated claim on dense eps (lattice points and between them, up to eps0): the pair is at or above the
    exact divergence everywhere, within 1 % above get_delta at lattice points where get_delta >= 1e-12, and within
    1 % above the chord of get_delta's lattice values elsewhere (where its left end is >= 1e-12)."""
    R = RandomizedResponse(k, eps0)
    pair = dominating_pair(ShuffleAccountant(R, n, adjacency), progress=False)
    dx = float(pair.value_discretization_interval)
    fresh = ShuffleAccountant(R, n, adjacency)
    memo: dict[float, float] = {}

    def gd(x: float) -> float:
        if x not in memo:
            memo[x] = fresh.get_delta(x)
        return memo[x]

    top = int(eps0 / dx)
    ks = np.unique(np.linspace(0, top, 15).astype(int)).tolist()
    checked = 0
    for kk in ks:
        for frac in (0.0, 0.37, 0.81):
            e = (kk + frac) * dx
            d = pair.get_delta(e)
            ex = _exact(R, e, adjacency, n)
            assert d >= ex * (1 - 1e-9), ("under the exact divergence", e, d, ex)
            ch, fa, _ = _chord(e, dx, gd)
            if frac == 0.0 and gd(e) >= ACCURATE:
                assert d <= GOAL * gd(e), ("lattice point", e, d / gd(e))
                checked += 1
            elif frac > 0.0 and fa >= ACCURATE:
                assert d <= GOAL * ch, ("chord", e, d / ch)
                checked += 1
    assert checked >= 12
    clear_caches()
