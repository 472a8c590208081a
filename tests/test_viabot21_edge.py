"""Replace-one through bot at a cliff of leg B (docs/accountant.md §9.5, "The edge"): the full split search
(`ViaBottom.report`) and get_epsilon's walk (`ViaBottom.decide` from a stale hint) end at the cliff's edge.

Reference: exact synthetic legs with a known minimum over splits. Leg A(e) = 0.5 e^{-2 e}; leg B(e) = 1e-40 for
e >= Z and 0.3 below Z (a jump of 39 orders of magnitude, as the Gaussian randomizer's leg B at small n). Every
split with e2 >= Z has the value A(eps - e2) + e^{e1} 1e-40, least at e2 = Z; every split with e2 < Z is above
0.3. So the least value over splits is A(eps - Z) (to 1e-39), and a split e2 = Z + d has A(eps - Z) e^{2 d}."""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom import ViaBottom

Z = 0.4137  # the cliff of leg B (not on the split search's grids)
GAIN = 0.005  # (ViaBottom.SHRINK_GAIN, written out: a mutation of the class attribute must not move the test)


class _CliffBottom:
    """A zero-out 'accountant' stand-in with the exact legs above (brackets of width 0)."""

    rel_tol = 1e-2
    sampler_tau = 0.0
    eps_tau = math.inf
    _closed_only = False

    def _report(self, epsilon, rel_tol, only=None, negligible=0.0):
        v = 0.5 * math.exp(-2.0 * epsilon) if only[0] == 0 else (1e-40 if epsilon >= Z else 0.3)
        return AccountantReport(epsilon, v, v)

    def get_epsilon(self, delta, *, xtol=1e-3):  # (not used here)
        raise ValueError("not used")


def _vb() -> ViaBottom:
    return ViaBottom(_CliffBottom(), ((0,), (1,)))


def _least(eps: float) -> float:
    return 0.5 * math.exp(-2.0 * (eps - Z))


@pytest.mark.parametrize("eps", [0.9, 1.7, 3.1])
def test_full_search_ends_at_the_edge(eps):
    """Within GAIN = 0.5 % of the least value (the bisection toward the edge is skipped where leg A at the worse
    split shows it gains less, SHRINK_GAIN), never below it. Catches the refinement of before (bisection to
    0.000625 in f, skipped within 3 %)."""
    rep = _vb().report(eps, 1e-2)
    m = _least(eps)
    assert rep.upper >= m * (1 - 1e-12)
    assert rep.upper <= m * (1 + GAIN), (rep.upper / m - 1)


@pytest.mark.parametrize("eps", [0.9, 1.7, 3.1])
@pytest.mark.parametrize("stale", [1.3, 0.9])
def test_walk_from_a_stale_hint_ends_at_the_edge(eps, stale):
    """decide from a hint off the edge (the e2 of the full search times 1.3 or 0.9; target 0: never decided
    early, so its walk runs to the end) reaches the edge as the full search does. Catches a walk without the cliff
    bisection (it stops a walk step of 0.01 eps short of the edge: up to 6 % above)."""
    vb = _vb()
    vb.report(eps, 1e-2)  # (sets the hint)
    vb._hint = min(vb._hint * stale, 0.99 * eps)
    d = vb.decide(eps, 0.0)
    m = _least(eps)
    assert d >= m * (1 - 1e-12)
    assert d <= m * (1 + GAIN), (d / m - 1)


def test_bisection_from_past_the_edge():
    """_edge from a split just past the edge (leg B's share above EDGE) returns a split before it, within
    BEYOND_TOL in f; from a split whose neighbour SPLIT_TOL below is past the edge too, that split itself."""
    eps = 1.7
    vb = _vb()
    f_edge = 1.0 - Z / eps
    past = vb.split(eps, f_edge + 0.004, 1e-2)
    assert vb._past_cliff(past)
    got = vb._edge(eps, past, 1e-2)
    assert not vb._past_cliff(got) and 0.0 <= f_edge - got.f <= ViaBottom.BEYOND_TOL
    far = vb.split(eps, f_edge + 0.05, 1e-2)
    assert vb._edge(eps, far, 1e-2).f in (far.f, far.f - ViaBottom.SPLIT_TOL)
