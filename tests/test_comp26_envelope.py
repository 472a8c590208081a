"""ComposedAccountant's non-increasing envelope (docs/composition.md §4.4): where the rounds' release-sampler charge
makes the composed value rise with eps, a value certified at a smaller eps* is reported. Checked against fresh
per-eps values of an independent accountant, the 2 K tau floor of every certified value, brute-force monotonicity
over random eps pairs, and get_epsilon's answer and refusal."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.basic_composition import envelope, share
from sharpdp.shuffle.calibration.rounds import model_composition

K = 3
N = 10**6
BMG = BlanketMixedGaussian(0.95, 4.6, 1)  # README's account example: its certified values level off near 2.9e-29


@pytest.fixture(scope="module")
def ca():
    return model_composition(BMG, N, "zero_out", K, 25.0, progress=None)


@pytest.fixture(scope="module")
def fresh():
    """An independent round accountant: fresh reports (no monotone memo shared with ``ca``'s rounds)."""
    return ShuffleAccountant(BMG, N)


def _fresh_basic(acc, eps: float) -> float:
    """K x the round's fresh certified value at eps / K (basic composition, Claim D of §4.3)."""
    return K * float(acc.report(share(eps, K)).upper)


@pytest.mark.parametrize("eps", [2.0, 25.0, 700.0])
def test_envelope_is_never_above_a_fresh_value_at_a_smaller_epsilon(ca, fresh, eps):
    v = float(ca.get_delta(eps))
    # a brute-force grid of fresh basic values at eps' <= eps (each certified at eps' hence at eps): the envelope
    # is not above any of them by more than the golden-section search's placement (0.1 %)
    top = min(eps, K * fresh.eps_tau)
    grid = [_fresh_basic(fresh, x) for x in np.linspace(0.02 * top, top, 60)] + [_fresh_basic(fresh, 1.2433)]
    assert v <= min(grid) * (1 + 1e-3)
    assert v <= float(ca._route_upper(eps))  # and never above the value at eps itself
    # (caught: the envelope disabled, `envelope` returning None: 2.73e-27 at 25, 7.10e-18 at 700 against 8.66e-29)


@pytest.mark.parametrize("eps", [2.0, 25.0, 700.0])
def test_envelope_is_never_below_a_lower_reference(ca, fresh, eps):
    lo, up = (float(x) for x in ca.get_delta_bounds(eps))
    # every certified basic value is >= K (1 + e^eps') tau >= 2 K tau (docs/sampling.md §4): the floor no route beats
    assert up >= 2 * K * fresh.sampler_tau * (1 - 1e-12)
    # the reference lower value is basic composition's at eps* (K x the round's lower value there), below the upper
    route, at = ca.delta_route(eps)
    assert route == "basic" and at < eps and lo <= up
    assert lo == pytest.approx(K * float(fresh.get_delta_bounds(share(at, K))[0]), rel=1e-9, abs=1e-300)
    assert float(ca.get_delta(eps)) == up
    # (caught: get_delta_bounds reporting the floor's lower value as its upper one: up = 0 < 2 K tau)


def _fresh_composition(ca) -> ComposedAccountant:
    """``ca``'s pairs over a fresh round accountant: no value of an earlier query in the rounds' monotone memo
    (docs/accountant.md step M), which would otherwise lower later values whatever the envelope does."""
    new = ComposedAccountant([(ShuffleAccountant(BMG, N), K)], ca.value_discretization_interval)
    new._pairs = ca.pairs()
    return new


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.floats(0.3, 40.0), st.floats(0.3, 40.0))
def test_composed_delta_is_non_increasing_over_random_epsilon_pairs(ca, a, b):
    lo_e, hi_e = min(a, b), max(a, b)
    c = _fresh_composition(ca)
    v_hi = float(c.get_delta(hi_e))  # (the larger epsilon first: nothing below it in the rounds' memo yet)
    assert v_hi <= float(c.get_delta(lo_e)) * (1 + 1e-9)
    # (caught: the envelope disabled: e.g. 3 x 3.4e-29 at a large eps above 8.7e-29 at 1.3)


def test_smallest_certified_delta_and_get_epsilon(ca, fresh):
    v, at, route = ca.smallest_certified_delta()
    assert route == "basic" and 1.0 < at < 1.5 and v == pytest.approx(_fresh_basic(fresh, at), rel=1e-6)
    # below it: refused, and the message names it (repr, the library's form)
    with pytest.raises(ValueError, match=r"below the smallest certified composed delta found, " + re.escape(repr(v))):
        ca.get_epsilon(0.5 * v)
    # at or above it: answered, with get_delta(answer) <= delta, and no larger than eps* (the floor's epsilon)
    e = ca.get_epsilon(1.01 * v)
    assert float(ca.get_delta(e)) <= 1.01 * v and e <= at * (1 + 1e-3)
    # a brute-force check of the smallest epsilon: a fresh basic value a little below the answer exceeds delta
    assert _fresh_basic(fresh, 0.98 * e) > 1.01 * v
    # (caught: the old refusal naming only the pair's infinity mass 1.126e-18)


def test_no_charge_no_envelope():
    """k-RR rounds have no release-sampler charge: no search, the value at eps itself (nothing changes)."""
    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 300)
    ca = ComposedAccountant([(acc, 3)], 2e-3)
    calls = []
    assert envelope(ca.parts, 5.0, 1e-30, lambda: calls.append(1)) is None and not calls
    assert ca._floor() is None
    for e in (0.5, 2.0, 50.0):
        assert float(ca.get_delta(e)) == float(ca._route_upper(e)) and ca.delta_route(e)[1] == e
    # (caught: floor_point searching rounds without a charge: calls == [1])


def test_envelope_trigger_only_where_the_charge_dominates(ca):
    """Where the charge is a small part of the value (eps = 1: 3.84e-26, charge 8e-29) the value at eps is kept."""
    assert ca.delta_route(1.0) == ("basic", 1.0)
    assert envelope(ca.parts, 1.0, float(ca._route_upper(1.0)), lambda: pytest.fail("searched")) is None
    assert math.isfinite(float(ca.get_delta(1.0)))
