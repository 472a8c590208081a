"""The randomizer contract (sharpdp.shuffle.LocalRandomizer): one suite every randomizer passes.

For each randomizer: it implements the protocol; its laws are probability laws of
l_eps(Y) = (R_x1 - e^eps R_x1')(Y) / R_BG(Y), Y ~ R_BG, whose mean is exactly 1 - e^eps
(E_BG[R_x / R_BG] = 1); the indices obey the HCR-type bound d chi_up^2 <= Err_1 (Takagi,
Theorem "hcr-chiup-lower-bound"); sampling is reproducible, independent of ``threads``, and the
estimate of a fixed input is within 5 standard errors sqrt(Err_1 / n) of the truth (unbiased,
with the stated single-user MSE as variance bound); the accountant's bracket is ordered; bad
input raises ValueError / TypeError naming the parameter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

from sharpdp.shuffle import (
    BlanketMixedGaussian,
    GaussianRandomizer,
    GeneralRandomizer,
    LocalRandomizer,
    PrivUnit,
    RandomizedResponse,
    ShuffleAccountant,
    mse_lower_bound,
)

from _densities import T as _T  # binary RR with eps0 = 1, lifted to a density on [-1, 1]
from _densities import half as _half
from _densities import lifted_rr as _lifted_rr


@dataclass
class Case:
    make: Callable[[], Any]
    inputs: Callable[[int], np.ndarray]  # n identical inputs
    truth: np.ndarray  # what estimate() estimates for those inputs
    laws_exact: bool = True  # laws are the exact law of l_eps (else a certified upper law)


def _unit(d):
    v = np.arange(1.0, d + 1.0)
    return v / np.linalg.norm(v)


CASES = {
    "bmg": Case(lambda: BlanketMixedGaussian(0.8, 2.0, 3), lambda n: np.tile(0.6 * _unit(3), (n, 1)),
                0.6 * _unit(3)),
    "gaussian": Case(lambda: GaussianRandomizer(1.5, 1), lambda n: np.full((n, 1), -0.5), np.array([-0.5])),
    "rr2": Case(lambda: RandomizedResponse(2, 1.0), lambda n: np.ones(n, dtype=np.int64), np.array([0.0, 1.0])),
    "rr5": Case(lambda: RandomizedResponse(5, 2.0), lambda n: np.full(n, 3, dtype=np.int64),
                np.eye(5)[3]),
    "privunit": Case(lambda: PrivUnit(0.7, 0.2, 4), lambda n: np.tile(_unit(4), (n, 1)), _unit(4)),
    "general": Case(lambda: GeneralRandomizer(_lifted_rr, [-1.0, 1.0], (-1.0, 1.0), blanket=_half, gamma=1 - _T,
                                              breakpoints=[0.0], cells=32, log_curvature=0.0),
                    lambda n: np.full(n, 0.5), np.array([0.5]), laws_exact=False),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    c = CASES[request.param]
    return request.param, c, c.make()


def test_implements_the_protocol(case):
    _, _, r = case
    assert isinstance(r, LocalRandomizer)
    assert not isinstance(object(), LocalRandomizer)


@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_laws_are_probability_laws_with_mean_one_minus_e_eps(case, eps):
    name, c, r = case
    for adjacency in ("zero_out", "replace"):
        try:
            laws = r.privacy_amplification_laws(eps, adjacency)
        except NotImplementedError:
            assert name == "gaussian" and adjacency == "replace"  # no proven worst-case pair
            continue
        assert laws
        for gamma, law in laws:
            assert 0.0 < gamma <= 1.0
            if c.laws_exact:
                assert law.mean() == pytest.approx(-math.expm1(eps), rel=1e-9, abs=1e-12)
            else:  # a certified upper law: a mean-preserving spread shifted up
                assert law.mean() >= -math.expm1(eps) - 1e-9
            lo, hi = law.support()
            assert lo <= law.mean() <= hi
    legs = r.zero_out_legs()
    n_zero = len(r.privacy_amplification_laws(eps, "zero_out"))
    assert len(legs) == 2
    for leg in legs:
        assert leg is None or all(0 <= i < n_zero for i in leg)
    s = r.privacy_amplification_surcharge(eps, "zero_out")
    assert 0.0 <= s <= 1.0


def test_indices_and_the_hcr_bound(case):
    _, _, r = case
    lo, up = r.shuffle_indices("zero_out")
    assert (lo, up) == (r.chi_lo, r.chi_up) == (r.chi_lo_for("zero_out"), r.chi_up_for("zero_out"))
    assert lo >= 0.0 and up > 0.0
    # HCR-type bound (Takagi, Theorem "hcr-chiup-lower-bound"): d chi_up^2 <= Err_1
    assert mse_lower_bound(up, r.dim) <= r.mse_single * (1 + 1e-9)


def test_sampling_reproducible_and_estimate_unbiased(case):
    _, c, r = case
    n = 40_000
    x = c.inputs(n)
    a = r.sample(x, rng=11, threads=1)
    assert np.array_equal(a, r.sample(x, rng=11, threads=2))
    assert np.array_equal(a, r.sample(x, rng=np.random.default_rng(11)))
    assert not np.array_equal(a, r.sample(x, rng=12))
    est = np.atleast_1d(r.estimate(a))
    assert est.shape == c.truth.shape
    # per coordinate, Var <= Err_1 / n (Err_1 sums the coordinates' variances)
    assert np.all(np.abs(est - c.truth) <= 5.0 * math.sqrt(r.mse_single / n))


def test_accountant_bracket_ordered(case):
    _, _, r = case
    acc = ShuffleAccountant(r, 1000)
    for eps in (0.05, 0.5):
        lo, up = acc.get_delta_bounds(eps)
        assert 0.0 <= lo <= up <= 1.0
        assert acc.get_delta(eps) == up


def test_bad_input(case):
    _, c, r = case
    x = c.inputs(4)
    with pytest.raises(ValueError, match="x"):
        r.sample(x[:0])
    with pytest.raises(ValueError, match="threads"):
        r.sample(x, rng=0, threads=0)
    with pytest.raises(TypeError, match="rng"):
        r.sample(x, rng="seed")
    with pytest.raises(ValueError, match="adjacency"):
        r.shuffle_indices("add")
    with pytest.raises(ValueError, match="adjacency"):
        r.privacy_amplification_laws(0.1, "add")
    with pytest.raises(ValueError, match="adjacency"):
        r.privacy_amplification_surcharge(0.1, "add")
    with pytest.raises(ValueError, match="epsilon"):
        r.privacy_amplification_surcharge(float("nan"))
