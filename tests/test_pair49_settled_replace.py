"""Session 49 (pair49): §2.26's settled cover for a replace-one BlanketMixedGaussian round
(``limits.PAIR49_SETTLED_REPLACE``, off by default; docs/accountant_tail.md §79, docs/composition.md §2.35).

References: fresh accountants' certified brackets (``get_delta_bounds``: the bracket's own rounds and lower values, a
second computation the rule does not touch) -- the pair must lie at or above every certified lower value (it dominates
the true profile) and within [1, 1.01] of ``get_delta`` (the pair's contract at the tests' eps, docs/composition.md
§2.31.4); the capped cover's inputs, to show that the rule ran (every sample upper first, the margin passed).
"""

from __future__ import annotations

import math

import pytest
from _main_floats34 import switch

import sharpdp.shuffle as sh
from sharpdp.shuffle import pair_settled, profile
from sharpdp.shuffle.accountant import limits

BMG = (0.0653, 0.723)  # the replace-one pair of docs/composition.md §2.31.4 (n = 1e4)
N = 10**4


def _acc(adjacency="replace", params=BMG, n=N):
    return sh.ShuffleAccountant(sh.BlanketMixedGaussian(*params, 1), n, adjacency)


def test_gate(monkeypatch):
    """Replace-one BMG rounds whose law takes the far-tail treatment at every probe eps, only with both switches on; zero-out
    keeps PAIR45_SETTLED_BMG's gate; a Gaussian randomizer's replace-one round (bounded through bot) never."""
    rep, zo = _acc(), _acc("zero_out")
    gauss = sh.ShuffleAccountant(sh.GaussianRandomizer(1.0, 1), 100, "replace")
    assert gauss.via_bottom
    switch(monkeypatch, "PAIR49_SETTLED_REPLACE", False)
    assert pair_settled.settled_margin(rep) is None
    switch(monkeypatch, "PAIR49_SETTLED_REPLACE", True)
    assert pair_settled.settled_margin(rep) == limits.PAIR43_SETTLED_MARGIN
    assert pair_settled.settled_margin(zo) is None  # (PAIR45_SETTLED_BMG off: main's gate for zero-out)
    assert pair_settled.settled_margin(gauss) is None
    # a round whose law takes the plain engine at eps = 0 (its gaps vary between neighbouring eps: with the margin
    # its pair was measured 0.2 % below get_delta at eps 2e-4, docs/accountant_tail.md §79.3)
    private = _acc(params=(0.95, 4.6))
    small = _acc(params=(0.5, 1.0), n=10)  # (far tail at eps <= 0.5 and 4, the plain engine at 1 and 2: not measured)
    assert pair_settled.far_at_top(rep) and not pair_settled.far_at_top(private) and not pair_settled.far_at_top(small)
    assert pair_settled.settled_margin(private) is None and pair_settled.settled_margin(small) is None
    switch(monkeypatch, "TAIL48_UPPER_B", False)  # the upper values first without §77 were 0.6 - 1 % loose
    assert pair_settled.settled_margin(rep) is None
    switch(monkeypatch, "TAIL48_UPPER_B", True)
    switch(monkeypatch, "PAIR43_SETTLED_COVER", False)
    assert pair_settled.settled_margin(rep) is None


def test_pair_dominates_and_meets_the_contract(monkeypatch):
    """With the rule on: every sample taken upper first and covered by the margin (no bracket asked by the capped
    cover); at eps from the top to the deep tail (delta 5e-2 .. 1e-12) the pair is at or above a fresh certified
    lower value and within [1, 1.01] x a fresh ``get_delta`` (measured 1.0012 - 1.0060 on 58 eps)."""
    switch(monkeypatch, "PAIR49_SETTLED_REPLACE", True)
    seen: list = []
    real = profile.capped_cover

    def spy(lo, up, tau, bracket=None, **kw):
        seen.append((list(lo), kw.get("settled")))
        return real(lo, up, tau, bracket, **kw)

    monkeypatch.setattr(profile, "capped_cover", spy)
    pair = sh.dominating_pair(_acc(), progress=False)
    assert len(seen) == 1
    lo, settled = seen[0]
    assert settled == limits.PAIR43_SETTLED_MARGIN
    assert all(math.isnan(v) for v in lo)  # (every sample upper first: no lower value, so no bracket)
    for e in (0.05, 0.5, 1.0, 2.0, 3.0, 3.4, 3.6, 3.8):
        sh.clear_caches()
        low, up = (float(v) for v in _acc().get_delta_bounds(e))
        assert up >= 1e-12
        p = float(pair.get_delta(e))
        assert p >= low, (e, p, low)
        assert 1.0 <= p / up <= 1.01, (e, p / up)


@pytest.mark.parametrize("adjacency", ["zero_out"])
def test_zero_out_untouched(monkeypatch, adjacency):
    """The switch changes nothing for a zero-out round (the same gate as without it)."""
    acc = _acc(adjacency)
    switch(monkeypatch, "PAIR49_SETTLED_REPLACE", False)
    off = pair_settled.settled_margin(acc)
    switch(monkeypatch, "PAIR49_SETTLED_REPLACE", True)
    assert pair_settled.settled_margin(acc) == off


def test_export_step_probes_serve_the_pair(monkeypatch):
    """Under the settled cover the export step's probes (brackets at k step, no halving needed) enter the round's value
    cache, so the pair's doubling does not compute them again (docs/accountant_tail.md §79.6); without it, as before,
    only where the step is halved."""
    from sharpdp.shuffle import export_step, round_cache
    from sharpdp.shuffle.profile import doubling_epsilon

    for on in (False, True):
        switch(monkeypatch, "PAIR49_SETTLED_REPLACE", on)
        acc = _acc()
        step = doubling_epsilon(acc, export_step.EXPORT_DELTA) / export_step.EXPORT_POINTS
        assert export_step.lattice_halvings(acc, step) == 0
        cache = round_cache.value_cache(acc)
        probes = [float(k * step) for k in export_step.PROBE_KS if k > 0]
        hits = [e for e in cache if any(abs(e - p) <= 1e-12 * p for p in probes)]
        assert len(hits) == (len(probes) if on else 0), (on, hits)
