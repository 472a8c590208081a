"""The far-tail body pass's power steps without the accurate DFT first (docs/accountant_tail.md §25): the result is kept only where
its round-off bound is at most CHEAP_POWER rel_tol times the window sum, so every value moves by at most about twice
that against the engine that always runs the accurate DFT (CHEAP_POWER = 0 gives those floats bit for bit), and stays
certified: against the old engine at a 100 times tighter rel_tol (the conditional Monte Carlo and quadrature
references of tests/test_shuffle_bigjump.py run the new rule unchanged). Also the SumLaw cells kept per grid (the same floats as the generic sum of the parts)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import contextlib
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sharpdp.shuffle.accountant.lattice as L
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant.limits import CHEAP_POWER
from sharpdp.shuffle.laws import laws_for


@contextlib.contextmanager
def accurate_always():
    """The engine before §25: the accurate DFT on every FFT (CHEAP_POWER = 0 never keeps the cheap result)."""
    old = L.CHEAP_POWER
    L.CHEAP_POWER = 0.0
    try:
        yield
    finally:
        L.CHEAP_POWER = old


@contextlib.contextmanager
def count_kept():
    """Counts the engine calls that kept the cheap power step's result."""
    kept = [0]
    orig = L.engine

    def wrapped(*a, **k):
        r = orig(*a, **k)
        kept[0] += int(getattr(r, "cheap", False))
        return r

    L.engine = wrapped
    try:
        yield kept
    finally:
        L.engine = orig


def _gauss_law(eps):
    """The Gaussian randomizer's (sigma0 = 0.5) x-vs-bot law at eps (bounded below: no lower clamp) and its gamma."""
    for gamma, law in laws_for(GaussianRandomizer(0.5, 1), eps, "zero_out"):
        if math.isfinite(law.support()[0]):
            return gamma, law
    raise AssertionError("no law bounded below")


# (eps, n, h, T0, kept): the far-tail body passes of the sigma0 = 0.5 cells at n = 1e6 (the cheap result kept) and
# one at n = 1e7 where the accurate DFT is needed (the cheap one is 6e-4 relative off there)
PASSES = [(1.0, 10**6, 2.125, 104448.0, True), (0.1, 10**6, 0.84375, 58752.0, True),
          (1.0, 10**7, 2.125, 104448.0, False)]


@pytest.mark.parametrize("eps,n,h,T0,kept", PASSES)
def test_engine_within_two_percent_of_the_target(eps, n, h, T0, kept):
    """|value - value of the always-accurate engine| <= 2.5 CHEAP_POWER rel_tol times its window sum (both are within
    their round-off bounds of one exact sum, and the kept bound is <= CHEAP_POWER rel_tol E). Caught: the rule's
    threshold without rel_tol (CHEAP_POWER E: the n = 1e7 pass keeps a result 6e-4 relative off), the cheap
    result always kept, and the kept result's round-off bound dropped (the two window sums then differ by more than
    their bounds)."""
    gamma, law = _gauss_law(eps)
    B = math.ceil(-law.support()[0] / h) * h
    rel = 1e-2
    lat = L.lattice_laws(law, gamma, h, T0, B, True)  # (given: the far-tail body pass, where the rule applies)
    with count_kept() as k:
        new = L.lattice_pass(law, gamma, n, h, T0, B, rel, 1, lat=lat)
    with accurate_always():
        old = L.lattice_pass(law, gamma, n, h, T0, B, rel, 1, lat=lat)
    assert (k[0] > 0) == kept
    t_new, t_old = new.terms, old.terms
    tol = 2.5 * CHEAP_POWER * rel
    assert abs(new.main - old.main) <= tol * t_old["E_main"], (new.main, old.main)
    assert abs(new.lower - old.lower) <= tol * t_old["E_lower"], (new.lower, old.lower)
    assert new.lower <= old.upper and old.lower <= new.upper
    # two enclosures of one exact window sum (each within its own round-off bound of it) overlap
    for e, fp in (("E_main", "fft_roundoff"), ("E_lower", "lower_fft_roundoff")):
        assert abs(t_new[e] - t_old[e]) <= (t_new[fp] + t_old[fp]) * (1 + 1e-9), (e, t_new[e], t_old[e])
    if kept:  # (the rule was exercised: the values are not the accurate engine's)
        assert new.main != old.main
    else:  # the accurate DFT on the same window: the same floats
        assert (new.lower, new.upper, new.main) == (old.lower, old.upper, old.main)


def test_plain_passes_unchanged(monkeypatch):
    """Without ``lat`` (the plain path) the engine runs the accurate DFT at once: no power step without it, and the
    floats of the always-accurate engine bit for bit (they are pinned by tests/test_review_rev19.py). Caught: the rule
    applied to every pass (10-RR's pinned floats moved; here the first convolution's budget 0)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    gamma, law = _gauss_law(0.1)
    h, T0 = 0.84375, 58752.0
    B = math.ceil(-law.support()[0] / h) * h
    budgets = []
    orig = L.convolve

    def spy(parts, N, thr, work, threads=1, spectra=None):
        budgets.append(work)
        return orig(parts, N, thr, work, threads, spectra=spectra)

    L.convolve = spy
    try:
        new = L.lattice_pass(law, gamma, 10**6, h, T0, B, 1e-2, 1)
    finally:
        L.convolve = orig
    assert budgets and all(w > 0 for w in budgets)
    with accurate_always():
        old = L.lattice_pass(law, gamma, 10**6, h, T0, B, 1e-2, 1)
    assert (new.lower, new.upper, new.main) == (old.lower, old.upper, old.main)


def test_against_the_tight_engine():
    """Both certified: the bracket at rel_tol 1e-2 (the cheap result kept in its engine calls) intersects the
    always-accurate accountant's at rel_tol 1e-4 (gaps 1e-3 - 4e-3 there), sigma0 = 0.5, n = 1e4, eps = 0.1 and 1."""
    for eps in (0.1, 1.0):
        clear_caches()
        with count_kept() as k:
            lo, up = ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**4, rel_tol=1e-2).get_delta_bounds(eps)
        assert k[0] > 0
        clear_caches()
        with accurate_always():
            tlo, tup = ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**4, rel_tol=1e-4).get_delta_bounds(eps)
        assert lo <= tup and tlo <= up, (lo, up, tlo, tup)
        assert up - lo <= 1e-2 * lo


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sigma0=st.sampled_from([0.5, 0.7, 1.0, 1.5]), n=st.sampled_from([50, 300, 3000, 30000]),
       eps=st.sampled_from([0.05, 0.3, 1.0, 3.0]))
def test_property_intersects_the_accurate_engine(sigma0, n, eps):
    """Whatever the cell: the bracket with the rule and the always-accurate one intersect, and the rule's bracket meets
    rel_tol wherever the accurate one does (with 10 % of slack: the refinement may stop one round apart)."""
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n).get_delta_bounds(eps)
    clear_caches()
    with accurate_always():
        alo, aup = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n).get_delta_bounds(eps)
    assert lo <= aup and alo <= up, (lo, up, alo, aup)
    if alo > 0 and aup >= 1e-15 and aup - alo <= 1e-2 * alo:
        assert lo > 0 and up - lo <= 1.1e-2 * lo, (lo, up, alo, aup)


def test_sum_law_cells_kept_and_equal_to_the_parts_sum():
    """SumLaw.cells (an atom plus a lognormal part) equals the generic sum of its parts' cells bit for bit, is kept per
    grid (the same read-only arrays on a second call), and a different grid is computed afresh. Caught: the memo
    keyed without K (the second grid served the first grid's arrays) and the kept arrays left writable."""
    for eps in (0.1, 2.0):
        law = laws_for(GaussianRandomizer(0.5, 1), eps, "zero_out")[0][1]
        for x0, h, K in ((-64.0, 0.25, 4096), (-64.0, 0.25, 8192), (-3.0, 1 / 64, 70000)):
            got = law.cells(x0, h, K)
            assert law.cells(x0, h, K) is got
            ref = [sum(p.cells(x0, h, K)[i] for p in law.parts) for i in range(4)]
            for a, b in zip(got, ref):
                assert a.shape == (K,) and not a.flags.writeable
                assert np.array_equal(a, b)
