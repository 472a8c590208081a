"""Adversarial review (rev48b) of docs/accountant.md §8.28 (``limits.EPS48_BODY_START``, on;
``accountant/start_probe.body_start``): get_epsilon's phase 1 skipped at an all-body shape start, n >= 1e8.

Claims attacked: (Lemma 8.28) the answer stays certified — a fresh accountant's ``get_delta_bounds(answer)`` upper value
is <= delta and ``get_delta`` one xtol below the answer exceeds delta (§8's bracket contract); the answer is within xtol
of the switch-off answer; where the gate opens but the model is poor (the first probe far from the root, or a wrong
slope), the search still terminates within a few probes and certifies. Cells not in tests/test_eps48_body_start.py:
unusual deltas (1e-12), GaussianRandomizer(s0) with s0 outside the measured 2 / 4.6, a BMG whose shape start is poor (4.9 xtol below), the gate's records
checked so that each case really runs the rule (a test that cannot fail is a defect). References: fresh accountants
(get_delta at and below the answer) and the switch-off search."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant import search as S

from _main_floats34 import switch

XTOL, ON = 1e-3, 0.9


def _spy(monkeypatch, x_factor: float = 1.0, k_factor: float = 1.0) -> dict:
    """Record body_start's verdicts and phase 2's probes; optionally move the shape model's root x0 by ``x_factor``
    and its slope by ``k_factor`` (a poor model: an estimate only, so the answer must stay certified)."""
    rec: dict = {"gate": [], "probes": 0}
    ss, bs, pr = S.shape_start, S.body_start, S.probe

    def shape(*a, **k):
        r = ss(*a, **k)
        return None if r is None else (r[0] * x_factor, r[1] * k_factor)

    def body(*a, **k):
        r = bs(*a, **k)
        rec["gate"].append(r[1])
        return r

    def probe(*a, **k):
        rec["probes"] += 1
        return pr(*a, **k)
    monkeypatch.setattr(S, "shape_start", shape)
    monkeypatch.setattr(S, "body_start", body)
    monkeypatch.setattr(S, "probe", probe)
    return rec


def _certified(rnd, n: int, delta: float, e: float) -> None:
    """Fresh accountants: the certified upper value at the answer <= delta, get_delta one xtol below > delta."""
    lo, up = ShuffleAccountant(rnd, n).get_delta_bounds(e)
    assert 0.0 <= lo <= up <= delta, (e, lo, up, delta)
    assert ShuffleAccountant(rnd, n).get_delta(e * (1.0 - XTOL)) > delta


def _off(monkeypatch, rnd, n: int, delta: float) -> float:
    switch(monkeypatch, "EPS48_BODY_START", 0.0)
    e = ShuffleAccountant(rnd, n).get_epsilon(delta)
    switch(monkeypatch, "EPS48_BODY_START", ON)
    return e


@pytest.mark.parametrize(("rnd", "delta"), [(GaussianRandomizer(3.3, 1), 1e-12), (GaussianRandomizer(10.0, 1), 1e-12),
                                            (GaussianRandomizer(6.0, 1), 1e-9),
                                            (BlanketMixedGaussian(0.8, 4.0, 1), 1e-6)], ids=["g3.3", "g10", "g6", "bmg"])
def test_unusual_cells_certified_and_within_xtol(monkeypatch, rnd, delta):
    """The gate opens (recorded), the answer is certified by fresh accountants and within xtol of the switch-off
    answer, in two probes or a few more (BMG(0.8, 4): the shape start 4.9 xtol below the answer, three probes).
    Measured: at delta <= 1e-9 the start lies only 0.2-0.5 xtol below the root, so the first probe (0.9 xtol above the
    start) is above it and is the answer: +0.40 to +0.78 xtol looser than the switch-off answer (inside the contract)."""
    n = 10**8
    off = _off(monkeypatch, rnd, n, delta)
    rec = _spy(monkeypatch)
    on = ShuffleAccountant(rnd, n).get_epsilon(delta)
    assert rec["gate"] == [True] and rec["probes"] <= 4, rec
    assert on > 0.0
    _certified(rnd, n, delta, on)
    assert abs(on / off - 1.0) <= XTOL


@pytest.mark.parametrize(("xf", "kf"), [(0.5, 1.0), (5.0, 1.0), (1.0, 1e-3), (0.5, 1e3)])
def test_poor_model_still_certifies_and_terminates(monkeypatch, xf, kf):
    """A poor shape model (root moved 0.5x / 5x, slope 1e-3x / 1e3x) at GaussianRandomizer(4.6), n = 1e8: the gate
    still opens (the point lies inside the frame), the search ends within 12 probes (measured 7-10), certified, within
    xtol of the unperturbed switch-off answer."""
    rnd, n, delta = GaussianRandomizer(4.6, 1), 10**8, 1e-6
    off = _off(monkeypatch, rnd, n, delta)
    rec = _spy(monkeypatch, xf, kf)
    on = ShuffleAccountant(rnd, n).get_epsilon(delta)
    assert rec["gate"] == [True] and rec["probes"] <= 12, rec
    _certified(rnd, n, delta, on)
    assert abs(on / off - 1.0) <= XTOL


def test_same_accountant_two_deltas(monkeypatch):
    """Two queries on one accountant (the monotone memo and the kept calls, §8.27.1, with the rule): each answer
    certified by fresh accountants; the smaller delta's answer is the larger."""
    rnd, n = GaussianRandomizer(4.6, 1), 10**8
    rec = _spy(monkeypatch)
    acc = ShuffleAccountant(rnd, n)
    e6, e9 = acc.get_epsilon(1e-6), acc.get_epsilon(1e-9)
    assert rec["gate"] == [True, True]
    assert e9 > e6
    _certified(rnd, n, 1e-6, e6)
    _certified(rnd, n, 1e-9, e9)


def test_switch_default_on():
    """The rule under review is the one shipped (on, 0.9, from n = 1e8)."""
    assert limits.EPS48_BODY_START == ON and limits.EPS48_BODY_N == 10**8


def test_near_zero_poor_start(monkeypatch):
    """A natural poor start with the gate open: GaussianRandomizer(4.6), n = 1e8, delta = 1.26e-5 (get_delta(0) is
    1.285e-5, the answer ~5.2e-7): the shape start lies ~8 % (80 xtol) below the root; measured five probes (three
    switch off). The search must still end within 10 probes, certified, within xtol of the switch-off answer."""
    rnd, n, delta = GaussianRandomizer(4.6, 1), 10**8, 1.26e-5
    off = _off(monkeypatch, rnd, n, delta)
    rec = _spy(monkeypatch)
    on = ShuffleAccountant(rnd, n).get_epsilon(delta)
    assert rec["gate"] == [True] and rec["probes"] <= 10, rec
    assert on > 0.0
    _certified(rnd, n, delta, on)
    assert abs(on / off - 1.0) <= XTOL
