"""The far-tail round's first body pass aimed at half the round's step (docs/accountant_tail.md §66.1; session 44,
body44; switch ``limits.BODY44_FIRST_SKIP``, off by default).

Checked: (i) the gate against its definition, case by case and as a hypothesis property (the step returned is the
round's own or its half, the half only where the switch, the bracket, n, the window and one of the two conditions
hold; the K_MAX condition against the lattice's own refusal, ``lattice.lattice_laws`` returning ``Coarsen``); (ii) the
switch off as the certified reference: on a regime cell where the gate fires, the rule's bracket overlaps main's and
is the same to the machine's last bits (measured: bit for bit), with one engine pass fewer (a spy on the passes).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _main_floats34 import machine_same, switch
from test_big28_speed import _passes
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.far_tail_steps import first_aim
from sharpdp.shuffle.accountant.lattice import lattice_laws
from sharpdp.shuffle.accountant.limits import J_LO, K_MAX
from sharpdp.shuffle.accountant.results import Coarsen
from sharpdp.shuffle.laws import laws_for


def _rd(T0=100.0, B=1.0, N=10**5, j_lo=1e-9):
    return SimpleNamespace(T0=T0, B=B, jt=SimpleNamespace(N=N, lo=j_lo))


def test_gate_cases(monkeypatch):
    h, n, rel = 0.5, 10**8, 1e-2
    lo = 1.0
    share = 0.3 * rel * (lo + 1e-9)
    switch(monkeypatch, "BODY44_FIRST_SKIP", False)
    assert first_aim(h, _rd(), lo, lo + 50 * share, n, rel, True) == h  # (off: main's step)
    switch(monkeypatch, "BODY44_FIRST_SKIP", True)
    assert first_aim(h, _rd(), lo, lo + 50 * share, n, rel, True) == h / 2  # (a miss by 50 times: halved)
    assert first_aim(h, _rd(), lo, lo + 10 * share, n, rel, True) == h  # (the engine's pass at h may meet its share)
    assert first_aim(h, _rd(), lo, lo + 1000 * share, n, rel, True) == h  # (a miss beyond BODY44_FIRST_RATIO)
    assert first_aim(h, _rd(), lo, lo + 50 * share, 10**7, rel, True) == h  # (n below BODY44_FIRST_N)
    assert first_aim(h, _rd(), lo, lo + 50 * share, n, rel, False) == h  # (not a bracket's passes)
    assert first_aim(h, _rd(N=2**23), lo, lo + 50 * share, n, rel, True) == h  # (a window too long to double)
    assert first_aim(h, _rd(T0=K_MAX / J_LO * h), lo, lo + 50 * share, n, rel, True) == h  # (the half's lattice too)
    # lower value 0: the half only where the quarter's lattice exceeds K_MAX and the half's does not
    T_q = K_MAX / J_LO * h / 4 * 1.01  # (the quarter's cells just over K_MAX)
    assert first_aim(h, _rd(T0=T_q, B=0.0), 0.0, 1.0, n, rel, True) == h / 2
    assert first_aim(h, _rd(T0=T_q / 2, B=0.0), 0.0, 1.0, n, rel, True) == h  # (the quarter fits)
    assert first_aim(h, _rd(T0=T_q * 4, B=0.0), 0.0, 1.0, n, rel, True) == h  # (the half does not fit either)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.sampled_from([0.125, 0.5, 0.546875, 0.7734375, 1.0]), T0=st.floats(1.0, 3e5), B=st.floats(0.0, 10.0),
       lo=st.floats(0.0, 1e-5), gap=st.floats(0.0, 1e-4), n=st.sampled_from([10**6, 10**8, 10**9]),
       N=st.integers(10**3, 10**7), on=st.booleans(), bracket=st.booleans())
def test_gate_property(monkeypatch, h, T0, B, lo, gap, n, N, on, bracket):
    switch(monkeypatch, "BODY44_FIRST_SKIP", on)
    rd = _rd(T0, B, N, 1e-7)
    got = first_aim(h, rd, lo, lo + gap, n, 1e-2, bracket)
    assert got in (h, h / 2)
    if got == h / 2:
        cells = lambda d: (math.ceil(T0 * d / h) + math.ceil(B * d / h)) * J_LO  # noqa: E731
        assert on and bracket and n >= limits.BODY44_FIRST_N and 2.5 * N <= limits.N_MAX and cells(2) <= K_MAX
        if lo > 0:
            share = 0.3e-2 * (lo + 1e-7)
            assert limits.BODY44_FIRST_MIN * share * (1 - 1e-12) < gap
            assert gap <= limits.BODY44_FIRST_RATIO * share * (1 + 1e-12)
        else:
            assert cells(4) > K_MAX


@pytest.mark.parametrize("d,refused", [(4, True), (2, False)])
def test_k_max_condition_is_the_lattice_refusal(d, refused):
    """The gate's K_MAX count is the one ``lattice_laws`` refuses with (the same ceil of T / step and B / step)."""
    h = 0.546875
    gamma, law = next(iter(laws_for(GaussianRandomizer(1.0, 1), 0.01, "zero_out")))
    B = math.ceil(max(-law.support()[0], 0.0) / h) * h  # (the support's bottom: no mass lost below the clamp)
    T0 = math.floor((K_MAX / J_LO * h / 4 * 1.01 - B) / h) * h  # (a multiple of h: the quarter's lattice over K_MAX)
    assert isinstance(lattice_laws(law, gamma, h / d, T0, B, lower=False), Coarsen) == refused
    cells = (math.ceil(T0 * d / h) + math.ceil(B * d / h)) * J_LO
    assert (cells > K_MAX) == refused


def test_cell_against_the_switch_off(monkeypatch):
    """BMG (0.0389, 0.529), n = 1e8, eps = 0.01 (bench/bench_kink42.py's cell 1): the first pass at the jump term's
    step is skipped (one engine pass fewer), the bracket overlaps main's and is the same to the last bits."""
    calls = _passes(monkeypatch)  # (the steps of far_tail.lattice_pass's calls)
    out, passes = {}, {}
    for on in (False, True):
        switch(monkeypatch, "BODY44_FIRST_SKIP", on)
        calls.clear()
        out[on] = ShuffleAccountant(BlanketMixedGaussian(0.0389, 0.529, 1), 10**8, "zero_out").get_delta_bounds(0.01)
        passes[on] = list(calls)
    (lo0, up0), (lo1, up1) = out[False], out[True]
    assert max(lo0, lo1) <= min(up0, up1)
    assert machine_same((lo1, up1), (lo0, up0))
    assert len(passes[True]) == len(passes[False]) - 1
    assert 0.7734375 in passes[False] and 0.7734375 not in passes[True]  # (the round's own step is not run)
