"""Exact blocks of users for atom laws (docs/accountant.md §5): larger blocks at large n, the
closed form when one block holds every user (§5.4), the guards that keep the block's
probabilities in the double range, and the power step's skipped frequencies (§3.6.3)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import binom

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import blocks as BL
from sharpdp.shuffle.accountant import limits as L
from sharpdp.shuffle.accountant.driver import lattice_for_two_atoms
from sharpdp.shuffle.randomizers import RandomizedResponse
from _power_reference import l2_distance, power_case


def _exact_krr_mp(k: int, eps0: float, n: int, eps: float, cmax: int = 40) -> float:
    """D_up of k-RR (replace-one) in 40-digit arithmetic: the multinomial sum over the counts of
    the atoms a1 > 0 and a2, a3 < 0 (k >= 3; for k = 2 only a1, a2) among the n users, the
    positive part forcing c1 a1 > |a2| c2 + |a3| c3. Terms with c1 > cmax are left out (their
    probability is below C(n, cmax) (gamma/k)^cmax, negligible for the gammas used here)."""
    mp.mp.dps = 40
    (g, law), = RandomizedResponse(k, eps0).privacy_amplification_laws(eps, "replace")
    vals = [mp.mpf(float(v)) for v in law.values]
    pr = [mp.mpf(float(g)) * mp.mpf(float(p)) for p in law.probs]
    pos = [i for i, v in enumerate(vals) if v > 0]
    neg = [i for i, v in enumerate(vals) if v <= 0]
    assert len(pos) == 1 and len(neg) in (1, 2)
    p0 = 1 - sum(pr)
    a1, q1 = vals[pos[0]], pr[pos[0]]
    total = mp.mpf(0)
    lf = [mp.loggamma(i + 1) for i in range(n + 1)]
    lq1, lp0 = mp.log(q1), mp.log(p0)  # (the logarithms once: the same values as in the loops)
    for c1 in range(1, min(n, cmax) + 1):
        if len(neg) == 1:
            a2, q2 = vals[neg[0]], pr[neg[0]]
            lq2 = mp.log(q2)
            for c2 in range(0, n - c1 + 1):
                s = c1 * a1 + c2 * a2
                if s <= 0:
                    break
                c0 = n - c1 - c2
                lw = lf[n] - lf[c1] - lf[c2] - lf[c0] + c1 * lq1 + c2 * lq2 + c0 * lp0
                total += mp.exp(lw) * s
        else:
            (a2, q2), (a3, q3) = [(vals[i], pr[i]) for i in neg]
            lq2, lq3 = mp.log(q2), mp.log(q3)
            for c2 in range(0, n - c1 + 1):
                if c1 * a1 + c2 * a2 <= 0:
                    break
                for c3 in range(0, n - c1 - c2 + 1):
                    s = c1 * a1 + c2 * a2 + c3 * a3
                    if s <= 0:
                        break
                    c0 = n - c1 - c2 - c3
                    lw = (lf[n] - lf[c1] - lf[c2] - lf[c3] - lf[c0] + c1 * lq1 + c2 * lq2
                          + c3 * lq3 + c0 * lp0)
                    total += mp.exp(lw) * s
    return float(total / (n * mp.mpf(float(g))))


@pytest.mark.parametrize("k,eps0,n,eps", [(10, 8.0, 100, 2.0), (2, 8.0, 100, 4.0), (3, 6.0, 60, 1.0)])
def test_one_block_of_all_users_matches_the_exact_multinomial_sum(k, eps0, n, eps):
    with lattice_for_two_atoms():  # (binary RR: the blocks engine, not the exact two-atom sum)
        rep = ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency="replace").report(eps)
    assert rep.terms["block_t"] == n  # one block: the closed form of §5.4, no lattice
    exact = _exact_krr_mp(k, eps0, n, eps)
    assert rep.lower <= exact <= rep.upper
    assert rep.upper - rep.lower <= 1e-9 * exact


def _exact_binary_rr_tails(eps0: float, n: int, eps: float, width: float = 14.0) -> float:
    """D_up of binary RR (replace-one) at large n: the active count A ~ Bin(n, gamma) (window of
    +-width sd), and given A the stop-loss of c ~ Bin(A, 1/2) in closed form,
    E[(c - y)_+] = (A/2) P(Bin(A - 1, 1/2) >= j0 - 1) - y P(Bin(A, 1/2) >= j0), j0 = floor(y) + 1
    (scipy's binomial tails; the cancellation costs about 4 of their 15 digits here)."""
    (g, law), = RandomizedResponse(2, eps0).privacy_amplification_laws(eps, "replace")
    v_neg, v_pos = law.values
    d = v_pos - v_neg
    sa = math.sqrt(n * g * (1 - g))
    A = np.arange(max(1, int(n * g - width * sa)), min(n, int(n * g + width * sa)) + 1)
    y = -A * v_neg / d
    j0 = np.floor(y) + 1
    inner = (A / 2) * binom.sf(j0 - 2, A - 1, 0.5) - y * binom.sf(j0 - 1, A, 0.5)
    return d * math.fsum((binom.pmf(A, n, g) * np.maximum(inner, 0)).tolist()) / (n * g)


def test_binary_rr_tail_reference_matches_the_trinomial_sum():
    # the reference of the next test against a direct sum (n = 1000, every count)
    (g, law), = RandomizedResponse(2, 1.0).privacy_amplification_laws(0.1487, "replace")
    (a, b), (pa, pb) = law.values, g * law.probs
    n = 1000
    tot = 0.0
    for n1 in range(n + 1):
        n2 = np.arange(n - n1 + 1)
        tot += binom.pmf(n1, n, pa) * np.dot(binom.pmf(n2, n - n1, pb / (1 - pa)), np.maximum(n1 * a + n2 * b, 0.0))
    assert _exact_binary_rr_tails(1.0, n, 0.1487, width=40.0) == pytest.approx(tot / (n * g), rel=1e-11)


@pytest.mark.parametrize("eps", [3e-4, 1e-3])
def test_large_blocks_bracket_the_exact_value_at_n_1e8(eps):
    n = 10**8
    with lattice_for_two_atoms():  # (the blocks engine, not the exact two-atom sum)
        rep = ShuffleAccountant(RandomizedResponse(2, 1.0), n, adjacency="replace").report(eps)
    assert rep.terms["block_t"] > 500  # the atom cap grows with n (docs/accountant.md §5.2)
    exact = _exact_binary_rr_tails(1.0, n, eps)
    assert rep.lower <= exact * (1 + 1e-9) and exact * (1 - 1e-9) <= rep.upper
    assert rep.rel_gap <= 1e-2


def test_block_probabilities_stay_in_the_double_range(monkeypatch):
    # with a very large atom cap, Pascal's triangle would overflow beyond row 1029 (NaN
    # probabilities): the guards cap M* at 1000 and keep p_min^M* >= e^-650
    monkeypatch.setattr(BL, "BLOCK_ATOMS_MAX", 10**7)
    (g, law), = RandomizedResponse(2, 1.0).privacy_amplification_laws(1e-3, "replace")
    blk = BL._block_law(g, law, 10**9)
    assert blk is not None
    counts_max = 1000
    assert np.all(np.isfinite(blk.law.probs)) and np.all(blk.law.probs >= 0)
    assert abs(float(np.sum(blk.law.probs)) - 1.0) <= 1e-12
    assert blk.t * g < counts_max  # M* >= t gamma and M* <= 1000
    assert 10**9 % blk.t == 0


def test_atom_cap_grows_like_sqrt_n():
    assert BL._atom_cap(10**4) == L.BLOCK_ATOMS_MIN
    assert BL._atom_cap(10**8) == 200_000
    assert BL._atom_cap(10**12) == L.BLOCK_ATOMS_MAX


def test_power_step_bound_covers_the_skipped_frequencies():
    """Large n: most frequencies have |z|^n far below the double range and skip the complex
    log/exp (q = 0 there, docs/accountant.md §3.6.3); |Q~ - z^n|_2 stays within the returned
    bound against 50-digit arithmetic."""
    n = 20000
    _, Q, err, _, zs = power_case(5, n)
    skipped = sum(1 for k, zk in enumerate(zs) if Q[k] == 0 and abs(zk) < 0.99)
    assert skipped > 64 // 4
    assert l2_distance(Q, zs, n) <= err


def test_large_blocks_overlap_small_blocks_privunit(monkeypatch):
    # PrivUnit (three atoms, no closed form at n = 1e8): the bracket with the large blocks of
    # _atom_cap(1e8) and the one with the former small blocks (<= 60 000 count vectors, at most 48
    # active users per block on average: t = 64) are both certified, so they overlap
    from sharpdp.shuffle.randomizers import PrivUnit

    n, eps = 10**8, 1e-3
    big = ShuffleAccountant(PrivUnit(0.75, 0.2, 10), n, adjacency="replace").report(eps)
    BL._BLOCK_CACHE.clear()
    monkeypatch.setattr(BL, "_atom_cap", lambda n: 60_000)
    monkeypatch.setattr(BL, "_divisors_desc", lambda n, top: (64,))
    small = ShuffleAccountant(PrivUnit(0.75, 0.2, 10), n, adjacency="replace").report(eps)
    BL._BLOCK_CACHE.clear()
    assert big.terms["block_t"] > small.terms["block_t"] == 64
    assert big.lower <= small.upper and small.lower <= big.upper
    assert big.rel_gap <= 1e-2 and small.rel_gap <= 1e-2


# --------------------------------------------------------------------------- truncation sized by the value (§5.2)
def _dup_two_atoms(values, probs, gamma: float, n: int) -> float:
    """D_up of a two-atom law a < b: S = M a + C (b - a), M ~ Bin(n, gamma), C | M ~ Bin(M, p_b)."""
    o = np.argsort(values)
    a, b = float(values[o[0]]), float(values[o[1]])
    pb = float(probs[o[1]])
    if b <= 0.0:
        return 0.0
    mu, sd = n * gamma, math.sqrt(n * gamma * (1.0 - gamma))
    M = np.arange(max(1, int(mu - 45 * sd - 10)), min(n, int(mu + 45 * sd + 10)) + 1)
    pM = binom.pmf(M, n, gamma)
    Mf = M.astype(float)
    t = -Mf * a / (b - a)
    cstar = np.where(t >= 0, np.floor(t) + 1, 0.0)
    ok = (cstar <= Mf) & (pM > 0)
    M, Mf, pM, cstar = M[ok], Mf[ok], pM[ok], cstar[ok]
    P = binom.sf(cstar - 1, M, pb)
    EC = Mf * pb * binom.sf(cstar - 2, M - 1, pb)
    return math.fsum((pM * (Mf * a * P + (b - a) * EC)).tolist()) / (n * gamma)


def _krr_reference(k: int, eps0: float, n: int, adjacency: str, eps: float) -> tuple[float, float]:
    """(lower, upper) reference of the accountant's quantity max over laws of D_up (two-atom laws only)."""
    from sharpdp.shuffle.laws import laws_for

    lo = hi = 0.0
    for gamma, law in laws_for(RandomizedResponse(k, eps0), eps, adjacency):
        v, p, err = np.asarray(law.values, float), np.asarray(law.probs, float), law.value_error
        assert v.size == 2
        lo = max(lo, _dup_two_atoms(v - err, p, float(gamma), n) * (1 - 1e-6))
        hi = max(hi, _dup_two_atoms(v + err, p, float(gamma), n) * (1 + 1e-6))
    return lo, hi


def test_krr_tiny_delta_not_floored_by_block_truncation():
    """Larger exact blocks (M* < t) charged the truncation term 1.01e-40 whatever the value: 2-RR eps0 = 1,
    n = 1e4, eps = 0.1 has D_up = 2.7e-55 (exact), the small blocks gave [7.0e-57, 9.5e-55], the large ones
    [0, 1.01e-40]. The certified value must stay near the truth (and above it)."""
    lo_ref, hi_ref = _krr_reference(2, 1.0, 10**4, "zero_out", 0.1)
    assert 1e-56 < lo_ref <= hi_ref < 1e-54
    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 10**4, "zero_out")
    lo, up = acc.get_delta_bounds(0.1)
    assert up >= lo_ref
    assert lo <= hi_ref
    assert up < 1e-50  # the defect: 1.01e-40


def test_krr_get_epsilon_tiny_delta_not_floored_by_block_truncation():
    """The same floor made get_epsilon(1e-50) jump to the structural zero of the laws: 0.62 instead of
    ~0.096. The answer must keep the exact D_up below delta, and not be 6x too large."""
    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 10**4, "zero_out")
    e = acc.get_epsilon(1e-50)
    assert acc.get_delta(e) <= 1e-50
    assert _krr_reference(2, 1.0, 10**4, "zero_out", e)[0] <= 1e-50
    assert e < 0.2  # the defect: 0.6202


def test_one_block_tiny_value_not_floored_by_truncation():
    """One block of all users (§5.4) with M* < t: the closed form is exact to ~1e-11 relative, so a fixed
    truncation charge of 1e-40 dominated the error of a value of 7.6e-37 (bracket width 2e-40, 2.6e-4
    relative). The charge now scales with the value: the bracket holds the binomial-sum reference and is
    tight relative to it."""
    from sharpdp.shuffle.accountant.driver import certify
    from sharpdp.shuffle.laws import FiniteLaw

    vals, probs, gamma, n = np.array([-1.0, 0.25]), np.array([0.95, 0.05]), 0.2, 400
    law = FiniteLaw(vals, probs)
    blk = BL.block(gamma, law, n)
    assert blk.t == n and 0.0 < blk.trunc  # one block, truncated (M* < t)
    ref = _dup_two_atoms(vals, probs, gamma, n)
    assert 1e-38 < ref < 1e-36
    r = certify(law, gamma, n, 1e-2, 1)
    assert r.lower <= ref * (1 + 1e-9) and r.upper >= ref * (1 - 1e-9)
    assert r.upper - r.lower <= 1e-5 * ref  # the defect: 2.02e-40 (2.6e-4 ref)
    assert blk.trunc <= 1e-5 * ref


@pytest.mark.parametrize("vals, probs, gamma, n", [
    ((-0.61588936, 0.40554752), (0.5, 0.5), 0.5378828427399903, 10**4),  # 2-RR eps0 = 1, eps = 0.1: ~2.7e-55
    ((-0.61588936, 0.40554752), (0.5, 0.5), 0.5378828427399903, 1000),
    ((-1.0, 0.25), (0.95, 0.05), 0.2, 400),  # one block (~7.6e-37)
    ((-0.5, 1.0), (0.7, 0.3), 0.3, 10**5),
    ((-0.2, 1.0), (0.6, 0.4), 0.05, 10**6),  # E[L] > 0: D_up ~ E[L]
])
def test_value_estimate_is_within_a_factor_10_of_the_exact_value(vals, probs, gamma, n):
    """The estimate that sizes the truncation (§5.2) is not a bound, but it must be close to D_up: a
    charge of 1e-6 est is then negligible against the value (exact reference: binomial sums)."""
    v, p = np.array(vals), np.array(probs)
    ref = _dup_two_atoms(v, p, gamma, n)
    assert ref > 0
    est = BL._log_value_estimate(gamma, v, p, n)
    assert abs(est - math.log(ref)) <= math.log(10.0), (math.exp(est), ref)


def test_get_epsilon_large_n_check_at_eps0_does_not_lose_the_tilt():
    """get_epsilon checks the blanket bound at eps0, where the 2-RR law's top atom is ~0 and D_up is
    astronomically small: a large block with a tiny truncation charge put mass ~e^-196 at V >= 0 and the
    engine's tilt refused it (RuntimeError). Small blocks there (§5.2); the answer is that of the large
    blocks with the fixed 1e-40 charge (5.639e-4) and keeps get_delta below delta."""
    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 10**8, adjacency="replace")
    e = acc.get_epsilon(1e-10)
    assert 5.6e-4 < e < 5.7e-4
    assert acc.get_delta(e) <= 1e-10
