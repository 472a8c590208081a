"""Session 39, far39 (docs/accountant_tail.md §54): a far-tail run at a coarser step kept within COARSE_KEEP_ACCEPT
rel_tol and retried at half its factor within COARSE_KEEP_RETRY (``COARSE_KEEP``, §54.1), a finer request missing its
rel_tol intersected with the default request's run (``FINER_DEFAULT_RUN``, §54.2), and §52.2's upper-only run once
more at a coarser factor where the caps bind (``TOP_FIT``, §54.3).

References, independent of the rules: rev38's plain numpy FFT values of D_up at n = 1e8 / 1e9 with their Richardson
indicators (tests/test_review_rev38_fft.py's FFT_REF), main's (6d5c8782) certified rel_tol-1e-3 / 1e-4 brackets
(tests/test_review_rev38_far.py's MAIN_TIGHT), rev38's Gauss-Legendre quadrature of the bot-vs-x law at n = 2
(tests/_rev38_botx.py), and main's (72b04806) floats with the switches off."""

from __future__ import annotations

import math

import pytest

from _main_floats34 import switch
from _rev38_botx import botx_dup_n2
from test_review_rev38_far import LAW1_TIGHT_LO, MAIN_TIGHT
from test_review_rev38_fft import FFT_REF
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail, limits
from sharpdp.shuffle.accountant.far_tail_keep import next_factor, scaled_accept, top_factors
from sharpdp.shuffle.accountant.far_tail_steps import pair_keep
from sharpdp.shuffle.laws import laws_for

# main 72b04806 at rel_tol 1e-2 (/work/venv/main, session 39)
MAIN = {(10**7, 2.0): (0.0036445201153669066, 0.0036483221392180705),
        (10**8, 0.01): (0.0261256374974229, 0.026224235094837206),
        (10**8, 1.0): (0.0017121555729092256, 0.0017148616948976046),
        (10**9, 0.001): (0.01233397775830563, 0.012396273530146572),
        (10**9, 0.5): (0.0005686282862470735, 0.0005699714676968381)}
# the moved cells with the rules on (far39)
MOVED = {(10**7, 2.0): (0.003642063361128258, 0.0036483556040330213),
         (10**8, 0.01): (0.025984861477637906, 0.026227407355981117),
         (10**8, 1.0): (0.0017052695448824262, 0.001714932998902481),
         (10**9, 0.001): (0.012296573735807295, 0.012397427755524014),
         (10**9, 0.5): (0.0005679840299532629, 0.0005699459847264127)}
# main 72b04806's rel_tol-1e-3 bracket (/work/venv/main, session 39; rel_tol 1e-4 gives the same)
TIGHT39 = {(0.5, 10**7, 2.0): (0.0036447249397240033, 0.0036483336590554683)}
WIDTH = 0.952  # Claim 54.1: a kept coarser run's law bracket meets this many rel_tol


def _bounds(n: int, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    return ShuffleAccountant(GaussianRandomizer(0.5, 1), n, rel_tol=rel_tol).get_delta_bounds(eps)


def test_shares_and_factors(monkeypatch):
    assert scaled_accept() == limits.COARSE_KEEP_ACCEPT == 0.95
    assert pair_keep(2**19, True) == 0.95 and pair_keep(2**19) == 0.5 and pair_keep(2**20) == 0.8
    assert next_factor(4.0, 2.54) == 2.0 and next_factor(4.0, 2.9) == 1.0 and next_factor(2.0, 1.2) == 1.0
    assert next_factor(16.0, 14.7) == 2.0 and next_factor(16.0, 2.0) == 8.0 and next_factor(16.0, math.inf) == 1.0
    assert next_factor(16.0, 11.39, True) == 4.0 and next_factor(16.0, 14.7, True) == 2.0  # (§54.4's two cells)
    assert top_factors() == (4.0, 64.0)
    switch(monkeypatch, "COARSE_KEEP", False)
    assert scaled_accept() == limits.BODY_WHOLE_ACCEPT == 0.8 and pair_keep(2**19, True) == 0.8
    assert next_factor(4.0, 1.5) == 2.0 and next_factor(4.0, 1.6) == 1.0
    assert next_factor(16.0, 14.7) == 1.0
    switch(monkeypatch, "TOP_FIT", False)
    assert top_factors() == (4.0,)


def test_far_factor(monkeypatch):
    """§54.4's first factor: 4 where the body's normal estimate is <= 1e-3 of the one-jump estimate (n = 1e8, eps = 1:
    2e-10 against 1.7e-3), 1 where the body is the larger part (eps = 0.01) or with the switch off."""
    from sharpdp.shuffle.accountant.far_tail_keep import far_factor
    g1, law1 = laws_for(GaussianRandomizer(0.5, 1), 1.0, "zero_out")[0]
    g2, law2 = laws_for(GaussianRandomizer(0.5, 1), 0.01, "zero_out")[0]
    assert far_factor(law1, float(g1), 10**8) == 4.0 and far_factor(law2, float(g2), 10**8) == 1.0
    switch(monkeypatch, "COARSE_FAR", False)
    assert far_factor(law1, float(g1), 10**8) == 1.0


@pytest.mark.parametrize("cell", sorted(MOVED), ids=str)
def test_moved_cells_hold_the_references(cell, monkeypatch):
    """The moved brackets: they hold rev38's FFT value (3 indicators + 1e-4 relative), overlap main's rel_tol-1e-3 (n = 1e9:
    1e-4) bracket and never lie below its lower value, meet 0.952 rel_tol (Claim 54.1), and are the values measured
    (those with §55's density bound off: with it, the references and widths are checked first)."""
    switch(monkeypatch, "G46_STOP_LOSS_CHORDS", 0)  # (**) session 46, g46: docs/accountant_tail.md §71.1
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    n, eps = cell
    _hold_the_references(n, eps)
    switch(monkeypatch, "HAT_DENSITY", False)  # (**) session 39, lead: §55 moves these lower values too (merged)
    _hold_the_references(n, eps, pinned=True)


def _hold_the_references(n: int, eps: float, pinned: bool = False) -> None:
    cell = (n, eps)
    lo, up = _bounds(n, eps)
    tight = {**MAIN_TIGHT, **TIGHT39}
    assert (0.5, n, eps) in FFT_REF or (0.5, n, eps) in tight
    if (0.5, n, eps) in FFT_REF:
        ref, ind = FFT_REF[(0.5, n, eps)]
        tol = 3.0 * ind + 1e-4 * ref
        assert lo <= ref + tol and up >= ref - tol, (cell, lo, up, ref)
    if (0.5, n, eps) in tight:
        t_lo, t_up = tight[(0.5, n, eps)]
        assert up >= t_lo * (1 - 1e-12) and lo <= t_up * (1 + 1e-12), (cell, lo, up)
    assert 0.0 < lo and up - lo <= WIDTH * 1e-2 * lo, (cell, lo, up)
    if pinned:
        assert (lo, up) == MOVED[cell]
    m_lo, m_up = MAIN[cell]
    assert lo <= m_up and m_lo <= up  # (overlapping main's; nested in the new one but at n = 1e9, eps = 0.5)


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MAIN), ids=str)
def test_switches_off_restore_main_floats(cell, monkeypatch):
    """COARSE_KEEP, COARSE_FAR and TOP_FIT off: main's floats bit for bit; TOP_FIT alone off: the same report as with
    it on."""
    switch(monkeypatch, "G46_STOP_LOSS_CHORDS", 0)  # (**) session 46, g46: docs/accountant_tail.md §71.1
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "HAT_DENSITY", False)  # (**) session 39, lead: §55 moves these cells' lower values too (merged)
    switch(monkeypatch, "TOP_FIT", False)
    assert _bounds(*cell) == MOVED[cell]
    switch(monkeypatch, "COARSE_KEEP", False)
    switch(monkeypatch, "COARSE_FAR", False)
    assert _bounds(*cell) == MAIN[cell]


def _law1(s: float, eps: float):
    gamma, law = laws_for(GaussianRandomizer(s, 1), eps, "zero_out")[1]
    return float(gamma), law


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("eps", [0.001, 0.1, 1.0])
@pytest.mark.parametrize("tc", [16.0, 64.0])
def test_top_fit_upper_at_n2_holds_the_quadrature(s, eps, tc):
    """Lemma 52.2 at §54.3's factors (n = 2): the upper-only run's value is at or above rev38's quadrature of D_up."""
    ref, g = botx_dup_n2(s, eps)
    gamma, law = _law1(s, eps)
    assert abs(gamma - g) <= 1e-14
    clear_caches()
    r = far_tail.certify_bigjump(law.shifted(up=True), gamma, 2, 1e-2, 1, lower=False, negligible=0.0, top_coarse=tc)
    assert r.upper >= ref * (1 - 1e-9), (s, eps, tc, r.upper, ref)


def test_top_fit_cell_route(monkeypatch):
    """n = 1e9, eps = 0.001, the bot-vs-x law below the x-vs-bot law's upper value 0.0123974: §54.3 returns [0, Up_c]
    from the run at 64 H (§52.2's at 4 H raises TailCoarsen; with TOP_FIT off try_certify returns None, main's route to
    the plain engine). Up_c's validity: Lemma 52.2 (tests above and below)."""
    gamma, law = _law1(0.5, 0.001)
    n, neg = 10**9, 0.012397427755524014
    clear_caches()
    r = far_tail.try_certify(law, gamma, n, 1e-2, 1, negligible=neg)
    assert r is not None and r.lower == 0.0 and r.upper < neg and r.grid.h == 1024.0, r
    switch(monkeypatch, "TOP_FIT", False)
    assert far_tail.try_certify(law, gamma, n, 1e-2, 1, negligible=neg) is None


@pytest.mark.parametrize("cell", sorted(LAW1_TIGHT_LO), ids=str)
def test_top_fit_upper_at_or_above_the_law_tight_lower(cell):
    """Lemma 52.2 at §54.3's factor 64 where the bot-vs-x law is within 0.2-7 % of the x-vs-bot law: Up_c >= main's
    rel_tol-1e-3 lower value of that law (rev38's table)."""
    s, n, eps = cell
    gamma, law = _law1(s, eps)
    clear_caches()
    r = far_tail.certify_bigjump(law.shifted(up=True), gamma, n, 1e-2, 1, lower=False, negligible=0.0, top_coarse=64.0)
    assert r.upper >= LAW1_TIGHT_LO[cell] * (1 - 1e-12), (cell, r.upper, LAW1_TIGHT_LO[cell])


FINER = (0.008545970743400005, 0.3409533484609755, 10**8, 4.0)  # tests/test_review_rev31_tail.py's BMG_A_1E8_4


@pytest.mark.slow
def test_finer_request_at_least_as_tight_as_the_default(monkeypatch):
    """§54.2 at rev38's cell: the rel_tol-1e-3 bracket lies within the default request's at both ends; with the switch
    off its lower value is below the default's (the miss §54.2 removes); the brackets intersect."""
    g, s, n, eps = FINER
    out = {}
    for on in (True, False):
        switch(monkeypatch, "FINER_DEFAULT_RUN", on)
        out[on] = [ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n, "replace", rel_tol=rt).get_delta_bounds(eps)
                   for rt in ((1e-2, 1e-3) if on else (1e-3,))]  # (the default request: the same runs either way)
    (lo2, up2), (lo3, up3) = out[True]
    assert lo3 >= lo2 * (1 - 1e-12) and up3 <= up2 * (1 + 1e-12), out
    (lo_off, up_off), = out[False]
    assert lo_off < lo2 and max(lo2, lo_off) <= min(up2, up_off), out
