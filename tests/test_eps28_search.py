"""get_epsilon's look at the phase-1 root (docs/accountant.md §8.8): the look's model value is the geometric middle of
its certified bracket, and at n >= 1e7 further loose looks walk the model to the root where the first look moved it far.
Both only choose points. References: a fresh accountant's certified get_delta_bounds at the answer (upper value <=
delta) and at 10 xtol below it (lower value > delta: the answer is not far above the smallest certified epsilon), the
same search with the rule off, and a synthetic accountant with a known D_up for :func:`search._walk`'s bracket ends."""

from __future__ import annotations

from _main_floats34 import switch

import math
from types import SimpleNamespace

import pytest
from test_eps24_search import _traced

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.round_cache import clear_caches

DELTA = 1e-6
XTOL = 1e-3


def _fresh_bounds(make, n: int, eps: float) -> tuple[float, float]:
    """get_delta_bounds of a fresh accountant (no running minimum, no cached report)."""
    clear_caches()
    lo, up = ShuffleAccountant(make(), n, "zero_out").get_delta_bounds(eps)
    return float(lo), float(up)


def _counted(make, n: int) -> tuple[float, dict[str, int]]:
    """A fresh get_epsilon(DELTA) with its calls counted: phase 2's probes and the loose looks."""
    e, looks, pts = _traced(make, n, "zero_out", DELTA)
    return e, {"probes": len(pts), "looks": looks}


def test_look_value() -> None:
    assert S._look_value(4e-7, 9e-7) == pytest.approx(6e-7, rel=1e-15)
    assert S._look_value(0.0, 9e-7) == 9e-7  # (no lower value: the upper value, as before)
    assert S._look_value(-1.0, 9e-7) == 9e-7


def test_look_value_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "MIDDLE", False)
    assert S._look_value(4e-7, 9e-7) == 9e-7


# (the BMG that calibrate_bmg(1e5, 0.1, 1e-6, 1) picks; GaussianRandomizer(1, 1) at n = 1e6: the middle saves a probe
# in both, docs/accountant.md §8.8)
CELLS = [
    (lambda: BlanketMixedGaussian(0.08366888697372162, 0.7569044579049077, 1), 10**5, 3),
    (lambda: GaussianRandomizer(1.0, 1), 10**6, 3),
]


@pytest.mark.parametrize("make,n,probes_before", CELLS)
def test_middle_answers_certified(make, n: int, probes_before: int, monkeypatch: pytest.MonkeyPatch) -> None:
    e, c = _counted(make, n)
    # certified: a fresh accountant's upper value at the answer is <= delta (docs/accountant.md §8)
    assert _fresh_bounds(make, n, e)[1] <= DELTA
    # and not far above the smallest certified epsilon: 10 xtol below it a fresh certified lower value exceeds delta
    assert _fresh_bounds(make, n, e * (1.0 - 10 * XTOL))[0] > DELTA
    # the rule off (the look's upper value as the model's): the same kind of answer, within 2 xtol, one probe more
    monkeypatch.setattr(S, "MIDDLE", False)
    e0, c0 = _counted(make, n)
    assert abs(e0 - e) <= 2 * XTOL * e
    assert c0["probes"] == probes_before and c["probes"] == probes_before - 1


def test_walk_n1e8(monkeypatch) -> None:
    """The BMG of calibrate_bmg(1e8, 0.01, 1e-6, 1): phase 1's far-tail model is 32 % off; the walk's looks bring
    phase 2 to two probes (five before)."""
    switch(monkeypatch, "EPS46_START_LOOK", 0)  # (**) session 46, lead: EPS46_START_LOOK on since the merge skips phase 1 here (docs/accountant.md §8.26)
    def make():
        return BlanketMixedGaussian(0.03889474223781417, 0.529154815911146, 1)

    n = 10**8
    e, c = _counted(make, n)
    assert c["looks"] >= 2 and c["probes"] == 2
    assert _fresh_bounds(make, n, e)[1] <= DELTA
    assert _fresh_bounds(make, n, e * (1.0 - 10 * XTOL))[0] > DELTA


class _Synthetic:
    """A fake accountant for :func:`search._walk`: D(e) = exp(-30 e^2) (root at sqrt(log(1/delta)/30)); its loose
    report at e is the certified bracket [0.995 D(e), 1.01 D(e)]."""

    n = 10**8
    eps_tau = math.inf

    def __init__(self) -> None:
        self.looked: list[float] = []

    @staticmethod
    def d(e: float) -> float:
        return math.exp(-30.0 * e * e)

    def _report(self, e: float, rel_tol: float) -> SimpleNamespace:
        assert rel_tol == S._LOOK_REL
        self.looked.append(e)
        return SimpleNamespace(lower=0.995 * self.d(e), upper=1.01 * self.d(e), law_index=0)


def test_walk_synthetic() -> None:
    delta = 1e-6
    root = math.sqrt(math.log(1 / delta) / 30.0)
    acc = _Synthetic()
    r1 = 1.2 * root  # a phase-1 root 20 % off, with a slope half the true one
    u = S._look_value(0.995 * acc.d(r1), 1.01 * acc.d(r1))
    ld = math.log(-math.log(delta))
    pts = [(math.log(r1), ld - math.log(-math.log(u)))]
    lows: list[float] = []
    lo, hi, x, k, pts_out = S._walk(acc, delta, 0.1 * root, 10 * root, pts, -1.0, XTOL, lows)  # (true slope -2)
    assert hi == 10 * root  # no look is an upper end
    assert len(acc.looked) == len(lows) >= 1 and len(pts_out) == 1 + len(acc.looked)
    # a lower end only where the look's certified lower value exceeds delta, and then below the root
    below = [e for e in acc.looked if 0.995 * acc.d(e) > delta]
    assert lo == (max(below) if below else 0.1 * root) and lo < root
    assert x is not None and abs(x / root - 1.0) <= 5 * XTOL
    assert k == pytest.approx(-2.0, rel=0.05)


def test_walk_no_look_beyond_eps_tau() -> None:
    """No look where the model root lies beyond min(60, eps_tau) (the look's domain, docs/accountant.md §8.4)."""
    delta = 1e-6
    root = math.sqrt(math.log(1 / delta) / 30.0)
    acc = _Synthetic()
    acc.eps_tau = 0.5 * root
    r1 = 0.4 * root
    u = acc.d(r1)
    pts = [(math.log(r1), math.log(-math.log(delta)) - math.log(-math.log(u)))]
    lo, hi, x, k, _ = S._walk(acc, delta, 0.1 * root, 10 * root, pts, -2.0, XTOL, [])
    assert acc.looked == [] and lo == 0.1 * root and hi == 10 * root and k == -2.0
