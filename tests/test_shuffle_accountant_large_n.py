"""Certified accountant at n = 1e9 (the default accuracy target holds for n from 1 to 1e9,
`docs/accountant.md` §6.2), the
accurate low-frequency DFT of the power step, and atom laws on exact blocks of users."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy.stats import binom

from sharpdp.shuffle import BlanketMixedGaussian, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.driver import lattice_for_two_atoms
from _power_reference import l2_distance, power_case

N_BIG = 10**9
BMG = BlanketMixedGaussian(0.95, 4.6, 1)
CHI_OPT = BlanketMixedGaussian(0.6232, 1.5868, 1)  # chi-optimal BMG for chi = 3 (bench)


@functools.lru_cache(maxsize=None)
def _default_report(mech, eps):
    """The default accountant's report at n = 1e9 (shared by the tests that need the same one; a report is
    a frozen value object)."""
    return ShuffleAccountant(mech, N_BIG).report(eps)


@pytest.mark.parametrize("mech,eps", [(BMG, 0.0), (CHI_OPT, 1.01e-5), (BMG, 1.6e-6), (CHI_OPT, 5e-5)],
                         ids=["bmg-1e-7", "chiopt-1e-6", "bmg-3e-13", "chiopt-2e-12"])
def test_default_accuracy_at_n_1e9(mech, eps):
    rep = _default_report(mech, eps)
    assert 0.0 < rep.lower <= rep.upper
    assert rep.rel_gap <= 1e-2, rep
    # the value is in the targeted range (delta ~ 1e-6 ... 1e-12)
    assert 1e-14 < rep.upper < 2e-6


def test_n_1e9_consistent_with_a_finer_grid():
    eps = 1.01e-5
    coarse = _default_report(CHI_OPT, eps)
    fine = ShuffleAccountant(CHI_OPT, N_BIG, rel_tol=3e-3).report(eps)
    assert fine.h < coarse.h
    # both brackets are certified, so they must overlap; the finer one is tighter
    assert fine.lower <= coarse.upper and coarse.lower <= fine.upper
    assert fine.rel_gap <= 3e-3
    assert coarse.upper >= fine.lower and coarse.upper <= fine.upper * (1 + 1e-2)


def test_power_step_error_bound_covers_exact_powers():
    """The power step with accurately recomputed low frequencies: |Q~ - z^n|_2 <= its bound,
    against the DFT and power of the same vector in 50-digit arithmetic (mpmath)."""
    _, Q, err, nfix, zs = power_case(3, 40)
    assert nfix > 0
    assert l2_distance(Q, zs, 40) <= err
    assert err < 1e-12  # the accurate DFT makes the bound tight (the FFT's normwise one is not)


def _exact_binary_rr(eps0: float, n: int, eps: float) -> float:
    """Exact (1/(n gamma)) E[(sum B_i L_i)_+] for binary RR, replace-one, by trinomial summation."""
    (g, law), = RandomizedResponse(2, eps0).privacy_amplification_laws(eps, "replace")
    (a, b), (pa, pb) = law.values, g * law.probs
    total = 0.0
    for n1 in range(n + 1):
        w1 = binom.pmf(n1, n, pa)
        n2 = np.arange(n - n1 + 1)
        total += w1 * np.dot(binom.pmf(n2, n - n1, pb / (1 - pa)), np.maximum(n1 * a + n2 * b, 0.0))
    return total / (n * g)


@pytest.mark.parametrize("eps0,eps", [(1.0, 0.1487), (4.0, 1.854)])
def test_atom_law_blocks_bracket_the_exact_value(eps0, eps):
    n = 1000
    with lattice_for_two_atoms():  # the blocks engine (two-atom laws otherwise take the exact sum)
        rep = ShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency="replace").report(eps)
    exact = _exact_binary_rr(eps0, n, eps)
    assert rep.terms.get("block_t", 1) > 1  # the atom law went through exact blocks of users
    assert rep.lower <= exact <= rep.upper
    assert rep.rel_gap <= 1e-2


def test_atom_law_small_gamma_large_n():
    # binary RR eps0 = 8: gamma ~ 7e-4, blocks of thousands of users with a truncated number of
    # active users; bracket within 1e-2 and get_epsilon consistent with get_delta
    acc = ShuffleAccountant(RandomizedResponse(2, 8.0), 10**8, adjacency="replace")
    e = acc.get_epsilon(1e-6)
    lo, up = acc.get_delta_bounds(e)
    assert up <= 1e-6 and (up - lo) <= 1e-2 * lo
    assert acc.get_delta(e * (1 - 3e-3)) > 1e-6


@pytest.mark.parametrize("n,eps", [(20000, 0.5), (20000, 1.0), (60000, 0.4)])
def test_truncated_blocks_bracket_the_exact_value(n, eps):
    # binary RR eps0 = 8 (gamma ~ 7e-4): one block of thousands of users with the number of active
    # users truncated; exact value by summing over the active count M and the split of M
    (g, law), = RandomizedResponse(2, 8.0).privacy_amplification_laws(eps, "replace")
    (a, b), (pa, _) = law.values, law.probs
    exact = 0.0
    for M in range(1, 400):
        n1 = np.arange(M + 1)
        exact += binom.pmf(M, n, g) * np.dot(binom.pmf(n1, M, pa), np.maximum(n1 * a + (M - n1) * b, 0.0))
    exact /= n * g
    with lattice_for_two_atoms():  # the blocks engine (two-atom laws otherwise take the exact sum)
        rep = ShuffleAccountant(RandomizedResponse(2, 8.0), n, adjacency="replace").report(eps)
    assert rep.terms.get("block_t", 1) > 1000
    assert rep.lower <= exact <= rep.upper
    assert rep.rel_gap <= 1e-2
