"""docs/accountant_tail.md §57.4 (``limits.BODY_LOWER_POSITION``): the far-tail body's lower value takes the engine
pass's lattice-position charge where the final factor 1 - 1e-9 does not cover it.

Checked: the lower value moves down by no more than the pass's position charge and the upper value does not move (the
switch off gives session 39's bracket, pinned); the new bracket holds a rel_tol-1e-3 bracket of session 39's code
(independent of the rule: its lower value, from a finer pass, below the new upper value, its upper value above the new
lower value)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail_steps
from sharpdp.shuffle.accountant.lattice import PassResult

# session 39's floats (main c6d2e6a1) at two far-tail cells: GaussianRandomizer(1, 1), zero-out
S39 = {(10**6, 0.01): (0.000322789856302492, 0.0003251844755208789)}


def _bracket(n: int, eps: float, rel_tol: float | None = None) -> tuple[float, float]:
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), n) if rel_tol is None else \
        ShuffleAccountant(GaussianRandomizer(1.0, 1), n, rel_tol=rel_tol)
    return tuple(float(x) for x in acc.get_delta_bounds(eps))  # type: ignore[return-value]


def test_switch_off_gives_session39_floats(monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)
    assert _bracket(10**6, 0.01) == S39[(10**6, 0.01)]


def test_lower_moves_down_by_at_most_the_charge_upper_unchanged(monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    lo, up = _bracket(10**6, 0.01)
    lo39, up39 = S39[(10**6, 0.01)]
    assert up == up39
    assert lo < lo39 and lo39 - lo <= 1e-8 * lo39  # (measured 7e-9 relative)


def test_bracket_holds_a_finer_session39_bracket(monkeypatch):
    lo, up = _bracket(10**6, 0.01)
    switch(monkeypatch, "BODY_LOWER_POSITION", False)
    lo3, up3 = _bracket(10**6, 0.01, rel_tol=1e-3)
    assert lo3 <= up and lo <= up3 and lo <= lo3


@pytest.mark.parametrize("v, pos, moved", [(1.0, 0.5e-9, False), (1.0, 2e-9, True), (0.0, 1e-30, True)])
def test_body_lower_takes_the_charge_above_the_final_factors_share(monkeypatch, v, pos, moved):
    terms = dict(E_lower=v, wrap_high=0.0, lower_fft_roundoff=0.0, lower_pmf_tv=0.0, lower_overshoot=0.0,
                 lattice_position=pos)
    r = PassResult(lower=0.0, upper=1.0, main=1.0, tail_T=0.0, tail_B=0.0, grid=None, terms=terms)  # type: ignore[arg-type]
    base = v * (1 - 1e-12)
    got = far_tail_steps.body_lower(r)
    assert got == (max(base - pos * (1 + 1e-12), 0.0) if moved else base)
    switch(monkeypatch, "BODY_LOWER_POSITION", False)
    assert far_tail_steps.body_lower(r) == base
