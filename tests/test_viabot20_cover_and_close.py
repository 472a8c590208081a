"""Replace-one through bot: the cover's known legs and get_epsilon's bracket closer (docs/accountant.md §9.2,
§9.3).

* The cover of §9.3 ends an interval [a, eps] with a lower value of leg B known already at some e >= eps - a
  (legs non-increasing): soundness on synthetic exact legs with pre-filled leg-B reports against a brute-force
  minimum over 20001 splits (the proof must never fire where a split is below 1).
* ``close`` (the bracket closer of get_epsilon through bot) on synthetic decreasing functions whose values
  below delta are biased towards delta (as decide's first split below delta is): the answer is an evaluated
  point <= delta within xtol of the true root, never below it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.search import shrink
from sharpdp.shuffle.accountant.via_bottom_search import close


def _legs(a0: float, ka: float, b0: float, kb: float, zb: float):
    def a(e: float) -> float:
        return a0 * math.exp(-ka * e)

    def b(e: float) -> float:
        return b0 * math.exp(-kb * e) if e < zb else 0.0
    return a, b


def _brute_min(a, b, eps: float) -> float:
    return min(a(x) + math.exp(x) * b(eps - x) for x in np.linspace(0.0, eps, 20001).tolist())


@settings(max_examples=300, deadline=None)
@given(a0=st.floats(0.05, 1.0), ka=st.floats(0.0, 3.0), b0=st.floats(0.0, 1.0), kb=st.floats(0.0, 3.0),
       zb=st.floats(0.05, 10.0), eps=st.floats(0.01, 6.0),
       known=st.lists(st.floats(0.0, 8.0), min_size=1, max_size=4))
def test_cover_with_known_legs_never_proves_a_cap_that_a_split_beats(a0, ka, b0, kb, zb, eps, known):
    """Legs B pre-filled in the leg cache at random e (their exact values as lower values; closed forms of leg A
    exact, of leg B 0): wherever the cover fires, no split is below 1. Catches a known leg read at some
    e < eps - a (B non-increasing: a lower value there is none at eps - a), e.g. `at <= e` turned around."""
    vb = ShuffleAccountant(GaussianRandomizer(0.46, 1), 50, "replace")._bottom
    a, b = _legs(a0, ka, b0, kb, zb)
    vb._closed_leg = lambda j, e, rel_tol: (a(e), a(e)) if j == 0 else (0.0, 1.0)
    vb.CAP_ENGINE_LEGS = 0
    for e in known:
        vb._leg_cache[(1, e, 0.1)] = AccountantReport(e, b(e), b(e))
    proved = vb._cap_closed(eps, 1e-2)
    if proved is not None:
        m = _brute_min(a, b, eps)
        assert m >= 1.0 - 1e-12, (m, a0, ka, b0, kb, zb, eps, known)
        assert (proved.lower, proved.upper) == (1.0, 1.0)


def test_cover_with_a_known_leg_where_the_closed_forms_cannot():
    """A(e) = 0.6 e^{-0.1 e} (exact closed forms), leg B without closed lower values (0) and no engine legs, eps = 1:
    a known leg B = 0.45 at e = 1.2 >= eps does not close [0, 1] (A(1) + 0.45 = 0.993): None; B = 0.5 there closes
    it at once (1.043): the cap; B = 0.5 known at e = 0.9 < eps - a is no lower value at 1: None."""
    vb = ShuffleAccountant(GaussianRandomizer(0.46, 1), 50, "replace")._bottom
    vb._closed_leg = lambda j, e, rel_tol: (0.6 * math.exp(-0.1 * e),) * 2 if j == 0 else (0.0, 1.0)
    vb.CAP_ENGINE_LEGS = 0
    vb._leg_cache[(1, 1.2, 0.1)] = AccountantReport(1.2, 0.45, 0.45)
    assert vb._cap_closed(1.0, 1e-2) is None
    vb._leg_cache[(1, 1.2, 0.1)] = AccountantReport(1.2, 0.5, 0.5)
    assert vb._cap_closed(1.0, 1e-2) is not None
    vb._leg_cache.clear()
    vb._leg_cache[(1, 0.9, 0.1)] = AccountantReport(0.9, 0.5, 0.5)  # (below eps - a = 1: not a lower value there)
    assert vb._cap_closed(1.0, 1e-2) is None


def _biased(root: float, slope: float, delta: float, bias: float, curv: float):
    """log fun = log delta - slope (e - root) - curv (e - root)^2 ... decreasing; values <= delta lifted by a share
    ``bias`` of their gap to delta (a first split below delta, not the least); every evaluation recorded."""
    seen: list[tuple[float, float]] = []

    def fun(e: float) -> float:
        x = e - root
        v = delta * math.exp(-slope * x - curv * x * abs(x))
        u = v if v > delta else v + bias * (delta - v)
        seen.append((e, u))
        return u
    return fun, seen


@pytest.mark.parametrize("root,slope,curv,bias", [(0.29, 40.0, 0.0, 0.7), (0.245, 60.0, 300.0, 0.5),
                                                  (4.75, 2.3, -0.2, 0.8), (0.0209, 400.0, 2e4, 0.0)])
def test_close_answers_within_xtol_above_the_root(root, slope, curv, bias):
    """The answer is an evaluated point whose value is <= delta, at or above the true root (values <= delta only
    there) and within xtol of it (a point above delta evaluated within xtol below it); the number of evaluations
    is at most that of the plain secant shrinker (search.shrink) on the same function. Catches an answer taken
    from the lower end, a bracket left wider than xtol, or a model root returned unevaluated."""
    delta, xtol = 1e-6, 1e-3
    lo, hi = 0.75 * root, 1.04 * root
    fun, seen = _biased(root, slope, delta, bias, curv)
    ulo, uhi = fun(lo), fun(hi)
    ans = close(fun, delta, lo, ulo, hi, uhi, xtol, [(0.7 * root, fun(0.7 * root)), (lo, ulo)])
    n_new = len(seen)
    vals = dict(seen)
    assert ans in vals and vals[ans] <= delta
    assert root <= ans <= root / (1.0 - xtol)
    assert any(u > delta and ans * (1.0 - xtol) <= e < ans for e, u in seen)
    fun2, seen2 = _biased(root, slope, delta, bias, curv)
    fun2(0.7 * root)
    shrink(fun2, delta, lo, fun2(lo), hi, fun2(hi), xtol)
    assert n_new <= len(seen2), (n_new, len(seen2))


def test_decide_far_from_the_target_is_one_splits_certified_value():
    """GaussianRandomizer(2), n = 100: a hint from the split search at eps = 0.4, then decide at eps = 0.45 against
    a target 20x below the value (far: the walk on legs at rel_tol 0.1, docs/accountant.md §9.2). Its value is the
    certified upper value of the split it names (the hint): at least the lower value of that split's chain by an
    independent zero-out accountant at rel_tol 1e-3, and within 10 % of a fresh get_delta there. Catches the loose
    split's lower value returned instead of its upper value (tried: below the chain's lower value)."""
    acc = ShuffleAccountant(GaussianRandomizer(2.0, 1), 100, "replace")
    vb = acc._bottom
    r = acc.report(0.4)
    eps = 0.45
    v = vb.decide(eps, r.upper / 20)
    e2 = vb._hint
    e1 = eps - e2
    assert (1, e2, 0.1) in vb._leg_cache  # (the far path: leg B of the named split at rel_tol 0.1)
    zo = ShuffleAccountant(GaussianRandomizer(2.0, 1), 100)
    a, b = zo._report(e1, 1e-3, only=vb.legs[0]), zo._report(e2, 1e-3, only=vb.legs[1])
    assert v >= a.lower + math.exp(e1) * b.lower * (1 - 1e-12)
    fresh = ShuffleAccountant(GaussianRandomizer(2.0, 1), 100, "replace").get_delta(eps)
    assert fresh <= v <= 1.1 * fresh, (v, fresh)
