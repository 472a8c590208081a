"""What the public accountants accept for epsilon < 0, -inf, +inf and NaN, and what they answer.

Every real epsilon is a point of a privacy profile delta(eps) = sup H_{e^eps} over ordered
neighbouring pairs (docs/composition.md §1); a negative one is what a composition of profiles needs.
References: the exact k-fold hockey stick of the stored pair by direct convolution (non-negative
terms, ``test_composition_review._pair_hockey_stick``), the closed form 1 - (1 - p)^k of the composed
infinity mass, the fact H_t >= (1 - t)_+, and the single round's any-sign profile
(``privacy_profile``: the swap identity of docs/composition.md §1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.basic_composition import basic_bounds
from sharpdp.shuffle.composition import ComposedAccountant
from test_composition_review import _pair_hockey_stick

K = 3  # rounds


@pytest.fixture(scope="module")
def rr():
    """Shuffled binary RR (eps0 = 1, n = 300, zero-out): its pair builds in ~0.3 s."""
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=1.0), 300, "zero_out")
    return acc, ComposedAccountant([(acc, K)], progress=False), ComposedAccountant([(acc, 1)], progress=False)


def test_negative_epsilon_is_the_product_pairs_divergence(rr):
    _, ca, _ = rr
    pair = ca.pairs()[0]
    bottom = K * int(pair.losses[0]) * pair.value_discretization_interval
    for eps in (-3.0, -0.3, -0.02, bottom, bottom - 0.5, -1e-9):
        ref = _pair_hockey_stick(pair, K, eps)
        got = ca.get_delta(eps)
        assert ref * (1 - 1e-13) <= got <= ref * (1 + 1e-5) + 1e-9, (eps, got, ref)
        assert got >= -math.expm1(eps)  # H_t >= 1 - t
        lo, up = ca.get_delta_bounds(eps)
        assert up == got and -math.expm1(eps) * (1 - 1e-15) <= lo <= up
    assert ca.get_delta_bounds(-1e300)[0] >= 1 - 1e-15  # (the lower pairs alone gave 1e-22 there)


def test_infinities_and_nan(rr):
    _, ca, _ = rr
    pair = ca.pairs()[0]
    assert ca.get_delta(-math.inf) == 1.0
    assert ca.get_delta_bounds(-math.inf) == (1.0, 1.0)
    exact = -math.expm1(K * math.log1p(-pair.infinity_mass))  # P(some round's loss = +inf) under the pair
    top = K * int(pair.losses[-1]) * pair.value_discretization_interval
    pair_inf = ca._pair_upper(math.inf)  # the pair route's value at +inf
    assert exact <= pair_inf <= exact * (1 + 1e-12), (pair_inf, exact)
    assert ca._pair_upper(top * 1.001 + 1.0) == pair_inf  # the limit: beyond the support only the infinity mass
    # since basic composition entered get_delta (docs/composition.md §4.3, also at +inf): the smaller of the pair's
    # infinity mass and K x the round's own value at +inf (0 for this pure round, rounded up), no jump up at +inf
    got = ca.get_delta(math.inf)
    assert got == min(pair_inf, basic_bounds(ca.parts, math.inf, lower=False)[1]) < pair_inf
    assert got <= ca.get_delta(top * 1.001 + 1.0) <= pair_inf
    lo, up = ca.get_delta_bounds(math.inf)
    assert up == got and 0.0 <= lo <= up
    for bad in (math.nan, [0.1, math.nan]):
        with pytest.raises(ValueError, match="NaN"):
            ca.get_delta(bad)
        with pytest.raises(ValueError, match="NaN"):
            ca.get_delta_bounds(bad)
    with pytest.raises(TypeError, match="epsilon"):
        ca.get_delta("0.1")
    # an array of both signs and infinities is answered elementwise, in its shape
    grid = np.array([[-math.inf, -0.5, 0.0], [0.01, 0.05, math.inf]])
    out = ca.get_delta(grid)
    assert out.shape == grid.shape
    assert out.tolist() == [[ca.get_delta(float(e)) for e in row] for row in grid]
    assert np.all(np.diff(out.ravel()) <= 0)  # non-increasing in eps, through eps = 0


def test_one_round_matches_the_single_round_profile_at_both_signs(rr):
    """One composed round is the round's own pair: at eps < 0 it follows privacy_profile (the mirrored
    certified values, docs/composition.md §1) as it does at eps >= 0 (within the pair's sampling
    target and cover factor, docs/composition.md §2.2; measured <= 4.5e-4)."""
    acc, _, one = rr
    for eps in (-0.3, -0.1, -0.01, 0.0, 0.05):
        got, ref = one.get_delta(eps), float(sh.privacy_profile(acc, eps))
        assert got == pytest.approx(ref, rel=2e-3), eps


def test_single_round_accountant_takes_a_negative_epsilon(rr):
    """The decision for every public accountant: a negative eps is answered, not refused. For a single
    round the answer is the swap identity on the certified value at -eps (privacy_profile)."""
    acc, _, _ = rr
    assert acc.get_delta(-0.1) == pytest.approx(float(sh.privacy_profile(acc, -0.1)), rel=1e-12)
