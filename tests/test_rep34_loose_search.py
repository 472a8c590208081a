"""The split search through bot on loose legs, from the legs' model first (docs/accountant.md §9.11).

References independent of the rule: (1) main's floats with the rule's switch off (``limits.VIA_BOTTOM_LOOSE_SEARCH``);
(2) exact synthetic legs and a 20001-split brute-force minimum; (3) an independent zero-out accountant's legs at the
reported split (tight brackets: the reported upper value must lie above their chain's lower value); (4) the reviewers'
n = 2 quadrature of the replace delta (tests/_rev30b_replace_reference.py). Counts of leg certifications, no timings.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.via_bottom import ViaBottom
from _main_floats34 import switch  # noqa: E402
from tests.test_rep33_window_model import _Legs, _brute, _chain  # (exact synthetic legs, one definition)


def _run(legs, eps, on, monkeypatch):
    switch(monkeypatch, "VIA_BOTTOM_LOOSE_SEARCH", on)
    vb = ViaBottom(legs, ((0,), (1,)))
    return vb.report(eps, 1e-2), legs.calls


@pytest.mark.parametrize("ca, a, cb, b, eps", [(0.4, 3.0, 0.3, 9.0, 1.0), (1e-3, 6.0, 1e-2, 20.0, 1.5),
                                               (0.2, 1.5, 0.05, 4.0, 2.5), (1e-6, 9.0, 1e-4, 30.0, 0.7)])
def test_log_linear_legs_the_model_first_finds_the_vertex_with_fewer_legs(ca, a, cb, b, eps, monkeypatch):
    """Exactly log-linear legs: the model's vertex is the least split, so the report is the closed-form minimum to 1e-9
    (never below the brute force), with fewer leg certifications than the search of before (a mutation that always
    falls back to it fails the count; one that reports the model's first split fails the value)."""
    e1 = math.log(a * ca / ((b + 1.0) * cb * math.exp(-b * eps))) / (a + b + 1.0)
    m = _chain(_Legs(ca, a, cb, b), eps, e1)
    r, calls = _run(_Legs(ca, a, cb, b), eps, True, monkeypatch)
    r0, calls0 = _run(_Legs(ca, a, cb, b), eps, False, monkeypatch)
    assert m <= _brute(_Legs(ca, a, cb, b), eps) * (1 + 1e-12)
    assert m * (1 - 1e-12) <= r.upper <= m * (1 + 1e-9), r.upper / m - 1
    assert calls < calls0, (calls, calls0)


@pytest.mark.parametrize("qa, qb", [(0.8, 0.0), (0.0, 6.0), (1.5, 4.0), (-0.3, 2.0)])
@pytest.mark.parametrize("eps", [0.8, 1.6])
def test_curved_legs_never_below_the_minimum_and_within_0p1_percent(qa, qb, eps, monkeypatch):
    """Curved logarithms (the model is only a place to look): at or above the brute-force minimum (every value is one
    split's chain), within 0.1 % of it and not above the search of before by more than 0.05 %."""
    p = (0.3, 2.5, 0.1, 8.0)
    m = _brute(_Legs(*p, qa=qa, qb=qb), eps)
    up = _run(_Legs(*p, qa=qa, qb=qb), eps, True, monkeypatch)[0].upper
    before = _run(_Legs(*p, qa=qa, qb=qb), eps, False, monkeypatch)[0].upper
    assert up >= m * (1 - 1e-12)
    assert up <= m * 1.001, up / m - 1
    assert up <= before * 1.0005, up / before - 1


def test_optimum_at_the_end_f0(monkeypatch):
    """Leg A nearly flat and leg B steep toward small e1: the least split is e1 = 0 (A(0) + B(eps)); the model's step
    lands near the end and tries it: the report is that split's chain, in fewer certifications than before."""
    legs = _Legs(0.3, 0.2, 0.2, 1.5)
    eps = 0.5
    assert _chain(legs, eps, 0.0) == pytest.approx(_brute(legs, eps), rel=1e-12)
    r, calls = _run(_Legs(0.3, 0.2, 0.2, 1.5), eps, True, monkeypatch)
    r0, calls0 = _run(_Legs(0.3, 0.2, 0.2, 1.5), eps, False, monkeypatch)
    assert r.upper == pytest.approx(_chain(legs, eps, 0.0), rel=1e-12)
    assert r.upper <= r0.upper
    assert calls < calls0, (calls, calls0)


def _gauss(s, n):
    return ShuffleAccountant(GaussianRandomizer(s, 1), n, adjacency="replace")


# main's brackets (81992f2; the family-e map and bench/accountant_values.py)
MAIN = [(1.0, 1000, 1.0, (0.0039874846477264275, 0.003994801178282095)),
        (2.0, 1000, 0.5, (3.910093885546219e-09, 3.91520366184287e-09))]


@pytest.mark.parametrize("s, n, eps, main", MAIN)
def test_switch_off_gives_main_floats(s, n, eps, main, monkeypatch):
    """``VIA_BOTTOM_LOOSE_SEARCH = False``: main's brackets, bit for bit."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "VIA_BOTTOM_CHORD", False)  # (**) session 41, rep41: docs/accountant.md §9.19 moves this cell
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    switch(monkeypatch, "VIA_BOTTOM_LOOSE_SEARCH", False)
    assert _gauss(s, n).get_delta_bounds(eps) == main


# (σ0, n, ε, main's upper value): cells where the rule reports another split (docs/accountant.md §9.11)
MOVED = [(1.0, 10, 1.0, 0.38120483592935195), (1.0, 1000, 0.1, 0.10079335452802271),
         (2.0, 1000, 0.5, 3.91520366184287e-09), (1.0, 1000, 2.0, 0.0003757089006639851),
         (2.0, 10, 0.01, 0.24030594109249287), (4.6, 1000, 0.01, 0.004098928949260307),
         (2.0, 30, 1.2275830601045354, 0.0002982128280806392)]


@pytest.mark.parametrize("s, n, eps, main_up", MOVED)
def test_moved_cells_certified_within_rel_tol_and_near_main(s, n, eps, main_up, monkeypatch):
    """The rule on: the bracket meets rel_tol, its upper value lies above the chain of an independent zero-out
    accountant's tight legs (rel_tol 1e-3) at the reported split (so it bounds that split's chain), and within +0.1 %
    of main's upper value (tightness: the search of before was not better by more)."""
    # (**) session 35, mid35: main's steps on the legs' sum laws (docs/accountant_tail.md §46.2 moves them, within rel_tol)
    switch(monkeypatch, "END_ATOM_SNAP", False)
    acc = _gauss(s, n)
    r = acc.report(eps)
    assert r.upper - r.lower <= acc.rel_tol * r.lower
    e1 = float(r.terms["epsilon_split"])
    e2 = ViaBottom._second(eps, e1)
    zo = ShuffleAccountant(GaussianRandomizer(s, 1), n, adjacency="zero_out", rel_tol=1e-3)
    a, b = zo._report(e1, 1e-3, only=(0,)), zo._report(e2, 1e-3, only=(1,))
    assert r.upper >= (a.lower + math.exp(e1) * b.lower) * (1 - 1e-12)
    assert r.upper <= main_up * 1.001, r.upper / main_up - 1


@pytest.mark.parametrize("s, eps", [(1.0, 1.0), (2.0, 0.5), (2.0, 2.0), (4.6, 0.3)])
def test_gaussian_n2_above_the_quadrature_reference(s, eps):
    """n = 2, the rule on: every reported upper value lies above the brute-force replace delta (quadrature error below
    5e-4 relative: a margin of 1e-3)."""
    from tests._rev30b_replace_reference import replace_delta_n2

    ref = float(replace_delta_n2(s, eps)[0])
    up = _gauss(s, 2).get_delta_bounds(eps)[1]
    assert up >= ref * (1 - 1e-3), (up, ref)
