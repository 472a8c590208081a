"""The cap cover's interval refuted by leg B to its closing level (docs/accountant.md §9.16,
``limits.VIA_BOTTOM_COVER_TARGET``).

References independent of the rule: (1) the level against the cover's own test and against 50-digit arithmetic of the
inequality it refutes; (2) the cover's outcome (closed or not, and its split) with the switch off, cell by cell;
(3) main's floats with the switch off; (4) an independent zero-out accountant's tight legs (rel_tol 1e-3) at the
reported split: the reported upper value must lie above their chain's lower value; (5) the reviewers' n = 2
quadrature of the replace delta (tests/_rev30b_replace_reference.py). Counts of leg certifications, no timings.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math
import random

import mpmath
import pytest
from _main_floats34 import switch

from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from sharpdp.shuffle.accountant.via_bottom_cover import closing_level
from tests.test_rep36_settle import _chain_lower, _gauss  # (one definition: the independent zero-out chain)


def test_closing_level_refutes_the_cover_test():
    """Every lower value of B below the level fails the cover's test (``ViaBottom._interval_at_least_1``) with every
    lower value of A at most a_up, and fails the exact inequality (50 digits); 0 where a_up >= 1."""
    rng = random.Random(39)
    for _ in range(3000):
        a = rng.choice([0.0, rng.uniform(0.0, 5.0), rng.uniform(0.0, 1e-3)])
        a_up = rng.choice([rng.uniform(0.0, 1.0), 1.0 - 10.0 ** rng.uniform(-15, -1), 0.0])
        eps = a + rng.uniform(0.0, 3.0)
        level = closing_level(a, a_up)
        assert level > 0.0
        for b in (level, math.nextafter(level, 0.0), level * rng.uniform(0.0, 1.0)):
            for a_lo in (a_up, a_up * rng.uniform(0.0, 1.0), 0.0):
                assert not ViaBottom._interval_at_least_1(eps, a, eps - a if (eps - a) + a >= eps else
                                                          math.nextafter(eps - a, math.inf), a_lo, b)
                with mpmath.workdps(50):
                    assert mpmath.mpf(a_lo) + mpmath.exp(mpmath.mpf(a)) * mpmath.mpf(b) < 1
    assert closing_level(0.3, 1.0) == 0.0 and closing_level(0.3, 1.5) == 0.0 and closing_level(800.0, 0.5) == 0.0


# (σ0, n, ε): the cover closes (σ0 = 0.46, n = 1e3, ε <= 1: the cap), fails after the rule's refutation (n = 1e5), or
# fails where the rule does not refute (σ0 = 0.46, n = 1e3, ε = 2)
COVER = [(0.46, 1000, 0.01), (0.46, 1000, 0.5), (0.46, 1000, 1.0), (0.46, 1000, 2.0), (0.46, 100000, 0.1),
         (0.46, 100000, 2.0), (0.46, 100000, 8.0), (1.0, 100000, 0.1)]


class _Count:
    """The zero-out accountant's report calls of a ViaBottom (the legs it certifies, the rule's targeted leg B too)."""

    def __init__(self, zo):
        self.zo, self.calls = zo, 0

    def __getattr__(self, name):
        return getattr(self.zo, name)

    def _report(self, *args, **kw):
        self.calls += 1
        return self.zo._report(*args, **kw)


def _cover(s, n, eps, on, monkeypatch):
    if not on:
        switch(monkeypatch, "VIA_BOTTOM_COVER_TARGET", False)
    vb = _gauss(s, n)._bottom
    vb.bottom = counted = _Count(vb.bottom)
    out = vb._cap_closed(eps, 1e-2)
    monkeypatch.undo()
    return out, counted.calls


@pytest.mark.parametrize("s, n, eps", COVER)
def test_cover_outcome_as_with_the_switch_off(s, n, eps, monkeypatch):
    """The cover closes (the cap (1, 1), the same split and legs' values) or fails exactly where it does with the switch
    off; where it fails the rule certifies no more legs than the cover of before."""
    on, c_on = _cover(s, n, eps, True, monkeypatch)
    off, c_off = _cover(s, n, eps, False, monkeypatch)
    assert (on is None) == (off is None)
    if on is not None:
        assert (on.f, on.upper, on.lower, on.leg_a.lower, on.leg_b.lower) == \
            (off.f, off.upper, off.lower, off.leg_a.lower, off.leg_b.lower) and on.upper == on.lower == 1.0
    else:
        assert c_on <= c_off


def test_cover_refuted_by_one_targeted_leg(monkeypatch):
    """GaussianRandomizer(0.46), n = 1e5, ε = 2 (leg B at e2 = 2 ~1e-21, the cover's leg B there ~0.8 s at PROBE_TOL):
    the rule's one targeted leg B in place of the cover's three engine legs."""
    on, c_on = _cover(0.46, 100000, 2.0, True, monkeypatch)
    off, c_off = _cover(0.46, 100000, 2.0, False, monkeypatch)
    assert on is None and off is None and c_on == 1 and c_off == 3


# main's brackets (72b04806, `python bench/bench_regimes.py --full --families e`), the cells where the search after a
# refuted cover, reading a smaller leg cache, reports other floats
MAIN = [(0.46, 100000, 0.5, (0.43111795063841474, 0.43331880120458316)),
        (0.46, 100000, 1.0, (0.32039207405462855, 0.32143980908657677))]


@pytest.mark.parametrize("s, n, eps, main", MAIN)
def test_switch_off_gives_main_floats(s, n, eps, main, monkeypatch):
    """``VIA_BOTTOM_COVER_TARGET = False``: main's brackets, bit for bit."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "VIA_BOTTOM_COVER_TARGET", False)
    assert _gauss(s, n).get_delta_bounds(eps) == main


@pytest.mark.parametrize("s, n, eps, main", MAIN + [(0.46, 100000, 2.0, (0.21168674765700574, 0.2125265016911842))])
def test_moved_cells_certified_within_rel_tol_and_near_main(s, n, eps, main, monkeypatch):
    """The rule on: the bracket meets rel_tol, its upper value lies above the chain of an independent zero-out
    accountant's tight legs at the reported split, and within 1e-5 of main's upper value."""
    switch(monkeypatch, "VIA_BOTTOM_CHORD", False)  # (**) session 41, rep41: docs/accountant.md §9.19 moves this cell
    acc = _gauss(s, n)
    r = acc.report(eps)
    assert r.upper - r.lower <= acc.rel_tol * r.lower
    assert r.upper >= _chain_lower(s, n, eps, r) * (1 - 1e-12)
    assert abs(r.upper / main[1] - 1.0) <= 1e-5, r.upper / main[1] - 1


@pytest.mark.parametrize("s, eps", [(0.46, 0.1), (0.46, 2.0), (1.0, 0.5)])
def test_gaussian_n2_above_the_quadrature_reference(s, eps):
    """n = 2, the rule on: the reported upper value lies above the brute-force replace delta (quadrature error below
    5e-4 relative: a margin of 1e-3)."""
    from tests._rev30b_replace_reference import replace_delta_n2

    ref = float(replace_delta_n2(s, eps)[0])
    up = _gauss(s, 2).get_delta_bounds(eps)[1]
    assert up >= ref * (1 - 1e-3), (up, ref)
