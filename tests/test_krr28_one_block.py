"""One block of all n users for atom laws of three or more atoms up to ONE_BLOCK_ATOMS count vectors
(docs/accountant_atoms.md §13): the closed form of docs/accountant.md §5.4 instead of the lattice on two blocks,
against 40-digit multinomial sums; the count vectors that can be positive computed alone (the same floats as
over every count vector); the sums of many terms with their error factor."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp.shuffle import PrivUnit, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import blocks as BL
from sharpdp.shuffle.accountant import limits as L


def _exact_mp(randomizer, n: int, eps: float) -> float:
    """D_up (replace-one) in 40-digit arithmetic from the law's stored atoms, for a law with one positive atom a+
    and any number of negative ones: E[S_+] / (n gamma) as the multinomial sum over the count c+ of a+ and the
    counts of the negative atoms (the rest of the n users inactive), enumerated recursively over the negative atoms
    with the partial sum c+ a+ + sum c_j a_j kept positive (every count vector with S > 0, no truncation)."""
    mp.mp.dps = 40
    (g, law), = randomizer.privacy_amplification_laws(eps, "replace")
    vals = [mp.mpf(float(v)) for v in law.values]
    lpr = [mp.log(mp.mpf(float(g)) * mp.mpf(float(p))) for p in law.probs]
    pos = [i for i, v in enumerate(vals) if v > 0]
    neg = [i for i, v in enumerate(vals) if v <= 0]
    assert len(pos) == 1
    lp0 = mp.log(1 - mp.mpf(float(g)))
    lf = [mp.loggamma(i + 1) for i in range(n + 1)]

    def rec(k: int, used: int, part: mp.mpf, lw: mp.mpf) -> mp.mpf:
        """The sum over the counts of the negative atoms neg[k:], given ``used`` users so far, the partial sum
        ``part`` > 0 and the log-weight ``lw`` of the counts so far (without the inactive users)."""
        if k == len(neg):
            c0 = n - used
            return mp.exp(lf[n] - lf[c0] + c0 * lp0 + lw) * part
        i, out, c = neg[k], mp.mpf(0), 0
        while used + c <= n and part + c * vals[i] > 0:
            out += rec(k + 1, used + c, part + c * vals[i], lw + c * lpr[i] - lf[c])
            c += 1
        return out

    total = sum((rec(0, c, c * vals[pos[0]], c * lpr[pos[0]] - lf[c]) for c in range(1, n + 1)), mp.mpf(0))
    return float(total / (n * mp.mpf(float(g))))


@pytest.mark.parametrize("randomizer, n, eps", [
    (PrivUnit(0.75, 0.2, 10), 100, 2.0),  # the regime map's Lo = 0 cell (two blocks of 50 on the lattice)
    (PrivUnit(0.75, 0.2, 10), 100, 1.0),
    (PrivUnit(0.75, 0.2, 10), 100, 1.5),
    (RandomizedResponse(10, 4.0), 100, 3.0),
    (RandomizedResponse(10, 4.0), 100, 3.9),
    (RandomizedResponse(10, 4.0), 150, 2.0),
])
def test_one_block_against_multinomial_sum(randomizer, n, eps):
    acc = ShuffleAccountant(randomizer, n, "replace")
    r = acc.report(eps)
    ref = _exact_mp(randomizer, n, eps)
    assert r.terms.get("block_t") == n  # one block of all users (was t = n / 2 on the lattice)
    assert r.lower <= ref <= r.upper
    assert r.lower > 0.0 and r.upper - r.lower <= 1e-9 * r.lower  # exact up to the block's rounding


def test_privunit_n100_eps2_lower_positive():
    """Lo = 0 at Up = 2.8e-14 before (the centroid law of two blocks of 50 lost the mass above 0): now a positive
    lower value within 1e-9 of the upper one, and the upper value no larger than before."""
    lo, up = ShuffleAccountant(PrivUnit(0.75, 0.2, 10), 100, "replace").get_delta_bounds(2.0)
    assert lo > 0.0 and (up - lo) / lo <= 1e-9
    assert up <= 2.805057212820953e-14  # the lattice's upper value on two blocks


def _full_one_block(gamma, law, n):
    """The block law of one block of all n users with every count vector's value computed (the construction before
    docs/accountant_atoms.md §13), for the comparison below."""
    BL._WEIGHTS_CACHE.clear()
    BL._BLOCK_CACHE.clear()  # (then the weights cache holds this block's entry alone)
    blk = BL.block(gamma, law, n)
    assert blk is not None and blk.t == n and len(BL._WEIGHTS_CACHE) == 1
    at = law.atoms()
    a, pa = at[0][at[1] > 0], at[1][at[1] > 0]
    ms = None
    for key, val in BL._WEIGHTS_CACHE.items():
        if key[0] == n and key[2] == gamma and key[3] == pa.tobytes():
            ms, (counts, pp) = key[1], val[:2]
    assert ms is not None
    hi, lo = BL._split(a)
    value, vmax, finite = BL._kernels().block_values(counts, hi, lo)
    assert finite
    g2 = (2 * a.size * L.U / (1 - 2 * a.size * L.U)) ** 2
    ev = BL._value_err(vmax, g2, ms, a, law.value_error)
    full = BL.Blocks(BL._BlockLaw(np.append(value, 0.0), pp, blk.law.rel_p), n, ev, blk.trunc, fsum=blk.fsum)
    return blk, full


@pytest.mark.parametrize("randomizer, n, eps", [
    (PrivUnit(0.75, 0.2, 10), 100, 0.01),  # about half the count vectors positive
    (PrivUnit(0.75, 0.2, 10), 100, 2.0),
    (RandomizedResponse(10, 4.0), 120, 1.0),
    (RandomizedResponse(10, 8.0), 1000, 0.5),
])
def test_positive_count_vectors_alone_same_floats(randomizer, n, eps):
    (g, law), = randomizer.privacy_amplification_laws(eps, "replace")
    blk, full = _full_one_block(g, law, n)
    assert blk.value_err == full.value_err  # the same vmax, hence the same ev
    assert blk.law.values.size < full.law.values.size
    assert BL.one_block(blk, g, n) == BL.one_block(full, g, n)
    # every computed value the filter left out is below -ev (its terms are 0 in one_block)
    kept = set(blk.law.values[:-2].tolist())
    out = full.law.values[:-1][~np.isin(full.law.values[:-1], list(kept))]
    assert out.size > 0 and float(np.max(out)) < -blk.value_err


def test_sum_nonneg_error_factor():
    rng = np.random.default_rng(7)
    x = rng.random(50_000) ** 8 * 1e-3
    exact = math.fsum(x.tolist())
    assert BL._sum_nonneg(x, -1, False) <= exact <= BL._sum_nonneg(x, 1, False)
    assert BL._sum_nonneg(x, 1, False) / BL._sum_nonneg(x, -1, False) - 1.0 <= 5.0 * x.size * L.U
    assert BL._sum_nonneg(x, 1) == BL._sum_nonneg(x, -1) == exact  # (exact: math.fsum)
    small = x[:100]
    assert BL._sum_nonneg(small, 1, False) == BL._sum_nonneg(small, -1, False) == math.fsum(small.tolist())


def test_former_one_blocks_keep_fsum():
    """A block of all users within the former cap (10-RR eps0 = 8, n = 1000: gamma = 0.0033) keeps the correctly
    rounded sums; PrivUnit n = 100 (176 851 count vectors, above 60 000) takes numpy's sums."""
    (g, law), = RandomizedResponse(10, 8.0).privacy_amplification_laws(0.5, "replace")
    blk = BL.block(g, law, 1000)
    assert blk.t == 1000 and blk.fsum
    (g, law), = PrivUnit(0.75, 0.2, 10).privacy_amplification_laws(0.5, "replace")
    blk = BL.block(g, law, 100)
    assert blk.t == 100 and not blk.fsum


def test_one_block_cap():
    """The larger cap is for one block of all users only: PrivUnit n = 200 (about 700 000 count vectors) keeps
    blocks on the lattice; the count vectors of n = 100 (M* = 100, three atoms) fit."""
    assert math.comb(100 + 3, 3) <= L.ONE_BLOCK_ATOMS
    (g, law), = PrivUnit(0.75, 0.2, 10).privacy_amplification_laws(1.0, "replace")
    assert BL.block(g, law, 100).t == 100
    assert BL.block(g, law, 200).t < 200


@pytest.mark.parametrize("ms, m1", [(40, 3), (25, 4), (60, 3)])
def test_runs_select_the_rows_of_the_row_wise_estimates(ms, m1):
    """The runs (docs/accountant_atoms.md §13) select exactly the rows the row-wise estimates select: the same
    largest |e|, the same rows with |e| >= x and with e > thr, for atoms of either sign of the last one."""
    counts = np.asfortranarray(BL._compositions(ms, m1), dtype=float)
    runs = BL._runs(counts)
    assert runs is not None and int(np.sum(runs.length)) == counts.shape[0]
    rng = np.random.default_rng(ms + m1)
    for trial in range(20):
        a = rng.normal(size=m1) * 10.0 ** rng.uniform(-3, 1, size=m1)
        est = counts[:, 0] * a[0]
        for j in range(1, m1):
            est += counts[:, j] * a[j]
        emax, big = runs.extremes(a)
        assert emax == max(float(np.max(est)), -float(np.min(est)))
        for q in (0.0, 0.3, 0.9, 1.0):
            x = emax * q
            assert np.array_equal(runs.rows_where_abs_at_least(a, x, big), np.flatnonzero(np.abs(est) >= x))
        for thr in (*np.quantile(est, [0.0, 0.1, 0.5, 0.9, 1.0]), float(est[len(est) // 3]), -emax - 1.0):
            assert np.array_equal(runs.rows_above(a, float(thr)), np.flatnonzero(est > thr))
