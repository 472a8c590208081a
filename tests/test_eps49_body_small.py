"""docs/accountant.md §8.29.6 (limits.EPS49_BODY_SMALL, EPS49_BODY_DELTA, accountant/start_probe.body_start): at delta <=
EPS49_BODY_DELTA, §8.28's first point is x0 (1 + EPS49_BODY_SMALL xtol) in place of x0 (1 + EPS48_BODY_START xtol).

References: the point against its formula; the answer against fresh accountants (get_delta <= delta at the answer,
above delta one xtol below it: the bracket contract of docs/accountant.md §8) and against the search with the switch
off (within xtol, and at or below it where both answers are the first probe); the probes counted (two)."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.start_probe import body_start

from _main_floats34 import SESSION48, switch
from test_eps46_start_look import _start  # (one shape-start helper)

XTOL, ON = 1e-3, 0.5


def test_switch_off_and_listed():
    """On (0.5) since session 49's merge; SESSION48 holds the off value (0.0: EPS48_BODY_START at every delta, session
    48's floats)."""
    assert limits.EPS49_BODY_SMALL == 0.5 and SESSION48["EPS49_BODY_SMALL"] == 0.0
    assert limits.EPS49_BODY_DELTA == 1e-8


def test_point(monkeypatch):
    n = 10**8
    laws_at, (x0, k0) = _start(GaussianRandomizer(2.0, 1), n)
    c48 = float(limits.EPS48_BODY_START)
    switch(monkeypatch, "EPS49_BODY_SMALL", 0.0)
    assert body_start(laws_at, n, x0, k0, 0.0, 60.0, XTOL, 1e-10) == (x0 * (1.0 + c48 * XTOL), True)  # (off)
    switch(monkeypatch, "EPS49_BODY_SMALL", ON)
    assert body_start(laws_at, n, x0, k0, 0.0, 60.0, XTOL, 1e-10) == (x0 * (1.0 + ON * XTOL), True)
    assert body_start(laws_at, n, x0, k0, 0.0, 60.0, XTOL, 1e-8) == (x0 * (1.0 + ON * XTOL), True)
    assert body_start(laws_at, n, x0, k0, 0.0, 60.0, XTOL, 1e-6) == (x0 * (1.0 + c48 * XTOL), True)  # (delta > 1e-8)
    switch(monkeypatch, "EPS48_BODY_START", 0.0)
    assert body_start(laws_at, n, x0, k0, 0.0, 60.0, XTOL, 1e-10) == (x0, False)  # (§8.28's rule off: shut)


def _run(monkeypatch, rnd, n, delta, c):
    probes = [0]
    orig = S.probe

    def prb(*a, **k):
        probes[0] += 1
        return orig(*a, **k)
    monkeypatch.setattr(S, "probe", prb)
    switch(monkeypatch, "EPS49_BODY_SMALL", c)
    e = ShuffleAccountant(rnd, n).get_epsilon(delta)
    monkeypatch.setattr(S, "probe", orig)
    return e, probes[0]


def _checked(rnd, n, e, delta):
    """Certified: get_delta <= delta at the answer (a fresh accountant), and above delta one xtol below it."""
    assert ShuffleAccountant(rnd, n).get_delta(e) <= delta
    assert ShuffleAccountant(rnd, n).get_delta(e * (1.0 - XTOL)) > delta


def test_gauss46_tighter_two_probes(monkeypatch):
    """GaussianRandomizer(4.6), n = 1e8, delta = 1e-10: two probes either way; the answer 0.4 xtol tighter (both are
    the first probe: x0 (1 + c xtol)), certified by fresh accountants."""
    rnd, n, d = GaussianRandomizer(4.6, 1), 10**8, 1e-10
    off, p_off = _run(monkeypatch, rnd, n, d, 0.0)
    on, p_on = _run(monkeypatch, rnd, n, d, ON)
    assert p_off == p_on == 2
    assert abs(on / off * (1.0 + float(limits.EPS48_BODY_START) * XTOL) / (1.0 + ON * XTOL) - 1.0) < 1e-12
    _checked(rnd, n, on, d)


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s0=st.floats(3.0, 8.0), ld=st.floats(-12.0, -8.0))
def test_property(monkeypatch, s0, ld):
    """GaussianRandomizer(s0 in [3, 8]), n = 1e8, delta 1e-12..1e-8 with the rule on: certified by fresh accountants and within
    xtol of the switch-off answer."""
    rnd, n, delta = GaussianRandomizer(s0, 1), 10**8, 10.0 ** ld
    on = _run(monkeypatch, rnd, n, delta, ON)[0]
    off = _run(monkeypatch, rnd, n, delta, 0.0)[0]
    assert math.isfinite(on) and on > 0.0
    _checked(rnd, n, on, delta)
    assert abs(on / off - 1.0) <= XTOL
