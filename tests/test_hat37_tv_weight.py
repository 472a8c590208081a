"""docs/accountant_tail.md §51: the pmf errors' term of the jump term's window sums by the weights' majorant
(`tv_weight.TvWeights`), against brute force: the exact circular nn-fold laws of a computed pmf g and of exact pmfs b
with |g - b| <= eta (every sign pattern's extremes and random ones), nn = 2, 3, 5, windows that fold mass from below
and above; and the jump term's bracket on a window where the rule applies nested in main's (the switch off)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from _main_floats34 import switch
from _folded_laws import conv_pow, fold
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.chernoff import Chernoff
from sharpdp.shuffle.accountant.tv_weight import TvWeights, tv_out, tv_term, tv_weights


def _window(g, eta, k0, h, nn, sa, N):
    m, tau = float(np.sum(g)), float(np.sum(eta))
    tv = nn * tau * (m + tau) ** (nn - 1) * (1 + 1e-12)  # (Lemma 3.6.1, the l1 bound main charges)
    x = (sa + np.arange(N)) * h
    return SimpleNamespace(x=x, tv=tv, a=float(x[0]), b=float(x[-1] + h), N=N)


def _weights(x: np.ndarray, T0: float, c: float):
    """A phi_c-like weight (its stop-loss part decreasing to the left of -T0, c (x + T0) + const to its right), the
    ramp (x + T0)_+, a body-like f(0) + x_+ smoothed and a random non-negative weight (no monotonicity needed)."""
    rng = np.random.default_rng(7)
    tau_T0 = 0.3
    phi = np.where(x > -T0, tau_T0 + c * (x + T0), tau_T0 * np.exp((x + T0) / 3.0))
    ramp = np.maximum(x + T0, 0.0)
    f = 0.2 * np.exp(-np.maximum(-x, 0.0) / 2.0) + np.maximum(x, 0.0)
    rnd = rng.random(x.size) * (1.0 + np.maximum(x, 0.0))
    return [(phi, c, -T0), (ramp, 1.0, -T0), (f, 1.0, 0.0), (rnd, 1.0, 0.0)]


@pytest.mark.parametrize("nn", [2, 3, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bound_against_brute_force(nn, seed):
    rng = np.random.default_rng(seed)
    K, k0, h = 24, -6, 0.5
    g = rng.random(K) ** 3
    g /= g.sum()
    eta = 1e-3 * rng.random(K) * (g + 0.02)
    eta[-3:] *= 20.0  # (errors heavier at the top: the worst place for an increasing weight)
    lin0 = nn * k0
    sa = lin0 + 4  # (the window starts above the sum's bottom: mass folded from below)
    N = max(K, (K - 1) * nn + 1 - 9)  # (and ends below its top: mass folded from above)
    F = _window(g, eta, k0, h, nn, sa, N)
    ch = Chernoff(g, eta, k0, h, nn)
    tw = TvWeights(ch, g, eta, F, nn)
    assert tw.ok
    ga = fold(conv_pow(g, nn), lin0, sa, N)
    patterns = [np.ones(K), -np.ones(K)] + [rng.choice([-1.0, 1.0], K) for _ in range(6)]
    T0 = 2.0
    with limits_on():
        for w, c_w, s0 in _weights(F.x, T0, 0.7):
            bnd = tw.bound(w, c_w, s0)
            assert bnd <= float(w.max()) * F.tv * (1 + 1e-12)
            if nn == 5:
                assert bnd < 0.75 * float(w.max()) * F.tv  # (the new bound itself is what is tested there)
            for sgn in patterns:
                b = np.maximum(g + sgn * eta, 0.0)  # (|g - b| <= eta, b >= 0)
                d = ga - fold(conv_pow(b, nn), lin0, sa, N)
                assert abs(float(np.dot(w, d))) <= bnd * (1 + 1e-9), (nn, seed, c_w, s0)


class limits_on:
    """TV_WEIGHTED on for the block (the module's default)."""

    def __enter__(self):
        self.old = limits.TV_WEIGHTED
        limits.TV_WEIGHTED = True

    def __exit__(self, *exc):
        limits.TV_WEIGHTED = self.old


def test_bound_far_below_max_on_a_wide_window():
    """A sum whose window reaches far above its bulk (the ramp's max at the window's top): the bound is orders of
    magnitude below max_W w · tv, and still above the brute-force difference."""
    rng = np.random.default_rng(3)
    K, k0, h, nn = 40, -30, 1.0, 4
    x1 = (k0 + np.arange(K)) * h
    g = np.exp(-0.5 * ((x1 + 8.0) / 4.0) ** 2)
    g /= g.sum()
    eta = 1e-4 * g + 1e-9
    lin0 = nn * k0
    N = (K - 1) * nn + 1 + 40  # (no folding: a window wider than the sum's support)
    sa = lin0
    F = _window(g, eta, k0, h, nn, sa, N)
    tw = TvWeights(Chernoff(g, eta, k0, h, nn), g, eta, F, nn)
    T0 = 10.0
    ramp = np.maximum(F.x + T0, 0.0)
    with limits_on():
        bnd = tw.bound(ramp, 1.0, -T0)
    assert bnd < 0.05 * float(ramp.max()) * F.tv
    ga = fold(conv_pow(g, nn), lin0, sa, N)
    for sgn in (np.ones(K), -np.ones(K), rng.choice([-1.0, 1.0], K)):
        d = ga - fold(conv_pow(np.maximum(g + sgn * eta, 0.0), nn), lin0, sa, N)
        assert abs(float(np.dot(ramp, d))) <= bnd


def test_switch_off_and_gate_give_main_terms(monkeypatch):
    g = np.full(8, 1 / 8)
    eta = np.full(8, 1e-6)
    F = _window(g, eta, 0, 1.0, 3, 0, 32)
    ch = Chernoff(g, eta, 0, 1.0, 3)
    w = np.linspace(0.0, 5.0, 32)
    switch(monkeypatch, "TV_WEIGHTED", False)
    assert tv_weights(ch, g, eta, F, 3, 1.0, 1e-9) is None
    assert tv_term(None, w, F.tv, 1.0, 0.0) == float(w.max()) * F.tv
    assert tv_out(None, w, F.tv + 0.25, 0.25, 1.0, 0.0) == float(w.max()) * (F.tv + 0.25)
    switch(monkeypatch, "TV_WEIGHTED", True)
    assert tv_weights(ch, g, eta, F, 3, 1.0, 1e3) is None  # (the term below TV_WEIGHTED_SHARE of the scale)
    assert tv_weights(ch, g, eta, F, 3, 1.0, 1e-9) is not None


def test_jump_term_nested_in_main_at_the_same_window(monkeypatch):
    """GaussianRandomizer(2), n = 1e6, eps = 0.001 (a window where the rule applies): every jump term computed in
    the call, recomputed with the switch off on the same lattice and step, contains the rule's bracket."""
    import sharpdp.shuffle.accountant.far_tail as ft
    import sharpdp.shuffle.accountant.jump as jump
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    seen = []
    orig = ft.jump_term

    def rec(*a, **k):
        on = orig(*a, **k)
        old = limits.TV_WEIGHTED
        limits.TV_WEIGHTED = False
        try:
            off = orig(*a, **k)
        finally:
            limits.TV_WEIGHTED = old
        seen.append((on, off))
        return on

    monkeypatch.setattr(ft, "jump_term", rec)
    hits = []
    tw0 = jump.tv_weights
    monkeypatch.setattr(jump, "tv_weights", lambda *a: hits.append(r := tw0(*a)) or r)
    ShuffleAccountant(GaussianRandomizer(2.0, 1), 10**6, "zero_out").get_delta_bounds(0.001)
    assert seen and any(r is not None for r in hits)
    for on, off in seen:
        assert off.lo <= on.lo * (1 + 1e-12) + 1e-300 and on.up <= off.up * (1 + 1e-12)
        assert math.isfinite(on.up)


def test_closed_form_whole_acceptance_at_n_1e9(monkeypatch):
    """docs/accountant_tail.md §51.4: GaussianRandomizer(1), n = 1e9, eps = 0.01 returns stage 0's bracket (gap within
    0.8 rel_tol) instead of stage 3's; it meets the FFT treatment's bracket of main (an independent pipeline,
    tests/test_conc31_one_jump.py's reference) and contains main's closed-form bracket; a loose request (rel_tol 0.3,
    a calibration's probe) and the switch off give main's stages."""
    from sharpdp.shuffle.accountant import concentrated as C
    from sharpdp.shuffle.accountant import far_tail as F
    from sharpdp.shuffle import GaussianRandomizer, clear_caches
    from sharpdp.shuffle.laws import laws_for

    fft = (1.7770211987162097e-13, 1.7791475195748726e-13)  # (main 7b66b43's FFT treatment, rel_tol 1e-2)
    main = (1.777518969386582e-13, 1.7790350485999541e-13)  # (main 4267d7f's get_delta_bounds)
    gamma, law = laws_for(GaussianRandomizer(1.0, 1), 0.01, "zero_out")[0]
    clear_caches()
    new = C.certify(law, float(gamma), 10**9, 1e-2, F.choose_T0)
    assert new is not None and new.lower <= fft[1] and fft[0] <= new.upper
    assert new.upper - new.lower <= limits.CLOSED_WHOLE_ACCEPT * 1e-2 * new.lower
    assert new.upper - new.lower > limits.CLOSED_ACCEPT_TILTED * 1e-2 * new.lower  # (an earlier stage than main's)
    assert new.lower <= main[0] and main[1] <= new.upper
    loose_on = C.certify(law, float(gamma), 10**9, 0.3, F.choose_T0)
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)
    off = C.certify(law, float(gamma), 10**9, 1e-2, F.choose_T0)
    loose_off = C.certify(law, float(gamma), 10**9, 0.3, F.choose_T0)
    assert off is not None and off.upper - off.lower <= limits.CLOSED_ACCEPT_TILTED * 1e-2 * off.lower
    assert loose_on == loose_off
