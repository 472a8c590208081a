"""LatticePrivUnit: the exact integer-lattice PrivUnit release (docs/sampling.md §10.6).

References are independent of the sampler: the released law by brute-force enumeration with
Fractions, the discrete Gaussian's pmf with mpmath at 50 digits, the cone test with mpmath square
roots at 400 digits, the bound pieces against exact sums and Monte Carlo of the layer.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats
from sharpdp.shuffle import LatticePrivUnit, PrivUnit, ShuffleAccountant
from sharpdp.shuffle.randomizers.privunit_lattice import (
    cone_layer_bound,
    lattice_sampler_tv,
    rounding_tv_bound,
)


def _in_cone_fraction(z, x, theta) -> bool:
    """z in {<z, x> >= theta |z| |x|}, decided with Fractions (x, theta as exact doubles)."""
    xs = [Fraction(v) for v in x]
    th = Fraction(theta)
    s = sum(Fraction(a) * b for a, b in zip(z, xs))
    rhs2 = th * th * sum(Fraction(a) ** 2 for a in z) * sum(b * b for b in xs)
    if th >= 0:
        return s >= 0 and s * s >= rhs2
    return s >= 0 or s * s <= rhs2


def _dg_weights(sigma: int, reach: int):
    """Discrete Gaussian weights exp(-k^2 / 2 sigma^2) on [-reach, reach] and their 50-digit sum over Z."""
    with mpmath.workdps(50):
        w = {k: mpmath.exp(-mpmath.mpf(k * k) / (2 * sigma * sigma)) for k in range(-reach, reach + 1)}
        total = mpmath.nsum(lambda k: mpmath.exp(-k * k / (2 * mpmath.mpf(sigma) ** 2)), [-mpmath.inf, mpmath.inf])
    return w, total


def _chi2_pvalue(counts: dict, probs: dict, n: int) -> float:
    """Pearson chi-square p-value, cells with expectation < 5 pooled into one."""
    keys = sorted(probs, key=lambda k: -probs[k])
    obs, exp, pool_o, pool_e = [], [], 0, 0.0
    for k in keys:
        e = n * probs[k]
        if e >= 5:
            obs.append(counts.get(k, 0))
            exp.append(e)
        else:
            pool_o += counts.get(k, 0)
            pool_e += e
    pool_o += sum(c for k, c in counts.items() if k not in probs)
    obs.append(pool_o)
    exp.append(max(pool_e, 1e-300))
    exp = np.array(exp) * (sum(obs) / sum(exp))
    return float(stats.chisquare(obs, exp).pvalue)


# ---------------------------------------------------------------- the released law, by enumeration
def _exact_law(p, theta, x, sigma, reach):
    w, _ = _dg_weights(sigma, reach)
    cells = {}
    for a in range(-reach, reach + 1):
        for b in range(-reach, reach + 1):
            cells[(a, b)] = (float(w[a] * w[b]), _in_cone_fraction((a, b), x, theta))
    mass_in = sum(v for v, c in cells.values() if c)
    mass_out = sum(v for v, c in cells.values() if not c)
    return {k: (p * v / mass_in if c else (1 - p) * v / mass_out) for k, (v, c) in cells.items()}


def test_released_law_matches_enumeration_at_tiny_sigma():
    p, theta, sigma_bits = 0.7, 0.3, 1  # sigma = 2: the law is far from the continuous one, still exact
    x = np.array([0.6, 0.8])
    r = LatticePrivUnit(p, theta, 2, scale_bits=sigma_bits)
    n = 8000
    z = r.sample(np.tile(x, (n, 1)), rng=11)
    counts: dict = {}
    for row in z:
        counts[(int(row[0]), int(row[1]))] = counts.get((int(row[0]), int(row[1])), 0) + 1
    law = _exact_law(p, theta, x, 2, 24)
    assert abs(sum(law.values()) - 1.0) < 1e-12
    assert _chi2_pvalue(counts, law, n) > 1e-4
    # the test can fail: the same messages against the law at another input are rejected
    wrong = _exact_law(p, theta, np.array([0.8, 0.6]), 2, 24)
    assert _chi2_pvalue(counts, wrong, n) < 1e-8


@pytest.mark.parametrize("bits", [0, 2, 4])
def test_discrete_gaussian_against_its_exact_pmf(bits):
    # dim 1, input +1: B = 1 gives z ~ N_Z(0, sigma^2) restricted to z >= 0, B = 0 to z < 0, so
    # the released law is p nu(z) / nu(z >= 0) on z >= 0 and (1 - p) nu(z) / nu(z < 0) below
    sigma = 2**bits
    p = 0.625
    r = LatticePrivUnit(p, 0.1, 1, scale_bits=bits)
    n = 6000
    z = r.sample(np.ones((n, 1)), rng=20 + bits).ravel()
    reach = 14 * sigma
    w, total = _dg_weights(sigma, reach)
    with mpmath.workdps(50):
        pos = (total + w[0]) / 2  # nu(z >= 0) = (1 + nu(0)) / 2 by symmetry
        law = {k: float((p * w[k] / pos) if k >= 0 else ((1 - p) * w[k] / (total - pos))) for k in w}
    vals, cnt = np.unique(np.array([int(v) for v in z]), return_counts=True)
    counts = dict(zip(vals.tolist(), cnt.tolist()))
    assert _chi2_pvalue(counts, law, n) > 1e-4
    assert abs(np.mean(np.array([int(v) for v in z]) >= 0) - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_discrete_gaussian_at_the_release_scale_is_standard_normal_after_scaling():
    # sigma = 2^96: z / sigma against N(0, 1) per coordinate (KS), from messages with p = 0.6, theta = 0,
    # x = e1 in dim 3: coordinates 2 and 3 are then exactly N_Z(0, sigma^2) (the cone is {z_1 >= 0})
    r = LatticePrivUnit(0.6, 0.0, 3)
    z = r.sample(np.tile([1.0, 0.0, 0.0], (1500, 1)), rng=3)
    u = np.array([[math.ldexp(int(v), -96) for v in row] for row in z])
    assert stats.kstest(u[:, 1:].ravel(), "norm").pvalue > 1e-4
    assert stats.kstest(np.abs(u[:, 0]), stats.halfnorm.cdf).pvalue > 1e-4


# ---------------------------------------------------------------- the cone test
def _adversarial_cases():
    rng = np.random.default_rng(5)
    cases = []
    # exactly on the real boundary: x = e1, z = (3, 4) scaled, theta = 0.6 (its double is just below 3/5)
    cases.append(([3 * 2**90, 4 * 2**90], [1.0, 0.0], 0.6))
    cases.append(([3 * 2**90, -4 * 2**90], [1.0, 0.0], 0.6))
    cases.append(([-3 * 2**90, 4 * 2**90], [-1.0, 0.0], 0.6))
    for _ in range(60):  # z a multiple of a near-unit x, rotated by one lattice step: |angle gap| ~ 2^-96
        d = int(rng.integers(2, 6))
        x = rng.normal(size=d)
        x /= np.linalg.norm(x)
        theta = float(rng.uniform(-0.95, 0.95))
        # a unit vector at angle arccos(theta) from x, scaled to 2^96 and rounded, then nudged
        e = rng.normal(size=d)
        e -= e.dot(x) * x
        e /= np.linalg.norm(e)
        c = theta
        with mpmath.workdps(60):
            sn = mpmath.sqrt(1 - mpmath.mpf(c) ** 2)
            zc = [int(mpmath.nint((mpmath.mpf(c) * float(xi) + sn * float(ei)) * mpmath.mpf(2) ** 96))
                  for xi, ei in zip(x, e)]
        j = int(rng.integers(0, d))
        for step in (-1, 0, 1):
            z = list(zc)
            z[j] += step
            cases.append((z, x.tolist(), theta))
    return cases


def test_cone_test_is_exact_on_adversarial_near_boundary_vectors():
    float_wrong = 0
    for z, x, theta in _adversarial_cases():
        r = LatticePrivUnit(0.7, theta, len(z)) if len(z) > 1 else None
        with mpmath.workdps(400):  # a different route: square roots at 400 digits
            zz = [mpmath.mpf(v) for v in z]
            xx = [mpmath.mpf(v) for v in x]
            gap = mpmath.fsum(a * b for a, b in zip(zz, xx)) - mpmath.mpf(theta) * mpmath.sqrt(
                mpmath.fsum(a * a for a in zz)) * mpmath.sqrt(mpmath.fsum(b * b for b in xx))
            assert abs(gap) > mpmath.mpf(10) ** -300 or gap == 0
            truth = gap >= 0
        assert r.in_cone(z, x) == truth == _in_cone_fraction(z, x, theta)
        zf = np.array(z, dtype=float)
        xf = np.array(x)
        float_wrong += bool(zf.dot(xf) >= theta * np.linalg.norm(zf) * np.linalg.norm(xf)) != truth
    assert float_wrong > 0  # the cases are adversarial: a float test gets some of them wrong


def test_in_cone_edge_cases():
    r = LatticePrivUnit(0.7, -0.5, 2)
    assert r.in_cone([0, 0], [1.0, 0.0])  # the apex is inside (closed cone)
    assert r.in_cone([-1, 2], [1.0, 0.0]) and not r.in_cone([-2, 1], [1.0, 0.0])
    with pytest.raises(ValueError, match="z"):
        r.in_cone([1.5, 2], [1.0, 0.0])
    with pytest.raises(ValueError, match="x"):
        r.in_cone([1, 2], [0.0, 0.0])


# ---------------------------------------------------------------- the bound pieces
@pytest.mark.parametrize("bits", [0, 1, 2, 3])
def test_rounding_tv_bound_holds_and_is_tight_in_order(bits):
    sigma = 2**bits
    with mpmath.workdps(50):
        reach = 40 * sigma
        w, total = _dg_weights(sigma, reach)
        tv = mpmath.mpf(0)
        for k in range(-reach, reach + 1):
            rounded = mpmath.ncdf((k + mpmath.mpf(0.5)) / sigma) - mpmath.ncdf((k - mpmath.mpf(0.5)) / sigma)
            tv += abs(w[k] / total - rounded)
        tv /= 2
    bound = rounding_tv_bound(bits)
    assert float(tv) <= bound
    assert bound <= 5 * float(tv)  # tight: 4.3x at sigma = 1, 1.3x at sigma = 8 (both ~ 0.02 / sigma^2)


@pytest.mark.parametrize("d,theta,bits", [(2, 0.0, 1), (2, 0.5, 2), (3, 0.2, 2), (10, -0.3, 3), (1, 0.0, 2)])
def test_cone_layer_bound_against_monte_carlo(d, theta, bits):
    sigma = 2.0**bits
    n = 200_000
    rng = np.random.default_rng(17)
    g = rng.normal(scale=sigma, size=(n, d))
    x = np.zeros(d)
    x[0] = 1.0
    rho = np.linalg.norm(g, axis=1)
    if d == 1:
        dist = np.abs(g[:, 0])
    else:
        phi = np.arccos(np.clip(g[:, 0] / rho, -1.0, 1.0))
        psi = np.minimum(np.abs(phi - math.acos(theta)), math.pi / 2)
        dist = np.minimum(rho * np.sin(psi), rho)
    layer = np.mean(dist <= math.sqrt(d) / 2)
    moved = np.mean((g[:, 0] >= theta * rho) != (np.round(g)[:, 0] >= theta * np.linalg.norm(np.round(g), axis=1)))
    se = math.sqrt(layer * (1 - layer) / n)
    bound = cone_layer_bound(d, bits)
    assert moved <= layer + 5 * se  # the event the proof charges contains the rounding's crossings
    assert layer - 5 * se <= bound  # the bound holds
    assert bound <= 4 * layer  # and is not loose (1.5x to 2.6x seen)


def test_eta_formula_and_figures():
    # eta = (2 d tau_1 + L)(p / s + (1 - p) / q), s, q from an independent quadrature here
    p, theta, d = 0.7, 0.2, 16
    with mpmath.workdps(30):
        f = lambda t: (1 - t * t) ** ((d - 3) / mpmath.mpf(2))  # noqa: E731 - density of <U, v>
        q = mpmath.quad(f, [-1, theta]) / mpmath.quad(f, [-1, 1])
    q = float(q)
    s = 1 - q
    for bits in (64, 96):
        eta = lattice_sampler_tv(p, theta, d, bits)
        core = (2 * d * rounding_tv_bound(bits) + cone_layer_bound(d, bits)) * (p / s + (1 - p) / q)
        assert core <= eta <= core * (1 + 1e-5)
    assert 1e-29 < lattice_sampler_tv(p, theta, d, 96) < 1e-27
    assert LatticePrivUnit(p, theta, d).sampler_tv == lattice_sampler_tv(p, theta, d, 96)
    assert lattice_sampler_tv(p, theta, d, 0) == 1.0  # capped: TV is at most 1


def test_refuses_a_hopeless_rejection_and_bad_parameters():
    with pytest.raises(ValueError, match="expected proposals"):
        LatticePrivUnit(0.7, 0.9, 100)  # cap mass ~ 1e-42
    for bad in (-1, 481, 2.5):
        with pytest.raises(ValueError, match="scale_bits"):
            LatticePrivUnit(0.7, 0.2, 3, scale_bits=bad)
    with pytest.raises(TypeError, match="scale_bits"):
        LatticePrivUnit(0.7, 0.2, 3, scale_bits=True)
    r = LatticePrivUnit(0.7, 0.2, 3)
    with pytest.raises(ValueError, match="unit-norm"):
        r.sample(np.ones((2, 3)))
    with pytest.raises(ValueError, match="x"):
        r.sample(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="x"):
        r.sample(np.ones((2, 4)) / 2)
    with pytest.raises(ValueError, match="messages"):
        r.estimate(np.ones((2, 3)) * 0.5)
    with pytest.raises(TypeError, match="privunit"):
        LatticePrivUnit.from_privunit("PrivUnit")


# ---------------------------------------------------------------- reproducibility, threads, estimator
def test_seeded_reproducible_and_independent_of_threads_and_rows():
    r = LatticePrivUnit(0.6, 0.1, 4, scale_bits=64)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(9, 4))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    a = r.sample(x, rng=7, threads=1)
    b = r.sample(x, rng=7, threads=3)
    assert np.array_equal(a, b) and a.dtype == object and all(isinstance(v, int) for v in a.flat)
    # message i depends on (key, i, x_i) only: changing another row leaves it alone
    x2 = x.copy()
    x2[4] = -x2[4]
    c = r.sample(x2, rng=7)
    assert np.array_equal(np.delete(a, 4, axis=0), np.delete(c, 4, axis=0))
    assert not np.array_equal(a, r.sample(x, rng=8))
    # rng=None is a release (allowed: the sampler is floating-point safe)
    assert r.sample(x[:2]).shape == (2, 4)
    assert r.floating_point_safe and not PrivUnit.floating_point_safe


def test_estimator_mean_against_the_input():
    p, theta, d = 0.75, 0.3, 3
    r = LatticePrivUnit(p, theta, d)
    x = np.array([0.48, 0.6, 0.64])
    n = 3000
    est = r.estimate(r.sample(np.tile(x, (n, 1)), rng=4))
    # per-message variance of Y / m is 1 / m^2 (|Y| = 1), so each coordinate has s.e. <= 1 / (m sqrt(n))
    assert np.all(np.abs(est - x) <= 5.0 / (r.m * math.sqrt(n)))
    # the same estimator on messages from -x is far away: the test can fail
    far = r.estimate(r.sample(np.tile(-x, (n, 1)), rng=5))
    assert np.linalg.norm(far - x) > 1.0
    # huge integers (scale_bits = 480) are normalised without overflow
    big = LatticePrivUnit(p, theta, d, scale_bits=480)
    e = big.estimate(big.sample(np.tile(x, (200, 1)), rng=6))
    assert np.all(np.isfinite(e))


# ---------------------------------------------------------------- the accountant
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_accountant_is_privunits_plus_the_sampler_charge(adjacency):
    pu, lat = PrivUnit(0.7, 0.2, 3), LatticePrivUnit(0.7, 0.2, 3)
    n = 1000
    a_pu = ShuffleAccountant(pu, n, adjacency)
    a_lat = ShuffleAccountant(lat, n, adjacency)
    a_raw = ShuffleAccountant(lat, n, adjacency, sampler_charge=False)
    assert a_lat.sampler_tau == n * lat.sampler_tv
    for eps in (0.05, 0.3, 1.0):
        base = a_pu.get_delta(eps)
        assert a_raw.get_delta(eps) == base  # same laws, same figures
        charge = a_lat.sampler_term(eps)
        assert charge == pytest.approx((1 + math.exp(eps)) * n * lat.sampler_tv, rel=1e-11)
        got = a_lat.get_delta(eps)
        assert base + charge <= got <= (base + charge) * (1 + 1e-9)


def test_eta_bounds_the_total_variation_end_to_end_at_small_sigma():
    # TV(M_x, M'_x) at sigma = 8, d = 2: M_x by enumeration (exact cone test), M'_x = round(G) with G
    # conditioned on the cone, its cell masses by a 32 x 32 midpoint rule per cell (box 6 sigma: mass
    # outside < 1e-7). eta (0.25 here) must bound it; it is about 24 times the value (0.0103)
    p, theta, bits = 0.7, 0.3, 3
    sigma = 2**bits
    r = LatticePrivUnit(p, theta, 2, scale_bits=bits)
    x = np.array([0.6, 0.8])
    ks = np.arange(-6 * sigma, 6 * sigma + 1)
    w = np.exp(-ks.astype(float) ** 2 / (2 * sigma**2))
    nu = np.outer(w, w)
    inc = np.array([[r.in_cone([int(a), int(b)], x) for b in ks] for a in ks])
    law = np.where(inc, p * nu / nu[inc].sum(), (1 - p) * nu / nu[~inc].sum())
    a, b = np.meshgrid(ks, ks, indexing="ij")
    g_in, g_all = np.zeros(a.shape), np.zeros(a.shape)
    for u in (np.arange(32) + 0.5) / 32 - 0.5:
        for v in (np.arange(32) + 0.5) / 32 - 0.5:
            g0, g1 = a + u, b + v
            dens = np.exp(-(g0**2 + g1**2) / (2 * sigma**2))
            g_in += dens * ((g0 * x[0] + g1 * x[1]) >= theta * np.hypot(g0, g1))
            g_all += dens
    g_out = g_all - g_in
    assert abs(g_in.sum() / g_all.sum() - (1 - r.q)) < 1e-4  # the quadrature sees PrivUnit's cap mass
    rounded = p * g_in / g_in.sum() + (1 - p) * g_out / g_out.sum()
    tv = 0.5 * np.abs(law - rounded).sum()
    assert 0.005 < tv <= r.sampler_tv


def test_step_t_constants():
    # E|He_2(N)| = 4 phi(1) <= 0.97, E|He_3(N)| <= 2.45, and the Riemann bound
    # sum_k |phi_s''(k + v)| <= int |phi_s''| + int |phi_s'''| (docs/sampling.md §10.6, Step T)
    with mpmath.workdps(30):
        he2 = mpmath.quad(lambda t: abs(t * t - 1) * mpmath.npdf(t), [-mpmath.inf, -1, 1, mpmath.inf])
        he3 = mpmath.quad(lambda t: abs(t**3 - 3 * t) * mpmath.npdf(t),
                          [-mpmath.inf, -mpmath.sqrt(3), 0, mpmath.sqrt(3), mpmath.inf])
        assert abs(he2 - 4 * mpmath.npdf(1)) < 1e-20 and he2 <= 0.97 and he3 <= 2.45
        for s in (1, 2, 4):
            for v in (-0.5, -0.2, 0.0, 0.31, 0.5):
                total = mpmath.fsum(abs(((k + v) ** 2 / s**4 - 1 / mpmath.mpf(s) ** 2) * mpmath.npdf(k + v, 0, s))
                                    for k in range(-30 * s, 30 * s + 1))
                assert total <= he2 / s**2 + he3 / s**3


def test_accountant_covers_the_exact_shuffled_delta_at_n2():
    # d = 1, sigma = 64 (scale_bits = 6: eta ~ 0.02, a non-trivial certificate): the release's exact law is
    # enumerable, P(z | x) = p nu(z) / nu(A_x) on A_x = {z x >= theta |z|}, (1 - p) nu(z) / (1 - nu(A_x)) off it,
    # nu the discrete Gaussian (truncated at 14 sigma: mass beyond ~1e-42). Two users, replace-one: the shuffled
    # output is the multiset {z1, z2}; its exact delta(eps) for every pair of neighbouring datasets in {-1, 1}^2
    # must not exceed the certified get_delta (PrivUnit's laws plus the sampler charge)
    p, theta, bits = 0.7, 0.3, 6
    r = LatticePrivUnit(p, theta, 1, scale_bits=bits)
    sigma = 1 << bits
    z = np.arange(-14 * sigma, 14 * sigma + 1)
    nu = np.exp(-(z.astype(float) ** 2) / (2.0 * sigma**2))
    nu /= nu.sum()

    def law(x: int) -> np.ndarray:
        inside = z * x >= theta * np.abs(z)
        assert all(inside[i] == r.in_cone([int(z[i])], np.array([float(x)])) for i in range(0, len(z), 97))
        m = nu[inside].sum()
        return np.where(inside, p * nu / m, (1 - p) * nu / (1 - m))

    laws = {x: law(x) for x in (-1, 1)}
    iu = np.triu_indices(len(z))

    def shuffled(x1: int, x2: int) -> np.ndarray:
        m = np.outer(laws[x1], laws[x2])
        s = m + m.T
        s[np.diag_indices(len(z))] = np.diag(m)
        return s[iu]

    eps_grid = (0.05, 0.2, 0.5, 0.8)
    acc = ShuffleAccountant(r, 2, "replace")
    worst = np.zeros(len(eps_grid))
    for other in (-1, 1):
        a, b = shuffled(1, other), shuffled(-1, other)
        for pa, pb in ((a, b), (b, a)):
            for k, e in enumerate(eps_grid):
                worst[k] = max(worst[k], float(np.maximum(pa - math.exp(e) * pb, 0.0).sum()))
    cert = np.array([acc.get_delta(e) for e in eps_grid])
    assert np.all(worst > 1e-3)  # the check is not vacuous
    assert np.all(worst <= cert), (worst, cert)
