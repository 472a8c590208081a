"""Session 39, hat39: the jump term's rounding cost from the density of L's tail (docs/accountant_tail.md §55).

References: (1) L's density by finite differences of its interval probabilities (``prob_above``), not by the density
formula, for Lemma 55.1's convexity and slope; (2) exact binomial sums of two-point rounding errors for the tail
moments of Y; (3) mpmath quadrature of step (i)'s z-integral; (4) one user (n - 1 = 1), where Lemma 45.1's excess
E phi_c(A^) - E phi_c(A') is a one-dimensional integral, computed by quadrature; (5) the hat window at a step h/4 (a
finer grid: its E phi_c is an upper value of E phi_c(A'), so E phi_c(A^_h) minus it is a lower value of the true cost);
(6) main's floats (72b04806) and rel_tol-1e-3 brackets, hard-coded, which the moved brackets must overlap.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import hat_density, jump
from sharpdp.shuffle.accountant.hat_density import _tail_second, convex_tail, density_cost
from sharpdp.shuffle.laws import laws_for

BMG = (0.020184369008040444, 0.4564324504091077)


def _heavy_law(kind: str, eps: float):
    """The law with a heavy form among the zero-out laws of a cell (GaussianRandomizer(1) or the BMG above), or
    (kind "ln") the lognormal law -1 + e^{0.3 V - 0.045} (r = 0.3: y* = 2.87, convex only beyond v = 0.56)."""
    if kind == "ln":
        from sharpdp.shuffle.laws.lognormal import LognormalLaw
        return 1.0, LognormalLaw(-1.0, 1.0, 0.3)
    r = GaussianRandomizer(1.0, 1) if kind == "g" else BlanketMixedGaussian(BMG[0], BMG[1], 1)
    for gamma, law in laws_for(r, eps, "zero_out"):
        if law.heavy_form() is not None:
            return float(gamma), law
    raise AssertionError("no heavy-form law")


def _fd_density(law, s: np.ndarray, d: float) -> np.ndarray:
    """L's mean density over [s, s + d]: (P(L >= s) - P(L >= s + d)) / d, from its interval probabilities (error bounds
    ignored: tiny); for a non-increasing density at most its value at s."""
    return np.array([(law.prob_above(x)[0] - law.prob_above(x + d)[0]) / d for x in s])


@pytest.mark.parametrize("kind,eps,T0", [("g", 0.01, 69440.0), ("g", 0.001, 23520.0), ("b", 0.1, 74592.0),
                                         ("b", 0.1, 4000.0), ("g", 0.01, 1e-3), ("b", 0.1, 0.5), ("ln", 0.0, 0.6),
                                         ("ln", 0.0, 2.0)])
def test_convex_tail_matches_finite_differences(kind, eps, T0):
    """Where convex_tail certifies p convex and non-increasing on [T0, inf): p_max >= p(T0), sigma >= |p'(T0)|, and
    the finite-difference density is non-increasing with non-negative second differences on [T0, 40 T0]."""
    _, law = _heavy_law(kind, eps)
    ct = convex_tail(law, T0)
    assert ct is not None
    p_max, sig = ct
    d = 1e-3 * max(T0, 1.0)
    s = T0 + (np.geomspace(1.0, 40.0, 60) - 1.0) * max(T0, 1.0)
    p = _fd_density(law, s, d)
    assert p_max >= p[0] * (1 - 1e-6)
    # (convex and non-increasing: the mean densities' drop over one d is at most |p'(T0)| d)
    slope = (_fd_density(law, [T0], d)[0] - _fd_density(law, [T0 + d], d)[0]) / d
    assert sig >= slope * (1 - 1e-6)
    assert np.all(np.diff(p) <= 1e-9 * p[0])
    u = T0 + np.linspace(0.0, 2.0, 41) * max(T0, 1.0)
    pu = _fd_density(law, u, d)
    assert np.all(np.diff(pu, 2) >= -1e-6 * pu[0])


def test_convex_tail_refuses_laws_and_clamps_outside_its_conditions():
    """No heavy form (a finite law), a clamp at or below the location or the atoms, a clamp below the inflection
    (GaussianRandomizer(1)'s law at T0 = 1: y(T0) < y*): None."""
    from sharpdp.shuffle.laws import FiniteLaw
    assert convex_tail(FiniteLaw(np.array([-1.0, 2.0]), np.array([0.5, 0.5])), 1.0) is None
    _, law = _heavy_law("g", 0.01)
    hf = law.heavy_form()
    assert convex_tail(law, min(hf.a, hf.atom) - 1.0) is None
    _, ln = _heavy_law("ln", 0.0)
    assert convex_tail(ln, 0.05) is None and convex_tail(ln, 0.6) is not None
    d = 1e-3
    u = 0.05 + np.linspace(0.0, 0.2, 21)
    assert np.any(np.diff(_fd_density(ln, u, d), 2) < 0)  # (it is not convex there: the refusal is needed)


@pytest.mark.parametrize("N,p,h", [(50, 0.5, 1.0), (400, 0.5, 0.5), (400, 0.1, 1.0), (2000, 0.3, 2.0)])
def test_tail_second_bounds_exact_two_point_sums(N, p, h):
    """Y = sum of N independent two-point errors (1 - p) h w.p. p, -p h w.p. 1 - p (mean 0, interval length h): the
    exact E[Y^2 1{|Y| > r}] from the binomial law is below _tail_second at v = N h^2 / 4, for radii 0.5 - 12 sd."""
    v = N * h * h / 4.0
    k = np.arange(N + 1)
    pmf = stats.binom.pmf(k, N, p)
    y = k * h - N * p * h
    r = np.array(hat_density.RADII) * math.sqrt(v)
    g = _tail_second(r, v, h)
    exact = np.array([float(np.sum(pmf * y * y * (np.abs(y) > rr))) for rr in r])
    assert np.all(exact <= g * (1 + 1e-9) + 1e-300), (exact, g)
    assert np.all(np.diff(g) <= 0) and g[0] <= v * (1 + 1e-9)


@pytest.mark.parametrize("a,y", [(-80000.0, 3000.0), (-80000.0, -3000.0), (-70500.0, 2500.0), (-70500.0, -900.0),
                                 (-200000.0, 6000.0), (-69000.0, -2000.0)])
def test_step_i_integral_below_y2_times_the_density_sup(a, y):
    """Lemma 55.2 (i): int (s(a, z) y - |a - z|)_+ p(-z) 1{z < -T0} dz <= (y^2 / 2) P(a + |y|), the integral by
    mpmath quadrature with the density from prob_above's central differences (a formula-free reference)."""
    _, law = _heavy_law("g", 0.01)
    T0 = 69440.0

    def dens(s):
        d = 1e-4 * s
        return (law.prob_above(s - d)[0] - law.prob_above(s + d)[0]) / (2 * d)

    if y > 0:
        lo, hi = a, min(a + y, -T0)
        f = (lambda z: (y - (z - a)) * dens(-z))
    else:
        lo, hi = a - abs(y), min(a, -T0)
        f = (lambda z: (abs(y) - (a - z)) * dens(-z))
    with mp.workdps(20):
        val = float(mp.quad(lambda z: f(float(z)), [lo, hi])) if hi > lo else 0.0
    P = float(law.density_up([max(-a - abs(y), T0)])[0])
    assert val <= 0.5 * y * y * P * (1 + 1e-6)


@pytest.mark.parametrize("h,center,width", [(400.0, -90000.0, 30000.0), (1000.0, -75000.0, 20000.0),
                                            (250.0, -150000.0, 60000.0)])
def test_density_cost_bounds_the_exact_one_user_excess(h, center, width):
    """One other user (nn = 1, gamma = 1) whose value A' has the uniform density on [center - width, center + width]
    (nodes of step h at the ends): the exact hat law of A' (q_k = E Lambda_h(A' - x_k), Lemma 45.1's Y its rounding)
    and the exact E phi_c(A^) - E phi_c(A') (trapezoid on a grid 1/64 of h, phi_c from the law's stop-loss) stay below
    density_cost, with q exact (err_q = tv = miss = 0) and no mass outside the window."""
    _, law = _heavy_law("g", 0.01)
    T0 = 69440.0
    c = float(law.prob_above_up([T0])[0])
    lo, hi = center - width, center + width
    x = np.arange(lo, hi + h / 2, h)
    # hat masses of the uniform law: node k gets int Lambda_h(a - x_k) da / (2 width)
    q = np.full(x.size, h / (2 * width))
    q[0] = q[-1] = h / (4 * width)
    tau_T0 = float(law.stop_loss([T0])[0][0])

    def phi(a):
        a = np.asarray(a, dtype=float)
        out = tau_T0 + c * (a + T0)
        m = a <= -T0
        if np.any(m):
            out[m] = law.stop_loss(-a[m])[0]
        return out

    fine = np.linspace(lo, hi, int(round(2 * width / h)) * 64 + 1)
    e_true = float(np.trapezoid(phi(fine), fine)) / (2 * width)
    e_hat = float(np.sum(q * phi(x)))
    excess = e_hat - e_true
    cost = density_cost(x, q, 0.0, 0.0, 0.0, h, 1, 1.0, law, c, T0, 0.0, 0.0, 0.0, float(x[-1]) + h,
                        lambda w: (float(np.sum(w * q)), 1e-12 * float(np.sum(w * q))))
    assert 0.0 <= excess * (1 - 1e-6) <= cost, (excess, cost)


def _hat_window(kind: str, n: int, eps: float, h: float, T0: float):
    """(law, gamma, lattice, window, Chernoff) of the jump term's hat window at step h and clamp T0."""
    from sharpdp.shuffle.accountant.chernoff import Chernoff
    from sharpdp.shuffle.accountant.far_tail_steps import laws as lat_laws
    gamma, law = _heavy_law(kind, eps)
    law = law.shifted(up=True)
    B = max(math.ceil(max(-law.support()[0], 0.0) / h), 1) * h
    lat = lat_laws(law, gamma, h, T0, B, lower=False)
    return law, gamma, lat, B, Chernoff(lat.g, lat.eta, lat.k0, h, n - 1)


@pytest.mark.parametrize("kind,n,eps,h,T0", [("g", 10**8, 0.01, 2.1875, 69440.0)])
def test_cost_above_the_finer_grids_lower_value_of_the_true_cost(kind, n, eps, h, T0):
    """The true cost E phi_c(A^_h) - E phi_c(A') is at least E phi_c(A^_h) - E phi_c(A^_{h/4}) (the finer hat sum is
    above A' in the convex order); the jump term's window values at both steps (their round-off and TV terms taken
    against it) and the new cost: cost >= that lower value, and the new lower value of the jump term is below the
    finer step's upper value."""
    clear_caches()
    lo_h = {}
    for hh in (h, h / 4):
        law, gamma, lat, _, _ = _hat_window(kind, n, eps, hh, T0)
        jt = jump.jump_term(law, gamma, n, lat, hh, T0, 1e-2, 4.3e-10, 1, lower=True, hat=True)
        lo_h[hh] = jt
    coarse, fine = lo_h[h], lo_h[h / 4]
    assert coarse.lo <= fine.up and fine.lo <= coarse.up  # (the new lower value below the finer step's upper value)
    # the true cost is at least E phi_c(A^_h) - E phi_c(A^_{h/4}) (both hat sums' values from their windows): the
    # lower value E phi_c(A^_h) - cost - c ramp can then be at most E phi_c(A^_{h/4}) - c ramp, which the finer
    # step's upper value (phi_hat_up - c ramp_jensen, ramp_jensen <= ramp) exceeds
    assert coarse.parts["phi_hat_up"] >= fine.parts["phi_hat_up"] * (1 - 1e-6)
    assert coarse.lo >= 0.995 * coarse.up  # (the rule's effect: within 0.5 % at the coarse step)


# main's (72b04806) floats of get_delta_bounds (zero-out, rel_tol 1e-2) and its rel_tol-1e-3 brackets
MAIN = {("g", 10**8, 0.01): ((4.308517807595902e-10, 4.3140914909097695e-10),
                             (4.308484595359791e-10, 4.3113775089630213e-10)),
        ("b", 10**8, 0.1): ((9.958533965538496e-07, 9.968707833533103e-07),
                            (9.963538102512599e-07, 9.965270681330522e-07))}


def _acc(kind: str, n: int) -> ShuffleAccountant:
    r = GaussianRandomizer(1.0, 1) if kind == "g" else BlanketMixedGaussian(BMG[0], BMG[1], 1)
    return ShuffleAccountant(r, n, "zero_out")


@pytest.mark.parametrize("cell", list(MAIN))
def test_switch_off_restores_main_floats(monkeypatch, cell):
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    kind, n, eps = cell
    switch(monkeypatch, "HAT_DENSITY", False)
    switch(monkeypatch, "COARSE_KEEP", False)  # (**) session 39, lead: merged with §54 (and §54.5's gate), main's floats need it off too
    clear_caches()
    assert _acc(kind, n).get_delta_bounds(eps) == MAIN[cell][0]


@pytest.mark.parametrize("cell", list(MAIN))
def test_moved_brackets_meet_rel_tol_and_overlap_main(cell):
    kind, n, eps = cell
    clear_caches()
    lo, up = _acc(kind, n).get_delta_bounds(eps)
    assert 0 < lo <= up and (up - lo) <= 1e-2 * lo
    for m_lo, m_up in MAIN[cell]:  # (main's default and rel_tol-1e-3 brackets: certified by the engine's passes)
        assert lo <= m_up and m_lo <= up
