"""Session 46 (g46): a lognormal law's stop-loss bracket at many sorted thresholds by the chords and secants between
every 32nd of them (docs/accountant_tail.md §71.1, switch ``limits.G46_STOP_LOSS_CHORDS``).

References: the true E[(L - t)_+] by mpmath's closed form at 50 digits (independent of the kernel), the kernel's own
bracket at every threshold (the switch off), and the whole call's bracket with the switch off."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _main_floats34 import switch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp import _core
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.laws.lognormal import LognormalLaw

K = _core.accountant
#: the Gaussian randomizer's (sigma0 = 1) x vs bottom lognormal part at n = 1e8 (oriented: a, G, S, r, v_lo, v_hi, w)
GAUSS_PART = (-2.7182818284590327, 0.31731050786291415, 0.0, 2.0, 1.0, math.inf, 3.1514871875343764)


def true_stop_loss(p, t, dps=50):
    """E[(L - t)_+] of w N(0,1) on (v_lo, v_hi) pushed through L = a + G e^{rv - r^2/2} - S e^{-rv - r^2/2}, by the
    closed form (a - t) P0 + G P(. - r) - S P(. + r) over {L > t}, its edge the root of the quadratic in e^{rv}."""
    a, G, S, r, vlo, vhi, w = (mp.mpf(x) for x in p)
    with mp.workdps(dps):
        t = mp.mpf(t)
        c = mp.e ** (-r * r / 2)
        q = t - a
        # G c y^2 - q y - S c = 0, y = e^{rv}
        if G == 0:
            v = -mp.inf if q >= 0 else mp.log(S * c / -q) / r  # (not used below: G > 0 in these tests)
        elif S == 0:
            v = mp.log(q / (G * c)) / r if q > 0 else -mp.inf
        else:
            y = (q + mp.sqrt(q * q + 4 * G * S * c * c)) / (2 * G * c)
            v = mp.log(y) / r
        lo = max(v, vlo)
        if not lo < vhi:
            return mp.mpf(0)

        def P(x1, x2):
            return mp.ncdf(x2) - mp.ncdf(x1)

        return w * ((a - t) * P(lo, vhi) + G * P(lo - r, vhi - r) - S * P(lo + r, vhi + r))


def closed_form_thresholds(m0=54_000_000, count=20_000, step=1.718):
    """Thresholds like the closed form's -m mu at n = 1e8 (sorted, spaced by about 1.7)."""
    return (m0 + step * np.arange(count)).astype(float)


def test_chords_contain_the_true_values_gauss_part():
    t = closed_form_thresholds()
    lo, up = K.lognormal_stop_loss_chords(*GAUSS_PART, t, 4096)
    lo0, up0 = K.lognormal_stop_loss(*GAUSS_PART, t)
    # interior points (not nodes: 32 does not divide these indices) and nodes, against mpmath
    for k in (1, 17, 31, 33, 5_000, 5_001, 12_345, 19_998, 19_999, 0, 32, 19_968):
        f = true_stop_loss(GAUSS_PART, t[k])
        assert lo[k] <= f <= up[k], k
    # the kernel's own brackets are each within the chords' (never tighter by more than the nodes' widths)
    assert np.all(lo <= up)
    rel = (up - lo) / lo
    assert rel.max() <= 1e-9 + 2 * ((up0 - lo0) / lo0).max()
    # the nodes are the kernel's floats bit for bit
    nodes = np.arange(0, t.size, 32)
    assert np.array_equal(lo[nodes], lo0[nodes]) and np.array_equal(up[nodes], up0[nodes])
    assert lo[-1] == lo0[-1] and up[-1] == up0[-1]
    # and the chords did take the gaps (otherwise this rule would be the kernel itself)
    assert not np.array_equal(lo, lo0)


def test_fewer_than_least_or_unsorted_is_the_kernel():
    t = closed_form_thresholds(count=5000)
    lo0, up0 = K.lognormal_stop_loss(*GAUSS_PART, t)
    lo, up = K.lognormal_stop_loss_chords(*GAUSS_PART, t, 5001)  # (too few)
    assert [x.hex() for x in lo] == [x.hex() for x in lo0] and [x.hex() for x in up] == [x.hex() for x in up0]
    tu = t.copy()
    tu[[10, 20]] = tu[[20, 10]]  # (not sorted)
    lo, up = K.lognormal_stop_loss_chords(*GAUSS_PART, tu, 16)
    lou, upu = K.lognormal_stop_loss(*GAUSS_PART, tu)
    assert np.array_equal(lo, lou) and np.array_equal(up, upu)
    tn = t.copy()
    tn[7] = math.inf  # (not finite)
    lo, up = K.lognormal_stop_loss_chords(*GAUSS_PART, tn, 16)
    lon, upn = K.lognormal_stop_loss(*GAUSS_PART, tn)
    assert np.array_equal(lo, lon) and np.array_equal(up, upn)


def test_zero_beyond_the_top_and_the_gaps_below_the_mean():
    """A truncated law (v_hi finite): f = 0 beyond its top (exactly 0 from the chords too); below the law's bottom f
    is linear (a - t) P + G Q: the chords are exact there up to the allowances."""
    p = (0.0, 1.0, 0.0, 1.0, -1.0, 2.0, 0.5)
    top = math.exp(2.0 - 0.5)
    t = np.linspace(-3.0, top + 3.0, 9_000)
    lo, up = K.lognormal_stop_loss_chords(*p, t, 100)
    beyond = t > top + 0.1  # (the gaps after the first node beyond the top; the one across it has chords > 0)
    assert np.all(up[beyond] == 0.0) and np.all(lo[beyond] == 0.0)
    lo0, up0 = K.lognormal_stop_loss(*p, t)
    assert np.all(up0[beyond] == 0.0)
    for k in (5, 77, 1_001, 3_333, 6_000, 8_001):
        f = true_stop_loss(p, t[k])
        assert lo[k] <= f <= up[k], k


law_params = st.tuples(
    st.floats(-5.0, 5.0),  # a
    st.floats(0.01, 10.0),  # G
    st.sampled_from([0.0, 0.3, 2.0]),  # S
    st.floats(0.2, 3.0),  # r
    st.sampled_from([-math.inf, -1.0, 0.5]),  # v_lo
    st.sampled_from([math.inf, 3.0]),  # v_hi
    st.floats(0.1, 4.0),  # w
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=law_params, lo_q=st.floats(0.0, 0.9), span=st.floats(0.05, 8.0), count=st.integers(100, 3000),
       seed=st.integers(0, 2**31 - 1))
def test_property_true_value_inside(p, lo_q, span, count, seed):
    """Random laws and sorted thresholds (with ties), every value's bracket contains mpmath's true value at sampled
    thresholds, nodes or not; the nodes are the kernel's floats."""
    rng = np.random.default_rng(seed)
    a, G, S, r, vlo, vhi, w = p
    # thresholds around the law's body: a + G e^{r x - r^2/2} for x in a normal-range window
    x = np.sort(rng.uniform(-3.0 + 6.0 * lo_q, -3.0 + 6.0 * lo_q + span, count))
    t = a + G * np.exp(r * x - r * r / 2) - S * np.exp(-r * x - r * r / 2)
    t = np.sort(np.round(t, 6))  # (ties)
    lo, up = K.lognormal_stop_loss_chords(*p, t, 50)
    lo0, up0 = K.lognormal_stop_loss(*p, t)
    nodes = np.arange(0, t.size, 32)
    assert np.array_equal(lo[nodes], lo0[nodes]) and np.array_equal(up[nodes], up0[nodes])
    assert np.all(lo <= up)
    for k in rng.choice(t.size, size=6, replace=False):
        f = true_stop_loss(p, t[k])
        assert lo[k] <= f <= up[k], (k, t[k])


def test_law_stop_loss_reads_the_switch(monkeypatch):
    law = LognormalLaw(-1.0, 0.8, 1.5, z_lo=0.5, weight=2.0)
    t = np.linspace(20.0, 20.06, 6000)
    switch(monkeypatch, "G46_STOP_LOSS_CHORDS", 0)
    off = law.stop_loss(t)
    k = law.a, law._G, law._S, law.r, law._vlo, law._vhi, law.weight
    ker = K.lognormal_stop_loss(*k, t)
    assert np.array_equal(off[0], ker[0]) and np.array_equal(off[1], ker[1])
    switch(monkeypatch, "G46_STOP_LOSS_CHORDS", 4096)
    on = law.stop_loss(t)
    assert not np.array_equal(on[0], off[0])
    assert np.all(on[0] <= off[1]) and np.all(off[0] <= on[1])  # (both brackets of the same values)
    short = law.stop_loss(t[:4000])  # (below the switch's size: the kernel's floats)
    assert np.array_equal(short[0], ker[0][:4000])


@pytest.mark.parametrize("eps", [0.1, 2.0])
def test_whole_call_within_1e_9_of_the_kernels(monkeypatch, eps):
    """GaussianRandomizer(1), n = 1e8 (the closed form's 2 x 111,707 thresholds): the bracket with the chords overlaps
    the kernel's and is within 1e-9 relative of it (the chords' tolerance, summed with positive weights)."""
    out = {}
    for v in (0, 4096):
        switch(monkeypatch, "G46_STOP_LOSS_CHORDS", v)
        out[v] = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8, "zero_out").get_delta_bounds(eps)
    (l0, u0), (l1, u1) = out[0], out[4096]
    assert l1 <= u0 and l0 <= u1
    assert (l1, u1) != (l0, u0)
    assert abs(l1 - l0) <= 1e-9 * l0 and abs(u1 - u0) <= 1e-9 * u0
