"""Session 40, body40 (docs/accountant_tail.md §57): a far-tail round's next body pass runs its centroid (lower) lattice
law alone where the body's upper value from its last two full passes is estimated settled (BODY_LOWER_ONLY,
far_tail_steps.lower_only_next). References: an independent numpy-FFT estimate of the BMG's D_up
(tests/_rev29_fft_reference.py with the mechanism's closed-form law, tests/_rev29_bmg_reference.py: no law object,
lattice or certified FFT of the accountant), the full pass's lower value at the same step (the switch off, bit for
bit) and main's floats (c6d2e6a1)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest

from _main_floats34 import switch
from _review28_ak_reference import OneTerm
from _rev29_bmg_reference import params
from _rev29_fft_reference import d_up_fft, richardson
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail, limits
from sharpdp.shuffle.accountant.far_tail_steps import lower_only_next
from sharpdp.shuffle.accountant.results import Grid


class _P:
    def __init__(self, h: float, main: float):
        self.grid, self.main = Grid(h=h, N=0, T=0.0, B=0.0), main


def test_lower_only_next_reads_the_second_order_estimate(monkeypatch):
    """(up(h1) - up(h2)) r^2 / (1 - r^2) against BODY_LOWER_SHARE BODY_WHOLE_ACCEPT rel_tol value; steps at least
    BODY_LOWER_RATIO apart, upper values falling; the switch off: never."""
    v = 1.0
    tgt = limits.BODY_LOWER_SHARE * limits.BODY_WHOLE_ACCEPT * 1e-2 * v  # (0.002)
    assert lower_only_next(_P(0.8, 1.0 + 15 * 0.0019), _P(0.2, 1.0), v, 1e-2, 10**9)  # (estimate 0.0019)
    assert not lower_only_next(_P(0.8, 1.0 + 15 * 0.0021), _P(0.2, 1.0), v, 1e-2, 10**9)
    assert abs(15 * tgt - 0.03) < 1e-15
    assert not lower_only_next(None, _P(0.2, 1.0), v, 1e-2, 10**9)
    assert not lower_only_next(_P(0.25, 1.001), _P(0.2, 1.0), v, 1e-2, 10**9)  # (steps too close)
    assert not lower_only_next(_P(0.8, 0.999), _P(0.2, 1.0), v, 1e-2, 10**9)  # (upper value rising: no estimate)
    assert not lower_only_next(_P(0.8, float("inf")), _P(0.2, 1.0), v, 1e-2, 10**9)
    assert not lower_only_next(_P(0.8, 1.0 + 15 * 0.0019), _P(0.2, 1.0), 0.0, 1e-2, 10**9)
    assert not lower_only_next(_P(0.8, 1.0), _P(0.2, 1.0 - 1e-9), v, 1e-2, 10**9 - 1)  # (below BODY_LOWER_N)
    assert lower_only_next(_P(0.8, 1.0), _P(0.2, 1.0 - 1e-9), v, 1e-2, 10**9)
    switch(monkeypatch, "BODY_LOWER_ONLY", False)
    assert not lower_only_next(_P(0.8, 1.0), _P(0.2, 1.0 - 1e-9), v, 1e-2, 10**9)


def _passes(monkeypatch) -> list:
    seen: list = []
    orig = far_tail.lattice_pass

    def spy(*a, **k):
        r = orig(*a, **k)
        if hasattr(r, "terms"):
            seen.append((a[3], k.get("upper", True), far_tail._body_lower(r), r.main))
        return r
    monkeypatch.setattr(far_tail, "lattice_pass", spy)
    return seen


def test_lower_only_pass_holds_the_fft_reference(monkeypatch):
    """BMG (0.0389, 0.529), n = 1e4, ε = 0.001 (the x vs ⊥ law's first round: three body passes): the third runs the
    lower law alone; its lower value is the full pass's at the same step, bit for bit (the switch off), and the
    reported bracket holds the FFT reference (0.0912500, h^2-extrapolated, indicator 5e-7) and is main's."""
    a, b, r = params(0.0389, 0.529, 0.001)
    ref, ind = richardson(d_up_fft(OneTerm(a, b, r), a, 0.0389, 10**4, 0.04, -600.0, 2**19, neg=True))
    assert ind < 2e-6 and abs(ref - 0.0912500) < 1e-6
    switch(monkeypatch, "BODY_LOWER_N", 2)  # (the rule at n = 1e4; by default it runs from n = 1e9)
    seen = _passes(monkeypatch)
    clear_caches()
    on = ShuffleAccountant(BlanketMixedGaussian(0.0389, 0.529, 1), 10**4).get_delta_bounds(0.001)
    lone = [s for s in seen if s[1] is False]
    assert len(lone) == 1 and lone[0][3] == float("inf"), seen
    assert on[0] <= ref - 10 * ind and ref + 10 * ind <= on[1] and on[1] - on[0] <= 1e-2 * on[0], (on, ref)
    assert on == (0.09108163385384095, 0.09152874938952538)  # (main c6d2e6a1's floats)
    switch(monkeypatch, "BODY_LOWER_ONLY", False)
    seen.clear()
    clear_caches()
    assert ShuffleAccountant(BlanketMixedGaussian(0.0389, 0.529, 1), 10**4).get_delta_bounds(0.001) == on
    full = [s for s in seen if s[0] == lone[0][0]]
    assert len(full) == 1 and full[0][1] is True and full[0][2] == lone[0][2] and full[0][3] < float("inf"), seen


# main c6d2e6a1 at rel_tol 1e-2 (/work/venv/main, session 40)
MAIN_1E9 = (1.0096821406212782e-06, 1.01136951162273e-06)


@pytest.mark.slow
def test_bmg_1e9_moves_within_rel_tol(monkeypatch):
    """The BMG that calibrate_bmg picks at n = 1e9, ε = 0.001 (0.0786, 0.597): the third body pass runs its lower law
    alone; the reported lower value is main's, the upper value main's second pass's (1.01267e-6 against 1.01137e-6):
    another certified bracket containing main's, its gap 0.30 % within BODY_WHOLE_ACCEPT rel_tol; the switch off gives
    main's floats."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    seen = _passes(monkeypatch)
    clear_caches()
    on = ShuffleAccountant(BlanketMixedGaussian(0.0786, 0.597, 1), 10**9).get_delta_bounds(0.001)
    assert [s[0] for s in seen if s[1] is False] == [0.091796875], seen
    assert on[0] == MAIN_1E9[0] and MAIN_1E9[1] < on[1] <= 1.0014 * MAIN_1E9[1], on
    assert on[1] - on[0] <= limits.BODY_WHOLE_ACCEPT * 1e-2 * on[0]
    switch(monkeypatch, "BODY_LOWER_ONLY", False)
    clear_caches()
    assert ShuffleAccountant(BlanketMixedGaussian(0.0786, 0.597, 1), 10**9).get_delta_bounds(0.001) == MAIN_1E9
