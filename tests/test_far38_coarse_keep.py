"""Session 38, far38 (docs/accountant_tail.md §52): a scaled far-tail run's round within BODY_WHOLE_ACCEPT rel_tol keeps
its clamp (SCALED_PAIR_KEEP, §52.1), and a law bounded above below the maximum so far runs first for its upper value
alone at TOP_COARSE times its step (TOP_COARSE, §52.2). References: an independent y-space quadrature of the bot-vs-x
law's D_up at n = 2, 3 (tests/_far38_botx_reference.py), main's (6d5c8782) certified rel_tol 1e-3 brackets
(/work/venv/main, measured this session; n = 1e8: main 9d10058's, tests/test_far37_first_coarse.py) and main's
rel_tol 1e-2 floats with the switches off."""

from __future__ import annotations

import pytest

from _main_floats34 import session37_floats, switch
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail, limits
from sharpdp.shuffle.accountant.far_tail_steps import pair_keep
from sharpdp.shuffle.laws import laws_for


def _bounds(n: int, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    return ShuffleAccountant(GaussianRandomizer(0.5, 1), n, rel_tol=rel_tol).get_delta_bounds(eps)


def _law(eps: float, i: int):
    gamma, law = laws_for(GaussianRandomizer(0.5, 1), eps, "zero_out")[i]
    return float(gamma), law


def _spy(monkeypatch, name: str) -> list:
    """The calls that follow of far_tail.<name> (jump_term: the steps; certify_bigjump: the keywords and result)."""
    seen: list = []
    orig = getattr(far_tail, name)
    if name == "jump_term":
        monkeypatch.setattr(far_tail, name, lambda law, g, n, lat, h, *a, **k: seen.append(h) or orig(law, g, n, lat, h,
                                                                                                      *a, **k))
    else:
        def spy(*a, **k):
            r = orig(*a, **k)
            seen.append((k.get("top_coarse", 1.0), k.get("lower", True), r.lower, r.upper))
            return r
        monkeypatch.setattr(far_tail, name, spy)
    return seen


# ---------------------------------------------------------------- §52.1

def test_pair_keep_scaled_share(monkeypatch):
    switch(monkeypatch, "COARSE_KEEP", False)  # (**) session 39, far39 (§54.1: a scaled run's share 0.95 with it on)
    assert pair_keep(2**19, True) == limits.BODY_WHOLE_ACCEPT == 0.8
    assert pair_keep(2**19) == pair_keep(2**19, False) == 0.5  # (an unscaled run: §27 (a), as before)
    assert pair_keep(2**20) == 0.8  # (§50.4, unchanged)
    switch(monkeypatch, "SCALED_PAIR_KEEP", False)
    assert pair_keep(2**19, True) == 0.5


# main 6d5c8782 at rel_tol 1e-2 (the default; /work/venv/main, session 38) and its certified rel_tol 1e-3 brackets
# (n = 1e8: main 9d10058's, tests/test_far37_first_coarse.py's MAIN_REDO_TIGHT)
MAIN_DEFAULT = {(10**6, 0.001): (0.12553519877072303, 0.1260532279345355),
                (10**6, 0.01): (0.12313061655376387, 0.12364627428023264),
                (10**7, 0.001): (0.06281460703077935, 0.06294133408069567),
                (10**8, 0.001): (0.028948661372757627, 0.029098664542013052)}
MAIN_TIGHT = {(10**6, 0.001): (0.12584335443215242, 0.12588243643898647),
              (10**6, 0.01): (0.1234389967447076, 0.12349056874994606),
              (10**7, 0.001): (0.0628724015853987, 0.06290807247293755),
              (10**8, 0.001): (0.028959448358522925, 0.02897891873091703)}


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MAIN_DEFAULT), ids=str)
def test_scaled_round_kept_overlaps_main_tight(cell, monkeypatch):
    """The moved cells (§52.3): the bracket never lies below main's tight lower value, overlaps main's tight bracket,
    meets BODY_WHOLE_ACCEPT rel_tol (§48.2 (c)); at n = 1e8 the kept run is §48.2's at 4 h_fit with one window (main: a
    second round at a larger T0, then the run at 2 h_fit); the switch off restores main's floats."""
    seen = _spy(monkeypatch, "jump_term")
    lo, up = _bounds(*cell)
    ref_lo, ref_up = MAIN_TIGHT[cell]
    assert up >= ref_lo * (1 - 1e-12) and lo <= ref_up * (1 + 1e-12), (cell, lo, up)
    assert 0.0 < lo and up - lo <= limits.BODY_WHOLE_ACCEPT * 1e-2 * lo, (cell, lo, up)
    if cell == (10**8, 0.001):
        assert seen == [6.0625], seen
    session37_floats(monkeypatch)  # (**) session 38, lead (main's floats: every session-38 switch off, HAT_PIECES too)
    switch(monkeypatch, "COARSE_KEEP", False)  # (**) session 39, far39 (§54.1 keeps the redo's 0.93 % round)
    assert _bounds(*cell) == MAIN_DEFAULT[cell]


# ---------------------------------------------------------------- §52.2

@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("eps", [0.001, 1.0])
def test_top_coarse_upper_holds_the_quadrature_reference(n, eps, monkeypatch):
    """The bot-vs-x law (bounded above) asked for a bracket below a maximum so far just above its value: the upper-only
    run at TOP_COARSE H is returned ([0, Up_c]) and Up_c is at or above the y-space quadrature's D_up (within rel_tol
    of it); the switch off: the run of before, whose bracket holds the reference too."""
    from _far38_botx_reference import d_up

    switch(monkeypatch, "TOP_COARSE_N", 2)  # (the rule at the reference's n; by default it runs from n = 1e7)
    ref, g = d_up(0.5, eps, n)
    gamma, law = _law(eps, 1)
    assert abs(gamma - g) <= 1e-15 and law.support()[1] < 1.0
    seen = _spy(monkeypatch, "certify_bigjump")
    clear_caches()
    r = far_tail.try_certify(law, gamma, n, 1e-2, 1, negligible=1.05 * ref)
    assert r is not None and r.lower == 0.0 and ref * (1 - 1e-9) <= r.upper <= 1.01 * ref, (r, ref)
    assert seen and seen[0][:2] == (limits.TOP_COARSE, False) and len(seen) == 1, seen
    switch(monkeypatch, "TOP_COARSE", 1.0)
    r0 = far_tail.try_certify(law, gamma, n, 1e-2, 1, negligible=1.05 * ref)
    assert r0 is not None and r0.lower * (1 - 1e-9) <= ref <= r0.upper * (1 + 1e-9), (r0, ref)
    assert seen[1][0] == 1.0


def test_top_coarse_falls_back_where_its_upper_value_is_not_below(monkeypatch):
    """n = 1e4, eps = 1: the upper-only run at 4H gives 0.0291, above the maximum 0.0260 asked: the run of before follows
    and its values are the switch-off ones, bit for bit."""
    switch(monkeypatch, "TOP_COARSE_N", 2)  # (the rule at n = 1e4; by default it runs from n = 1e7)
    gamma, law = _law(1.0, 1)
    clear_caches()
    seen = _spy(monkeypatch, "certify_bigjump")
    r = far_tail.try_certify(law, gamma, 10**4, 1e-2, 1, negligible=0.026)
    assert [s[:2] for s in seen][:1] == [(limits.TOP_COARSE, False)] and seen[0][3] >= 0.026 and len(seen) == 2, seen
    switch(monkeypatch, "TOP_COARSE", 1.0)
    r0 = far_tail.try_certify(law, gamma, 10**4, 1e-2, 1, negligible=0.026)
    assert r == r0


def test_top_coarse_needs_a_maximum_and_a_law_bounded_above(monkeypatch):
    """No maximum so far (the first law), a law unbounded above, or n below TOP_COARSE_N: no upper-only run."""
    gamma, law = _law(1.0, 1)
    clear_caches()
    seen = _spy(monkeypatch, "certify_bigjump")
    far_tail.try_certify(law, gamma, 10**4, 1e-2, 1, negligible=0.026)  # (n = 1e4 < TOP_COARSE_N)
    switch(monkeypatch, "TOP_COARSE_N", 2)
    far_tail.try_certify(law, gamma, 10**4, 1e-2, 1)
    g0, law0 = _law(1.0, 0)
    far_tail.try_certify(law0, g0, 10**4, 1e-2, 1, negligible=1.0)
    assert all(s[0] == 1.0 for s in seen), seen


# the bot-vs-x law's bracket by main 6d5c8782 at rel_tol 1e-3 (/work/venv/main, session 38): its upper value (its lower
# value there is 0: the law is below the maximum so far at every request)
MAIN_BOT_TIGHT_UP = {(10**8, 0.001): 0.028691914909125187, (10**8, 0.01): 0.023278051612678763}


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MAIN_BOT_TIGHT_UP), ids=str)
def test_top_coarse_cells_keep_the_reported_floats(cell, monkeypatch):
    """GaussianRandomizer(0.5), n = 1e8 (§52.3): the bot-vs-x law takes the rule (one upper-only run at 4H, below the
    maximum) and the reported bracket is the one with the switch off, bit for bit; Up_c is within 1 % above main's
    rel_tol 1e-3 upper value of that law."""
    seen = _spy(monkeypatch, "certify_bigjump")
    on = _bounds(*cell)
    top = [s for s in seen if s[0] == limits.TOP_COARSE]
    assert len(top) == 1 and top[0][1] is False and top[0][3] < on[1], seen
    assert MAIN_BOT_TIGHT_UP[cell] * (1 - 1e-3) <= top[0][3] <= 1.01 * MAIN_BOT_TIGHT_UP[cell], (top, cell)
    switch(monkeypatch, "TOP_COARSE", 1.0)
    assert _bounds(*cell) == on


# ---------------------------------------------------------------- §52.3

def test_jump_decides(monkeypatch):
    from sharpdp.shuffle.accountant.far_tail_steps import jump_decides

    # GaussianRandomizer(2), n = 1e8, eps = 0.001 after the first body pass (§52.3): J = [0, 2.437e-22], the body
    # [9.949e-25, 1.0708e-24]: G0 = 2.437e-22 >> 0.8 % of 1.07e-24, the body's gap 7.6e-26 <= 5 % of G0
    assert jump_decides(0.0, 2.437e-22, 7.1e-28, 0.0, 9.949e-25, 1.0708e-24, 1e-2)
    # ... not where the body's gap is more than BODY_JUMP_SHARE of G0 (the passes could still narrow it) ...
    assert not jump_decides(0.0, 2.437e-22, 7.1e-28, 0.0, 0.0, 2e-23, 1e-2)
    # ... nor where an exact body could make the round meet §44.1's test (G0 <= 0.8 rel_tol of the best lower value)
    assert not jump_decides(0.0058814, 0.0058815, 1.14e-5, 0.0, 0.00648, 0.00654, 1e-2)
    assert not jump_decides(0.0, 0.0, 0.0, 2e-6, 2.5e-5, 2.6e-5, 1e-2)  # (a law bounded above: the penalty's gap alone)
    switch(monkeypatch, "BODY_JUMP_STOP", False)
    assert not jump_decides(0.0, 2.437e-22, 7.1e-28, 0.0, 9.949e-25, 1.0708e-24, 1e-2)


# main 6d5c8782's round of that law (/work/venv/main, session 38): its body bracket and its bracket
MAIN_S2_BODY = (1.0368018007092662e-24, 1.0384021526377942e-24)
MAIN_S2_ROUND = (1.0368017996724644e-24, 2.44737983558211e-22)


@pytest.mark.slow
def test_body_passes_stop_where_the_jump_term_decides(monkeypatch):
    """The x vs bot law of GaussianRandomizer(2), n = 1e8, eps = 0.001 (§52.3): one body pass (main: three, the last two
    at N = 5.1e6 and 1.0e7); its bracket holds main's body bracket [1.0368e-24, 1.0384e-24] (main 6d5c8782's passes, the
    same round; certified), and the round's bracket main's (nested: the passes only narrow)."""
    passes: list = []
    orig = far_tail.lattice_pass
    monkeypatch.setattr(far_tail, "lattice_pass", lambda *a, **k: passes.append(a[3]) or orig(*a, **k))
    gamma, law = laws_for(GaussianRandomizer(2.0, 1), 0.001, "zero_out")[0]
    clear_caches()
    r = far_tail.certify_bigjump(law.shifted(up=True), float(gamma), 10**8, 1e-2, 1)
    assert passes == [0.0625], passes
    assert r.body_lo <= MAIN_S2_BODY[0] and MAIN_S2_BODY[1] <= r.body_up * (1 + 1e-12), r
    assert r.lower <= MAIN_S2_ROUND[0] and MAIN_S2_ROUND[1] <= r.upper * (1 + 1e-12), r
    assert 0.0 < r.lower and r.upper - r.lower > limits.BODY_WHOLE_ACCEPT * 1e-2 * r.lower  # (the round misses anyway)
