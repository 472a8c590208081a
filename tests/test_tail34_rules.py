"""docs/accountant_tail.md §44: session 34's bracket-moving speed rules, each against its switch off (main's floats).

§44.1-§44.2 (``BODY_WHOLE_STOP``): a far-tail round's body passes stop where the round's whole bracket meets 0.8
rel_tol. Both runs are certified, so they overlap; the run with the rule off computes the same passes and more at this
cell, so its bracket is nested in the new one, which meets 0.8 rel_tol, and both contain a finer request's bracket's
middle (rel_tol 1e-3: a finer grid, the reference). §44.3 (``ATOM_AIM_SLOW``): an atom law's step aimed farther; the
two brackets (both meeting rel_tol) overlap and contain each other's middle within their widths. §44.4
(``JUMP_TV_STOP``): the jump term's third step that improves neither value is skipped: the same floats, and the
estimate of its TV terms is close to the TV terms the skipped step computes."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import GaussianRandomizer, RandomizedResponse
from sharpdp.shuffle.accountant import ShuffleAccountant, far_tail, far_tail_grid, jump, plain
from sharpdp.shuffle.accountant.lattice import lattice_laws
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.round_cache import clear_caches

from _main_floats34 import switch  # noqa: E402


def _bounds(randomizer, n: int, eps: float, adjacency: str = "zero_out", rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    return ShuffleAccountant(randomizer, n, adjacency, rel_tol=rel_tol).get_delta_bounds(eps)


def test_body_passes_stop_at_the_whole_bracket(monkeypatch):
    """GaussianRandomizer(1), n = 1e6, eps = 0.01 (the regime map's cell): the new bracket meets 0.8 rel_tol, holds the
    switch-off bracket (a superset of the new run's passes: nested), and both hold the finer request's bracket."""
    g = GaussianRandomizer(1.0, 1)
    lo, up = _bounds(g, 10**6, 0.01)
    assert 0.0 < lo and up - lo <= 0.8e-2 * lo * (1 + 1e-6)
    switch(monkeypatch, "BODY_WHOLE_STOP", False)
    lo0, up0 = _bounds(g, 10**6, 0.01)
    assert (lo0, up0) != (lo, up)  # (the rule acts here: main's second pass)
    assert lo <= lo0 <= up0 <= up
    monkeypatch.undo()
    flo, fup = _bounds(g, 10**6, 0.01, rel_tol=1e-3)
    assert fup - flo <= 1e-3 * flo * 1.01
    assert max(lo, flo) <= min(up, fup) and max(lo0, flo) <= min(up0, fup)


def test_whole_share():
    """-1 where the whole bracket meets 0.8 rel_tol; else the body gap that would meet it, the others fixed."""
    assert far_tail_grid.whole_share(1.0, 1.0079, 0.005, 0.003, 1e-2) == -1.0
    s = far_tail_grid.whole_share(1.0, 1.02, 0.015, 0.003, 1e-2)
    assert s == pytest.approx(0.008 - 0.02 + 0.015)
    assert far_tail_grid.whole_share(1.0, 1.05, 0.01, 0.003, 1e-2) == 0.003  # (the other gaps alone miss it)
    assert far_tail_grid.whole_share(0.0, 1.0, 0.5, 0.003, 1e-2) == 0.003


def test_atom_law_aimed_farther(monkeypatch):
    """10-RR eps0 = 4, n = 1e9, eps = 0.001, replace (the cell of §44.3): both brackets meet rel_tol and overlap; the
    rule changes the steps (the brackets differ)."""
    r = RandomizedResponse(10, 4.0)
    # (**) session 35, mid35: main's steps and full passes (the spacing's steps end this cell after one pass, where
    # §44.3's rule does not act; docs/accountant_tail.md §46)
    switch(monkeypatch, "ATOM_SPACING_SNAP", False)
    switch(monkeypatch, "LOWER_ONLY_SETTLED", False)
    lo, up = _bounds(r, 10**9, 0.001, "replace")
    switch(monkeypatch, "ATOM_AIM_SLOW", False)
    lo0, up0 = _bounds(r, 10**9, 0.001, "replace")
    assert (lo, up) != (lo0, up0)
    for a, b in ((lo, up), (lo0, up0)):
        assert 0.0 < a and b - a <= 1e-2 * a
    assert max(lo, lo0) <= min(up, up0)


def test_aim_slow_factor(monkeypatch):
    """_aim's factor where the measured power is below 1: 1.05 ratio^(1/0.8) within [1.3, 4]; the switch off: main's."""
    gaps = [(0.33, 0.0151)]
    f = plain._aim(1.6, 0.0112, 0.21, gaps)
    assert f == pytest.approx(1.05 * 1.6 ** 1.25)
    assert plain._aim(100.0, 0.5, 0.21, [(0.33, 0.6)]) == 4.0
    switch(monkeypatch, "ATOM_AIM_SLOW", False)
    assert plain._aim(1.6, 0.0112, 0.21, gaps) == pytest.approx(max(1.05 * 1.6 ** 0.5, 1.3))


def test_jump_tv_stop_same_floats_and_estimate(monkeypatch):
    """GaussianRandomizer(2), n = 1e6, eps = 0.01: the jump term's third step (h = 0.078) improved neither value; with
    the rule it is skipped and the bracket is the same floats. The estimate of its TV terms (from the second step's
    weights and the third lattice's error sums) is within 10 % of the TV terms that step computes."""
    # (**) session 37, lead: §51.1's TV bound (TV_WEIGHTED) removes the stalling TV term this mechanism needs
    switch(monkeypatch, "TV_WEIGHTED", False)
    g = GaussianRandomizer(2.0, 1)
    steps: list[float] = []
    orig = far_tail.jump_term

    def spy(law, gamma, n, lat, h, *a, **k):
        steps.append(h)
        return orig(law, gamma, n, lat, h, *a, **k)

    monkeypatch.setattr(far_tail, "jump_term", spy)
    b1 = _bounds(g, 10**6, 0.01)
    n1 = len(steps)
    switch(monkeypatch, "JUMP_TV_STOP", False)
    b0 = _bounds(g, 10**6, 0.01)
    assert b1 == b0
    assert len(steps) - n1 > n1  # (the run without the rule computed more steps)
    gamma, law = laws_for(g, 0.01, "zero_out")[0]
    law = law.shifted(up=True)
    r = far_tail.certify_bigjump(law, float(gamma), 10**6, 1e-2, 1)
    h2 = r.h
    lat3 = lattice_laws(law, float(gamma), h2 / 2, r.T0, r.B)
    est = jump.tv_floor_estimate(r.jump, lat3, 10**6 - 1)
    # the TV terms the third step computes: its gap minus the rest is not separable, so compare with its parts
    jt3 = orig(law, float(gamma), 10**6, lat3, h2 / 2, r.T0, 1e-2, r.upper, 1)
    wh, wl = jt3.parts["tv_w"]
    tv3 = (10**6 - 1) * (wh * float(np.sum(lat3.eta)) + wl * float(np.sum(lat3.low.eta)))
    assert est == pytest.approx(tv3, rel=0.1)
    assert est > 0.7 * (r.jump.up - r.jump.lo)  # (the rule's test at this step)


@pytest.mark.parametrize("cell", [0, 2, 3])
def test_bmg_whole_stop_holds_the_edgeworth_reference(cell):
    """The regime scan's BMG cells of tests/test_review_rev29_body_leap.py where §44.1-§44.2 end the body passes
    before main's quarter step: the bracket meets rel_tol and holds the Edgeworth reference (second order) within that
    test's tolerance, and intersects the bracket at rel_tol 1e-3 (a finer grid)."""
    from _rev29_bmg_reference import d_up_edgeworth
    from test_review_rev29_body_leap import BMG_FIRED, _holds, _run

    from sharpdp.shuffle import BlanketMixedGaussian

    g, s, n, eps = BMG_FIRED[cell]
    mech = BlanketMixedGaussian(g, s, 1)
    r, fine = _run(mech, 0, n, eps), _run(mech, 0, n, eps, 1e-3)
    assert 0.0 < r.lower and r.upper - r.lower <= 1e-2 * r.lower
    assert max(r.lower, fine.lower) <= min(r.upper, fine.upper)
    e2, e1, _ = d_up_edgeworth(g, s, eps, n)
    assert _holds(r, e2, 3.0 * abs(e2 - e1) / e2 + 2e-4), (r.lower, r.upper, e2)


def test_gaussian_cells_hold_the_references():
    """§44's brackets on tests/test_review_rev29_body_leap.py's Gaussian reference cells: x vs bot, sigma0 = 1,
    n = 1e8, eps = 0.001 against the plain numpy FFT of the thinned sum (2.7700857e-5, indicator 7.46e-8); sigma0 = 2,
    n = 1e7, eps = 0.001 against the second-order Edgeworth estimate within that test's tolerance."""
    from _review28_gauss_reference import d_up_edgeworth
    from test_review_rev29_body_leap import _holds, _run

    v, ind = 2.770085702326314e-05, 7.460340282432182e-08
    r = _run(GaussianRandomizer(1.0, 1), 0, 10**8, 0.001)
    assert r.lower - ind <= v <= r.upper + ind and r.upper - r.lower <= 1e-2 * r.lower, (r.lower, r.upper)
    r = _run(GaussianRandomizer(2.0, 1), 0, 10**7, 0.001)
    e2, e1, _ = d_up_edgeworth(2.0, 0.001, 10**7)
    assert _holds(r, e2, 3.0 * abs(e2 - e1) / e2 + 2e-4) and r.upper - r.lower <= 1e-2 * r.lower, (r.lower, r.upper)
