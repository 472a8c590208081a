"""Review rev30b of get_epsilon's session-30 rules (docs/accountant.md §8.10, cal30): the answer 0 decided first
(``zero_end.ZeroEnd``), phase 1 interpolating within 10 % (``search._INTERP``), the answer eps0 of a pure-LDP
randomizer by the closed forms alone.

Claims attacked: the returned eps has a fresh certified upper delta (new accountant, caches cleared; default rel_tol
and rel_tol 1e-3) <= delta; the answer-0 rule gives the search's answer before it bit for bit (``ZERO_EPS`` < 0: the
rule off); answers at n = 2, 3 are <= delta against quadrature of the blanket bound (tests/_blanket_pieces.py, from
the mechanisms' densities alone). Targets are placed where the answer-0 rule acts or nearly acts: delta = f
get_delta(0) with f in {1, 1 + 1e-9, 1 - 1e-9, 0.99, 1.5} (f = 1 - 1e-9 gives answers of 1e-12 ... 2e-9, below and
above ``ZERO_EPS`` = 1e-9), the regime map's families (GaussianRandomizer sigma0 in {0.5, 1, 2, 4.6}, the BMGs of
family a, k-RR, PrivUnit), n = 1e2 ... 1e6.

Measured by the review (cal30 1cd1a4b / d0e67a1, main 5011b92 side by side): 426 get_epsilon cells (k-RR k in {2, 10},
eps0 in {1, 4, 8} and PrivUnit(0.75, 0.2, 10), replace, n = 1e2 ... 1e6: 295; the BMGs of family a and
GaussianRandomizer sigma0 in {0.5, 1, 2, 4.6}, zero-out, n = 1e2 ... 1e5: 131; delta in {1e-3, 1e-6, 1e-9, 1e-12} and
the five f above): no answer with a fresh upper value above delta at the default rel_tol or at 1e-3 (largest ratio 1.0:
delta = get_delta(0), answer 0); 137 answers 0, 30 positive answers below 1e-9. Rule on / off (``ZERO_EPS`` = -1) at
n = 1e5, 1e6 (BMG of family a, the four Gaussians) and BMG(0.171, 0.78), n = 1e8 (delta 1e-6 and the f above): 55 of
55 the same float. Against main: 194 of 198 k-RR / PrivUnit answers the same float; the 4 others are phase 1's model
(_INTERP), -1.4e-7 ... +7.6e-5 relative (within xtol), each certified.
"""

from __future__ import annotations

import importlib.util

import pytest
from _blanket_pieces import bmg_pieces, dup_kind, gauss_pieces

from sharpdp.shuffle import (BlanketMixedGaussian, GaussianRandomizer, PrivUnit, RandomizedResponse,
                             ShuffleAccountant, clear_caches)

HAS_ZERO_END = importlib.util.find_spec("sharpdp.shuffle.accountant.zero_end") is not None
needs_rule = pytest.mark.skipif(not HAS_ZERO_END, reason="get_epsilon's answer-0 rule (cal30, docs/accountant.md "
                                                          "§8.10) not in this build")


def _fresh(make, n, adjacency, eps, rel_tol=None):
    clear_caches()
    acc = ShuffleAccountant(make(), n, adjacency) if rel_tol is None else \
        ShuffleAccountant(make(), n, adjacency, rel_tol=rel_tol)
    return tuple(float(v) for v in acc.get_delta_bounds(eps))


def _epsilon(make, n, adjacency, delta, rule=True):
    clear_caches()
    if rule or not HAS_ZERO_END:
        return float(ShuffleAccountant(make(), n, adjacency).get_epsilon(delta))
    from sharpdp.shuffle.accountant import zero_end
    old = zero_end.ZERO_EPS
    zero_end.ZERO_EPS = -1.0  # (no point is near 0: the search before the rule)
    try:
        return float(ShuffleAccountant(make(), n, adjacency).get_epsilon(delta))
    finally:
        zero_end.ZERO_EPS = old


NEAR0 = [
    pytest.param(lambda: GaussianRandomizer(0.5, 1), 1000, "zero_out", id="gauss0.5-1e3"),
    pytest.param(lambda: GaussianRandomizer(1.0, 1), 100, "zero_out", id="gauss1-1e2"),
    pytest.param(lambda: GaussianRandomizer(4.6, 1), 10**4, "zero_out", id="gauss4.6-1e4"),
    pytest.param(lambda: BlanketMixedGaussian(0.224, 1.24, 1), 100, "zero_out", id="bmg-a-1e2"),
    pytest.param(lambda: RandomizedResponse(10, 4.0), 1000, "replace", id="10rr4-1e3"),
    pytest.param(lambda: RandomizedResponse(2, 1.0), 10**4, "replace", id="2rr1-1e4"),
    pytest.param(lambda: PrivUnit(0.75, 0.2, 10), 100, "replace", id="privunit-1e2"),
]


@needs_rule
@pytest.mark.parametrize("make, n, adjacency", NEAR0)
def test_targets_at_the_value_at_zero_same_floats_and_certified(make, n, adjacency):
    """delta = f get_delta(0): the answer is the search's without the rule, bit for bit; exactly 0 iff delta >= the
    fresh get_delta(0); otherwise positive (also below ZERO_EPS: f = 1 - 1e-9) with a fresh certified upper value
    <= delta at the default rel_tol and at 1e-3."""
    d0 = _fresh(make, n, adjacency, 0.0)[1]
    for f in (1.0, 1.0 - 1e-9, 0.99):
        delta = d0 * f
        e = _epsilon(make, n, adjacency, delta)
        assert e == _epsilon(make, n, adjacency, delta, rule=False)
        assert (e == 0.0) == (f >= 1.0)
        assert _fresh(make, n, adjacency, e)[1] <= delta
        if f == 0.99:
            assert _fresh(make, n, adjacency, e, 1e-3)[1] <= delta


# ------------------------------------------------------------------------------------- n = 2, 3 against quadrature
def _dup(kind, gamma, s, eps, n):
    """The blanket bound D_up (max over x vs bot and bot vs x) at n = 2, 3 by quadrature (tests/_blanket_pieces.py)."""
    out = 0.0
    for order in ("x_bot", "bot_x"):
        pieces = gauss_pieces(s, eps, order) if kind == "gauss" else bmg_pieces(gamma, s, eps, order)
        out = max(out, dup_kind(pieces, s, n))
    return out


SMALL = [
    pytest.param(lambda: BlanketMixedGaussian(0.5, 2.0, 1), ("bmg", 0.5, 2.0), id="bmg(0.5,2)"),
    pytest.param(lambda: BlanketMixedGaussian(0.224, 1.24, 1), ("bmg", 0.224, 1.24), id="bmg(0.224,1.24)"),
    pytest.param(lambda: GaussianRandomizer(2.0, 1), ("gauss", None, 2.0), id="gauss2"),
    pytest.param(lambda: GaussianRandomizer(0.5, 1), ("gauss", None, 0.5), id="gauss0.5"),
]


@pytest.mark.parametrize("make, ref, n", [pytest.param(*p.values, 2, id=p.id + "-2") for p in SMALL]
                         + [pytest.param(*SMALL[2].values, 3, id=SMALL[2].id + "-3")])
def test_small_n_answers_near_zero_against_quadrature(make, ref, n):
    """At n = 2, 3 (zero-out), targets around get_delta(0): the quadrature D_up at the answer is <= delta and <= the
    fresh certified upper value there (1e-4: the product rule's error at the Gaussian blanket's kink)."""
    kind, gamma, s = ref
    d0 = _fresh(make, n, "zero_out", 0.0)[1]
    assert _dup(kind, gamma, s, 0.0, n) <= d0 * (1 + 1e-4)
    for f in ((1.0, 1.0 - 1e-9, 0.99, 0.5) if n == 2 else (1.0, 0.99)):
        delta = d0 * f
        e = _epsilon(make, n, "zero_out", delta)
        assert (e == 0.0) == (f >= 1.0)
        up = _fresh(make, n, "zero_out", e)[1]
        ref_v = _dup(kind, gamma, s, e, n)
        assert up <= delta and ref_v <= up * (1 + 1e-4) and ref_v <= delta * (1 + 1e-4)


# ---------------------------------------------------------------------------------------- the answer eps0 (§8.10.3)
@pytest.mark.parametrize("make, eps0, n, delta", [
    (lambda: RandomizedResponse(2, 8.0), 8.0, 100, 1e-3),
    (lambda: RandomizedResponse(10, 8.0), 8.0, 100, 1e-12),
    (lambda: RandomizedResponse(2, 4.0), 4.0, 1000, 1e-12),
    (lambda: RandomizedResponse(10, 4.0), 4.0, 100, 1e-12),
    (lambda: RandomizedResponse(2, 0.5), None, 10**4, 1e-40),
    (lambda: PrivUnit(0.75, 0.2, 10), None, 100, 1e-40),
])
def test_answer_eps0_certified_and_not_far_above_the_crossing(make, eps0, n, delta):
    """Targets whose answer is (or may be) eps0: a fresh get_delta at the answer is <= delta (0 at eps0, docs/accountant.md
    §7.4); where the answer is eps0, a fresh rel_tol-1e-3 bracket at eps0 (1 - xtol) has its certified lower value above
    delta (no certified eps more than xtol below the answer: the closed forms' claim of §8.10.3)."""
    e = _epsilon(make, n, "replace", delta)
    assert _fresh(make, n, "replace", e)[1] <= delta
    if eps0 is not None:
        assert e == eps0
        assert _fresh(make, n, "replace", e * (1 - 1e-3), 1e-3)[0] > delta
