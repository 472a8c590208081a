"""Review rev48c (session 48): attack on blk48's claim (docs/composition.md §2.32.2) that cpp/kernels/blocks.hpp's
``atom_cells`` (truncation, t reused; Lemma 2.32.1), ``block_values`` (row chunks of 512) and ``law_stats`` /
``tail_sum`` (numpy's pairwise sum repeated) give the same doubles as before. References, compared by float.hex:
session 47's ``atom_cells`` (floor, clamp, |v - x0| / h) replicated one operation at a time in Python floats; the
row-by-row Sum2 loop (tests/test_blk48_block_stats.py ``_values_rowwise``); numpy's own ``np.sum`` / ``np.min`` /
``np.max`` expressions of _BlockLaw. Attacked: -0.0 atoms and origins (v - x0 = -0.0), atoms on cell edges and 1 ulp
below, quotients an integer minus 1 ulp, huge / tiny / subnormal steps, v - x0 overflowing (t = inf), K = 1; chunk
edges 511 / 512 / 513 / 1024 / 1025 rows with m = 1, 2, 3; sums of 1 ... 2^17 + 9 terms around numpy's pairwise
block sizes (8, 16, 128, 8 q +- 1, 2^13 +- 1, 2^16 +- 1), products underflowing to -0.0, -0.0 values inside the range,
zero probabilities, strided inputs, thresholds on atoms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_blk48_block_stats import _values_rowwise

from sharpdp.shuffle.accountant import blocks as BL

C = BL._kernels()
U = 2.0**-53


def _hex(x) -> list[str]:
    return [float(v).hex() for v in np.atleast_1d(np.asarray(x, dtype=float))]


def _old_cells(v, p, x0, h, K, rel_p):
    """Session 47's atom_cells (blocks.hpp before dd075fcf) in Python floats: floor, clamp, fabs(v - x0) / h."""
    top = x0 + float(K) * h
    kmax = float(K - 1)
    m, w, ew = [0.0] * K, [0.0] * K, [0.0] * K
    cnt = [0] * K
    for vi, pin in zip(map(float, v), map(float, p)):
        if not (vi >= x0 and vi < top):
            continue
        t = (vi - x0) / h
        fl = float(np.floor(t))  # (np.floor keeps -0.0 and inf, as std::floor)
        a = 0.0 if fl < 0.0 else fl  # std::max(fl, 0.0) = fl < 0.0 ? 0.0 : fl
        jf = kmax if kmax < a else a  # std::min(a, kmax)
        j = int(jf)
        d = t - jf
        d = 0.0 if d < 0.0 else d
        frac = 1.0 if 1.0 < d else d
        fe = (4.0 * U) * (abs(vi - x0) / h + 1.0)
        m[j] = m[j] + pin
        w[j] = w[j] + pin * frac
        ew[j] = ew[j] + pin * fe
        cnt[j] += 1
    em_o, ew_o = [], []
    for j in range(K):
        r = (float(cnt[j]) + 4.0) * U
        emj = r * m[j]
        ewj = ew[j] * (1.0 + r) + r * w[j]
        em_o.append((emj + rel_p * m[j]) + 1e-300)
        ew_o.append((ewj + rel_p * w[j]) + 1e-300)
    return m, w, em_o, ew_o


def _cmp_cells(v, p, x0, h, K, rel_p=3e-13):
    v, p = np.asarray(v, dtype=float), np.asarray(p, dtype=float)
    got = C.atom_cells(v, p, float(x0), float(h), int(K), float(rel_p))
    ref = _old_cells(v, p, float(x0), float(h), int(K), float(rel_p))
    for g, r in zip(got, ref):
        assert _hex(g) == _hex(r), (x0, h, K)


def test_atom_cells_signed_zeros():
    """v = -0.0 at x0 = +0.0 (v - x0 = -0.0, t = -0.0: trunc gives +0.0 where floor gave -0.0, frac -0.0 vs +0.0) and
    the other sign pairs, K = 1 and more: the same masses, moments and bounds."""
    for x0 in (0.0, -0.0):
        for v0 in (0.0, -0.0):
            for K in (1, 2, 5):
                for p0 in (0.25, 0.0):
                    _cmp_cells([v0, v0, 0.5, 1.7], [p0, 0.25, 0.25, 0.25], x0, 0.5, K)


@pytest.mark.parametrize("h", [0.1, 0.7, 1.0 / 3.0, 1e-300, 5e-324, 1e-310, 1e300, 3.0, 2.0**-40])
def test_atom_cells_edges_and_one_ulp_below(h):
    """Atoms on x0 + j h (as rounded), one ulp either side, quotients an integer minus 1 ulp (v = x0 + t h with
    t = nextafter(j, 0)), atoms at the window's top minus 1 ulp, the x0 itself, beyond the window."""
    rng = np.random.default_rng(int(abs(math.log2(h))) + 7)
    for x0 in (-3.25, 0.0, 17.0, -1e-300, 1e5):
        for K in (1, 2, 3, 9, 64, 257):
            j = rng.integers(-2, K + 2, size=60).astype(float)
            t = np.nextafter(j, 0.0)
            v = np.concatenate([x0 + j * h, np.nextafter(x0 + j * h, -np.inf), np.nextafter(x0 + j * h, np.inf),
                                x0 + t * h, [x0, np.nextafter(x0 + K * h, -np.inf), x0 + K * h]])
            v = v[np.isfinite(v)]
            p = rng.random(v.size)
            _cmp_cells(v, p / p.sum(), x0, h, K)


def test_atom_cells_overflowing_difference():
    """v - x0 overflows (t = inf): both clamp to the last cell with frac 1 and fe = inf."""
    v = [1.7e308, -1.7e308, 1.0, 1.6e308]
    p = [0.25, 0.25, 0.25, 0.25]
    for K in (1, 4, 1000):
        _cmp_cells(v, p, -1.7e308, 1e305, K)
        _cmp_cells(v, p, -1.7e308, 1.7e308 / 500.0, K)


@pytest.mark.parametrize("rows", [1, 511, 512, 513, 1024, 1025, 1537])
@pytest.mark.parametrize("m", [1, 2, 3])
def test_block_values_chunk_edges(rows, m):
    """The chunks' edges with one, two, three atoms; negative atoms, zero counts (-0.0 products), huge counts: the
    row loop's doubles, max |value| and the finite flag."""
    rng = np.random.default_rng(rows * 10 + m)
    a = rng.normal(size=m) * 10.0 ** rng.uniform(-300, 300, size=m)
    a[0] = -abs(a[0])
    counts = np.asfortranarray(rng.integers(0, 3, size=(rows, m)).astype(float) * 10.0 ** rng.integers(0, 6, size=(rows, m)))
    v, vmax, finite = C.block_values(counts, *BL._split(a))
    ref = _values_rowwise(counts, a)
    assert _hex(v) == _hex(ref)
    assert finite == bool(np.all(np.isfinite(ref)))
    assert vmax == max([0.0] + [abs(x) for x in ref if not math.isnan(x)])


def _numpy_stats(v, p):
    nz = v[p > 0]
    mean = float(np.sum(v * p))
    return (float(np.min(v)), float(np.max(v)), float(nz.min()), float(nz.max()), mean,
            float(np.sum((v - mean) ** 2 * p)))


SIZES = [1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 127, 128, 129, 135, 136, 137, 255, 256, 257, 263, 1023, 1024,
         1025, 8191, 8192, 8193, 16383, 16384, 16385, 65535, 65536, 65537, 131081]


@pytest.mark.parametrize("n", SIZES)
def test_law_stats_and_tail_sum_adversarial(n):
    """numpy's doubles at pairwise-block sizes on adversarial data: cancelling signs over 600 decades, -0.0 values
    inside the range, zero probabilities, products underflowing to -0.0, subnormal probabilities; thresholds on atoms
    and between; strided inputs (copied by the binding)."""
    rng = np.random.default_rng(n + 12345)
    for rep in range(4):
        v = rng.standard_normal(n) * np.exp(rng.uniform(-300, 300, n))
        p = rng.random(n)
        if rep == 1:
            v[rng.random(n) < 0.2] = -0.0
            v[rng.random(n) < 0.2] = 0.0
            p[rng.random(n) < 0.4] = 0.0
        if rep == 2:
            p = p * np.exp(rng.uniform(-745, 0, n))  # many subnormal: v p underflows to +-0
            v = v * 1e-300
        if rep == 3:
            v = -np.abs(v)
        v[0], v[-1] = -5.5, 7.25  # non-zero extremes (ok True expected)
        p[0] = p[-1] = 0.5
        p /= p.sum()
        ok, *got = C.law_stats(v, p)
        ref = _numpy_stats(v, p)
        if ok:
            assert _hex(got) == _hex(ref), (n, rep)
        else:
            assert not all(map(math.isfinite, ref[4:]))
        for T in (-math.inf, -1e300, -5.5, 0.0, -0.0, float(v[n // 2]), float(np.median(v)), 7.0, math.nan):
            sel = v > T
            with np.errstate(all="ignore"):  # (T = -inf: inf 0 = NaN, in both)
                r = float(np.sum((v[sel] - T) * p[sel]))
            assert float(C.tail_sum(v, p, T)).hex() == r.hex(), (n, rep, T)
    if n > 2:
        vs, ps = v[::2], p[::2]
        ok, *got = C.law_stats(vs, ps)
        assert not ok or _hex(got) == _hex(_numpy_stats(np.ascontiguousarray(vs), np.ascontiguousarray(ps)))
        assert float(C.tail_sum(vs, ps, 0.5)).hex() == float(np.sum((vs[vs > 0.5] - 0.5) * ps[vs > 0.5])).hex()


def test_sums_of_negative_zeros():
    """All products -0.0 (v < 0 subnormal, p = 0.5: v p rounds to -0.0): numpy 2.x adds its identity 0.0 first and
    returns +0.0; the kernel's 0.0 + pairwise sum must too (a -0.0 would be a moved double)."""
    for n in (1, 2, 7, 8, 9, 129, 8193):
        v = np.full(n, -5e-324)
        v[0] = -1e-323
        p = np.full(n, 0.5 / n)
        p[0] = 0.5
        ok, *got = C.law_stats(v, p)
        assert ok and _hex(got) == _hex(_numpy_stats(v, p))
        assert float(C.tail_sum(v, np.full(n, -0.0), -1.0)).hex() == float(np.sum((v + 1.0) * np.full(n, -0.0))).hex()
