"""get_epsilon's phase 2 from an upper value on half phase 1's step (docs/accountant.md §8.2): the model
step ``secant.sharpened_root`` against closed forms, answers on the cells the rule applies to against a bisection on
fresh ``get_delta`` at a tighter tolerance (both adjacencies), the first probe's placement, and the certificate
(fresh ``get_delta(answer) <= delta``) as a property over targets."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.secant import sharpened_root

XTOL = 1e-3


def _fresh_delta(make, n, adjacency, e):
    return float(ShuffleAccountant(make(), n, adjacency).get_delta(e))


def _fresh_epsilon(make, n, adjacency, delta, xtol=XTOL):
    return float(ShuffleAccountant(make(), n, adjacency).get_epsilon(delta, xtol=xtol))


# ---------------------------------------------------------------------------------------------------------
# the model step against closed forms
# ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("c, p, x_over_root", [(2.0, 3.0, 1.1), (0.5, 2.0, 0.93), (40.0, 1.5, 1.002)])
def test_sharpened_root_is_exact_for_its_model(c, p, x_over_root):
    """u(eps) = exp(-c eps^p) is the model itself (log(-log u) = log c + p log eps, slope -p): from one value at
    x the step lands on the root (-log delta / c)^(1/p), from either side. Caught: the step's sign flipped, the
    model taken on log u instead of log(-log u)."""
    delta = 1e-6
    root = (-math.log(delta) / c) ** (1.0 / p)
    x = root * x_over_root
    assert sharpened_root(delta, x, math.exp(-c * x**p), -p) == pytest.approx(root, rel=1e-12)


def test_sharpened_root_declines_without_a_model():
    assert sharpened_root(1e-6, 0.1, 1.0, -2.0) is None  # (u not below 1)
    assert sharpened_root(1e-6, 0.1, 0.0, -2.0) is None  # (u not above 0)
    assert sharpened_root(1e-6, 0.1, 1e-6, 0.0) is None  # (no slope)


# ---------------------------------------------------------------------------------------------------------
# answers on the cells of §8.2 (plain lattice laws, both adjacencies) against a bisection on fresh get_delta
# ---------------------------------------------------------------------------------------------------------

CELLS = [
    ("gauss 4.6", lambda: GaussianRandomizer(4.6, 1), "zero_out", 100),
    ("gauss 4.6", lambda: GaussianRandomizer(4.6, 1), "zero_out", 1000),
    ("bmg .95 4.6", lambda: BlanketMixedGaussian(0.95, 4.6, 1), "zero_out", 1000),
    ("bmg .95 4.6", lambda: BlanketMixedGaussian(0.95, 4.6, 1), "replace", 1000),
    ("bmg .5 3", lambda: BlanketMixedGaussian(0.5, 3.0, 1), "replace", 100),
]


def _traced(make, n, adjacency, delta):
    """get_epsilon with the sharpened start and phase 2's probe points recorded."""
    seen: dict = {"sharpened": [], "pts": []}
    sharp, probe = S.sharpened_root, S.probe

    def traced_sharp(*a):
        out = sharp(*a)
        seen["sharpened"].append(out)
        return out

    def traced_probe(acc, e, *a, **k):
        seen["pts"].append(e)
        return probe(acc, e, *a, **k)

    S.sharpened_root, S.probe = traced_sharp, traced_probe
    try:
        e = _fresh_epsilon(make, n, adjacency, delta)
    finally:
        S.sharpened_root, S.probe = sharp, probe
    return e, seen


def _bisect(make, n, adjacency, delta, lo, hi, tol):
    """A bracket lo < hi of fresh get_delta's crossing of delta (get_delta(hi) <= delta < get_delta(lo)), widened
    from the given ends where needed, then bisected to hi / lo - 1 <= tol."""
    while _fresh_delta(make, n, adjacency, hi) > delta:
        lo, hi = hi, hi * 1.01
    while _fresh_delta(make, n, adjacency, lo) <= delta:
        lo, hi = lo / 1.01, lo
    while hi / lo - 1.0 > tol:
        mid = math.sqrt(lo * hi)
        if _fresh_delta(make, n, adjacency, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return lo, hi


@pytest.mark.parametrize("cell", range(len(CELLS)), ids=[f"{c[0]} {c[2]} n={c[3]}" for c in CELLS])
def test_answer_against_bisection_on_fresh_get_delta(cell):
    """The rule ran (a sharpened start), the answer is certified for a fresh accountant and lies within xtol of the
    crossing that a bisection on fresh get_delta finds to xtol / 20. Caught: phase 2 returning the lower end of its
    bracket (every cell), the sharpened point r1' returned without a probe (three of the five cells)."""
    _, make, adjacency, n = CELLS[cell]
    delta = 1e-6
    e, seen = _traced(make, n, adjacency, delta)
    assert seen["sharpened"] and seen["sharpened"][0] is not None
    assert _fresh_delta(make, n, adjacency, e) <= delta
    lo, hi = _bisect(make, n, adjacency, delta, e * (1 - 2 * XTOL), e * (1 + XTOL), XTOL / 20)
    assert lo <= e <= hi / (1 - XTOL)


@pytest.mark.parametrize("cell", range(len(CELLS)), ids=[f"{c[0]} {c[2]} n={c[3]}" for c in CELLS])
def test_first_probe_within_reach_of_the_answer(cell):
    """§8.2's aim: phase 2's first probe within 0.7 xtol of the root (the answer, 0.3 xtol above the root where
    the second probe makes it, then within xtol), so that two probes close the bracket.
    Caught: the sharpened start disabled (phase 2 from the phase-1 root r1: three probes at gauss n = 1000, first
    probe 0.035649 against the answer 0.0356168, and at bmg .5 3 replace n = 100)."""
    _, make, adjacency, n = CELLS[cell]
    e, seen = _traced(make, n, adjacency, 1e-6)
    assert abs(math.log(seen["pts"][0] / e)) <= XTOL
    assert len(seen["pts"]) == 2
    assert e in seen["pts"]  # (the answer is a probed point)


# ---------------------------------------------------------------------------------------------------------
# the certificate as a property over targets
# ---------------------------------------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(st.floats(min_value=-10.0, max_value=-2.0), st.sampled_from([(0, 60), (0, 400), (1, 200), (2, 300)]))
def test_certified_delta_at_the_answer_is_at_most_the_target(log10_delta, which):
    """Fresh get_delta(answer) <= delta, and the answer's lower neighbour at xtol exceeds it (tightness), on the
    plain lattice path of §8.2 (Gaussian randomizer σ0 = 4.6 zero-out, BMG(0.95, 4.6) in both adjacencies).
    Caught: the sharpened point r1' returned without a probe; phase 2 returning its bracket's lower end."""
    delta = 10.0**log10_delta
    k, n = which
    make, adjacency = [(lambda: GaussianRandomizer(4.6, 1), "zero_out"),
                       (lambda: BlanketMixedGaussian(0.95, 4.6, 1), "zero_out"),
                       (lambda: BlanketMixedGaussian(0.95, 4.6, 1), "replace")][k]
    e = _fresh_epsilon(make, n, adjacency, delta)
    assert _fresh_delta(make, n, adjacency, e) <= delta
    if e > 0.0:  # (0 exactly when get_delta(0) meets the target: Gaussian σ0 = 4.6, n = 400, delta = 1e-2)
        assert _fresh_delta(make, n, adjacency, e * (1 - XTOL)) > delta


# ---------------------------------------------------------------------------------------------------------
# the answer-0 check on plain lattice laws: one pass at the accountant's rel_tol, stopped once decided
# ---------------------------------------------------------------------------------------------------------

def test_answer_zero_check_stops_at_its_first_decided_pass():
    """BMG(0.95, 4.6), n = 1e5, zero-out, delta = 1e-6: the search rules out the answer 0 by a certified lower value
    above delta at half the phase-1 root (docs/accountant.md §8.2): one lattice pass at rel_tol 1e-2, whose lower value
    a fresh accountant's report at that eps confirms to be above delta (independent: get_delta(0) > delta too).
    Caught: the stop once the lower value exceeds delta removed (two passes)."""
    from sharpdp.shuffle.accountant import plain as P
    from sharpdp.shuffle.accountant.plain import Bracket

    make = lambda: BlanketMixedGaussian(0.95, 4.6, 1)  # noqa: E731
    seen: list = []
    certify, lattice_pass = S.certify, P.lattice_pass
    passes = [0]

    def counted_pass(*a, **k):
        passes[0] += 1
        return lattice_pass(*a, **k)

    def traced(law, gamma, n, rel, threads, mode=Bracket(), *a, **k):
        start = passes[0]
        r = certify(law, gamma, n, rel, threads, mode, *a, **k)
        if isinstance(mode, Bracket) and mode.decide is not None:
            seen.append((rel, r.lower, passes[0] - start))
        return r

    S.certify, P.lattice_pass = traced, counted_pass
    try:
        acc = ShuffleAccountant(make(), 10**5, "zero_out")
        e = float(acc.get_epsilon(1e-6))
    finally:
        S.certify, P.lattice_pass = certify, lattice_pass
    assert e > 0.0 and _fresh_delta(make, 10**5, "zero_out", e) <= 1e-6
    assert [(rel, n_pass) for rel, _, n_pass in seen] == [(1e-2, 1)]
    assert seen[0][1] > 1e-6
    assert _fresh_delta(make, 10**5, "zero_out", 0.0) > 1e-6
