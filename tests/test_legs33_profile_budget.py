"""Session 33, legs33: the through-bot profile's own accuracy budget (docs/composition.md §2.15), leg B's deep values
at LEG_TOL, the loose check's ``open_tol``, the re-certification's progress bar, and ``DominatingPair``'s short repr.

References: the n = 2 / n = 3 replace quadratures (tests/_rev30b_replace_reference.py, _rev32b_replace3_reference.py),
the accountant's own per-eps split search, and the same profile with session 32's rules (finer legs).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _rev30b_replace_reference import replace_delta_n2
from _rev32b_replace3_reference import replace_delta_n3

import sharpdp.shuffle as sh
from sharpdp.shuffle import pair_legs as PL
from sharpdp.shuffle import profile_bottom as PB
from sharpdp.shuffle.pair import DominatingPair

QUAD_ROOM = 1e-3  # (the quadratures' relative error: <= 5e-4 at n = 2, <= 2e-4 at n = 3)
SESSION32 = {"_SLACK_RTOL": 2e-3, "_DEEP": None, "_OPEN_TOL": PL.LOOSE_TOL, "_CLIFF_TOL": None,
             "_CLIFF_SCALE": PL.CLIFF_SCALE}


def _round(s: float, n: int):
    sh.clear_caches()
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(s, 1), n, "replace")
    assert acc.via_bottom
    return acc


@pytest.mark.parametrize("n", (2, 3))
def test_profile_budget_against_quadrature_and_session32(n, monkeypatch):
    """64 eps of GaussianRandomizer(1, 1) replace (leg B has a cliff at ~1.15 nats): the values are >= the
    quadrature (certified upper values), within 1 % above session 32's profile (finer legs) and within 1 % above the
    per-eps split search wherever delta >= 1e-12 (docs/composition.md §2.15)."""
    eps = np.linspace(0.0, 14.0 if n == 2 else 16.0, 64)
    acc = _round(1.0, n)
    up = sh.privacy_profile(acc, eps, progress=False)
    ref = (np.max([replace_delta_n2(1.0, eps, x2) for x2 in (-1.0, 0.0, 1.0)], axis=0) if n == 2
           else replace_delta_n3(1.0, eps, 0.0, 0.0))
    bad = up < ref * (1.0 - QUAD_ROOM)
    assert not bad.any(), (eps[bad], up[bad], ref[bad])
    for name, value in SESSION32.items():
        monkeypatch.setattr(PB, name, value)
    acc32 = _round(1.0, n)
    up32 = sh.privacy_profile(acc32, eps, progress=False)
    big = up32 >= 1e-12
    assert big.sum() >= 40
    r = up[big] / up32[big]
    assert np.all(r <= 1.01) and np.all(r >= 0.99), (r.min(), r.max())
    per_eps = np.array([acc32.get_delta(float(e)) for e in eps[big][::6]])
    assert np.all(up[big][::6] <= 1.01 * per_eps), up[big][::6] / per_eps


class _FakeLeg:
    """A leg x -> e^{-10 x} whose bracket is 1 % wide at any rel_tol; records the tolerances asked."""

    def __init__(self):
        self.asked = []

    def leg(self, j, e, rel_tol):
        self.asked.append((e, rel_tol))
        v = math.exp(-10.0 * e)
        return type("R", (), {"lower": v / 1.01, "upper": v})()


def test_deep_points_take_the_looser_tolerance():
    """Past a point whose upper value is <= the level (the leg is non-increasing) the sampler asks LEG_TOL; before it,
    and at points below such a point found later, the accountant's tolerance; the values are the leg's either way."""
    fake = _FakeLeg()
    acc = type("A", (), {"rel_tol": 1e-2, "_bottom": fake})()
    ev = PL.leg_sampler(acc, 1, 0.5, None, tol=0.03, deep=(math.exp(-10.0 * 1.5) * 1.0001, 0.1))
    lo, up = ev(np.array([0, 1, 2, 3, 4, 5]))
    assert np.allclose(up, np.exp(-10.0 * np.nextafter(np.arange(6) * 0.5, 0.0)) * (np.arange(6) > 0)
                       + (np.arange(6) == 0))
    tols = [t for _, t in fake.asked]
    assert tols == [0.03, 0.03, 0.03, 0.03, 0.1, 0.1]  # (3 x 0.5 = 1.5 found at the level: 2.0 and 2.5 beyond it)
    fake.asked.clear()
    ev(np.array([1]))  # a point before the first one found below the level: the accountant's tolerance
    assert [t for _, t in fake.asked] == [0.03]


def test_open_tol_decides_which_loose_values_are_checked():
    """A loose sample with a 5 % bracket is settled for open_tol 0.03 (kept, never certified again) and open for
    open_tol 0.1 (certified again where its slack can move the split bound)."""
    dx = 0.05
    ka = np.arange(0, 201)
    ua = np.exp(-2.0 * ka * dx)
    la = ua / 1.001
    kb = np.arange(0, 21)
    ub = np.exp(-6.0 * kb * dx) * 0.5
    lb = ub / 1.05  # every loose value 5 % wide
    asked = []

    def fine(ks):
        asked.extend(np.asarray(ks).tolist())
        v = np.exp(-6.0 * np.asarray(ks) * dx) * 0.5
        return v / 1.001, v / 1.04

    PL.tighten_loose_leg(ka, la, ua, kb, lb, ub, np.ones(kb.size, dtype=bool), dx, 1e-15, 2e-3, fine)
    assert asked == []
    lb2, ub2, loose = PL.tighten_loose_leg(ka, la, ua, kb, lb, ub, np.ones(kb.size, dtype=bool), dx, 1e-15, 2e-3,
                                           fine, open_tol=0.1)
    assert asked and not loose[asked].any()
    assert np.all(ub2 <= ub) and np.all(ub2[asked] < ub[asked])


def test_recertification_bar_counts_the_values(capsys, monkeypatch):
    """The re-certified loose values and the cliffs' values are counted on one bar (progress=True: at once; the plain
    bar's quiet period shortened), and progress=False prints nothing; the values are the same floats either way."""
    from sharpdp import _progress as P

    monkeypatch.setattr(P._PlainBar, "quiet", 0.0)
    acc = _round(1.0, 2)
    eps = np.linspace(0.0, 12.0, 40)
    quiet = sh.privacy_profile(acc, eps, progress=False)
    assert "certified again" not in capsys.readouterr().err
    acc = _round(1.0, 2)
    shown = sh.privacy_profile(acc, eps, progress=True)
    err = capsys.readouterr().err
    assert "leg 2 of" in err and "certified again where they move the split bound" in err
    assert np.array_equal(quiet, shown)


def test_dominating_pair_repr_is_short():
    losses = np.arange(-3, 5000, dtype=np.int64)
    pair = DominatingPair(0.01, losses, np.full(losses.size, 1e-4), 0.4997, "replace", np.linspace(0.0, 5.0, 300),
                          np.linspace(1.0, 0.0, 300))
    text = repr(pair)
    assert len(text) < 200 and "\n" not in text
    for part in ("step=0.01", "adjacency='replace'", "5003 finite losses in [-0.03, 49.99] nats",
                 "infinity_mass=0.4997", "300 samples at eps in [0, 5]", "certified=True"):
        assert part in text, (part, text)
    full = pair.full_repr()
    assert "4999" in full and "..." not in full and full.startswith("DominatingPair(value_discretization_interval=")
    empty = DominatingPair(0.5, np.empty(0, dtype=np.int64), np.empty(0), 1.0)
    assert repr(empty) == ("DominatingPair(step=0.5, adjacency='zero_out', 0 finite losses, infinity_mass=1, "
                           "0 samples, certified=True)")
