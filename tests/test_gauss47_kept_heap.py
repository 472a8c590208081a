"""Session 47 (gauss47): the closed form's entry points run inside the kept C heap at large n, and numpy's log1p once
per distinct rate in the tilted curvature (docs/accountant_tail.md §73.1, §73.2): speed only, the same floats.

References: the whole call with ``limits.BODY45_KEPT_HEAP`` off (the heap released as glibc's default does), main's
recorded brackets (session 47's branch point, ``machine_same``), numpy's log1p over the spread array element by
element, and mpmath's log1p at 40 digits (the values themselves, independent of numpy)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _main_floats34 import machine_same, switch
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, concentrated_tilted, heap_keep, limits

#: main's brackets at the branch point of session 47 (GaussianRandomizer(sigma0, 1), n, eps): float.hex
MAIN = {
    (1.0, 10**8, 0.1): ("0x1.51b2a99cdff54p-43", "0x1.51d35e52740a5p-43"),
    (1.0, 10**8, 1.0): ("0x1.34467f6a08363p-59", "0x1.3459c244d265ep-59"),
    (2.0, 10**6, 0.001): ("0x1.cfa1e12f22c3fp-14", "0x1.d0c390890e7d8p-14"),
}


def _bracket(s, n, eps):
    return tuple(float(x) for x in ShuffleAccountant(GaussianRandomizer(s, 1), n).get_delta_bounds(eps))


@pytest.mark.parametrize("cell", sorted(MAIN))
def test_brackets_are_mains(cell):
    got = _bracket(*cell)
    assert got[0] <= got[1]
    assert machine_same(got, tuple(float.fromhex(x) for x in MAIN[cell]))


def test_kept_heap_off_gives_the_same_doubles(monkeypatch):
    on = _bracket(1.0, 10**8, 1.0)
    switch(monkeypatch, "BODY45_KEPT_HEAP", False)
    off = _bracket(1.0, 10**8, 1.0)
    assert [float.hex(x) for x in on] == [float.hex(x) for x in off]


def test_closed_form_runs_inside_the_kept_heap(monkeypatch):
    """At n >= BODY45_KEPT_HEAP_N the per-m work of the closed form (its numbers of active users) runs with the heap
    kept (depth >= 1 where glibc is present); below that n, and with the switch off, outside it."""
    seen = []
    orig = concentrated._m_range

    def probe(*a, **k):
        seen.append(heap_keep.depth())
        return orig(*a, **k)

    monkeypatch.setattr(concentrated, "_m_range", probe)
    switch(monkeypatch, "BODY45_KEPT_HEAP", True)
    _bracket(1.0, 10**8, 1.0)
    assert seen, "the closed form was not reached"
    glibc = heap_keep._glibc() is not None
    assert all(d >= 1 for d in seen) if glibc else all(d == 0 for d in seen)
    assert heap_keep.depth() == 0  # (every block closed)
    seen.clear()
    switch(monkeypatch, "BODY45_KEPT_HEAP", False)
    _bracket(1.0, 10**8, 1.0)
    assert seen and all(d == 0 for d in seen)
    seen.clear()
    switch(monkeypatch, "BODY45_KEPT_HEAP", True)
    monkeypatch.setattr(limits, "BODY45_KEPT_HEAP_N", 10**9)
    _bracket(1.0, 10**8, 1.0)
    assert seen and all(d == 0 for d in seen)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1e6, allow_nan=False), min_size=1, max_size=6),
       st.integers(min_value=1, max_value=400), st.integers(min_value=0, max_value=2**31 - 1))
def test_log1p_once_per_distinct_value_is_the_spread_log1p(vals, size, seed):
    """The premise of §73.2: numpy's log1p of the distinct values, then spread, is the spread array's log1p bit for
    bit (also from a one-element array); and each value is log1p within 1 ulp of mpmath's."""
    h = np.array(vals, dtype=float)
    inv = np.random.default_rng(seed).integers(0, h.size, size)
    once = np.log1p(h)[inv]
    spread = np.log1p(h[inv])
    assert [float.hex(x) for x in once] == [float.hex(x) for x in spread]
    one = np.full(size, np.log1p(np.full(1, h[0]))[0])
    assert [float.hex(x) for x in one] == [float.hex(x) for x in np.log1p(np.full(size, h[0]))]
    for x in h:
        want = float(mp.log1p(mp.mpf(float(x))))
        got = float(np.log1p(np.full(1, x))[0])
        assert abs(got - want) <= 2 * math.ulp(want)


#: main's tilted_curv at the branch point on GaussianRandomizer(1, 1)'s x vs bot law (eps = 1, shifted up), n = 1e8,
#: the closed form's T0, m = round((n - 1) gamma - 40000 + 37 k): (sum, first, last) as float.hex, by the options
MAIN_CURV = {
    (): ("0x1.66730d0476d1ap-67", "0x1.55a15f4e181aap-78", "0x1.512a2f62fcc1fp-78"),
    ("chords",): ("0x1.58d43b591d078p-67", "0x1.48a86b161ba60p-78", "0x1.4458461dc9563p-78"),
    ("chords", "local", "split"): ("0x1.5873ff0ffc43dp-67", "0x1.484ca4f701408p-78", "0x1.43fdce626801ep-78"),
}


def test_tilted_curv_is_mains():
    """tilted_curv with one rate, with chord rates and with §41.4's split (its _split_at's log1p) against main's
    values (before §73.2), and with one rate against the chord rates' formula fed one rate (the spread and the
    one-element paths agree)."""
    from sharpdp.shuffle.accountant import far_tail
    from sharpdp.shuffle.laws import laws_for

    g, law = laws_for(GaussianRandomizer(1.0, 1), 1.0, "zero_out")[0]
    g, run = float(g), law.shifted(up=True)
    n = 10**8
    cb = concentrated.certify(run, g, n, 1e-2, far_tail.choose_T0)
    assert cb is not None
    T0 = cb.T0
    mu_lo, mu_hi, sig2, _ = concentrated._moments(run, T0)
    m = np.arange((n - 1) * g - 40000, (n - 1) * g + 40000, 37.0).round()
    mh = concentrated._up(m * mu_hi)
    Q = concentrated._up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)
    for opts, want in MAIN_CURV.items():
        v = concentrated_tilted.tilted_curv(run, T0, m, mh, Q, mu_lo, mu_hi, **{k: True for k in opts})
        assert v.size == m.size and np.all(np.isfinite(v)) and np.all(v > 0)
        got = (float(np.sum(v)), float(v[0]), float(v[-1]))
        assert machine_same(got, tuple(float.fromhex(x) for x in want)), (opts, [float.hex(x) for x in got])
