"""Session 44, pair44: in a sweep reading no lower value (a privacy profile's, a pure-LDP round's pair under
docs/composition.md §2.26) an atom-law sum's upper value first is one pass of the upper lattice law alone at its law
family's last settled step, coarsened by the h^2 model of the distance estimated there (docs/composition.md §2.27,
``limits.PAIR44_SETTLED_START``, off by default: §2.27.6; the tests switch it on).

References: the exact blanket divergence of k-RR under replace-one adjacency by binomial sums
(tests/test_krr29_settled_upper.py's ``_blanket_three_atoms``, independent of the lattice engine), fresh rel_tol = 1e-3
brackets outside any sweep (main's passes: the certified reference), the accountant's own ``get_delta`` on a fresh
object (the export's goal is stated against it), and the switch off (main's passes and floats) for the count of passes.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import collections
import math

import numpy as np
import pytest
from _krr_export_check import check_krr_export
from _main_floats34 import machine_same, switch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_krr29_settled_upper import _blanket_three_atoms

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import limits, plain, plain_warm, settled_start
from sharpdp.shuffle.laws import laws_for

dp_interop = pytest.importorskip("sharpdp.interop.dp_accounting")

K, EPS0, N = 10, 4.0, 10**5  # (the rule needs §14's settled upper values: atom-law sums at n >~ 3e4)
E_TOP = 0.2  # (10-RR at n = 1e5: delta ~1e-13 near eps 0.2)
#: the 40-point profile on [0, E_TOP] with the switch off: its size and sum of i x delta_i (main's floats: the switch
#: off runs main's passes, checked bit for bit against main 797cacac before any change, docs/composition.md §2.27.5)
MAIN_PROFILE = [40, "0x1.845a3460382e9p-3"]


def _counting(monkeypatch) -> collections.Counter:
    """Counts the plain engine's lattice passes ("passes") and the values this rule gave ("rule")."""
    c: collections.Counter = collections.Counter()

    def wrap(mod, name, tally):
        real = getattr(mod, name)

        def counted(*a, **k):
            c.update(tally(*a, **k))
            return real(*a, **k)

        monkeypatch.setattr(mod, name, counted)

    wrap(plain, "lattice_pass", lambda *a, **k: ["passes"])
    wrap(settled_start, "record", lambda key, sd, upper, steps: ["rule"] * bool(steps.get(settled_start.RULE)))
    return c


def _exact(e: float, n: int = N) -> float:
    (g, law), = laws_for(sh.RandomizedResponse(K, EPS0), e, "replace")
    v, p = law.atoms()
    return _blanket_three_atoms(float(g), np.asarray(v), np.asarray(p), n)


def _profile(monkeypatch, on: bool, eps):
    switch(monkeypatch, "PAIR44_SETTLED_START", on)
    c = _counting(monkeypatch)
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(K, EPS0), N, "replace")
    return np.asarray(acc.privacy_profile(eps)), c


@settings(max_examples=300, deadline=None)
@given(ratio=st.floats(1e-4, 1.0), dist=st.one_of(st.floats(-1e-2, 1e-1), st.just(math.nan)),
       rel_tol=st.floats(1e-4, 0.1), aim=st.floats(1e-3, 1.0), grow=st.floats(0.5, 8.0), sd=st.floats(1e-6, 1e3))
def test_step_property(ratio, dist, rel_tol, aim, grow, sd):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(limits, "PAIR44_SETTLED_AIM", aim)
        mp.setattr(limits, "PAIR44_SETTLED_GROW", grow)
        s = settled_start.Settled(ratio, dist, 1e-3)
        h = settled_start.step(s, sd, rel_tol)
    g = h / (ratio * sd)
    top = max(grow, 1.0)
    assert 1.0 - 1e-12 <= g <= top * (1.0 + 1e-12)  # never finer than the checked step, at most GROW coarser
    if dist > 0.0 and 1.0 + 1e-9 < g < top * (1.0 - 1e-9):
        assert math.isclose(g * g * dist, aim * rel_tol, rel_tol=1e-9)  # the h^2 model aimed at AIM rel_tol
    if not dist > 0.0:
        assert math.isclose(g, top, rel_tol=1e-12)


def test_settled_distance_is_richardson():
    # up(h) = u0 + c h^2: the estimate at h from a pass at 4 h is exactly c h^2
    u0, c, h = 1e-4, 3e-3, 0.01
    assert math.isclose(settled_start.settled_distance(u0 + c * 16 * h * h, 4 * h, u0 + c * h * h, h), c * h * h,
                        rel_tol=1e-9)


def test_record_ready_accepts(monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    key = ("FiniteLaw", 0.1, 1000, 0.01, True, True)
    settled_start.record(key, 1.0, 1e-3, {settled_start.CHECKED: (0.02, 1e-5)})  # outside a sweep: no-op
    assert settled_start.get(key) is None
    with plain_warm.warm_sweep():
        settled_start.record(key, 2.0, 1e-3, {settled_start.CHECKED: (0.02, 1e-5)})
        s = settled_start.get(key)
        assert s == settled_start.Settled(0.01, 1e-5, 1e-3, 0)
        assert not settled_start.ready(s)  # off by default
        switch(monkeypatch, "PAIR44_SETTLED_START", True)
        with plain_warm.warm_sweep():  # (nested: the outer state kept)
            assert settled_start.ready(settled_start.get(key))
        for i in range(int(limits.PAIR44_SETTLED_RUNS)):
            assert settled_start.ready(settled_start.get(key))
            settled_start.record(key, 2.0, 9e-4, {settled_start.RULE: True})
            assert settled_start.get(key).runs == i + 1
        assert not settled_start.ready(settled_start.get(key))  # main's refinement checks the step again
        settled_start.record(key, 2.0, 8e-4, {})  # any other end drops the state
        assert settled_start.get(key) is None
    assert settled_start.accepts(s, 1e-3, 9e-4) and settled_start.accepts(s, 1e-3, 1e-3)
    assert not settled_start.accepts(s, 1e-3, 1.01e-3)  # above the family's last value
    assert not settled_start.accepts(s, 1e-3, 0.99 * limits.PAIR44_SETTLED_FALL * 1e-3)  # fell too far


def test_profile_off_is_main_and_on_is_certified_and_accurate(monkeypatch):
    eps = np.linspace(0.0, E_TOP, 40)
    off, c_off = _profile(monkeypatch, False, eps)
    assert machine_same([off.size, float(np.sum(off * np.arange(1, off.size + 1)))], MAIN_PROFILE)
    assert c_off["rule"] == 0
    sh.clear_caches()
    on, c_on = _profile(monkeypatch, True, eps)
    assert c_on["rule"] >= 10, c_on["rule"]  # the rule gave values ...
    assert c_on["passes"] < 0.8 * c_off["passes"], (c_on["passes"], c_off["passes"])  # ... with fewer lattice passes
    assert np.all(np.diff(on) <= 0.0)
    ref = sh.ShuffleAccountant(sh.RandomizedResponse(K, EPS0), N, "replace", rel_tol=1e-3)
    for i in range(0, eps.size, 4):
        e = float(eps[i])
        ex = _exact(e)
        assert on[i] >= ex * (1.0 - 1e-9), (e, on[i], ex)  # certified: at or above the exact blanket divergence
        lo, up = ref.get_delta_bounds(e)
        assert on[i] >= lo
        if lo >= 1e-13 and on[i] != off[i]:  # a value the rule moved: within rel_tol = 1e-2 of the truth (main's own
            assert on[i] <= 1.01 * lo, (e, on[i] / lo)  # values from §2.19's aimed pass reach 1.0126 here: not its claim)
    moved = on != off
    assert moved.sum() >= 10 and np.max(on[moved] / off[moved]) <= 1.0 + 2.0 * limits.PAIR44_SETTLED_AIM * 1e-2 * 4.0


def test_pair_export_dominates_exact_and_within_goal(monkeypatch):
    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    switch(monkeypatch, "PAIR44_SETTLED_START", True)
    # the exported PLD at or above the exact blanket divergence (binomial sums) and within 1 % above a fresh get_delta
    assert check_krr_export(dp_interop, K, EPS0, N, 700, 9) >= 4

