"""Review rev-pair20: upper values first (docs/accountant_tail.md §15, docs/composition.md §2.2).

Attacks ``get_delta_bounds(eps, lower=False)`` and the profile / pair built on it with independent references:
a stratified conditional Monte Carlo of the blanket divergence (numpy/scipy only) and n = 2 mpmath quadratures
of the output densities (tests/_bmg_reference.py), both stored in tests/data/review_rev_pair20/ with the
scripts that made them; the full bracket (lower=True) on a fresh accountant; call orders and caches.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches,
                             dominating_pair)
from sharpdp.shuffle.profile import privacy_profile, privacy_profile_bounds

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "review_rev_pair20")
G, S, N = 0.04089409561900239, 0.5960134902126553, 10**5  # the heavy round of bench/bench_composition.py


def _acc(n=N, adjacency="zero_out", **kw):
    return ShuffleAccountant(BlanketMixedGaussian(G, S, 1), n, adjacency, **kw)


def _load(name):
    with open(os.path.join(DATA, name)) as f:
        return json.load(f)


# ------------------------------------------------------------------ claim (2): bit for bit where the bracket stops


def test_upper_first_falls_back_where_the_bracket_runs_its_body_pass():
    # At eps = 0.475 the bracket runs the body's engine pass (its rule uses the jump term's LOWER value,
    # 0.8 rel_tol jlo - (jup - jlo) - multi), and stops after its first round (gap 1.3e-3). The upper-first
    # rule used jup in place of jlo, so it skipped the body pass and returned the Chernoff body: 0.70 % above
    # the bracket's upper (5.4x its gap), contradicting "bit for bit whenever the bracket stops after its first
    # round". Fixed in far_tail.certify_bigjump (jref = jup / (1 + rel_tol / 2), the smallest lower value a
    # first round that stops can have). Mutation caught: jref = jt.up.
    for e in (0.46, 0.475, 0.48):
        lo, up = _acc().get_delta_bounds(e)
        _, up1 = _acc().get_delta_bounds(e, lower=False)
        assert up1 == up, (e, up1, up)


def test_no_upper_only_value_where_the_bracket_runs_its_body_pass_at_other_rel_tols():
    # the fallback rule scales with rel_tol (jup / (1 + rel_tol / 2)): near each target's switch, an upper-only
    # value (lower 0) must come with a bracket that did not run the body pass (its body_lower 0), and never lie
    # below the bracket's upper value. Catches a rule that does not scale with rel_tol (these eps pass with the
    # first merged jref = jt.up too: its mismatch is caught at rel_tol 1e-2 by the test above).
    for rt, eps in ((2e-2, np.array([0.44, 0.46, 0.47, 0.48, 0.5])), (5e-3, np.array([0.58, 0.6, 0.62, 0.64]))):
        a = _acc(rel_tol=rt)
        lo, up = a.get_delta_bounds(eps)
        lo1, up1 = _acc(rel_tol=rt).get_delta_bounds(eps, lower=False)
        assert np.all(up1 >= up) and np.all((up1 - lo) / lo <= rt)
        for e, l1 in zip(eps, lo1):
            if l1 == 0.0:
                assert a.report(e).terms["body_lower"] == 0.0, (rt, e)


def test_upper_first_is_above_the_bracket_and_within_rel_tol_of_its_lower_value():
    # every eps of a pair-like sweep, zero-out and replace (the replace round's bracket widens B for its
    # lower-tail penalty: a second round the upper-first run does not start, 3.3e-4 / 8.3e-4 above at eps 1 / 2)
    for adj, eps in (("zero_out", np.array([0.0, 1e-12, 0.3, 0.49, 0.5, 0.55, 0.6, 0.7, 1.0, 2.0, 5.0])),
                     ("replace", np.array([0.55, 1.0, 2.0]))):
        lo, up = _acc(adjacency=adj).get_delta_bounds(eps)
        lo1, up1 = _acc(adjacency=adj).get_delta_bounds(eps, lower=False)
        assert np.all(lo > 0)
        assert np.all(up1 >= up)  # the bracket's best round is never above its first round
        assert np.all((up1 - lo) / lo <= _acc().rel_tol)  # certified and still meets the accuracy target
        settled = lo1 > 0  # where it fell back to the bracket, the bracket itself
        np.testing.assert_array_equal(up1[settled], up[settled])
        np.testing.assert_array_equal(lo1[settled], lo[settled])


# ------------------------------------------------------------------ claim (1): certified against references


def test_upper_first_against_fft_reference():
    # D_n(eps) = E[g(S)], S's law by FFT of L's law on a fine grid, g in closed form (fft_reference.py, numpy only;
    # it matches the n = 2 mpmath quadratures to 2e-7). A certified upper value must be >= value - err; it must
    # not be loose beyond the accuracy target either. Catches a dropped term (jump term, pair term, the shift of
    # §12) or a clamp on the wrong side in the upper-only run (the n = 1e5 values at eps >= 0.55 and n = 1000 at
    # eps = 3 are upper-only values).
    refs = [r for r in _load("fft_reference.json") if r["err"] < 1e-2 * r["value"]]
    only = 0
    for n in sorted({r["n"] for r in refs}):
        rs = [r for r in refs if r["n"] == n]
        lo1, up1 = _acc(n).get_delta_bounds(np.array([r["eps"] for r in rs]), lower=False)
        only += int(np.sum(lo1 == 0.0))
        for r, u in zip(rs, up1):
            assert r["value"] - r["err"] <= u <= (r["value"] + r["err"]) * (1 + 1e-2), (n, r["eps"], u, r)
    assert only >= 4  # (most of them were upper-only values)


def test_upper_first_against_stratified_monte_carlo_at_n_1e5():
    # second reference at n = 1e5 (mc_reference.py, 4.5-sigma intervals; eps = 3 where the FFT's round-off is too
    # large). Its one-big-value quadrature (256 nodes) resolves the step of g coarsely: at n = 1000 its means are
    # ~0.5 % above the FFT's (a bias upward, which can only make this check stricter), so n = 1000 is not used.
    rs = [r for r in _load("mc_reference.json") if r["n"] == N]
    _, up1 = _acc().get_delta_bounds(np.array([r["eps"] for r in rs]), lower=False)
    for r, u in zip(rs, up1):
        assert u >= r["lo"], (r["eps"], u, r["lo"])
        assert u <= r["hi"] * (1 + 1e-2), (r["eps"], u, r["hi"])


def test_upper_first_against_n2_quadrature():
    # n = 2 (mpmath quadrature of the output densities, quad_reference.py), zero-out and replace
    for r in _load("quad_reference.json"):
        _, u = _acc(2, r["adjacency"]).get_delta_bounds(r["eps"], lower=False)
        assert r["value"] <= u <= r["value"] * (1 + 1e-2) + 1e-15, r


# ------------------------------------------------------------------ claim (3): caches and call orders


def test_call_orders_never_return_a_lower_value_of_zero_for_a_bracket():
    clear_caches()
    eps = np.array([2.0, 0.55, 2.0, 3.0, 0.55])  # repeated eps, unsorted
    a = _acc()
    _, up1 = a.get_delta_bounds(eps, lower=False)
    lo, up = a.get_delta_bounds(eps)  # the bracket is computed, not the upper-first report served
    assert np.all(lo > 0) and np.all(up <= up1)
    assert up[0] == up[2] and up[1] == up[4] and lo[0] == lo[2]
    b = _acc()  # same round: the profile's value cache (NaN lower values) is shared
    privacy_profile(b, eps)
    plo, pup = privacy_profile_bounds(_acc(), eps)  # lower values asked for: computed, not NaN or 0
    assert np.all(plo > 0) and np.all(np.isfinite(plo)) and np.all(plo <= pup)
    clear_caches()
    plo2, _ = privacy_profile_bounds(_acc(), eps)  # (after clearing, from scratch)
    np.testing.assert_array_equal(plo2, plo)
    c = _acc()
    lo_c, up_c = c.get_delta_bounds(eps)
    _, up_c1 = c.get_delta_bounds(eps, lower=False)  # a bracket serves the upper-first request
    np.testing.assert_array_equal(up_c1, up_c)
    clear_caches()


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="docs/accountant_tail.md §15 'Keys': privacy_profile caches the upper-first "
                   "value (first round) while get_delta computes the bracket, which refines past its first round at "
                   "eps ~ 0.49-0.67: the same object (or two of the same round) answers two different upper values "
                   "for one eps (both certified); fix in profile._positive_bounds / accountant, see report")
def test_profile_and_get_delta_agree_on_the_same_object():
    clear_caches()
    a = _acc()
    p = float(privacy_profile(a, np.array([0.55]))[0])
    d = float(a.get_delta(0.55))
    b = _acc()
    d2 = float(b.get_delta(0.55))
    p2 = float(privacy_profile(b, np.array([0.55]))[0])
    clear_caches()
    assert p == d and p2 == d2


# ------------------------------------------------------------------ unchanged paths, edge eps


def test_edge_eps_and_paths_without_the_far_tail_are_unchanged():
    eps = np.array([0.0, 5e-324, 1e-300, 1e-9, 70.0, math.inf])
    lo, up = _acc().get_delta_bounds(eps)
    lo1, up1 = _acc().get_delta_bounds(eps, lower=False)
    np.testing.assert_array_equal(up1, up)
    assert up1[-1] == up[-1] and lo1[0] == lo[0]  # (eps = 0: the bracket; eps = inf: closed form)
    # very private round: the plain engine (sampler charge off so that the law's own values show)
    e2 = np.array([0.0, 0.001, 0.01])
    lo, up = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4, sampler_charge=False).get_delta_bounds(e2)
    lo1, up1 = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4,
                                 sampler_charge=False).get_delta_bounds(e2, lower=False)
    np.testing.assert_array_equal(up1, up)
    np.testing.assert_array_equal(lo1, lo)
    # replace through bot (Gaussian randomizer): both legs keep their brackets
    g = ShuffleAccountant(GaussianRandomizer(1.0, 1), 100, "replace")
    assert g.via_bottom
    lo, up = g.get_delta_bounds(2.0)
    lo1, up1 = ShuffleAccountant(GaussianRandomizer(1.0, 1), 100, "replace").get_delta_bounds(2.0, lower=False)
    assert (lo1, up1) == (lo, up) and lo > 0


# ------------------------------------------------------------------ claim (4): the pair dominates get_delta


def test_upper_first_pair_dominates_fresh_brackets_at_both_signs():
    # pair sampled upper first (doubling points and the last stage without lower values; cover() fills their
    # gaps from the neighbours); checked against the certified upper value of FRESH brackets, eps >= 0 directly
    # and eps < 0 through the swap identity (privacy_profile_bounds at -eps); catches a cover() that leaves a NaN
    # gap at 0 next to a sample that is upper-only.
    clear_caches()
    pair = dominating_pair(_acc(), 0.05, delta_floor=1e-9, rel_tol=2e-2, progress=False)
    clear_caches()
    eps = np.concatenate([np.linspace(0.0, 2.4, 25), [0.475, 0.525, 0.575]])
    _, up = _acc().get_delta_bounds(eps)
    assert np.all(pair.get_delta(eps) >= up)
    neg = -np.array([0.05, 0.3, 0.55, 1.0])
    _, upn = privacy_profile_bounds(_acc(), neg)
    assert np.all(pair.get_delta(neg) >= upn * (1 - 1e-12))
    clear_caches()
