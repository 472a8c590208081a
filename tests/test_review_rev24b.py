"""Review rev24b of docs/accountant.md §9.6 (replace-one through bot: the probes' leg B to the decision's target, the
candidates' leg B at rel_tol 0.1 where it meets the absolute target, the reported split certified again as in §9.4).

References, independent of the split search: the floats the pre-§9.6 code (main e81037e) reported at the same cells
(computed with that code's via_bottom.py / via_bottom_cliff.py in a scratch package, pasted here), zero-out
accountants at a tighter rel_tol (1e-3) combined by the test's own chain (Lemma 9.1 of docs/accountant.md §9, rounded
outwards), a certified lower value of the least chain over every split from a fine grid of certified legs (both legs
non-increasing), the exact delta of the Gaussian mechanism at n = 1 (Balle and Wang 2018, "Improving the Gaussian
mechanism for differential privacy", Theorem 8) and a 2-D quadrature of one replace pair at n = 2."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.limits import U
from _main_floats34 import machine_same, main_floats, session47_floats, switch

TIGHT = 1e-3  # the independent legs' rel_tol (10x tighter than the accountants' default 1e-2)


def _acc(s: float, n: int, adjacency: str = "replace", rel_tol: float | None = None) -> ShuffleAccountant:
    kw = {} if rel_tol is None else {"rel_tol": rel_tol}
    return ShuffleAccountant(GaussianRandomizer(s, 1), n, adjacency, **kw)


def _second(eps: float, e1: float) -> float:
    e2 = eps - e1
    while Fraction(e1) + Fraction(e2) > Fraction(eps):
        e2 = math.nextafter(e2, 0.0)
    return e2


# (sigma0, n, rel_tol or None, eps) -> (lower, upper) of get_delta_bounds with the code before §9.6 (e81037e)
# (*) re-pinned, <= 1.6e-11 relative (4.6, n = 3: 1.5e-11 / 1.4e-13; the others <= 7.7e-14), and get_epsilon at
# (0.8, 10) 2.4e-16: the engine's tilt root found to 1e-10 relative by another iteration (docs/accountant_tail.md
# §25; any theta > 0 is valid, docs/accountant.md §3.4)
# (**) re-pinned after the compiled cells' exact empty intervals (docs/accountant_tail.md §29): nested in the old
# bracket, moved <= 1.7e-7 relative (2.0, n = 100: the upper value; the others <= 2.1e-10), and get_epsilon at
# (0.8, 10) 8.7e-13 smaller
# (***) re-pinned after §29 too, but not nested: (1.2881189441405103e-05, 1.288952449470254e-05) before, lower 8.3e-10
# and upper 7e-15 relative lower / higher now; the engine's step h moved (0.013281795067 -> 0.013281794912) with the
# clamp's values, so the grids differ (both brackets certified; they intersect)
BEFORE = [
    (2.0, 5, None, 2.585787200498299, (0.0003253023494845625, 0.0003260058240562562)),  # (*) (**)
    (3.0, 100, None, 0.11632668667954867, (0.009552729961855333, 0.009604795233528656)),  # (*) (**)
    (2.0, 30, None, 1.2275830601045354, (0.0002974079260728967, 0.0002982128280806392)),  # (*) (**)
    (1.0, 30, None, 4.969903154046876, (0.0018657494873030903, 0.0018673890182933036)),  # (**)
    (4.6, 3, 1e-3, 1.2822203566747, (1.2881189430704505e-05, 1.2889524494794221e-05)),  # (*) (***)
    (2.0, 2, None, 4.420255306107991, (3.3941256495892804e-06, 3.415180841964623e-06)),
    # (**) session 28, big28: nested in (3.994723141861649e-12, 3.997031569775476e-12) of before; the body passes'
    # quarter steps (docs/accountant_tail.md §31.2) change which passes the legs compute
    # (**) session 30, tail30: the lower value 1.8e-8 relative lower (was 3.994728254819622e-12; certified, the move
    # allowed by the brief): the shift charge's least split (docs/accountant_tail.md §34.2) takes the charged lower value
    # of the raised run where the second run on the lowered law ran before
    (2.0, 100, None, 3.0, (3.994728182601809e-12, 3.997018744697736e-12)),  # (**) a rough leg B ranks the best split
]


@pytest.mark.parametrize("s,n,rt,eps,want", BEFORE)
def test_get_delta_bounds_as_before_9_6(s, n, rt, eps, want, monkeypatch):
    """§9.6 claims the reported floats are those of before: at these cells (a random sweep's cheap ones, every one
    of ~100 swept cells matched) the bracket is the one of e81037e to the bit. (Caught: the best candidate reported
    with its rough leg B, not certified again as in §9.4, at sigma0 = 2, n = 100, eps = 3.)"""
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    # (**) session 33, rep33: the search §9.6 spoke of, the golden section alone (MODEL = False); with the legs' vertex
    # model of docs/accountant.md §9.10 the split moves at two cells, not nested (another split's chain): (3.0, 100)
    # (0.009556383052195786, 0.009604872827996228), (2.0, 30) (0.00029747085900494116, 0.00029821439853725603), upper
    # values +8.1e-6 and +5.3e-6 relative, lower values higher (tests/test_rep33_window_model.py)
    main_floats(monkeypatch)  # (**) session 34, tail34: un-nested, pins an older rule's floats on purpose: docs/accountant_tail.md §44's switches off
    # (**) session 35, mid35: main's steps on the legs' sum laws (docs/accountant_tail.md §46.2 moves them, within rel_tol)
    switch(monkeypatch, "END_ATOM_SNAP", False)
    # (**) session 37, rep37: the bisections of §9.5 toward leg B's cliff edge (docs/accountant.md §9.14 places the split
    # at the edge: 4 of these brackets move, each upper value lower, tests/test_rep37_closed_edge.py)
    switch(monkeypatch, "VIA_BOTTOM_CLOSED_EDGE", False)
    switch(monkeypatch, "REP49_SHRINK_STOP", False)  # (session 49, rep49: the bisection of before, stopped at its gain)
    acc = _acc(s, n, rel_tol=rt)
    acc._bottom.MODEL = False
    lo, up = acc.get_delta_bounds(eps)
    assert machine_same((float(lo), float(up)), want), (lo, up, want)  # (**) session 42, lead: MACHINE_REL


def _chain(a, b, e1):
    w = math.exp(e1)
    return (a.lower + w * (1 - 4 * U) * b.lower) * (1 - 8 * U), (a.upper + w * b.upper) * (1 + 8 * U)


def _floor_and_chain(s, n, eps, e1, k=20, tight=TIGHT):
    """A certified lower value of min over splits of A(e1) + e^{e1} B(eps - e1) (grid of k + 1 first legs, legs
    non-increasing between grid points), and the bracket of the chain at e1, from zero-out legs at ``tight``."""
    zo = _acc(s, n, "zero_out", rel_tol=tight)
    e1s = [eps * i / k for i in range(k + 1)]
    a = [zo._report(e, tight, only=(0,)) for e in e1s]
    b = [zo._report(_second(eps, e), tight, only=(1,)) for e in e1s]
    floor = min((a[i + 1].lower + math.exp(e1s[i]) * (1 - 4 * U) * b[i].lower) * (1 - 8 * U) for i in range(k))
    return floor, _chain(zo._report(e1, tight, only=(0,)), zo._report(_second(eps, e1), tight, only=(1,)), e1)


@pytest.mark.parametrize("s,n,eps", [(3.0, 10, 0.02),
                                     *(pytest.param(*c, marks=pytest.mark.slow)
                                       for c in [(1.0, 2, 0.05), (1.0, 2, 6.0), (2.0, 3, 0.5), (2.0, 10, 2.0)])])
def test_upper_above_every_split_and_bracket_meets_the_tight_chain(s, n, eps):
    """(a) The reported upper value is >= a certified lower value of the least chain over all splits (the bound
    cannot be below what the legs allow), and the reported bracket of the chain at the reported split meets that
    chain's bracket from legs at rel_tol 1e-3 (the §9 meaning of the bracket kept after §9.6's re-certification)."""
    r = _acc(s, n).report(eps)
    assert r.upper < 1.0  # (the cell exercises the split search, not the cap)
    e1 = float(r.terms["epsilon_split"])
    floor, (clo, cup) = _floor_and_chain(s, n, eps, e1)
    assert r.upper >= floor
    assert r.lower <= cup and r.upper >= clo, (r.lower, r.upper, clo, cup)


def _exact_gauss(eps: float, sigma: float, sens: float = 2.0) -> float:
    a, b = sens / (2.0 * sigma), eps * sigma / sens
    return float(norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b))


@pytest.mark.parametrize("s", [0.7, 1.5, 4.0])
@pytest.mark.parametrize("eps", [1e-6, 1e-3, 3.0, 9.0])
def test_n1_exact_gaussian_at_edge_epsilons(s, eps):
    """n = 1 is the Gaussian mechanism with sensitivity 2: the upper value is never below its exact delta (eps
    near 0 and where the exact delta is small)."""
    lo, up = _acc(s, 1).get_delta_bounds(eps)
    assert up >= _exact_gauss(eps, s) * (1 - 1e-9)
    assert 0.0 <= lo <= up <= 1.0


def _replace_pair_n2(eps: float, s: float, x2: float, m: int = 401) -> float:
    """delta(eps) of the shuffled pair x1 = -1 vs x1' = 1 with the second user at x2, n = 2 (trapezoid on the
    ordered plane: the unordered density is the symmetrised one / 2); a lower value of the mechanism's delta."""
    L = 1.0 + 12.0 * s
    y = np.linspace(-L, L, m)
    h = y[1] - y[0]
    w = np.full(m, h)
    w[0] = w[-1] = h / 2
    y1, y2 = np.meshgrid(y, y, indexing="ij")

    def f(v, mu):
        return norm.pdf(v, mu, s)

    p = f(y1, -1) * f(y2, x2) + f(y2, -1) * f(y1, x2)
    q = f(y1, 1) * f(y2, x2) + f(y2, 1) * f(y1, x2)
    return 0.5 * float(w @ np.maximum(p - math.exp(eps) * q, 0.0) @ w)


@pytest.mark.parametrize("s,eps", [(1.0, 0.5), (2.0, 0.3), (2.0, 1.5)])
def test_n2_above_a_quadrature_of_one_replace_pair(s, eps):
    """(a) n = 2: the upper value is >= delta of one replace pair (x1 = -1 vs 1, x2 = 1: the largest of x2 in
    {-1, 0, 1}) by quadrature (grid error <= 6e-5 at m = 401, checked against m = 1201 and 3001 while writing this
    test; the bound is 1.4-1.9x above it at these cells)."""
    true_lo = _replace_pair_n2(eps, s, 1.0) - 2e-4
    lo, up = _acc(s, 2).get_delta_bounds(eps)
    assert up >= true_lo


@pytest.mark.parametrize("s,n,rt,delta,want", [(0.46, 3, None, 1e-6, 29.42568643038464),
                                               # (**) session 28, eps28: 7.384929417605322 -> 7.385086305505525: the
                                               # through-bot search's first guess is the zero-out answer, whose look
                                               # now feeds the model its bracket's middle (docs/accountant.md §8.8);
                                               # certified (fresh upper 0.0099771 <= 1e-2) and within xtol (fresh lower
                                               # at answer (1 - xtol) 0.0100502 > 1e-2)
                                               (0.8, 10, None, 1e-2, 7.385086305505525)])  # (*) (**) see BEFORE
def test_get_epsilon_as_before_9_6(s, n, rt, delta, want, monkeypatch):
    """get_epsilon's answers at these cells are those of e81037e to the bit (a random sweep of get_epsilon cells,
    sigma0 0.46-3, n 2-1e5, delta 1e-2-1e-9: every one matched)."""
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    # (**) session 37, eps37: the through-bot search's first guess, the zero-out answer at n = 10, is the few-user
    # rule's (docs/accountant.md §8.15): 7.385086305505525 -> 7.384919106667878, certified and within xtol
    # (tests/test_eps37_few_users.py)
    switch(monkeypatch, "EPS_FEW_USERS", False)
    switch(monkeypatch, "VIA_BOTTOM_CLOSED_EDGE", False)  # (**) session 37, rep37: §9.14's edge (answers lower: tighter)
    # (**) session 40, eps40: §8.19's lower few-user upper values move the answers (29.42568643038464 -> 29.425686430371403,
    # 7.385086305505525 -> 7.383783222466109: lower, each certified by the search's fresh get_delta)
    switch(monkeypatch, "FEW_MULTI_JUMP", False)
    session47_floats(monkeypatch)  # (**) session 48: §9.24's end splits and §76's exponentials on (the answer moves)
    assert _acc(s, n, rel_tol=rt).get_epsilon(delta) == want


def test_reported_bracket_is_the_9_4_chain_where_a_rough_leg_ranked(monkeypatch):
    """At sigma0 = 2, n = 100, eps = 3 a candidate's rough leg B (rel_tol 0.1, within its absolute target) differs
    from its rel_tol leg B: the reported bracket is still the chain of an independent zero-out accountant's legs at
    rel_tol at the reported split, leg B to the absolute target of §9.4 (or to rel_tol alone after the contract).
    (Caught: the best candidate reported with its rough leg B, not certified again.)"""
    s, n, eps, rel = 2.0, 100, 3.0, 1e-2
    switch(monkeypatch, "VIA_BOTTOM_BUDGET", False)  # (**) session 35, rep35: pins the reported split's legs at rel_tol of §9.4 (docs/accountant.md §9.12's switch off)
    r = _acc(s, n).report(eps)
    e1 = float(r.terms["epsilon_split"])
    e2, w = _second(eps, e1), math.exp(e1)
    zo = _acc(s, n, "zero_out")
    a = zo._report(e1, rel, only=(0,))
    neg = 0.1 * rel * a.lower / (w * (1 + 4 * U))
    chains = [((a.upper + w * b.upper) * (1 + 8 * U), (a.lower + w * b.lower) * (1 - 8 * U))
              for b in (zo._report(e2, rel, only=(1,), negligible=neg), zo._report(e2, rel, only=(1,)))]
    assert any((r.upper, r.lower) == c for c in chains), (r.upper, r.lower, chains)


@pytest.mark.parametrize("excess,kept", [(-1e-6, True), (1e-6, False)])
def test_rough_leg_acceptance_at_its_threshold(excess, kept):
    """(c) The candidates' rough leg B (§9.6) is kept exactly where its bracket is at most the absolute target t =
    ABS_SHARE rel_tol A_lo / (e^{e1} (1 + 4u)) wide (its upper value above t here): a rough leg of width
    t (1 - 1e-6) is kept, one of width t (1 + 1e-6) is replaced by leg B at rel_tol. The legs at rel_tol 0.1 are
    made synthetic (their upper value, lower value = upper - width). (Caught: the width test dropped, the rough leg
    kept whatever its width; kept at width <= 2 t; the rough leg never tried.)"""
    from sharpdp.shuffle.accountant.results import AccountantReport
    s, n, eps, f, rel = 2.0, 100, 0.5, 0.6, 1e-2
    vb = _acc(s, n)._bottom
    e1 = f * eps
    w = math.exp(e1)
    t = vb.ABS_SHARE * rel * vb.leg(0, e1, rel).lower / (w * (1 + 4 * U))
    true_report = vb.bottom._report

    def report(e, rel_tol, only=None, negligible=0.0, **kw):
        r = true_report(e, rel_tol, only=only, negligible=negligible, **kw)
        if rel_tol == 0.1 and only == vb.legs[1]:
            assert r.upper > t  # (the width test decides, not 'upper below t')
            return AccountantReport(e, r.upper - t * (1 + excess), r.upper, terms={"synthetic": True})
        return r

    vb.bottom._report = report
    c = vb.split(eps, f, rel, rough_b=True, guess=False)
    assert ("synthetic" in c.leg_b.terms) == kept
    assert c.leg_b.upper < t or c.leg_b.upper - c.leg_b.lower <= t or not kept


def test_cliff_cell_bracket_and_floor():
    """(c) At a cliff of leg B (sigma0 = 2, n = 2, eps = 7.1168: the reported split's leg B is far below its
    absolute target) the upper value is >= a certified lower value of the least chain over all splits and the
    bracket meets the chain at the reported split, from an independent zero-out accountant's legs at rel_tol 1e-2
    (legs at 1e-3 near the cliff cost minutes)."""
    s, n, eps = 2.0, 2, 7.1168
    r = _acc(s, n).report(eps)
    e1 = float(r.terms["epsilon_split"])
    floor, (clo, cup) = _floor_and_chain(s, n, eps, e1, k=8, tight=1e-2)
    assert floor <= r.upper < 1.0
    assert r.lower <= cup and r.upper >= clo, (r.lower, r.upper, clo, cup)


def test_privacy_profile_is_get_delta_bounds_through_bot():
    """(d) privacy_profile of a round bounded through bot is the upper value get_delta_bounds reports, at every
    sampled eps (fresh accountants: the profile's sweep and caches do not move the values)."""
    eps = np.array([0.25, 0.5, 1.0, 2.0])
    prof = _acc(2.0, 10).privacy_profile(eps)
    for e, p in zip(eps, prof):
        lo, up = _acc(2.0, 10).get_delta_bounds(float(e))
        assert p == up and lo <= p
