"""Session 38 (eps38): the few-user bracket of docs/accountant.md §6.8 beyond n = 500 (§8.16, ``limits.FEW_WIDE``):
the binomial window with log-gamma weights and their rounding bound, and the cost gate.

References independent of the rule: mpmath's binomial pmf (50 digits) for the weights; D_up of two-atom laws by exact
binomial sums in mpmath (the number of high users among K i.i.d. copies is binomial); main's engine (the switch off)
for the Gaussian randomizer at n = 1e4; fresh accountants for get_epsilon's contract (docs/accountant.md §8).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from _main_floats34 import switch

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import closed_forms as cf
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.few_users import few_user_bracket
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.finite import FiniteLaw

DELTA, XTOL = 1e-6, 1e-3


def test_switch_values():
    assert limits.FEW_WIDE is True and limits.FEW_WIDE_N_MAX == 10**9 and limits.FEW_WIDE_TERMS == 2**13
    assert limits.FEW_WIDE_SD == 40.0 and limits.FEW_WIDE_SAMPLES == 24 and limits.FEW_WIDE_PRE == 4.0
    assert limits.FEW_WIDE_DROP == 1e-3
    assert cf.few_user_n_max() == 10**9


@pytest.mark.parametrize("m, gamma", [(1000, 0.03), (1000, 0.5), (10**5, 0.0297), (10**7, 1e-4), (5000, 1e-5)])
def test_wide_weights_against_mpmath(m, gamma):
    """Each lower weight is <= the exact P(Bin(m, gamma) = j) and within 1e-7 of it (1e-5 at m = 1e7: log_binom's
    bound grows with log m!); 0 below 1e-300 (subnormals); the window holds all but
    1e-45 of the mass (m <= 1e5)."""
    j, w, w_lo = cf._wide_weights(m, gamma)
    mp.mp.dps = 50
    g = mp.mpf(gamma)
    tot = mp.mpf(0)
    for jj, a, b in zip(j[:: max(1, j.size // 400)], w[:: max(1, j.size // 400)], w_lo[:: max(1, j.size // 400)]):
        ex = mp.binomial(m, int(jj)) * g ** int(jj) * (1 - g) ** (m - int(jj))
        assert mp.mpf(float(b)) <= ex, (jj, b, ex)
        tol = 1e-7 if m <= 10**5 else 1e-5
        if ex > mp.mpf("1e-290"):
            assert abs(mp.mpf(float(b)) / ex - 1) < tol and abs(mp.mpf(float(a)) / ex - 1) < tol
        assert b == 0.0 or b >= 1e-300
    for jj in j:
        tot += mp.binomial(m, int(jj)) * g ** int(jj) * (1 - g) ** (m - int(jj)) if m <= 10**5 else 0
    if m <= 10**5:
        assert 1 - tot < mp.mpf("1e-45")
    assert cf._wide_weights(m, 1.0)[0].tolist() == [m]


def _two_atom_dup(vals, probs, gamma, n):
    """(lower, upper) of D_up = sum_j w_j E[(S_{j+1})_+] / (j + 1) of a two-atom law, by exact binomial sums in mpmath
    (50 digits): the terms with w_j or a binomial probability below 1e-45 are left out (lower) or charged at their
    largest value (upper)."""
    mp.mp.dps = 50
    a, b = mp.mpf(vals[0]), mp.mpf(vals[1])
    pb, g, m = mp.mpf(probs[1]), mp.mpf(gamma), n - 1
    cut = mp.mpf("1e-45")
    epos = max(a, 0) * (1 - pb) + max(b, 0) * pb  # E[L_+]
    mean = m * gamma
    sd = (m * gamma * (1 - gamma)) ** 0.5
    j_lo, j_hi = max(0, int(mean - 20 * sd - 20)), min(m, int(mean + 20 * sd + 20))
    lo = mp.mpf(0)
    wsum = mp.mpf(0)
    for j in range(j_lo, j_hi + 1):
        w = mp.binomial(m, j) * g ** j * (1 - g) ** (m - j)
        wsum += w
        if w < cut:
            continue
        k = j + 1
        s = mp.mpf(0)
        for i in range(k + 1):
            x = i * b + (k - i) * a
            if x > 0:
                s += mp.binomial(k, i) * pb ** i * (1 - pb) ** (k - i) * x
        lo += w * s / k
    slack = (1 - wsum) * epos + (j_hi - j_lo + 1) * cut * epos
    return lo, lo + slack


CASES = [([-8.0, 1024.0], [1 - 2 ** -10, 2 ** -10], 2.0 ** -12), ([0.5, -64.0], [0.75, 0.25], 0.5),
         ([-1.0, 300.0], [0.995, 0.005], 0.01)]


@pytest.mark.parametrize("vals, probs, gamma", CASES)
@pytest.mark.parametrize("n", [501, 1000, 5000])
def test_two_atom_bracket_beyond_500_contains_exact(vals, probs, gamma, n):
    if gamma == 0.5 and n > 1000:
        pytest.skip("(the reference's double sum: ~1e6 mpmath terms)")
    law = FiniteLaw(np.array(vals), np.array(probs))
    br = cf.small_n_bracket(law, gamma, n)
    assert br is not None
    ref_lo, ref_up = _two_atom_dup(vals, probs, gamma, n)
    assert mp.mpf(float(br[0])) <= ref_up and ref_lo <= mp.mpf(float(br[1])), (br, ref_lo, ref_up)
    if vals == CASES[0][0]:  # (a jump law, E[L] < 0: the one-user bounds of §6.8 (b) make it narrow)
        assert br[1] - br[0] <= 0.05 * br[0]
    tight = cf.small_n_bracket(law, gamma, n, 0.01)  # (the estimate may decline; a formed bracket is the same one)
    assert tight is None or (mp.mpf(float(tight[0])) <= ref_up and ref_lo <= mp.mpf(float(tight[1])))


def test_gaussian_bracket_at_1e4_against_main_engine(monkeypatch):
    """GaussianRandomizer(0.46), n = 1e4, eps = 26.5: the few-user bracket (now get_delta_bounds' value) meets the
    engine's bracket with the switch off (two certified brackets of the same value intersect)."""
    r, n, e = GaussianRandomizer(0.46, 1), 10**4, 26.5
    clear_caches()
    lo, up = ShuffleAccountant(r, n, "zero_out").get_delta_bounds(e)
    jb = few_user_bracket(laws_for(r, e, "zero_out"), n)
    assert jb is not None and jb[1] <= 1.001 * jb[0]
    assert (up - lo) <= 0.01 * lo
    switch(monkeypatch, "FEW_WIDE", False)
    lo0, up0 = ShuffleAccountant(r, n, "zero_out", rel_tol=1e-4).get_delta_bounds(e)
    assert lo <= up0 and lo0 <= up and jb[0] <= up0 and lo0 <= jb[1]


@pytest.mark.parametrize("e", [25.0, 26.5])
def test_gaussian_bracket_at_1e3_narrow_and_below_main(e, monkeypatch):
    """n = 1e3: the bracket of §8.16 is within rel_tol and inside main's (0, Up) (main's engine gives lower 0)."""
    r, n = GaussianRandomizer(0.46, 1), 1000
    clear_caches()
    lo, up = ShuffleAccountant(r, n, "zero_out").get_delta_bounds(e)
    assert 0.0 < lo and up - lo <= 0.01 * lo
    switch(monkeypatch, "FEW_WIDE", False)
    lo0, up0 = ShuffleAccountant(r, n, "zero_out").get_delta_bounds(e)
    assert lo0 <= up and lo <= up0


@pytest.mark.parametrize("delta", [1e-6, 5e-7])
def test_get_epsilon_contract_at_1e3(delta, monkeypatch):
    r, n = GaussianRandomizer(0.46, 1), 1000
    clear_caches()
    a = ShuffleAccountant(r, n, "zero_out").get_epsilon(delta)
    clear_caches()
    assert ShuffleAccountant(r, n, "zero_out").get_delta(a) <= delta
    clear_caches()
    assert ShuffleAccountant(r, n, "zero_out").get_delta(a * (1.0 - XTOL)) > delta
    # a certified lower value above delta at a (1 - xtol): no certified accountant can report a smaller answer
    assert few_user_bracket(laws_for(r, a * (1.0 - XTOL), "zero_out"), n)[0] > delta
    assert a < {1e-6: 25.928735065947933, 5e-7: 26.53544705708614}[delta]  # (main's answers)


def test_switch_off_and_n_up_to_500_unchanged(monkeypatch):
    law = FiniteLaw(np.array([-8.0, 1024.0]), np.array([1 - 2 ** -10, 2 ** -10]))
    g_law = [lw for _, lw in laws_for(GaussianRandomizer(0.5, 1), 20.0, "zero_out") if lw.top_bound() > 0][0]
    on = [cf.small_n_bracket(law, 2.0 ** -12, n) for n in (2, 300, 500)] + \
        [cf.small_n_bracket(g_law, 0.02, n, 0.01) for n in (50, 500)]
    assert cf.small_n_bracket(law, 2.0 ** -12, 501) is not None
    switch(monkeypatch, "FEW_WIDE", False)
    assert cf.few_user_n_max() == cf.JUMP_N_MAX == 500
    assert cf.small_n_bracket(law, 2.0 ** -12, 501) is None
    off = [cf.small_n_bracket(law, 2.0 ** -12, n) for n in (2, 300, 500)] + \
        [cf.small_n_bracket(g_law, 0.02, n, 0.01) for n in (50, 500)]
    assert [tuple(map(float, b)) for b in on] == [tuple(map(float, b)) for b in off]


def test_cost_gate_declines():
    """More than FEW_WIDE_TERMS terms: not formed; a wide bracket at a given rel_tol: declined by the estimate."""
    law = FiniteLaw(np.array([-8.0, 1024.0]), np.array([1 - 2 ** -10, 2 ** -10]))
    assert cf.small_n_bracket(law, 0.5, 10**9) is None  # (window of ~2.5e6 terms)
    g2 = [(g, lw) for g, lw in laws_for(GaussianRandomizer(2.0, 1), 0.04, "zero_out") if lw.top_bound() > 0][0]
    assert cf.small_n_bracket(g2[1], float(g2[0]), 10**4, 0.01) is None
    full = cf.small_n_bracket(g2[1], float(g2[0]), 10**4)
    assert full is not None and full[1] > 10 * full[0]  # (the estimate declined a bracket far from rel_tol)
