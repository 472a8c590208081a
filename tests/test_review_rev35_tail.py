"""Review rev35 (session 35) of big35's far-tail rule (docs/accountant_tail.md §45: lower values from the hat lattice
law alone, less the rounding's second-order cost).

References the builder did not use: (1) Lemma 45.1 + §45.2's coupling cost against the exact hat excess of sums of
users whose clamped values are *atoms* at chosen fractions of a cell (mid-cell atoms make Hoeffding's variance proxy
tight; atoms summing exactly onto the kink z make |A' - z| = 0 carry mass), enumerated exactly on a grid of h/8;
(2) the Gaussian far-tail cells against main's certified brackets at rel_tol 1e-3 (computed on main f69257b by
/work/venv/main, session 35, hard-coded here: both certified, so they must overlap) and against the single-big-jump
quadrature estimate of tests/_review28_gauss_reference.py where the body is light (an estimate: a 2e-3 relative
margin). On main the module hat_lower does not exist: the coupling tests are skipped, the cell tests run main's
floats (which must hold the same references).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

try:
    from sharpdp.shuffle.accountant import hat_lower
except ImportError:  # main: no §45
    hat_lower = None

needs_hat = pytest.mark.skipif(hat_lower is None, reason="docs/accountant_tail.md §45 (hat_lower) not on this branch")


def _atom_sum(nn: int, gamma: float, vals: np.ndarray, probs: np.ndarray, h: float, fine: int = 8):
    """Exact laws of A' (the sum of nn users, each 0 w.p. 1 - gamma, else an atom of ``vals`` (multiples of h/fine)
    w.p. ``probs``) and of its hat rounding A^ on the lattice hZ (each value at fraction f of its cell goes up w.p. f).
    Returns (grid of A' (step h/fine), pmf of A', nodes of A^, pmf of A^)."""
    k = np.round(np.asarray(vals) / (h / fine)).astype(int)
    assert np.allclose(k * (h / fine), vals)
    lo = min(int(k.min()), 0)
    one = np.zeros(int(k.max()) - lo + 1)
    one[-lo] += 1.0 - gamma
    for kk, p in zip(k, probs):
        one[kk - lo] += gamma * p
    # hat: per user, on the nodes of hZ
    kn_lo = math.floor(lo / fine)
    hat = np.zeros(math.ceil((int(k.max())) / fine) - kn_lo + 2)
    for i, p in enumerate(one):
        if p == 0.0:
            continue
        kk = i + lo
        j, r = divmod(kk, fine)
        f = r / fine
        hat[j - kn_lo] += p * (1 - f)
        if f > 0:
            hat[j + 1 - kn_lo] += p * f
    a, q = np.ones(1), np.ones(1)
    for _ in range(nn):
        a = np.convolve(a, one)
        q = np.convolve(q, hat)
    xa = (nn * lo + np.arange(a.size)) * (h / fine)
    xq = (nn * kn_lo + np.arange(q.size)) * h
    return xa, a, xq, q


CASES = [  # nn, gamma, atoms (in units of h), probabilities, h
    (1, 1.0, [0.5], [1.0], 1.0),
    (2, 1.0, [0.5, -0.5], [0.5, 0.5], 1.0),
    (4, 0.9, [0.5, 1.5, -2.5], [0.4, 0.3, 0.3], 0.5),
    (6, 1.0, [0.5, -0.5], [0.5, 0.5], 0.25),
    (5, 0.6, [0.375, -1.625, 3.5], [0.5, 0.25, 0.25], 2.0),
    (3, 0.3, [0.125, 0.875], [0.5, 0.5], 1.0),
]


@needs_hat
@pytest.mark.parametrize("nn,gamma,atoms,probs,h", CASES)
def test_coupling_cost_bounds_the_exact_excess_of_mid_cell_atoms(nn, gamma, atoms, probs, h):
    vals = np.asarray(atoms, dtype=float) * h
    xa, a, xq, q = _atom_sum(nn, gamma, vals, np.asarray(probs, dtype=float), h)
    # kinks z on the atoms' sums (|A' - z| = 0 with positive mass), at nodes, and in between
    zs = np.unique(np.concatenate([xa[a > 1e-15], xq[::2], xa[::3] + h / 16]))
    worst = 0.0
    for z in zs.tolist():
        excess = float(np.sum(q * np.maximum(xq - z, 0.0)) - np.sum(a * np.maximum(xa - z, 0.0)))
        assert excess >= -1e-12
        cost = hat_lower.coupling_cost(xq, q, 0.0, 0.0, h, nn, gamma, [(1.0, z, z)])
        assert excess <= cost * (1 + 1e-9) + 1e-14, (z, excess, cost)
        worst = max(worst, excess / cost if cost > 0 else 0.0)
        # the same kink as a range around it (the supremum over the range)
        rng_cost = hat_lower.coupling_cost(xq, q, 0.0, 0.0, h, nn, gamma, [(1.0, z - 0.3 * h, z + 0.7 * h)])
        assert excess <= rng_cost * (1 + 1e-9) + 1e-14
    assert worst > 0.0


@needs_hat
@pytest.mark.parametrize("nn,gamma,atoms,probs,h", CASES[1:4])
def test_coupling_cost_bounds_a_convex_function_with_spread_mu(nn, gamma, atoms, probs, h):
    """w = E(x + G)_+ (G an independent atom law: mu = its reflected law, mass 1, on a range): Lemma 45.1 with the
    range's supremum, the body's case of §45.1 (ii)."""
    vals = np.asarray(atoms, dtype=float) * h
    xa, a, xq, q = _atom_sum(nn, gamma, vals, np.asarray(probs, dtype=float), h)
    gv = np.array([-1.3, 0.2, 0.9]) * h
    gp = np.array([0.3, 0.3, 0.4])

    def w(x):
        return np.sum(gp[None, :] * np.maximum(x[:, None] + gv[None, :], 0.0), axis=1)

    excess = float(np.sum(q * w(xq)) - np.sum(a * w(xa)))
    cost = hat_lower.coupling_cost(xq, q, 0.0, 0.0, h, nn, gamma, [(1.0, float(-gv.max()), float(-gv.min()))])
    assert -1e-12 <= excess <= cost * (1 + 1e-9) + 1e-14


@needs_hat
@pytest.mark.parametrize("v", [0.25, 1.0, 9.0])
def test_subgauss_stop_loss_above_the_rademacher_sum(v):
    """Y = (h/2) (sum of N Rademacher signs), v = N h^2 / 4 (Hoeffding's proxy is attained in the variance): the exact
    E(Y - t)_+ by enumeration stays below the §45.2 bound at every t."""
    from scipy.stats import binom
    for N in (1, 2, 7, 40):
        h = 2.0 * math.sqrt(v / N)
        k = np.arange(N + 1)
        y = (2 * k - N) * h / 2
        p = binom.pmf(k, N, 0.5)
        t = np.linspace(0.0, 6.0 * math.sqrt(v), 97)
        exact = np.array([float(np.sum(p * np.maximum(y - ti, 0.0))) for ti in t])
        bound = hat_lower._stop_loss_subgauss(t, v)
        assert np.all(bound >= exact - 1e-15), float(np.max(exact - bound))


def _bounds(sigma0: float, n: int, eps: float) -> tuple[float, float]:
    clear_caches()
    return ShuffleAccountant(GaussianRandomizer(sigma0, 1), n).get_delta_bounds(eps)


# main f69257b at rel_tol 1e-3 (certified; /work/venv/main, session 35, rev35)
MAIN_TIGHT = {
    (0.5, 10**8, 0.1): (0.012408594180771402, 0.012429177243461997),  # (docs/accountant_tail.md §37.3)
    (0.5, 10**8, 0.3): (0.005570957227974604, 0.0056660465354205014),  # (main's rel_tol 1e-2 bracket too)
    (0.5, 10**9, 0.1): (0.0013665734625042938, 0.0025638490951452333),  # (the same at rel_tol 1e-2)
    (0.45, 3 * 10**8, 0.05): (0.004182192451641076, 0.036821126128697514),  # (rel_tol 1e-2, HAT_LOWER off)
}


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MAIN_TIGHT))
def test_far_tail_cells_overlap_main_tight_brackets(cell):
    lo, up = _bounds(*cell)
    ref_lo, ref_up = MAIN_TIGHT[cell]
    assert 0.0 < lo <= up
    assert lo <= ref_up * (1 + 1e-12) and ref_lo <= up * (1 + 1e-12), (lo, up, ref_lo, ref_up)


@pytest.mark.parametrize("sigma0,n,eps", [(1.0, 10**8, 0.05), (1.0, 10**8, 0.02)])
def test_light_body_cells_hold_the_big_jump_estimate(sigma0, n, eps):
    """Where the body is light (its mean many sd below 0), the single-big-jump quadrature (Gaussian body) is accurate to
    ~1e-4 relative (its Edgeworth correction): the bracket holds it within a 2e-3 margin."""
    from _review28_gauss_reference import d_up_jump
    ew, gauss = d_up_jump(sigma0, eps, n)
    assert abs(ew - gauss) <= 1e-3 * gauss  # the estimate's own indicator
    lo, up = _bounds(sigma0, n, eps)
    assert lo <= gauss * (1 + 2e-3) and gauss * (1 - 2e-3) <= up, (lo, gauss, up)


@pytest.mark.slow
@pytest.mark.parametrize("cell", [(0.5, 10**8, 0.3), (0.5, 10**9, 0.1), (0.4, 10**8, 0.1), (0.5, 10**9, 0.001),
                                  (0.45, 3 * 10**8, 0.05)])
def test_far_tail_brackets_consistent_across_rel_tol(cell):
    """Each rel_tol gives its own certified bracket (other steps, other hat costs): every lower value must lie below
    every upper value. Measured on big35 (a9c7e156): (0.5, 1e9, 0.1) max Lo 0.0025564 (rel_tol 0.1) <= min Up
    0.0025638; (0.5, 1e8, 0.3) 0.0056582 <= 0.0056673, main's tight bracket [0.0055710, 0.0056660]."""
    out = []
    for rt in (0.1, 0.03, 1e-2):
        clear_caches()
        out.append(ShuffleAccountant(GaussianRandomizer(cell[0], 1), cell[1], rel_tol=rt).get_delta_bounds(cell[2]))
    out.append(MAIN_TIGHT.get(cell, (0.0, math.inf)))
    assert max(lo for lo, _ in out) <= min(up for _, up in out) * (1 + 1e-12), out


# main f69257b at rel_tol 1e-3 (/work/venv/main, session 35, rev35) at eps 0.3, 1, 3: small n, where §47 (the FFT
# treatment first at n <= 1000, rel_tol >= 0.05) and §45 change the route of the loose calls
SMALL_MAIN = {
    ("zero_out", 0.5, 10): ([0.7936732772612124, 0.7414993770024431, 0.5642694496892563],
                            [0.7938541104622784, 0.7415069736067232, 0.5642767923143838]),
    ("zero_out", 1.0, 100): ([0.10001155141085989, 0.02776877737189929, 0.0010539682624359345],
                             [0.10004937253930397, 0.027787654808167375, 0.0010540884378985765]),
    ("zero_out", 2.0, 1000): ([7.688777693486276e-09, 2.2835886059906766e-13, 3.994732752427505e-22],
                              [7.69185548873549e-09, 2.283835226011532e-13, 3.9950472318402384e-22]),
    ("replace", 1.0, 100): ([0.2368317874581165, 0.09252417928459272, 0.005210776253753183],
                            [0.2369013781241318, 0.09256050773243708, 0.005213953170874073]),
    ("zero_out", 1.0, 2): ([0.40409640951493925, 0.28119886443347253, 0.06330714030782943],
                           [0.40431869273909166, 0.28139095287651533, 0.06335600846744736]),
}


@pytest.mark.parametrize("cell", sorted(SMALL_MAIN))
@pytest.mark.parametrize("rel_tol", [0.05, 0.1, 0.3])
def test_loose_small_n_brackets_overlap_main_tight(cell, rel_tol):
    """Loose calls at small n (the legs of replace-one through bot): each bracket overlaps main's rel_tol-1e-3 bracket
    and meets its rel_tol (measured on big35 5298e659: 216 cells of sigma0 0.5-2, n 2-1000, both adjacencies, none
    outside)."""
    adj, s, n = cell
    m_lo, m_up = SMALL_MAIN[cell]
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n, adj, rel_tol=rel_tol).get_delta_bounds(
        np.array([0.3, 1.0, 3.0]))
    for a, b, c, d in zip(lo, up, m_lo, m_up):
        assert a <= d * (1 + 1e-12) and c <= b * (1 + 1e-12), (a, b, c, d)
        assert 0 < a and b - a <= rel_tol * a
