"""docs/calibration.md §21 (limits.CAL49_FIRST_RHO, CAL49_ONE_LOOSE, CAL49_CHEAP_STEP; calibration/few_evals.py,
calibration/cheap_cert.py): fewer evaluations of calibrate_gaussian at n = 1e9 and at §17.3's (1e8, 0.002) cell.

References: the margins and gates recomputed by hand on searches holding recorded points; a scripted accountant for the
cheap call's two outcomes; for the calibrations, a fresh accountant at the report's rel_tol (certification), a fresh
accountant's lower value a little below the answer (refutation) and session 48's answer recorded from a switch-off run
(docs/calibration.md §21.4; the optimality tolerance 1e-3 in sigma0^2, §3.1)."""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.calibration import gaussian as G
from sharpdp.shuffle.calibration import search as S
from sharpdp.shuffle.calibration.cheap_cert import CheapSearch
from sharpdp.shuffle.calibration.few_evals import first_rho, loose_rel, one_loose
from sharpdp.shuffle.calibration.search import CERT_REL_TOL, Search

from _main_floats34 import SESSION48, switch

DELTA = 1e-6
# session 48's answers (switches off; docs/calibration.md §21.4's table, float.hex-equal in every run there)
SIGMA_1E9_0001 = float.fromhex("0x1.c68ede25f4f7fp-1")  # 0.8878087445577733
SIGMA_1E8_0002 = 0.9942260291248306


def _search(n, eps, pts=(), cls=Search, t_box=None):
    s = cls(lambda x, t: GaussianRandomizer(math.exp(x), 1), (lambda x, t: -40.0 * x,),
            lambda x, t: math.exp(2.0 * x), n, eps, DELTA, "zero_out", False, "test", t_box)
    s.pts = list(pts)
    return s


def test_switches_at_main_and_listed():
    assert limits.CAL49_FIRST_RHO is True and SESSION48["CAL49_FIRST_RHO"] is False  # (on: docs/calibration.md §21.7)
    assert limits.CAL49_ONE_LOOSE == 0.0 and SESSION48["CAL49_ONE_LOOSE"] == 0.0
    assert limits.CAL49_CHEAP_STEP is False and SESSION48["CAL49_CHEAP_STEP"] is False
    assert limits.CAL49_LOOSE_REL == 0.5 and SESSION48["CAL49_LOOSE_REL"] == 0.0
    assert limits.CAL49_N == 10**9


def test_first_rho(monkeypatch):
    """0.5 log(1 + 1e-2) off, below CAL49_N, off the loose search or on the BMG's search; 0.5 log(1 + 0.02) on at
    n = 1e9, eps <= 0.01 (calibrate_gaussian)."""
    old, new = 0.5 * math.log1p(0.01), 0.5 * math.log1p(0.02)
    s9, s8, tight = _search(10**9, 0.001), _search(10**8, 0.001), _search(10**9, 0.5)
    assert s9.loose and s8.loose and not tight.loose and s9.cert_rel == 0.02
    switch(monkeypatch, "CAL49_FIRST_RHO", False)
    assert first_rho(s9, CERT_REL_TOL) == old
    switch(monkeypatch, "CAL49_FIRST_RHO", True)
    assert first_rho(s9, CERT_REL_TOL) == pytest.approx(new, rel=1e-15)
    assert first_rho(s8, CERT_REL_TOL) == old and first_rho(tight, CERT_REL_TOL) == old
    assert first_rho(_search(10**9, 0.001, t_box=(-9.0, 0.0)), CERT_REL_TOL) == old  # (the BMG's search)


def test_loose_rel(monkeypatch):
    """The loose search's rel_tol: 0.3 off and below CAL49_N; the switch's value at n >= 1e9 (the search's model points
    only: its certifying rel_tol stays 0.02); a bad value is refused."""
    switch(monkeypatch, "CAL49_LOOSE_REL", 0.0)
    assert _search(10**9, 0.001).search_rel == 0.3 and loose_rel(10**9, 0.3, True) == 0.3
    switch(monkeypatch, "CAL49_LOOSE_REL", 0.5)
    s9 = _search(10**9, 0.001)
    assert s9.search_rel == 0.5 and s9.cert_rel == 0.02
    assert _search(10**8, 0.001).search_rel == 0.3 and _search(10**7, 0.001).search_rel == 0.1
    assert _search(10**9, 0.5).search_rel == 0.01  # (not the loose search)
    assert _search(10**9, 0.001, t_box=(-9.0, 0.0)).search_rel == 0.3  # (the BMG's two-dimensional search)
    assert loose_rel(10**9, 0.3, False) == 0.3
    for bad in (-0.1, 1.0, math.nan):
        switch(monkeypatch, "CAL49_LOOSE_REL", bad)
        with pytest.raises(ValueError, match="CAL49_LOOSE_REL"):
            loose_rel(10**9, 0.3, True)


def test_one_loose_gate(monkeypatch):
    """Stage 1 stops after one loose point only with the rule, §20's step on, n >= CAL49_N, a slope model, one point
    and its estimate within the tolerance of the target; a bad tolerance is refused."""
    target = math.log(DELTA) - 0.5 * math.log1p(0.01)
    near = (-0.12, None, target + 0.2, False, 1.18e-6, 1.21e-6)
    far = (-0.13, None, target + 0.3, False, 1.3e-6, 1.4e-6)
    s = _search(10**9, 0.001, [near])
    s.safe_slope = lambda x: -43.0
    switch(monkeypatch, "CAL48_SAFE_STEP", True)
    switch(monkeypatch, "CAL49_ONE_LOOSE", 0.0)
    assert not one_loose(s, target)
    switch(monkeypatch, "CAL49_ONE_LOOSE", 0.25)
    assert one_loose(s, target)
    assert not one_loose(_search(10**9, 0.001, [far]), target)
    s_far = _search(10**9, 0.001, [far])
    s_far.safe_slope = s.safe_slope
    assert not one_loose(s_far, target)  # (0.3 > 0.25)
    s_two = _search(10**9, 0.001, [far, near])
    s_two.safe_slope = s.safe_slope
    assert not one_loose(s_two, target)
    s8 = _search(10**8, 0.001, [near])
    s8.safe_slope = s.safe_slope
    assert not one_loose(s8, target)
    assert not one_loose(_search(10**9, 0.001, [near]), target)  # (no slope model)
    switch(monkeypatch, "CAL48_SAFE_STEP", False)
    assert not one_loose(s, target)
    for bad in (-0.1, math.nan, math.inf):
        switch(monkeypatch, "CAL49_ONE_LOOSE", bad)
        with pytest.raises(ValueError, match="CAL49_ONE_LOOSE"):
            one_loose(s, target)


def test_cheap_step_keeps_an_undecided_call(monkeypatch):
    """A scripted accountant: the rel_tol-0.1 call straddles delta. Off: dropped and the point evaluated again at 0.02
    (two calls, the 0.02 bracket kept); on: kept as a failed certifying point (one call)."""
    calls = []

    def fake(r, n, adj, eps, delta, rel=CERT_REL_TOL, skip=math.inf):
        calls.append(rel)
        return ((0.98e-6, 1.009e-6) if rel == 0.1 else (0.995e-6, 0.997e-6)) + ("get_delta_bounds", math.inf)

    monkeypatch.setattr(S, "closed_then_full", fake)
    loose = (0.0, None, math.log(1.0e-6), False, 0.99e-6, 1.02e-6)  # (3 % wide: the cheap gate opens)
    for on, want_calls, want_up in ((False, [0.1, 0.02], 0.997e-6), (True, [0.1], 1.009e-6)):
        switch(monkeypatch, "CAL49_CHEAP_STEP", on)
        calls.clear()
        s = _search(10**8, 0.002, [loose], cls=CheapSearch)
        s.evaluate(0.001, None, True)
        assert calls == want_calls
        assert s.pts[-1][3] and s.pts[-1][0] == 0.001 and s.pts[-1][5] == want_up and len(s.pts) == 2
        assert (s.best is not None) == (not on) and s.rel_of == {}


def _certified_and_near(rep, n, eps, reference):
    """rep's sigma0 certified by a fresh accountant at its rel_tol (the same bracket), a sigma0 2e-3 below refuted by a
    fresh accountant's lower value, and sigma0^2 within 1e-3 of the reference (either side)."""
    s = rep.randomizer.sigma0
    lo, up = (float(v) for v in ShuffleAccountant(GaussianRandomizer(s, 1), n, rel_tol=rep.rel_tol)
              .get_delta_bounds(eps))
    assert up <= DELTA and (lo, up) == tuple(float(v) for v in rep.delta_bounds)
    lo_b, _ = ShuffleAccountant(GaussianRandomizer(s * (1.0 - 2e-3), 1), n, rel_tol=0.02).get_delta_bounds(eps)
    assert lo_b > DELTA
    assert abs((s / reference) ** 2 - 1.0) <= 1e-3


def test_n1e9_two_evaluations_certified(monkeypatch):
    """calibrate_gaussian(1e9, 0.001, 1e-6) with §17's start, §20's step and both n = 1e9 rules: one loose and one
    certifying evaluation (4 with every switch off), certified, near session 48's answer."""
    for name in ("CAL46_START_MAX", "CAL48_SAFE_STEP", "CAL49_FIRST_RHO"):
        switch(monkeypatch, name, True)
    switch(monkeypatch, "CAL49_ONE_LOOSE", 0.25)
    rep = G.calibrate_gaussian_report(10**9, 0.001, DELTA)
    assert rep.evaluations == 2 and rep.rel_tol == 0.02
    _certified_and_near(rep, 10**9, 0.001, SIGMA_1E9_0001)


def test_cheap_step_at_1e8_0002(monkeypatch):
    """calibrate_gaussian(1e8, 0.002, 1e-6) with §17's start and §20's step (§17.3: its rel_tol-0.02 call, 0.8 s)
    and the rule: no rel_tol-0.02 call, the answer certified at rel_tol 0.1, near session 48's answer."""
    rels = []
    orig = S.closed_then_full

    def traced(r, n, adj, eps, delta, rel=CERT_REL_TOL, skip=math.inf):
        rels.append(rel)
        return orig(r, n, adj, eps, delta, rel, skip)

    monkeypatch.setattr(S, "closed_then_full", traced)
    for name in ("CAL46_START_MAX", "CAL48_SAFE_STEP", "CAL49_CHEAP_STEP"):
        switch(monkeypatch, name, True)
    rep = G.calibrate_gaussian_report(10**8, 0.002, DELTA)
    assert 0.02 not in rels and rep.rel_tol == 0.1 and rep.evaluations == len(rels)
    _certified_and_near(rep, 10**8, 0.002, SIGMA_1E8_0002)
