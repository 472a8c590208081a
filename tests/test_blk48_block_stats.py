"""Session 48's block-law kernels (docs/composition.md §2.32): each against the numpy expression it replaces,
bit for bit (float.hex), and the block laws of real rounds built with them against the numpy expressions.

``block_values`` now runs by chunks of rows (row innermost), ``atom_cells`` truncates instead of calling floor,
``law_stats`` / ``tail_sum`` repeat numpy's pairwise sums: none of them may move a double."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle.accountant import blocks as BL
from sharpdp.shuffle.laws import FiniteLaw
from sharpdp.shuffle.laws.finite import SubFinite
from sharpdp.shuffle.randomizers import PrivUnit, RandomizedResponse
from sharpdp.shuffle.laws import laws_for

C = BL._kernels()


def _hex(x) -> list[str]:
    return [float(v).hex() for v in np.atleast_1d(np.asarray(x, dtype=float))]


def _values_rowwise(counts: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The former kernel's loop, one row at a time in Python floats (Sum2 of c hi_0, ..., c lo_{m-1})."""
    hi, lo = BL._split(a)
    m = a.size
    out = np.empty(counts.shape[0])
    for r in range(counts.shape[0]):
        acc, comp = float(counts[r, 0] * hi[0]), 0.0
        for t in range(1, 2 * m):
            j = t if t < m else t - m
            col = float(counts[r, j] * (hi[j] if t < m else lo[j]))
            tot = acc + col
            z = tot - acc
            comp = comp + ((acc - (tot - z)) + (col - z))
            acc = tot
        out[r] = acc + comp
    return out


@pytest.mark.parametrize("rows", [1, 7, 511, 512, 513, 1025, 1600])
def test_block_values_chunks_are_the_row_loop(rows):
    rng = np.random.default_rng(rows)
    a = rng.normal(size=3) * 10.0 ** rng.uniform(-3, 4, size=3)
    counts = np.asfortranarray(rng.integers(0, 200, size=(rows, 3)).astype(float))
    v, vmax, finite = C.block_values(counts, *BL._split(a))
    ref = _values_rowwise(counts, a)
    assert finite and _hex(v) == _hex(ref) and vmax == float(np.max(np.abs(ref)))


def test_block_values_nonfinite_in_a_later_chunk():
    counts = np.zeros((1300, 1))
    counts[1200, 0] = 900.0
    _, _, finite = C.block_values(np.asfortranarray(counts), np.array([1e306]), np.array([0.0]))
    assert not finite


def _numpy_cells(v, p, x0, h, K, rel_p):
    m, w, em, ew = FiniteLaw.cells(SubFinite(v, p), x0, h, K)
    return m, w, em + rel_p * m + 1e-300, ew + rel_p * w + 1e-300


@settings(max_examples=60, deadline=None)
@given(na=st.integers(1, 400), K=st.integers(1, 300), seed=st.integers(0, 2**32 - 1))
def test_atom_cells_on_and_near_cell_edges(na, K, seed):
    """Atoms on cell edges, at x0, just below the window's top and beyond it (t >= K - 1 clamps to the last
    cell): the truncation gives floor's cells."""
    rng = np.random.default_rng(seed)
    x0, h = -float(rng.uniform(0, 50)), float(rng.uniform(1e-3, 0.7))
    j = rng.integers(-3, K + 3, size=na).astype(float)
    v = x0 + j * h  # on the edges (as rounded)
    pick = rng.random(na)
    v = np.where(pick < 0.3, np.nextafter(v, -np.inf), v)
    v = np.where((pick >= 0.3) & (pick < 0.5), np.nextafter(x0 + K * h, -np.inf) * np.ones(na), v)
    v = np.where((pick >= 0.5) & (pick < 0.6), x0, v)
    p = rng.uniform(0.0, 1.0, size=na)
    p /= p.sum()
    rel_p = float(rng.uniform(0, 1e-12))
    got = C.atom_cells(v, p, x0, h, K, rel_p)
    for g, r in zip(got, _numpy_cells(v, p, x0, h, K, rel_p)):
        assert _hex(g) == _hex(r)


def _numpy_stats(v, p):
    nz = v[p > 0]
    mean = float(np.sum(v * p))
    return (float(np.min(v)), float(np.max(v)), float(nz.min()), float(nz.max()), mean,
            float(np.sum((v - mean) ** 2 * p)))


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000, 8191, 8192, 8193,
                               20001, 60001])
def test_law_stats_and_tail_sum_are_numpys_sums(n):
    """numpy's np.sum (the identity 0.0 plus the pairwise sum) at the sizes where its branches change; a kernel
    that summed in another order would differ at some of these (checked: sums of 8192-term chunks differ at
    n >= 8193)."""
    rng = np.random.default_rng(n)
    for rep in range(4):
        v = rng.standard_normal(n) * np.exp(rng.uniform(-15, 15, n))
        p = rng.random(n) * np.exp(rng.uniform(-30, 0, n))
        if rep == 1:
            p[rng.random(n) < 0.3] = 0.0
            p[0] = 0.5
        p /= p.sum()
        ok, *got = C.law_stats(v, p)
        assert ok and _hex(got) == _hex(_numpy_stats(v, p))
        for T in (-1e300, float(np.min(v)) - 1.0, float(np.median(v)), float(np.quantile(v, 0.99)),
                  float(np.max(v)), np.inf):
            sel = v > T
            ref = float(np.sum((v[sel] - T) * p[sel]))
            assert float(C.tail_sum(v, p, T)).hex() == ref.hex()


def test_law_stats_declines_what_numpy_must_decide():
    """A zero extreme (numpy's min / max may return -0.0 or 0.0), a non-finite entry or sum, no positive
    probability: ok is False and _BlockLaw falls back to numpy's expressions. A -0.0 inside the range is taken."""
    p = np.array([0.25, 0.25, 0.5])
    assert not C.law_stats(np.array([1.0, -0.0, 2.0]) * -1.0, p)[0]  # max -0.0
    assert not C.law_stats(np.array([-0.0, 1.0, 2.0]), p)[0]
    assert not C.law_stats(np.array([0.0, 1.0, 2.0]), p)[0]
    assert not C.law_stats(np.array([1.0, np.inf, 2.0]), p)[0]
    assert not C.law_stats(np.array([1.0, np.nan, 2.0]), p)[0]
    assert not C.law_stats(np.array([1.0, 0.5, 2.0]), np.array([0.5, np.nan, 0.5]))[0]
    assert not C.law_stats(np.array([1e300, 0.5, 2.0]), np.array([0.5, 1e300, 0.5]))[0]  # v p overflows
    assert not C.law_stats(np.array([1.0, 0.5, 2.0]), np.zeros(3))[0]
    assert not C.law_stats(np.zeros(0), np.zeros(0))[0]
    v = np.array([-1.0, -0.0, 0.0, 2.0])
    ok, *got = C.law_stats(v, np.full(4, 0.25))
    assert ok and _hex(got) == _hex(_numpy_stats(v, np.full(4, 0.25)))
    law = BL._BlockLaw(np.array([-0.0, 1.0, 2.0]), p, 1e-15)  # the fallback path
    assert law.support() == (0.0, 2.0) and law.mean() == float(np.sum(law.values * law.probs))
    assert law.std() == math.sqrt(float(np.sum((law.values - law.mean()) ** 2 * law.probs)))


def _block_laws():
    rounds = [(RandomizedResponse(10, 4.0), 10**6), (PrivUnit(0.75, 0.2, 10), 10**6), (RandomizedResponse(3, 2.0), 10**5),
              (RandomizedResponse(10, 4.0), 10**4)]
    for rz, n in rounds:
        for eps in (0.0, 0.013, 0.05, 0.4):
            for gamma, law in laws_for(rz, eps, "replace"):
                blk = BL.block(gamma, law, n)
                if blk is not None:
                    yield eps, blk


def test_block_laws_of_real_rounds_are_numpys():
    """The block laws of 10-RR, PrivUnit and 3-RR rounds: mean, std, support, extremes and tails as the numpy
    expressions of session 47's _BlockLaw give them (float.hex)."""
    seen = 0
    for eps, blk in _block_laws():
        law = blk.law
        v, p = law.values, law.probs
        vmin, vmax, smin, smax, mean, var = _numpy_stats(v, p)
        assert _hex([law._vmin, law._vmax, *law.support(), law.mean()]) == _hex([vmin, vmax, smin, smax, mean])
        assert law.std().hex() == math.sqrt(max(var, 0.0)).hex()
        for T in np.quantile(v, [0.0, 0.5, 0.9, 0.999]):
            sel = v > T
            ref = float(np.sum((v[sel] - T) * p[sel])) * (1.0 + 1e-12) * (1.0 + law.rel_p)
            assert law.tail_upper(float(T)).hex() == (0.0 if T >= law._vmax else ref).hex()
        seen += 1
    assert seen >= 8
