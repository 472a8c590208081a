"""docs/accountant.md §8.29 (limits.EPS49_JUMP_PROBE, accountant/start_probe.start_probe(jump=True)): at n >= 1e7,
where get_epsilon starts from the single big jump's root, §8.25's rule (phase 1 skipped, phase 2 probes that root first
with the model's slope) opens up to the spread EPS49_JUMP_PROBE of jump_guess.jump_value there.

References: the spread recomputed here from the laws' moments; the answer against fresh accountants (get_delta <= delta
at the answer, above delta one xtol below it: the bracket contract of docs/accountant.md §8) and against the switch-off
search (within xtol: both are certified points of that contract); the calls counted (no upper-only pass, no look)."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.jump_guess import first_point, jump_value
from sharpdp.shuffle.accountant.looks import memoised
from sharpdp.shuffle.accountant.start_probe import start_probe
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import SESSION48, switch
from test_eps48_body_start import _counted  # (one call counter for the eps48 / eps49 files)

DELTA, XTOL, ON = 1e-6, 1e-3, 0.08
#: calibrate_bmg(n, eps, 1e-6, 1)'s picks: n = 1e8, eps = 0.1 (the map's 3.22x cell) and 0.5; n = 1e9, eps = 0.1
BMG8 = BlanketMixedGaussian(0.020184369008040444, 0.4564324504091077, 1)
BMG8H = BlanketMixedGaussian(0.015291973817911498, 0.41451390781580544, 1)
BMG9 = BlanketMixedGaussian(0.014268009785030579, 0.40485052696623824, 1)


def test_switch_off_and_listed():
    """On (0.08) since session 49's merge; SESSION48 holds the off value (0.0: EPS45_START_PROBE alone, session 48's
    searches)."""
    assert limits.EPS49_JUMP_PROBE == 0.08 and SESSION48["EPS49_JUMP_PROBE"] == 0.0
    assert limits.EPS49_JUMP_PROBE_N == 10**7


def _start(rnd, n):
    """The search's laws and its single-big-jump start (g, k) as search_epsilon forms them."""
    laws_at = memoised(lambda e: laws_for(rnd, e, "zero_out"), 64)
    acc = ShuffleAccountant(rnd, n)
    g, k = first_point(laws_at, n, DELTA, S._guess_epsilon(acc, DELTA), limits.EPS_MAX)
    assert k is not None  # (the single big jump's root: §8.11)
    return laws_at, g, k


def test_gate(monkeypatch):
    n = 10**8
    laws_at, g, k = _start(BMG8, n)
    # the spread at g from the moments of each law (both BMG laws): jump_value's is one of them, and lies between
    # §8.25's 0.02 and the rule's 0.08
    qs = [law.std() / (math.sqrt((n - 1) * float(gm)) * -law.mean()) for gm, law in laws_at(g)]
    q = jump_value(laws_at(g), n)[1]
    assert 0.02 < q <= ON and min(abs(q / x - 1.0) for x in qs) < 1e-12
    switch(monkeypatch, "EPS49_JUMP_PROBE", 0.0)
    assert not start_probe(laws_at, n, g, k, 0.0, 60.0, True)  # (off: §8.25's gate shut)
    switch(monkeypatch, "EPS49_JUMP_PROBE", ON)
    assert start_probe(laws_at, n, g, k, 0.0, 60.0, True)
    assert not start_probe(laws_at, n, g, k, 0.0, 60.0, False)  # (a shape start: §8.25's bound alone)
    assert not start_probe(laws_at, 10**6, g, k, 0.0, 60.0, True)  # (below EPS49_JUMP_PROBE_N)
    assert not start_probe(laws_at, n, g, None, 0.0, 60.0, True)  # (no slope)
    assert not start_probe(laws_at, n, g, k, g, 60.0, True)  # (at the frame's end)
    switch(monkeypatch, "EPS49_JUMP_PROBE", 0.05)
    assert not start_probe(laws_at, n, g, k, 0.0, 60.0, True)  # (a bound below the spread)



def _checked(rnd, n, e, delta=DELTA):
    """Certified: get_delta <= delta at the answer (a fresh accountant), and above delta one xtol below it."""
    assert ShuffleAccountant(rnd, n).get_delta(e) <= delta
    assert ShuffleAccountant(rnd, n).get_delta(e * (1.0 - XTOL)) > delta


def test_n1e8_no_phase1_certified(monkeypatch):
    """BMG n = 1e8, eps 0.1: no upper-only pass and no look with the rule (against >= 1 pass and a look off); the
    answer certified by fresh accountants and within xtol of the switch-off answer."""
    calls = _counted(monkeypatch)
    switch(monkeypatch, "EPS49_LOOK_SPARED_N", 10**7)  # the look's own rule off (on by default since session 49)
    switch(monkeypatch, "EPS49_JUMP_PROBE", 0.0)
    off = ShuffleAccountant(BMG8, 10**8).get_epsilon(DELTA)
    off_calls = dict(calls)
    calls.update(up=0, loose=0)
    switch(monkeypatch, "EPS49_JUMP_PROBE", ON)
    on = ShuffleAccountant(BMG8, 10**8).get_epsilon(DELTA)
    assert off_calls["up"] >= 1 and off_calls["loose"] == 1 and (calls["up"], calls["loose"]) == (0, 0)
    _checked(BMG8, 10**8, on)
    assert abs(on / off - 1.0) <= XTOL


def test_other_cells_certified(monkeypatch):
    """BMG n = 1e8, eps 0.5 and n = 1e9, eps 0.1 (the rule opens at both): certified, within xtol of switch-off."""
    for rnd, n in ((BMG8H, 10**8), (BMG9, 10**9)):
        switch(monkeypatch, "EPS49_JUMP_PROBE", 0.0)
        off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
        switch(monkeypatch, "EPS49_JUMP_PROBE", ON)
        on = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
        _checked(rnd, n, on)
        assert abs(on / off - 1.0) <= XTOL


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gamma=st.floats(0.012, 0.025), s0=st.floats(0.38, 0.47), ld=st.floats(-9.0, -5.0))
def test_property(monkeypatch, gamma, s0, ld):
    """BMG(gamma, s0) near calibrate_bmg's picks at n = 1e8, delta 1e-9..1e-5, with the rule on: the answer certified
    by fresh accountants and within xtol of the switch-off search's answer."""
    rnd, n, delta = BlanketMixedGaussian(gamma, s0, 1), 10**8, 10.0 ** ld
    switch(monkeypatch, "EPS49_JUMP_PROBE", ON)
    on = ShuffleAccountant(rnd, n).get_epsilon(delta)
    switch(monkeypatch, "EPS49_JUMP_PROBE", 0.0)
    off = ShuffleAccountant(rnd, n).get_epsilon(delta)
    assert math.isfinite(on) and on > 0.0
    _checked(rnd, n, on, delta)
    assert abs(on / off - 1.0) <= XTOL
