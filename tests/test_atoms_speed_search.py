"""get_epsilon on atom laws with far negative atoms (docs/accountant_atoms.md §6): phase 1's grid
step, and the answer checked against a brute-force multinomial sum of D_up."""

import math

import numpy as np
import pytest
from scipy.special import gammaln

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.search import phase1_h_ratio
from sharpdp.shuffle.laws import laws_for


def _d_up_brute(gamma, values, probs, n, m_max):
    """E[(sum_i B_i L_i)_+] / (n gamma) for a 3-atom law by summing the multinomial law of the
    active users' counts (c1, c2, c3) with c1 + c2 + c3 = M <= m_max (the rest is dropped: its
    binomial mass is checked to be negligible by the caller's choice of m_max)."""
    total = 0.0
    lg = math.log(gamma)
    l1 = math.log1p(-gamma)
    lp = np.log(probs)
    for M in range(1, m_max + 1):
        lb = gammaln(n + 1) - gammaln(M + 1) - gammaln(n - M + 1) + M * lg + (n - M) * l1
        c1, c2 = np.meshgrid(np.arange(M + 1), np.arange(M + 1), indexing="ij")
        ok = c1 + c2 <= M
        c1, c2 = c1[ok], c2[ok]
        c3 = M - c1 - c2
        lm = gammaln(M + 1) - gammaln(c1 + 1) - gammaln(c2 + 1) - gammaln(c3 + 1) + c1 * lp[0] + c2 * lp[1] + c3 * lp[2]
        s = c1 * values[0] + c2 * values[1] + c3 * values[2]
        total += float(np.sum(np.exp(lb + lm) * np.maximum(s, 0.0)))
    return total / (n * gamma)


@pytest.mark.parametrize("k,eps0", [(2, 0.5), (2, 1.0), (2, 2.0), (10, 1.0)])
def test_phase1_grid_unchanged_without_far_atoms(k, eps0):
    """Every atom within 64 top: the step sd/8 exactly, sd/16 for two-atom laws (binary RR,
    docs/accountant_atoms.md §8)."""
    r = RandomizedResponse(k, eps0)
    for e in (0.0, 0.3 * eps0, 0.9 * eps0):
        for gamma, law in laws_for(r, e, "replace"):
            assert phase1_h_ratio(law, float(gamma)) == (0.0625 if k == 2 else 0.125)


def test_phase1_grid_from_core_sd_matches_formula():
    """10-RR eps0 = 8 at eps = 7: (1/8) sd_core / sd, recomputed in exact rational arithmetic."""
    from fractions import Fraction as F

    (gamma, law), = laws_for(RandomizedResponse(10, 8.0), 7.0, "replace")
    v, p, g = law.values.tolist(), law.probs.tolist(), F(float(gamma))
    top = max(v)
    core = [x if x >= -64 * top else 0.0 for x in v]
    assert core != v  # the far atom is there
    def var(xs):
        m1 = sum(F(pi) * F(x) for pi, x in zip(p, xs))
        m2 = sum(F(pi) * F(x) ** 2 for pi, x in zip(p, xs))
        return g * m2 - (g * m1) ** 2
    want = 0.125 * math.sqrt(float(var(core) / var(v)))
    got = phase1_h_ratio(law, float(gamma))
    assert got == pytest.approx(want, rel=1e-12)
    assert got < 0.125 / 500  # far finer than the former sd/8


def test_krr10_eps0_8_answer_and_bracket_against_brute_force():
    """10-RR eps0 = 8, n = 1e4 (the cell where phase 1 used to find no model): get_delta at the
    answer is <= delta and its bracket holds the brute-force D_up; just below the answer (by
    more than xtol) get_delta exceeds delta; the answer is no looser than the former 7.025823."""
    n, delta = 10**4, 1e-6
    acc = ShuffleAccountant(RandomizedResponse(10, 8.0), n, adjacency="replace")
    eps = acc.get_epsilon(delta)
    assert acc.get_delta(eps) <= delta
    assert acc.get_delta(eps * (1 - 1.5e-3)) > delta
    assert 6.9 < eps <= 7.025823376698722
    (gamma, law), = laws_for(RandomizedResponse(10, 8.0), eps, "replace")
    gamma = float(gamma)
    # active users beyond 160 (mean 33): binomial mass below 1e-60, times |L| <= 2e4: negligible
    ref = _d_up_brute(gamma, law.values, law.probs, n, 160)
    lo, up = acc.get_delta_bounds(eps)
    assert lo * (1 - 1e-9) <= ref <= up * (1 + 1e-9)
    assert ref == pytest.approx(up, rel=0.02)
