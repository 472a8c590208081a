"""GeneralRandomizer (Numba quadrature) and the BMG chi_up helper, against closed forms."""

import math

import numpy as np
import pytest
from numba import njit
from scipy.stats import norm

from sharpdp.shuffle import BlanketMixedGaussian, GeneralRandomizer, RandomizedResponse, gaussian_chi_chua
from sharpdp.shuffle.randomizers.bmg import _bmg_up_variance, bmg_chi_up

# binary RR on sign(y), uniform magnitude: the same privacy as RandomizedResponse(2, EPS0)
from _densities import EPS0, T, half, lifted_rr

SIG, GAM = 1.0, 0.9


@njit(cache=True)
def bmg1(y, x):
    c = 1 / (SIG * math.sqrt(2 * math.pi))
    return c * (GAM * math.exp(-0.5 * (y / SIG) ** 2) + (1 - GAM) * math.exp(-0.5 * ((y - x) / SIG) ** 2))


@njit(cache=True)
def phi0(y):
    return math.exp(-0.5 * (y / SIG) ** 2) / (SIG * math.sqrt(2 * math.pi))


@njit(cache=True)
def gauss(y, x):
    return math.exp(-0.5 * ((y - x) / SIG) ** 2) / (SIG * math.sqrt(2 * math.pi))


@pytest.fixture(scope="module")
def lifted():
    return GeneralRandomizer(lifted_rr, [-1.0, 1.0], (-1.0, 1.0), blanket=half, gamma=1 - T,
                             breakpoints=[0.0], cells=32)


@pytest.fixture(scope="module")
def bmg():
    return GeneralRandomizer(bmg1, [-1.0, 1.0], (-15.0, 15.0), blanket=phi0, gamma=GAM, cells=512)


def test_lifted_rr_matches_randomized_response(lifted):
    rr = RandomizedResponse(2, EPS0)
    for adj in ("zero_out", "replace"):
        assert (lifted.chi_lo_for(adj), lifted.chi_up_for(adj)) == pytest.approx(rr.shuffle_indices(adj), rel=1e-12)
        got = {tuple(np.round(law.values, 12)) for _, law in lifted.privacy_amplification_laws(0.3, adj)}
        want = {tuple(np.round(law.values, 12)) for _, law in rr.privacy_amplification_laws(0.3, adj)}
        assert got == want
    assert lifted.quad_error["mass"] < 1e-14


def test_bmg_indices_by_quadrature(bmg):
    assert bmg.chi_lo == pytest.approx(BlanketMixedGaussian(GAM, SIG, 1).chi_lo, rel=1e-10)
    assert bmg.chi_up == pytest.approx(bmg_chi_up(GAM, SIG), rel=1e-8)
    assert bmg.quad_error["mass"] < 1e-12 and bmg.quad_error["chi_lo[zero_out]"] < 1e-8


def test_bmg_law_brackets_closed_form_partial_expectations(bmg):
    # x vs ⊥: L = gamma + (1-gamma) exp(rZ - r^2/2) - e^eps; E[(L - c)_+] in Black-Scholes form
    eps, r = 0.2, 1 / SIG
    laws = {tuple(v[:3]): (v, p) for _, v, p in bmg._pav_atoms(eps, "zero_out")}
    lows = {tuple(v[:3]): (v, p) for _, v, p in bmg._pav_atoms(eps, "zero_out", spread=False)}
    # pick the x = +1 vs ⊥ order: its atoms' maximum is near the largest
    up_v, up_p = max(laws.values(), key=lambda vp: vp[0].max())
    lo_v, lo_p = max(lows.values(), key=lambda vp: vp[0].max())
    for c in (-0.2, 0.0, 0.5, 2.0, 5.0):
        K = (c + math.exp(eps) - GAM) / (1 - GAM)
        d1 = (-math.log(K) + r * r / 2) / r
        exact = (1 - GAM) * (norm.cdf(d1) - K * norm.cdf(d1 - r))
        up = np.dot(np.maximum(up_v - c, 0), up_p)
        lo = np.dot(np.maximum(lo_v - c, 0), lo_p)
        assert lo <= exact * (1 + 1e-9) + 1e-15 and exact <= up * (1 + 1e-9) + 1e-15
        assert up - lo <= 0.03 * exact + 1e-12  # cell width 30/512: the spread costs ~1 % in the far tail
    assert np.dot(up_v, up_p) == pytest.approx(1 - math.exp(eps), rel=1e-10)


def test_gaussian_chi_up_equals_chi_chua_on_grid():
    # gamma = 0 Gaussian with ⊥ = input 0: chi_up over x1, x in a grid of [-1, 1] is chi_chua
    grid = np.linspace(-1, 1, 9)
    g = GeneralRandomizer(gauss, grid, (-20.0, 20.0), blanket=phi0, gamma=0.0, cells=512)
    assert g.chi_lo == 0.0
    assert g.chi_up == pytest.approx(gaussian_chi_chua(SIG), rel=1e-9)
    assert bmg_chi_up(0.0, SIG) == pytest.approx(gaussian_chi_chua(SIG), rel=1e-9)
    with pytest.raises(ValueError, match="gamma"):
        g.privacy_amplification_laws(0.1)


@pytest.mark.parametrize("gamma,sigma", [(0.5, 0.7), (0.95, 4.6)])
def test_bmg_chi_up_worst_case_is_at_the_extremes(gamma, sigma):
    grid = np.linspace(-1, 1, 7)
    worst = max(_bmg_up_variance(gamma, sigma, a, b) for a in grid for b in grid)
    assert 1 / math.sqrt(worst) == pytest.approx(bmg_chi_up(gamma, sigma), rel=1e-9)
    assert bmg_chi_up(gamma, sigma) >= BlanketMixedGaussian(gamma, sigma, 1).chi_lo


def test_general_bad_input():
    with pytest.raises(ValueError, match="support"):
        GeneralRandomizer(gauss, [1.0], (1.0, -1.0))
    with pytest.raises(ValueError, match="gamma"):
        GeneralRandomizer(gauss, [1.0], (-5.0, 5.0), blanket=phi0, gamma=0.9)  # not a blanket
    with pytest.raises(ValueError, match="gamma"):
        GeneralRandomizer(gauss, [1.0], (-5.0, 5.0), gamma=0.5)
    with pytest.raises(ValueError, match="inputs"):
        GeneralRandomizer(gauss, [float("nan")], (-5.0, 5.0))
    with pytest.raises(TypeError, match="Numba"):
        GeneralRandomizer(lambda y, x: 1.0, [1.0], (-5.0, 5.0))
    with pytest.raises(ValueError, match="gamma"):
        bmg_chi_up(1.0, 1.0)


def test_bmg_chi_up_worst_case_in_two_dimensions():
    # d = 2 grid check: non-colinear (x1, x) configurations do not beat the antipodal one
    g, s = 0.5, 0.7
    h = s / 30
    y = np.arange(-8 * s - 4, 8 * s + 4, h)
    Y1, Y2 = np.meshgrid(y, y)

    def phi(m1, m2):
        return np.exp(-((Y1 - m1) ** 2 + (Y2 - m2) ** 2) / (2 * s * s)) / (2 * np.pi * s * s)

    def var(x1, x):
        return (1 - g) ** 2 * np.sum((phi(*x1) - phi(0, 0)) ** 2 / (g * phi(0, 0) + (1 - g) * phi(*x))) * h * h

    anti = var((1.0, 0.0), (-1.0, 0.0))
    assert 1 / math.sqrt(anti) == pytest.approx(bmg_chi_up(g, s), rel=1e-6)
    for th in np.linspace(0, math.pi, 7)[:-1]:
        for r in (0.5, 1.0):
            assert var((1.0, 0.0), (r * math.cos(th), r * math.sin(th))) <= anti * (1 + 1e-9)
    assert var((0.6, 0.0), (-1.0, 0.0)) <= anti


# ------------------------------------------------------------------ certified mode (log_curvature)
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sharpdp.shuffle import ShuffleAccountant  # noqa: E402
from sharpdp.shuffle.quadrature import certified_two_point_atoms  # noqa: E402

TR = 8.0  # BMG truncated to [-TR, TR] and renormalised (mass outside ~1e-15: the same delta to ~1e-15)
Z0 = norm.cdf(TR) - norm.cdf(-TR)
ZX = GAM * Z0 + (1 - GAM) * (norm.cdf(TR - 1) - norm.cdf(-TR - 1))  # equal for x = +-1


@njit(cache=True)
def tbmg(y, x):
    c = 1 / (SIG * math.sqrt(2 * math.pi) * ZX)
    return c * (GAM * math.exp(-0.5 * (y / SIG) ** 2) + (1 - GAM) * math.exp(-0.5 * ((y - x) / SIG) ** 2))


@njit(cache=True)
def tphi(y):
    return math.exp(-0.5 * (y / SIG) ** 2) / (SIG * math.sqrt(2 * math.pi) * Z0)


@njit(cache=True)
def quad_mean(y, x):
    # on [0, 1]: E[Y | x] = 1/2 + x^2 / 12, not affine in x
    return 1.0 + 0.5 * x * x * (2 * y - 1)


@njit(cache=True)
def zero_half(y, x):
    return 8.0 * max(y - 0.5, 0.0) * (1 + 0.1 * x)


@njit(cache=True)
def flat(y):
    return 1.0


@pytest.fixture(scope="module")
def cbmg():
    # |d^2/dy^2 log| <= 1/SIG^2 for the BMG with |x| <= 1, SIG^2 >= 1/8, and for the blanket
    return GeneralRandomizer(tbmg, [-1.0, 1.0], (-TR, TR), blanket=tphi, gamma=GAM, cells=512, log_curvature=1.0)


def _stop_loss(values, probs, c):
    return float(np.dot(np.maximum(values - c, 0.0), probs))


@pytest.mark.parametrize("n,eps", [(100, 0.0907), (1000, 0.0158)])  # delta ~ 1e-6 for the BMG
def test_certified_bmg_accountant_brackets_the_closed_form_one(cbmg, n, eps):
    up = ShuffleAccountant(cbmg, n).get_delta(eps)
    lo_ref, up_ref = ShuffleAccountant(BlanketMixedGaussian(GAM, SIG, 1), n).get_delta_bounds(eps)
    assert 1e-7 < lo_ref <= up  # the true delta is >= lo_ref (LognormalLaw accountant)
    assert up <= 1.03 * up_ref


def test_certified_law_dominates_closed_form_stop_loss(cbmg):
    # x = +1 vs ⊥: L = gamma + (1-gamma) exp(rZ - r^2/2) - e^eps; E[(L - c)_+] in Black-Scholes form
    eps, r = 0.2, 1 / SIG
    laws = [(g, law.values, law.probs) for g, law in cbmg.privacy_amplification_laws(eps, "zero_out")]
    v, p = max(((v, p) for _, v, p in laws), key=lambda vp: vp[0].max())
    assert np.dot(v, p) >= 1 - math.exp(eps) and np.dot(v, p) <= 1 - math.exp(eps) + 1e-6
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    for c in (-0.5, -0.2, 0.0, 0.5, 2.0, 5.0, 20.0):
        K = (c + math.exp(eps) - GAM) / (1 - GAM)
        if K <= 0:  # L > c surely
            exact = 1 - math.exp(eps) - c
        else:
            d1 = (-math.log(K) + r * r / 2) / r
            exact = (1 - GAM) * (norm.cdf(d1) - K * norm.cdf(d1 - r))
        got = _stop_loss(v, p, c)
        # the truncation beyond |y| = TR moves these by < 1e-12 (absolute)
        assert exact - 1e-12 <= got <= exact * (1 + 1e-4) + 1e-7


def test_certified_index_enclosures_contain_closed_forms(cbmg):
    enc = cbmg.index_enclosure("zero_out")
    lo_ref, up_ref = BlanketMixedGaussian(GAM, SIG, 1).chi_lo, bmg_chi_up(GAM, SIG)
    assert enc["chi_lo"][0] <= lo_ref <= enc["chi_lo"][1] and enc["chi_lo"][1] - enc["chi_lo"][0] < 1e-3 * lo_ref
    assert enc["chi_up"][0] <= up_ref <= enc["chi_up"][1] and enc["chi_up"][1] - enc["chi_up"][0] < 1e-3 * up_ref
    assert cbmg.certified and cbmg.error_bounds["kappa"] < 2e-8
    for lo_m, hi_m in cbmg.error_bounds["mass"].values():
        assert lo_m <= 1.0 <= hi_m


def test_certified_lifted_rr_equals_randomized_response():
    # densities constant on each piece: log_curvature = 0, the certified law is the RR law
    g = GeneralRandomizer(lifted_rr, [-1.0, 1.0], (-1.0, 1.0), blanket=half, gamma=1 - T, breakpoints=[0.0],
                          cells=8, log_curvature=0.0)
    rr = RandomizedResponse(2, EPS0)
    a = ShuffleAccountant(g, 1000, adjacency="replace").get_delta_bounds(0.1)
    b = ShuffleAccountant(rr, 1000, adjacency="replace").get_delta_bounds(0.1)
    # the certified law spreads RR's atoms by ~1e-10 (a slightly larger true value) and may take
    # another grid: the brackets must overlap and agree within the accountant's rel_tol
    assert b[0] <= a[1] and a[0] <= b[1] * (1 + 1e-6) and a[1] == pytest.approx(b[1], rel=1e-2)
    enc = g.index_enclosure("replace")
    assert enc["chi_lo"][0] <= rr.shuffle_indices("replace")[0] <= enc["chi_lo"][1]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), slack=st.floats(0.0, 0.05), out=st.sampled_from([0.0, 1e-4, 0.1]),
       shift=st.floats(-2.0, 2.0))
def test_property_certified_atoms_dominate_in_increasing_convex_order(seed, slack, out, shift):
    # a true finite law split into cells, bounds loosened at random, plus (mass outside the support)
    # an atom at 0 of mass `out` (cells scaled by 1 - out; L shifted so that 0 may lie above every
    # cell): the output dominates it in the increasing convex order, i.e. E[(L' - c)_+] >=
    # E[(L - c)_+] at every kink c (a complete check)
    rng = np.random.default_rng(seed)
    ncell, per = 12, 5
    v = np.sort(rng.normal(size=ncell * per) * rng.uniform(0.1, 3) + shift).reshape(ncell, per)
    p = rng.dirichlet(np.ones(ncell * per)).reshape(ncell, per) * (1 - out)
    P, M = p.sum(1), (p * v).sum(1)
    u = rng.uniform(0, slack, size=(4, ncell))
    vals, probs = certified_two_point_atoms(v.min(1) - u[0], v.max(1) + u[1], P * (1 - u[2]), P * (1 + u[3]),
                                            M + slack * rng.uniform(0, 1, ncell) * P, outside=out * (1 + slack))
    assert probs.sum() == pytest.approx(1.0, abs=1e-12) and probs.min() >= 0
    tv, tp = np.append(v.ravel(), 0.0), np.append(p.ravel(), out)
    for c in np.concatenate([tv, vals]):
        assert _stop_loss(vals, probs, c) >= _stop_loss(tv, tp, c) - 1e-12


def test_sampler_moments_and_cdf_within_monte_carlo_ci(cbmg):
    assert cbmg.quad_error["sampler_tv"] < 1e-12
    n = 100_000
    for x in (1.0, -1.0, 0.3):
        y = cbmg.sample(np.full(n, x), rng=7)
        mean, var = (1 - GAM) * x, SIG**2 + GAM * (1 - GAM) * x * x  # truncation effect < 1e-12
        assert abs(y.mean() - mean) <= 5 * math.sqrt(var / n)
        fourth = 3 * SIG**4 + 6 * SIG**2 * GAM * (1 - GAM) * x * x + GAM * (1 - GAM) * x**4 * (1 - 3 * GAM * (1 - GAM))
        assert abs(y.var() - var) <= 5 * math.sqrt((fourth - var * var) / n)
        for c in (-1.5, 0.0, 0.7):
            F = GAM * norm.cdf(c / SIG) + (1 - GAM) * norm.cdf((c - x) / SIG)
            assert abs(np.mean(y <= c) - F) <= 5 * math.sqrt(F * (1 - F) / n)
        assert y.min() >= -TR and y.max() <= TR
    x = np.linspace(-1, 1, 11)[:, None]
    a, b = cbmg.sample(x, rng=3), cbmg.sample(x, rng=3)
    assert a.shape == (11, 1) and np.array_equal(a, b)
    assert not np.array_equal(a, cbmg.sample(x, rng=4))


def test_estimator_unbiased_and_mse_single(cbmg):
    alpha, beta = cbmg.affine_map()
    assert alpha == pytest.approx(0.0, abs=1e-12) and beta == pytest.approx(1 - GAM, rel=1e-10)
    assert cbmg.mse_single == pytest.approx(BlanketMixedGaussian(GAM, SIG, 1).mse_single, rel=1e-9)
    rng = np.random.default_rng(11)
    x = rng.choice(np.linspace(-1, 1, 21), size=100_000)
    est = cbmg.estimate(cbmg.sample(x, rng=12))
    assert est.shape == (1,)
    assert abs(est[0] - x.mean()) <= 5 * math.sqrt(cbmg.mse_single / x.size)


def test_certified_mode_bad_input_names_the_problem(cbmg):
    with pytest.raises(ValueError, match="log_curvature"):  # declared bound below the true 1/SIG^2
        GeneralRandomizer(tbmg, [-1.0, 1.0], (-TR, TR), blanket=tphi, gamma=GAM, cells=64, log_curvature=0.5)
    with pytest.raises(ValueError, match="log_curvature"):
        GeneralRandomizer(tbmg, [-1.0, 1.0], (-TR, TR), blanket=tphi, gamma=GAM, log_curvature=-1.0)
    with pytest.raises(ValueError, match="density"):  # integral over the support 1 + 1e-4 > 1
        GeneralRandomizer(heavy_gauss, [-1.0, 1.0], (-9.0, 9.0), log_curvature=1.0)
    with pytest.raises(ValueError, match="log_curvature"):  # a density vanishing on the support
        GeneralRandomizer(zero_half, [-1.0, 1.0], (0.0, 1.0), log_curvature=10.0)
    with pytest.raises(ValueError, match="log_curvature"):
        GeneralRandomizer(gauss, [-1.0, 1.0], (-20.0, 20.0), blanket=phi0).index_enclosure()
    with pytest.raises(ValueError, match="x"):
        cbmg.sample(np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="x"):
        cbmg.sample(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="messages"):
        cbmg.estimate(np.array([0.1, float("nan")]))
    with pytest.raises(ValueError, match="affine"):
        GeneralRandomizer(quad_mean, [-1.0, 1.0], (0.0, 1.0), blanket=flat, gamma=0.4).estimate([0.5, 0.6])
    with pytest.raises(ValueError, match="inputs"):
        GeneralRandomizer(gauss, [1.0], (-20.0, 20.0)).mse_single


def test_estimate_mode_warns_that_the_accountant_value_is_not_certified(bmg):
    assert not bmg.certified and bmg.error_bounds == {}
    with pytest.warns(UserWarning, match="not certified"):
        bmg.privacy_amplification_laws(0.1)


RT = 0.5  # ramp mechanism on [0, 1]: R_x(y) = 1 + RT x (2y - 1), blanket uniform with gamma = 1 - RT


@njit(cache=True)
def ramp(y, x):
    return 1.0 + RT * x * (2 * y - 1)


class _UniformLawReference:
    """Exact laws of the ramp's L (uniform on an interval) as fine FiniteLaws: cell two-point
    spreads (an upper law in convex order) or cell means (a lower law)."""

    def __init__(self, spread):
        self.spread = spread

    def privacy_amplification_laws(self, eps, adj):
        from sharpdp.shuffle.laws import FiniteLaw

        K, ee = 20000, math.exp(eps)
        e = np.linspace(0, 1, K + 1)
        out = []
        for a, b in ([(1.0, 0.0), (0.0, 1.0)] if adj == "zero_out" else [(1.0, -1.0)]):
            l = (1 + RT * a * (2 * e - 1)) - ee * (1 + RT * b * (2 * e - 1))  # noqa: E741  (0 = ⊥: uniform)
            if self.spread:
                out.append((1 - RT, FiniteLaw(np.r_[l[:-1], l[1:]], np.full(2 * K, 0.5 / K))))
            else:
                out.append((1 - RT, FiniteLaw(0.5 * (l[:-1] + l[1:]), np.full(K, 1.0 / K))))
        return out


@pytest.mark.parametrize("adj,eps", [("zero_out", 0.0455), ("replace", 0.0934)])  # delta ~ 1e-6 at n = 1000
def test_certified_ramp_against_exact_uniform_law(adj, eps):
    # |d^2/dy^2 log R_x| = (2 RT)^2 / R_x^2 <= 4 RT^2 / (1 - RT)^2
    g = GeneralRandomizer(ramp, [-1.0, 1.0], (0.0, 1.0), blanket=flat, gamma=1 - RT, cells=64,
                          log_curvature=4 * RT**2 / (1 - RT) ** 2)
    up = ShuffleAccountant(g, 1000, adj).get_delta(eps)
    lo_ref = ShuffleAccountant(_UniformLawReference(False), 1000, adj).get_delta_bounds(eps)[0]
    up_ref = ShuffleAccountant(_UniformLawReference(True), 1000, adj).get_delta_bounds(eps)[1]
    assert 5e-7 < lo_ref <= up <= 1.01 * up_ref


# ------------------------------------------------------------------ review regressions (certified mode)
ON, CN = 1e6, 3.0  # support far from 0: the one-ulp nudge at a knot is ~1e-10, above CERT_FP
AN = 2.0 / (1.0 + math.expm1(CN) / CN)


@njit(cache=True)
def far_jump(y, x):
    # flat on (ON, ON + 1), then AN/2 e^{CN (y - ON - 1)}: integrates to 1 over (ON, ON + 2)
    t = y - ON - 1.0
    return 0.5 * AN if t < 0.0 else 0.5 * AN * math.exp(CN * t)


def test_certified_nudge_at_a_far_knot_is_covered():
    # the grid evaluates one ulp inside each knot; sup l is reached at the knot ON + 2
    g = GeneralRandomizer(far_jump, [1.0], (ON, ON + 2.0), blanket=half, gamma=0.25, breakpoints=[ON + 1.0],
                          cells=4096, log_curvature=0.0)
    rmax = AN * math.exp(CN)
    for rel in (5e-11, 2e-10):
        eps = math.log(rmax * (1 - rel))
        sup_l = rmax - math.exp(eps)  # true sup of l_eps(y) = R_1(y) / (1/2) - e^eps
        assert max(law.values.max() for _, law in g.privacy_amplification_laws(eps)) >= sup_l
        d = -math.log1p(-rel) / CN  # D_up(n = 1) = E[L_+] in closed form
        true = 0.5 * (rmax * -math.expm1(-CN * d) / CN - math.exp(eps) * d)
        assert 0 < true <= ShuffleAccountant(g, 1).get_delta(eps)
    # coarse grid: the mass enclosures still contain 1
    g = GeneralRandomizer(far_jump, [1.0], (ON, ON + 2.0), blanket=half, gamma=0.25, breakpoints=[ON + 1.0],
                          cells=16, log_curvature=0.0)
    for lo_m, hi_m in g.error_bounds["mass"].values():
        assert lo_m <= 1.0 <= hi_m


@njit(cache=True)
def short_flat(y, x):
    return 1.0 - 1.5e-11  # mass 1 - 1.5e-11 on (0, 1): within the old 1e-11 tolerance of the enclosure


@njit(cache=True)
def heavy_gauss(y, x):
    return (1 + 1e-4) * math.exp(-0.5 * ((y - x) / SIG) ** 2) / (SIG * math.sqrt(2 * math.pi))


@njit(cache=True)
def tiny_blanket(y):
    return 1e-310 if 0.0 < y < 1e-300 else 0.5  # subnormal on a negligible piece: mass still 1


@njit(cache=True)
def tiny_density(y, x):
    return 1e-310 if 0.0 < y < 1e-300 else 0.5


def test_certified_mode_review_bad_inputs():
    # enclosure [1 - 2.5e-11, 1 - 5e-12]: below 1, accepted, the missing mass bound covers 1.5e-11
    eb = GeneralRandomizer(short_flat, [1.0], (0.0, 1.0), cells=4, log_curvature=0.0).error_bounds
    assert 1.5e-11 <= eb["missing_mass"] <= 3e-11
    for big in (1e15, 1e40):  # no grid within the cap reaches kappa <= 1e-6 (1e40 used to overflow)
        with pytest.raises(ValueError, match="log_curvature"):
            GeneralRandomizer(lifted_rr, [1.0], (-1.0, 1.0), blanket=half, gamma=0.5, cells=16, log_curvature=big)
    # subnormal values (relative error up to ~1) on a piece of length 1e-300
    with pytest.raises(ValueError, match="blanket"):
        GeneralRandomizer(lifted_rr, [1.0], (-1.0, 1.0), blanket=tiny_blanket, gamma=0.0, breakpoints=[0.0, 1e-300],
                          log_curvature=0.0)
    with pytest.raises(ValueError, match="density"):
        GeneralRandomizer(tiny_density, [1.0], (-1.0, 1.0), breakpoints=[0.0, 1e-300], log_curvature=0.0)


def test_certified_missing_mass_bound(cbmg):
    eb = cbmg.error_bounds
    assert eb["missing_mass"] == math.nextafter(max(1.0 - lo_m for lo_m, _ in eb["mass"].values()), 2.0)
    # from the finer mass grid: ~ mass_kappa (1e-10), well below the law grid's kappa (1e-8)
    assert 0 < eb["missing_mass"] <= 2 * eb["mass_kappa"] <= 2e-10 * 1.2 and eb["mass_kappa"] < eb["kappa"] / 50


def test_identical_outputs_give_infinite_indices():
    # x has no effect: no pair is informative, both indices are +inf (no division by zero)
    g = GeneralRandomizer(bmg1, [0.5, 0.5], (-15.0, 15.0), blanket=phi0, gamma=GAM, cells=64)
    assert g.chi_lo_for("replace") == math.inf and g.chi_up_for("replace") == math.inf


# ------------------------------------------------------------------ mass outside the support (certified)
CUT = 3.9  # the BMG cut to [-CUT, CUT], NOT renormalised: ~1e-4 of each density lies outside
M_BG = norm.cdf(CUT) - norm.cdf(-CUT)
M_X = GAM * M_BG + (1 - GAM) * (norm.cdf(CUT - 1) - norm.cdf(-CUT - 1))  # x = +-1


class _LawsOnly:
    """The laws without the surcharge: what the accountant reported before the surcharge existed."""

    def __init__(self, g):
        self.g = g

    def privacy_amplification_laws(self, epsilon, adjacency):
        return self.g.privacy_amplification_laws(epsilon, adjacency)


@pytest.fixture(scope="module")
def cut_bmg():
    return GeneralRandomizer(bmg1, [-1.0, 1.0], (-CUT, CUT), blanket=phi0, gamma=GAM, cells=256, log_curvature=1.0)


def test_cut_densities_accepted_with_mass_enclosures_and_surcharge(cut_bmg):
    eb = cut_bmg.error_bounds
    exact = {"input x=-1.0": M_X, "input x=1.0": M_X, "the blanket": M_BG}
    for name, (lo_m, hi_m) in eb["mass"].items():
        assert lo_m <= exact[name] <= hi_m < 1.0
    assert 1 - M_X <= eb["missing_mass"] <= 1 - M_X + 3 * eb["kappa"] and 1 - M_X > 2.7e-4
    for adj in ("zero_out", "replace"):
        assert cut_bmg.privacy_amplification_surcharge(0.3, adj) == eb["missing_mass"]
    with pytest.raises(ValueError, match="adjacency"):
        cut_bmg.privacy_amplification_surcharge(0.3, "swap")


@pytest.mark.parametrize("n,eps", [(100, 0.0907), (1000, 0.0158)])  # delta ~ 1e-6 for the uncut BMG
def test_cut_densities_delta_covers_the_uncut_mechanism(cut_bmg, n, eps):
    # independent reference: the closed-form (lognormal) law of the same BMG on the whole line
    lo_ref, up_ref = ShuffleAccountant(BlanketMixedGaussian(GAM, SIG, 1), n).get_delta_bounds(eps)
    old = ShuffleAccountant(_LawsOnly(cut_bmg), n).get_delta(eps)
    acc = ShuffleAccountant(cut_bmg, n)
    new, rep = acc.get_delta(eps), acc.report(eps)
    # the law alone (the accountant's value before the surcharge; the old mass check refused these
    # densities, but let an outside mass up to ~kappa through uncharged): the tails beyond the cut
    # are lost and delta is under-reported
    assert old < 0.5 * lo_ref
    assert new >= up_ref and new >= old + (1 - M_X)
    assert rep.upper == new and rep.terms["surcharge"] == cut_bmg.error_bounds["missing_mass"]
    assert acc.get_delta_bounds(eps)[1] == new


def test_cut_densities_get_epsilon_covers_the_uncut_mechanism(cut_bmg):
    d = 1e-3
    e = ShuffleAccountant(cut_bmg, 100).get_epsilon(d)
    e_old = ShuffleAccountant(_LawsOnly(cut_bmg), 100).get_epsilon(d)
    e_ref = ShuffleAccountant(BlanketMixedGaussian(GAM, SIG, 1), 100).get_epsilon(d)
    assert e_old < e_ref <= e and ShuffleAccountant(cut_bmg, 100).get_delta(e) <= d
    with pytest.raises(ValueError, match="surcharge"):  # no epsilon brings delta below the outside mass
        ShuffleAccountant(cut_bmg, 100).get_epsilon(2e-4)


def test_full_support_surcharge_is_tiny(cbmg):
    s = cbmg.privacy_amplification_surcharge(0.0907)
    assert 0 < s == cbmg.error_bounds["missing_mass"] <= 1e-9  # absolute; the delta here is ~1e-6
    old = ShuffleAccountant(_LawsOnly(cbmg), 100).report(0.0907)
    new = ShuffleAccountant(cbmg, 100).report(0.0907)
    assert new.upper == math.nextafter(old.upper + s, math.inf) and new.lower == old.lower
    # estimate mode: no surcharge (the figure is an estimate anyway)
    assert GeneralRandomizer(bmg1, [-1.0, 1.0], (-15.0, 15.0), blanket=phi0, gamma=GAM,
                             cells=64).privacy_amplification_surcharge(0.1) == 0.0


@njit("float32(float32, float32)", cache=True)
def tilt32(y, x):  # its own explicit float32 signature: not a float64(float64, float64) function
    return np.float32(0.5) + np.float32(0.25) * x * y


@njit(cache=True)
def tilt32_in_float64(y, x):  # the same float32 arithmetic, as a float64(float64, float64) density
    return float(np.float32(0.5) + np.float32(0.25) * np.float32(x) * np.float32(y))


def test_a_density_with_its_own_signature_gives_the_same_randomizer():
    """Densities are passed to the kernels as float64(float64, float64) functions; one compiled only for
    another signature is still accepted (the table kernel specialised on it), with the same values bit for bit."""
    a = GeneralRandomizer(tilt32, [-1.0, 1.0], (-1.0, 1.0), cells=16)
    b = GeneralRandomizer(tilt32_in_float64, [-1.0, 1.0], (-1.0, 1.0), cells=16)
    assert a.chi_up_for("replace") == b.chi_up_for("replace") > 1.0
    assert a.quad_error == b.quad_error
    # (sampling takes the same fallback; not exercised here: specialising the sampler costs ~1.2 s of CPU)
