"""Replace-one through bot: a candidate's leg B certified to rel_tol alone where its absolute target is idle
(docs/accountant.md §9.7, ``ViaBottom._idle_target``).

References are independent of the search: a zero-out accountant's legs at the reported split combined by the test's
own chain formula (Lemma 9.1 of docs/accountant.md §9, rounded outwards as §9), and the split search with the rule
off (``_idle_target`` always False: the search of §9.6, whose candidates' leg B goes to the absolute target and whose
contract certifies it to rel_tol alone again)."""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from test_rep24_via_bottom_speed import _acc, _second
from test_viabot21_edge import _CliffBottom

REL = 1e-2  # the accountants' default rel_tol
CELL = (1.0, 10**6, 8.0)  # GaussianRandomizer(1), n = 1e6, eps = 8: the reported split's leg B misses rel_tol 0.1


def _calls(acc: ShuffleAccountant) -> list[tuple[float, float, object, float]]:
    """Record every leg certification the replace accountant asks of its zero-out accountant."""
    zo = acc._bottom.bottom
    seen: list[tuple[float, float, object, float]] = []
    inner = zo._report

    def rec(e, rel_tol, only=None, upper_first=False, negligible=0.0):
        seen.append((e, rel_tol, only, negligible))
        return inner(e, rel_tol, only=only, upper_first=upper_first, negligible=negligible)

    zo._report = rec
    return seen


def test_reported_leg_b_certified_once_to_rel_tol_alone_with_the_brackets_of_before(monkeypatch):
    """At a cell where the reported split's leg B misses rel_tol 0.1 (lower value 0, upper value far above the
    target), that leg is certified once, to rel_tol alone, and the reported bracket is (a) the chain of an
    independent zero-out accountant's legs at the reported split (leg A at rel_tol, leg B at rel_tol alone), to the
    float, and (b) the bracket of the search with the rule off, bit for bit. (Caught: ``idle`` not passed by the
    candidates (leg B at the split certified twice, to the target and then to rel_tol alone); ``_idle_target``
    threshold at 100 neg / ABS_SHARE (the same); the chain without e^{e1} on leg B.)"""
    s, n, eps = CELL
    acc = _acc(s, n)
    seen = _calls(acc)
    r = acc.report(eps)
    e1 = float(r.terms["epsilon_split"])
    e2 = _second(eps, e1)
    legs_b = [c for c in seen if c[0] == e2 and c[1] == REL and c[2] == acc._bottom.legs[1]]
    assert [c[3] for c in legs_b] == [0.0], legs_b
    zo = _acc(s, n, "zero_out")
    w = math.exp(e1)
    a, b = zo._report(e1, REL, only=(0,)), zo._report(e2, REL, only=(1,))
    assert b.upper - b.lower > REL * b.lower  # (the leg misses rel_tol: the rule's case)
    assert (r.upper, r.lower) == (min((a.upper + w * b.upper) * (1 + 8 * U), 1.0),
                                  min((a.lower + w * b.lower) * (1 - 8 * U), 1.0))
    monkeypatch.setattr(ViaBottom, "_idle_target", lambda self, e2, neg: False)
    off = _acc(s, n).report(eps)
    assert (off.lower, off.upper, off.terms["epsilon_split"]) == (r.lower, r.upper, r.terms["epsilon_split"])


class _NoEngine:
    """A zero-out accountant the unit test never asks (the rule reads the leg cache alone)."""

    randomizer = None

    def _report(self, *a, **k):  # pragma: no cover - the rule must not certify anything
        raise AssertionError("the rule certified a leg")


@pytest.mark.parametrize("lower,upper,neg,expect", [
    (0.0, 1e-15, 1e-16, True),  # lower value 0, upper = neg / ABS_SHARE: idle
    (0.0, 0.99e-15, 1e-16, False),  # upper just below neg / ABS_SHARE: the target may matter
    (1e-16, 1.5e-15, 1e-16, True),  # wide bracket (missed 0.1), upper above neg / ABS_SHARE
    (1.0e-15, 1.1e-15, 1e-17, False),  # met rel_tol 0.1 (width = 0.1 lower): leg B at rel_tol may meet rel_tol
    (1.0e-15, 1.1001e-15, 1e-17, True),  # missed it by a hair
    (0.0, 1e-15, 0.0, False),  # no target: nothing to skip
])
def test_idle_target_rule(lower, upper, neg, expect):
    """The rule of §9.7 on a cached rel_tol-0.1 leg B, against its statement: idle exactly where that leg missed
    rel_tol 0.1 (upper - lower > 0.1 lower) and its upper value is >= neg / ABS_SHARE. (Caught: the threshold at neg
    instead of neg / ABS_SHARE; the width test dropped; the width test at rel_tol 1e-2.)"""
    vb = ViaBottom(_NoEngine(), (None, None))
    e2 = 0.25
    assert vb._idle_target(e2, neg) is False  # nothing cached: no guess
    vb._leg_cache[(1, e2, 0.1)] = AccountantReport(e2, lower, upper)
    assert vb._idle_target(e2, neg) is expect
    assert vb._idle_target(0.3, neg) is False  # another e2: not this leg's


ZS = 0.5  # the synthetic cliff of leg B below


class _SteepA(_CliffBottom):
    """Exact synthetic legs (brackets of width 0): A(e) = 10 e^{-8 e}; B(e) = 1e-40 for e >= ZS, 0.5 below."""

    def _report(self, epsilon, rel_tol, only=None, negligible=0.0):
        v = 10.0 * math.exp(-8.0 * epsilon) if only[0] == 0 else (1e-40 if epsilon >= ZS else 0.5)
        return AccountantReport(epsilon, v, v)


def test_shrink_toward_a_smaller_split_reads_leg_a_at_the_larger_one():
    """_shrink from the split f = 0.52 (e2 = 0.48 below the cliff: value 0.156 + e^{0.52} 0.5 = 0.997) toward the
    worse split f = 0.28 (A = 1.065 alone). Every split between has value >= A(0.52 eps) = 0.156, not >= A(0.28 eps),
    so the gain test must read leg A at the best split, and the bisection runs: its first midpoint f = 0.4 (past the
    cliff: A(0.4) = 0.408) is better, and it then keeps the half toward f = 0.28 (§9.5's bisection assumes the edge
    lies between best and other), ending at f = 0.4. Exact legs: no split is below A(0.5) = 0.1832 (the cliff's edge).
    (Caught: the gain test reading leg A at the worse split, the rule before: it returned the split f = 0.52, 0.997.)"""
    eps = 1.0
    vb = ViaBottom(_SteepA(), ((0,), (1,)))
    best = vb.split(eps, 0.52, 0.1)
    vb.leg(0, 0.28 * eps, 0.1)  # (the worse split's leg A is cached, as _beyond's probe leaves it)
    assert vb.leg(0, 0.28 * eps, 0.1).lower >= 0.995 * best.upper  # (the case: the old test skipped the bisection)
    got = vb._shrink(eps, best, 0.28, 0.1)
    least = 10.0 * math.exp(-8.0 * (eps - ZS))
    assert least * (1 - 1e-12) <= got.upper <= 10.0 * math.exp(-8.0 * 0.4 * eps) * (1 + 1e-12)
