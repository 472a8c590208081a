"""Session 39, exp39b: a privacy profile's sweep runs up to SWEEP_UPPER_RUNS upper-only values after a measured gap,
those past WARM_UPPER_RUNS only within SWEEP_UPPER_FALL of the measured value (docs/composition.md §2.21,
``accountant/plain_warm.py``; switch ``limits.SWEEP_UPPER_LONG``).

References: the exact blanket divergence of k-RR under replace-one adjacency by multinomial sums
(tests/data/make_krr_reference.py, independent of sharpdp); fresh accountants at a tighter tolerance (rel_tol 1e-3,
get_delta_bounds: no sweep, main's passes); the same sweep with the switch off.
"""

from __future__ import annotations

import numpy as np
import pytest
from _main_floats34 import switch
from test_prof36_warm import KRR_REF  # (the exact k-RR sums' loader: tests/data/make_krr_reference.py)

from sharpdp.shuffle import BlanketMixedGaussian, RandomizedResponse, ShuffleAccountant, clear_caches, privacy_profile
from sharpdp.shuffle.accountant import limits, plain, plain_warm


class _Long:
    """Counts the upper-only values kept past WARM_UPPER_RUNS in a row (the values this rule adds)."""

    def __init__(self, monkeypatch):
        self.values = 0
        real = plain._warm_upper

        def wrapped(*a, **k):
            out = real(*a, **k)
            self.values += out is not None and a[5].runs >= limits.WARM_UPPER_RUNS
            return out

        monkeypatch.setattr(plain, "_warm_upper", wrapped)


def test_switch_off_and_short_runs_are_section_2_19(monkeypatch):
    """SWEEP_UPPER_LONG False, and on with SWEEP_UPPER_RUNS = WARM_UPPER_RUNS: the same floats bit for bit (the rule
    adds nothing), no value past WARM_UPPER_RUNS; on with its defaults: such values are kept and some floats move."""
    eps = np.linspace(0.0, 1.02e-3, 120)
    make = lambda: ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4)  # noqa: E731
    count = _Long(monkeypatch)
    switch(monkeypatch, "SWEEP_UPPER_LONG", False)
    clear_caches()
    off = privacy_profile(make(), eps)
    assert count.values == 0
    switch(monkeypatch, "SWEEP_UPPER_LONG", True)
    switch(monkeypatch, "SWEEP_UPPER_RUNS", limits.WARM_UPPER_RUNS)
    clear_caches()
    short = privacy_profile(make(), eps)
    assert count.values == 0 and np.array_equal(off, short)
    switch(monkeypatch, "SWEEP_UPPER_RUNS", 15)
    clear_caches()
    on = privacy_profile(make(), eps)
    assert count.values > 0 and np.any(on != off)


def test_private_round_every_value_against_tighter_brackets(monkeypatch):
    """The private round BMG(0.95, 4.6), n = 1e4, zero-out, 300-point profile: every value at or above the lower value
    of a tighter independent bracket (rel_tol 1e-3, get_delta_bounds) and within the accountant's rel_tol of it; the
    rule kept at least 40 values past WARM_UPPER_RUNS."""
    assert limits.SWEEP_UPPER_LONG
    count = _Long(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4)
    eps = np.linspace(0.0, 1.02e-3, 300)
    v = privacy_profile(acc, eps)
    assert count.values >= 40, count.values
    lo, _ = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4, rel_tol=1e-3).get_delta_bounds(eps)
    assert np.all(lo <= v) and np.all(v <= (1 + acc.rel_tol) * lo * (1 + 1e-9)), np.max(v / lo)


@pytest.mark.parametrize("k,eps0,n,top", [(10, 4.0, 1000, 0.9), (10, 2.0, 300, 1.2)])
def test_krr_replace_profile_against_exact_sums(k, eps0, n, top, monkeypatch):
    """k-RR replace-one, 100-point profile: every value at or above the exact blanket divergence (multinomial sums)
    and within rel_tol (1e-2) of it."""
    eps = np.linspace(0.02, top, 100)
    count = _Long(monkeypatch)
    clear_caches()
    acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, "replace")
    v = privacy_profile(acc, eps)
    exact = np.array([KRR_REF.exact_dup(*KRR_REF.krr_replace_law(k, eps0, float(e)), n) for e in eps])
    big = exact > 1e-300
    assert np.all(v[big] >= exact[big] * (1 - 1e-9)), np.min(v[big] / exact[big])
    assert np.all(v[big] <= exact[big] * (1 + acc.rel_tol) * (1 + 1e-9)), np.max(v[big] / exact[big])
    assert count.values >= 0  # (the count is reported by the private round's test; here the values are checked)


def test_state_runs_and_fall(monkeypatch):
    """runs_max: WARM_UPPER_RUNS with the switch off, SWEEP_UPPER_RUNS on; upper_accepts: past WARM_UPPER_RUNS values
    in a row a value below SWEEP_UPPER_FALL times the measured one is refused (before it, FALL_MAX's test alone)."""
    switch(monkeypatch, "SWEEP_UPPER_LONG", False)
    assert plain_warm.runs_max() == limits.WARM_UPPER_RUNS
    switch(monkeypatch, "SWEEP_UPPER_LONG", True)
    assert plain_warm.runs_max() == max(limits.WARM_UPPER_RUNS, limits.SWEEP_UPPER_RUNS) == 15
    w = plain_warm.Warm(0.1, 5.0, 5.0, 1e-5, 1.1e-5, 5e-3, limits.WARM_UPPER_RUNS - 1, 1e-4)
    assert plain_warm.upper_accepts(w, 0.5 * limits.SWEEP_UPPER_FALL * 1e-4)  # (within the first runs: FALL_MAX)
    w = plain_warm.Warm(0.1, 5.0, 5.0, 1e-5, 1.1e-5, 5e-3, limits.WARM_UPPER_RUNS, 1e-4)
    assert plain_warm.upper_accepts(w, limits.SWEEP_UPPER_FALL * 1e-4)
    assert not plain_warm.upper_accepts(w, 0.99 * limits.SWEEP_UPPER_FALL * 1e-4)
    with plain_warm.warm_sweep():
        w = plain_warm.Warm(0.1, 5.0, 5.0, 1e-5, 1.1e-5, 5e-3, 14, 1e-4)
        assert plain_warm.upper_ready(w, 1e-2, True)
        w = plain_warm.Warm(0.1, 5.0, 5.0, 1e-5, 1.1e-5, 5e-3, 15, 1e-4)
        assert not plain_warm.upper_ready(w, 1e-2, True)
