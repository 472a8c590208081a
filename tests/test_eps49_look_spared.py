"""docs/accountant.md §8.29 (limits.EPS49_LOOK_SPARED_N, accountant/search.py): §8.13.2's rule (no loose look at the
phase-1 root where phase 1 started from the single big jump's root and the spread of jump_guess.jump_value there is at
most LOOK_SPREAD) extended from n < 1e7 to n < EPS49_LOOK_SPARED_N.

References: the spread recomputed here from the laws' moments (sd(L) / (sqrt((n - 1) gamma) |E[L]|)); the answer
against fresh accountants (get_delta <= delta at the answer, above delta one xtol below it: the bracket contract of
docs/accountant.md §8) and against the switch-off search (the same float where the look had not moved phase 2's first
point; within xtol elsewhere: both are certified points of that contract); the calls counted (no loose report)."""

from __future__ import annotations

import math

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.jump_guess import LOOK_SPREAD
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import SESSION48, switch
from test_eps48_body_start import _counted  # (one call counter for the eps48 / eps49 files)

DELTA, XTOL, OFF, ON = 1e-6, 1e-3, 10**7, 10**10
#: calibrate_bmg(n, 0.1, 1e-6, 1)'s picks at n = 1e8 (the map's 3.22x cell) and n = 1e9
BMG8 = BlanketMixedGaussian(0.020184369008040444, 0.4564324504091077, 1)
BMG9 = BlanketMixedGaussian(0.014268009785030579, 0.40485052696623824, 1)


def test_switch_off_and_listed():
    """On (10**10) since session 49's merge; SESSION48 holds the off value (10**7: §8.13.2's n limit, session 48's
    searches)."""
    assert limits.EPS49_LOOK_SPARED_N == 10**10 and SESSION48["EPS49_LOOK_SPARED_N"] == OFF


def _spreads(rnd, n, e):
    """The spread sd(L) / (sqrt((n - 1) gamma) |E[L]|) of each law (both BMG laws), from the laws' moments."""
    return [law.std() / (math.sqrt((n - 1) * float(g)) * -law.mean()) for g, law in laws_for(rnd, e, "zero_out")]


def test_spread_below_gate():
    """At both cells' answers every law's spread is below LOOK_SPREAD (0.072-0.080 and 0.052-0.058), so the gate the
    rule reads (the spread of the law that makes jump_value) holds whichever law makes it."""
    assert all(0.06 < q <= LOOK_SPREAD for q in _spreads(BMG8, 10**8, 0.0999))
    assert all(0.04 < q <= LOOK_SPREAD for q in _spreads(BMG9, 10**9, 0.0998))



def _checked(rnd, n, e):
    """Certified: get_delta <= delta at the answer (a fresh accountant), and above delta one xtol below it."""
    assert ShuffleAccountant(rnd, n).get_delta(e) <= DELTA
    assert ShuffleAccountant(rnd, n).get_delta(e * (1.0 - XTOL)) > DELTA


def _off_on(monkeypatch, rnd, n):
    calls = _counted(monkeypatch)
    switch(monkeypatch, "EPS49_JUMP_PROBE", 0.0)  # (the look's rule alone: the jump start's skip would skip the look too)
    switch(monkeypatch, "EPS49_LOOK_SPARED_N", OFF)
    off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    off_calls = dict(calls)
    calls.update(loose=0, probe=0)
    switch(monkeypatch, "EPS49_LOOK_SPARED_N", ON)
    on = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    return off, off_calls, on, calls


def test_n1e8_no_look_same_float(monkeypatch):
    """BMG n = 1e8, eps 0.1: the look (it straddled delta) is gone, the same probes and the same float."""
    off, off_calls, on, calls = _off_on(monkeypatch, BMG8, 10**8)
    assert (off_calls["loose"], off_calls["probe"]) == (1, 3) and (calls["loose"], calls["probe"]) == (0, 3)
    assert on.hex() == off.hex()
    _checked(BMG8, 10**8, on)


def test_n1e9_no_look_certified(monkeypatch):
    """BMG n = 1e9, eps 0.1: no look (the look had moved phase 2's first point: another certified answer)."""
    off, off_calls, on, calls = _off_on(monkeypatch, BMG9, 10**9)
    assert off_calls["loose"] == 1 and calls["loose"] == 0
    _checked(BMG9, 10**9, on)
    assert abs(on / off - 1.0) <= XTOL


def test_below_1e7_unchanged(monkeypatch):
    """n = 1e6 (§8.13.2's own range): the switch changes nothing."""
    rnd, n = BlanketMixedGaussian(0.03, 0.55, 1), 10**6
    switch(monkeypatch, "EPS49_LOOK_SPARED_N", OFF)
    off = ShuffleAccountant(rnd, n).get_epsilon(DELTA)
    switch(monkeypatch, "EPS49_LOOK_SPARED_N", ON)
    assert ShuffleAccountant(rnd, n).get_epsilon(DELTA).hex() == off.hex()
