"""Replace-one through bot: get_epsilon's target-deciding split search (docs/accountant.md §9.2) and the
calibration's learned gain (docs/accountant.md §6.10), checked against independent references: the exact
Gaussian mechanism's delta at n = 1, exhaustive split scans, brute-force minimisation, and the
accountant's own closed forms."""

import math

import pytest
from scipy.stats import norm

from _main_floats34 import switch

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.accountant.via_bottom import Split, ViaBottom
from sharpdp.shuffle.calibration.search import closed_then_full, decide_bounds


def exact_gauss_delta(eps: float, sigma: float, sens: float = 2.0) -> float:
    """delta(eps) of the Gaussian mechanism N(x, sigma^2), |x - x'| <= sens (Balle and Wang 2018, Theorem 8)."""
    a = sens / (2.0 * sigma)
    b = eps * sigma / sens
    return float(norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b))


def _bottom(sigma: float = 1.0, n: int = 1) -> ViaBottom:
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(sigma, 1), n, "replace")
    assert acc.via_bottom
    return acc._bottom


def test_epsilon_certified_by_its_own_split_and_tight_against_a_scan():
    delta = 1e-3
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(1.0, 1), 1, "replace")
    e = acc.get_epsilon(delta)
    # certified: the exact delta of the mechanism (n = 1: the Gaussian mechanism, sensitivity 2) is met
    assert exact_gauss_delta(e, 1.0) <= delta
    # the value get_epsilon's search entered into the memo is what get_delta reports there
    assert acc.get_delta(e) <= delta
    # the answer's split, recomputed on a fresh object (no cache, no memo), certifies it by itself
    e2 = acc._bottom._hint
    assert 0.0 < e2 < e
    assert _bottom().split(e, 1.0 - e2 / e, acc.rel_tol).upper <= delta
    # tight: no split of an exhaustive scan (f = 0.01 ... 0.99) certifies delta 1 % below the answer
    fresh = _bottom()
    assert min(fresh.split(0.99 * e, i / 100, acc.rel_tol).upper for i in range(1, 100)) > delta
    # and the bound there stays within a few per cent of the exact delta (the chain is tight at n = 1)
    assert acc.get_delta(e) <= 1.1 * exact_gauss_delta(e, 1.0)


@pytest.mark.parametrize("eps", [3.0, 6.0])
def test_decide_local_walk_against_an_exhaustive_scan(eps):
    vb = _bottom()
    full = vb.report(eps, 0.01).upper  # the full split search (it sets the hint)
    vb._hint *= 1.15  # a stale hint: the walk must find the optimum again
    d = vb.decide(eps, 0.0)  # target 0: never decided early, the whole walk runs
    scan = min(_bottom().split(eps, i / 200, 0.01).upper for i in range(1, 200))
    exact = exact_gauss_delta(eps, 1.0)
    assert exact <= d  # certified (every split's value bounds delta)
    assert d <= 1.001 * scan  # as good as an exhaustive scan of 199 splits
    assert d <= 1.001 * full  # and as the full search
    assert vb._hint == pytest.approx(eps - (1.0 - vb._hint / eps) * eps)


def test_decide_stops_at_the_first_split_below_the_target():
    vb = _bottom()
    vb.report(4.0, 0.01)
    h = vb._hint
    d = vb.decide(4.2, 1.0)  # every value is <= 1: the hint's split decides at once
    ref = _bottom().split(4.2, 1.0 - h / 4.2, 0.01).upper
    assert d == ref
    assert vb._hint == pytest.approx(h)


def _leg(e: float, v: float) -> AccountantReport:
    return AccountantReport(e, 0.0, v)


def test_vertex_of_log_linear_legs_against_brute_force():
    # A(e) = 3 e^{-a e}, B(e) = 0.5 e^{-b e}: the value A(e1 - x) + e^{e1 - x} B(e2 + x) at eps = e1 + e2
    a, b, e1, step = 7.0, 40.0, 1.3, 0.02
    A = lambda e: 3.0 * math.exp(-a * e)  # noqa: E731
    B = lambda e: 0.5 * math.exp(-b * e)  # noqa: E731
    # e2 a little off the optimum (a A(e1) = (b + 1) e^{e1} B(e2) there): the vertex is inside the window
    e2 = -math.log(a * A(e1) / ((b + 1.0) * math.exp(e1) * 0.5)) / b - 0.005

    def split(x: float) -> Split:
        return Split(0.0, 0.0, 0.0, e1 - x, _leg(e1 - x, A(e1 - x)), _leg(e2 + x, B(e2 + x)))

    x = ViaBottom._vertex(split(0.0), [split(step), split(-step)], step)
    grid = [-step + 2 * step * i / 20000 for i in range(20001)]
    xb = min(grid, key=lambda y: A(e1 - y) + math.exp(e1 - y) * B(e2 + y))
    assert x == pytest.approx(xb, abs=2 * step / 20000)
    # a missing neighbour: no model
    assert ViaBottom._vertex(split(0.0), [split(step)], step) is None


def test_closed_then_full_skip_rule(monkeypatch):
    # (**) session 39, eps39: docs/accountant.md §8.17 narrows this closed-form bracket below the target (it then decides
    # it); the skip rule's premise (a wide straddle) holds with both switches off
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)
    switch(monkeypatch, "FEW_OPEN_JUMP", False)
    rz = sh.BlanketMixedGaussian(0.3739, 1.6818, 1)
    acc = sh.ShuffleAccountant(rz, 10, "replace")
    lo_c, up_c = acc.closed_form_bounds(5.0)
    assert lo_c <= 1e-15 < up_c  # the closed forms straddle the target widely here
    # above skip_above: the closed-form bracket itself, no full evaluation
    lo, up, src, up_closed = closed_then_full(rz, 10, "replace", 5.0, 1e-15, skip_above=0.5 * up_c)
    assert (lo, up, src, up_closed) == (lo_c, up_c, "closed_form_bounds", up_c)
    # a target the closed forms decide: the same answer from both entry points
    assert decide_bounds(rz, 10, "replace", 5.0, 1e-13) == closed_then_full(rz, 10, "replace", 5.0, 1e-13)[:3]
    assert decide_bounds(rz, 10, "replace", 5.0, 1e-13)[2] == "closed_form_bounds"
