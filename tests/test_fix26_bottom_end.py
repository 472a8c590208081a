"""get_epsilon through bot below the release sampler's charge at the far end (docs/accountant.md §9.9): the search's
upper end below e_c (where sampler_floor reaches delta) and the certified refusals, against fresh accountants'
get_delta (the answer certified, a brute-force bisection, a grid of eps in [0, 700] for the refusals)."""

from __future__ import annotations

import math
import time
from functools import lru_cache

import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle import clear_caches
from _main_floats34 import switch  # noqa: E402

XTOL = 1e-3


def _acc(sigma0: float = 2.0) -> sh.ShuffleAccountant:
    return sh.ShuffleAccountant(sh.GaussianRandomizer(sigma0, 1), 1000, "replace")


def _fresh(e: float, sigma0: float = 2.0) -> float:
    clear_caches()
    return float(_acc(sigma0).get_delta(e))


def test_answer_below_the_far_end_charge_is_certified_and_history_free(monkeypatch):
    """sampler_floor(700) = 9.97e-17 > 1e-27 (before: ValueError fresh, 4.85 after get_delta(6)). The answer is
    certified by a fresh get_delta, the same within 2 xtol fresh and after get_delta(6), and within 2 xtol of a
    brute-force bisection of fresh get_delta on [4, 6] (each end checked). Mutations caught: the old refusal
    (delta < min(sampler_floor(700), memo): ValueError); the search's points by decide instead of report (5.260 fresh,
    4.652 after get_delta(6): not within 2 xtol of 4.84, and 4.652 fails the fresh get_delta)."""
    switch(monkeypatch, "VIA_BOTTOM_FLOOR_STOP", False)  # (**) session 36, rep36: pins main's minimised values below VALUE_FLOOR (docs/accountant.md §9.13, rule 4, stops at the first split below it)
    delta = 1e-27
    r_fresh = _acc().get_epsilon(delta)
    seen = _acc()
    seen.get_delta(6.0)
    r_seen = seen.get_epsilon(delta)
    assert seen.get_delta(r_seen) <= delta  # (the object's own memo)
    for r in (r_fresh, r_seen):
        assert _fresh(r) <= delta
    assert abs(r_fresh - r_seen) <= 2 * XTOL * r_fresh
    lo, hi = 4.0, 6.0
    assert _fresh(lo) > delta >= _fresh(hi)
    while hi - lo > XTOL * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _fresh(mid) <= delta else (mid, hi)
    assert abs(r_fresh - hi) <= 2 * XTOL * hi, (r_fresh, lo, hi)


@pytest.mark.slow
@pytest.mark.parametrize("sigma0, delta, why", [
    (2.0, 3e-32, "every certified value at any epsilon is at least"),  # below 4 tau = 3.98e-32 (step 1)
    (2.0, 1e-31, "alone exceeds it, and below it every split"),  # e_c = 1.95 (step 2)
    (1.0, 1e-30, "alone exceeds it, and below it every split"),  # e_c = 4.58 (step 2, leg A's loose lower value)
])
def test_refusals_only_where_no_fresh_value_reaches_delta(sigma0, delta, why):
    """Each refusal is fast (< 1 s CPU), names its reason, and a fresh get_delta on a grid of eps in [0, 700] is
    above delta at every point. Mutations caught: step 2 removed (the 1e-31 and 1e-30 cases go to the golden-section
    search, which certifies splits: the message and the 1 s fail); step 1 removed (3e-32: a ValueError about a leg at
    a negative eps, not the refusal's message)."""
    t = time.process_time()
    with pytest.raises(ValueError, match=r"^delta: .* is below what the released messages can be certified for") as info:
        _acc(sigma0).get_epsilon(delta)
    assert time.process_time() - t < 1.0
    assert why in str(info.value)
    assert _grid_min(sigma0) > delta


@lru_cache(maxsize=None)
def _grid_min(sigma0: float) -> float:
    """The smallest fresh get_delta on a grid of eps in [0, 700] (shared by the cases of one sigma0)."""
    grid = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 12.0, 700.0]
    return min(_fresh(e, sigma0) for e in grid)


def test_refusal_at_1e30_makes_no_split_and_one_loose_leg(monkeypatch):
    """The fast refusal of tests/test_shuffle_api_edges.py::test_via_bottom_delta_below_sampler_floor_refused_at_once
    under §9.9: no split is certified, only leg A at e_c = 4.58 at the loose PROBE_TOL (its lower value 3.05e-7 >
    1e-30; the closed forms give ~4e-168). Mutations caught: the legs' lower values taken at rel_tol (0.01) instead
    of PROBE_TOL (the leg's rel_tol differs); step 2 removed (a split is certified)."""
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, lead: §8.19
    acc = _acc(1.0)
    vb = acc._bottom
    legs: list[tuple[int, float, float]] = []
    leg = vb.leg

    def counted(j, e, rel_tol, negligible=0.0):
        legs.append((j, e, rel_tol))
        return leg(j, e, rel_tol, negligible)

    def no_split(*args, **kwargs):
        raise AssertionError("a split was certified before the refusal")

    monkeypatch.setattr(vb, "leg", counted)
    monkeypatch.setattr(vb, "split", no_split)
    with pytest.raises(ValueError, match=r"^delta: 1e-30 is below .*release sampler"):
        acc.get_epsilon(1e-30)
    assert len(legs) == 1 and legs[0][0] == 0 and legs[0][2] == vb.PROBE_TOL
    assert math.log(1e-30 / acc._bottom.bottom.sampler_tau - 3.0) == pytest.approx(legs[0][1], rel=1e-8)
