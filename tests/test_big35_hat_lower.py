"""docs/accountant_tail.md §45 (session 35, big35): the far-tail round's lower values from the hat law alone.

References independent of the code under test: (1) the one-sided sub-Gaussian stop-loss of §45.2 against the exact
stop-loss of a normal law and of sums of two-point rounding errors (enumerated); (2) Lemma 45.1 with §45.2's bound
against the exact hat excess E w(A^) - E w(A') of sums of nn = 1..4 users, each active with probability gamma and then
uniform on an interval (Irwin-Hall closed forms for A', the hat pmf convolved exactly for A^); (3) the
GaussianRandomizer(0.5), n = 1e8 cell: the bracket with HAT_LOWER meets rel_tol and overlaps main's certified bracket
at rel_tol 1e-3 (docs/accountant_tail.md §37.3's table), and HAT_LOWER = False restores main's floats.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest
from scipy import stats

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import hat_lower
from sharpdp.shuffle.round_cache import clear_caches

from _main_floats34 import switch  # noqa: E402


@pytest.mark.parametrize("v", [0.3, 1.0, 17.0])
def test_subgauss_stop_loss_above_the_normal_one(v):
    t = np.linspace(0.0, 8.0 * math.sqrt(v), 200)
    sd = math.sqrt(v)
    exact = sd * stats.norm.pdf(t / sd) - t * stats.norm.sf(t / sd)  # E(Y - t)_+, Y ~ N(0, v)
    assert np.all(hat_lower._stop_loss_subgauss(t, v) >= exact)
    assert np.all(np.diff(hat_lower._stop_loss_subgauss(t, v)) <= 0.0)


@pytest.mark.parametrize("k", [1, 3, 6])
def test_subgauss_stop_loss_above_two_point_sums(k):
    # Y = sum of k rounding errors of values at fraction f of a cell of width h (mean 0, range h): enumerated exactly
    rng = np.random.default_rng(3)
    h = 0.7
    for _ in range(5):
        f = rng.uniform(0.0, 1.0, k)
        vals, probs = np.zeros(1), np.ones(1)
        for fi in f:  # up (h (1 - f)) with probability f, down (-h f) with probability 1 - f
            vals = np.concatenate((vals + h * (1 - fi), vals - h * fi))
            probs = np.concatenate((probs * fi, probs * (1 - fi)))
        t = np.linspace(0.0, k * h, 50)
        for s in (+1, -1):
            exact = np.array([np.sum(probs * np.maximum(s * vals - ti, 0.0)) for ti in t])
            assert np.all(hat_lower._stop_loss_subgauss(t, k * h * h / 4) >= exact - 1e-15)


def _irwin_hall_stop_loss(k: int, t: float) -> float:
    """E(U_1 + ... + U_k - t)_+ for i.i.d. uniform(0, 1) (k >= 0): k/2 - t + E(t - S)_+, E(t - S)_+ = sum_j (-1)^j
    C(k, j) (t - j)_+^{k+1} / (k + 1)!."""
    if k == 0:
        return max(-t, 0.0)
    below = sum((-1) ** j * math.comb(k, j) * max(t - j, 0.0) ** (k + 1) for j in range(k + 1)) / math.factorial(k + 1)
    return k / 2.0 - t + below


def _exact_pair(nn: int, gamma: float, lo: float, hi: float, h: float, z: float):
    """(E(A' - z)_+, the hat sum's pmf on its nodes, the nodes): A' the sum of nn users, each 0 with probability
    1 - gamma, else uniform on [lo, hi] (lo, hi, 0 lattice nodes of step h)."""
    width = hi - lo
    ea = 0.0
    for k in range(nn + 1):
        pk = math.comb(nn, k) * gamma ** k * (1 - gamma) ** (nn - k)
        # S = k lo + width * IH_k: E(S - z)_+ = width * E(IH_k - (z - k lo) / width)_+
        ea += pk * width * _irwin_hall_stop_loss(k, (z - k * lo) / width) if k else pk * max(-z, 0.0)
    # the per-user hat law: each cell of the uniform part sends half its mass to each end
    k_lo, k_hi = round(lo / h), round(hi / h)
    base = min(k_lo, 0)
    g = np.zeros(max(k_hi, 0) - base + 1)
    cell = gamma * h / width
    for j in range(k_lo, k_hi):
        g[j - base] += cell / 2
        g[j + 1 - base] += cell / 2
    g[-base] += 1 - gamma
    q = np.ones(1)
    for _ in range(nn):
        q = np.convolve(q, g)
    x = (nn * base + np.arange(q.size)) * h
    return ea, q, x


@pytest.mark.parametrize("nn,gamma,lo,hi,h", [(1, 0.5, -1.0, 2.0, 0.5), (2, 0.3, -1.5, 1.0, 0.5), (3, 0.7, -1.0, 1.0, 0.25),
                                              (4, 0.5, -2.0, 1.0, 1.0)])
def test_coupling_cost_bounds_the_exact_hat_excess(nn, gamma, lo, hi, h):
    for z in np.linspace(nn * lo - 0.3, nn * hi + 0.3, 23):
        ea, q, x = _exact_pair(nn, gamma, lo, hi, h, float(z))
        ehat = float(np.sum(q * np.maximum(x - z, 0.0)))
        excess = ehat - ea
        assert excess >= -1e-12  # the hat law is above in the convex order
        cost = hat_lower.coupling_cost(x, q, 0.0, 0.0, h, nn, gamma, [(1.0, float(z), float(z))])
        assert excess <= cost + 1e-12
        # a range containing z bounds at least as much (its supremum)
        assert cost <= hat_lower.coupling_cost(x, q, 0.0, 0.0, h, nn, gamma, [(1.0, float(z) - 0.2, float(z) + 0.3)]) \
            + 1e-15
        # never above the bound without the concentration of A' (psi(0) = sqrt(v*) / 2, v* = nn h^2 / 4)
        assert cost <= math.sqrt(nn) * h / 4 * (1 + 1e-6)


def test_rounding_shift_is_tiny_for_the_gaussian_law():
    from sharpdp.shuffle.laws import laws_for
    gamma, law = laws_for(GaussianRandomizer(0.5, 1), 0.1, "zero_out")[0]
    d = hat_lower.rounding_shift(law.shifted(up=True), gamma, 3.375, 1024, 64)
    assert 0.0 < d < 1e-9 * gamma


def _bounds(sigma0: float, n: int, eps: float) -> tuple[float, float]:
    clear_caches()
    return ShuffleAccountant(GaussianRandomizer(sigma0, 1), n).get_delta_bounds(eps)


def test_gaussian_n1e8_cell_holds_main_reference(monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    lo, up = _bounds(0.5, 10**8, 0.1)
    assert 0.0 < lo and (up - lo) / lo <= 1e-2
    # main's certified bracket at rel_tol 1e-3 (docs/accountant_tail.md §37.3): both certified, so they overlap
    ref_lo, ref_up = 0.012408594180771402, 0.012429177243461997
    assert lo <= ref_up and ref_lo <= up
    switch(monkeypatch, "HAT_LOWER", False)
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    assert _bounds(0.5, 10**8, 0.1) == (0.012408594180771402, 0.01243439530363904)  # main's floats (f69257b)


@pytest.mark.parametrize("sigma0,n,eps,main", [(0.5, 10**6, 0.1, (0.10322597301268595, 0.10337018073009843)),
                                               (0.5, 10**6, 1.0, (0.03623838751013171, 0.03627568750759056))])
def test_n1e6_cells_overlap_main_and_switch_restores_it(monkeypatch, sigma0, n, eps, main):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    lo, up = _bounds(sigma0, n, eps)
    assert 0.0 < lo and (up - lo) / lo <= 1e-2 and lo <= main[1] and main[0] <= up
    switch(monkeypatch, "HAT_LOWER", False)
    assert _bounds(sigma0, n, eps) == main


def test_finer_requests_overlap_session30s_brackets():
    """With HAT_LOWER: every rel_tol 1e-3 bracket of tests/test_review_rev31_tail.py's cells overlaps main's (two
    certified brackets of one value; that file's own test pins main's floats with the switch off)."""
    import test_review_rev31_tail as r31
    bad = []
    for cell, (rlo, rup) in r31.REF3.items():
        lo, up = r31._bracket(*cell, 1e-3)
        if not (0.0 <= lo <= up and up >= rlo and lo <= rup):
            bad.append((cell, lo, up, rlo, rup))
    assert not bad, bad


def test_accountant_brackets_overlap_main_and_meet_rel_tol():
    """With HAT_LOWER: tests/test_review_rev_cells.py's cells overlap main's certified brackets and meet rel_tol 1e-2
    where main's did (that file's own test pins main's floats with the switch off)."""
    from test_review_rev_cells import cell_accountant, main_rows
    for kind, p1, p2, n, eps, lo_m, up_m, _ in main_rows():
        lo, up = (float(x) for x in cell_accountant(kind, p1, p2, n).get_delta_bounds(eps))
        assert lo <= up_m and lo_m <= up, (kind, p1, p2, n, eps)
        if lo_m > 0 and up_m - lo_m <= 1e-2 * lo_m:
            assert 0 < lo and up - lo <= 1e-2 * lo, (kind, p1, p2, n, eps, lo, up)
