"""Session 36, jump36 (docs/accountant_tail.md §49): the jump term from the hat law alone where its bracket is within
JUMP_HAT_SHARE rel_tol (the centroid window skipped), and the jump term's stop-loss weights on octave pieces.

References written independently of the library (tests/test_shuffle_bigjump_review.py's laws from the mechanisms'
likelihood ratios): E phi(A') at n = 2, 3 by Gauss-Legendre quadrature over the users (one- and two-dimensional),
tau(t) = E(L - t)_+ in closed form through the Gaussian shift identity, and a conditional Monte Carlo of D_up (4.5
standard errors) at GaussianRandomizer(0.5), n = 100, eps = 8, where both rules run.
"""

from __future__ import annotations

import numpy as np
import pytest

from _main_floats34 import switch
from test_shuffle_bigjump_review import Z_MC, certified, lib, mc_max, ref

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.jump import jump_term, stop_loss_grid, stop_loss_octaves
from sharpdp.shuffle.accountant.lattice import lattice_laws


def _ephi(law, g, n, T0, B):
    """E phi(A'), phi(a) = tau(max(T0, -a)), A' the sum of n - 1 users' clamp(B_i L_i, -B, T0) (n = 2, 3), by
    quadrature: A' = 0 where no other user is active."""
    v, w = law.nodes(40, 80, at=(-B, T0))
    c = np.clip(v, -B, T0)
    tau = law.stop
    t0 = float(tau(np.array([T0]))[0])
    one = float(np.sum(w * tau(np.maximum(T0, -c))))
    if n == 2:
        return (1 - g) * t0 + g * one
    s2 = (c[:, None] + c[None, :]).ravel()
    two = float(np.sum((w[:, None] * w[None, :]).ravel() * tau(np.maximum(T0, -s2))))
    return (1 - g) ** 2 * t0 + 2 * g * (1 - g) * one + g * g * two


@pytest.mark.parametrize("gamma,sigma0,eps,T0,B,h,n", [(0.2, 0.4, 1.0, 8.0, 8.0, 1 / 16, 2),
                                                       (0.2, 0.4, 1.0, 8.0, 8.0, 1 / 16, 3),
                                                       (0.05, 0.3, 2.0, 16.0, 16.0, 1 / 32, 3)])
def test_hat_first_bracket_holds_the_quadrature(monkeypatch, gamma, sigma0, eps, T0, B, h, n):
    """The hat-first bracket (no centroid window) holds E phi(A') by quadrature, the rule runs, and with the switch
    off the centroid law's bracket (main's) holds it too; the two brackets overlap and the hat-first one meets its
    share of rel_tol."""
    g, law = ref("bmg", gamma, sigma0, eps, "x_bot")
    gl, ll = lib("bmg", gamma, sigma0, eps, "x_bot")
    lat = lattice_laws(ll, gl, h, T0, B)
    ephi = _ephi(law, g, n, T0, B)
    jt = jump_term(ll, gl, n, lat, h, T0, 1e-2, ephi, 1, lower=True, hat=True)
    assert jt.parts.get("hat_first") is True and "N_lower" not in jt.parts
    assert jt.lo <= ephi * (1 + 1e-9) and jt.up >= ephi * (1 - 1e-9), (jt.lo, ephi, jt.up)
    assert jt.up - jt.lo <= limits.JUMP_HAT_SHARE * 1e-2 * jt.lo
    switch(monkeypatch, "JUMP_HAT_FIRST", False)
    jm = jump_term(ll, gl, n, lat, h, T0, 1e-2, ephi, 1, lower=True, hat=True)
    assert "N_lower" in jm.parts and not jm.parts.get("hat_first")
    assert jm.lo <= ephi * (1 + 1e-9) and jm.up >= ephi * (1 - 1e-9)
    assert jm.lo <= jt.up and jt.lo <= jm.up


def test_hat_first_needs_the_hat_values(monkeypatch):
    """Without the hat law's lower value (HAT_LOWER off, session 34's rule) the centroid window always runs."""
    switch(monkeypatch, "HAT_LOWER", False)
    g, law = ref("bmg", 0.2, 0.4, 1.0, "x_bot")
    gl, ll = lib("bmg", 0.2, 0.4, 1.0, "x_bot")
    lat = lattice_laws(ll, gl, 1 / 16, 8.0, 8.0)
    jt = jump_term(ll, gl, 2, lat, 1 / 16, 8.0, 1e-2, 0.35, 1, lower=True, hat=limits.HAT_LOWER)
    assert "N_lower" in jt.parts and not jt.parts.get("hat_first")


@pytest.mark.parametrize("eps,t0,dt,k", [(8.0, 64.0, 0.125, 1 << 20), (4.0, 644.0, 7 / 32, 300000),
                                         (1.0, 3.0, 1 / 64, 1 << 21)])
def test_octave_pieces_hold_the_closed_form(eps, t0, dt, k):
    """stop_loss_octaves's bracket of tau on a long grid (split into pieces: the rule runs) holds the reference
    closed form at every node, its width stays as small relative to tau as one grid's at its first node (1/1024 of
    the step's share), and below the size threshold it is one grid (main's floats, bit for bit)."""
    g, law = ref("gauss", 0, 0.5, eps, "x_bot")
    gl, ll = lib("gauss", 0, 0.5, eps, "x_bot")
    one = int(min(64, t0 / (1024.0 * dt)))
    assert k > limits.STOP_LOSS_OCTAVE_MIN * max(one, 1)  # (the pieces run)
    lo, up = stop_loss_octaves(ll, t0, dt, k)
    t = t0 + np.arange(k) * dt
    ex = law.stop(t)
    floor = 1e-300
    assert np.all(lo <= ex * (1 + 1e-9) + floor), float(np.max((lo - ex) / np.maximum(ex, floor)))
    assert np.all(up >= ex * (1 - 1e-9) - floor), float(np.max((ex - up) / np.maximum(ex, floor)))
    big = ex > 1e-200
    assert float(np.max((up - lo)[big] / ex[big])) <= 1e-5
    # the same values as one grid's at the nodes the pieces evaluate in closed form (each piece's first node)
    lo1, up1 = stop_loss_grid(ll, t0, dt, k)
    assert lo[0] == lo1[0] and up[0] == up1[0]
    small = limits.STOP_LOSS_OCTAVE_MIN * max(one, 1) // 2
    los, ups = stop_loss_octaves(ll, t0, dt, small)
    lo1, up1 = stop_loss_grid(ll, t0, dt, small)
    assert np.array_equal(los, lo1) and np.array_equal(ups, up1)


def test_octaves_off_is_one_grid(monkeypatch):
    """With STOP_LOSS_OCTAVES off, stop_loss_octaves is stop_loss_grid (main's floats)."""
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)
    gl, ll = lib("gauss", 0, 0.5, 8.0, "x_bot")
    a = stop_loss_octaves(ll, 64.0, 0.125, 1 << 20)
    b = stop_loss_grid(ll, 64.0, 0.125, 1 << 20)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_gaussian_randomizer_n100_eps8_monte_carlo(monkeypatch):
    """GaussianRandomizer(0.5), n = 100, eps = 8 (x vs bot): both rules run in its far-tail round; its bracket holds a
    conditional Monte Carlo of D_up (4.5 standard errors), meets rel_tol, and overlaps main's (both switches off)."""
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, lead: §8.19
    import sharpdp.shuffle.accountant.far_tail as ft
    import sharpdp.shuffle.accountant.jump as jm

    seen = {"hat": 0, "oct": 0}
    orig_jt, orig_grid = ft.jump_term, jm.stop_loss_grid

    def spy_jt(*a, **k):
        r = orig_jt(*a, **k)
        seen["hat"] += bool(r.parts.get("hat_first"))
        return r

    def spy_grid(law, t0, dt, k):
        seen["oct"] += 1
        return orig_grid(law, t0, dt, k)

    monkeypatch.setattr(ft, "jump_term", spy_jt)
    monkeypatch.setattr(jm, "stop_loss_grid", spy_grid)
    switch(monkeypatch, "JUMP_HAT_FIRST", True)  # (clears the caches: the round runs here)
    lo, up = certified("gauss", 0, 0.5, 8.0, "x_bot", 100)
    assert seen["hat"] >= 1 and seen["oct"] >= 4, seen
    assert 0 < lo and up - lo <= 1e-2 * lo
    g, law = ref("gauss", 0, 0.5, 8.0, "x_bot")
    mean, se = mc_max(law, g, 100, 20000, np.random.default_rng(36))
    assert up >= mean - Z_MC * se and lo <= mean + Z_MC * se, (lo, up, mean, se)
    switch(monkeypatch, "JUMP_HAT_FIRST", False)
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)
    lo0, up0 = certified("gauss", 0, 0.5, 8.0, "x_bot", 100)
    assert lo0 <= up and lo <= up0
    assert abs(up - up0) <= 1e-6 * up0 and abs(lo - lo0) <= 0.02 * 1e-2 * lo0


def test_body_branch_at_n1e6_holds_main_fine_bracket(monkeypatch):
    """GaussianRandomizer(2), n = 1e6, eps = 0.003052 (x vs bot; get_epsilon's answer at delta 1e-6): a body-dominated
    round (jump term ~1e-12 of a ~1e-6 value) where the hat bracket is within JUMP_HAT_SHARE rel_tol of the body's
    estimate only (the JUMP_HAT_BODY branch runs). Its bracket meets rel_tol and overlaps main's bracket at rel_tol
    1e-3 (every session-36 switch off: a finer certified bracket computed without the rule)."""
    import sharpdp.shuffle.accountant.far_tail as ft
    from sharpdp.shuffle.accountant.driver import certify

    body_only = {"n": 0}
    orig_jt = ft.jump_term

    def spy_jt(*a, **k):
        r = orig_jt(*a, **k)
        rel_tol = a[6]
        body_only["n"] += bool(r.parts.get("hat_first")) and not (0 < r.lo and r.up - r.lo <= 0.02 * rel_tol * r.lo)
        return r

    monkeypatch.setattr(ft, "jump_term", spy_jt)
    switch(monkeypatch, "JUMP_HAT_BODY", True)
    gl, ll = lib("gauss", 0, 2.0, 0.003052, "x_bot")
    r = certify(ll, gl, 10**6, 1e-2, 1)
    assert body_only["n"] >= 1
    assert 0 < r.lower and r.upper - r.lower <= 1e-2 * r.lower
    for name in ("JUMP_HAT_FIRST", "JUMP_HAT_BODY", "STOP_LOSS_OCTAVES"):
        switch(monkeypatch, name, False)
    body_only["n"] = 0
    f = certify(ll, gl, 10**6, 1e-3, 1)
    assert body_only["n"] == 0
    assert r.lower <= f.upper and f.lower <= r.upper, (r.lower, r.upper, f.lower, f.upper)


def test_choose_T_kept_per_law_gives_the_same_float():
    """lattice.choose_T kept per law object (§49.5): the same float as the bisection on a fresh law object."""
    from sharpdp.shuffle.accountant.lattice import choose_T

    for eps in (0.1, 1.0, 8.0):
        _, ll = lib("gauss", 0, 0.5, eps, "x_bot")
        _, fresh = lib("gauss", 0, 0.5, eps, "x_bot")
        for target in (1e-3, 1e-9, 1e-15):
            a = choose_T(ll, target)
            assert choose_T(ll, target) == a
            if fresh is not ll:
                assert choose_T(fresh, target) == a
            assert ll.tail_upper(a) <= target
