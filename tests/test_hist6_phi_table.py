"""The histogram release's tail probability without the library erfc (docs/histogram_release.md §4.6).

The chunked fast path takes P = Phi(-a), a = |b| <= 6, from a table of Phi(-k/128) and phi(k/128)
(cpp/kernels/histogram_phi_table.hpp) and an 8-term Hermite series, with a proved error bound. Checked
here: every table entry is the nearest double to the exact value (mpmath, 256 bits); the computed P
lies within its bound of Phi(-a) (mpmath) on random, cell-edge and end points, and the bound is tight
(a few ulp, so it is not vacuous); and the bins the kernel decides next to exact boundaries, where |b|
is near the table's end (6) and past it (the library erfc takes over), are the exact bins (mpmath).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import mpmath
import numpy as np
import pytest
from sharpdp._core_loader import core
from sharpdp.histogram import ShiftedLogGaussian

from tests.test_histogram_grid_release import ref_cdf

TABLE = Path(__file__).resolve().parents[1] / "cpp" / "kernels" / "histogram_phi_table.hpp"
U = 2.0**-53


def _nearest(x: mpmath.mpf) -> float:
    """The double nearest to x (x is far from a tie at 256 bits)."""
    d = float(x)
    for cand in (math.nextafter(d, -math.inf), math.nextafter(d, math.inf)):
        if abs(mpmath.mpf(cand) - x) < abs(mpmath.mpf(d) - x):
            d = cand
    return d


def _table() -> list[tuple[float, float]]:
    body = TABLE.read_text().split("kPhiTable[kPhiTableLast + 1][2] = {", 1)[1]
    pairs = re.findall(r"\{(0x[0-9a-f.p+-]+), (0x[0-9a-f.p+-]+)\}", body)
    return [(float.fromhex(t), float.fromhex(p)) for t, p in pairs]


def test_table_entries_are_the_nearest_doubles():
    table = _table()
    assert len(table) == 769
    with mpmath.workprec(256):
        for k, (t, p) in enumerate(table):
            a = mpmath.mpf(k) / 128
            assert t == _nearest(mpmath.ncdf(-a)), k
            assert p == _nearest(mpmath.npdf(a)), k


def _points() -> np.ndarray:
    rng = np.random.default_rng(19)
    edges = (np.arange(768) + 0.5) / 128.0  # the largest |s| = 2^-8, both sides
    return np.concatenate([
        rng.uniform(0.0, 6.0, 3000),
        rng.uniform(0.0, 0.05, 300),
        edges,
        np.nextafter(edges, 0.0),
        np.nextafter(edges, 7.0),
        np.arange(769) / 128.0,
        np.array([0.0, 6.0, np.nextafter(6.0, 0.0), 5e-324, 1e-300, 2.0**-30]),
    ])


def test_tail_probability_within_its_proved_bound_and_tight():
    a = _points()
    p, err = core.histogram._phi_tail(a)
    worst_rel, worst_used = 0.0, 0.0
    with mpmath.workprec(160):
        for ai, pi, ei in zip(a.tolist(), p.tolist(), err.tolist()):
            ref = mpmath.ncdf(-mpmath.mpf(ai))
            miss = abs(mpmath.mpf(pi) - ref)
            assert miss <= ei, (ai, pi, ei, float(miss))
            worst_rel = max(worst_rel, float(miss / ref))
            worst_used = max(worst_used, float(miss / ei))
            # the bound itself is a few ulp of P (it replaces 2^-46 P, the library erfc's assumption)
            assert ei <= 8.0 * U * pi, (ai, ei / (U * pi))
    # a real approximation with a real bound: errors of about an ulp, a sizeable part of the bound
    assert 2.0**-60 < worst_rel <= 4.0 * U
    assert worst_used > 0.05


def test_tail_probability_hook_rejects_outside_the_table():
    for bad in (-1e-300, 6.0 + 2.0**-50, math.inf, math.nan):
        with pytest.raises(ValueError, match="a"):
            core.histogram._phi_tail(np.array([bad]))


@pytest.mark.parametrize("z", [-6.6, -6.2, -6.0, -5.98, -3.0, -1.0 / 256, 0.0, 2.5, 5.99, 6.01, 6.3])
def test_decided_bins_are_exact_where_the_table_ends_and_past_it(z):
    """w0 at 2^0 .. 2^56 units of 2^-64 on both sides of exact bin boundaries whose b is near z:
    inside the table, at its last cell (|b| ~ 6) and past it (the library erfc decides there).
    (sigma = 0.29 and the grid of spacing 1 keep the far-tail bins wide enough to be decided: the
    bound's phi_max db term of §4.2 step 4 defers most draws with |b| > 5 at the default grid.)"""
    from tests.test_histogram_grid_release import ref_bin

    n = 1000.0
    m = ShiftedLogGaussian(0.9, grid_bits=0)
    k = 0
    ns, ws = [], []
    with mpmath.workprec(200):
        j = ref_bin(mpmath.ncdf(mpmath.mpf(z)), n, m.c, m.sigma, k)
        for jj in (j, j + 1):
            w = int(mpmath.floor(mpmath.ldexp(ref_cdf(jj, n, m.c, m.sigma, k), 64)))
            for d in [s * 2**e for e in range(0, 57, 2) for s in (-1, 1)]:
                if 0 <= w + d < 2**64:
                    ns.append(n)
                    ws.append(w + d)
        bins, decided = core.histogram.invert(np.array(ns), np.array(ws, dtype=np.uint64), m.c, m.sigma, k)
        assert 0.3 < decided.mean() < 1.0
        for w, b, d in zip(ws, bins.tolist(), decided.tolist()):
            if not d:
                continue
            lo, hi = mpmath.ldexp(w, -64), mpmath.ldexp(w + 1, -64)
            assert ref_cdf(b, n, m.c, m.sigma, k) <= lo, (z, w, b)
            assert ref_cdf(b + 1, n, m.c, m.sigma, k) >= hi, (z, w, b)
