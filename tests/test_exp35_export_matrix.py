"""Session 35 (exp35): the default export ``to_pld(acc)`` within 1 % above the certified ``get_delta`` wherever
delta >= 1e-12, for every randomizer family and both adjacencies (docs/composition.md §5.1, §2.12; docs/embedding.md
§5), and never below the certified LOWER value (a PLD below it would not dominate the round).

Reference: a second accountant of the same round (its own certified brackets, computed at eps where the pair took no
sample) on 61 eps evenly in [0, 1000 Delta] (Delta the export step: 1000 Delta is the doubling point past 1e-12), the
PLD's delta evaluated by dp_accounting's own code; for binary RR also the exact delta of one concrete pair of
neighbouring datasets (a lower value of the mechanism's delta, by direct summation). The lower side: the pair may lie
below ``get_delta`` where the accountant's own bracket is wider than the export cap's room (§2.12, both certified
upper values): measured at most 0.12 % below here, so 1 % is asserted there.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _main_floats34 import switch
from scipy.stats import binom

import sharpdp.shuffle as sh

pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import export_interval, to_pld  # noqa: E402

HEAVY = (0.0462579752243591, 0.7578495751181393)  # calibrate_bmg(1e4, 1, 1e-6, 1)


def _finite():
    rng = np.random.default_rng(35)
    return sh.FiniteRandomizer.from_probabilities(rng.uniform(0.2, 1.0, size=(3, 4)))


CELLS = {
    "krr-zero_out": lambda: sh.ShuffleAccountant(sh.RandomizedResponse(10, 2.0), 1000),
    "krr-replace": lambda: sh.ShuffleAccountant(sh.RandomizedResponse(10, 2.0), 1000, "replace"),
    "rr2-sharp": lambda: sh.ExactShuffleAccountant(sh.RandomizedResponse(2, 1.0), 200, "replace"),
    "rr2-blanket-replace": lambda: sh.ShuffleAccountant(sh.RandomizedResponse(2, 1.0), 200, "replace"),
    "privunit-zero_out": lambda: sh.ShuffleAccountant(sh.PrivUnit(0.7, 0.2, 3), 1000),
    "privunit-replace": lambda: sh.ShuffleAccountant(sh.PrivUnit(0.7, 0.2, 3), 1000, "replace"),
    "private-zero_out": lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.95, 4.6, 1), 10**4),
    "private-replace": lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.95, 4.6, 1), 10**4, "replace"),
    "bmg-zero_out": lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 1.5, 1), 1000),
    "bmg-replace": lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 1.5, 1), 1000, "replace"),
    "finite-zero_out": lambda: sh.ShuffleAccountant(_finite(), 200),
    "finite-replace": lambda: sh.ShuffleAccountant(_finite(), 200, "replace"),
}
HEAVY_CELLS = {
    "heavy-zero_out": lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(*HEAVY, 1), 10**4),
    "heavy-replace": lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(*HEAVY, 1), 10**4, "replace"),
}


def _rr2_one_dataset_delta(n: int, e0: float, eps: float) -> float:
    """Exact delta(eps) of shuffled binary RR between (0, 0, ..., 0) and (1, 0, ..., 0), both orders."""
    p = math.exp(e0) / (1 + math.exp(e0))
    base = binom.pmf(np.arange(n), n - 1, 1 - p)

    def law(p_one):
        out = np.zeros(n + 1)
        out[1:] += p_one * base
        out[:-1] += (1 - p_one) * base
        return out

    a, b = law(1 - p), law(p)
    t = math.exp(eps)
    return max(float(np.sum(np.maximum(a - t * b, 0))), float(np.sum(np.maximum(b - t * a, 0))))


def _check(name, make, extra=()):
    sh.clear_caches()
    acc = make()
    dx = export_interval(acc)
    pld = to_pld(acc, progress=False)
    ref = make()  # a second accountant: its own brackets at eps off the pair's samples
    ratios = []
    for e in np.concatenate([np.linspace(0.0, 1000 * dx, 61), extra]):
        lo, up = (float(v) for v in ref.get_delta_bounds(float(e)))
        d = float(pld.get_delta_for_epsilon(float(e)))
        assert d >= lo, (name, e, d, lo)  # dominating: never below the certified lower value
        if name.startswith("rr2"):
            assert d >= _rr2_one_dataset_delta(200, 1.0, float(e)), (name, e)
        if up >= 1e-12:
            ratios.append(d / up)
            assert d <= 1.01 * up, (name, e, d / up)
            assert d >= 0.99 * up, (name, e, d / up)
    assert len(ratios) >= 25, (name, len(ratios))
    sh.clear_caches()
    return min(ratios), max(ratios)


@pytest.mark.parametrize("name", list(CELLS))
def test_default_export_within_1_percent(name):
    """Measured (session 35): max ratios 1.0019-1.0058, min 0.9988 (PrivUnit replace), never below the lower value."""
    _check(name, CELLS[name])


@pytest.mark.slow
def test_default_export_within_1_percent_heavy_tailed_zero_out():
    """The heavy-tailed round calibrate_bmg picks at n = 1e4 (eps = 1, delta = 1e-6), zero-out: measured
    1.0004-1.0047."""
    _check("heavy-zero_out", HEAVY_CELLS["heavy-zero_out"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="a known miss (docs/embedding.md §5): the same round, replace-one, exceeds 1 % "
                   "at eps 3.35-3.55 (delta ~3e-12 - 6e-12; up to 1.013): the samples there are taken upper first, "
                   "their upper values 0.85-1.1 % above a fresh bracket's, and cover's cap (docs/composition.md "
                   "§2.12) asks no bracket where the neighbours' gaps are small")
def test_default_export_within_1_percent_heavy_tailed_replace(monkeypatch):
    # (**) session 37, exp37: the miss without docs/composition.md §4.10's check (with it: tests/test_exp37_upper_first.py)
    switch(monkeypatch, "EXPORT_UPPER_FIRST_CHECK", False)
    switch(monkeypatch, "TAIL48_UPPER_B", False)  # (tail48: the rule removes the miss, docs/accountant_tail.md §77.4)
    _check("heavy-replace", HEAVY_CELLS["heavy-replace"], np.linspace(3.35, 3.55, 9))


@pytest.mark.slow
def test_default_export_within_1_percent_heavy_tailed_replace_upper_b(monkeypatch):
    """The known miss above is gone with docs/accountant_tail.md §77's upper value first (`TAIL48_UPPER_B`, on since
    session 48's merge): its cause, the lower clamp B the upper-first samples kept, is the bracket's again, so the
    same eps are within 1 % even without §4.10's check."""
    switch(monkeypatch, "EXPORT_UPPER_FIRST_CHECK", False)
    switch(monkeypatch, "TAIL48_UPPER_B", True)
    _check("heavy-replace", HEAVY_CELLS["heavy-replace"], np.linspace(3.35, 3.55, 9))
