"""Session 48 (tail48): an upper-first far-tail run follows the bracket's redo with the lower clamp B x 4
(``limits.TAIL48_UPPER_B``, docs/accountant_tail.md §77).

References: the bracket of a fresh accountant (``get_delta_bounds(eps)``: its own rounds, the centroid law's lower
values; a second certified computation) -- an upper value must never be below its lower value, and the rule's goal is
an upper value within 0.3 % of its upper value; the switch off (session 47's run) for what the rule changes.
"""

from __future__ import annotations

import pytest
from _main_floats34 import switch

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import far_tail_upper, limits

BMG = (0.0653, 0.723)  # the replace-one pair of docs/composition.md §2.31.4
HEAVY = (0.0462579752243591, 0.7578495751181393)  # calibrate_bmg(1e4, 1, 1e-6, 1)


def _acc(params, adjacency="replace"):
    sh.clear_caches()
    return sh.ShuffleAccountant(sh.BlanketMixedGaussian(*params, 1), 10**4, adjacency)


def _upper_first(params, eps, adjacency="replace"):
    lo, up = _acc(params, adjacency).get_delta_bounds(eps, lower=False)
    if adjacency == "replace":
        assert lo == 0.0  # (no lower value computed: the upper-first value, not a bracket)
    return float(up)


@pytest.mark.parametrize("params,eps", [(BMG, 3.4), (BMG, 3.8), (HEAVY, 3.5)])
def test_upper_first_within_the_bracket(monkeypatch, params, eps):
    """Deep tail (delta 1e-12 - 1e-11): with the rule the upper-first value lies in [lower, 1.003 upper] of the
    bracket (measured 1.0005 - 1.0013 on BMG); without it 0.7 - 1.0 % above the bracket's upper value."""
    lo, up = (float(v) for v in _acc(params).get_delta_bounds(eps))
    switch(monkeypatch, "TAIL48_UPPER_B", True)
    on = _upper_first(params, eps)
    assert lo <= on <= 1.003 * up, (lo, on, up)
    switch(monkeypatch, "TAIL48_UPPER_B", False)
    off = _upper_first(params, eps)
    assert off > 1.005 * up and on < off, (on, off, up)


def test_skipped_rounds_do_not_move_the_value(monkeypatch):
    """A round skipped before its jump term (the redo certain, §77) would not have been the least upper value:
    the same floats with no round skipped (SKIP_OVER infinite)."""
    switch(monkeypatch, "TAIL48_UPPER_B", True)
    skipped = [_upper_first(BMG, e) for e in (3.3, 3.6, 3.85)]
    monkeypatch.setattr(far_tail_upper, "SKIP_OVER", float("inf"))
    assert [_upper_first(BMG, e) for e in (3.3, 3.6, 3.85)] == skipped


def test_zero_out_unchanged(monkeypatch):
    """The zero-out round's upper-first values (measured: no law of it takes the rule) stay bit for bit."""
    off = [_upper_first(BMG, e, "zero_out") for e in (1.0, 3.0)]
    switch(monkeypatch, "TAIL48_UPPER_B", True)
    assert [_upper_first(BMG, e, "zero_out") for e in (1.0, 3.0)] == off


def test_skip_round_checks_its_inputs():
    with pytest.raises(ValueError, match="rel_tol"):
        far_tail_upper.skip_round(1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="est"):
        far_tail_upper.skip_round(1.0, 1e-2, -1.0)
    level = 0.05 * far_tail_upper.UPPER_REDO * far_tail_upper.SKIP_OVER * 1e-2
    assert far_tail_upper.skip_round(1.01 * level, 1e-2, 1.0) and not far_tail_upper.skip_round(level, 1e-2, 1.0)


def test_switches_default_off():
    # TAIL48_UPPER_B on since session 48's merge (a full suite run with it on); the skip stays off
    assert limits.TAIL48_UPPER_B is True and limits.TAIL48_BRACKET_SKIP is False


@pytest.mark.parametrize("params,eps", [(BMG, 3.0), (BMG, 3.9), (HEAVY, 3.5)])
def test_bracket_skip_same_bracket(monkeypatch, params, eps):
    """§77.6: a bracket's rounds skipped before their jump term (penalty > BRACKET_SKIP est) give the same bracket
    (measured bit for bit at 14 eps of [0.05, 3.9] on the BMG replace-one round), and it holds the upper value first."""
    ref = _acc(params).get_delta_bounds(eps)
    switch(monkeypatch, "TAIL48_BRACKET_SKIP", True)
    assert _acc(params).get_delta_bounds(eps) == ref
    switch(monkeypatch, "TAIL48_UPPER_B", True)
    assert ref[0] <= _upper_first(params, eps)


def test_skip_bracket_round_checks_its_input():
    with pytest.raises(ValueError, match="est"):
        far_tail_upper.skip_bracket_round(1.0, 0.0)
    b = far_tail_upper.BRACKET_SKIP
    assert far_tail_upper.skip_bracket_round(1.01 * b, 1.0) and not far_tail_upper.skip_bracket_round(b, 1.0)
