"""The k-round search (docs/composition.md §4.1-§4.2): the pair's top placed by secant steps on certified tail
values when the model misses the round, secant / regula falsi steps of the search on log D, the returned BMG
re-checked by an independent full-accuracy composition."""

import math

import pytest

from sharpdp.shuffle import ComposedAccountant, ShuffleAccountant, calibrate_bmg_report, privacy_profile
from sharpdp.shuffle.calibration import rounds as CR
from sharpdp.shuffle.calibration import search as CS
from sharpdp.shuffle.calibration.estimates import template_delta_estimate
from sharpdp.shuffle.randomizers import BlanketMixedGaussian
from test_shuffle_calibration_rounds import _StandIn  # the same single-round stand-in (the template)


def test_model_miss_case_rechecked_by_an_independent_full_accuracy_composition(monkeypatch):
    """n = 2000, 2 rounds at eps = 1: the template misses every candidate's round (its top is ~1/4 of the floor's
    eps), so the secant places the top; the returned BMG's K-fold composition by a fresh full-accuracy
    ComposedAccountant (the default adaptive pair, rel_tol 1e-2, cover_upper on) is <= delta, and the search's
    figure is a little above it (both certified; the search's pair is coarser)."""
    tops = []
    orig = CR._tail_top
    monkeypatch.setattr(CR, "_tail_top", lambda acc, floor, top, progress=False:
                        tops.append((acc, floor, top, orig(acc, floor, top, progress))) or tops[-1][-1])
    n, eps, delta, k = 2000, 1.0, 1e-6, 2
    rep = calibrate_bmg_report(n, eps, delta, 1, rounds=k, progress=False)
    b = rep.randomizer
    lo, up = rep.delta_bounds
    assert lo <= up <= delta and up >= delta * math.exp(CR._ROUNDS_CLOSE)
    if (b.gamma, b.sigma0) == MODEL_MISS_BMG:  # the stored reference of this BMG (~5 s of CPU; below)
        full_lo, full_up = MODEL_MISS_FULL
    else:  # another search result: its own reference, live
        full_lo, full_up = ComposedAccountant([(ShuffleAccountant(b, n), k)]).get_delta_bounds(eps)
    assert full_up <= delta
    assert up >= full_lo * (1 - 1e-3) and up / full_up - 1.0 < 0.05, (up, full_up)
    # the secant path ran: the model's top had a certified value far above the floor, the new top's is <= it
    assert tops and all(new > top for _, _, top, new in tops)
    for acc, floor, top, new in tops:
        assert float(privacy_profile(acc, top)) > CR._MODEL_MISS * floor
        assert float(privacy_profile(acc, new)) <= floor


def test_tail_top_lands_near_the_floor_not_at_a_doubling_point():
    """A heavy round of the flights table (K = 2, eps = 4: the template says 1e-9 at 0.64 nats where the
    certified value is 7e-4): the secant's top has a certified value <= the floor and not far below it
    (the doubling search took 10.3 nats, values ~1e-14 costing ~1 s each; the floor is crossed near 6.6)."""
    b = BlanketMixedGaussian(0.04055069422270861, 0.4323929841601774, 4)
    n = 327346
    acc = CS.make_accountant(b, n, "zero_out", CR._PAIR_REL_TOL)
    floor, top = CR._pair_top(b, n, 2, 4.0, 1e-6)
    assert floor == pytest.approx(1e-9) and top < 1.0
    new = CR._tail_top(acc, floor, top)
    v = float(privacy_profile(acc, new))
    assert v <= floor and v >= 1e-3 * floor, (new, v)
    assert 6.0 < new < 8.0


def test_tail_top_keeps_a_top_the_model_got_right():
    b = BlanketMixedGaussian(0.9, 3.0, 1)
    acc = CS.make_accountant(b, 3000, "zero_out", CR._PAIR_REL_TOL)
    floor, top = CR._pair_top(b, 3000, 3, 0.003)
    assert CR._tail_top(acc, floor, top) == top


# ---------------------------------------------------------------- the search steps, on stand-ins (fast)
def _steep(power, log):
    """Stand-in composition steep in sigma0: delta (T / delta)^power, T the template at chi_lo / sqrt(k)
    (power 1: the template's own slope; power 6: six times steeper in log, the Gaussian shift overshoots)."""
    def bounds(bmg, n, adjacency, rounds, epsilon, progress=False, delta=None):
        t = template_delta_estimate(bmg.chi_lo / math.sqrt(rounds), n, epsilon)
        d = min(1e-6 * (t / 1e-6) ** power, 1.0)
        log.append((bmg, d))
        return d, d
    return bounds


@pytest.mark.parametrize("power", [3.0, 6.0, 12.0])
def test_search_converges_on_a_steep_composed_delta(monkeypatch, power):
    monkeypatch.setattr(CS, "make_accountant", lambda r, n, adjacency, rel_tol=CS.CERT_REL_TOL: _StandIn(r, n))
    log = []
    monkeypatch.setattr(CR, "_composed_bounds", _steep(power, log))
    rep = calibrate_bmg_report(5000, 0.1, 1e-6, 1, rounds=4, progress=False)
    ds = [d for _, d in log]
    # within the budget, the returned value is the last one and it lies in the stop window
    assert rep.composed_certifications == len(log) <= CR._ROUNDS_CERTS, ds
    assert 1e-6 * math.exp(CR._ROUNDS_CLOSE) <= rep.delta_bounds[1] == ds[-1] <= 1e-6, ds


def test_next_s_regula_falsi_inside_the_bracket():
    gauss = lambda s, d: s + 10.0  # noqa: E731  (a model far off: must not be used once bracketed)
    seen = [(0.0, math.log(2e-7)), (-0.1, math.log(3e-6))]
    target = math.log(0.9e-6)
    s = CR._next_s(-0.1, 3e-6, False, 1, seen, -0.1, 0.0, gauss, target)
    chord = -0.1 + (target - seen[1][1]) * 0.1 / (seen[0][1] - seen[1][1])
    assert s == pytest.approx(chord) and -0.1 < s < 0.0
    # an end of the chord too close to the bracket's end is kept a tenth of the width inside
    s = CR._next_s(-0.1, 3e-6, False, 1, [(0.0, math.log(0.91e-6)), (-0.1, math.log(3e-6))], -0.1, 0.0, gauss,
                   target)
    assert s == pytest.approx(-0.01)


def test_next_s_secant_then_safe_side_after_a_failure():
    gauss = lambda s, d: s - 1.0  # noqa: E731
    # one value: the Gaussian shift (bounded by _ROUNDS_MAX_STEP)
    assert CR._next_s(0.0, 1e-7, True, 0, [(0.0, math.log(1e-7))], -math.inf, 0.0, gauss, 0.0) == \
        pytest.approx(-CR._ROUNDS_MAX_STEP)
    # two values on the same side: the secant through them
    seen = [(0.0, math.log(1e-7)), (-0.1, math.log(2e-7))]
    target = math.log(0.9e-6)
    s = CR._next_s(-0.1, 2e-7, True, 0, seen, -math.inf, -0.1, gauss, target)
    assert s == pytest.approx(-0.1 - (target - math.log(2e-7)) * 0.1 / (math.log(2e-7) - math.log(1e-7)))
    # a failure: to the safe side (larger s) by at least _ROUNDS_STEP, even if the model points the other way
    s = CR._next_s(0.0, 2e-6, False, 1, [(0.0, math.log(2e-6))], 0.0, math.inf, gauss, target)
    assert s == pytest.approx(CR._ROUNDS_STEP)


def test_refined_points_keep_every_value_and_double_the_density():
    dx, pts = CR._pair_points(0.2588)
    d2, p2 = CR._refined(dx, pts)
    d3, p3 = CR._refined(d2, p2)
    assert d2 == dx / 2 and d3 == dx / 4
    # every earlier point is again a point, as the same float (its certified value is reused from the cache)
    assert set(pts) <= set(p2) <= set(p3) and len(p2) == 2 * len(pts) - 1 and len(p3) == 2 * len(p2) - 1
    assert p3[0] == 0.0 and p3[-1] == pts[-1]
    kf = [e / d3 for e in p3]
    assert all(abs(k - round(k)) <= 1e-9 * max(1.0, k) for k in kf)  # on the refined lattice


def test_a_narrow_failure_is_decided_on_a_sharper_pair_and_rechecked(monkeypatch):
    """The flights table at eps = 0.1, 5 rounds: the 40-point pair of this BMG gives ~1.02e-6 (a failure at
    delta = 1e-6, within _REFINE_WITHIN), the refined pair certifies it; an independent full-accuracy
    ComposedAccountant (default adaptive pair) of the same rounds is below delta too, and its reference
    lower value is below the refined figure (both compose pairs of the same round)."""
    b = BlanketMixedGaussian(0.12914, 0.68816, 4)
    n, k, eps, delta = 327346, 5, 0.1, 1e-6
    coarse = CR.model_composition(b, n, "zero_out", k, eps, False, delta).get_delta_bounds(eps)[1]
    assert delta < coarse <= CR._REFINE_WITHIN * delta
    lo, up = CR._composed_bounds(b, n, "zero_out", k, eps, False, delta)
    assert lo <= up <= delta and up <= coarse * (1 + 1e-9)
    full_lo, full_up = NARROW_FULL  # the full-accuracy composition's bounds (stored: ~7 s of CPU; below)
    assert full_up <= delta and up >= full_lo * (1 - 1e-3), (up, full_lo, full_up)
    # without a target (sharpdp account) or for a clear failure there is no refinement
    calls = []
    orig = CR._refined
    monkeypatch.setattr(CR, "_refined", lambda dx, pts: calls.append(dx) or orig(dx, pts))
    CR._composed_bounds(b, n, "zero_out", k, eps, False, None)
    CR._composed_bounds(b, n, "zero_out", k, eps, False, 1e-7)
    assert calls == []
    CR._composed_bounds(b, n, "zero_out", k, eps, False, delta)
    assert len(calls) == 1


# test_a_narrow_failure_is_decided_on_a_sharper_pair_and_rechecked: the reference bounds of the 5-fold composition
# of the flights table's round (certified values of a fixed quantity, so they stay valid references), made by
#   ComposedAccountant([(ShuffleAccountant(BlanketMixedGaussian(0.12914, 0.68816, 4), 327346), 5)],
#                      progress=False).get_delta_bounds(0.1)
NARROW_FULL = (7.897355775300208e-07, 7.993153984072828e-07)

# test_model_miss_case_rechecked_by_an_independent_full_accuracy_composition: the search's BMG (gamma, sigma0) and
# the bounds of its 2-fold composition at eps = 1, n = 2000, made by
#   ComposedAccountant([(ShuffleAccountant(BlanketMixedGaussian(*MODEL_MISS_BMG, 1), 2000), 2)]).get_delta_bounds(1.0)
MODEL_MISS_BMG = (0.10457835323613647, 0.8683420411942083)
MODEL_MISS_FULL = (9.42072113562509e-07, 9.481489734526843e-07)
