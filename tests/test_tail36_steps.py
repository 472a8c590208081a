"""Session 36, tail36 (docs/accountant_tail.md §48): the far-tail body passes on steps that put the Gaussian randomizer's
bottom atom just before a node (BODY_END_SNAP), the clamp shift they charge (Lemma 48.1), and the coarser first step
where the size caps set it (CAP_COARSE). References: the law's own closed-form stop-losses (Lemma 48.1 at one user),
main's rel_tol 1e-3 brackets (/work/venv/main = 9d10058, certified, measured this session) and main's rel_tol 1e-2
floats with the switches off."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest

from _main_floats34 import switch
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle import clear_caches
from sharpdp.shuffle.accountant import far_tail_steps, limits
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.spacing import END_MARGIN
from sharpdp.shuffle.laws import laws_for


@pytest.fixture(autouse=True)
def _body_end_snap_on(monkeypatch):
    """§48.1's rule on for every test here: it is off by default since docs/accountant_tail.md §48.4."""
    switch(monkeypatch, "BODY_END_SNAP", True)



def _xbot(sigma0: float, eps: float):
    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]
    return gamma, law.shifted(up=True)


@pytest.mark.parametrize("seed", range(6))
def test_body_step_divides_the_clamp_and_puts_the_atom_before_a_node(seed):
    rng = np.random.default_rng(seed)
    for _ in range(300):
        lo_s = -float(rng.uniform(0.05, 5.0))
        T0 = float(rng.uniform(2.0, 1e7))
        h = float(rng.uniform(1e-3, 2.0)) * -lo_s
        hp = far_tail_steps.body_step(h, 1.0, lo_s, T0)
        if hp == h:
            continue
        k = math.ceil(T0 / hp)
        m = math.ceil(-lo_s * (1 + END_MARGIN) / h)
        assert hp <= h
        assert abs(k * hp - T0) <= 4 * U * T0  # (the lattice's top node is T0 within a few ulp)
        d = -lo_s / (m * hp) - 1.0
        assert END_MARGIN / 2 <= d <= 100 * END_MARGIN  # (the atom d m lattice units before node -m)
        assert m * d > 1e-6  # (above the lower law's sweep margin, docs/accountant.md §4.2)
    assert far_tail_steps.body_step(0.3, None, -0.7, 100.0) == 0.3


@pytest.mark.parametrize("sigma0,eps", [(1.0, 0.001), (0.5, 0.1), (2.0, 0.001)])
def test_clamp_shift_bounds_the_one_user_move(sigma0, eps):
    """Lemma 48.1 at one user: E min(L, T'')_+ - E min(L, T0)_+ = int_T0^T'' P(L > t) dt for T'' >= T0 >= 0, by the
    law's closed-form stop-losses where their bracket resolves it and by a Riemann sum of P(L > t) (left ends: above
    the integral, P non-increasing), both at most clamp_shift."""
    _, law = _xbot(sigma0, eps)
    for T0, h in [(20.0, 0.3), (2816.0, 0.05), (23520.0, 0.34)]:
        for k_up in (1, 2):
            kT = math.ceil(T0 / h) + k_up - 1
            T2 = kT * h
            lo_b, up_b = law.stop_loss([T0, T2])
            exact_lo = float(lo_b[0] - up_b[1])  # (a lower value of the move, from the stop-loss bracket)
            t = np.linspace(T0, T2, 65)[:-1]
            riemann = float(np.sum([law.prob_above(float(x))[0] for x in t])) * (T2 - T0) / 64
            shift = far_tail_steps.clamp_shift(law, T0, kT, kT + 10, h)
            assert shift >= max(exact_lo, 0.0) and shift >= riemann, (T0, h, shift, exact_lo, riemann)
            assert shift <= 2 * (T2 - T0 + 1e-9) * max(sum(law.prob_above(T0 - h)), 1e-300) + 1e-300


def test_body_spacing_only_on_end_atom_laws_unbounded_above(monkeypatch):
    _, law = _xbot(1.0, 0.001)
    assert far_tail_steps.body_spacing(law, False, 10**8) is not None
    assert far_tail_steps.body_spacing(law, True, 10**8) is None
    other = laws_for(GaussianRandomizer(1.0, 1), 0.001, "zero_out")[1][1]  # (bot vs x: bounded above)
    assert far_tail_steps.body_spacing(other, math.isfinite(other.support()[1]), 10**8) is None
    assert far_tail_steps.body_spacing(law, False, 10**7) is None  # (below BODY_END_SNAP_N)
    switch(monkeypatch, "BODY_END_SNAP", False)
    assert far_tail_steps.body_spacing(law, False, 10**8) is None


def _bounds(sigma0: float, n: int, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    return ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, rel_tol=rel_tol).get_delta_bounds(eps)


# main 9d10058 at rel_tol 1e-3 (certified; /work/venv/main, session 36, tail36)
MAIN_TIGHT = {
    (1.0, 10**8, 0.001): (2.768865460700269e-05, 2.7704760186668965e-05),
    (0.5, 10**8, 0.1): (0.012408594180771402, 0.012429177243461997),  # (tests/test_review_rev35_tail.py)
    (0.5, 10**8, 1.0): (0.001712137403307647, 0.0017142925116636176),
    (0.5, 10**8, 0.01): (0.026160869855000848, 0.02618202119107093),
    (0.5, 10**8, 0.5): (0.0036063074618197127, 0.0036328529711363356),
    (0.5, 10**8, 0.001): (0.028959448358522925, 0.02897891873091703),
}
# main 9d10058 at rel_tol 1e-2 (the default; /work/venv/main, session 36)
MAIN_DEFAULT = {
    (1.0, 10**8, 0.001): (2.7687239850705474e-05, 2.7706313047560078e-05),
    (0.5, 10**8, 0.1): (0.012417394471433937, 0.01243568516574849),
    (0.5, 10**8, 1.0): (0.001712137403307647, 0.0017150319380651446),
}


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MAIN_TIGHT))
def test_moved_cells_overlap_main_tight_and_meet_rel_tol(cell):
    lo, up = _bounds(*cell)
    ref_lo, ref_up = MAIN_TIGHT[cell]
    assert 0.0 < lo <= up and up - lo <= 1e-2 * lo, (lo, up)
    assert lo <= ref_up * (1 + 1e-12) and ref_lo <= up * (1 + 1e-12), (lo, up, ref_lo, ref_up)


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MAIN_DEFAULT))
def test_switches_off_restore_main_floats(cell, monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "BODY_END_SNAP", False)
    switch(monkeypatch, "CAP_COARSE", 1.0)
    switch(monkeypatch, "HAT_PIECES", False)  # (**) session 38, hat38
    assert _bounds(*cell) == MAIN_DEFAULT[cell]


@pytest.mark.slow
def test_end_atom_body_passes_meet_the_request_at_a_coarser_step(monkeypatch):
    """GaussianRandomizer(1), n = 1e8, eps = 0.001: one body pass at the snapped step h' = T0 / k <= 0.547 / 2 (main:
    three passes down to 0.137); the bracket within rel_tol and holding main's tight one's overlap."""
    from sharpdp.shuffle.accountant import far_tail

    switch(monkeypatch, "TOP_COARSE", 1.0)  # (**) session 38, far38 (the passes counted: no upper-only run at 4H)
    switch(monkeypatch, "BODY_END_SNAP_LATER", False)  # (**) session 38, lead (§48.1 as written: every pass snapped)
    steps = []
    orig = far_tail.lattice_pass
    monkeypatch.setattr(far_tail, "lattice_pass", lambda law, g, n, h, *a, **k: steps.append(h) or orig(law, g, n, h,
                                                                                                       *a, **k))
    lo, up = _bounds(1.0, 10**8, 0.001)
    assert up - lo <= 1e-2 * lo
    assert len(steps) <= 2 and min(steps) > 0.2, steps  # (the x vs bot law's one pass, the bot vs x law's one)
    assert limits.BODY_END_SNAP and limits.CAP_COARSE == 4.0


def _x_vs_bot_round(sigma0: float, n: int, eps: float, rel_tol: float = 1e-2):
    from sharpdp.shuffle.accountant import far_tail

    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]
    clear_caches()
    return far_tail.certify_bigjump(law.shifted(up=True), float(gamma), n, rel_tol, 1)


@pytest.mark.slow
def test_snapped_round_holds_the_fft_reference():
    """The twin, with §48's rules on, of tests/test_review_rev29_body_leap.py's FFT reference (which now runs with them
    off): GaussianRandomizer(1), x vs bot, n = 1e8, eps = 0.001; a plain numpy FFT of the thinned sum from the
    mechanism's densities (tests/_rev29_fft_reference.py) 2.7700857e-5, indicator 7.46e-8."""
    v, ind = 2.770085702326314e-05, 7.460340282432182e-08
    r = _x_vs_bot_round(1.0, 10**8, 0.001)
    assert r.lower - ind <= v <= r.upper + ind, (r.lower, r.upper, v)
    assert r.upper - r.lower <= 1e-2 * r.lower


@pytest.mark.slow
def test_snapped_round_holds_the_edgeworth_reference(monkeypatch):
    """The twin, with §48's rules on, of tests/test_review_rev29_body_leap.py's Edgeworth reference:
    GaussianRandomizer(2), x vs bot, n = 1e7, eps = 0.001 against tests/_review28_gauss_reference.py's second-order
    Edgeworth estimate (tolerance three times its first and second orders' difference plus 2e-4)."""
    from _review28_gauss_reference import d_up_edgeworth

    switch(monkeypatch, "BODY_END_SNAP_N", 10**7)  # (the rule forced at n = 1e7, below its threshold)
    e2, e1, _ = d_up_edgeworth(2.0, 0.001, 10**7)
    tol = 3.0 * abs(e2 - e1) / e2 + 2e-4
    for rt in (1e-2, 1e-3):
        r = _x_vs_bot_round(2.0, 10**7, 0.001, rt)
        assert r.upper >= e2 * (1.0 - tol) and r.lower <= e2 * (1.0 + tol), (rt, r.lower, r.upper, e2, tol)
