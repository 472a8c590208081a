"""get_epsilon's loose look at the phase-1 root (docs/accountant.md §8.4): where a far-tail law led phase 1, the
phase-1 root r1 is first seen through a report at rel_tol 0.1 and get_delta is spent there only where that report
puts r1 within reach of the root. The answers against an independent reference: a plain bisection on certified
``get_delta`` values of fresh accountants at a tenth of the search's tolerance; the xtol contract; a hypothesis
property (a fresh accountant certifies delta at the answer); both adjacencies (replace-one of the Gaussian
randomizer goes through bot, whose first guess is the zero-out search's answer, docs/accountant.md §9.2)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.round_cache import clear_caches

XTOL = 1e-3


def _fresh_delta(make, n: int, adjacency: str, eps: float) -> float:
    """get_delta of a fresh accountant (no running minimum, no cached report)."""
    clear_caches()
    return float(ShuffleAccountant(make(), n, adjacency).get_delta(eps))


def _bisect(make, n: int, adjacency: str, delta: float, lo: float, hi: float, tol: float) -> tuple[float, float]:
    """Plain bisection on fresh get_delta values: (lo, hi) with get_delta(lo) > delta >= get_delta(hi), hi - lo <=
    tol hi (the ends given must satisfy the comparison)."""
    assert _fresh_delta(make, n, adjacency, lo) > delta >= _fresh_delta(make, n, adjacency, hi)
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        if _fresh_delta(make, n, adjacency, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return lo, hi


def _traced(make, n: int, adjacency: str, delta: float, xtol: float = XTOL) -> tuple[float, int, list[float]]:
    """A fresh get_epsilon with the number of loose looks (reports at rel_tol 0.1) and phase 2's probe points."""
    looks: list[float] = []
    pts: list[float] = []
    rep, probe = A.ShuffleAccountant._report, S.probe

    def traced_report(self, eps, rel_tol, *a, **k):
        if rel_tol == S._LOOK_REL:
            looks.append(eps)
        return rep(self, eps, rel_tol, *a, **k)

    def traced_probe(acc, e, *a, **k):
        pts.append(e)
        return probe(acc, e, *a, **k)

    A.ShuffleAccountant._report, S.probe = traced_report, traced_probe
    try:
        clear_caches()
        e = float(ShuffleAccountant(make(), n, adjacency).get_epsilon(delta, xtol=xtol))
    finally:
        A.ShuffleAccountant._report, S.probe = rep, probe
    return e, len(looks), pts


# cells where phase 1 follows bot vs x (its upper-only value, the body's Chernoff value, up to 2x its bracket) while
# x vs bot makes get_delta's value: the look replaces get_delta at r1 (3 -> 2 probes)
LOOK_CELLS = [
    (2.0, 10**4, 1e-6),
    (2.0, 10**5, 1e-6),
    (2.0, 10**5, 1e-4),
]


@pytest.mark.parametrize("sigma0, n, delta", LOOK_CELLS)
@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, counts the search's probes on session 33's brackets
def test_look_cells_against_bisection(sigma0, n, delta):
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e, looks, pts = _traced(make, n, "zero_out", delta)
    assert looks == 1 and len(pts) == 2  # (the look ran, and two get_delta calls closed the bracket)
    assert e in pts  # the answer is an evaluated point ...
    assert _fresh_delta(make, n, "zero_out", e) <= delta  # ... certified by a fresh accountant
    # the reference: a bisection on fresh get_delta values at xtol / 10 from a bracket of +-3 xtol around the answer
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert e >= lo  # (get_delta(lo) > delta: no answer below lo is certified by the bisection's values)
    assert e <= hi * (1 + XTOL)  # within xtol of the crossing
    assert _fresh_delta(make, n, "zero_out", e * (1 - XTOL)) > delta


def test_loose_lower_end_cell():
    """BMG(0.4, 1.2), n = 1e3, zero-out (a BMG whose phase 1 is led by a far-tail law): the look runs, and the answer
    is certified by a fresh accountant and within xtol of a fresh bisection's crossing."""
    make = lambda: BlanketMixedGaussian(0.4, 1.2, 1)  # noqa: E731
    e, looks, _ = _traced(make, 1000, "zero_out", 1e-6)
    assert looks == 1
    assert _fresh_delta(make, 1000, "zero_out", e) <= 1e-6
    lo, hi = _bisect(make, 1000, "zero_out", 1e-6, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)


def test_replace_through_bot():
    """Replace-one of the Gaussian randomizer (through bot): its search starts from the zero-out answer at delta / 2
    (which takes the look); its answer is certified by a fresh accountant and within xtol of the crossing."""
    make = lambda: GaussianRandomizer(2.0, 1)  # noqa: E731
    e, looks, _ = _traced(make, 10**4, "replace", 1e-6)
    assert looks >= 1
    assert _fresh_delta(make, 10**4, "replace", e) <= 1e-6
    assert _fresh_delta(make, 10**4, "replace", e * (1 - XTOL)) > 1e-6


@settings(max_examples=8, deadline=None)
@given(st.floats(min_value=-9.0, max_value=-3.0))
def test_random_targets_certified(log10_delta):
    delta = 10.0**log10_delta
    make = lambda: GaussianRandomizer(2.0, 1)  # noqa: E731
    e, _, _ = _traced(make, 10**4, "zero_out", delta)
    assert 0.0 < e < 700.0 and math.isfinite(e)
    assert _fresh_delta(make, 10**4, "zero_out", e) <= delta
    assert _fresh_delta(make, 10**4, "zero_out", e * (1 - XTOL)) > delta


@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, counts the search's probes on session 33's brackets
def test_snap_still_closes_a_bracket(monkeypatch):
    """The snap of docs/accountant.md §8 step 6 (a point moved to the bound that closes the bracket, 0.95 xtol from the
    other end), with and without the look: GaussianRandomizer(1.5), n = 1e4, delta = 1e-4 (the look runs) and
    BMG(0.5, 2), n = 100, delta = 1e-3 (plain laws, no look). The answer's lower neighbour is the snapped point, and
    both ends are certified by fresh accountants."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    # (**) session 28, eps28: with the look's middle (docs/accountant.md §8.8) the first probe of the look cell lands
    # 0.4 xtol from the root and the next closes the bracket without a snap; the snap's scenario runs on the look's
    # upper value, the rule before
    monkeypatch.setattr(S, "MIDDLE", False)
    for make, n, delta, n_looks in ((lambda: GaussianRandomizer(1.5, 1), 10**4, 1e-4, 1),
                                    (lambda: BlanketMixedGaussian(0.5, 2.0, 1), 100, 1e-3, 0)):
        e, looks, pts = _traced(make, n, "zero_out", delta)
        assert looks == n_looks and len(pts) == 2
        assert any(abs(p - e * (1 - 0.95 * XTOL)) <= 1e-9 * e for p in pts)
        assert _fresh_delta(make, n, "zero_out", e) <= delta
        assert _fresh_delta(make, n, "zero_out", e * (1 - 0.95 * XTOL)) > delta
