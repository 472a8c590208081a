"""Session 45 (g45): bit-identical savings in the lognormal kernel and the rounding helpers (docs/accountant_tail.md
§69.1-§69.2).

* The compiled lognormal kernel no longer computes the term of a zero coefficient (S = 0: the one-term laws of the
  Gaussian randomizer; or G = 0). Reference: a scalar Python transcription of main's three-term closed form
  (``local`` and ``stop_loss`` of cpp/kernels/lognormal_cells.hpp as they stood, every term computed), on the same
  libm (CPython's ``math.erf``/``erfc``/``log``/``exp`` call the C library's): the kernel's bracket must be the same
  doubles.
* ``mgf.dn`` / ``mgf.up`` form a float64 array in one new array: the same doubles as the expression
  ``x -+ 4 u |x| -+ 1e-300`` evaluated by numpy.
* Whole calls whose far-tail route runs these kernels: main's brackets (recorded, ``machine_same``).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import machine_same
from sharpdp import _core
from sharpdp.shuffle.accountant import mgf

EPS = 2.220446049250313e-16
KU = EPS / 2.0
KTINY = 5e-324
INF = math.inf


def _log(x: float) -> float:
    return -INF if x == 0.0 else (INF if x == INF else math.log(x))


def _v(x, a, G, S, r, logG, logS, lk, lGS):
    q = x - a
    aq = abs(q)
    la = _log(aq)
    d = lk - la
    if d <= 0 and aq > 0:
        xs = 0.0 if d == -INF else math.exp(min(d, 0.0))
        lb_q = la if xs == 0.0 else la + math.log1p(2.0 * xs * xs / (1.0 + math.sqrt(1.0 + 4.0 * xs * xs)))
        if q >= 0:
            v = (lb_q - logG) / r + 0.5 * r if G > 0 else INF
        else:
            v = -(lb_q - logS) / r - 0.5 * r if S > 0 else -INF
    else:
        tk = 0.0 if aq == 0 else math.asinh(0.5 * math.exp(-max(d, 0.0)))
        if q >= 0:
            v = (lGS + tk) / r if G > 0 else INF
        else:
            v = (lGS - tk) / r if S > 0 else -INF
    if G == 0 and q >= 0:
        v = INF
    if S == 0 and q <= 0:
        v = -INF
    return v


def _clip(x, lo, hi):
    t = x if (x >= lo or x != x) else lo
    return t if (t <= hi or t != t) else hi


def _ndtr(z):
    if z < -37.5:
        return 0.0
    x = z * 0.70710678118654752440
    if abs(x) < 0.70710678118654752440:
        return 0.5 + 0.5 * math.erf(x)
    y = 0.5 * math.erfc(abs(x))
    return 1.0 - y if x > 0 else y


def _ndtr_rel(z):
    return (64.0 + 2.0 * min(z * z, 1e4)) * EPS if (math.isfinite(z) and z < 0) else 64.0 * EPS


def _ndtr_flush(z):
    if not (z < -37.5 and math.isfinite(z)):
        return 0.0
    return 1.01 * math.exp(-0.5 * z * z) / (abs(z) * math.sqrt(2.0 * 3.141592653589793)) + 1e-323


def _interval_prob(z1, z2):
    upper = z1 > 0
    zA, zB = (-z1, -z2) if upper else (z2, z1)
    av, bv = _ndtr(zA), _ndtr(zB)
    d = av - bv
    p = d if (d >= 0.0 or d != d) else 0.0
    return p, _ndtr_rel(zA) * av + _ndtr_rel(zB) * bv + KU * p + _ndtr_flush(zA) + _ndtr_flush(zB)


def stop_loss_main(a, G, S, r, vlo, vhi, w, t):
    """main's kernel (every one of the three terms computed), transcribed operation by operation."""
    logG = math.log(G) if G > 0 else 0.0
    logS = math.log(S) if S > 0 else 0.0
    lk = 0.5 * (logG + logS) - 0.5 * r * r if (G > 0 and S > 0) else -INF
    lGS = 0.5 * (logS - logG) if (G > 0 and S > 0) else 0.0
    v_top = _v(INF, a, G, S, r, logG, logS, lk, lGS)
    lo_out, up_out = [], []
    for c in t:
        lo = _clip(_v(c, a, G, S, r, logG, logS, lk, lGS), vlo, vhi)
        hi = _clip(v_top, lo, vhi)
        if not hi > lo:
            lo_out.append(0.0)
            up_out.append(0.0)
            continue
        p0, e0 = _interval_prob(lo, hi)
        pp, ep = _interval_prob(lo - r, hi - r)
        pm, em = _interval_prob(lo + r, hi + r)
        A, Bp, Bm = (a - c) * p0, G * pp, S * pm
        err = abs(a - c) * e0 + G * ep + S * em + 4 * KU * (abs(A) + Bp + Bm)
        val = A + Bp - Bm
        err = err + 4 * KTINY
        pv = val if (val >= 0.0 or val != val) else 0.0
        dv = val - err
        up_out.append(w * (pv + err) * (1 + 1e-12) + 2 * KTINY)
        lw = w * (dv if (dv >= 0.0 or dv != dv) else 0.0) * (1 - 1e-12) - 2 * KTINY
        lo_out.append(min(lw, sys.float_info.max) if (lw >= 0.0 or lw != lw) else 0.0)
    return np.array(lo_out), np.array(up_out)


def _same(got, want) -> bool:
    return np.asarray(got).tobytes() == np.asarray(want).tobytes()


# the Gaussian randomizer's x vs bot part at sigma0 = 1 (GaussianRandomizer(1), n = 1e8, eps = 0.5's concentrated route)
GAUSS1 = (-1.6487212707001173, 0.31731050786291415, 0.0, 2.0, 1.0, INF, 3.1514871875343764)


def test_one_term_law_at_the_captured_thresholds():
    """The thresholds of the concentrated route's upper call (E phi at -m mu_hi, m around n gamma), a slice of them
    and the ends: the kernel's bracket is main's three-term form's, bit for bit."""
    t = 20548374.04839312 + 0.64872127 * np.arange(0, 111707, 997, dtype=float)
    t = np.concatenate([t, [-1.0, 0.0, 1e-300, 0.5, 3.0, 1e3, 1e300]])
    got = _core.accountant.lognormal_stop_loss(*GAUSS1, t)
    want = stop_loss_main(*GAUSS1, t)
    assert _same(got[0], want[0]) and _same(got[1], want[1])
    assert np.all(got[1] > 0) and np.all(got[0] <= got[1])  # (a bracket: not all zeros, which would pass too)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(-5.0, 5.0), lg=st.floats(-8.0, 8.0), r=st.floats(0.05, 6.0), vlo=st.floats(-9.0, 3.0),
       width=st.sampled_from([0.5, 3.0, INF]), lw=st.floats(-5.0, 2.0), which=st.sampled_from(["G", "S", "both"]),
       ts=st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=12))
def test_kernel_is_main_three_term_form(a, lg, r, vlo, width, lw, which, ts):
    """For one-term laws (S = 0 or G = 0) and two-term laws, random thresholds: the same doubles as main's form."""
    G = math.exp(lg) if which in ("G", "both") else 0.0
    S = math.exp(-lg) if which in ("S", "both") else 0.0
    law = (a, G, S, r, vlo, vlo + width, math.exp(lw))
    t = np.array(ts + [a, a + 1e-9, a - 1e-9], float)
    got = _core.accountant.lognormal_stop_loss(*law, t)
    want = stop_loss_main(*law, t)
    assert _same(got[0], want[0]) and _same(got[1], want[1])


def test_zero_coefficient_of_either_sign():
    """G = -0.0 passes the kernel's G >= 0 check: the skipped term's products are -0.0 either way."""
    law = (0.2, -0.0, 1.5, 0.8, -INF, INF, 1.0)
    t = np.linspace(-6.0, 0.1, 41)
    got = _core.accountant.lognormal_stop_loss(*law, t)
    want = stop_loss_main(*law, t)
    assert _same(got[0], want[0]) and _same(got[1], want[1])
    assert np.any(got[1] > 0)


def _dn_expr(x):
    return x - 4 * mgf.U * np.abs(x) - 1e-300


def _up_expr(x):
    return x + 4 * mgf.U * np.abs(x) + 1e-300


SPECIAL = [0.0, -0.0, INF, -INF, math.nan, 5e-324, -5e-324, 1e-300, -1e-300, 1e308, -1.7976931348623157e308]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(SPECIAL)), min_size=1,
                max_size=40))
def test_dn_up_same_doubles(xs):
    x = np.array(xs, float)
    with np.errstate(invalid="ignore", over="ignore"):
        for f, g in ((mgf.dn, _dn_expr), (mgf.up, _up_expr)):
            got, want = f(x), g(x)
            assert got.shape == want.shape and _same(got, want)
            got2, want2 = f(x[::-1].reshape(1, -1)[:, ::2]), g(x[::-1].reshape(1, -1)[:, ::2])  # (a strided view)
            assert got2.shape == want2.shape and _same(got2, want2)
            assert np.shares_memory(f(x), x) is False


def test_dn_up_bound_the_value():
    """Outward: dn(x) < x < up(x) for finite x (the 1e-300 alone at 0), and the input is not written."""
    x = np.array([-3.5, -1e-320, 0.0, 2.0, 1e300])
    keep = x.copy()
    assert np.all(mgf.dn(x) < x) and np.all(mgf.up(x) > x)
    assert _same(x, keep)
    assert mgf.dn(2.0) == _dn_expr(2.0) and mgf.up(np.float64(-2.0)) == _up_expr(np.float64(-2.0))
    assert mgf.up(np.array(3.0)) == _up_expr(np.array(3.0))


@pytest.mark.parametrize("sigma0, n, eps, want", [
    (1.0, 10**8, 0.5, ("0x1.271107c5e96fbp-53", "0x1.27236e9479b93p-53")),  # (the concentrated route)
    (1.0, 10**8, 0.01, ("0x1.d915a3dee2f9dp-32", "0x1.db1cad9eadab0p-32")),  # (the far tail's cells)
])
def test_whole_calls_keep_main_brackets(sigma0, n, eps, want):
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    lo, up = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "zero_out").get_delta_bounds(eps)
    assert machine_same((float(lo).hex(), float(up).hex()), want)


def density_up_main(law, s):
    """main's LognormalLaw.density_up, as it stood (the reference of the in-place form)."""
    from sharpdp.shuffle.accountant.limits import U as _U
    from sharpdp.shuffle.laws.lognormal import _density_log_domain

    s = np.atleast_1d(np.asarray(s, dtype=float))
    out = np.full(s.shape, np.inf)
    r = law.r
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q_lo = (s - law.a) * (1 - 2 * _U)
        lq = np.log(q_lo / law._G)
        v = (lq + 0.5 * r * r) / r
        dv = 64 * _U * (2.0 + np.abs(lq) + abs(math.log(law._G)) + r * r + np.abs(np.log(q_lo))) / r \
            + 64 * _U * np.abs(v)
        vb = np.maximum(v - dv, 0.0)
        ex = np.exp(-0.5 * vb * vb)
        f = law.weight * ex / (math.sqrt(2 * math.pi) * r * q_lo) * (1 + 1e-12)
        low = ~((ex >= 1e-300) & (f >= 1e-300))
        if np.any(low):  # (main's log-domain branch, unchanged: moved into a helper)
            f = np.where(low, _density_log_domain(law.weight, vb, r, q_lo), f)
        good = np.isfinite(s) & (q_lo > 0) & np.isfinite(v) & (v - dv >= -r)  # (main: outside errstate, a warning)
    out[good] = f[good]
    return out


@settings(max_examples=40, deadline=None)
@given(sigma0=st.floats(0.3, 4.0), xs=st.lists(st.floats(-50.0, 1e12), min_size=1, max_size=30),
       extra=st.sampled_from([[], [math.inf, -math.inf, math.nan, 0.0, 1e300]]))
def test_density_up_same_doubles(sigma0, xs, extra):
    """The Gaussian randomizer's lognormal part (and a one-term law): main's density_up bit for bit, and a bound
    that is finite somewhere (not all inf, which would pass too)."""
    from sharpdp.shuffle import GaussianRandomizer
    from sharpdp.shuffle.laws.base import laws_for
    from sharpdp.shuffle.laws.lognormal import LognormalLaw

    law = laws_for(GaussianRandomizer(sigma0, 1), 0.5, "zero_out")[0][1]
    parts = [p for p in getattr(law, "parts", [law]) if isinstance(p, LognormalLaw)]
    s = np.array(xs + extra, float)
    for part in parts + [LognormalLaw(-0.3, 1.7, 1.0 / sigma0)]:
        assert _same(part.density_up(s), density_up_main(part, s))
    assert np.any(np.isfinite(parts[0].density_up(np.geomspace(1.0, 1e9, 50))))


@settings(max_examples=40, deadline=None)
@given(v0=st.floats(-1e6, 1e6), p0=st.floats(0.0, 1.0), ts=st.lists(st.floats(allow_nan=True), min_size=1,
                                                                          max_size=30))
def test_one_atom_stop_loss_same_doubles(v0, p0, ts):
    """FiniteLaw.stop_loss of one atom: main's matmul form's doubles; SumLaw's in-place margins likewise."""
    from sharpdp.shuffle.laws.finite import SubFinite

    t = np.array(ts + [v0, -0.0, 0.0], float)
    law = SubFinite([v0], [p0])
    with np.errstate(all="ignore"):
        s = np.maximum(law.values[None, :] - t[:, None], 0.0) @ law.probs
        rel = max((law.values.size + 4.0) * mgf.U, 1e-12)
        want = (s * (1 - rel), s * (1 + rel))
        got = law.stop_loss(t)
    assert _same(got[0], want[0]) and _same(got[1], want[1])


def test_sum_law_stop_loss_same_doubles():
    """The Gaussian randomizer's atom-plus-lognormal law: the parts' sums from zeros times 1 -+ 1e-12, bit for bit."""
    from sharpdp.shuffle import GaussianRandomizer
    from sharpdp.shuffle.laws.base import laws_for

    law = laws_for(GaussianRandomizer(1.0, 1), 0.5, "zero_out")[0][1]
    assert hasattr(law, "parts")
    t = np.concatenate([np.linspace(-3.0, 30.0, 200), [2.05e7, 1e12]])
    lo, up = np.zeros(t.shape), np.zeros(t.shape)
    for p in law.parts:
        a, b = p.stop_loss(t)
        lo += a
        up += b
    got = law.stop_loss(t)
    assert _same(got[0], lo * (1 - 1e-12)) and _same(got[1], up * (1 + 1e-12))
    assert np.all(got[1] > 0)
