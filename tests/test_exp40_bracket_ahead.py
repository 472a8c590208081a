"""Session 40, exp40: the pair's last sampling stage takes a point's bracket at once where its bracketed neighbours'
gaps say ``capped_cover`` would take it afterwards (docs/composition.md §2.22, ``pair_ahead.bracket_ahead``, switch
``limits.PAIR_BRACKET_AHEAD``); the pair's own sampling inside the plain engine's warm sweep (§2.23,
``pair_ahead.pair_warm``, switch ``limits.PAIR_WARM_START``).

References: the exact blanket divergence of k-RR under replace-one adjacency by multinomial sums
(tests/data/make_krr_reference.py, independent of sharpdp: its atoms in closed form); the n = 2 mpmath quadrature of the
BMG's output densities (tests/_bmg_reference.py); the accountant's own ``get_delta`` on a fresh object (the export's
goal is stated against it) and its lower values at rel_tol 1e-3 (main's passes, no sweep); main c6d2e6a1's pairs (checksums recorded from /work/venv/main) with the switch off.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import hashlib
import math

import mpmath as mp
import numpy as np
import pytest
from _bmg_reference import reference as bmg_reference
from _main_floats34 import machine_same, switch
from test_prof36_warm import KRR_REF  # (the exact k-RR sums' loader: tests/data/make_krr_reference.py)

from sharpdp.shuffle import (BlanketMixedGaussian, PrivUnit, RandomizedResponse, ShuffleAccountant, clear_caches,
                             dominating_pair)
from sharpdp.shuffle import pair_accuracy, profile
from sharpdp.shuffle.accountant import plain_warm
from sharpdp.shuffle.pair_accuracy import GOAL, cap_tau
from sharpdp.shuffle.pair_ahead import bracket_ahead


class _Spy:
    """Records the points ``bracket_ahead`` chose, the samples ``capped_cover`` re-bracketed and the certified
    evaluations in all (points of ``profile._grid_eval``)."""

    def __init__(self, monkeypatch):
        self.ahead: list = []
        self.rebracketed = self.evaluations = self.warm = 0
        real, real_cover, real_eval = profile.bracket_ahead, profile.capped_cover, profile._grid_eval

        def evaluate(acc, ks, *a, **k):
            self.evaluations += len(ks)
            self.warm += len(ks) * plain_warm.active()
            return real_eval(acc, ks, *a, **k)

        def ahead(*a, **k):
            out = real(*a, **k)
            self.ahead.extend(out)
            return out

        def cover(lo, up, tau, bracket=None, *a, **k):
            def counted(idx):
                self.rebracketed += len(idx)
                return bracket(idx)
            return real_cover(lo, up, tau, None if bracket is None else counted, *a, **k)

        monkeypatch.setattr(profile, "bracket_ahead", ahead)
        monkeypatch.setattr(profile, "capped_cover", cover)
        monkeypatch.setattr(profile, "_grid_eval", evaluate)


def _brute(vals, points, tau, floor=pair_accuracy.ACCURATE_FLOOR):
    """bracket_ahead's definition, written out sample by sample."""
    ks = sorted(vals)
    up, run = {}, math.inf
    for k in ks:
        run = min(run, vals[k][1])
        up[k] = run
    known = [k for k in ks if vals[k][0] > 0]  # (NaN > 0 is False)
    gap = {k: min(max((up[k] - vals[k][0]) / vals[k][0], 0.0), 0.05) for k in known}
    out = []
    for p in sorted(points):
        above = [k for k in ks if k > p]
        if not above or p < ks[0] or up[above[0]] < floor:
            continue
        left = [k for k in known if k < p]
        right = [k for k in known if k > p]
        g = max(gap[left[-1]] if left else gap[right[0]], gap[right[0]] if right else gap[left[-1]])
        if (1 + g) ** 2 > 1 + tau:
            out.append(p)
    return out


def test_bracket_ahead_against_its_definition(monkeypatch):
    rng = np.random.default_rng(40)
    for _ in range(20):
        ks = np.unique(rng.integers(0, 2000, 60))
        up = np.sort(10.0 ** rng.uniform(-16, -1, ks.size))[::-1]
        gap = rng.uniform(0.0, 0.012, ks.size)
        lo = up / (1 + gap)
        lo[rng.random(ks.size) < 0.4] = np.nan  # taken upper first
        lo[rng.random(ks.size) < 0.05] = 0.0  # no lower value
        lo[0] = up[0] / 1.004
        vals = {int(k): (float(a), float(b)) for k, a, b in zip(ks, lo, up)}
        pts = sorted(set(rng.integers(0, 2100, 40).tolist()) - set(vals))
        tau = cap_tau(2e-3)
        assert bracket_ahead(vals, pts, tau) == _brute(vals, pts, tau)
    assert bracket_ahead(vals, pts, None) == []  # no cap: no point
    switch(monkeypatch, "PAIR_BRACKET_AHEAD", False)
    assert bracket_ahead(vals, pts, tau) == []


def _digest(pair):
    return hashlib.sha1(np.ascontiguousarray(pair.sample_deltas).tobytes()
                        + np.ascontiguousarray(pair.probs).tobytes()).hexdigest()[:12]


# main c6d2e6a1's default pairs (sample count, sum of the sampled values, digest of values and masses)
MAIN = {"krr": (249, 0.27006044909250376, "f0bdd45965b7"),
        "privunit": (256, 0.45443635500057045, "ed464b5c06ed"),
        "bmg": (298, 2.520965202546535, "ae36fc351cad")}
ROUNDS = {"krr": (RandomizedResponse(5, 1.0), 300, "replace"), "privunit": (PrivUnit(0.75, 0.2, 10), 1000, "replace"),
          "bmg": (BlanketMixedGaussian(0.5, 1.0, 1), 2, "zero_out")}


@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_switch_off_is_main_and_on_saves_evaluations(name, monkeypatch):
    """Switches off: main's pair bit for bit. On: the rule brackets many points ahead, capped_cover re-brackets fewer,
    the pair takes fewer certified evaluations in all, and its sampling runs in the warm sweep (§2.23)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    rz, n, adj = ROUNDS[name]
    spy = _Spy(monkeypatch)
    clear_caches()
    on = dominating_pair(ShuffleAccountant(rz, n, adj), progress=False)
    ahead, rebr, evals, warm = len(spy.ahead), spy.rebracketed, spy.evaluations, spy.warm
    assert warm >= 0.5 * evals  # (the sampling's; capped_cover's re-brackets run outside the sweep)
    switch(monkeypatch, "PAIR_BRACKET_AHEAD", False)
    switch(monkeypatch, "PAIR_WARM_START", False)
    spy.ahead.clear()
    spy.rebracketed = spy.evaluations = spy.warm = 0
    clear_caches()
    off = dominating_pair(ShuffleAccountant(rz, n, adj), progress=False)
    # (**) session 42, lead: MAIN's digest is bit for bit on the machine that recorded it; elsewhere the sample count and
    # the deltas' sum to MACHINE_REL (tests/_main_floats34.py)
    size, total, digest = MAIN[name]
    assert off.sample_epsilons.size == size and machine_same(float(np.sum(off.sample_deltas)), total)
    assert not spy.ahead and spy.warm == 0
    assert ahead >= 50 and rebr < spy.rebracketed
    assert evals < spy.evaluations, (evals, spy.evaluations)  # (the re-brackets saved)
    assert _digest(on) != _digest(off)


@pytest.mark.parametrize("k,eps0,n", [(5, 1.0, 300), (10, 4.0, 1000)])
def test_krr_pair_against_exact_sums(k, eps0, n, monkeypatch):
    """k-RR replace-one: the pair (rule on) lies at or above the exact blanket divergence at 30 of the samples the
    rule bracketed ahead and at 40
    eps between them, and within the goal (1 %) above a fresh accountant's get_delta where delta >= 1e-12."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    spy = _Spy(monkeypatch)
    clear_caches()
    pair = dominating_pair(ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace"), progress=False)
    assert len(spy.ahead) >= 50

    def exact(e):
        vals, probs, gamma = KRR_REF.krr_replace_law(k, eps0, float(e))
        return KRR_REF.exact_dup(vals, probs, gamma, n)

    se, sd = pair.sample_epsilons, pair.sample_deltas
    picked = np.asarray(sorted(spy.ahead))[np.linspace(0, len(spy.ahead) - 1, 30).astype(int)]
    idx = np.searchsorted(se, (picked - 0.5) * pair.value_discretization_interval)  # (the samples bracketed ahead)
    for e, d in zip(se[idx], sd[idx]):  # (a hair below the sample: its value certifies eps = k Delta there)
        assert d >= exact(np.nextafter(e, 0.0)) * (1 - 1e-9), e
    top = se[np.nonzero(sd <= 1e-12)[0][0]]
    eps = np.linspace(0.013, top, 40)
    got = np.array([pair.get_delta(float(e)) for e in eps])
    ref = np.array([exact(e) for e in eps])
    assert np.all(got >= ref * (1 - 1e-9)), np.min(got / ref)
    fresh = ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace")
    gd = np.array([fresh.get_delta(float(e)) for e in eps])
    big = gd >= 1e-12
    assert np.all(got[big] <= gd[big] * (1 + GOAL)), np.max(got[big] / gd[big])


def test_bmg_n2_pair_against_quadrature(monkeypatch):
    """BMG(0.5, 1), n = 2, zero-out: the samples the rule bracketed ahead (12 of them) and 10 eps between samples lie
    at or above the mpmath quadrature of the output densities, within the goal above a fresh get_delta."""
    spy = _Spy(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), 2, "zero_out")
    pair = dominating_pair(acc, progress=False)
    assert len(spy.ahead) >= 50
    se, sd = pair.sample_epsilons, pair.sample_deltas
    dx = pair.value_discretization_interval
    picked = np.asarray(sorted(spy.ahead))[np.linspace(0, len(spy.ahead) - 1, 12).astype(int)]
    idx = np.searchsorted(se, picked * dx - 0.5 * dx)
    assert np.allclose(se[idx], picked * dx)
    eps_between = np.linspace(0.1, se[np.nonzero(sd <= 1e-12)[0][0]], 10)
    with mp.workdps(30):
        ref_s = np.array([float(bmg_reference(0.5, 1.0, float(np.nextafter(e, 0.0)), "zero_out", 2)) for e in se[idx]])
        ref_b = np.array([float(bmg_reference(0.5, 1.0, float(e), "zero_out", 2)) for e in eps_between])
    assert np.all(sd[idx] >= ref_s * (1 - 1e-9)), np.min(sd[idx] / ref_s)
    got = np.array([pair.get_delta(float(e)) for e in eps_between])
    assert np.all(got >= ref_b * (1 - 1e-9)), np.min(got / ref_b)
    fresh = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), 2, "zero_out")
    gd = np.array([fresh.get_delta(float(e)) for e in eps_between])
    big = gd >= 1e-12
    assert np.all(got[big] <= gd[big] * (1 + GOAL)), np.max(got[big] / gd[big])


def test_private_round_pair_against_tighter_brackets(monkeypatch):
    """The private round BMG(0.95, 4.6), n = 1e4 (the plain engine, warm in the pair's sampling): 40 of its samples at
    or above the lower value of a fresh rel_tol = 1e-3 bracket (get_delta_bounds, main's passes, no sweep) and within
    1 % above a fresh get_delta there."""
    spy = _Spy(monkeypatch)
    clear_caches()
    rz = BlanketMixedGaussian(0.95, 4.6, 1)
    pair = dominating_pair(ShuffleAccountant(rz, 10**4, "zero_out"), progress=False)
    assert spy.warm >= 100
    se, sd = pair.sample_epsilons, pair.sample_deltas
    keep = np.flatnonzero((sd >= 1e-12) & (se > 0))
    idx = keep[np.linspace(0, keep.size - 1, 40).astype(int)]
    e = np.nextafter(se[idx], 0.0)
    lo, _ = ShuffleAccountant(rz, 10**4, "zero_out", rel_tol=1e-3).get_delta_bounds(e)
    assert np.all(sd[idx] >= lo), np.min(sd[idx] / lo)
    gd = ShuffleAccountant(rz, 10**4, "zero_out").get_delta(e)
    assert np.all(sd[idx] <= gd * (1 + GOAL)), np.max(sd[idx] / gd)
