"""The C heap kept for reuse inside the large passes (docs/accountant_tail.md §68; session 45, body45; switches
``limits.BODY45_KEPT_HEAP`` (on) and ``limits.BODY45_KEPT_HEAP_N``).

Checked: (i) the switch off as the certified reference: regime cells at n >= 1e7 whose far-tail rounds run the jump
term and body passes inside the kept heap give the same bracket bit for bit as the switch off (the rule only moves
where malloc places arrays), and a pass spy shows the scope was entered; (ii) the scope's bookkeeping: nesting,
exceptions and threads leave the depth at 0, the gate of ``kept_big`` enters the scope exactly at n >= the threshold
with the switch on (a hypothesis property over n, the threshold and the switch); (iii) what it is for, against the
kernel's own count: on glibc, rounds of 120 MB of arrays written and freed cost about one round's minor page faults
inside the scope and two to three outside (``resource.getrusage``), and a user's malloc environment variables turn the rule off.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import heap_keep, jump, lattice, limits
from sharpdp.shuffle.accountant.heap_keep import depth, kept_big, kept_heap


def _bracket(monkeypatch, rz, n, eps, on):
    switch(monkeypatch, "BODY45_KEPT_HEAP", on)
    seen: dict = {"pass": [], "jump": []}
    in_pass, in_jump = lattice._pass, jump.convolve

    def spy_pass(*a, **k):
        seen["pass"].append(depth())
        return in_pass(*a, **k)

    def spy_jump(*a, **k):
        seen["jump"].append(depth())
        return in_jump(*a, **k)

    monkeypatch.setattr(lattice, "_pass", spy_pass)  # (called inside lattice_pass's scope)
    monkeypatch.setattr(jump, "convolve", spy_jump)  # (called inside jump_term's scope)
    r = ShuffleAccountant(rz, n, "zero_out").get_delta_bounds(eps)
    monkeypatch.setattr(lattice, "_pass", in_pass)
    monkeypatch.setattr(jump, "convolve", in_jump)
    return r, seen


@pytest.mark.parametrize("rz, n, eps", [(GaussianRandomizer(1.0, 1), 10**7, 0.01),
                                        (BlanketMixedGaussian(0.0389, 0.529, 1), 10**7, 0.01)])
def test_same_bracket_as_the_switch_off(monkeypatch, rz, n, eps):
    switch(monkeypatch, "EPS47_CALL_HEAP", False)  # (**) session 47, eps47: docs/accountant.md §8.27.1
    (lo0, up0), off = _bracket(monkeypatch, rz, n, eps, False)
    (lo1, up1), on = _bracket(monkeypatch, rz, n, eps, True)
    assert 0 < lo0 <= up0 < 1
    assert (lo1.hex(), up1.hex()) == (lo0.hex(), up0.hex())
    assert off["pass"] and off["jump"] and set(off["pass"] + off["jump"]) == {0}  # the passes ran, no scope
    assert depth() == 0  # the scope is closed after the call
    if heap_keep._glibc() is not None:
        assert set(on["pass"] + on["jump"]) == {1}  # every engine run inside the scope


def test_depth_nesting_and_exceptions(monkeypatch):
    switch(monkeypatch, "BODY45_KEPT_HEAP", True)
    if heap_keep._glibc() is None:
        pytest.skip("not glibc (the scope is a no-op)")
    assert depth() == 0
    with kept_heap():
        assert depth() == 1
        with kept_heap():
            assert depth() == 2
        assert depth() == 1
    assert depth() == 0
    with pytest.raises(ZeroDivisionError):
        with kept_heap():
            assert depth() == 1
            _ = 1 / 0
    assert depth() == 0


def test_threads_share_one_scope(monkeypatch):
    switch(monkeypatch, "BODY45_KEPT_HEAP", True)
    if heap_keep._glibc() is None:
        pytest.skip("not glibc (the scope is a no-op)")
    inside = threading.Barrier(4)
    seen = []

    def work():
        with kept_heap():
            inside.wait(timeout=30)
            seen.append(depth())
            inside.wait(timeout=30)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert seen == [4, 4, 4, 4] and depth() == 0


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 10**10), thr=st.integers(1, 10**10), on=st.booleans(), kw=st.booleans())
def test_gate_property(n, thr, on, kw):
    old = (limits.BODY45_KEPT_HEAP, limits.BODY45_KEPT_HEAP_N)
    limits.BODY45_KEPT_HEAP, limits.BODY45_KEPT_HEAP_N = on, thr
    try:
        @kept_big
        def f(law, gamma, n, extra=0):
            return (law, gamma, n, extra, depth())

        got = f("law", 0.5, n=n, extra=3) if kw else f("law", 0.5, n, 3)
        entered = on and n >= thr and heap_keep._glibc() is not None
        assert got == ("law", 0.5, n, 3, 1 if entered else 0)
        assert depth() == 0
    finally:
        limits.BODY45_KEPT_HEAP, limits.BODY45_KEPT_HEAP_N = old


class _Lib:
    """A stand-in for glibc's handle: records the ``mallopt`` calls."""

    def __init__(self):
        self.calls = []

    def mallopt(self, param, value):
        self.calls.append((param, value))
        return 1


def test_thresholds_raised_once_and_set_back(monkeypatch):
    """The outermost scope raises both thresholds once on entry and sets both back on exit; nested scopes call nothing.
    (The page faults this saves are measured in bench/bench_kink42.py, which prints them per call: a kernel count that
    depends on the machine's memory management, no test's business.)"""
    switch(monkeypatch, "BODY45_KEPT_HEAP", True)
    lib = _Lib()
    monkeypatch.setattr(heap_keep, "_glibc", lambda: lib)
    with kept_heap():
        with kept_heap():
            pass
        assert lib.calls == [(heap_keep.M_MMAP_THRESHOLD, heap_keep.KEEP_MMAP),
                             (heap_keep.M_TRIM_THRESHOLD, heap_keep.KEEP_TRIM)]
    assert lib.calls[2:] == [(heap_keep.M_MMAP_THRESHOLD, heap_keep.OUT_MMAP),
                             (heap_keep.M_TRIM_THRESHOLD, heap_keep.OUT_TRIM)]
    switch(monkeypatch, "BODY45_KEPT_HEAP", False)
    with kept_heap():
        pass
    assert len(lib.calls) == 4 and depth() == 0


def test_env_tuned_malloc_turns_it_off(monkeypatch):
    monkeypatch.setattr(heap_keep, "_ok", None)
    monkeypatch.setattr(heap_keep, "_libc", None)
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "131072")
    assert heap_keep._glibc() is None
    switch(monkeypatch, "BODY45_KEPT_HEAP", True)
    with kept_heap():
        assert depth() == 0
