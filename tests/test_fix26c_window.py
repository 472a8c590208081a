"""get_epsilon through bot (docs/accountant.md §9.9 step 3): the half-step ladder k = 1/2, ..., 15/2 toward e_c,
tried after the golden section, finds a window of certified values past a cliff of the legs' values, and adds at most
8 evaluations to a refusal. References: fresh accountants' get_delta (a new object per value, no memo, no leg cache).
GaussianRandomizer(sigma0, 1), n = 1000, replace."""

from __future__ import annotations

import math
import re

import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle import clear_caches
from _main_floats34 import switch  # noqa: E402

XTOL = 1e-3
COUNT = r"the smallest found among the (\d+) certified values the search computed"


def _gauss(sigma0: float) -> sh.ShuffleAccountant:
    clear_caches()
    return sh.ShuffleAccountant(sh.GaussianRandomizer(sigma0, 1), 1000, "replace")


def _fresh(sigma0: float, e: float) -> float:
    return float(_gauss(sigma0).get_delta(e))


def test_window_past_the_cliff_answers_at_its_lower_edge(monkeypatch):
    """sigma0 = 3, delta = 1.5e-28 (e_c = 9.22): the values are ~1e-27 up to the cliff at 8.727 and rise past it
    with the charge (1.47e-28 at 8.8, 1.61e-28 at 8.93). The answer is certified by a fresh get_delta, lies in
    the window, and a fresh value 2 xtol below it is above delta (the flat part: the bisection found the cliff's
    edge). Mutations caught: the half steps dropped (``then`` = (): ValueError, 'smallest value 1.6088e-28 at
    8.928', the refusal before this change); ``_first_of`` without its value check (the k = 1 point, value above
    delta, as the upper end: answer 8.5227, outside the window)."""
    switch(monkeypatch, "VIA_BOTTOM_FLOOR_STOP", False)  # (**) session 36, rep36: pins main's minimised values below VALUE_FLOOR (docs/accountant.md §9.13, rule 4, stops at the first split below it)
    delta = 1.5e-28
    r = _gauss(3.0).get_epsilon(delta)
    assert 8.7 < r <= 8.8 * (1 + XTOL), r
    assert _fresh(3.0, r) <= delta
    assert _fresh(3.0, r * (1 - 2 * XTOL)) > delta


def test_refusal_evaluates_at_most_eight_more_points_each_above_delta(monkeypatch):
    """sigma0 = 2, delta = 1e-30 (e_c = 4.58, tau = 9.95e-33): still refused (no eps below e_c certifies it: the
    legs stay ~1e-27 up to e_c; a fresh get_delta(4.94) = 9.94e-28 is above e_c), now among 42 certified values
    (34 before: the 8 half steps are the bounded extra cost), naming a value a fresh get_delta at its eps
    reproduces (to 1e-9). A fresh get_delta at each half step is above delta (the independent reference that
    the refusal is consistent). Mutations caught: ``_first_of`` without its value check (returns the k = 1/2
    point: an answer, no ValueError); the half steps dropped (34 values, the count assert)."""
    switch(monkeypatch, "FEW_WIDE", False)  # (**) session 38, lead: §8.16 proves this refusal before any split (another message)
    delta = 1e-30
    acc = _gauss(2.0)
    tau = float(acc._bottom.bottom.sampler_tau)
    with pytest.raises(ValueError, match=r"^delta: 1e-30 is below .*not certified at any epsilon tried") as info:
        acc.get_epsilon(delta)
    text = str(info.value)
    m = re.search(COUNT, text)
    assert m is not None and int(m.group(1)) == 42, text
    u, at = (float(x) for x in re.search(r"smallest value ([0-9.e+-]+), at eps = ([0-9.e+-]+)", text).groups())
    assert u > delta and _fresh(2.0, at) == pytest.approx(u, rel=1e-9)
    e_c = math.log(delta / tau - 3.0)
    assert e_c == pytest.approx(4.58, abs=0.01)
    for k in (0.5, 1.5, 2.5, 7.5):
        e = math.log(delta * (1 - 0.5**k) / tau - 3.0)
        assert 0 < e < e_c and _fresh(2.0, e) > delta
