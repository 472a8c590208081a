"""The compiled lognormal cells (cpp/kernels/lognormal_cells.hpp, LognormalLaw.cells; docs/accountant.md §2.3).

Independent references: mpmath at 80 digits (exact cell masses and moments on the computed V-edges, by the
Gaussian shift identity, and by mp.quad quadrature on a few laws) and the numpy implementation the kernel
replaced (tests/_lognormal_cells_reference.py: scipy's ndtr and numpy's own exp/log, not glibc's). Every returned
mass and hat weight, with its absolute error bound, must enclose the exact value of its cell; the kernel and the
reference must overlap on the same edges and agree closely where both are accurate.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _lognormal_cells_reference import (cells_reference, interval_prob_reference, oriented, stop_loss_reference,
                                        v_reference)
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sharpdp import _core
from sharpdp.shuffle.laws import LognormalLaw

DPS = 80


def _P(lo, hi, cdf=mp.ncdf):
    """P(lo < V < hi) exactly (mpmath), on the small side (``cdf``: mp.ncdf or a memo of it)."""
    if lo > 0:
        return cdf(-lo) - cdf(-hi)
    return cdf(hi) - cdf(lo)


def _ncdf_memo():
    """mp.ncdf memoised by (argument, working precision): the same values (adjacent cells share their edges)."""
    memo: dict = {}

    def cdf(v):
        key = (v, mp.mp.prec)
        if key not in memo:
            memo[key] = mp.ncdf(v)
        return memo[key]
    return cdf


def exact_cells(law, x0, h, K):
    """(m, w) of the cells between the kernel's own V-edges, weighted, in mpmath (closed forms:
    E[e^{+-rV - r^2/2}; lo < V < hi] = P(lo -+ r < V < hi -+ r))."""
    G, S, vlo, vhi = oriented(law)
    x = x0 + h * np.arange(K + 1, dtype=float)
    lo, hi = law._vint(x[:-1], x[1:])
    out_m, out_w = [], []
    cdf = _ncdf_memo()
    for j in range(K):
        # digits lost to cancellation: Phi(hi) - Phi(lo) over a tiny interval, E[L - x_j] ~ h m from terms ~ |x_j| m
        lost = 0
        if hi[j] > lo[j] and math.isfinite(hi[j] - lo[j]):
            lost += max(0, -math.floor(math.log10(hi[j] - lo[j])))
        lost += max(0, math.ceil(math.log10(abs(x[j]) + abs(law.a) + 1.0) - math.log10(h)))
        with mp.workdps(DPS + lost):
            r, a, wt, hh = mp.mpf(law.r), mp.mpf(law.a), mp.mpf(law.weight), mp.mpf(h)
            if not hi[j] > lo[j]:
                out_m.append(mp.mpf(0))
                out_w.append(mp.mpf(0))
                continue
            lo_ = mp.ninf if math.isinf(lo[j]) else mp.mpf(lo[j])
            hi_ = mp.inf if math.isinf(hi[j]) else mp.mpf(hi[j])
            m = _P(lo_, hi_, cdf)
            e = (a - mp.mpf(x[j])) * m + mp.mpf(G) * _P(lo_ - r, hi_ - r, cdf) - mp.mpf(S) * _P(lo_ + r, hi_ + r, cdf)
            out_m.append(wt * m)
            out_w.append(wt * min(max(e, 0) / hh, m))
    return out_m, out_w


def _check_encloses(law, x0, h, K):
    m, w, em, ew = law.cells(x0, h, K)
    mr, wr = exact_cells(law, x0, h, K)
    with mp.workdps(DPS):
        for j in range(K):
            assert abs(mp.mpf(m[j]) - mr[j]) <= mp.mpf(em[j]), (j, m[j], em[j], float(mr[j]))
            assert abs(mp.mpf(w[j]) - wr[j]) <= mp.mpf(ew[j]), (j, w[j], ew[j], float(wr[j]))
    return m, w, em, ew


def _L(law, v):
    G, S, _, _ = oriented(law)
    r = law.r
    return law.a + G * math.exp(r * v - 0.5 * r * r) - S * math.exp(-r * v - 0.5 * r * r)


pos = st.floats(0.05, 40.0)


@st.composite
def laws(draw):
    r = draw(pos)
    kind = draw(st.sampled_from(["one+", "one-", "two+", "two-"]))
    g = draw(pos)
    s = draw(pos)
    b, bm = {"one+": (g, 0.0), "one-": (0.0, g), "two+": (g, -s), "two-": (-s, g)}[kind]
    a = draw(st.floats(-20.0, 20.0))
    z_lo = draw(st.one_of(st.just(-math.inf), st.floats(-40.0, 8.0)))
    weight = 10.0 ** draw(st.floats(-3.0, 240.0))
    return LognormalLaw(a, b, r, z_lo=z_lo, weight=weight, b_minus=bm)


@st.composite
def grids(draw, law):
    """A grid anchored at L(v0) (v0 anywhere from the far lower to the far upper tail, below the truncation
    point too: cells straddling the range's end), of step L(v0 + dv) - L(v0) for dv from 1e-9 (narrow cells)
    to 3 (wide ones), K in [1, 40]."""
    v0 = draw(st.floats(-40.0, 40.0))
    dv = 10.0 ** draw(st.floats(-9.0, 0.5))
    try:
        x0, x1 = _L(law, v0), _L(law, v0 + dv)
    except OverflowError:
        x0 = x1 = math.inf
    assume(math.isfinite(x0) and math.isfinite(x1) and x1 > x0)
    h = x1 - x0
    # (grid steps below 1e-150 are outside the kernel's range: a cell's moment E[L - x_j], ~ h m, can leave the
    # double range before the division by h; documented in docs/accountant.md §2.3)
    assume(h > 1e-150)
    K = draw(st.integers(1, 40))
    assume(math.isfinite(x0 + h * K))
    return x0, h, K


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_cells_enclose_the_exact_cells(data):
    """Mass and hat weight of every cell, with their bounds, enclose the 80-digit values on the same edges
    (far tails, subnormal masses, huge weights, truncated ranges, one- and two-term laws)."""
    law = data.draw(laws())
    x0, h, K = data.draw(grids(law))
    _check_encloses(law, x0, h, K)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_kernel_and_numpy_reference_agree_on_the_same_edges(data):
    law = data.draw(laws())
    x0, h, K = data.draw(grids(law))
    m, w, em, ew = law.cells(x0, h, K)
    x = x0 + h * np.arange(K + 1, dtype=float)
    rm, rw, rem, rew = cells_reference(law, x0, h, K, law._v(x))
    assert np.all(np.abs(m - rm) <= em + rem) and np.all(np.abs(w - rw) <= ew + rew)
    # where both are accurate (bounds below 1e-14 relative) they are the same up to a few ulp of that
    acc = (em <= 1e-14 * m) & (rem <= 1e-14 * rm)
    assert np.all(np.abs(m - rm)[acc] <= 1e-14 * m[acc])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_edges_agree_with_the_numpy_reference_and_mpmath(data):
    """The kernel's V-edges: within a few ulp of numpy's (different exp/log), and of the exact root."""
    law = data.draw(laws())
    x0, h, K = data.draw(grids(law))
    x = x0 + h * np.arange(K + 1, dtype=float)
    v, vr = law._v(x), v_reference(law, x)
    assert np.array_equal(np.isfinite(v), np.isfinite(vr)) and np.all(v[~np.isfinite(v)] == vr[~np.isfinite(v)])
    f = np.isfinite(v)
    assert np.all(np.abs(v - vr)[f] <= 1e-14 * (1.0 + np.abs(vr[f]) + abs(law.r) + 1.0 / law.r))
    G, S, _, _ = oriented(law)
    with mp.workdps(DPS):
        r = mp.mpf(law.r)
        for xi, vi in zip(x[f], v[f]):
            q = mp.mpf(xi) - mp.mpf(law.a)
            # e^{r v} = w solves G w e^{-r^2/2} - S e^{-r^2/2} / w = q
            c = mp.exp(-r * r / 2)
            A, B = mp.mpf(G) * c, mp.mpf(S) * c
            wv = (q + mp.sqrt(q * q + 4 * A * B)) / (2 * A) if G > 0 else B / (-q)
            ve = mp.log(wv) / r
            assert abs(mp.mpf(vi) - ve) <= mp.mpf(1e-13) * (1 + abs(ve) + r + 1 / r), (xi, vi, float(ve))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_stop_loss_brackets_the_exact_value(data):
    """E[(L - t)_+] (weighted) on {L > t} = (v(t), v_hi) as computed: the bracket holds the 80-digit closed
    form, and overlaps the numpy reference's on the same edges."""
    law = data.draw(laws())
    x0, h, K = data.draw(grids(law))
    t = x0 + h * np.arange(min(K, 8) + 1, dtype=float)
    dn, up = law.stop_loss(t)
    G, S, vlo, vhi = oriented(law)
    lo_v, hi_v = law._vint(t, math.inf)
    rdn, rup = stop_loss_reference(law, t, law._v(t))
    assert np.all(dn <= rup) and np.all(rdn <= up)
    with mp.workdps(DPS):
        r = mp.mpf(law.r)
        for j in range(t.size):
            if not hi_v[j] > lo_v[j]:
                assert dn[j] == 0 and up[j] == 0
                continue
            lo_ = mp.ninf if math.isinf(lo_v[j]) else mp.mpf(lo_v[j])
            hi_ = mp.inf if math.isinf(hi_v[j]) else mp.mpf(hi_v[j])
            e = ((mp.mpf(law.a) - mp.mpf(t[j])) * _P(lo_, hi_) + mp.mpf(G) * _P(lo_ - r, hi_ - r)
                 - mp.mpf(S) * _P(lo_ + r, hi_ + r))
            e = mp.mpf(law.weight) * max(e, 0)
            assert mp.mpf(dn[j]) <= e <= mp.mpf(up[j]), (j, dn[j], float(e), up[j])


@settings(max_examples=200, deadline=None)
@given(st.floats(-45.0, 45.0), st.floats(1e-12, 60.0), st.booleans())
def test_interval_prob_encloses_the_exact_probability(z1, width, to_inf):
    """P(z1 < Z < z2) from the kernel (glibc erf/erfc) with its bound holds the 80-digit value, scalar and array
    paths give the same floats, and the bound overlaps scipy's."""
    from sharpdp.shuffle.laws.lognormal import interval_prob

    z2 = math.inf if to_inf else z1 + width
    p, e = interval_prob(z1, z2)
    pa, ea = interval_prob(np.array([z1]), np.array([z2]))
    assert p == pa[0] and e == ea[0]
    rp, re = interval_prob_reference(np.array([z1]), np.array([z2]))
    assert abs(p - rp[0]) <= e + re[0]
    with mp.workdps(DPS):
        ex = _P(mp.mpf(z1), mp.inf if to_inf else mp.mpf(z2))
        assert abs(mp.mpf(p) - ex) <= mp.mpf(e), (z1, z2, p, e, float(ex))


def test_cells_against_quadrature():
    """A few laws' cells against mp.quad of the mass and of E[L - x_j; cell] (an independent 80-digit
    quadrature, not the closed forms)."""
    for law, x0, h, K in [(LognormalLaw(0.4, 0.9, 1.3, weight=2.0, b_minus=-0.7), 0.1, 1e-5, 6),
                          (LognormalLaw(-0.2, 1.5, 2.5, z_lo=-4.0), -0.19, 0.3, 6),
                          (LognormalLaw(0.0, -1.0, 1.0), -3.0, 1e-3, 6)]:
        m, w, em, ew = law.cells(x0, h, K)
        x = x0 + h * np.arange(K + 1, dtype=float)
        lo, hi = law._vint(x[:-1], x[1:])
        G, S, _, _ = oriented(law)
        with mp.workdps(40):
            r = mp.mpf(law.r)

            def L(v):
                return mp.mpf(law.a) + G * mp.exp(r * v - r * r / 2) - S * mp.exp(-r * v - r * r / 2)

            for j in range(K):
                if not hi[j] > lo[j]:
                    assert m[j] == 0 and w[j] == 0
                    continue
                a_, b_ = mp.mpf(lo[j]), mp.mpf(hi[j])
                mq = law.weight * mp.quad(mp.npdf, [a_, b_])
                eq = law.weight * mp.quad(lambda v: (L(v) - mp.mpf(x[j])) * mp.npdf(v), [a_, b_])
                assert abs(m[j] - mq) <= em[j] and abs(w[j] - min(max(eq, 0) / h, mq)) <= ew[j], (j,)


def test_far_tail_subnormal_and_flushed_masses():
    """Cells at V ~ 37-40 (phi(v*) subnormal or 0) under a huge weight: the bounds still enclose."""
    law = LognormalLaw(0.0, 1.0, 0.8, weight=1e243)
    for v0 in (36.5, 37.6, 38.3, 39.5):
        x0 = _L(law, v0)
        for dv in (1e-9, 1e-4, 0.05):
            _check_encloses(law, x0, _L(law, v0 + dv) - x0, 8)


def test_independent_of_the_grid_extent():
    """Cell k of a grid depends only on x0, h, k: a longer grid repeats a shorter one bit for bit."""
    law = LognormalLaw(0.4, 0.9, 1.3, weight=2.0, b_minus=-0.7)
    G, S, vlo, vhi = oriented(law)
    full = _core.accountant.lognormal_cells(law.a, G, S, law.r, vlo, vhi, law.weight, -1.0, 1e-4, 20000)
    part = _core.accountant.lognormal_cells(law.a, G, S, law.r, vlo, vhi, law.weight, -1.0, 1e-4, 7001)
    for f, p in zip(full, part):
        assert np.array_equal(f[:7001], p)


@pytest.mark.parametrize("args, name", [
    ((0.0, 1.0, 0.0, 1.0, -math.inf, math.inf, 1.0, 0.0, 0.0, 5), "h"),
    ((0.0, 1.0, 0.0, 1.0, -math.inf, math.inf, 1.0, 0.0, 1.0, -1), "K"),
    ((0.0, 1.0, 0.0, 0.0, -math.inf, math.inf, 1.0, 0.0, 1.0, 5), "r"),
    ((0.0, 1.0, 0.0, 1.0, -math.inf, math.inf, -1.0, 0.0, 1.0, 5), "weight"),
    ((0.0, 0.0, 0.0, 1.0, -math.inf, math.inf, 1.0, 0.0, 1.0, 5), "G and S"),
    ((0.0, 1.0, 0.0, 1.0, -math.inf, math.inf, 1.0, math.nan, 1.0, 5), "x0"),
    ((math.inf, 1.0, 0.0, 1.0, -math.inf, math.inf, 1.0, 0.0, 1.0, 5), "a"),
])
def test_bad_arguments_are_named_value_errors(args, name):
    with pytest.raises(ValueError, match=name):
        _core.accountant.lognormal_cells(*args)
