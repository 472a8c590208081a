"""Adversarial review (rev-bottom2) of docs/accountant.md §9.4: leg B of a replace-through-bot split certified
to an absolute target, legs cached across targets (ViaBottom.leg), the reported bracket contracted (_contract).

Independent reference: a separate zero-out accountant (own caches) certifies each leg; on a sorted grid of first
legs e1_k, for e1 in [e1_k, e1_{k+1}] the chain A(e1) + e^{e1} B(eps - e1) is >= A_lo(e1_{k+1}) + e^{e1_k}
B_lo(eps - e1_k) (both legs non-increasing), so the minimum over the intervals is a certified lower value of
min over splits of the chain; every upper value the replace accountant reports must be at least it.
Call orders: get_epsilon first (decide's splits with negligible legs fill the cache), then brackets; the reverse;
legs pre-filled at a coarse absolute target, then report. tests/data/review_rev-bottom2/attack.py: the wider
sweep (sigma0 in {0.46, 1, 3}, n in {2, 10, 50, 1000}) this file's cheap cells were taken from."""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

RT = 1e-2


def _acc(sigma0: float, n: int, share: float | None = None) -> ShuffleAccountant:
    acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace", rel_tol=RT)
    assert acc.via_bottom
    if share is not None:
        acc._bottom.ABS_SHARE = share  # (instance attribute: 0 = leg B to rel_tol alone, the module of before)
    return acc


def _chain_floor(sigma0: float, n: int, eps: float, legs, grid: list[float]) -> float:
    """Certified lower value of min over splits e1 in [0, eps] of the chain, from an independent zero-out
    accountant's legs on ``grid`` (sorted, from 0 to eps)."""
    ref = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "zero_out")
    a = [ref._report(x, RT, only=legs[0]).lower for x in grid]
    b = [ref._report(max(eps - x, 0.0), RT, only=legs[1]).lower for x in grid]
    return min(a[k + 1] + math.exp(grid[k]) * (1 - 1e-15) * b[k] for k in range(len(grid) - 1)) * (1 - 1e-12)


def _grid(eps: float, centre: float, half: float, step: float, coarse: int = 24) -> list[float]:
    pts = {eps * k / coarse for k in range(coarse + 1)}
    k = 0
    while centre - half + k * step <= centre + half:
        x = centre - half + k * step
        if 0.0 <= x <= eps:
            pts.add(x)
        k += 1
    return sorted(pts)


def test_rel_tol_request_never_served_a_coarse_leg():
    """A leg cached at a coarse absolute target (1.0: the first certified upper value below 1) must not serve a
    request at rel_tol alone (negligible 0) nor one with a smaller target it does not meet. Catches: the cache
    serving any hit (the _leg_neg check dropped, or its comparison reversed)."""
    acc = _acc(0.46, 2)
    vb = acc._bottom
    e2 = 3.5
    ref = ShuffleAccountant(GaussianRandomizer(0.46, 1), 2, "zero_out")._report(e2, RT, only=vb.legs[1])
    coarse = vb.leg(1, e2, RT, 1.0)
    assert coarse.upper >= ref.lower * (1 - 1e-12)
    tight = vb.leg(1, e2, RT)
    assert (tight.lower, tight.upper) == (ref.lower, ref.upper)
    assert tight.upper - tight.lower <= RT * tight.lower
    # a target below the tight leg's upper value: the tight (target 0) report serves it
    assert vb.leg(1, e2, RT, 0.5 * ref.upper) is tight


def test_get_epsilon_first_then_brackets_above_the_certified_chain_floor():
    """GaussianRandomizer(0.46), n = 2, delta = 1e-6: get_epsilon first (decide's local walk with the absolute
    target), then get_delta_bounds at the answer and near it. At the answer the reported 9.9006e-7 comes from
    decide's split, below the fresh full search's bracket (1.06650e-6, 1.06650e-6) at e1 = 25.857 (the full
    search's golden section misses the optimum near e1 = 25.9; the same with ABS_SHARE = 0: not from §9.4);
    it is still above the certified floor 9.850e-7 of min over splits (0.5 % margin). Catches: an upper value
    below the independent chain floor (e.g. a memo or a cached leg served at the wrong epsilon). Not a split's
    upper value taken from a leg's lower value: here e^{e1} B(e2) is below 1e-15 of the value at every split
    reported (leg B's cliff), and the floor's legs have the same rel_tol as the accountant's, so such a value
    stays above it; test_split_values_bracket_tight_independent_legs catches that."""
    acc = _acc(0.46, 2)
    e = acc.get_epsilon(1e-6)
    assert acc.get_delta(e) <= 1e-6
    e1 = e - acc._bottom._hint
    legs = acc._bottom.legs
    for x in (e, 0.98 * e, 1.02 * e):
        lo, up = acc.get_delta_bounds(x)
        # step 0.004 within 0.04 of the optimum, 0.02 out to 0.3 (the floor is that of step 0.004 throughout to
        # 1e-14 relative: its minimum interval lies near the optimum; the same floats as 0.004 within 0.2 and 0.02
        # out to 0.6, 177 grid points against 72 here)
        c = e1 + (x - e)
        floor = _chain_floor(0.46, 2, x, legs, sorted(set(_grid(x, c, 0.04, 0.004)) | set(_grid(x, c, 0.3, 0.02))))
        assert lo <= up and up >= floor, (x, lo, up, floor)
    # the reverse order on a fresh accountant: brackets first (full searches), then get_epsilon
    acc2 = _acc(0.46, 2)
    b = [acc2.get_delta_bounds(x) for x in (e, 0.98 * e, 1.02 * e)]
    e_2 = acc2.get_epsilon(1e-6)
    assert acc2.get_delta(e_2) <= 1e-6
    assert acc2.get_delta_bounds(e)[1] <= b[0][1]  # the monotone memo: no value moved up
    assert abs(e_2 - e) <= 0.01 * e, (e, e_2)  # (29.44 vs 29.60: the order matters, within 0.6 %)


def test_split_values_bracket_tight_independent_legs():
    """GaussianRandomizer(1), n = 2, eps = 2, where e^{e1} B(e2) is 1e-34 A(e1) at f = 0.35 and 3x A(e1) at f = 0.65: each split's
    certified bracket (legs at RT, leg B to its absolute target) must contain the chain of an independent zero-out
    accountant's legs at rel_tol 1e-4 (lower values 100x tighter than the split's: its upper value must be >= their
    chain, its lower value <= the chain of their upper values). After get_epsilon (its walk's legs in the cache).
    Catches (each checked by mutation): a split's upper value taken from leg B's lower value (0.13 % below the chain
    at f = 0.65) or from leg A's lower value (f = 0.35), its lower value taken from leg A's upper value."""
    sigma0, n, eps = 1.0, 2, 2.0
    acc = _acc(sigma0, n)
    acc.get_epsilon(1e-3)
    vb = acc._bottom
    ref = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "zero_out")
    for f in (0.35, 0.65):
        s = vb.split(eps, f, RT)
        e2 = vb._second(eps, s.e1)
        w = math.exp(s.e1)
        a, b = ref._report(s.e1, 1e-4, only=vb.legs[0]), ref._report(e2, 1e-4, only=vb.legs[1])
        floor = (a.lower + w * (1 - 1e-15) * b.lower) * (1 - 1e-12)
        ceil = (a.upper + w * (1 + 1e-15) * b.upper) * (1 + 1e-12)
        assert s.lower <= ceil and s.upper >= floor, (f, s.lower, s.upper, floor, ceil)


@pytest.mark.parametrize("eps", [0.1, 2.0])
def test_prefilled_coarse_legs_do_not_change_the_report(eps):
    """GaussianRandomizer(1), n = 2: every leg B of the search's SPLITS pre-filled at the coarse target 1.0; the
    report must equal a fresh accountant's (a coarse leg is recertified whenever its upper value is not below the
    requested target), and its bracket meet rel_tol. Catches: a coarse cached leg served to a smaller target."""
    acc = _acc(1.0, 2)
    vb = acc._bottom
    for f in vb.SPLITS:
        vb.leg(1, vb._second(eps, f * eps), RT, 1.0)
    r, q = acc.report(eps), _acc(1.0, 2).report(eps)
    assert (r.lower, r.upper) == (q.lower, q.upper), (r, q)
    assert r.upper - r.lower <= RT * r.lower * (1 + 1e-9)


def test_cap_one_one_is_certified_by_independent_legs():
    """GaussianRandomizer(0.46), n = 2, eps = 0.5 reports the cap (1, 1): the independent legs' chain floor over
    every split must be >= 1 (the lower value 1 is claimed as certified). Catches: a cap decided from a value
    that is not a lower value (e.g. an upper value or a leg stopped early taken as lower)."""
    r = _acc(0.46, 2).report(0.5)
    assert (r.lower, r.upper) == (1.0, 1.0)
    legs = _acc(0.46, 2)._bottom.legs
    assert _chain_floor(0.46, 2, 0.5, legs, [0.5 * k / 32 for k in range(33)]) >= 1.0
