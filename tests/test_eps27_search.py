"""get_epsilon's phase-2 probe decided "above" by law 0 alone (docs/accountant.md §8.7, ``probe(early=True)``): where the
laws are not all atom laws, law 0 is certified first as the report certifies it; where its value alone is reported above
delta, the probe ends there (the report's value, the maximum over the laws, is above delta too), else the report reuses
it. References: a fresh accountant's get_delta at each probe point decided early (it must be >= the probe's value), the
report built without the reused bracket, a plain bisection on fresh ``get_delta`` values at a tenth of the search's
tolerance, a hypothesis property."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_eps24_search import _bisect, _fresh_delta

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle import accountant as A
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.round_cache import clear_caches

XTOL = 1e-3


def _traced(make, n: int, delta: float) -> tuple[float, list[tuple[float, float]]]:
    """A fresh get_epsilon (default xtol) and its phase-2 probes decided without a report, as (eps, value)."""
    probes: list[tuple[float, float]] = []
    reports: list[float] = []
    orig_p, orig_r = S.probe, A.ShuffleAccountant._report_laws

    def probe(acc, e, *a, **k):
        before = len(reports)
        u = orig_p(acc, e, *a, **k)
        if len(reports) == before and not acc._has_report(e):
            probes.append((float(e), float(u)))
        return u

    def report_laws(self, eps, *a, **k):
        reports.append(float(eps))
        return orig_r(self, eps, *a, **k)

    S.probe, A.ShuffleAccountant._report_laws = probe, report_laws
    try:
        clear_caches()
        e = float(ShuffleAccountant(make(), n, "zero_out").get_epsilon(delta))
    finally:
        S.probe, A.ShuffleAccountant._report_laws = orig_p, orig_r
    return e, probes


def _check(make, n: int, delta: float, e: float, early: list[tuple[float, float]]) -> None:
    """Each early probe's value is above delta and at most a fresh get_delta there; the answer is certified by a fresh
    accountant and within xtol of a fresh bisection's crossing."""
    for x, u in early:
        assert delta < u <= _fresh_delta(make, n, "zero_out", x)
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)


# cells with a phase-2 lower end (bench/geteps_ratio.py's; calibrate_bmg(100, 4)'s pick)
EARLY_CELLS = [
    (lambda: GaussianRandomizer(2.0, 1), 10**4, 1e-6),
    (lambda: GaussianRandomizer(2.0, 1), 10**6, 1e-6),
    (lambda: GaussianRandomizer(1.0, 1), 10**5, 1e-6),
    (lambda: BlanketMixedGaussian(0.07608931201291426, 0.8602549605612618, 1), 100, 1e-6),
]


@pytest.mark.parametrize("make, n, delta", EARLY_CELLS)
def test_lower_end_decided_by_law_0(make, n, delta):
    """At least one probe is decided above delta without a report, each such value is a fresh get_delta's lower
    value, and the answer is certified and within xtol."""
    e, early = _traced(make, n, delta)
    assert early
    _check(make, n, delta, e, early)


@pytest.mark.parametrize("make, n, eps", [(lambda: GaussianRandomizer(2.0, 1), 10**4, 0.0365),
                                          (lambda: GaussianRandomizer(1.0, 1), 10**5, 0.19),
                                          (lambda: BlanketMixedGaussian(0.3, 0.6, 1), 1000, 0.5)])
def test_report_with_law_0_given_is_the_report(make, n, eps):
    """The report that reuses law 0's bracket equals the report computed from scratch (bounds and law)."""
    clear_caches()
    ref = ShuffleAccountant(make(), n, "zero_out").report(eps)
    clear_caches()
    acc = ShuffleAccountant(make(), n, "zero_out")
    gamma, law = laws_for(acc.randomizer, eps, acc.adjacency)[0]
    first = certify(law, float(gamma), n, acc.rel_tol, acc.threads, Bracket())
    rep = acc._report(eps, acc.rel_tol, first=first)
    assert (rep.lower, rep.upper, rep.law_index) == (ref.lower, ref.upper, ref.law_index)
    assert acc._has_report(eps)


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([0.8, 1.0, 1.5, 2.0]), st.sampled_from([100, 1000, 10**4, 10**5]),
       st.floats(min_value=-9.0, max_value=-3.0))
def test_random_targets_certified_and_within_xtol(sigma0, n, log10_delta):
    """Gaussian randomizers (two zero-out laws): every early probe's value is above delta and at most a fresh
    get_delta there; the answer is certified by a fresh accountant and within xtol of a fresh bisection's crossing."""
    delta = 10.0**log10_delta
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e, early = _traced(make, n, delta)
    assert 0.0 < e < 700.0
    _check(make, n, delta, e, early)
