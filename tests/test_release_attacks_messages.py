"""Attacks on the released shuffle messages (docs/sampling.md §2, §5, §8).

An attacker who sees one message y of user x in {0, 1} (dim 1) reads the IEEE bit pattern of y:
the lowest mantissa bit, the low 4 and low 8 mantissa bits, the exponent. For the release sampler
each statistic must follow its law under the grid post-processing of BMG that the accountant
certifies (computed exactly here from Phi, independently of the sampler's table), within Monte
Carlo error, on both sides; then the distinguishing advantage on that statistic is the certified
mechanism's own (zero for the low bits: every grid value has them all 0). Porosity: every output
is a grid value reachable from both inputs. The same checks run on the former floating-point
sampler (``_sample_float_reference``, kept for tests and benchmarks only) must FAIL: that is what
shows the tests can fail. k-RR: the exact law of the sampled messages against binomial intervals,
and the rigour of the integer keep threshold.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr
from sharpdp.shuffle import BlanketMixedGaussian, RandomizedResponse

N = 1_000_000  # messages per side
Z = 5.0  # Monte Carlo half-width in standard errors, per bin
CONFIGS = [(0.95, 4.6), (0.95, 0.5), (0.0, 4.6), (0.0, 0.5)]
STATS = {
    "low bit": lambda b: b & np.uint64(1),
    "low 4 bits": lambda b: b & np.uint64(0xF),
    "low 8 bits": lambda b: b & np.uint64(0xFF),
    "exponent": lambda b: (b >> np.uint64(52)) & np.uint64(0x7FF),
}


def _bits(y: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(y, dtype=np.float64).view(np.uint64).ravel()


def _reference_law(bmg: BlanketMixedGaussian, x: float):
    """Grid values and their probabilities under the certified post-processing: y = h round(W / h),
    W ~ BMG(gamma', sigma0) at input x (x a grid point), from Phi directly (not from the table)."""
    h, s = bmg.grid_step, bmg.noise_scale
    reach = math.ceil(14 * s) + round(1 / h) + 1
    j = np.arange(-reach, reach + 1)

    def rounded(shift):  # P(round(s Z) = j - shift)
        k = (j - shift).astype(np.float64)
        return ndtr((k + 0.5) / s) - ndtr((k - 0.5) / s)

    g = bmg.gamma_sampled
    p = (1 - g) * rounded(round(x / h)) + g * rounded(0)
    return j * h, p


def _violations(sample, bmg: BlanketMixedGaussian, seed: int) -> list[str]:
    """Every failed check of the message attacks for a sampler (empty list: all pass)."""
    bad = []
    ys = {x: sample(np.full((N, 1), x), rng=seed + int(x)) for x in (0.0, 1.0)}
    h = bmg.grid_step
    for x, y in ys.items():  # porosity: a grid value, inside the range both inputs reach
        k = y.ravel() / h
        off = np.mean(k != np.round(k))
        out = np.mean(np.abs(k - (1 / h) * (1 - x)) > math.ceil(13.2 * bmg.noise_scale))
        if off or out:
            bad.append(f"x={x}: {off:.3g} off the grid, {out:.3g} unreachable from x={1 - x}")
    refs = {x: _reference_law(bmg, x) for x in ys}
    for name, stat in STATS.items():
        hist, ref = {}, {}
        for x, y in ys.items():
            v, c = np.unique(stat(_bits(y)), return_counts=True)
            hist[x] = dict(zip(v.tolist(), (c / N).tolist()))
            values, probs = refs[x]
            rv = stat(_bits(values))
            ref[x] = {int(u): float(probs[rv == u].sum()) for u in np.unique(rv)}
        keys = set().union(*hist.values(), *ref.values())
        worst = 0.0
        for x in ys:  # each side against its certified law
            for u in keys:
                p, q = ref[x].get(u, 0.0), hist[x].get(u, 0.0)
                excess = abs(q - p) - Z * math.sqrt(p * (1 - p) / N) - 1e-12
                worst = max(worst, excess)
        # distinguishing advantage on the statistic, beyond the certified law's own
        adv = max(abs(hist[0.0].get(u, 0.0) - hist[1.0].get(u, 0.0)) for u in keys)
        adv_ref = max(abs(ref[0.0].get(u, 0.0) - ref[1.0].get(u, 0.0)) for u in keys)
        mc = Z * math.sqrt(2 * 0.25 / N)
        if worst > 0:
            bad.append(f"{name}: a bin off its certified probability by {worst:.3g} beyond {Z} s.e.")
        if adv > adv_ref + mc:
            bad.append(f"{name}: advantage {adv:.3g} > certified {adv_ref:.3g} + MC {mc:.3g}")
    return bad


@pytest.mark.parametrize("gamma,sigma0", CONFIGS)
def test_release_messages_pass_the_bit_attacks(gamma, sigma0):
    bmg = BlanketMixedGaussian(gamma, sigma0, 1)
    y = bmg.sample(np.array([[0.0], [1.0], [-1.0], [0.3]] * 1000), rng=5)
    k = y / bmg.grid_step
    assert np.array_equal(k, np.round(k)) and np.all(np.abs(k) < 2.0**53)  # exact multiples of h
    assert _violations(bmg.sample, bmg, seed=100) == []


@pytest.mark.parametrize("gamma,sigma0", CONFIGS)
def test_the_attacks_catch_the_former_float_sampler(gamma, sigma0):
    # the same checks on the floating-point sampler fail: the tests above can fail
    bmg = BlanketMixedGaussian(gamma, sigma0, 1)
    bad = _violations(bmg._sample_float_reference, bmg, seed=100)
    assert any(b.startswith("low bit: a bin off") for b in bad), bad
    assert any(b.startswith("low bit: advantage") for b in bad), bad  # x-dependent low bit
    assert any(b.startswith("exponent: a bin off") for b in bad), bad
    assert any("off the grid" in b for b in bad), bad


def test_float_sampler_low_bit_depends_on_x():
    # the measured leak of the former sampler (Gaussian randomizer, sigma0 = 4.6): lowest mantissa
    # bit 1 w.p. about 0.50 (x = 0) and 0.30 (x = 1); the release sampler's is always 0 (grid values)
    bmg = BlanketMixedGaussian(0.0, 4.6, 1)
    f = {x: np.mean(_bits(bmg._sample_float_reference(np.full((N, 1), x), rng=7)) & np.uint64(1)) for x in (0.0, 1.0)}
    assert abs(f[0.0] - f[1.0]) > 0.1, f
    r = {x: np.mean(_bits(bmg.sample(np.full((N, 1), x), rng=7)) & np.uint64(1)) for x in (0.0, 1.0)}
    assert r == {0.0: 0.0, 1.0: 0.0}


@given(x=st.floats(-1.0, 1.0), bits=st.integers(0, 7), d=st.integers(1, 4), seed=st.integers(0, 2**32))
@settings(max_examples=40, deadline=None)
def test_messages_are_grid_multiples_for_any_input(x, bits, d, seed):
    sigma0 = 0.7
    bmg = BlanketMixedGaussian(0.5, sigma0, d, grid_bits=bits + 3 * (d > 1))
    row = np.full(d, x / math.sqrt(d))
    y = bmg.sample(np.tile(row, (64, 1)), rng=seed)
    k = y / bmg.grid_step
    assert np.array_equal(k, np.round(k))


def test_grid_rounding_is_unbiased_off_the_grid():
    # x between grid points: E[message] = (1 - gamma) x exactly (to 2^-60), no shift to the grid
    bmg = BlanketMixedGaussian(0.0, 0.005, 1, grid_bits=3)  # h = 1/8, x = 0.3 is 2.4 h
    assert bmg.noise_scale == 0.04  # the noise is 0 except with probability 2 Q(12.5) < 1e-35
    y = bmg.sample(np.full((N, 1), 0.3), rng=9)
    # the rounded input takes the neighbouring grid values 2h, 3h with probabilities 0.6, 0.4
    k = y.ravel() * 8
    assert set(np.unique(k).tolist()) == {2.0, 3.0}
    assert abs(np.mean(k == 3) - 0.4) < Z * math.sqrt(0.24 / N)
    assert abs(y.mean() - 0.3) < Z * math.sqrt(0.24 / 64 / N)


# ---------------------------------------------------------------- k-RR
@pytest.mark.parametrize("k,eps0", [(2, 1.0), (5, 0.5), (1000, 3.0), (2**40 + 3, 20.0), (2**62 + 1, 44.0)])
def test_krr_messages_follow_the_exact_sampled_law(k, eps0):
    rr = RandomizedResponse(k, eps0)
    x = np.full(N, 1, dtype=np.int64)
    y = rr.sample(x, rng=13)
    q = rr.keep_sampled  # P(y = x) = q + (1 - q) / k; any other category (1 - q) / k
    p_x = q + (1 - q) / k
    f_x = np.mean(y == 1)
    assert abs(f_x - p_x) <= Z * math.sqrt(p_x * (1 - p_x) / N)
    others = y[y != 1]
    assert np.all((others >= 0) & (others < k))
    if k <= 1000:
        freq = np.bincount(y, minlength=k) / N
        p = np.full(k, (1 - q) / k)
        p[1] = p_x
        assert np.all(np.abs(freq - p) <= Z * np.sqrt(p * (1 - p) / N) + 1e-12)
    else:  # the uniform part over a huge range: its top bit and its residue mod 3 are uniform
        top = np.mean(others >= k // 2)
        assert abs(top - 0.5) <= Z * math.sqrt(0.25 / others.size) + 1 / k
        m3 = np.bincount(others % 3, minlength=3) / others.size
        assert np.all(np.abs(m3 - 1 / 3) <= Z * math.sqrt(2 / 9 / others.size) + 3 / k)
        # the low bit: the former float draw floor(u (k - 1)), u a multiple of 2^-53, made every
        # other category of k = 2^62 + 1 odd (a multiple of 2^9, plus 1); Lemire's draw is exact
        odd = np.mean(others % 2)
        assert abs(odd - 0.5) <= Z * math.sqrt(0.25 / others.size) + 1 / k


@given(k=st.integers(2, 2**62), eps0=st.floats(1e-12, 300.0))
@settings(max_examples=200, deadline=None)
def test_krr_keep_threshold_is_rigorously_below_the_keep_mass(k, eps0):
    # K 2^-64 <= 1 - gamma = (e^eps0 - 1) / (e^eps0 + k - 1) < (K + 1) 2^-64 + 2^-100, at 400 bits:
    # the sampled k-RR is k-RR(eps0') with eps0' <= eps0, a post-processing of k-RR(eps0)
    rr = RandomizedResponse(k, eps0)
    with mpmath.workprec(400):
        e = mpmath.mpf(eps0)
        v = mpmath.expm1(e) / (mpmath.exp(e) + (k - 1)) * mpmath.mpf(2) ** 64
        assert rr.keep_threshold <= v < rr.keep_threshold + 1 + mpmath.mpf(2) ** -30
    assert 0 <= rr.keep_threshold < 2**64


def test_a_float_keep_threshold_would_overshoot():
    # why the threshold is computed in exact arithmetic: floor((1 - gamma_double) 2^64) from the
    # double-precision formula exceeds the true keep mass for some eps0 (sampling k-RR at an eps0'
    # above the certified eps0), while the exact threshold never does
    over = 0
    for i in range(200):
        eps0 = 0.05 + 0.01 * i
        rr = RandomizedResponse(3, eps0)
        naive = math.floor(math.ldexp(1.0 - rr.gamma, 64))
        with mpmath.workprec(300):
            e = mpmath.mpf(eps0)
            true = mpmath.expm1(e) / (mpmath.exp(e) + 2) * mpmath.mpf(2) ** 64
        over += naive > true
        assert rr.keep_threshold <= true
    assert over > 0
