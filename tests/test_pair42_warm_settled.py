"""Session 42, pair42: a dominating pair's warm sweep takes an atom-law sum's upper value as settled at its family's
settled step and refines the lower value alone from the family's last lower step (docs/composition.md §2.25, switch
``limits.PAIR42_WARM_SETTLED``, off by default: §2.25.4; the tests switch it on); the one per-thread flag helper behind ``plain.no_lower_values`` and
``profile_chords.chord_sweep`` (``accountant.thread_flag.ThreadFlag``, §2.25.4).

References: the exact blanket divergence of k-RR under replace-one adjacency by multinomial sums
(tests/data/make_krr_reference.py, independent of sharpdp: its atoms in closed form, loaded as test_prof36_warm's
``KRR_REF``; O(n^2), so at n = 1000, where the rule does not fire: that pair is the switch-off pair); at n = 1e5, where
it fires, fresh rel_tol = 1e-3 brackets outside any sweep (main's passes, the certified reference) and the
accountant's own ``get_delta`` on a fresh object (the export's goal is stated against it); the switch off (main's
passes) for the count of passes.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math
import threading

import numpy as np
import pytest
from _main_floats34 import switch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_prof36_warm import KRR_REF

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches, dominating_pair
from sharpdp.shuffle.accountant import limits, plain, plain_warm
from sharpdp.shuffle.accountant.thread_flag import ThreadFlag
from sharpdp.shuffle.pair_accuracy import GOAL
from sharpdp.shuffle.round_cache import value_cache

K, EPS0, N = 10, 4.0, 10**5  # (the rule needs refinements that go on for the lower value alone: n >~ 3e4)


class _Passes:
    """Counts the plain engine's lattice passes and the refinements §2.25 started."""

    def __init__(self, monkeypatch):
        self.passes = self.started = 0
        real_pass, real_start = plain.lattice_pass, plain_warm.settled_start

        def counted(*a, **k):
            self.passes += 1
            return real_pass(*a, **k)

        def start(*a, **k):
            out = real_start(*a, **k)
            self.started += out
            return out

        monkeypatch.setattr(plain, "lattice_pass", counted)
        monkeypatch.setattr(plain_warm, "settled_start", start)


def _exact(k, eps0, n, e):
    vals, probs, gamma = KRR_REF.krr_replace_law(k, eps0, float(e))
    return KRR_REF.exact_dup(vals, probs, gamma, n)


def _pair(k=K, eps0=EPS0, n=N):
    clear_caches()
    acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace")
    return acc, dominating_pair(acc, progress=False)


@pytest.fixture(scope="module")
def on_pair():
    """The 10-RR round's pair with the rule on (off by default, §2.25.4) and a copy of the round's value cache after
    it."""
    with pytest.MonkeyPatch.context() as mp:
        session43_floats(mp)  # (**) session 44, lead: the switch-on (§2.26's cover leaves the rule idle)
        switch(mp, "PAIR42_WARM_SETTLED", True)
        acc, pair = _pair()
        out = pair, dict(value_cache(acc))
    clear_caches()
    return out


def test_rule_fires_and_runs_fewer_passes(monkeypatch):
    """10-RR (eps0 = 4), n = 1e5, replace: with the rule on, many refinements start at their family's settled step and
    the pair's sampling runs fewer lattice passes in all than with the switch off (main's passes); the two pairs
    differ (the rule moves floats) but have about as many samples."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "PAIR42_WARM_SETTLED", True)
    spy = _Passes(monkeypatch)
    _, on = _pair()
    p_on, started = spy.passes, spy.started
    switch(monkeypatch, "PAIR42_WARM_SETTLED", False)
    spy.passes = spy.started = 0
    _, off = _pair()
    assert started >= 50, started
    assert spy.started == 0
    assert p_on < 0.9 * spy.passes, (p_on, spy.passes)
    assert abs(on.sample_epsilons.size - off.sample_epsilons.size) <= 10
    assert not np.array_equal(on.sample_deltas, off.sample_deltas)


def test_small_n_unchanged(monkeypatch):
    """At n = 1000 no refinement goes on for the lower value alone: the rule never starts and the pair is the switch-off
    pair bit for bit; that pair lies at or above the exact blanket divergence at its samples."""
    switch(monkeypatch, "PAIR42_WARM_SETTLED", True)
    spy = _Passes(monkeypatch)
    _, on = _pair(10, 4.0, 1000)
    assert spy.started == 0
    switch(monkeypatch, "PAIR42_WARM_SETTLED", False)
    _, off = _pair(10, 4.0, 1000)
    assert np.array_equal(on.sample_deltas, off.sample_deltas) and np.array_equal(on.probs, off.probs)
    se, sd = on.sample_epsilons, on.sample_deltas
    keep = np.flatnonzero((sd >= 1e-13) & (se > 0))
    for i in keep[np.linspace(0, keep.size - 1, 8).astype(int)]:
        assert sd[i] >= _exact(10, 4.0, 1000, np.nextafter(se[i], 0.0)) * (1 - 1e-9), se[i]


def test_cached_brackets_meet_tighter_reference(monkeypatch, on_pair):
    """Each certified (lower, upper) value the pair's sampling (rule on) left in the round's cache, at 30 of its eps,
    intersects the fresh rel_tol = 1e-3 bracket of the same eps (get_delta_bounds outside any sweep: main's passes):
    two certified brackets of one number; a lower value above the reference's upper value (or the reverse) fails."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    _, cache = on_pair
    eps = sorted(e for e, v in cache.items() if v[1] >= 1e-13 and e > 0)
    pick = np.array([eps[i] for i in np.linspace(0, len(eps) - 1, 30).astype(int)])
    ref_lo, ref_up = ShuffleAccountant(RandomizedResponse(K, EPS0), N, "replace", rel_tol=1e-3).get_delta_bounds(pick)
    lo = np.array([cache[e][0] for e in pick.tolist()])
    up = np.array([cache[e][1] for e in pick.tolist()])
    assert np.all(up >= ref_lo), np.min(up / ref_lo)
    known = ~np.isnan(lo)
    assert known.sum() >= 15
    assert np.all(lo[known] <= ref_up[known]), np.max(lo[known] / ref_up[known])


def test_pair_between_tighter_reference_and_goal(on_pair):
    """The pair (rule on) at 30 eps between its samples: at or above the lower value of a fresh rel_tol = 1e-3 bracket
    and within the goal (1 %) above a fresh accountant's get_delta where delta >= 1e-12."""
    pair, _ = on_pair
    se, sd = pair.sample_epsilons, pair.sample_deltas
    top = se[np.nonzero(sd <= 1e-12)[0][0]]
    eps = np.linspace(0.011, top, 30)
    got = pair.get_delta(eps)
    ref_lo, _ = ShuffleAccountant(RandomizedResponse(K, EPS0), N, "replace", rel_tol=1e-3).get_delta_bounds(eps)
    assert np.all(got >= ref_lo), np.min(got / ref_lo)
    gd = ShuffleAccountant(RandomizedResponse(K, EPS0), N, "replace").get_delta(eps)
    big = gd >= 1e-12
    assert np.all(got[big] <= gd[big] * (1 + GOAL)), np.max(got[big] / gd[big])


@settings(max_examples=60, deadline=None)
@given(ratio=st.floats(1e-4, 1.0), gap=st.floats(1e-5, 0.2), rel_tol=st.floats(1e-3, 0.05), sd=st.floats(1e-3, 1e3))
def test_lower_step_property(ratio, gap, rel_tol, sd):
    """Warm.lower_step: the last final lower step times sqrt(GAP_AIM rel_tol / gap) clamped to [1, GROW_MAX] (never
    finer than the step that met the target, at most GROW_MAX coarser); no gap measured: the last step."""
    w = plain_warm.Warm(0.5, 5.0, 5.0, 1e-5, 1.1e-5, gap, 0, 1e-5, ratio)
    got = w.lower_step(sd, rel_tol)
    base = ratio * sd
    assert base * (1 - 1e-12) <= got <= plain_warm.GROW_MAX * base * (1 + 1e-12)
    want = base * min(max(math.sqrt(plain_warm.GAP_AIM * rel_tol / gap), 1.0), plain_warm.GROW_MAX)
    assert got == pytest.approx(want, rel=1e-12)
    assert plain_warm.Warm(0.5, 5.0, 5.0, 1e-5, 1.1e-5, math.nan, 0, 1e-5, ratio).lower_step(sd, rel_tol) \
        == pytest.approx(base, rel=1e-12)


def test_put_records_steps_and_settled_start_gates(monkeypatch):
    """put records the final lower step and the settled step as shares of sd (none without a lower value);
    settled_start needs the switch, a caller reading lower values, an atom-law sum and a recorded settled step."""
    switch(monkeypatch, "PAIR42_WARM_SETTLED", True)
    with plain_warm.warm_sweep():
        key = ("x",)
        plain_warm.put(key, 2.0, 0.4, 2.0, 3.0, 1.01e-4, 1e-4, None, {"lower": 0.1, "settled": 0.4})
        w = plain_warm.get(key)
        assert (w.lower_ratio, w.settled_ratio, w.h_ratio) == (0.05, 0.2, 0.2)
        assert plain_warm.settled_start(w, True, True)
        assert not plain_warm.settled_start(w, False, True) and not plain_warm.settled_start(w, True, False)
        assert not plain_warm.settled_start(None, True, True)
        plain_warm.put(key, 2.0, 0.4, 2.0, 3.0, 9e-5, 0.0, None, {"lower": 0.1})  # no lower value, no settled step
        w = plain_warm.get(key)
        assert math.isnan(w.lower_ratio) and math.isnan(w.settled_ratio)
        assert not plain_warm.settled_start(w, True, True)
        plain_warm.put(key, 2.0, 0.4, 2.0, 3.0, 8e-5, 7.9e-5, None, {"settled": 0.4})
        assert plain_warm.settled_start(plain_warm.get(key), True, True)
        switch(monkeypatch, "PAIR42_WARM_SETTLED", False)
        assert not plain_warm.settled_start(plain_warm.get(key), True, True)
    assert limits.PAIR42_WARM_SETTLED is False


def test_default_off():
    """The rule ships off (docs/composition.md §2.25.4): its session-41 value is the default."""
    from _main_floats34 import SESSION41
    assert limits.PAIR42_WARM_SETTLED is False and SESSION41["PAIR42_WARM_SETTLED"] is False


def test_thread_flag_nested_and_per_thread():
    """ThreadFlag: False by default, True within set (nested: the outer value restored), False in another thread;
    plain.no_lower_values and profile_chords.chord_sweep are such flags."""
    f = ThreadFlag()
    seen = []
    assert not f.on
    with f.set():
        assert f.on
        with f.set():
            assert f.on
        assert f.on
        t = threading.Thread(target=lambda: seen.append(f.on))
        t.start()
        t.join()
    assert not f.on and seen == [False]
    with pytest.raises(RuntimeError):
        with f.set():
            raise RuntimeError("x")
    assert not f.on
    from sharpdp.shuffle import profile_chords
    with plain.no_lower_values():
        assert plain._NO_LOWER.on and not profile_chords._STATE.on
    with profile_chords.chord_sweep():
        assert profile_chords._STATE.on and not plain._NO_LOWER.on
