"""Attacks on the released outputs of the CRLB Gaussian mechanism (docs/sampling.md §9).

An attacker sees z = gaussian_mechanism(y, S) for y in {0, 1} (m = 1) and reads the IEEE bit
pattern of z (lowest mantissa bit, low 4 and low 8 bits, exponent) and its support (porosity).
For the grid release each statistic must follow its law under the exact grid mechanism
z = L h (ceil(w / h - U) + D), D ~ round(Z / h) (computed here from Phi, independently of the
sampler's table), within Monte Carlo error on both sides; the distinguishing advantage on a
statistic must not exceed that exact law's own. Porosity: every output must be (a) a value
fl(c' + E) for some double E, c' = fl(y' S) (the support of the former float mechanism
fl(y' S) + fl(N sqrt S) from the neighbour y': checked for the former mechanism and, at S = 1,
for the grid release), and (b) a grid value L h k within the reach of the neighbour (the support
of the grid release). The former float mechanism (reproduced below, tests only) fails these
checks: that is what shows the tests can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr
from sharpdp._rng import as_generator
from sharpdp._tables import rounded_gaussian_cdt
from sharpdp.crlb import (
    PrivateRLS,
    distributed_identification,
    gaussian_mechanism,
    grid_release,
    ml_private_estimator,
)

N = 1_000_000  # releases per side
Z = 5.0  # Monte Carlo half-width in standard errors, per bin
BITS = 12  # the default grid: h = 2^-12 noise standard deviations
STATS = {
    "low bit": lambda b: b & np.uint64(1),
    "low 4 bits": lambda b: b & np.uint64(0xF),
    "low 8 bits": lambda b: b & np.uint64(0xFF),
    "exponent": lambda b: (b >> np.uint64(52)) & np.uint64(0x7FF),
}
CONFIGS = [1.0, 0.37]  # S (m = 1); inputs y = 0 and y = 1


def _float_mechanism(y, S, *, rng=None):
    """The former release (main before §9), tests only: (y - mu) S + N(0, 1) sqrt(S) in floating point."""
    yy = np.asarray(y, dtype=float)
    Sm = np.atleast_2d(np.asarray(S, dtype=float))
    return yy @ Sm + as_generator(rng).standard_normal(yy.shape) @ np.sqrt(Sm)


def _rounded_gaussian(t: np.ndarray, h: float) -> np.ndarray:
    """P(round(Z / h) = t) = Phi((t + 1/2) h) - Phi((t - 1/2) h), from the lower tail on both sides
    (the difference of two values near 1 loses everything in the upper tail; errata, seed 000)."""
    a = np.abs(np.asarray(t, dtype=np.float64))
    return np.where(a == 0, ndtr(0.5 * h) - ndtr(-0.5 * h), ndtr(-(a - 0.5) * h) - ndtr(-(a + 0.5) * h))


def _bits(z: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(z, dtype=np.float64).view(np.uint64).ravel()


def _reference_law(S: float, y: float):
    """Values and probabilities of the exact grid release (m = 1, L = sqrt(S)) at input y, from Phi."""
    h, L = 2.0**-BITS, math.sqrt(S)
    v = y * L / h  # the whitened statistic in grid units
    j0, a = math.floor(v), v - math.floor(v)
    reach = math.ceil(14 / h)
    k = np.arange(j0 - reach, j0 + reach + 2)

    p = (1 - a) * _rounded_gaussian(k - j0, h) + a * _rounded_gaussian(k - j0 - 1, h)
    return (k * h) * L, p


def _shift_reachable(z: np.ndarray, c: float) -> np.ndarray:
    """Whether some double E has fl(c + E) = z (fl(c + .) is monotone: E near z - c suffices)."""
    e0 = z - c
    ok = np.zeros(z.shape, dtype=bool)
    for step in range(-2, 3):
        e = e0
        for _ in range(abs(step)):
            e = np.nextafter(e, np.inf if step > 0 else -np.inf)
        ok |= (c + e) == z
    return ok


def _violations(release, S: float, seed: int) -> list[str]:
    """Every failed check of the attacks for a release function (empty list: all pass)."""
    bad = []
    zs = {y: release(np.full((N, 1), y), [[S]], rng=seed + int(y)).ravel() for y in (0.0, 1.0)}
    h, L = 2.0**-BITS, math.sqrt(S)
    for y, z in zs.items():  # porosity: the support of the grid release from the neighbour
        other = 1.0 - y
        k = np.round(z / (L * h))
        off = np.mean((k * h) * L != z)
        out = np.mean(np.abs(k - other * L / h) > math.ceil(13.2 / h) + 1)
        if off or out:
            bad.append(f"y={y}: {off:.3g} off the grid, {out:.3g} out of the reach of y={other}")
    refs = {y: _reference_law(S, y) for y in zs}
    for name, stat in STATS.items():
        hist, ref = {}, {}
        for y, z in zs.items():
            v, c = np.unique(stat(_bits(z)), return_counts=True)
            hist[y] = dict(zip(v.tolist(), (c / N).tolist()))
            values, probs = refs[y]
            rv = stat(_bits(values))
            ref[y] = {int(u): float(probs[rv == u].sum()) for u in np.unique(rv)}
        keys = set().union(*hist.values(), *ref.values())
        worst = 0.0
        for y in zs:
            for u in keys:
                p, q = ref[y].get(u, 0.0), hist[y].get(u, 0.0)
                worst = max(worst, abs(q - p) - Z * math.sqrt(p * (1 - p) / N) - 1e-9)
        adv = max(abs(hist[0.0].get(u, 0.0) - hist[1.0].get(u, 0.0)) for u in keys)
        adv_ref = max(abs(ref[0.0].get(u, 0.0) - ref[1.0].get(u, 0.0)) for u in keys)
        mc = Z * math.sqrt(2 * 0.25 / N)
        if worst > 0:
            bad.append(f"{name}: a bin off its exact probability by {worst:.3g} beyond {Z} s.e.")
        if adv > adv_ref + mc:
            bad.append(f"{name}: advantage {adv:.3g} > exact grid law's {adv_ref:.3g} + MC {mc:.3g}")
    return bad


@pytest.mark.parametrize("S", CONFIGS)
def test_gaussian_mechanism_passes_the_attacks(S):
    assert _violations(gaussian_mechanism, S, seed=100) == []


@pytest.mark.parametrize("S", CONFIGS)
def test_the_attacks_catch_the_former_float_mechanism(S):
    bad = _violations(_float_mechanism, S, seed=100)
    assert any("off the grid" in b for b in bad), bad
    assert any(b.startswith("low bit: advantage") for b in bad), bad  # y-dependent low bit (0.27 at S = 1)
    assert any(b.startswith("low 4 bits: advantage") for b in bad), bad
    assert any(b.startswith("low bit: a bin off") for b in bad), bad
    assert any(b.startswith("exponent: a bin off") for b in bad), bad


def test_float_mechanism_leak_figures():
    # the measured leak of the former mechanism at S = 1 (y = 0 vs 1): outputs impossible from the
    # neighbour with probability 0.43 (delta >= 0.43 at every epsilon), lowest mantissa bit 1 with
    # probability 0.50 vs 0.23; the grid release has no impossible output and all low bits 0
    f = {y: _float_mechanism(np.full((N, 1), y), [[1.0]], rng=7).ravel() for y in (0.0, 1.0)}
    porous = np.mean(~_shift_reachable(f[0.0], 1.0))
    low = {y: np.mean(_bits(z) & np.uint64(1)) for y, z in f.items()}
    assert porous > 0.3 and abs(low[0.0] - low[1.0]) > 0.2, (porous, low)
    g = {y: gaussian_mechanism(np.full((N, 1), y), [[1.0]], rng=7).ravel() for y in (0.0, 1.0)}
    assert np.all(_shift_reachable(g[0.0], 1.0))
    assert all(np.mean(_bits(z) & np.uint64(0xFF)) == 0 for z in g.values())


# ---------------------------------------------------------------- the grid, every release path
def _grid_units(z: np.ndarray, L: np.ndarray, bits: int) -> np.ndarray:
    """L^+ z in units of 2^-bits (integers for a grid release, up to the float product by L)."""
    return np.linalg.lstsq(L, np.atleast_2d(z).T, rcond=None)[0].T * 2.0**bits


def _assert_on_grid(z, S, bits=BITS):
    ev, vec = np.linalg.eigh(np.atleast_2d(S))
    L = vec * np.sqrt(ev)
    k = _grid_units(z, L, bits)
    assert np.max(np.abs(k - np.round(k))) < 1e-6 * max(1.0, float(np.max(np.abs(k))) * 1e-9)


def test_every_crlb_release_is_on_the_grid():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    S = A @ A.T + 0.2 * np.eye(3)
    _assert_on_grid(gaussian_mechanism(rng.normal(size=(50, 3)), S, rng=1), S)
    _assert_on_grid(gaussian_mechanism(rng.normal(size=3), S, rng=1, grid_bits=5), S, 5)
    H = rng.uniform(-1, 1, (40, 2))
    res = ml_private_estimator(H @ [0.3, -0.2] + 0.5 * rng.normal(size=40), H, 20.0, rng=2)
    _assert_on_grid(res.estimate, res.noise_cov)
    p = PrivateRLS(2, rng=4)
    for k in range(5):
        z = p.update(rng.normal(), rng.uniform(-1, 1, 2), 0.3, 1.7)
        _assert_on_grid(z, [[1.7]])
    Ss = [np.array([[1.3]]), np.array([[0.4, 0.1], [0.1, 0.9]])]
    r = distributed_identification([np.array([0.2]), np.array([1.0, -1.0])], [np.ones((1, 2)), np.eye(2)],
                                   [np.eye(1), np.eye(2)], Ss, [[0.5, 0.5], [0.5, 0.5]], iterations=3, rng=5)
    for z, S_i in zip(r.outputs, Ss):
        _assert_on_grid(z, S_i)


def test_grid_release_is_reproducible_and_thread_independent():
    y = np.random.default_rng(0).normal(size=(20_000, 2))
    S = np.array([[1.0, 0.3], [0.3, 2.0]])
    a = gaussian_mechanism(y, S, rng=11, threads=1)
    b = gaussian_mechanism(y, S, rng=11, threads=2)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, gaussian_mechanism(y, S, rng=12))
    assert not np.array_equal(gaussian_mechanism(y, S), gaussian_mechanism(y, S))  # rng=None: fresh keys


def test_rounding_is_unbiased_between_grid_points():
    # tiny noise scale relative to the grid: grid_bits = 0 (h = 1 noise sd); y = 0.3 rounds to 0 or 1
    # with probabilities 0.7, 0.3 (then the rounded noise round(Z) is added): mean 0.3, variance
    # 1 + 1/12 + 0.21 up to Sheppard's exponentially small error (Var round(Z) = 1.0833 - 1e-8)
    z = gaussian_mechanism(np.full((N, 1), 0.3), [[1.0]], rng=21, grid_bits=0).ravel()
    assert np.array_equal(z, np.round(z))
    ks = np.arange(-12, 13)
    var_ref = float(np.sum(ks * ks * _rounded_gaussian(ks, 1.0)))
    assert abs(z.mean() - 0.3) < Z * math.sqrt((var_ref + 0.21) / N)
    v4 = 3 * (var_ref + 0.21) ** 2  # crude fourth-moment scale for the variance's s.e.
    assert abs(z.var() - (var_ref + 0.21)) < Z * math.sqrt(v4 / N)


def test_grid_release_figures():
    g = grid_release(3)
    h = 2.0**-12
    assert (g.step, g.grid_bits, g.dim) == (h, 12, 3)
    assert g.sensitivity_charge >= h * math.sqrt(3) and g.sensitivity_charge == pytest.approx(h * math.sqrt(3))
    assert g.sampler_tv >= 3 * rounded_gaussian_cdt(4096.0).tv_bound and g.sampler_tv < 1e-32
    # (e^{h^2} - 1) / h^2 = 1 + h^2 / 2 + h^4 / 6 + ...
    assert g.fisher_factor >= 1 + h * h / 2 and g.fisher_factor - 1 == pytest.approx(h * h / 2, rel=1e-6)
    assert g.rho(1.0) >= (1 + h * math.sqrt(3)) ** 2 / 2 and g.rho(1.0) == pytest.approx((1 + h * math.sqrt(3)) ** 2 / 2)
    from sharpdp.conversions import gaussian_mechanism_delta

    d = g.delta(0.5, 1.0)
    assert d >= gaussian_mechanism_delta(0.5, 1.0, 1.0 + h * math.sqrt(3)) > gaussian_mechanism_delta(0.5, 1.0, 1.0)
    with pytest.raises(ValueError, match="^grid_bits"):
        grid_release(1, 15)
    with pytest.raises(ValueError, match="^sensitivity"):
        g.rho(-1.0)


@given(h_exp=st.integers(0, 14), y=st.floats(-1e3, 1e3))
@settings(max_examples=40, deadline=None)
def test_fisher_factor_bounds_the_grid_fisher_information(h_exp, y):
    # Fisher information about w of h (R + D) at w, R the stochastic rounding: (1/h^2) sum_k
    # (P(k-1) - P(k))^2 / ((1 - a) P(k) + a P(k - 1)) with P the rounded Gaussian: at most fisher_factor
    # (convexity in a, endpoints: the chi-square of two Gaussians one step apart, docs/sampling.md §9.5)
    h_exp = min(h_exp, 8)  # the sum below is over 30 / h terms
    h = 2.0**-h_exp
    a = (y / h) % 1.0
    k = np.arange(-math.ceil(30 / h), math.ceil(30 / h) + 2).astype(float)
    P = _rounded_gaussian(k, h)
    Pm = _rounded_gaussian(k - 1, h)  # P(k - 1)
    mix = (1 - a) * P + a * Pm
    keep = mix > 1e-300
    info = float(np.sum((Pm[keep] - P[keep]) ** 2 / mix[keep])) / h**2
    assert info <= grid_release(1, h_exp).fisher_factor * (1 + 1e-9)


def test_the_grid_fisher_information_exceeds_the_continuous_one():
    # on a grid point (a = 0) the grid release carries more Fisher information than the continuous
    # mechanism (1 + 1.63e-3 at h = 1/16 against fisher_factor 1 + 1.96e-3): the factor is needed
    h = 2.0**-4
    k = np.arange(-480, 482).astype(float)
    P, Pm = _rounded_gaussian(k, h), _rounded_gaussian(k - 1, h)
    info = float(np.sum((Pm - P) ** 2 / P)) / h**2
    assert 1.0016 < info <= grid_release(1, 4).fisher_factor < 1.002


def test_bad_grid_and_huge_statistics():
    with pytest.raises(ValueError, match="^grid_bits"):
        gaussian_mechanism(np.zeros(2), np.eye(2), grid_bits=-1)
    with pytest.raises(TypeError, match="^grid_bits"):
        gaussian_mechanism(np.zeros(2), np.eye(2), grid_bits="12")
    with pytest.raises(ValueError, match="too large for the grid"):
        gaussian_mechanism(np.full(2, 1e13), np.eye(2))
    with pytest.raises(ValueError, match="^threads"):
        gaussian_mechanism(np.zeros(2), np.eye(2), threads=0)
    with pytest.raises(ValueError, match="^grid_bits"):
        PrivateRLS(2, grid_bits=20)
    # a singular S releases nothing in its null space
    z = gaussian_mechanism(np.array([3.0, 4.0]), np.diag([1.0, 0.0]), rng=1)
    assert z[1] == 0.0


def test_coarse_grid_covariance_is_the_stated_one():
    # grid_bits = 1 (h = 1/2): Cov(z) = L diag(Var(h D) + h^2 a_i (1 - a_i)) L^T exactly, a_i the
    # fractional parts of w / h, w = L^T y (docs/sampling.md §9.6), and at most (1 + h^2 / 3) S
    rng = np.random.default_rng(8)
    A = rng.normal(size=(3, 3))
    S = A @ A.T + 0.5 * np.eye(3)
    y = rng.normal(size=3)
    R, h = 400_000, 0.5
    z = gaussian_mechanism(np.tile(y, (R, 1)), S, rng=31, grid_bits=1)
    ev, vec = np.linalg.eigh(S)
    L = vec * np.sqrt(ev)
    a = (y @ L / h) % 1.0
    ks = np.arange(-40, 41)
    var_d = float(np.sum((h * ks) ** 2 * _rounded_gaussian(ks, h)))  # 1 + h^2/12 - 1e-34
    cov = (L * (var_d + h * h * a * (1 - a))) @ L.T
    emp = np.cov(z.T)
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / R)  # Gaussian-approximation s.e.
    assert np.all(np.abs(emp - cov) < Z * se)
    np.testing.assert_allclose(z.mean(0), y @ S, atol=Z * math.sqrt(np.max(np.diag(cov)) / R))
    assert np.all(np.linalg.eigvalsh((1 + h * h / 3) * S - cov) >= -1e-12)
    assert np.all(np.diag(emp) / np.diag(S) - 1 > 0.01)  # the grid's h^2/12 >= 0.02 is visible (s.e. 0.002)
