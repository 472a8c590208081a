"""The accountant at the edges of its parameter range (docs/accountant_edges.md).

The references are independent of the accountant's law parametrisation: they are written from the
blanket-mixed Gaussian's output densities in message space and evaluated in mpmath
(tests/_bmg_reference.py): n = 1 in closed form (a hockey-stick divergence), n = 2 by quadrature
of the two-user sum.
"""

# The accountant's mathematics at the edges of its range: the BMG accountants here certify the laws
# alone (sampler_charge=False); the release sampler's charge, which dominates at huge epsilon and
# tiny delta by design, is tested in tests/test_shuffle_sampler_charge.py.

from __future__ import annotations

import itertools
import json
import math
import pathlib

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, FiniteLaw, ShuffleAccountant

from _bmg_reference import reference

# the whole documented range: sigma0 from the smallest accepted value (1e-300) to huge, gamma from 0
# to 1 - 1e-6, epsilon from 0 to the cap and beyond, both adjacencies
SIGMA0 = [1e-300, 1e-154, 1e-20, 0.005, 0.02, 0.0265, 0.03, 0.04, 0.1, 1.0, 30.0, 1e6, 1e300]
GAMMA = [0.0, 1e-6, 0.5, 0.999999]
EPS = [0.0, 0.7, 8.0, 60.0]


def _check(lo, up, ref, tight):
    assert up >= ref * (1 - 1e-9), (lo, up, ref)  # certified: never below the truth
    assert lo <= ref * (1 + 1e-9) + 1e-300, (lo, up, ref)
    if tight and ref > 1e-200:
        assert up <= ref * (1 + 1e-6) + 1e-300, (lo, up, ref)


def test_issue_example_bmg_sigma0_002():
    acc = ShuffleAccountant(BlanketMixedGaussian(gamma=0.5, sigma0=0.02, dim=1), n=1, sampler_charge=False)
    up = acc.get_delta(1.0)
    assert up == pytest.approx(0.5, rel=1e-9) and up >= 0.5 * (1 - 1e-12)
    acc = ShuffleAccountant(BlanketMixedGaussian(gamma=0.5, sigma0=0.02, dim=1), n=1000, sampler_charge=False)
    lo, up = acc.get_delta_bounds(1.0)
    # D_up <= E[L_+] = 0.5; the reference at n = 2 is within 1e-9 of 0.5, and the n = 1000 value
    # cannot be below the n = 1 value divided by ... : at least it contains 0.5 up to rounding
    assert 0.0 < lo <= up and up >= 0.5 * (1 - 1e-12)


def test_issue_example_gamma0_small_sigma0_no_zero_division():
    acc = ShuffleAccountant(BlanketMixedGaussian(gamma=0.0, sigma0=0.02, dim=1), n=1, sampler_charge=False)
    lo, up = acc.get_delta_bounds(1.0)
    ref = float(reference(0.0, 0.02, 1.0, "zero_out", 1))
    _check(lo, up, ref, tight=True)


@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_n1_whole_range_against_closed_form(adjacency):
    """n = 1: D_up = E[L_+] is a hockey-stick divergence, compared over the whole range."""
    bad = []
    for s, g, e in itertools.product(SIGMA0, GAMMA, EPS):
        if adjacency == "replace" and g == 0.0:
            continue  # bounded through bot (a looser certified value), checked below
        lo, up = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n=1, adjacency=adjacency, sampler_charge=False).get_delta_bounds(e)
        ref = float(reference(g, s, e, adjacency, 1))
        try:
            _check(lo, up, ref, tight=True)
        except AssertionError:
            bad.append((s, g, e, lo, up, ref))
    assert not bad


def test_n1_gamma0_replace_through_bottom_is_above_truth():
    # replace for gamma = 0 is bounded through bot: certified, looser; the truth of the antipodal
    # pair of the plain Gaussian (x = 1 vs x' = -1) is delta of N(1, s^2) vs N(-1, s^2)
    from sharpdp.conversions import gaussian_mechanism_delta

    for s, e in [(0.02, 1.0), (0.3, 0.5), (5.0, 0.1)]:
        up = ShuffleAccountant(BlanketMixedGaussian(0.0, s, 1), n=1, adjacency="replace", sampler_charge=False).get_delta(e)
        assert up >= gaussian_mechanism_delta(e, s / 2.0) * (1 - 1e-9)


N2_CASES = [
    (0.02, 0.5, 1.0, "zero_out"),     # L reaches e^{1250}: the E[L_+] cap and the Jensen lower value
    (0.03, 1e-6, 0.7, "zero_out"),    # sd overflows (e^{r^2}, r = 33)
    (0.04, 0.5, 1.0, "replace"),      # sd finite but ~e^{312}
    (0.05, 0.0, 1.0, "zero_out"),     # gamma = 0, blanket mass 2 Phibar(20)
    (1.0, 0.999999, 0.0, "zero_out"),  # the lattice engine, gamma close to 1
]


def n2_reference(s, g, e, adj):
    """D_up at n = 2 by the quadrature of tests/_bmg_reference.py at 25 digits (it agrees with 40 digits to 1e-11
    on these cases)."""
    import mpmath

    with mpmath.workdps(25):
        return float(reference(g, s, e, adj, 2))


@pytest.mark.parametrize("s,g,e,adj", N2_CASES)
def test_n2_against_quadrature(s, g, e, adj):
    # the references are stored (tests/data/make_n2_quadrature_reference.py: 1.9 s of mpmath quadrature in all);
    # the last case's (0.3 s; the others saturate near 0.5 or 1) is recomputed here and must equal its stored value
    # (the store is current)
    stored = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "n2_quadrature_reference.json").read_text())
    ref = stored[repr((s, g, e, adj))]
    if (s, g, e, adj) == N2_CASES[-1]:
        assert n2_reference(s, g, e, adj) == ref
    lo, up = ShuffleAccountant(BlanketMixedGaussian(g, s, 1), n=2, adjacency=adj, sampler_charge=False).get_delta_bounds(e)
    _check(lo, up, ref, tight=False)
    assert up <= 1.0 + 1e-9
    if s >= 1.0:
        assert up <= ref * 1.02 and lo >= ref * 0.98  # the engine's bracket is tight there


def test_sigma0_below_range_is_refused():
    for s in (1e-301, 5e-324):
        with pytest.raises(ValueError, match="sigma0"):
            ShuffleAccountant(BlanketMixedGaussian(0.5, s, 1), n=1, sampler_charge=False)


# --- values: the 5e-324 floor, monotone reporting, epsilon beyond 60 (docs/accountant_edges.md 2, 5) ---

def test_positive_delta_below_double_range_is_floored_not_zero():
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=1, sampler_charge=False)
    # the exact value ~ Phibar(59) ~ e^{-1740} is positive and far below the double range
    for e in (45.0, 59.0, 100.0):
        d = acc.get_delta(e)
        assert 0.0 < d <= 1e-320
    from sharpdp.shuffle import RandomizedResponse

    # replace-one, eps >= eps0: the shuffled output is eps0-DP, delta exactly 0
    rr = ShuffleAccountant(RandomizedResponse(3, 2.0), n=10, adjacency="replace")
    assert rr.get_delta(2.0) == 0.0
    # zero-out: the engine's value (no eps0 shortcut, see the next test): 0 or the 5e-324 floor
    assert ShuffleAccountant(RandomizedResponse(3, 2.0), n=10).get_delta(2.0) <= 5e-324


class _SkewedBlanketRR:
    """Binary randomized response (p = 0.6, eps0 = log 1.5) with a valid but skewed blanket
    decomposition R_BG = (0.9, 0.1), gamma = 0.4/0.9 (gamma R_BG <= R_x for both inputs): under
    zero-out the removed user reports R_BG, which is NOT within e^{+-eps0} of R_x."""

    local_epsilon = math.log(1.5)

    def privacy_amplification_laws(self, epsilon, adjacency="zero_out"):
        bg = np.array([0.9, 0.1])
        rx = np.array([0.6, 0.4])  # input 0; input 1 is its mirror image (worse: 0.4/0.9 vs 0.6/0.1)
        out = []
        for r in (rx, rx[::-1]):
            out.append((0.4 / 0.9, FiniteLaw((r - math.exp(epsilon) * bg) / bg, bg)))  # x vs bot
            out.append((0.4 / 0.9, FiniteLaw((bg - math.exp(epsilon) * r) / bg, bg)))  # bot vs x
        return out


def test_pure_ldp_shortcut_not_used_under_zero_out():
    """A user decomposition whose blanket is not within e^{+-eps0} of R_x: the zero-out delta at
    eps = 0.5 > eps0 is the hockey-stick divergence of R_1 against R_bot = R_BG (n = 1), 0.4351;
    the eps0 shortcut used to report 0."""
    acc = ShuffleAccountant(_SkewedBlanketRR(), n=1)
    bg, r1 = np.array([0.9, 0.1]), np.array([0.4, 0.6])
    exact = max(float(np.maximum(r1 - math.exp(0.5) * bg, 0).sum()), float(np.maximum(bg - math.exp(0.5) * r1, 0).sum()))
    assert exact > 0.4
    assert acc.get_delta(0.5) >= exact * (1 - 1e-12)


def test_upper_values_capped_at_one():
    # gamma = 0, sigma0 = 0.05: E[L_+] ~ 1 with a rounding allowance above it before the cap
    acc = ShuffleAccountant(BlanketMixedGaussian(0.0, 0.05, 1), n=2, sampler_charge=False)
    lo, up = acc.get_delta_bounds(np.array([0.0, 1.0]))
    assert np.all(up <= 1.0) and np.all(lo <= up)


def test_get_delta_monotone_in_separate_calls_any_order():
    acc = ShuffleAccountant(BlanketMixedGaussian(0.3, 1.5, 1), n=50, sampler_charge=False)
    grid = [0.05 * k for k in range(1, 12)]
    order = [5, 0, 10, 3, 8, 1, 9, 2, 7, 4, 6]
    first = {}
    for k in order:  # separate calls, scrambled order: each value certified (checked: <= raw report)
        first[k] = acc.get_delta(grid[k])
        assert first[k] <= max(acc.report(grid[k]).upper, 5e-324)
    # afterwards the accountant's values are non-increasing in epsilon whatever the query order
    again = [acc.get_delta(grid[k]) for k in order[::-1]]
    vals = [again[order[::-1].index(k)] for k in range(len(grid))]
    assert all(b <= a for a, b in zip(vals, vals[1:]))
    # and no value was raised by the envelope
    assert all(vals[k] <= first[k] for k in range(len(grid)))


def test_get_epsilon_monotone_in_delta_3rr():
    from sharpdp.shuffle import RandomizedResponse

    # the issue's example: 3-RR, eps0 = 8, n = 1e4 returned eps increasing with delta (by 7e-4)
    acc = ShuffleAccountant(RandomizedResponse(3, 8.0), n=10_000)
    ds = [1e-12, 1e-11, 1e-10, 1e-9]
    es = [acc.get_epsilon(d) for d in ds]
    assert all(b <= a for a, b in zip(es, es[1:]))
    for d, e in zip(ds, es):
        assert acc.get_delta(e) <= d


def test_beyond_eps_cap_closed_form_and_monotone():
    # sigma0 = 0.05: the value stays large beyond 60; at n = 1 E[L_+] at epsilon itself is exact
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 0.05, 1), n=1, sampler_charge=False)
    es = [30.0, 60.0, 61.0, 150.0, 400.0, 700.0]
    ups = acc.get_delta(np.array(es))
    assert all(b <= a for a, b in zip(ups, ups[1:]))
    for e, u in zip(es, ups):
        ref = float(reference(0.5, 0.05, e, "zero_out", 1))
        assert ref * (1 - 1e-9) <= u <= ref * (1 + 1e-6)
    # beyond 700 the value at 700 holds
    assert acc.get_delta(1e4) <= ups[-1]
    # n = 2: above the quadrature, never above the value at smaller epsilon
    acc2 = ShuffleAccountant(BlanketMixedGaussian(0.5, 0.05, 1), n=2, sampler_charge=False)
    u59, u200 = acc2.get_delta(59.0), acc2.get_delta(200.0)
    assert u200 <= u59


def test_issue_example_get_epsilon_refused_beyond_700():
    acc = ShuffleAccountant(BlanketMixedGaussian(gamma=0.5, sigma0=0.02, dim=1), n=1, sampler_charge=False)
    with pytest.raises(ValueError, match="delta"):  # the true epsilon is ~1479 nats
        acc.get_epsilon(1e-6)


# --- get_epsilon: tolerances, tiny deltas, bounded searches (docs/accountant_edges.md 6) ---

@pytest.mark.parametrize("xtol", [0.0, -1.0, 1e-300, math.nan, math.inf, 2.0])
def test_xtol_validated(xtol):
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=1, sampler_charge=False)
    with pytest.raises(ValueError, match="xtol"):
        acc.get_epsilon(1e-6, xtol=xtol)


def test_tiny_deltas_finish_or_refuse():
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=1, sampler_charge=False)
    with pytest.raises(ValueError, match="delta"):  # below the reported floor (a few 5e-324)
        acc.get_epsilon(5e-324)
    e = acc.get_epsilon(1e-320)
    assert acc.get_delta(e) <= 1e-320 and acc.get_delta(e * (1 - 3e-3)) > 1e-320


def test_shrink_is_bounded():
    from sharpdp.shuffle.accountant import limits as L
    from sharpdp.shuffle.accountant import search as A

    calls = []

    def noisy(x):  # a pathological, non-monotone "delta": the search must still stop
        calls.append(x)
        return 1e-3 if (int(x * 1e9) % 2) else 1e-9

    lo, ulo, hi, uhi = A.shrink(noisy, 1e-6, 0.0, 1.0, 1.0, 1e-9, 1e-6)
    assert len(calls) <= 2 * L.SHRINK_ITERS
    assert uhi <= 1e-6  # the returned end is always a verified one


# --- bad input (names the parameter) ---

@pytest.mark.parametrize("bad,exc", [("a", TypeError), (1j, TypeError), (None, TypeError), (True, TypeError),
                                     ([-1.0, math.nan], ValueError), (math.nan, ValueError)])
def test_bad_epsilon(bad, exc):  # (-1.0 alone is answered since the swap identity: docs/composition.md §8)
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=1, sampler_charge=False)
    with pytest.raises(exc, match="epsilon"):
        acc.get_delta(bad)


@pytest.mark.parametrize("threads", ["a", 1.5, -5, 0, 10**6])
def test_bad_threads(threads):
    with pytest.raises((TypeError, ValueError), match="threads"):
        ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=1, threads=threads)


@pytest.mark.parametrize("workers", ["a", 1.5, -5, 0, 10**6])
def test_bad_workers_alias_names_workers(workers):
    with pytest.raises((TypeError, ValueError), match="workers"):
        ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=1, workers=workers)


def test_workers_is_a_deprecated_alias_of_threads():
    with pytest.warns(DeprecationWarning, match="threads"):
        acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=10, workers=2)
    assert acc.threads == 2
    assert acc.get_delta(0.5) == ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=10, threads=2).get_delta(0.5)
    with pytest.raises(TypeError, match="workers"):
        ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=10, threads=1, workers=2)


@pytest.mark.parametrize("delta", [1e-100, 1e-300])
def test_get_epsilon_tiny_delta_few_certified_evaluations(delta, monkeypatch):
    """delta = 1e-300 took 23-100 s and 1e-100 up to 116 s (BMG, n = 1000): the bracket now comes
    from the closed forms (E[L_+] above, the Jensen value below), and below the value floor the
    search uses the cap get_delta itself reports, so few lattice passes remain."""
    from sharpdp.shuffle.accountant import plain as A

    passes = []
    orig = A.lattice_pass
    monkeypatch.setattr(A, "lattice_pass", lambda *a, **k: passes.append(1) or orig(*a, **k))
    acc = ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 1), n=1000, sampler_charge=False)
    e = acc.get_epsilon(delta)
    assert len(passes) <= 12
    assert acc.get_delta(e) <= delta < acc.get_delta(e * (1 - 3e-3))
