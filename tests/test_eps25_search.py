"""get_epsilon's far end decided by the laws' caps (docs/accountant.md §8.5, ``ends.end_cap``): where the closed-form
caps at eps_tau (the release sampler's charge) or at 700 are <= delta, neither §8.3's first report at eps_tau nor
step 3's get_delta(700) is computed. References: the fresh accountant's own certified value at the far end (the cap
must dominate it), a plain bisection on fresh ``get_delta`` values at a tenth of the search's tolerance, a hypothesis
property (a fresh accountant certifies delta at the answer, and the answer is within xtol of the bisection's)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_eps24_search import _bisect, _fresh_delta

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.ends import end_cap
from sharpdp.shuffle.accountant.limits import EPS_MAX
from sharpdp.shuffle.round_cache import clear_caches

XTOL = 1e-3


def _epsilon_and_reports(make, n: int, delta: float, xtol: float = XTOL) -> tuple[float, list[float]]:
    """A fresh get_epsilon and the epsilons of the reports it computed (``_report_laws``: cache misses only)."""
    seen: list[float] = []
    orig = A.ShuffleAccountant._report_laws

    def traced(self, eps, *a, **k):
        seen.append(float(eps))
        return orig(self, eps, *a, **k)

    A.ShuffleAccountant._report_laws = traced
    try:
        clear_caches()
        e = float(ShuffleAccountant(make(), n, "zero_out").get_epsilon(delta, xtol=xtol))
    finally:
        A.ShuffleAccountant._report_laws = orig
    return e, seen


def test_no_report_at_eps_tau_where_the_caps_decide():
    """GaussianRandomizer(0.5), n = 1e3 (the regime map's ratio 165: a 1.9 s report at eps_tau = 36.8, where the
    x-vs-bot law's cap 2.3e-16 is far below delta but above the value floor): no report at eps_tau, and the answer is
    certified by a fresh accountant and within xtol of a fresh bisection's crossing."""
    make = lambda: GaussianRandomizer(0.5, 1)  # noqa: E731
    n, delta = 1000, 1e-6
    e, seen = _epsilon_and_reports(make, n, delta)
    eps_tau = ShuffleAccountant(make(), n, "zero_out").eps_tau
    assert math.isfinite(eps_tau) and eps_tau not in seen and len(seen) <= 3
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)
    assert _fresh_delta(make, n, "zero_out", e * (1 - XTOL)) > delta


FAR_CELLS = [
    (lambda: GaussianRandomizer(0.5, 1), 1000, True),  # (the cap 2.33e-16 + the charge 1.0e-16: both needed)
    (lambda: GaussianRandomizer(0.5, 1), 10**4, True),
    (lambda: GaussianRandomizer(0.5, 1), 1000, False),  # (no charge: the far end is 700, step L)
    (lambda: GaussianRandomizer(1.0, 1), 100, True),
    (lambda: BlanketMixedGaussian(0.3, 0.6, 1), 1000, True),
    (lambda: BlanketMixedGaussian(0.3, 0.6, 1), 1000, False),
]


@pytest.mark.parametrize("make, n, charge", FAR_CELLS)
def test_end_cap_dominates_the_fresh_far_value(make, n, charge):
    """end_cap >= what a fresh accountant certifies at the far end (eps_tau with the charge, 700 without; the value at
    700 is the one reported for every eps >= eps_tau) and at 700 itself, as get_delta and as its report."""
    clear_caches()
    acc = ShuffleAccountant(make(), n, "zero_out", sampler_charge=charge)
    c = end_cap(acc)
    assert math.isfinite(acc.eps_tau) == charge
    far = acc.eps_tau if charge else EPS_MAX
    assert float(acc.report(far).upper) <= c
    assert float(acc.report(EPS_MAX).upper) <= c
    assert float(acc.get_delta(EPS_MAX)) <= c


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([0.5, 0.7, 1.0]), st.sampled_from([100, 1000, 10**4]), st.floats(min_value=-9.0, max_value=-3.0))
def test_random_targets_certified_and_within_xtol(sigma0, n, log10_delta):
    """Heavy Gaussian randomizers (the far end decided by the caps): the answer is certified by a fresh accountant and
    within xtol of a fresh bisection's crossing (at xtol / 10)."""
    delta = 10.0**log10_delta
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e, _ = _epsilon_and_reports(make, n, delta)
    assert 0.0 < e < 700.0
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)


# ------------------------------------------------------------------ phase 1 ends at its resolution (§8.6)

def _passes_and_epsilon(make, n: int, delta: float) -> tuple[float, int]:
    """A fresh get_epsilon (default xtol) and the number of upper-only passes it made (phase 1, §8.2, the refit)."""
    count = [0]
    orig = S.upper_value

    def traced(*a, **k):
        count[0] += 1
        return orig(*a, **k)

    S.upper_value = traced
    try:
        clear_caches()
        e = float(ShuffleAccountant(make(), n, "zero_out").get_epsilon(delta))
    finally:
        S.upper_value = orig
    return e, count[0]


# cells where phase 1's secant root lands within 1 % of its last point (bench/geteps_ratio.py --reps 0: one pass fewer)
REACH_CELLS = [
    (lambda: GaussianRandomizer(1.0, 1), 100, 2),
    (lambda: BlanketMixedGaussian(0.07608931201291426, 0.8602549605612618, 1), 100, 2),  # (calibrate_bmg(100, 4))
    (lambda: BlanketMixedGaussian(0.22405382372558194, 1.2388763466593997, 1), 100, 4),  # (calibrate_bmg(100, 1))
]


@pytest.mark.parametrize("make, n, passes", REACH_CELLS)
def test_phase1_stops_at_its_resolution(make, n, passes):
    """Phase 1 stops once its model root is within _REACH = 1 % (its own tolerance) of its last point: the passes
    counted (one fewer than before in each cell), and the answer certified by a fresh accountant and within xtol of a
    fresh bisection's crossing (get_epsilon's default xtol, 1e-3)."""
    delta = 1e-6
    e, k = _passes_and_epsilon(make, n, delta)
    assert k <= passes
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)
