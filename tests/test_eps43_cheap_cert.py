"""docs/calibration.md §15 (calibration/cheap_cert.py: a certifying evaluation tried first at a cheaper rel_tol) and
docs/accountant.md §8.23.1 (mirror_law's MIRROR_N, MIRROR_CHARGE read from limits)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import mirror_law as ml
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.calibration import search as cs
from sharpdp.shuffle.calibration.cheap_cert import CheapSearch, cheap_gate
from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import machine_same, switch


# -- §8.23.1: the mirror rule's two constants live in limits (a switch reaches the rule)
def test_mirror_constants_read_from_limits(monkeypatch):
    assert ml.MIRROR_N == limits.MIRROR_N == 10**6 and ml.MIRROR_CHARGE == limits.MIRROR_CHARGE == 1e-3
    (g, a), (g1, b) = laws_for(RandomizedResponse(3, 1.0), 0.0, "zero_out")
    r = certify(a, float(g), 12, 1e-2, 1, Bracket())
    m = ml.Mirrors(n=12, rel_tol=1e-2)
    m.put(float(g), a, r)
    assert m.bracket(float(g1), b) is None  # (n = 12 < MIRROR_N)
    switch(monkeypatch, "MIRROR_N", 1)
    assert ml.MIRROR_N == 1
    got = m.bracket(float(g1), b)
    assert got is not None and got.lower <= got.upper
    want = certify(b, float(g1), 12, 1e-2, 1, Bracket())  # (the image law certified itself: the brackets meet)
    assert max(got.lower, want.lower) <= min(got.upper, want.upper)
    switch(monkeypatch, "MIRROR_CHARGE", 0.0)  # (every moved bracket widens by its charges: none is taken)
    assert m.bracket(float(g1), b) is None


# -- §15.1: the gate
def _pt(lo: float, up: float, fine: bool = False) -> tuple:
    return (0.0, None, math.log(up), fine, lo, up)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lo=st.floats(1e-9, 1e-5), w=st.floats(0.0, 0.2), n=st.sampled_from([10**7, 10**8, 10**9]),
       loose=st.booleans(), on=st.booleans(), fine_last=st.booleans())
def test_gate_is_the_last_loose_width(monkeypatch, lo, w, n, loose, on, fine_last):
    monkeypatch.setattr(limits, "CAL43_CHEAP_CERT", on)
    pts = [_pt(lo, lo * (1.0 + w))] + ([_pt(lo, lo * 3.0, True)] if fine_last else [])
    width_ok = (lo * (1.0 + w) - lo) <= limits.CAL43_CHEAP_WIDTH * lo
    want = on and loose and limits.CAL_LOOSE_REL_TOL_N <= n <= limits.CAL43_CHEAP_N_MAX and width_ok
    assert cheap_gate(pts, n, loose) == want
    assert not cheap_gate([], n, loose) and not cheap_gate([_pt(lo, 2 * lo, True)], n, loose)


# -- §15.1: the search's calls, on a fake accountant whose bracket narrows with rel_tol around a known truth
class _Fake:
    """delta(sigma) = 1e-6 (sigma / 0.9)^-30, bracketed [truth (1 - w/2), truth (1 + w/2)], w = rel_tol / 2."""

    def __init__(self):
        self.calls: list[tuple[float, float]] = []

    def __call__(self, r, n, adjacency, epsilon, delta, rel_tol=1e-2, skip_above=math.inf):
        self.calls.append((float(r.sigma0), float(rel_tol)))
        truth = 1e-6 * (r.sigma0 / 0.9) ** -30
        return truth * (1 - rel_tol / 4), truth * (1 + rel_tol / 4), "get_delta_bounds", math.inf


def _search(monkeypatch, fake):
    monkeypatch.setattr(cs, "closed_then_full", fake)
    return CheapSearch(lambda x, t: GaussianRandomizer(math.exp(x), 1), (lambda x, t: 0.0,),
                       lambda x, t: math.exp(2 * x), 10**8, 0.01, 1e-6, "zero_out", False, "test")


@pytest.mark.parametrize("excess, decided", [(0.97, True), (1.05, True), (0.999, False), (1.001, False)])
def test_cheap_first_kept_only_where_it_decides(monkeypatch, excess, decided):
    """A loose point 1 % wide opens the gate; the cheap bracket (rel_tol 0.1: +-2.5 %) is kept where it decides the
    point against delta, else dropped and the point evaluated at the usual certifying rel_tol (0.02)."""
    switch(monkeypatch, "CAL43_CHEAP_CERT", True)
    monkeypatch.setattr(limits, "CAL_LOOSE_REL_TOL", 0.04)  # (the fake's loose bracket: 2 % wide)
    fake = _Fake()
    s = _search(monkeypatch, fake)
    s.evaluate(math.log(0.9), None, False)
    x = math.log(0.9) - math.log(excess) / 30.0  # (the truth there: excess x delta)
    s.evaluate(x, None, True)
    rels = [c[1] for c in fake.calls]
    if decided and excess < 1.0:  # (cheap upper 0.97 x 1.025 < 1: certified at rel_tol 0.1)
        assert rels == [0.04, 0.1] and s.rel_of == {(x, None): 0.1} and s.best is not None and s.best[4] <= 1e-6
    elif decided:  # (cheap lower 1.05 x 0.975 > 1: refuted, as the dearer evaluation would refute it)
        assert rels == [0.04, 0.1] and s.best is None and s.pts[-1][4] > 1e-6
    else:  # (the point's value is the usual evaluation's: the cheap one left no trace in the model)
        truth = 1e-6 * (math.exp(x) / 0.9) ** -30
        assert rels == [0.04, 0.1, s.cert_rel] and s.rel_of == {} and len(s.pts) == 2
        assert s.pts[-1][3] and s.pts[-1][4:] == (truth * (1 - s.cert_rel / 4), truth * (1 + s.cert_rel / 4))
    assert s.full == s.count == len(rels)  # (every accountant call counted)


def test_switch_off_is_search(monkeypatch):
    switch(monkeypatch, "CAL43_CHEAP_CERT", False)
    fake = _Fake()
    s = _search(monkeypatch, fake)
    s.evaluate(0.0, None, False)
    s.evaluate(0.001, None, True)
    assert [c[1] for c in fake.calls] == [s.search_rel, s.cert_rel] and s.rel_of == {}


def test_calibration_at_1e8_certified_by_a_fresh_accountant(monkeypatch):
    """calibrate_gaussian(1e8, 0.01, 1e-6): the rule keeps the same sigma0 (its cheap bracket decides at the point the
    search aims at), the report's bracket is reproduced by a fresh accountant at the report's rel_tol 0.1, its upper
    value is <= delta, and it meets the switch-off certificate (rel_tol 0.02) at that sigma0."""
    n, eps, delta = 10**8, 0.01, 1e-6
    switch(monkeypatch, "CAL43_CHEAP_CERT", True)
    on = calibrate_gaussian_report(n, eps, delta)
    switch(monkeypatch, "CAL43_CHEAP_CERT", False)
    off = calibrate_gaussian_report(n, eps, delta)
    assert on.rel_tol == 0.1 and off.rel_tol == limits.CAL_CERT_REL_TOL_LOOSE
    assert abs(on.randomizer.sigma0 ** 2 / off.randomizer.sigma0 ** 2 - 1.0) <= 1e-3
    fresh = ShuffleAccountant(on.randomizer, n, rel_tol=on.rel_tol).get_delta_bounds(eps)
    assert machine_same([float(v) for v in fresh], list(on.delta_bounds))
    assert on.delta_bounds[1] <= delta
    if on.randomizer.sigma0 == off.randomizer.sigma0:
        assert max(on.delta_bounds[0], off.delta_bounds[0]) <= min(on.delta_bounds[1], off.delta_bounds[1])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(excess=st.floats(0.9, 1.1), cheap=st.floats(0.03, 0.3), width=st.floats(0.005, 0.08))
def test_cheap_first_property(monkeypatch, excess, cheap, width):
    """Over the truth's place against delta, the cheap rel_tol and the loose bracket's width: a certified point has a
    certified upper value <= delta from the call that is reported (its rel_tol in ``rel_of`` iff the cheap call gave
    it); the cheap call runs iff the gate opens, and is kept iff it decides; otherwise the point is Search's."""
    monkeypatch.setattr(limits, "CAL43_CHEAP_CERT", True)
    monkeypatch.setattr(limits, "CAL43_CHEAP_REL", cheap)
    monkeypatch.setattr(limits, "CAL_LOOSE_REL_TOL", 2.0 * width)  # (the fake's bracket is rel_tol / 2 wide)
    fake = _Fake()
    s = _search(monkeypatch, fake)
    s.evaluate(math.log(0.9), None, False)
    x = math.log(0.9) - math.log(excess) / 30.0
    s.evaluate(x, None, True)
    truth = 1e-6 * (math.exp(x) / 0.9) ** -30
    rels = [c[1] for c in fake.calls]
    lo_c, up_c = truth * (1 - cheap / 4), truth * (1 + cheap / 4)
    lo_l, up_l = 1e-6 * (1 - width / 2), 1e-6 * (1 + width / 2)  # (the loose point at sigma0 0.9: truth = delta)
    gate = (up_l - lo_l) <= limits.CAL43_CHEAP_WIDTH * lo_l
    decided = up_c <= 1e-6 or lo_c > 1e-6
    if not gate:
        assert rels == [2.0 * width, s.cert_rel] and s.rel_of == {}
    elif decided:
        assert rels == [2.0 * width, cheap] and s.rel_of == {(x, None): cheap}
    else:
        assert rels == [2.0 * width, cheap, s.cert_rel] and s.rel_of == {}
    if s.best is not None:
        assert s.best[4] <= 1e-6 and s.best[3] <= truth <= s.best[4]
    assert (s.best is not None) == (s.pts[-1][5] <= 1e-6)
