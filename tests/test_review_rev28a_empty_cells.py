"""Review rev28 of docs/accountant_tail.md §29 (cpp/kernels/lognormal_cells.hpp, ``Law::local``: a cell between equal
clipped V-edges is exactly (0, 0, 0, 0), without the ndtr allowances).

Independent references:

* mpmath (40 digits) on the kernel's own computed V-edges (``lognormal_v``, clipped as the kernel clips them): the
  mass P(lo < V < hi) and the moment E[L - x_j; lo < V < hi] = (a - x_j) P0 + G P(lo - r < V < hi - r)
  - S P(lo + r < V < hi + r) of every cell, the hat weight min(moment / h, mass), and the mass of the law over the
  grid's whole V-range (the cells must partition it): laws whose range end is exactly a lattice point, inside a
  cell, tiny and huge r, decreasing laws (cells above the range), the replace-one two-term shape;
* the blanket divergence D_up^{x vs bot} of GaussianRandomizer(s, 1), zero-out, from the mechanism's densities
  alone (y ~ phi_s(|y| + 1) / g, ratio g e^{2y/s^2} for y > 0; tests/_review28_gauss_reference.py): the exact
  identity D_up = E[L_1 1{L_1 + S' > 0}] with the body S' = sum_{i >= 2} B_i L_i in its Edgeworth expansion to the
  second order, at n = 1e5 - 1e8 where the lattice's clamp B reaches far below the law's support (the cells §29
  zeroes). The expansion is an estimate; its tolerance is stated per cell (twice the size of its last term, plus
  0.1 %).

Found (a strict xfail below, not a bracket of the accountant): the proof's second case, "a computed v(x_{j+1}) below
lo_j, clipped up to it", does occur (v is not monotone in floating point at the two-term formula's branch switch
|x - a| = kappa: 47 of 300 random two-term laws, by 1-2 ulp of v). There the cell is empty, but the next cell starts
from the lower computed edge, so the two neighbours overlap and the run of cells counts a layer of V twice; the
empty cell's ndtr allowance (removed by §29) covered that layer, nothing covers it now. Only grids whose step is a
few ulp of x reach it (no accountant grid: its cells are far wider in V than the few ulp of v's rounding), so no
reported value moves; the kernel's partition property fails there by a third of the run's mass.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from _review28_ak_reference import GaussXBot, d_up_ak_at_mean
from _review28_gauss_reference import d_up_edgeworth
from sharpdp import _core
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

mp.mp.dps = 40


def _edges(a, G, S, r, vlo, vhi, x):
    """The kernel's clipped V-edges of the cells between the grid points x (its ``cells`` loop)."""
    v = _core.accountant.lognormal_v(a, G, S, r, x)
    lo = np.clip(v[:-1], vlo, vhi)
    hi = np.clip(v[1:], lo, vhi)
    return lo, hi


def _P(lo, hi):
    """P(lo < V < hi) at 40 digits (0 when hi <= lo)."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    if not hi > lo:
        return mp.mpf(0)
    if lo > 0:  # (the small side)
        return mp.ncdf(-lo) - mp.ncdf(-hi)
    return mp.ncdf(hi) - mp.ncdf(lo)


def _exact_cell(a, G, S, r, lo, hi, xj):
    """(mass, moment E[L - x_j; cell]) of the event lo < V < hi, unweighted."""
    p0 = _P(lo, hi)
    mom = (mp.mpf(a) - mp.mpf(xj)) * p0
    lo_, hi_, r_ = mp.mpf(lo), mp.mpf(hi), mp.mpf(r)  # (the shifted edges exactly: lo - r in floats loses bits)
    if G > 0:
        mom += mp.mpf(G) * _P(lo_ - r_, hi_ - r_)
    if S > 0:
        mom -= mp.mpf(S) * _P(lo_ + r_, hi_ + r_)
    return p0, mom


def _grid_law(a, G, S, r, vlo, vhi, weight, x0, h, K):
    """Check every cell of the grid against mpmath on its own computed edges; return the kernel's arrays and the
    exact mass of the union of the cells' V-intervals (weighted)."""
    m, w, em, ew = _core.accountant.lognormal_cells(a, G, S, r, vlo, vhi, weight, x0, h, K)
    x = x0 + h * np.arange(K + 1, dtype=float)
    lo, hi = _edges(a, G, S, r, vlo, vhi, x)
    for j in range(K):
        p0, mom = _exact_cell(a, G, S, r, lo[j], hi[j], x[j])
        wt = mp.mpf(weight)
        assert abs(wt * p0 - mp.mpf(m[j])) <= mp.mpf(em[j]), (j, lo[j], hi[j], m[j], em[j], float(wt * p0))
        w_ex = wt * min(max(mom, 0) / mp.mpf(h), p0)  # (the kernel's hat weight: the moment clipped at 0)
        assert abs(w_ex - mp.mpf(w[j])) <= mp.mpf(ew[j]), (j, w[j], ew[j], float(w_ex))
        if not hi[j] > lo[j]:  # §29: an empty interval is exactly (0, 0, 0, 0)
            assert m[j] == 0.0 and w[j] == 0.0 and em[j] == 0.0 and ew[j] == 0.0
    union = weight * _P(float(lo.min()), float(hi.max()))
    return m, w, em, ew, lo, hi, union


def _one_term_at_grid(k_end: int, frac: float, r: float, G: float, a: float, h: float, x0: float):
    """A one-term increasing law truncated at v_lo = v(x0 + h (k_end + frac)) (its range starts there)."""
    v_end = float(_core.accountant.lognormal_v(a, G, 0.0, r, np.array([x0 + h * (k_end + frac)]))[0])
    return v_end


@pytest.mark.parametrize("frac", [0.0, 1.0 / 3.0, 0.999])
@pytest.mark.parametrize("r, G", [(1.5, 3.0), (1e-3, 1000.0), (30.0, math.exp(450.0))])
def test_cells_below_a_range_starting_at_or_inside_a_lattice_cell(r, G, frac):
    """One-term law a + G e^{rV - r^2/2} on V > v_lo where L(v_lo) is the lattice point x_40 (frac = 0), a third
    into the cell after it, or just below x_41: every cell within its bounds against mpmath on its computed edges,
    the empty ones exact zeros, and the cells' masses summing to the law's mass over the grid's V-range within the
    summed allowances (nothing lost, nothing counted twice; the range end's cell has positive mass)."""
    a, h, x0, K = -1.0, 0.125, -5.0, 120
    if r == 1e-3:  # (a nearly Gaussian law of sd ~ G r = 1 about a + G: put the range's start on the grid there)
        a, x0 = -1000.0, -6.0
    vlo = _one_term_at_grid(40, frac, r, G, a, h, x0)
    assert math.isfinite(vlo)
    m, w, em, ew, lo, hi, union = _grid_law(a, G, 0.0, r, vlo, math.inf, 0.75, x0, h, K)
    empty = ~(hi > lo)
    assert empty[:40].all() and not empty[41:60].any()  # (the cells below the range, then the range)
    k = 40 if not empty[40] else 41
    assert m[k] > 0.0
    assert abs(mp.mpf(float(m.sum())) - union) <= mp.mpf(float(em.sum())) + mp.mpf(2.0 ** -52) * union


@pytest.mark.parametrize("case", ["decreasing", "two_term_replace"])
def test_cells_beyond_the_range_other_shapes(case):
    """A decreasing law (cells above its range: both edges clipped to v_hi) and the replace-one two-term shape
    truncated below (a + G e^{rV - r^2/2} - S e^{-rV - r^2/2}, V > z_lo): the same checks."""
    if case == "decreasing":  # L = 0.5 - 2 e^{-0.8 V - 0.32}... as the kernel sees it: G = 0, S = 2, V < v_hi
        a, G, S, r, vlo, vhi, x0, h, K = 0.5, 0.0, 2.0, 0.8, -math.inf, 0.3, -8.0, 0.0625, 200
    else:
        a, G, S, r, vlo, vhi, x0, h, K = -1.0, 3.0, 0.25, 1.5, -1.0, math.inf, -8.0, 0.0625, 200
    m, w, em, ew, lo, hi, union = _grid_law(a, G, S, r, vlo, vhi, 2.0, x0, h, K)
    empty = ~(hi > lo)
    assert 20 <= empty.sum() <= K - 20
    assert abs(mp.mpf(float(m.sum())) - union) <= mp.mpf(float(em.sum())) + mp.mpf(2.0 ** -52) * union


# a two-term law whose computed v is not monotone at x ~ 8.2392 (its branch switch x - a = kappa)
_NM = (2.716067600019353, 0.3467038735465146, 92.51572636262478, 0.22405629491025283)


def test_the_non_monotone_edge_exists():
    """The proof's second case is real: consecutive grid points one ulp apart whose computed v decreases (the
    kernel's own ``lognormal_v``), so the cell between them is empty after clipping."""
    a, G, S, r = _NM
    x = np.array([8.239207847161111, 8.239207847161113])
    v = _core.accountant.lognormal_v(a, G, S, r, x)
    assert x[1] > x[0] and v[1] < v[0]


@pytest.mark.xfail(strict=True, reason="rev28 finding: at a non-monotone computed V-edge the empty cell's "
                   "neighbours overlap; after §29 no allowance covers the layer counted twice (grids of a few ulp only)")
def test_cells_partition_the_range_at_a_non_monotone_edge():
    """Eight cells of step 2^-49 across the non-monotone edge: cell 3 is empty (exact zeros since §29), cell 4 starts
    from v(x_4) below cell 2's upper edge, so cells 2 and 4 overlap; the masses sum to 1.18e-61 against 8.84e-62 for
    the V-range they cover, where the summed allowances are 5.8e-75 (before §29 the empty cell's ndtr allowance,
    ~2.6e-61, covered the layer). Each cell is within its bounds on its own edges (the contract holds): only the
    partition fails."""
    a, G, S, r = _NM
    h = 2.0 ** -49
    x0 = 8.239207847161111 - 3 * h
    m, w, em, ew, lo, hi, union = _grid_law(a, G, S, r, -math.inf, math.inf, 1.0, x0, h, 8)
    assert abs(mp.mpf(float(m.sum())) - union) <= mp.mpf(float(em.sum())) + mp.mpf(2.0 ** -52) * union


# (s, n, eps, measured bracket of the x-vs-bot law at rel_tol 1e-2): cells whose body reaches 0 within 5 sd and whose
# Edgeworth expansion has settled (second-order term <= 0.6 %, except the last, §29's own n = 1e8 cell: 4.5 %)
BULK = [(2.0, 10**6, 0.001), (3.0, 10**5, 0.003), (3.0, 10**6, 0.001), (1.5, 10**7, 0.001), (2.0, 10**7, 0.001),
        (1.5, 10**8, 0.0003), (2.0, 10**8, 0.0003), (1.5, 10**8, 0.001), (1.0, 10**8, 0.001)]


@pytest.mark.parametrize("s, n, eps", BULK)
def test_gaussian_bracket_at_large_n_holds_the_edgeworth_reference(s, n, eps):
    """GaussianRandomizer(s, 1), zero-out, the x-vs-bot law's certified bracket (its lattice's clamp B reaches far
    below the law's support g - e^eps, where §29's cells are exact zeros) against the Edgeworth estimate of
    D_up from the mechanism's densities: the bracket meets [ref (1 - tol), ref (1 + tol)], tol = twice the
    second-order term plus 0.1 %. Measured (lower, upper; reference): e.g. (1.5, 1e8, 3e-4): [6.04663e-6,
    6.05533e-6]; 6.04939e-6 (tol 0.10 %); (1.5, 1e8, 1e-3): [1.336002e-11, 1.337870e-11]; 1.33781e-11 (tol 1.3 %);
    (1, 1e8, 1e-3): [2.76872e-5, 2.77063e-5]; 2.6195e-5 (first order 2.7376e-5, tol 9 %: the expansion is not
    settled there; before §29 the bracket was [2.75928e-5, 2.88115e-5])."""
    ref, ref1, z = d_up_edgeworth(s, eps, n)
    assert 0.0 < z < 5.0
    tol = 2.0 * abs(ref - ref1) / ref + 1e-3
    assert tol < (0.1 if s == 1.0 else 0.015)
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out")
    rep = acc._report(eps, acc.rel_tol, only=(0,))
    assert 0.0 < rep.lower <= rep.upper <= rep.lower * (1 + 2 * acc.rel_tol)
    assert rep.lower <= ref * (1 + tol) and rep.upper >= ref * (1 - tol), (rep.lower, rep.upper, ref, tol)


# heavy-tailed laws (sigma0 = 0.5: L's fourth moment ~e^48, no expansion applies): (s, n, eps, samples)
HEAVY = [(0.5, 10**5, 0.001, 4000), (0.5, 10**5, 0.1, 4000), (0.5, 10**6, 1.0, 400)]


@pytest.mark.parametrize("s, n, eps, N", HEAVY)
def test_heavy_tailed_gaussian_bracket_holds_the_conditional_monte_carlo(s, n, eps, N):
    """GaussianRandomizer(0.5, 1), zero-out, x vs bot (the lattice's clamp far below the support: most of its cells
    are §29's empty ones): the certified bracket meets the Asmussen-Kroese conditional Monte Carlo interval of 5
    standard errors (tests/_review28_ak_reference.py, from the mechanism's densities, at M = n g active users).
    Measured: (1e5, 0.001) [0.230155, 0.230880] against 0.23099 +- 0.00079; (1e5, 0.1) [0.209015, 0.209345] against
    0.20982 +- 0.00068; (1e6, 1) [0.0362384, 0.0362757] against 0.036163 +- 0.00018. (At n = 1e8, eps = 0.001,
    §29's table cell, now [0.0289635, 0.0289912]: 0.02938 +- 0.00050 from 800 samples of 4.55e6 terms, offline.)"""
    law = GaussXBot(s, eps)
    m, se = d_up_ak_at_mean(law, law.g, n, N)
    assert se <= 0.01 * m
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out")
    rep = acc._report(eps, acc.rel_tol, only=(0,))
    assert rep.lower <= m + 5 * se and rep.upper >= m - 5 * se, (rep.lower, rep.upper, m, se)
