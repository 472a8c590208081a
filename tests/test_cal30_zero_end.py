"""Session 30 (cal30): get_epsilon's answer 0 decided first where the search heads for eps = 0, and the answer eps0 of a
pure-LDP randomizer by the closed forms (docs/accountant.md §8.10, ``zero_end.ZeroEnd``).

References independent of the rule: fresh accountants' ``get_delta(0)`` (no cache, no running minimum) and the search
with the rule off (``zero_end.ZERO_EPS = 0``: the code before), whose answer is 0 exactly when that fresh value is
<= delta (docs/accountant.md §8 step 1).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant import zero_end
from sharpdp.shuffle.round_cache import clear_caches

from _main_floats34 import switch

CELLS = [
    pytest.param(lambda: BlanketMixedGaussian(0.171, 0.78, 1), 10**4, "zero_out", id="bmg-1e4"),
    pytest.param(lambda: BlanketMixedGaussian(0.3, 0.6, 1), 3000, "replace", id="bmg-replace-3e3"),
    pytest.param(lambda: GaussianRandomizer(1.0, 1), 10**4, "zero_out", id="gauss-1e4"),
    pytest.param(lambda: RandomizedResponse(4, 1.0), 10**4, "zero_out", id="4rr-1e4"),
]


def _fresh(make, n, adjacency, eps):
    clear_caches()
    return float(ShuffleAccountant(make(), n, adjacency).get_delta(eps))


def _counting(c, key, fn, when=lambda *a: True):
    """fn, counting in c[key] the calls whose arguments satisfy ``when``."""
    return lambda *a, **k: (c.__setitem__(key, c[key] + bool(when(*a))), fn(*a, **k))[1]


def _counted(monkeypatch, make, n, adjacency, delta):
    """A fresh get_epsilon(delta) with its accountant work counted: upper-only passes, probes, get_delta(0) calls."""
    c = {"up": 0, "probe": 0, "zero": 0}
    clear_caches()
    acc = ShuffleAccountant(make(), n, adjacency)
    with monkeypatch.context() as m:
        m.setattr(S, "upper_value", _counting(c, "up", S.upper_value))
        m.setattr(S, "probe", _counting(c, "probe", S.probe))
        m.setattr(acc, "get_delta", _counting(c, "zero", acc.get_delta, lambda eps, *a: float(eps) == 0.0))
        e = float(acc.get_epsilon(delta))
    return e, c


@pytest.mark.parametrize("make, n, adjacency", CELLS)
def test_answer_zero_found_first(monkeypatch, make, n, adjacency):
    """delta = 1.5 fresh get_delta(0): the answer is exactly 0.0 with the rule and without it, get_delta(0) is evaluated
    once, and the rule spends fewer upper-only passes and probes than the search before it (which bisected towards 0 and
    probed towards it: BMG(0.171, 0.78), n = 1e4: 18 passes and 2 probes against 10 and 0).
    Mutation caught: ``check`` returning 0 without evaluating get_delta(0) (the next test's delta = 0.99 get_delta(0))."""
    switch(monkeypatch, "EPS42_ZERO_FIRST", False)  # (**) session 42, eps42: docs/accountant.md §8.22.6
    switch(monkeypatch, "EPS41B_ZERO_MOMENTS", False)  # (**) session 41, eps41b: §8.21
    d0 = _fresh(make, n, adjacency, 0.0)
    delta = 1.5 * d0
    e, on = _counted(monkeypatch, make, n, adjacency, delta)
    assert e == 0.0 and on["zero"] == 1
    with monkeypatch.context() as m:
        m.setattr(zero_end, "ZERO_EPS", 0.0)  # (the rule off: the search before)
        e_off, off = _counted(monkeypatch, make, n, adjacency, delta)
    assert e_off == 0.0 and off["zero"] == 1
    assert on["up"] + on["probe"] < off["up"] + off["probe"]
    assert _fresh(make, n, adjacency, e) <= delta


@pytest.mark.parametrize("make, n, adjacency", CELLS)
@pytest.mark.parametrize("zero_eps", [zero_end.ZERO_EPS, 1.0])
def test_answer_above_zero_unchanged(monkeypatch, make, n, adjacency, zero_eps):
    """delta = 0.99 fresh get_delta(0), just below it: the answer is positive, certified by a fresh get_delta, and the
    same float as the search's without the rule. With ``ZERO_EPS`` = 1 (every point counts as near 0) get_delta(0) is
    evaluated at once, exceeds delta, settles the answer-0 check (no second evaluation at 0) and the search goes on to
    the same answer. Mutation caught: an answer-0 check above delta that returned 0 (e == 0.0), or that forgot the
    settled state (get_delta(0) counted twice would still pass: the accountant caches it, so the count is of calls)."""
    d0 = _fresh(make, n, adjacency, 0.0)
    delta = 0.99 * d0
    with monkeypatch.context() as m:
        m.setattr(zero_end, "ZERO_EPS", 0.0)
        e_off, _ = _counted(monkeypatch, make, n, adjacency, delta)
    with monkeypatch.context() as m:
        m.setattr(zero_end, "ZERO_EPS", zero_eps)
        e, c = _counted(monkeypatch, make, n, adjacency, delta)
    assert e > 0.0 and e == e_off
    assert c["zero"] <= 1
    assert _fresh(make, n, adjacency, e) <= delta


def test_zero_end_check():
    """The check itself: points at or above ZERO_EPS and a settled state evaluate nothing; below it get_delta(0) once."""
    calls = []

    class Acc:
        def get_delta(self, eps):
            calls.append(eps)
            return 0.5

    z = zero_end.ZeroEnd(Acc(), 0.4, settled=False)
    z.check(zero_end.ZERO_EPS)
    assert calls == [] and not z.settled
    z.check(0.0)
    assert calls == [0.0] and z.settled  # (0.5 > 0.4: settled, no answer 0)
    z.check(0.0)
    assert calls == [0.0]
    with pytest.raises(zero_end.AtZero):
        zero_end.ZeroEnd(Acc(), 0.5, settled=False).check(1e-12)  # (0.5 <= 0.5: the answer 0)
    assert calls == [0.0, 0.0]
    zero_end.ZeroEnd(Acc(), 0.5, settled=True).check(0.0)  # (ruled out already: nothing evaluated)
    assert calls == [0.0, 0.0]
    f = zero_end.ZeroEnd(Acc(), 0.4, settled=False).wrap(lambda e: 2.0 * e)
    assert f(0.25) == 0.5 and calls == [0.0, 0.0]  # (a point away from 0: the function alone)
    assert f(0.0) == 0.0 and calls == [0.0, 0.0, 0.0]  # (near 0: get_delta(0) first, above delta here)


# ----------------------------------------------------------------------------------------------- the answer eps0 (§8.10.3)
@pytest.mark.parametrize("k, eps0, n", [(2, 4.0, 100), (2, 8.0, 100), (2, 8.0, 10**4), (10, 8.0, 1000)])
def test_answer_eps0_by_the_closed_forms(monkeypatch, k, eps0, n):
    """A pure eps0-LDP randomizer under replace-one whose answer is eps0 (the regime map's k-RR cells): no probe (the
    search before made 11-12), and the answer is certified by fresh accountants: get_delta(eps0) <= delta, and
    get_delta just below eps0 (1 - xtol) is above delta, so no certified eps lies more than xtol below it (the plain
    bisection's crossing of fresh values is within xtol). (The next test catches a rule that returns eps0 without the
    closed forms' check.)"""
    make = lambda: RandomizedResponse(k, eps0)  # noqa: E731
    e, c = _counted(monkeypatch, make, n, "replace", 1e-6)
    assert e == eps0 and c["probe"] == 0 and c["up"] == 0
    assert _fresh(make, n, "replace", eps0) <= 1e-6
    assert _fresh(make, n, "replace", eps0 * (1.0 - 1e-3)) > 1e-6


def test_answer_below_eps0_unchanged(monkeypatch):
    """Where the closed forms just below eps0 are not above delta the search runs as before: 2-RR(1), n = 100 gives
    main's float (the regime map's), certified by a fresh accountant (tests/test_search_ldp_cap.py holds the cells
    whose upper value at eps0 is the atoms' rounding charge)."""
    make = lambda: RandomizedResponse(2, 1.0)  # noqa: E731
    e, c = _counted(monkeypatch, make, 100, "replace", 1e-6)
    assert e == 0.5162084020862178 and c["probe"] == 4
    assert _fresh(make, 100, "replace", e) <= 1e-6
