"""The C heap kept over a whole public call at n >= 1e7 (docs/accountant.md §8.27.1; session 47, eps47; switch
``limits.EPS47_CALL_HEAP``, on).

Checked: (i) the switch off as the certified reference: get_delta_bounds and get_epsilon at n = 1e7 give the same
floats bit for bit with the call's scope as without it (the rule only moves where malloc places arrays), and a spy on
the passes shows them run at depth 1 inside the one outer scope (nested, not a second ``mallopt`` pair); (ii) the gate:
below ``BODY45_KEPT_HEAP_N`` or with either switch off the call never enters the scope (malloc untouched), at and
above it every call enters it exactly once, and exceptions leave the depth at 0 (a hypothesis property over n, the
threshold and both switches on a stand-in accountant); (iii) the calibrations (docs/calibration.md §18.1): one outer
scope over all of ``calibrate_gaussian_report``'s evaluations, each accountant call nested in it, the same certified
randomizer and bracket bit for bit as the switch off, and an n that does not validate still raises the call's own error.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, calibrate_gaussian_report
from sharpdp.shuffle.accountant import call_heap, heap_keep, lattice, limits
from sharpdp.shuffle.accountant.call_heap import call_kept, kept_first, wanted
from sharpdp.shuffle.accountant.heap_keep import depth


def _counting(monkeypatch) -> list:
    """Count the call scope's entries (call_heap's own name for kept_heap, so the passes' scopes are not counted)."""
    entered: list = []
    inner = heap_keep.kept_heap

    @contextmanager
    def counted():
        entered.append(depth())
        with inner():
            yield

    monkeypatch.setattr(call_heap, "kept_heap", counted)
    return entered


def _run(monkeypatch, on, what):
    switch(monkeypatch, "EPS47_CALL_HEAP", on)
    entered = _counting(monkeypatch)
    seen: list = []
    in_pass = lattice._pass

    def spy_pass(*a, **k):
        seen.append(depth())
        return in_pass(*a, **k)

    monkeypatch.setattr(lattice, "_pass", spy_pass)
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**7, "zero_out")
    if what == "bounds":
        got = tuple(v.hex() for v in acc.get_delta_bounds(0.01))
    else:
        got = (acc.get_epsilon(1e-6).hex(),)
    monkeypatch.setattr(lattice, "_pass", in_pass)
    return got, entered, seen


@pytest.mark.parametrize("what", ["bounds", "epsilon"])
def test_same_floats_as_the_switch_off(monkeypatch, what):
    off, entered_off, seen_off = _run(monkeypatch, False, what)
    on, entered_on, seen_on = _run(monkeypatch, True, what)
    assert on == off
    vals = [float.fromhex(h) for h in on]
    assert all(0 < v < 1 for v in vals) if what == "bounds" else 0.0 < vals[0] < 60.0
    assert entered_off == [] and entered_on == [0]  # one outermost scope per public call, none with the switch off
    assert seen_off and seen_on  # the body passes ran (at n = 1e7 the lattice route runs)
    if heap_keep._glibc() is not None:
        assert set(seen_off) == {1}  # the pass's own scope alone (docs/accountant_tail.md §68.2)
        assert set(seen_on) == {2}  # nested inside the call's scope
    assert depth() == 0


def test_answer_is_certified_with_the_call_scope():
    """The answer under the rule against fresh accountants: <= delta there, above delta one xtol below."""
    rz, n, delta = GaussianRandomizer(1.0, 1), 10**7, 1e-6
    e = ShuffleAccountant(rz, n, "zero_out").get_epsilon(delta)
    assert ShuffleAccountant(rz, n, "zero_out").get_delta(e) <= delta
    assert ShuffleAccountant(rz, n, "zero_out").get_delta(e * (1 - 2e-3)) > delta


def test_small_n_never_enters(monkeypatch):
    switch(monkeypatch, "BODY45_KEPT_HEAP_N", 10**7)  # (**) session 47, lead: the threshold of this claim (1e4 since the merge)
    entered = _counting(monkeypatch)
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**6, "zero_out")
    lo, up = acc.get_delta_bounds(0.1)
    assert 0 < lo <= up < 1
    assert acc.get_epsilon(1e-3) > 0
    assert entered == []


def test_exception_closes_the_scope(monkeypatch):
    switch(monkeypatch, "EPS47_CALL_HEAP", True)
    entered = _counting(monkeypatch)
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8, "zero_out")
    with pytest.raises(ValueError):
        acc.get_epsilon(2.0)  # delta outside (0, 1): raised inside the decorated method
    with pytest.raises(ValueError):
        acc.get_delta_bounds(float("nan"))
    assert entered == [0, 0] and depth() == 0


class _Stand:
    def __init__(self, n):
        self.n = n

    @call_kept
    def call(self, fail=False):
        if fail:
            raise RuntimeError("inside")
        return depth()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**9), threshold=st.integers(1, 10**9), on=st.booleans(), body=st.booleans(),
       fail=st.booleans())
def test_gate_property(n, threshold, on, body, fail):
    with pytest.MonkeyPatch.context() as mp:
        switch(mp, "EPS47_CALL_HEAP", on)
        switch(mp, "BODY45_KEPT_HEAP", body)
        switch(mp, "BODY45_KEPT_HEAP_N", threshold)
        entered = _counting(mp)
        want = on and body and n >= threshold
        assert wanted(n) == want
        stand = _Stand(n)
        if fail:
            with pytest.raises(RuntimeError):
                stand.call(True)
        else:
            got = stand.call()
            assert got == (1 if want and heap_keep._glibc() is not None else 0)
        assert entered == ([0] if want else [])
        assert depth() == 0
        assert limits.EPS47_CALL_HEAP == on


def _calibrated(monkeypatch, on):
    switch(monkeypatch, "EPS47_CALL_HEAP", on)
    entered = _counting(monkeypatch)
    r = calibrate_gaussian_report(10**7, 0.1, 1e-6)
    return (r.randomizer.sigma0.hex(), r.delta_bounds[0].hex(), r.delta_bounds[1].hex(), r.evaluations), list(entered)


def test_calibration_one_scope_same_floats(monkeypatch):
    off, entered_off = _calibrated(monkeypatch, False)
    on, entered_on = _calibrated(monkeypatch, True)
    assert on == off
    lo, up = float.fromhex(on[1]), float.fromhex(on[2])
    assert 0 < lo <= up <= 1e-6  # the certified bracket meets the target
    sigma = float.fromhex(on[0])
    assert ShuffleAccountant(GaussianRandomizer(sigma, 1), 10**7, "zero_out").get_delta(0.1) <= 1e-6  # fresh check
    assert entered_off == []
    assert entered_on[0] == 0 and len(entered_on) >= 1 + on[3] and set(entered_on[1:]) == {1}  # nested in one scope
    assert depth() == 0


def test_bad_n_raises_its_own_error(monkeypatch):
    switch(monkeypatch, "EPS47_CALL_HEAP", True)
    entered = _counting(monkeypatch)
    with pytest.raises(TypeError):
        calibrate_gaussian_report("many", 0.1, 1e-6)
    with pytest.raises(ValueError):
        calibrate_gaussian_report(0, 0.1, 1e-6)
    assert entered == [] and depth() == 0

    @kept_first
    def first(n):
        return depth()

    assert first(n=10**8) == (1 if heap_keep._glibc() is not None else 0)
    assert first(10) == 0 and entered == [0]
