"""RandomizedResponse and PrivUnit: closed forms vs seed 001, brute force, Monte Carlo, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from sharpdp.shuffle import PrivUnit, RandomizedResponse, mse_lower_bound, privunit_constant
from sharpdp.shuffle import tables as TB


# ----------------------------------------------------------------------------- helpers
def full_krr_table(k, eps0):
    """Full k x k k-RR matrix plus the uniform blanket row (independent of the class reduction)."""
    Z = math.exp(eps0) + k - 1
    R = np.full((k + 1, k), 1.0 / Z)
    np.fill_diagonal(R[:k], math.exp(eps0) / Z)
    R[k] = 1.0 / k
    return R, np.ones(k), R[k].copy(), k / Z


def atoms(randomizer, *args):
    """(gamma, values, probs) per law, through the public privacy_amplification_laws."""
    return [(g, law.values, law.probs) for g, law in randomizer.privacy_amplification_laws(*args)]


# ----------------------------------------------------------------------------- RR closed forms
@pytest.mark.parametrize("eps0", [0.05, 0.3, 1.0, 4.0])
def test_binary_rr_reproduces_proposition_rr(eps0):
    rr = RandomizedResponse(2, eps0)
    p = math.exp(eps0) / (1 + math.exp(eps0))
    t = 2 * p - 1
    assert rr.gamma == pytest.approx(1 - t, rel=1e-14)
    # blanket decomposition: gamma R_BG is the pointwise infimum of the output laws
    probs = np.array([[rr.p_keep, rr.p_other], [rr.p_other, rr.p_keep]])
    assert np.allclose(rr.gamma * rr.blanket_probs, probs.min(axis=0), rtol=1e-14)
    assert rr.chi_lo**2 == pytest.approx((1 - t) / t**2, rel=1e-13)
    assert rr.mse_single == pytest.approx(1 / t**2 - 1, rel=1e-13)
    chi = rr.chi_lo
    assert (-1 + math.sqrt(1 + 4 * chi**2)) / (2 * chi**2) == pytest.approx(t, rel=1e-12)  # eq. t-in-chilo
    # HCR bound attained by binary RR: Err_1 = d chi_up^2 with d = 1
    assert mse_lower_bound(rr.chi_up, 1) == pytest.approx(rr.mse_single, rel=1e-12)


def test_binary_rr_error_expansion():
    # Err_1 = chi^2 (1 + 1/chi + O(chi^-2)): the remainder times chi^2 stays bounded
    rems = []
    for eps0 in [0.1, 0.03, 0.01, 0.003]:
        rr = RandomizedResponse(2, eps0)
        chi = rr.chi_lo
        rems.append((rr.mse_single / chi**2 - 1 - 1 / chi) * chi**2)
    assert max(abs(r) for r in rems) < 2.0
    assert abs(rems[-1] - rems[-2]) < 0.05 * abs(rems[-1]) + 1e-2  # it converges


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("eps0", [0.5, 2.0])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_rr_indices_match_brute_force_over_all_pairs_and_references(k, eps0, adjacency):
    R, w, bg, gamma = full_krr_table(k, eps0)
    pairs = TB.table_pairs(k, adjacency, bottom=k)
    lo = TB.table_chi_lo(R, w, bg, gamma, pairs)
    up = TB.table_chi_up(R, w, pairs, refs=range(k))
    rr = RandomizedResponse(k, eps0)
    assert rr.shuffle_indices(adjacency) == pytest.approx((lo, up), rel=1e-12)
    Z = math.exp(eps0) + k - 1
    if adjacency == "replace":  # spec Section 6
        assert rr.chi_lo_for("replace") ** 2 == pytest.approx(Z / (2 * math.expm1(eps0) ** 2), rel=1e-12)
        if k == 2:
            assert rr.chi_up_for("replace") ** 2 == pytest.approx(math.exp(eps0) / math.expm1(eps0) ** 2, rel=1e-12)
        else:
            assert rr.chi_up_for("replace") == pytest.approx(rr.chi_lo_for("replace"), rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_rr_laws_match_full_table_and_have_mean_one_minus_e_eps(k, adjacency):
    eps0, eps = 1.3, 0.4
    rr = RandomizedResponse(k, eps0)
    R, w, bg, gamma = full_krr_table(k, eps0)
    got = atoms(rr, eps, adjacency)
    for g, v, p in got:
        assert g == pytest.approx(gamma, rel=1e-14)
        assert p.sum() == pytest.approx(1.0, rel=1e-14)
        assert np.dot(v, p) == pytest.approx(1 - math.exp(eps), rel=1e-12)
    pairs = TB.table_pairs(k, adjacency, bottom=k)
    brute = {tuple(np.round(TB.table_pav_atoms(R[a], R[b], bg, w, eps)[0], 12)) for a, b in pairs}
    assert {tuple(np.round(v, 12)) for _, v, _ in got} == brute


def test_binary_rr_blanket_bound_vanishes_as_in_errata():
    # errata: x vs ⊥ (the appendix's order) is exactly 0 for eps >= log(2p);
    # the other order needs eps >= log(1/gamma) = log((e^eps0 + 1)/2) > log(2p).
    eps0 = 1.0
    rr = RandomizedResponse(2, eps0)
    p = rr.p_keep
    (_, v_fwd, _), (_, v_bwd, _) = atoms(rr, math.log(2 * p), "zero_out")
    assert v_fwd.max() <= 1e-15
    assert atoms(rr, math.log(2 * p) - 1e-6, "zero_out")[0][1].max() > 0
    assert v_bwd.max() > 0
    assert all(v.max() <= 1e-15 for _, v, _ in atoms(rr, -math.log(rr.gamma), "zero_out"))


def test_krr_replace_laws_reproduce_spec_table(krr_replace_row):
    k, eps0, eps, n, exact = (krr_replace_row[c] for c in ("k", "epsilon0", "epsilon", "n", "delta"))
    from data.make_krr_reference import exact_dup  # the generator's exact multinomial sum

    (g, law), = RandomizedResponse(k, eps0).privacy_amplification_laws(eps, "replace")
    desc = np.argsort(-law.values)  # exact_dup wants a negative last atom
    assert law.values.size == 3 and law.values[desc[-1]] < 0
    assert exact_dup(law.values[desc], law.probs[desc], g, n) == pytest.approx(exact, rel=1e-6)


def test_lower_form_atoms_for_k_ge_3_use_a_third_symbol():
    rr = RandomizedResponse(4, 1.0)
    triples = [(g, law.values, law.probs) for g, law in rr.lower_form_laws(0.2, "replace")]
    assert len(triples) == 3 and all(g == 1.0 for g, _, _ in triples)
    for _, v, p in triples:
        assert p.sum() == pytest.approx(1.0) and np.dot(v, p) == pytest.approx(1 - math.exp(0.2))


# ----------------------------------------------------------------------------- RR sampler
def test_krr_sampler_frequencies_and_second_moment_within_ci():
    k, eps0, n = 5, 1.0, 400_000
    rr = RandomizedResponse(k, eps0)
    x = np.repeat(np.arange(k), n // k)
    y = rr.sample(x, rng=11)
    assert y.dtype == np.int64 and y.shape == x.shape
    # per-input output frequencies against the k-RR probabilities (5 sigma)
    for c in range(k):
        yc = y[x == c]
        probs = np.full(k, rr.p_other)
        probs[c] = rr.p_keep
        freq = np.bincount(yc, minlength=k) / yc.size
        assert np.all(np.abs(freq - probs) <= 5 * np.sqrt(probs * (1 - probs) / yc.size))
    # unbiased frequencies: true frequencies are uniform here
    f_hat = rr.estimate(y)
    se = math.sqrt(rr.mse_single / k / n) * 2
    assert np.all(np.abs(f_hat - 1 / k) < 5 * se)
    # second moment: per-message squared error equals mse_single (constant per message)
    Z, em1 = rr._Z, rr._em1
    onehot_err = ((np.eye(k)[y] - 1 / Z) * Z / em1 - np.eye(k)[x])
    sq = (onehot_err**2).sum(axis=1)
    assert abs(sq.mean() - rr.mse_single) < 5 * sq.std() / math.sqrt(n)


def test_binary_rr_mean_estimator_mse_within_ci():
    rr = RandomizedResponse(2, 0.7)
    n = 300_000
    x = np.where(np.arange(n) % 3 == 0, 0, 1)
    y = rr.sample(x, rng=5)
    xs, ys = 2 * x - 1, 2 * y - 1
    t = math.tanh(0.35)
    err2 = (ys / t - xs) ** 2
    assert abs(err2.mean() - rr.mse_single) < 5 * err2.std() / math.sqrt(n)
    assert abs(rr.estimate_mean(y) - xs.mean()) < 5 * math.sqrt(rr.mse_single / n)


def test_krr_sampler_reproducible_and_thread_independent():
    rr = RandomizedResponse(10, 2.0)
    x = np.arange(100_003) % 10
    a = rr.sample(x, rng=3, threads=1)
    b = rr.sample(x, rng=3, threads=2)
    c = rr.sample(x, rng=4, threads=2)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ----------------------------------------------------------------------------- PrivUnit
@pytest.mark.parametrize("d,expected", [(2, math.pi**2 / 8), (10, 1.4943), (100, 1.5630), (1000, None)])
def test_privunit_constant_values_and_minimum_at_theta_zero(d, expected):
    c0 = privunit_constant(0.0, d)
    if expected is not None:
        assert c0 == pytest.approx(expected, abs=1e-4 if d > 2 else 1e-13)
    assert c0 < math.pi / 2
    grid = np.linspace(-0.9, 0.9, 37) / math.sqrt(d) * (3 if d > 2 else 1)
    assert all(privunit_constant(t, d) >= c0 - 1e-12 for t in grid)


def test_privunit_constant_tends_to_pi_over_2():
    vals = [privunit_constant(0.0, d) for d in (10, 100, 1000, 10_000)]
    assert all(a < b for a, b in zip(vals, vals[1:]))
    assert math.pi / 2 - vals[-1] < 1e-4
    # d = 1 is randomized response: C = 1
    assert privunit_constant(0.3, 1) == pytest.approx(1.0)


def test_privunit_closed_forms_against_quadrature():
    p, theta, d = 0.62, 0.15, 7
    pu = PrivUnit(p, theta, d)
    dens = lambda t: (1 - t * t) ** ((d - 3) / 2)  # noqa: E731
    norm = integrate.quad(dens, -1, 1)[0]
    s = integrate.quad(dens, theta, 1)[0] / norm
    alpha = integrate.quad(lambda t: t * dens(t), theta, 1)[0] / norm / s
    q = 1 - s
    assert (pu.q, pu.alpha) == pytest.approx((q, alpha), rel=1e-9)
    delta = p + q - 1
    assert pu.m == pytest.approx(alpha * delta / q, rel=1e-9)  # eq. privunit-m
    assert pu.mse_single == pytest.approx(1 / pu.m**2 - 1, rel=1e-12)
    gamma = min(p / (1 - q), (1 - p) / q)
    assert pu.chi_lo**2 == pytest.approx(gamma * q * (1 - q) / delta**2, rel=1e-9)  # eq. chilo-Delta
    assert pu.chi_up >= pu.chi_lo


def test_privunit_err1_leading_constant_in_high_privacy():
    theta, d = 0.0, 10
    s = 1 - PrivUnit(0.7, theta, d).q
    pu = PrivUnit(s + 1e-4, theta, d)
    ratio = pu.mse_single / (privunit_constant(theta, d) * d * pu.chi_lo**2)
    assert ratio == pytest.approx(1.0, abs=2e-3)


def test_privunit_dim1_is_binary_rr():
    p = 0.7
    pu = PrivUnit(p, 0.2, 1)
    rr = RandomizedResponse(2, math.log(p / (1 - p)))
    assert (pu.chi_lo, pu.chi_up, pu.mse_single, pu.gamma) == pytest.approx(
        (rr.chi_lo, rr.chi_up, rr.mse_single, rr.gamma), rel=1e-12)
    assert pu.chi_lo_for("replace") == pytest.approx(rr.chi_lo_for("replace"), rel=1e-12)
    assert pu.chi_up_for("replace") == pytest.approx(rr.chi_up_for("replace"), rel=1e-12)
    assert pu.local_epsilon == pytest.approx(rr.local_epsilon, rel=1e-12)


def test_privunit_chi_up_zero_out_against_sampled_reference_directions():
    # brute force: sup over the reference direction of E_mu[(f_v - 1)^2 / f_x], caps by quadrature
    p, theta, d = 0.58, 0.05, 3
    pu = PrivUnit(p, theta, d)
    rng = np.random.default_rng(0)
    u = rng.standard_normal((400_000, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    v = np.eye(d)[0]
    fv = np.where(u @ v >= theta, pu.h, pu.l)
    best = 0.0
    for ang in np.linspace(0, math.pi, 13):
        xdir = np.array([math.cos(ang), math.sin(ang), 0.0])
        fx = np.where(u @ xdir >= theta, pu.h, pu.l)
        best = max(best, np.mean((fv - 1) ** 2 / fx))
    assert 1 / math.sqrt(best) == pytest.approx(pu.chi_up, rel=5e-3)


@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_privunit_laws_are_probability_laws_with_mean_one_minus_e_eps(adjacency):
    pu = PrivUnit(0.6, -0.1, 5)
    for g, v, p in atoms(pu, 0.1, adjacency):
        assert g == pytest.approx(pu.gamma)
        assert p.sum() == pytest.approx(1.0, rel=1e-13)
        assert np.dot(v, p) == pytest.approx(1 - math.exp(0.1), rel=1e-12)


@pytest.mark.parametrize("d,theta", [(1, 0.3), (2, 0.0), (5, 0.3), (50, -0.05)])
def test_privunit_sampler_moments_within_ci(d, theta):
    pu = PrivUnit(0.65, theta, d)
    n = 200_000
    rng = np.random.default_rng(1)
    v = rng.standard_normal((n, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    y = pu.sample(v, rng=7)
    assert y.shape == (n, d)
    assert np.allclose(np.linalg.norm(y, axis=1), 1.0)
    t = np.sum(y * v, axis=1)
    # cap probability p
    frac = np.mean(t >= theta)
    assert abs(frac - pu.p) < 5 * math.sqrt(pu.p * (1 - pu.p) / n)
    # first moment: E[<Y, v>] = m
    assert abs(t.mean() - pu.m) < 5 * t.std() / math.sqrt(n)
    # second moment of T against quadrature of its exact density; Err_1 via the estimator
    if d >= 2:
        dens = lambda z: (1 - z * z) ** ((d - 3) / 2)  # noqa: E731
        m2 = lambda lo, hi: integrate.quad(lambda z: z * z * dens(z), lo, hi)[0] / integrate.quad(dens, lo, hi)[0]  # noqa: E731
        et2 = pu.p * m2(theta, 1) + (1 - pu.p) * m2(-1, theta)
        assert abs(np.mean(t**2) - et2) < 5 * np.std(t**2) / math.sqrt(n)
        # the orthogonal part is isotropic: E[Y_perp Y_perp^T] = (1 - E T^2)/(d - 1) I
        perp = y - t[:, None] * v
        assert abs(np.mean(np.sum(perp**2, axis=1)) - (1 - et2)) < 5 * np.std(np.sum(perp**2, axis=1)) / math.sqrt(n)
    err = np.sum((y / pu.m - v) ** 2, axis=1)
    assert abs(err.mean() - pu.mse_single) < 5 * err.std() / math.sqrt(n)


def test_privunit_estimate_and_thread_independence():
    pu = PrivUnit(0.7, 0.0, 4)
    v = np.tile([0.6, 0.8, 0.0, 0.0], (50_000, 1))
    a = pu.sample(v, rng=9, threads=1)
    b = pu.sample(v, rng=9, threads=2)
    assert np.array_equal(a, b)
    est = pu.estimate(a)
    assert np.all(np.abs(est - v[0]) < 5 * math.sqrt(pu.mse_single / 50_000))


def test_privunit_tiny_cap_samples_stay_in_cap():
    pu = PrivUnit(0.5, 0.9, 200)  # 1 - q is about 1e-70: naive inverse CDF would fail here
    v = np.zeros((2000, 200))
    v[:, 0] = 1
    t = pu.sample(v, rng=1)[:, 0]
    assert np.all(np.isfinite(t)) and abs(np.mean(t >= 0.9) - 0.5) < 0.06
    # E[T | T >= 0.9] for density (1 - t^2)^{98.5}: 0.9 + about (1 - 0.81)/(2 * 0.9 * 98.5)
    dens = lambda z: (1 - z * z) ** 98.5  # noqa: E731
    cap_mean = integrate.quad(lambda z: z * dens(z), 0.9, 1)[0] / integrate.quad(dens, 0.9, 1)[0]
    tc = t[t >= 0.9]
    assert abs(tc.mean() - cap_mean) < 5 * tc.std() / math.sqrt(tc.size)


# ----------------------------------------------------------------------------- properties
@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 50), eps0=st.floats(0.01, 10.0))
def test_rr_index_ordering(k, eps0):
    rr = RandomizedResponse(k, eps0)
    for adj in ("zero_out", "replace"):
        lo, up = rr.shuffle_indices(adj)
        assert 0 < lo <= up * (1 + 1e-12)
    assert rr.mse_single > 0


@settings(max_examples=40, deadline=None)
@given(p=st.floats(0.05, 0.95), theta=st.floats(-0.8, 0.8), d=st.integers(1, 60))
def test_privunit_index_ordering(p, theta, d):
    try:
        pu = PrivUnit(p, theta, d)
    except ValueError:
        return  # p = 1 - q exactly
    assert 0 < pu.chi_lo <= pu.chi_up * (1 + 1e-12)
    assert 0 < pu.gamma <= 1


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("args,name", [
    ((1, 1.0), "k"), ((2, 0.0), "epsilon0"), ((2, -1.0), "epsilon0"), ((3, float("nan")), "epsilon0"),
    ((2.5, 1.0), "k"),
])
def test_rr_bad_input_names_parameter(args, name):
    with pytest.raises((ValueError, TypeError), match=name):
        RandomizedResponse(*args)


@pytest.mark.parametrize("args,name", [
    ((0.0, 0.1, 3), "p"), ((1.0, 0.1, 3), "p"), ((float("nan"), 0.1, 3), "p"), ((0.6, 1.0, 3), "theta"),
    ((0.6, -1.0, 3), "theta"), ((0.6, float("nan"), 3), "theta"), ((0.6, 0.1, 0), "dim"), ((0.5, 0.0, 4), "p"),
])
def test_privunit_bad_input_names_parameter(args, name):
    with pytest.raises((ValueError, TypeError), match=name):
        PrivUnit(*args)


def test_sampler_bad_input():
    rr = RandomizedResponse(3, 1.0)
    with pytest.raises(ValueError, match="x"):
        rr.sample(np.array([0, 3]))
    with pytest.raises(ValueError, match="x"):
        rr.sample(np.array([0.5]))
    with pytest.raises(ValueError, match="adjacency"):
        atoms(rr, 0.1, "add")
    with pytest.raises(ValueError, match="epsilon"):
        atoms(rr, float("nan"))
    pu = PrivUnit(0.6, 0.1, 3)
    with pytest.raises(ValueError, match="x"):
        pu.sample(np.ones((4, 3)))
    with pytest.raises(ValueError, match="x"):
        pu.sample(np.ones((4, 2)) / math.sqrt(2))
