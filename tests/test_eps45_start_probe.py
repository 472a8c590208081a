"""docs/accountant.md §8.25 (session 45, eps45): get_epsilon's phase 1 skipped where the search starts at a start
model's root (the single big jump's, or the shape model's) and the single big jump's spread there is at most
limits.EPS45_START_PROBE (accountant/start_probe.py).

The rule chooses points only: the tests check the gate against the spread recomputed from the laws' own moments, and
every answer against a fresh certified accountant, with the switch off (main's search) as the reference answer."""

from __future__ import annotations

import math
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.jump_guess import first_point
from sharpdp.shuffle.accountant.shape_start import shape_start
from sharpdp.shuffle.accountant.start_probe import start_probe
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import SESSION44, switch

DELTA, XTOL = 1e-6, 1e-3
ON = 0.02  # (the value measured in docs/accountant.md §8.25)


def _laws_at(r, adjacency="zero_out"):
    return lambda e: laws_for(r, e, adjacency)


def _spreads(r, n, e):
    """sd(L) / (sqrt((n - 1) gamma) |E[L]|) of every law at e with E[L] < 0 and a positive top (the model's spread,
    docs/accountant.md §8.11, recomputed from the laws' moments)."""
    out = []
    for g, law in laws_for(r, e, "zero_out"):
        if law.top_bound() > 0 and law.mean() < 0:
            out.append(law.std() / (math.sqrt((n - 1) * float(g)) * -law.mean()))
    return out


def _answer(monkeypatch, r, n, value, delta=DELTA):
    """get_epsilon's answer with the switch at ``value`` (fresh accountant) and its upper-only passes."""
    switch(monkeypatch, "EPS45_START_PROBE", value)
    acc = ShuffleAccountant(r, n, "zero_out")
    with mock.patch.object(S, "upper_value", wraps=S.upper_value) as counted:
        return acc.get_epsilon(delta, xtol=XTOL), counted.call_count


def _certified(r, n, eps, delta=DELTA):
    """A fresh accountant: get_delta at the answer <= delta, and above delta 2 xtol below it (the bracket's lower end
    lies within xtol: docs/accountant.md §8)."""
    assert ShuffleAccountant(r, n, "zero_out").get_delta(eps) <= delta
    assert ShuffleAccountant(r, n, "zero_out").get_delta(eps * (1.0 - 2.0 * XTOL)) > delta


def test_switch_on_at_main_and_listed():
    """On since session 45's merge (docs/accountant.md §8.25); SESSION44 holds the value of session 44's floats."""
    assert limits.EPS45_START_PROBE == 0.02 and SESSION44["EPS45_START_PROBE"] == 0.0


def test_gate_against_the_laws_spread(monkeypatch):
    """BMG(0.0320, 0.5425), n = 1e5 (the regime map's calibrate_bmg at eps = 2): the gate opens at a threshold above
    every law's spread at the model root, stays shut below every one, and is shut with the switch off."""
    r, n = BlanketMixedGaussian(0.03203000749041261, 0.5424513134730107, 1), 10**5
    x0, k = first_point(_laws_at(r), n, DELTA, 1.0, 60.0)
    assert k is not None and k < 0
    q = _spreads(r, n, x0)
    switch(monkeypatch, "EPS45_START_PROBE", 0.0)
    assert not start_probe(_laws_at(r), n, x0, k, 0.0, 60.0)

    def opens(t):
        switch(monkeypatch, "EPS45_START_PROBE", t)
        return start_probe(_laws_at(r), n, x0, k, 0.0, 60.0)
    assert opens(max(q) * 1.01) and not opens(min(q) * 0.99)
    # the gate switches at one law's spread (the law that makes the single big jump), here below the measured value
    edges = [v for v in q if opens(v * 1.001) and not opens(v * 0.999)]
    assert len(edges) == 1 and edges[0] < ON and opens(ON)
    switch(monkeypatch, "EPS45_START_PROBE", ON)
    assert not start_probe(_laws_at(r), n, x0, None, 0.0, 60.0)  # (no single-big-jump root)
    assert not start_probe(_laws_at(r), n, x0, k, x0, 60.0)  # (outside the frame)
    assert not start_probe(_laws_at(r), n, x0, k, 0.0, x0)
    assert not start_probe(_laws_at(r), n, x0, -k, 0.0, 60.0)  # (a slope of the wrong sign)


def test_gate_shut_where_the_spread_is_wide(monkeypatch):
    """BMG(0.0467, 0.6195), n = 1e6 (eps = 0.1 on the map): the model's root lay 4.9 % below the answer; its spread
    (0.16) keeps the gate shut at the measured threshold."""
    r, n = BlanketMixedGaussian(0.04673496469780073, 0.619497723082192, 1), 10**6
    x0, k = first_point(_laws_at(r), n, DELTA, 0.01, 60.0)
    assert k is not None
    assert min(_spreads(r, n, x0)) > ON
    switch(monkeypatch, "EPS45_START_PROBE", ON)
    assert not start_probe(_laws_at(r), n, x0, k, 0.0, 60.0)


def test_shape_start_gate(monkeypatch):
    """The shape start (docs/accountant.md §8.24.1): GaussianRandomizer(0.5), n = 1e5 (its spread below 1e-4) opens the
    gate; GaussianRandomizer(2), n = 1e5 (spread 0.32, the root 4 xtol above the start) keeps it shut, the answer the
    same float as with the switch off."""
    switch(monkeypatch, "EPS45_START_PROBE", ON)
    for sigma, opens in ((0.5, True), (2.0, False)):
        r, n = GaussianRandomizer(sigma, 1), 10**5
        x, k = shape_start(_laws_at(r), n, DELTA, 0.0, 60.0, 0.01)
        assert max(_spreads(r, n, x)) < ON if opens else min(_spreads(r, n, x)) > ON
        assert start_probe(_laws_at(r), n, x, k, 0.0, 60.0) is opens
    r = GaussianRandomizer(2.0, 1)
    got = [_answer(monkeypatch, r, 10**5, value)[0].hex() for value in (0.0, ON)]
    assert got[0] == got[1]


def test_atom_laws_untouched(monkeypatch):
    """k-RR (atom laws): no single-big-jump root, so the rule never runs; the same answer bit for bit."""
    r = RandomizedResponse(4, 2.0)
    got = []
    for value in (0.0, ON):
        switch(monkeypatch, "EPS45_START_PROBE", value)
        got.append(ShuffleAccountant(r, 10**5, "replace").get_epsilon(DELTA).hex())
    assert got[0] == got[1]


def test_get_epsilon_certified_fewer_passes(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e8 and BMG(0.0122, 0.3854), n = 1e5 (single-big-jump starts), GaussianRandomizer(0.5),
    n = 1e5 (the shape start): no upper-only pass with the rule (one or more without it); the answer is certified by a
    fresh accountant and within xtol of the switch-off answer."""
    cells = ((GaussianRandomizer(0.5, 1), 10**8), (BlanketMixedGaussian(0.012318625335320956, 0.3854226856556957, 1),
                                                    10**5), (GaussianRandomizer(0.5, 1), 10**5))
    for r, n in cells:
        off, p_off = _answer(monkeypatch, r, n, 0.0)
        on, p_on = _answer(monkeypatch, r, n, ON)
        assert p_on == 0 < p_off
        _certified(r, n, on)
        assert abs(on / off - 1.0) <= XTOL


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(gamma=st.floats(0.006, 0.03), sigma0=st.floats(0.3, 0.5), n=st.sampled_from([10**5, 10**6, 10**8]),
       delta=st.sampled_from([1e-6, 1e-8]))
def test_property_answer_certified_within_xtol_of_main(monkeypatch, gamma, sigma0, n, delta):
    """Over BMGs of the single-big-jump regime: with the rule on the answer is certified by a fresh accountant and
    within xtol of main's (the switch off), whether or not the gate opens."""
    r = BlanketMixedGaussian(gamma, sigma0, 1)
    off, _ = _answer(monkeypatch, r, n, 0.0, delta)
    on, _ = _answer(monkeypatch, r, n, ON, delta)
    assert ShuffleAccountant(r, n, "zero_out").get_delta(on) <= delta
    assert abs(on / off - 1.0) <= XTOL


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(sigma0=st.floats(0.4, 0.7), n=st.sampled_from([10**5, 10**6]))
def test_property_gaussian_starts_certified(monkeypatch, sigma0, n):
    """GaussianRandomizer at small sigma0 (shape and single-big-jump starts): with the rule on the answer is certified
    by a fresh accountant and within xtol of main's."""
    r = GaussianRandomizer(sigma0, 1)
    off, _ = _answer(monkeypatch, r, n, 0.0)
    on, _ = _answer(monkeypatch, r, n, ON)
    assert ShuffleAccountant(r, n, "zero_out").get_delta(on) <= DELTA
    assert abs(on / off - 1.0) <= XTOL


def test_gate_shut_below_n_min(monkeypatch):
    """GaussianRandomizer(1), n = 100: the spread is below the threshold but the start lay 5.7 xtol below the answer
    (a third probe with the gate open): the least n keeps it shut, the same float as with the switch off."""
    r, n = GaussianRandomizer(1.0, 1), 100
    x0, k = first_point(_laws_at(r), n, DELTA, 1.0, 60.0)
    assert k is not None and min(_spreads(r, n, x0)) < ON
    switch(monkeypatch, "EPS45_START_PROBE", ON)
    assert not start_probe(_laws_at(r), n, x0, k, 0.0, 60.0)
    assert start_probe(_laws_at(r), 10**4, *first_point(_laws_at(r), 10**4, DELTA, 1.0, 60.0), 0.0, 60.0)
    got = [_answer(monkeypatch, r, n, value)[0].hex() for value in (0.0, ON)]
    assert got[0] == got[1]
