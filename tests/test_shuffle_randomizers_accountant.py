"""The certified accountant on RandomizedResponse, PrivUnit and GeneralRandomizer.

Design: `docs/accountant.md` §1.8, §5, §10; `docs/worst_case_pairs.md` §5-7.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _densities import T  # binary RR with eps0 = 1, lifted to a density on [-1, 1]
from _densities import half as _half
from _densities import lifted_rr as _lifted_rr

pytest.importorskip("sharpdp.shuffle.accountant")

from sharpdp.shuffle import GeneralRandomizer, PrivUnit, RandomizedResponse, ShuffleAccountant  # noqa: E402
from sharpdp.shuffle.clones import clones_delta  # noqa: E402


def test_krr_reference_table_bracketed_through_randomized_response(krr_replace_row):
    k, eps0, eps, n, exact = (krr_replace_row[c] for c in ("k", "epsilon0", "epsilon", "n", "delta"))
    acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency="replace")
    lo, up = acc.get_delta_bounds(eps)
    assert lo <= exact * (1 + 1e-6) and up >= exact * (1 - 1e-6)  # the table has 7 digits
    assert up <= exact * 1.01
    assert acc.get_delta(eps) == up


@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_bounds_ordered_and_profile_non_increasing(adjacency):
    acc = ShuffleAccountant(RandomizedResponse(4, 2.0), 2000, adjacency=adjacency)
    eps = np.linspace(0.02, 1.0, 5)
    ups = []
    for e in eps:
        lo, up = acc.get_delta_bounds(float(e))
        assert 0.0 <= lo <= up <= 1.0
        ups.append(up)
    assert all(a >= b for a, b in zip(ups, ups[1:]))


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_lower_form_below_upper(k, adjacency):
    # D_lo (hockey-stick of (x1, x0, ..., x0) vs (x1', x0, ..., x0)) <= delta <= D_up, both certified
    rr = RandomizedResponse(k, 1.5)
    n = 1000
    up_acc = ShuffleAccountant(rr, n, adjacency=adjacency)
    lo_acc = ShuffleAccountant(rr.lower_form(), n, adjacency=adjacency)
    for eps in (0.1, 0.3):
        d_lo = lo_acc.get_delta_bounds(eps)[0]
        d_up = up_acc.get_delta(eps)
        assert 0.0 <= d_lo <= d_up
        if k >= 3 and adjacency == "replace" and eps == 0.1:
            assert d_lo >= 0.5 * d_up  # a third symbol as x0: the band nearly collapses
            # (`docs/worst_case_pairs.md` §8)


def test_lower_form_exact_for_binary_rr():
    # binary RR: D_lo with x0 in {x1, x1'} is the exact shuffled count profile, computable by summation
    from scipy.stats import binom

    eps0, n, eps = 1.0, 300, 0.1
    p = 1 / (1 + math.exp(-eps0))
    j = np.arange(n + 1)
    b = binom.pmf(j, n, 1 - p)
    rest = binom.pmf(j[:-1], n - 1, 1 - p)
    a = np.zeros(n + 1)
    a[1:] += p * rest
    a[:-1] += (1 - p) * rest
    ee = math.exp(eps)  # x0 = x1' and x0 = x1 give the two directions
    exact = max(float(np.maximum(a - ee * b, 0).sum()), float(np.maximum(b - ee * a, 0).sum()))
    lo, up = ShuffleAccountant(RandomizedResponse(2, eps0).lower_form(), n, adjacency="replace").get_delta_bounds(eps)
    assert lo <= exact * (1 + 1e-9) and exact <= up * (1 + 1e-9)


def test_binary_rr_delta_at_eps0_is_bracketed():
    # At eps = 0, E[L] = 0 (a regression: an atom on the top lattice edge used to be dropped,
    # giving 5e-324). Exact D_up by summing the trinomial law of (#(+c), #(-c)) users.
    from scipy.special import gammaln

    n, rr = 1000, RandomizedResponse(2, 1.0)
    (gamma, law), = [(g, lw) for g, lw in rr.privacy_amplification_laws(0.0, "replace")][:1]
    c = float(np.max(law.values))
    u = np.arange(n + 1)[:, None]
    v = np.arange(n + 1)[None, :]
    ok = u + v <= n
    logp = (gammaln(n + 1) - gammaln(u + 1) - gammaln(v + 1) - gammaln(np.where(ok, n - u - v, 0) + 1)
            + (u + v) * math.log(gamma / 2) + np.where(ok, n - u - v, 0) * math.log1p(-gamma))
    exact = float(np.sum(np.where(ok & (u > v), np.exp(np.where(ok, logp, -np.inf)) * c * (u - v), 0.0))) / (n * gamma)
    lo, up = ShuffleAccountant(rr, n, adjacency="replace").get_delta_bounds(0.0)
    assert lo <= exact <= up <= 1.01 * exact


def test_binary_rr_blanket_bound_zero_beyond_local_eps():
    rr = RandomizedResponse(2, 1.0)
    acc = ShuffleAccountant(rr, 100, adjacency="zero_out")
    assert acc.get_delta(-math.log(rr.gamma) + 1e-9) <= 1e-10


def test_privunit_through_accountant_matches_d1_rr():
    p = 0.7
    a = ShuffleAccountant(PrivUnit(p, 0.0, 1), 1000, adjacency="replace").get_delta(0.2)
    b = ShuffleAccountant(RandomizedResponse(2, math.log(p / (1 - p))), 1000, adjacency="replace").get_delta(0.2)
    assert a == pytest.approx(b, rel=1e-9)
    d = ShuffleAccountant(PrivUnit(0.55, 0.1, 20), 10_000).get_delta(0.05)
    assert 0.0 <= d <= 1.0


def test_general_randomizer_through_accountant_matches_rr():
    g = GeneralRandomizer(_lifted_rr, [-1.0, 1.0], (-1.0, 1.0), blanket=_half, gamma=1 - T,
                          breakpoints=[0.0], cells=16)
    rr = RandomizedResponse(2, 1.0)
    for adj in ("zero_out", "replace"):
        a = ShuffleAccountant(g, 3000, adjacency=adj).get_delta_bounds(0.1)
        b = ShuffleAccountant(rr, 3000, adjacency=adj).get_delta_bounds(0.1)
        assert a == pytest.approx(b, rel=1e-9)


def test_krr_blanket_vs_clones():
    # both are certified upper bounds for replace-one; for k >= 3 the blanket bound is the tighter
    acc = ShuffleAccountant(RandomizedResponse(10, 1.0), 100_000, adjacency="replace")
    assert acc.get_delta(0.0075) <= clones_delta(1.0, 100_000, 0.0075)


@settings(max_examples=15, deadline=None)
@given(k=st.integers(2, 20), eps0=st.floats(0.2, 5.0), n=st.integers(1, 5000), eps=st.floats(0.0, 2.0))
def test_property_bounds_ordered(k, eps0, n, eps):
    lo, up = ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency="replace").get_delta_bounds(eps)
    assert 0.0 <= lo <= up <= 1.0 and math.isfinite(up)


def test_smallest_certified_delta_picks_the_minimum():
    from sharpdp.shuffle import smallest_certified_delta

    rr = RandomizedResponse(10, 1.0)
    d, src = smallest_certified_delta(rr, 100_000, 0.0075, "replace")
    assert src == "blanket" and d <= clones_delta(1.0, 100_000, 0.0075)
    # zero-out: the clones bound does not apply, the blanket value is returned
    d0, src0 = smallest_certified_delta(rr, 1000, 0.1, "zero_out")
    assert src0 == "blanket" and d0 == ShuffleAccountant(rr, 1000).get_delta(0.1)
    # a randomizer whose blanket is tiny: gamma -> 0 makes the blanket bound weak, clones wins
    pu = PrivUnit(0.9, 0.0, 1)  # binary RR with eps0 = log 9
    d1, src1 = smallest_certified_delta(pu, 5, 1.0, adjacency="replace")
    assert d1 == min(ShuffleAccountant(pu, 5, adjacency="replace").get_delta(1.0), clones_delta(pu.local_epsilon, 5, 1.0))
    assert src1 in ("blanket", "clones")
    # the default adjacency is zero-out, as everywhere: the blanket value, never the clones bound
    d2, src2 = smallest_certified_delta(pu, 5, 1.0)
    assert src2 == "blanket" and d2 == ShuffleAccountant(pu, 5).get_delta(1.0)


@pytest.mark.parametrize("k", [2, 3])
def test_get_delta_lower_form_band(k):
    acc = ShuffleAccountant(RandomizedResponse(k, 1.0), 500, adjacency="replace")
    eps = np.array([0.05, 0.2, 0.4])
    lo_form = acc.get_delta_lower_form(eps)
    assert lo_form.shape == eps.shape
    assert np.all(lo_form <= acc.get_delta(eps)) and np.all(lo_form[:2] > 0)
    # eps < 0 is answered (the swap identity on the lower values at -eps, docs/composition.md §8), within the band
    lo_neg = acc.get_delta_lower_form(-1.0)
    assert -math.expm1(-1.0) * (1 - 1e-15) <= lo_neg <= acc.get_delta(-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        acc.get_delta_lower_form(math.nan)


def test_pure_ldp_epsilon_never_exceeds_local_level():
    # binary RR with eps0 = 8 at n = 1000: the blanket bound is weak (gamma ~ 7e-4), the local
    # eps0-LDP guarantee is the better one: epsilon <= eps0 and delta(eps >= eps0) = 0.
    acc = ShuffleAccountant(RandomizedResponse(2, 8.0), 1000, adjacency="replace")
    e = acc.get_epsilon(1e-6)
    assert 0 < e <= 8.0
    assert acc.get_delta(8.0) == 0.0 and acc.get_delta(7.9) > 0.0
