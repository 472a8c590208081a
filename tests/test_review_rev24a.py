"""Review rev24a of eps24: get_epsilon's loose look at the phase-1 root (docs/accountant.md §8.4) and the
calibrations' start (docs/calibration.md §3, step 0).

Attacks, each against a reference independent of the code under review:

* the look's bracket [l, u] at r1 is a certified bracket of D_up(r1): at n = 2 against the exact D_2 of the
  Gaussian randomizer by an mpmath quadrature split at every kink of its integrand (the closed-form stop-loss
  E[(L + c)_+] of tests/_bmg_reference.py, outer integral over y); at n >= 10 against the plain engine at rel_tol
  1e-5 (its upper value);
* case 1 (l > delta makes r1 a lower end without get_delta): get_delta(r1) of a fresh accountant really exceeds
  delta, and the answer is certified by a fresh accountant and within xtol of the crossing (fresh get_delta at
  answer (1 - xtol) > delta);
* ``_refit``'s decision rule on a stub accountant (the three cases of §8.4, the lower values it hands to ``lows``);
* a sweep (slow) of Gaussian and BMG cells, n 2..1e6, delta 1e-3..1e-12, xtol 1e-3 and 1e-5: certified at the
  answer, tight within xtol;
* the calibrations: the certified value at the returned parameters (a fresh accountant) is <= delta, and the
  answers agree with those of the code before eps24 (e81037e, values stored below).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import SimpleNamespace

import mpmath as mp
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.round_cache import clear_caches

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bmg_reference import Pair  # noqa: E402  (closed-form stop-loss and L of the Gaussian pair)
from _main_floats34 import main_floats, switch  # noqa: E402

XTOL = 1e-3


# ----------------------------------------------------------------------------------------------------------------
# helpers


def _fresh(make, n: int, eps: float, rel_tol: float | None = None) -> ShuffleAccountant:
    clear_caches()
    if rel_tol is None:
        return ShuffleAccountant(make(), n, "zero_out")
    return ShuffleAccountant(make(), n, "zero_out", rel_tol=rel_tol)


def _fresh_delta(make, n: int, eps: float, adjacency: str = "zero_out") -> float:
    clear_caches()
    return float(ShuffleAccountant(make(), n, adjacency).get_delta(eps))


def _traced(make, n: int, delta: float, xtol: float = XTOL, adjacency: str = "zero_out"):
    """A fresh get_epsilon and its looks: (answer, [(r1, lower, upper, law_index)])."""
    looks = []
    rep = A.ShuffleAccountant._report

    def traced(self, eps, rel_tol, *a, **k):
        r = rep(self, eps, rel_tol, *a, **k)
        if rel_tol == S._LOOK_REL:
            looks.append((eps, float(r.lower), float(r.upper), r.law_index))
        return r

    A.ShuffleAccountant._report = traced
    try:
        clear_caches()
        e = float(ShuffleAccountant(make(), n, adjacency).get_epsilon(delta, xtol=xtol))
    finally:
        A.ShuffleAccountant._report = rep
    return e, looks


def _d2_gauss(s: float, eps: float, dps: int = 25) -> float:
    """Exact D_2(eps) of GaussianRandomizer(s) (zero-out, max over the two orders): D_2 = g0/2 E[(L_1 + L_2)_+]
    + (1 - g0) E[L_+], the inner expectation the closed-form stop-loss of tests/_bmg_reference.py and the outer one an
    mpmath quadrature split at the kinks of the integrand (where the stop-loss changes form: L(y) = e^eps - g0 and
    e^eps for x vs bot, 1 + L = 0 and g0 e^eps for bot vs x) and at y = 0 (the blanket's |y|). The reference's own
    d2() does not split there and is off by up to ~1e-4 relative at eps = 10 (checked at 40 digits)."""
    with mp.workdps(dps):
        vals = []
        for kind in ("xb0", "bx0"):
            p = Pair(0.0, s, eps, kind)
            sm, g0, ee = p.s, p.g0, p.ee
            pts = {-1 - 40 * sm, -1 - 12 * sm, mp.mpf(-1), mp.mpf(0), 1 - 12 * sm, mp.mpf(1), 1 + 12 * sm,
                   1 + 40 * sm}
            for ratio in ((2 * ee - g0) / g0, 2 * ee / g0, (2 - ee * g0) / (ee * g0), 2 / (ee * g0)):
                if ratio > 1:  # ratio = phi_s(y - 1) / phi_s(|y| + 1) = e^{2 y / s^2} at the kink
                    pts.add(sm * sm * mp.log(ratio) / 2)
            ys = sorted(pts)
            fine = [a + (b - a) * k / 4 for a, b in zip(ys[:-1], ys[1:]) for k in range(4)] + [ys[-1]]
            dens = lambda y: mp.npdf(abs(y) + 1, 0, sm) / g0  # noqa: E731
            inner = mp.quad(lambda y: dens(y) * p.stoploss(p.L(y)), fine, maxdegree=8)
            vals.append(g0 / 2 * inner + (1 - g0) * p.d1())
        return float(max(vals))


# ----------------------------------------------------------------------------------------------------------------
# the look's bracket against exact values at n = 2


def test_d2_reference_converged():
    """The kink-split quadrature is converged (25 vs 40 digits, 4 vs 16 sub-intervals agree to 1e-12): stored values
    of the review's 40-digit run (s = 1, eps = 10: 5.10560403461161e-7; s = 1.5, eps = 10: 7.70121598273349e-15)."""
    assert _d2_gauss(1.0, 10.0) == pytest.approx(5.10560403461161e-7, rel=1e-12)
    assert _d2_gauss(1.5, 10.0) == pytest.approx(7.70121598273349e-15, rel=1e-12)


# (sigma0, delta): n = 2 cells where the look runs (phase 1 led by x vs bot on the far-tail path); l <= delta in all
N2_LOOKS = [(0.7, 1e-3), (1.2, 1e-4), (1.5, 1e-6), (2.0, 1e-5)]


@pytest.mark.parametrize("sigma0, delta", N2_LOOKS)
def test_look_bracket_against_quadrature_n2(sigma0, delta, monkeypatch):
    # (**) session 37, eps37: the few-user rule (docs/accountant.md §8.15) takes phase 1 at n = 2 without a look; the
    # look is tested here with it off, the rule's answers at these cells in tests/test_eps37_few_users.py
    switch(monkeypatch, "EPS_FEW_USERS", False)
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e, looks = _traced(make, 2, delta)
    assert len(looks) == 1
    r1, lo, up, _ = looks[0]
    ref = _d2_gauss(sigma0, r1)
    assert lo <= ref * (1 + 1e-9) and up >= ref * (1 - 1e-9), (lo / ref, up / ref)
    # the answer: certified by a fresh accountant, and the exact D_2 there is <= delta too; xtol-tight
    assert _fresh_delta(make, 2, e) <= delta
    assert _d2_gauss(sigma0, e) <= delta
    assert _fresh_delta(make, 2, e * (1 - XTOL)) > delta


# ----------------------------------------------------------------------------------------------------------------
# case 1 on the engine: a loose lower value above delta makes r1 a lower end


# (sigma0, n, delta): cells where the look's lower value exceeds delta (found by the review's sweep)
# ((1.0, 1000, 1e-6) left the list when the look was skipped where phase 1's law takes the closed form at r1,
# docs/accountant.md §8.4: there is no look there any more; the sweep below still certifies its answer)
CASE1 = [(1.5, 10, 1e-6), (0.5, 100, 1e-9)]


@pytest.mark.parametrize("sigma0, n, delta", CASE1)
def test_case1_lower_end(sigma0, n, delta, monkeypatch):
    switch(monkeypatch, "EPS_FEW_USERS", False)  # (**) session 37, eps37: no look where §8.15's rule runs (n = 100)
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e, looks = _traced(make, n, delta)
    assert len(looks) == 1
    r1, lo, up, _ = looks[0]
    assert lo > delta  # (case 1 ran)
    # the lower value is below the engine's upper value at rel_tol 1e-4 (a certified upper value of D_up(r1))
    assert lo <= float(_fresh(make, n, r1, 1e-4)._report(r1, 1e-4).upper)
    # what the rule concludes: no eps <= r1 is certified by a fresh accountant
    assert _fresh_delta(make, n, r1) > delta
    assert _fresh_delta(make, n, r1 * (1 - 10 * XTOL)) > delta
    assert e > r1
    assert _fresh_delta(make, n, e) <= delta
    assert _fresh_delta(make, n, e * (1 - XTOL)) > delta


# ----------------------------------------------------------------------------------------------------------------
# _refit's decision rule on a stub accountant (docs/accountant.md §8.4, cases 1-3)


class _Stub:
    """What _refit asks of the accountant: the look's report (lower, upper, law), get_delta's report's law."""

    n = 10  # (**) session 28, eps28: _refit reads n (the walk of docs/accountant.md §8.8 runs at n >= 1e7 only)

    def __init__(self, lower: float, upper: float, law: int, led_law: int = 0) -> None:
        self.look = SimpleNamespace(lower=lower, upper=upper, law_index=law)
        self.led_law = led_law
        self.calls: list[tuple[float, float]] = []

    def _report(self, eps: float, rel_tol: float):
        self.calls.append((eps, rel_tol))
        return self.look

    def report(self, eps: float):
        return SimpleNamespace(law_index=self.led_law)


def _run_refit(stub: _Stub, fun_value: float, delta: float = 1e-6, r1: float = 0.5, k1: float = -2.0):
    evals: list[float] = []

    def fun(e: float) -> float:
        evals.append(e)
        return fun_value

    lows: list[float] = [0.0]
    out = S._refit(stub, fun, delta, 0.1, 2.0, r1, k1, XTOL, lambda e: [(1.0, None), (1.0, None)], 0,
                   look=True, lows=lows)
    return out, evals, lows


def test_refit_case1_lower_end_without_get_delta():
    delta = 1e-6
    stub = _Stub(2e-6, 3e-6, 0)
    (lo, hi, x2, _, pts), evals, lows = _run_refit(stub, fun_value=0.5 * delta)
    assert stub.calls == [(0.5, S._LOOK_REL)]
    assert evals == []  # no get_delta at r1
    assert (lo, hi) == (0.5, 2.0)  # r1 the lower end, never the upper one
    assert 2e-6 in lows  # the certified lower value rules out the answer 0
    assert x2 is None or 0.5 < x2 < 2.0


def test_refit_case2_get_delta_decides_r1():
    """The look's bracket straddles delta (l <= delta < u) and puts r1 within reach: get_delta decides r1's side; a
    value <= delta makes r1 the upper end (the look's upper value above delta must not make it a lower end)."""
    for fun_value, ends in ((0.999e-6, (0.1, 0.5)), (1.002e-6, (0.5, 2.0))):
        stub = _Stub(0.99e-6, 1.001e-6, 0)
        (lo, hi, _, _, _), evals, lows = _run_refit(stub, fun_value=fun_value)
        assert evals == [0.5]
        assert (lo, hi) == ends
        assert 0.99e-6 in lows


def test_refit_case2_other_law_within_half_xtol(monkeypatch):
    """The look names another law than phase 1's: get_delta at r1 only within 0.5 xtol of the root (beyond, the
    refit on that law's upper-only values, here a constant stand-in, gives phase 2's first point)."""
    # (**) session 28, eps28: the reach is tested on the look's upper value (the rule before docs/accountant.md §8.8,
    # which feeds the model the bracket's geometric middle: tests/test_eps28_search.py)
    monkeypatch.setattr(S, "MIDDLE", False)
    delta = 1e-6
    ld = math.log(-math.log(delta))
    for dist, evaluated in ((0.3, True), (1.0, False)):
        u = math.exp(-math.exp(ld - 2.0 * dist * XTOL))  # (f1 = ld - log(-log u) = 2 dist xtol: reach dist xtol)
        monkeypatch.setattr(S, "upper_value", lambda *a, u=u: u)
        monkeypatch.setattr(S, "phase1_h_ratio", lambda *a: 0.125)
        stub = _Stub(0.5 * delta, u, 1)
        stub.n, stub.rel_tol, stub.threads = 10, 1e-2, 1
        (lo, hi, x2, _, _), evals, _ = _run_refit(stub, fun_value=u)
        assert evals == ([0.5] if evaluated else [])
        if not evaluated:
            assert (lo, hi) == (0.1, 2.0) and x2 is not None and 0.5 < x2 < 2.0  # (u > delta: the root above r1)


def test_refit_case3_no_bracket_end_at_r1(monkeypatch):
    """l <= delta and u far from delta (phase 1's law): r1 is no bracket end, phase 2 starts one model step off."""
    # (**) session 28, eps28: the model step from the look's upper value (the rule before docs/accountant.md §8.8)
    monkeypatch.setattr(S, "MIDDLE", False)
    delta = 1e-6
    stub = _Stub(0.5e-6, 0.6e-6, 0)
    (lo, hi, x2, k, pts), evals, lows = _run_refit(stub, fun_value=0.0)
    assert evals == []
    assert (lo, hi) == (0.1, 2.0)
    assert x2 == pytest.approx(S.sharpened_root(delta, 0.5, 0.6e-6, -2.0), rel=1e-15) and x2 < 0.5
    assert k == -2.0 and len(pts) == 1
    # within 2 xtol (reach <= _LOOK_REACH xtol) get_delta is evaluated at r1 after all
    u = math.exp(-math.exp(math.log(-math.log(delta)) - 2.0 * 1.5 * XTOL))
    stub = _Stub(0.5e-6, u, 0)
    (lo, hi, _, _, _), evals, _ = _run_refit(stub, fun_value=0.9e-6)
    assert evals == [0.5] and (lo, hi) == (0.1, 0.5)


# ----------------------------------------------------------------------------------------------------------------
# the search's contract on fresh accountants: certified at the answer, within xtol of the crossing


def _gauss(s):
    return lambda: GaussianRandomizer(s, 1)


def _bmg(g, s):
    return lambda: BlanketMixedGaussian(g, s, 1)


# (make, n, delta, xtol, adjacency): look cells of the review's sweep (cases 1 and 3 both, n = 2..1e6, delta
# 1e-3..5e-15 (GaussianRandomizer(0.45), n = 1e6: the answer 29.93 near eps_tau = 33.4, where the release sampler's
# charge is 2 % of delta), xtol 1e-3 and 1e-5), replace-one through bot, BMG replace
SWEEP = [
    (_gauss(0.5), 10, 1e-6, XTOL, "zero_out"),
    (_gauss(0.45), 10**6, 5e-15, XTOL, "zero_out"),
    (_gauss(1.0), 10**6, 1e-3, XTOL, "zero_out"),
    (_gauss(1.0), 10**5, 1e-12, XTOL, "zero_out"),
    (_gauss(1.5), 10, 1e-3, XTOL, "zero_out"),
    (_gauss(2.0), 10**5, 1e-6, XTOL, "zero_out"),
    (_bmg(0.4, 1.2), 10**5, 1e-6, XTOL, "zero_out"),
    (_bmg(0.2, 0.8), 1000, 1e-6, XTOL, "zero_out"),
    (_gauss(1.0), 1000, 1e-6, 1e-5, "zero_out"),
    (_gauss(1.0), 1000, 1e-6, XTOL, "zero_out"),
    (_gauss(2.0), 10**4, 1e-6, 1e-5, "zero_out"),
    (_bmg(0.4, 1.2), 1000, 1e-6, 1e-5, "zero_out"),
    (_gauss(2.0), 1000, 1e-6, XTOL, "replace"),
    (_bmg(0.4, 1.2), 1000, 1e-6, XTOL, "replace"),
]


@pytest.mark.slow
@pytest.mark.parametrize("make, n, delta, xtol, adjacency", SWEEP)
def test_sweep_certified_and_tight(make, n, delta, xtol, adjacency):
    e, looks = _traced(make, n, delta, xtol, adjacency)
    assert 0.0 < e < 700.0
    assert _fresh_delta(make, n, e, adjacency) <= delta
    assert _fresh_delta(make, n, e * (1 - xtol), adjacency) > delta
    if adjacency == "zero_out":
        assert len(looks) <= 1  # (none where phase 1's law takes the closed form at r1, docs/accountant.md §8.4)
        for r1, lo, _, _ in looks:  # a case-1 lower end: no eps <= r1 certified by a fresh accountant
            if lo > delta:
                assert _fresh_delta(make, n, r1, adjacency) > delta


def test_atom_laws_take_no_look():
    """k-RR and PrivUnit (atom laws): no look; the answer certified and tight on fresh accountants."""
    from sharpdp.shuffle import PrivUnit, RandomizedResponse

    for make, n, delta in ((lambda: RandomizedResponse(10, 4.0), 10**4, 1e-6),
                           (lambda: PrivUnit(0.6, 0.2, 3), 1000, 1e-6)):
        e, looks = _traced(make, n, delta)
        assert looks == []
        assert _fresh_delta(make, n, e) <= delta < _fresh_delta(make, n, e * (1 - XTOL))


# ----------------------------------------------------------------------------------------------------------------
# the calibrations' start (docs/calibration.md §3, step 0)


# (function, n, eps, delta, before eps24 (e81037e): sigma0, gamma, evaluations); the review's run of both versions
# over n 1e2..1e5 x eps 0.01..4 x delta 1e-6, 1e-9 (62 cells): answers identical where the start picked the first
# base, else Err_1 within +0.007 % .. -0.10 %, never more evaluations, every answer certified
CALIB = [
    ("bmg", 10**4, 0.1, 1e-6, 0.958035807, 0.1979170119670429, 10),
    ("bmg", 1000, 0.1, 1e-9, 1.5308939, 0.4543587419967985, 10),
    ("bmg", 1000, 0.1, 1e-6, 1.33113265, 0.40258382176951096, 10),
    ("gauss", 10**4, 0.01, 1e-6, 4.58455953, 0.0, 5),
]


@pytest.mark.parametrize("fn, n, eps, delta, s_old, g_old, evals_old", CALIB)
def test_calibration_start(fn, n, eps, delta, s_old, g_old, evals_old, monkeypatch):
    # (**) session 34, tail34: un-nested, the calibration's start pinned on main's brackets: with docs/accountant_tail.md
    # §44.1 (looser certified brackets, within 0.8 rel_tol) calibrate_bmg(1e3, 0.1) ends at an error 2.2e-4 relative
    # above this pin (allowed 2e-4): the switches off
    main_floats(monkeypatch)
    # (**) session 35, mid35: the calibration's start on main's steps (docs/accountant_tail.md §46 moves the brackets)
    for name in ("END_ATOM_SNAP", "ATOM_SPACING_SNAP", "LOWER_ONLY_SETTLED"):
        switch(monkeypatch, name, False)
    from sharpdp.shuffle.calibration.bmg import _bmg_err, calibrate_bmg_report
    from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report

    clear_caches()
    rep = calibrate_gaussian_report(n, eps, delta) if fn == "gauss" else calibrate_bmg_report(n, eps, delta, 1)
    r = rep.randomizer
    clear_caches()
    assert float(ShuffleAccountant(r, n, "zero_out", rel_tol=1e-2).get_delta_bounds(eps)[1]) <= delta
    assert rep.evaluations <= evals_old
    if fn == "gauss":
        assert r.sigma0 <= s_old * (1 + 1e-6)
    else:
        err = lambda s, g: _bmg_err(math.log(s), math.log(g) - math.log1p(-g), 1)  # noqa: E731
        assert err(r.sigma0, r.gamma) <= err(s_old, g_old) * (1 + 2e-4)
