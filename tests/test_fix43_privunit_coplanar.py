"""PrivUnit's replace-one chi_up search (d >= 3): the coplanar three-cap measure and the checked value
(docs/worst_case_pairs.md §6.1-§6.4).

Independent references: mpmath quadrature of the t-conditioned integrals (the formula of
``sphere.three_cap_measure`` / ``two_cap_measure``, with the kink of the coplanar integrand given to mpmath as a
breakpoint in closed form), Monte Carlo on the sphere (fixed seeds, 5-sigma intervals), and the switch off where the
claim is "unchanged".
"""

import functools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import machine_same, switch
from sharpdp.shuffle import PrivUnit
from sharpdp.shuffle import sphere as S
from sharpdp.shuffle.randomizers.privunit_coplanar import (checked_replace_variance, coplanar_kink_radii,
                                                           coplanar_three_cap_measure)

# the session-42 search's end point for PrivUnit(0.6, -0.3, 3) (docs/worst_case_pairs.md §6.1) and the new one
OLD_END = (2.531595294837195, 1.8757950061711957, math.pi)
NEW_END = (2.5300367613568135, 1.8765742729113863, math.pi)


# ----------------------------------------------------------------------------- mpmath references
def _tail(k, z):
    """P(<U, e> >= z), U uniform on S^{k-1}, k >= 2 (mpmath)."""
    if z <= -1:
        return mp.mpf(1)
    if z >= 1:
        return mp.mpf(0)
    a = mp.mpf(k - 1) / 2
    return mp.betainc(a, a, 0, (1 - z) / 2, regularized=True)


def _density(k, t):
    return (1 - t * t) ** (mp.mpf(k - 3) / 2) / mp.beta(mp.mpf(1) / 2, mp.mpf(k - 1) / 2)


def _quad(f, pts):
    pts = sorted(set(float(p) for p in pts))
    return mp.quad(f, pts)


@functools.lru_cache(maxsize=None)
def mp_two_cap(k, a, b, rho):
    """mu(<U, e1> >= a, <U, e2> >= b), <e1, e2> = rho in (-1, 1), k >= 3, by conditioning on T = <U, e1>."""
    a, b, rho = mp.mpf(a), mp.mpf(b), mp.mpf(rho)
    sr = mp.sqrt(1 - rho * rho)

    def f(t):
        if abs(t) >= 1:  # a null set; tanh-sinh nodes round onto it at the working precision
            return mp.mpf(0)
        return _density(k, t) * _tail(k - 1, (b - rho * t) / (sr * mp.sqrt(1 - t * t)))
    lo = max(a, mp.mpf(-1))
    pts = [lo, 1] + [c for c in (mp.cos(mp.acos(b) + mp.acos(rho)), mp.cos(mp.acos(b) - mp.acos(rho))) if lo < c < 1]
    return _quad(f, pts)


@functools.lru_cache(maxsize=None)
def mp_three_coplanar(k, theta, alpha, beta, psi):
    """The coplanar three-cap measure by the t-integral, its kink (a2 = -a3 for psi = pi, a2 = a3 for psi = 0)
    and the points a_j(t) = +-1 as mpmath breakpoints."""
    th, ca, sa = mp.mpf(theta), mp.cos(alpha), mp.sin(alpha)
    cb, sb = mp.cos(beta), mp.sin(beta)
    sgn = 1 if psi == 0.0 else -1

    def f(t):
        if abs(t) >= 1:  # a null set (see mp_two_cap)
            return mp.mpf(0)
        st = mp.sqrt(1 - t * t)
        a2, a3 = (th - t * ca) / (st * sa), (th - t * cb) / (st * sb)
        inner = _tail(k - 1, max(a2, a3)) if sgn > 0 else max(mp.mpf(0), _tail(k - 1, a2) - _tail(k - 1, -a3))
        return _density(k, t) * inner
    r1 = mp.acos(th)
    pts = [th, 1] + [mp.cos(r1 + x) for x in (alpha, -alpha, beta, -beta)]
    pts.append(th * (1 / sa - sgn / sb) / (ca / sa - sgn * cb / sb))  # the kink: a2 = sgn * a3
    return _quad(f, [p for p in pts if th <= p <= 1])


def mp_variance(pu, alpha, beta, psi):
    """V of PrivUnit.replace_up_variance, every measure from mpmath (coplanar configurations, d >= 3)."""
    k, th = pu.dim, pu.theta
    c_bc = math.cos(alpha) * math.cos(beta) + math.sin(alpha) * math.sin(beta) * math.cos(psi)
    i_ab, i_ac, i_bc = (mp_two_cap(k, th, th, c) for c in (math.cos(alpha), math.cos(beta), c_bc))
    i_abc = mp_three_coplanar(k, th, alpha, beta, psi)
    s = 1 - pu.q
    mu_d = 2 * (s - i_ab)
    mu_dc = i_ac + i_bc - 2 * i_abc
    return float((pu.h - pu.l) ** 2 * ((mu_d - mu_dc) / pu.l + mu_dc / pu.h))


@pytest.mark.parametrize("k,theta,cfg", [
    (3, -0.3, OLD_END), (3, -0.3, NEW_END), (4, -0.3, OLD_END), (3, 0.2, (0.7, 0.9, 0.0)),
    (5, -0.5, (1.0, 2.0, 0.0)), (3, -0.1, (2.0, 2.4, math.pi)), (6, 0.1, (0.5, 0.8, math.pi)),
])
def test_coplanar_measure_against_mpmath(k, theta, cfg):
    ref = mp_three_coplanar(k, theta, *cfg)
    got = coplanar_three_cap_measure(k, theta, *cfg)
    assert got == pytest.approx(float(ref), rel=1e-11, abs=1e-15)


def test_old_end_point_is_a_kink_of_the_t_integrand():
    """The configuration of §6.1: the t-integrand has its kink strictly inside (theta, 1), at a point that is none
    of the a_j(t) = +-1 cuts, and the rule here agrees with mpmath where the t-rule with default nodes does not."""
    k, th = 3, -0.3
    alpha, beta, _ = OLD_END
    ca, sa, cb, sb = math.cos(alpha), math.sin(alpha), math.cos(beta), math.sin(beta)
    t_kink = th * (1 / sa + 1 / sb) / (ca / sa + cb / sb)
    r1 = math.acos(th)
    assert th < t_kink < 1 and min(abs(t_kink - math.cos(r1 + s * x)) for s in (1, -1) for x in (alpha, beta)) > 0.1
    ref = float(mp_three_coplanar(k, th, *OLD_END))
    assert coplanar_three_cap_measure(k, th, *OLD_END) == pytest.approx(ref, rel=1e-11)
    # the same V from mpmath's pieces: replace_up_variance with the switch on is within the documented 1e-7 of it
    # at the default nodes (here 7.6e-9, from the two-cap measure of the nearly tangent caps' complements,
    # docs/worst_case_pairs.md §6.3) and within 1e-10 with doubled nodes
    pu = PrivUnit(0.6, th, 3)
    v_ref = mp_variance(pu, *OLD_END)
    assert pu.replace_up_variance(*OLD_END) == pytest.approx(v_ref, rel=1e-7)
    assert pu.replace_up_variance(*OLD_END, nodes=2 * S._cap_nodes(3, None)) == pytest.approx(v_ref, rel=1e-10)


def test_kink_radii_are_touchings():
    """At each radius of coplanar_kink_radii two arcs of half-width arccos(theta / r) share an end point."""
    for theta, cen in ((-0.3, (0.0, 2.53, -1.8766)), (0.25, (0.0, 1.0, -2.0)), (-0.6, (0.0, 0.4, 3.0))):
        radii = coplanar_kink_radii(theta, cen)
        assert radii and all(abs(theta) < r < 1 for r in radii)
        for r in radii:
            w = math.acos(theta / r)
            ends = [(c + s * w) % (2 * math.pi) for c in cen for s in (1, -1)]
            gaps = [min(abs(x - y), 2 * math.pi - abs(x - y)) for i, x in enumerate(ends) for y in ends[i + 1:]]
            assert min(gaps) < 1e-12


@pytest.mark.parametrize("k,theta", [(3, -0.3), (4, 0.2), (7, -0.1)])
def test_coplanar_measure_against_monte_carlo(k, theta):
    rng = np.random.default_rng(4300 + k)
    n = 300_000
    u = rng.standard_normal((n, k))
    u /= np.linalg.norm(u, axis=1)[:, None]
    for _ in range(4):
        alpha, beta = rng.uniform(0.05, math.pi - 0.05, 2)
        psi = float(rng.choice([0.0, math.pi]))
        v = np.zeros((3, k))
        v[0, 0] = 1.0
        v[1, :2] = math.cos(alpha), math.sin(alpha)
        v[2, :2] = math.cos(beta), math.sin(beta) * math.cos(psi)
        p_hat = float(np.all(u @ v.T >= theta, axis=1).mean())
        se = math.sqrt(max(p_hat * (1 - p_hat), 1e-6) / n)
        assert abs(coplanar_three_cap_measure(k, theta, alpha, beta, psi) - p_hat) <= 5 * se


# ----------------------------------------------------------------------------- the search's reported value
def test_search_value_against_mpmath():
    """PrivUnit(0.6, -0.3, 3): the reported V is the mpmath V of the reported configuration (1e-9), so the upper end
    1 / sqrt(V (1 - 1e-6)) of replace_chi_up_bounds is above 1 / sqrt(V(cfg)) >= chi_up; and it beats the session-42
    end point's true V (that search was led by a quadrature error)."""
    pu = PrivUnit(0.6, -0.3, 3)
    V, cfg, method = pu.replace_up_configuration()
    assert method == "search" and cfg[2] == math.pi
    v_ref = mp_variance(pu, *cfg)
    assert V == pytest.approx(v_ref, rel=1e-9)
    lo, up = pu.replace_chi_up_bounds()
    assert lo <= 1 / math.sqrt(v_ref) <= up
    assert V >= mp_variance(pu, *OLD_END)


def test_switch_off_gives_main_elsewhere(monkeypatch):
    """Where the session-42 search's quadrature was converged the bracket moves by rounding only (1e-10)."""
    for args in ((0.2, -0.2, 3), (0.6, 0.3, 3), (0.7, 0.5, 3)):
        new = PrivUnit(*args).replace_chi_up_bounds()
        with monkeypatch.context() as m:
            switch(m, "PRIVUNIT_COPLANAR_CHECKED", False)
            old = PrivUnit(*args).replace_chi_up_bounds()
        assert machine_same(new, old)


def test_checked_variance_raises_when_unsettled(monkeypatch):
    """The t-rule at the old end point (switch off) changes by 1e-4 relative under doubling: a clear error."""
    switch(monkeypatch, "SPHERE44_KINK_CUT", False)  # (**) session 44, g44: docs/accountant_tail.md §67.4
    switch(monkeypatch, "PRIVUNIT_COPLANAR_CHECKED", False)
    pu = PrivUnit(0.6, -0.3, 3)
    with pytest.raises(RuntimeError, match="did not settle"):
        checked_replace_variance(pu, OLD_END, max_doublings=1)


def test_unsettled_configuration_is_not_reported(monkeypatch):
    """_checked_best reports the best settled configuration and skips one whose rule does not settle (the old end
    point under the t-rule, switch off); with none settled it raises."""
    switch(monkeypatch, "SPHERE44_KINK_CUT", False)  # (**) session 44, g44: docs/accountant_tail.md §67.4
    switch(monkeypatch, "PRIVUNIT_COPLANAR_CHECKED", False)
    pu = PrivUnit(0.6, -0.3, 3)
    other = (2.0, 2.2, 1.0)
    v, c = pu._checked_best([OLD_END, other])
    assert c == other and v == pytest.approx(pu.replace_up_variance(*other), rel=1e-8)
    with pytest.raises(RuntimeError, match="did not settle"):
        pu._checked_best([OLD_END])


@settings(max_examples=6, deadline=None)
@given(st.floats(0.15, 0.85), st.floats(-0.6, 0.6), st.sampled_from([3, 4]))
def test_search_value_is_checked(p, theta, d):
    """Over (p, theta, d): the reported V is stable under the doubled rule (1e-8), at most the proved bound B,
    and at least V at the antipodal-pair configurations (pi, beta, pi) the search must not miss."""
    try:
        pu = PrivUnit(p, theta, d)
    except ValueError:
        return
    V, cfg, method = pu.replace_up_configuration()
    assert V <= pu._replace_up_bound() * (1 + 1e-12)
    if method == "search":
        v2 = pu.replace_up_variance(*cfg, nodes=2 * S._cap_nodes(d, None))
        assert v2 == pytest.approx(V, rel=1e-8)
    for beta in (0.3, 1.0, 2.0):
        assert pu.replace_up_variance(math.pi, beta, math.pi) <= V * (1 + 1e-7)
