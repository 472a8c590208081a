"""Review rev29 of docs/accountant_tail.md §31.2 (``far_tail._body_passes``, ``BODY_LEAP`` = 4: after a body pass with
Body_lo > 0 whose gap exceeds BODY_LEAP times its share 0.3 rel_tol (Body_lo + J_lo), the next step is a quarter of
the pass's step instead of a half; "speed only": which grids run changes, the bracket is the min / max over the passes).

Where the rule fires (the x-vs-bot / bot-vs-x laws through ``certify_bigjump`` at rel_tol 1e-2, a spy on
``lattice_pass`` recording each round's steps). A scan of the regime map's BMG picks (11 (gamma, sigma0) at n = 1e5,
1e6, 1e7, 1e8; eps in {0.001, 0.01, 0.1, 1}), 120 random BMG cells (gamma in [0.005, 0.9], sigma0 in [0.35, 2.5],
n in {1e5, ..., 1e8}, eps in {0.001, ..., 1}), GaussianRandomizer(0.5 / 1 / 2, 1) at n = 1e5..1e8, eps 0.001..1 (both
laws) and 80 random Gaussian cells (sigma0 in [0.4, 4.6]): the quarter step ran in 11 BMG cells (all at eps <= 0.03,
where Body_lo > 0 and the first pass misses its share by > 4) and 10 Gaussian cells. In every BMG cell the bracket
with the rule equals the halving's (BODY_LEAP = inf) to the last digit; in two Gaussian cells (bot vs x: sigma0 = 1,
n = 1e6, eps = 0.01, and sigma0 = 0.586, n = 1e7, eps = 0.1) the rule's bracket is nested in the halving's (tighter:
the quarter step's pass beat the half step's); in none is it wider. The rule forced (BODY_LEAP = 0 and 1) on the 75
scanned cells with two or more body passes: 35 brackets move, every one intersects the rule's and the rel_tol 1e-3
bracket (scripts: /tmp/rev29/scan1.py, scan3.py of the review, not kept).

Attacks: (1) the rule on, off and at rel_tol 1e-3 (certified brackets of the same value: they must intersect, and
the finer one must lie inside the rule's where both are certified to their targets); (2) an independent reference:
the second-order Edgeworth estimate of the BMG's x-vs-bot divergence from the mechanism's densities
(tests/_rev29_bmg_reference.py) and of the Gaussian randomizer's (tests/_review28_gauss_reference.py), with the
tolerance three times the difference of its first and second orders plus 2e-4 (an estimate, not a bound);
(3) the rule pushed to every pass (BODY_LEAP = 0: a quarter step after every pass with Body_lo > 0; BODY_LEAP = 1):
the claim is that any step sequence stays certified, so these brackets must hold the reference too.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import pytest

from _review28_gauss_reference import d_up_edgeworth as gauss_edgeworth
from _rev29_bmg_reference import d_up_edgeworth as bmg_edgeworth
from _rev29_bmg_reference import params
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import main_floats, switch


def _run(mech, idx: int, n: int, eps: float, rel_tol: float = 1e-2):
    gamma, law = laws_for(mech, eps, "zero_out")[idx]
    return far_tail.certify_bigjump(law.shifted(up=True), float(gamma), n, rel_tol, 1)


def _spy(monkeypatch) -> list[list[float]]:
    """Each body-pass sequence's steps (one list per ``_body_passes`` call)."""
    seqs: list[list[float]] = []
    bp, lp = far_tail._body_passes, far_tail.lattice_pass

    def body_passes(*a, **k):
        seqs.append([])
        return bp(*a, **k)

    def lattice_pass(law, gamma, n, hb, *a, **k):
        seqs[-1].append(hb)
        return lp(law, gamma, n, hb, *a, **k)

    monkeypatch.setattr(far_tail, "_body_passes", body_passes)
    monkeypatch.setattr(far_tail, "lattice_pass", lattice_pass)
    return seqs


def _quartered(seqs: list[list[float]]) -> bool:
    return any(a == 4.0 * b for s in seqs for a, b in zip(s, s[1:]))


def _on_off_fine(monkeypatch, mech, idx: int, n: int, eps: float):
    """The brackets with the rule (a quarter step must run), with the halving only (none may) and at rel_tol 1e-3."""
    # (**) session 34, tail34: un-nested, §31.2's quarter step tested on main's body passes: docs/accountant_tail.md
    # §44's switches off (§44.1's stop ends some of these runs before any quarter step; its brackets against the
    # Edgeworth reference: tests/test_tail34_rules.py)
    # (**) session 36, tail36: main's floats need docs/accountant_tail.md §48's rules off
    switch(monkeypatch, "BODY_END_SNAP", False)
    switch(monkeypatch, "CAP_COARSE", 1.0)
    main_floats(monkeypatch)
    seqs = _spy(monkeypatch)
    on = _run(mech, idx, n, eps)
    assert _quartered(seqs), seqs
    seqs.clear()
    monkeypatch.setattr(far_tail, "BODY_LEAP", math.inf)
    off = _run(mech, idx, n, eps)
    assert not _quartered(seqs)
    monkeypatch.setattr(far_tail, "BODY_LEAP", 4.0)
    return on, off, _run(mech, idx, n, eps, 1e-3)


def _holds(r, ref: float, tol: float) -> bool:
    return r.upper >= ref * (1.0 - tol) and r.lower <= ref * (1.0 + tol)


# BMG (gamma, sigma0, n, eps) where the quarter step runs (scan above); measured with the rule / at rel_tol 1e-3 /
# the Edgeworth reference (second order, indicator):
# (0.778, 2.06, 1e5, 0.001): [1.0133423e-6, 1.0145774e-6] / [1.0137303e-6, 1.0138099e-6] / 1.0137575e-6 (4.6e-4)
# (0.584, 1.49, 1e6, 0.001): [1.0111323e-6, 1.0137773e-6] / [1.0119717e-6, 1.0121391e-6] / 1.0120297e-6 (1.6e-4)
# (0.3, 1.0, 1e7, 0.001):    [6.0702842e-6, 6.0767043e-6] / [6.0719193e-6, 6.0735310e-6] / 6.0724672e-6 (4.1e-5)
# (0.171, 0.78, 1e8, 0.001): [9.9011437e-7, 9.9121221e-7] / [9.9065789e-7, 9.9090555e-7] / 9.9080424e-7 (3.5e-4)
BMG_FIRED = [(0.778, 2.06, 10**5, 0.001), (0.584, 1.49, 10**6, 0.001), (0.3, 1.0, 10**7, 0.001),
             (0.1313, 1.452, 10**7, 0.001), (0.0259, 1.851, 10**7, 0.003), (0.0095, 1.152, 10**8, 0.003),
             (0.171, 0.78, 10**8, 0.001)]


def test_reference_law_is_the_librarys():
    """The reference's (a, b, r) from the mechanism's densities equal the library's law (so the reference and the
    accountant price the same variable), and the reference's two orders agree where the body is near-Gaussian."""
    for g, s, n, eps in BMG_FIRED:
        _, law = laws_for(BlanketMixedGaussian(g, s, 1), eps, "zero_out")[0]
        a, b, r = params(g, s, eps)
        assert (law.a, law.b, law.r) == pytest.approx((a, b, r), rel=1e-13, abs=1e-15)
    e2, e1, z = bmg_edgeworth(0.3, 1.0, 0.001, 10**7)
    assert abs(e2 - e1) <= 1e-4 * e2 and 1.5 < z < 2.5


@pytest.mark.parametrize("g, s, n, eps", BMG_FIRED)
def test_bmg_rule_on_off_and_finer_hold_the_edgeworth_reference(monkeypatch, g, s, n, eps):
    """Rule on (a quarter step ran), rule off (halving only), rel_tol 1e-3: pairwise intersecting; the rule's
    bracket equals the halving's (measured in every BMG cell of the scan) and contains the finer one; all three
    hold the Edgeworth reference within its tolerance."""
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    on, off, fine = _on_off_fine(monkeypatch, BlanketMixedGaussian(g, s, 1), 0, n, eps)
    assert (on.lower, on.upper) == (off.lower, off.upper)
    assert 0.0 < on.lower <= fine.lower <= fine.upper <= on.upper
    assert on.upper - on.lower <= 1e-2 * on.lower
    e2, e1, _ = bmg_edgeworth(g, s, eps, n)
    tol = 3.0 * abs(e2 - e1) / e2 + 2e-4
    for r in (on, off, fine):
        assert _holds(r, e2, tol), (r.lower, r.upper, e2, tol)


@pytest.mark.parametrize("leap", [0.0, 1.0])
@pytest.mark.parametrize("g, s, n, eps", [BMG_FIRED[1], BMG_FIRED[2], BMG_FIRED[6]])
def test_bmg_quarter_step_after_every_pass_stays_certified(monkeypatch, leap, g, s, n, eps):
    """The rule forced (BODY_LEAP = 0 or 1: quarter steps wherever Body_lo > 0): another step sequence, so by §31.2
    another certified bracket: it must intersect the rule's and the finer run's and hold the reference."""
    mech = BlanketMixedGaussian(g, s, 1)
    on = _run(mech, 0, n, eps)
    monkeypatch.setattr(far_tail, "BODY_LEAP", leap)
    forced = _run(mech, 0, n, eps)
    assert max(on.lower, forced.lower) <= min(on.upper, forced.upper)
    e2, e1, _ = bmg_edgeworth(g, s, eps, n)
    assert _holds(forced, e2, 3.0 * abs(e2 - e1) / e2 + 2e-4), (forced.lower, forced.upper, e2)


def test_gaussian_cell_where_the_rule_moves_the_bracket(monkeypatch):
    """GaussianRandomizer(1, 1), bot vs x, n = 1e6, eps = 0.01: the rule's bracket [2.1490049e-4, 2.1520821e-4]
    differs from the halving's [2.1486707e-4, 2.1529850e-4], nested in it; rel_tol 1e-3 gives [2.1511510e-4,
    2.1519560e-4], inside both (measured)."""
    on, off, fine = _on_off_fine(monkeypatch, GaussianRandomizer(1.0, 1), 1, 10**6, 0.01)
    assert off.lower <= on.lower <= fine.lower <= fine.upper <= on.upper <= off.upper
    assert (on.lower, on.upper) != (off.lower, off.upper)


def test_gaussian_x_vs_bot_cell_holds_the_edgeworth_reference(monkeypatch):
    """GaussianRandomizer(2, 1), x vs bot, n = 1e7, eps = 0.001 (a quarter step runs): rule on / off / rel_tol 1e-3
    against tests/_review28_gauss_reference.py's second-order Edgeworth estimate 2.2125172e-7 (indicator 3.0e-4):
    measured [2.2098842e-7, 2.2152361e-7] (on = off) and [2.2114369e-7, 2.2125870e-7]."""
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    on, off, fine = _on_off_fine(monkeypatch, GaussianRandomizer(2.0, 1), 0, 10**7, 0.001)
    e2, e1, _ = gauss_edgeworth(2.0, 0.001, 10**7)
    tol = 3.0 * abs(e2 - e1) / e2 + 2e-4
    for r in (on, off, fine):
        assert _holds(r, e2, tol), (r.lower, r.upper, e2, tol)
    assert max(on.lower, off.lower, fine.lower) <= min(on.upper, off.upper, fine.upper)


def test_gaussian_n1e8_fired_cell_against_the_fft_reference(monkeypatch):
    """GaussianRandomizer(1, 1), x vs bot, n = 1e8, eps = 0.001 (a quarter step runs; the Edgeworth estimate's two
    orders differ by 4.5 % here): rule on = off [2.7687240e-5, 2.7706313e-5], rel_tol 1e-3 [2.7695862e-5,
    2.7700940e-5] against a plain numpy FFT of the thinned sum from the mechanism's densities
    (tests/_rev29_fft_reference.py, offline, ~3 s CPU and ~0.5 GB: ``G = GaussXBot(1.0, 0.001); richardson(d_up_fft(G,
    G.g - G.E, G.g, 10**8, 0.2, -2.6e5, 2**23))``) 2.7700857e-5, indicator 7.46e-8."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    v, ind = 2.770085702326314e-05, 7.460340282432182e-08
    on, off, fine = _on_off_fine(monkeypatch, GaussianRandomizer(1.0, 1), 0, 10**8, 0.001)
    assert (on.lower, on.upper) == (off.lower, off.upper)
    for r in (on, fine):
        assert r.lower - ind <= v <= r.upper + ind, (r.lower, r.upper, v)
    assert on.lower <= fine.lower <= fine.upper <= on.upper


@pytest.mark.parametrize("s, n, eps", [(0.46, 1000, 8.0), (1.0, 100, 1.0), (1.0, 10**4, 1.0)])
def test_replace_one_through_bot_rule_on_off_and_finer_intersect(monkeypatch, s, n, eps):
    """GaussianRandomizer(s, 1), replace-one (through bot, docs/accountant.md §9: many body-pass sequences per
    report): fresh reports with the rule, without it (BODY_LEAP = inf) and at rel_tol 1e-3 intersect. A scan of
    s in {0.46, 1, 2}, n in {10, 1e2, 1e3, 1e4}, eps in {1, 3, 4, 8} (48 cells): the rule moved 13 brackets, each
    nested in the halving's (some with one end equal), none wider; all 48 intersect the rel_tol 1e-3 one. Measured (rule /
    halving / 1e-3): (0.46, 1e3, 8) [0.2399937, 0.2416945] / [0.2398777, 0.2416945] / [0.2401823, 0.2402547];
    (1, 100, 1) [0.09245698, 0.09262573] / [0.09237287, 0.09263726] / [0.09252070, 0.09255265]."""
    from sharpdp.shuffle import ShuffleAccountant
    from sharpdp.shuffle.round_cache import clear_caches

    def bracket(rel_tol: float = 1e-2) -> tuple[float, float]:
        clear_caches()
        lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace", rel_tol=rel_tol).get_delta_bounds(eps)
        return float(lo), float(up)

    on, fine = bracket(), bracket(1e-3)
    monkeypatch.setattr(far_tail, "BODY_LEAP", math.inf)
    off = bracket()
    assert max(on[0], off[0], fine[0]) <= min(on[1], off[1], fine[1]), (on, off, fine)
