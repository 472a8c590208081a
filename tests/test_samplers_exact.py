"""The exact-sampling tables and the law of the grid noise (docs/sampling.md §2-§3).

References are independent of the code under test: mpmath at 60 digits for the table entries,
the rounded-Gaussian law R_s(j) = Phi((j + 1/2)/s) - Phi((j - 1/2)/s) for a chi-square test of
the sampled noise, brute force for the guide table.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import math
import pathlib
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats
from sharpdp._tables import GUIDE_BITS, TAIL_BOUND, rounded_gaussian_cdt
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.randomizers.bmg import default_grid_bits


def _cdf60(s: float, j: int):
    with mpmath.workdps(60):
        return mpmath.erf((j + mpmath.mpf(0.5)) / (mpmath.mpf(s) * mpmath.sqrt(2)))


def entries_digest(entries: list[int]) -> str:
    """sha256 of 128-bit entries (16 bytes each, little-endian), in order."""
    return hashlib.sha256(b"".join(e.to_bytes(16, "little") for e in entries)).hexdigest()


#: At the large scales (3 700 and 6 000 entries, ~0.1 ms of 60-digit erf each) the sha256 of the 60-digit
#: reference rounded to integers, nint(2^128 erf((j + 1/2) / (s sqrt 2))), stored by
#: tests/data/make_samplers_exact_reference.py (mpmath only): entries with that digest are within 1/2 + 2^-70 of
#: the reference, inside the test's 2; other entries are checked one by one as before.
ROUNDED_REFERENCE = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "samplers_exact_reference.json")
                               .read_text())["scales"]


@pytest.mark.parametrize("s", [0.7, 1.3, 3.0, 294.4, 460.0])
def test_table_entries_within_2_pow_minus_127_of_mpmath(s):
    t = rounded_gaussian_cdt(s)
    entries = t.entries()
    assert len(entries) == t.size - 1 and t.hi[-1] == t.lo[-1] == 2**64 - 1  # sentinel
    assert entries == sorted(entries)
    st = ROUNDED_REFERENCE.get(repr(s))
    stored = st is not None and st["size"] == len(entries) and entries_digest(entries) == st["sha256"]
    with mpmath.workdps(60):
        every = max(1, len(entries) // 40) if stored else 1  # (stored: 40 entries recomputed live)
        for j in sorted(set(range(0, len(entries), every)) | {len(entries) - 1}):
            assert abs(mpmath.mpf(entries[j]) - _cdf60(s, j) * mpmath.mpf(2) ** 128) <= 2  # 2^-127 in probability
        # J is the smallest magnitude with P(|D| > J) <= 1e-38, and tail bounds it
        J = t.size - 1
        up = 1 - _cdf60(s, J)
        assert up <= TAIL_BOUND and up <= t.tail
        if J > 0:
            assert 1 - _cdf60(s, J - 1) > TAIL_BOUND
    assert t.tv_bound >= (J + 1) * 2.0**-128 + t.tail


@pytest.mark.parametrize("s", [1.3, 294.4])
def test_guide_table_by_brute_force(s):
    t = rounded_gaussian_cdt(s)
    entries = t.entries()
    step = 2 ** (128 - GUIDE_BITS)
    for b in range(0, 1 << GUIDE_BITS, 7):
        first = next((j for j, e in enumerate(entries) if e > b * step), len(entries))
        assert t.guide[b] == first == bisect.bisect_right(entries, b * step)


@pytest.mark.parametrize("sigma0,bits", [(1.3, 0), (0.75, 2), (0.35, 4)])
def test_grid_noise_follows_the_rounded_gaussian(sigma0, bits):
    # x = 0, gamma = 0: the message is h D, D ~ R_s with s = sigma0 2^bits; chi-square vs mpmath
    g = GaussianRandomizer(sigma0, 1, grid_bits=bits)
    s = g.noise_scale
    n = 1_000_000
    D = g.sample(np.zeros((n, 1)), rng=2024).ravel() / g.grid_step
    assert np.array_equal(D, np.round(D))
    top = math.ceil(4 * s) + 1  # cells -top..top, tails merged into the end cells
    with mpmath.workdps(30):
        cdf = [mpmath.ncdf((j + mpmath.mpf(0.5)) / s) for j in range(-top - 1, top + 1)]
    p = np.array([float(b - a) for a, b in itertools.pairwise(cdf)])
    p[0] += float(cdf[0])
    p[-1] += float(1 - cdf[-1])
    obs = np.bincount(np.clip(D, -top, top).astype(int) + top, minlength=2 * top + 1)
    assert stats.chisquare(obs, p * n / p.sum()).pvalue > 1e-4
    # the symmetric moments: mean 0, variance sum j^2 R_s(j) (Sheppard: about s^2 + 1/12)
    var = float(sum(j * j * pj for j, pj in zip(range(-top, top + 1), p)))
    assert abs(D.mean()) < 5 * math.sqrt(var / n)
    assert abs(D.var() - var) < 5 * var * math.sqrt(2 / n) + 5 * float(p[0] + p[-1]) * top**2


def test_blanket_coin_rounds_gamma_up_by_less_than_2_pow_minus_64():
    for gamma in (0.0, 0.3, 0.95, 1 - 2.0**-53, 2.0**-70):
        b = BlanketMixedGaussian(gamma, 1.0, 1)
        excess = Fraction(b.blanket_threshold, 2**64) - Fraction(gamma)  # exact
        assert 0 <= excess < Fraction(1, 2**64)
        assert b.blanket_threshold < 2**64


@pytest.mark.parametrize("sigma0", [1e-6, 0.0123, 0.5, 1.0, 4.6, 100.0, 511.9, 512.0, 5000.0])
def test_default_grid_dim_one(sigma0):
    k = default_grid_bits(sigma0, 1)
    s = math.ldexp(sigma0, k)
    if sigma0 >= 512:
        assert k == 0 and s == sigma0
    else:
        assert 256 <= s < 512
    b = BlanketMixedGaussian(0.5, sigma0, 1)
    assert b.grid_bits == k and b.grid_scale == 1.0 and b.estimate_scale == 0.5
    # the per-message TV charge is tiny and covers the table's own bound
    assert b.sampler_tv < 1e-30
    if sigma0 < 512:
        assert b.sampler_tv >= rounded_gaussian_cdt(b.noise_scale).tv_bound


@pytest.mark.parametrize("sigma0,d", [(0.8, 3), (1.1, 5), (0.9, 4), (2.0, 100), (30.0, 1000)])
def test_default_grid_higher_dim(sigma0, d):
    b = BlanketMixedGaussian(0.5, sigma0, d)
    h = b.grid_step
    assert b.noise_scale >= 256
    assert h * math.sqrt(d) <= 2.0**-8 or b.noise_scale > 2.0**13  # else the table cap binds
    assert b.noise_scale <= 2.0**14 or h * math.sqrt(d) > 2.0**-8
    assert 0 < b.grid_scale < 1 - h * math.sqrt(d)


def test_rounded_rows_stay_in_the_ball_and_estimator_divides_back():
    # unit rows at the worst angle for the grid: every coordinate 1/sqrt(d) (checked in C++ exactly)
    d, n = 5, 200_000
    # s = 0.0064: the noise is 0 (P(D != 0) < 1e-38), so the message is the rounded input itself
    b = BlanketMixedGaussian(0.0, 1e-4, d, grid_bits=6)  # h sqrt(d) = 0.035: scale 0.965
    x = np.full((n, d), 1 / math.sqrt(d))
    y = b.sample(x, rng=3)
    m = np.round(y / b.grid_step).astype(np.int64)
    assert np.all(np.sum(m**2, axis=1) <= 64**2)  # in the unit ball, exactly
    assert len(np.unique(m)) == 2  # the two neighbours of 64 scale / sqrt(5) = 27.6
    est = b.estimate(y)
    se = math.sqrt(b.grid_step**2 / 4 / n) / b.grid_scale
    assert np.all(np.abs(est - x[0]) < 5 * se + 1e-12)


@pytest.mark.parametrize("gamma,d,bits", [(0.0, 1, 3), (0.6, 1, 3), (0.5, 3, 4)])
def test_release_mse_single_by_monte_carlo(gamma, d, bits):
    # a coarse grid (h = 1/8 or 1/16, sigma0 = 0.2: s = 1.6 or 3.2) makes the grid's share visible;
    # worst-case inputs |x| = 1 with every coordinate halfway between grid points (f = 1/2)
    b = BlanketMixedGaussian(gamma, 0.2, d, grid_bits=bits)
    n = 400_000
    h, c = b.grid_step, b.grid_scale
    row = np.full(d, (math.floor(c / math.sqrt(d) / h - 0.5) + 0.5) * h / c)  # c x_j / h = integer + 1/2
    x = np.tile(row, (n, 1))
    y = b.sample(x, rng=17)
    sq = np.sum((y / b.estimate_scale - x) ** 2, axis=1)
    # the formula at |x| = 1 minus the slack of |x| < 1 and of f(1 - f) = 1/4 exactly
    expect = b.release_mse_single - gamma / (1 - gamma) * (1 - float(row @ row))
    assert abs(sq.mean() - expect) < 5 * sq.std() / math.sqrt(n)
    assert b.release_mse_single > b.mse_single  # the grid's share is visible here
    assert abs(sq.mean() - b.mse_single) > 5 * sq.std() / math.sqrt(n) or d > 1


def test_sample_refuses_grids_it_cannot_use():
    with pytest.raises(ValueError, match="grid_bits"):
        BlanketMixedGaussian(0.5, 1.0, 16, grid_bits=0).sample(np.zeros((1, 16)), rng=0)
    with pytest.raises(ValueError, match="sigma0"):
        BlanketMixedGaussian(0.5, 1e6, 1).sample(np.zeros((1, 1)), rng=0)
    with pytest.raises(ValueError, match="grid_bits"):
        BlanketMixedGaussian(0.5, 1.0, 1, grid_bits=53)
    with pytest.raises(ValueError, match="s must be"):
        rounded_gaussian_cdt(float("nan"))
