"""ComposedAccountant never looser than basic composition (docs/composition.md §4.3), and the account CLI's
--delta line naming the smallest certifiable value (docs/cli.md §2, docs/accountant.md §8.3)."""

import json
import math
import re
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sharpdp.shuffle as sh
from _cli import run as _run
from sharpdp.shuffle.basic_composition import basic_bounds, share

# the reviewer's round: the model-placed pair falls back to the default adaptive pair, whose infinity mass
# (3.74e-21 per round) is all the pair route has left at eps = 1 (3 x its top loss 0.159 nats < 1)
BMG, N, K, EPS = (0.3, 2.0, 2), 2000, 3, 1.0


@pytest.fixture(scope="module")
def reviewer():
    acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(*BMG), N)
    return sh.ComposedAccountant([(acc, K)])


def _fresh(e):  # the round's certified value from an accountant with no history (independent of the memo)
    return float(sh.ShuffleAccountant(sh.BlanketMixedGaussian(*BMG), N).get_delta(e))


def test_share_times_rounds_never_exceeds_epsilon():
    """K x share(eps, K) <= eps in exact arithmetic (Claim D needs K eps' <= eps). Mutation caught: share returning
    eps / K unrounded (fails at eps = 0.7, K = 3 among others)."""
    bad = 0
    for K_ in (2, 3, 7, 10, 100, 1000):
        for i in range(1, 400):
            e = i * 0.7 / 97 + 1e-3 * i
            assert K_ * Fraction(share(e, K_)) <= Fraction(e), (e, K_)
            bad += K_ * Fraction(e / K_) > Fraction(e)
    assert bad > 0  # (the plain quotient does overshoot somewhere: the rounding is needed)
    assert share(0.0, 3) == 0.0


def test_reviewer_case_is_basic_composition(reviewer):
    """get_delta(1) = 3 x the round's fresh certified value at 1/3 (rounded up), far below the pair route's value.
    Mutation caught: get_delta without the basic route (1.12e-20 reported)."""
    ref = K * _fresh(share(EPS, K))
    got = reviewer.get_delta(EPS)
    assert ref <= got <= ref * (1 + 1e-12), (got, ref)
    pair = reviewer._pair_upper(EPS)
    assert pair > 1e5 * got  # (1.12e-20 against 2.93e-27, measured)
    lo, up = reviewer.get_delta_bounds(EPS)
    assert up == got and 0.0 <= lo <= up


def test_get_epsilon_against_a_brute_force_bisection(reviewer):
    """get_epsilon below the pair's infinity mass (refused before) and above it: the answer's get_delta is <= delta,
    and it is within xtol of a bisection on min(pair route, 3 x fresh round value at eps / 3). Mutation caught:
    get_epsilon returning the pair route's answer only (ValueError at 1e-20; 0.33 vs 0.77 at 4.4e-27 not found)."""
    def ref_delta(e):
        return min(reviewer._pair_upper(e), K * _fresh(share(e, K)) * (1 + 1e-12))

    for delta in (1e-20, 4.4e-27):
        xtol = 1e-3
        r = reviewer.get_epsilon(delta, xtol=xtol)
        assert reviewer.get_delta(r) <= delta
        lo, hi = 0.0, 1.0  # (fresh values rise again with the release sampler's charge far above: not searched)
        assert ref_delta(hi) <= delta
        while hi - lo > 1e-4 * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if ref_delta(mid) <= delta else (mid, hi)
        assert hi * (1 - 1.5 * xtol) <= r <= hi * (1 + 1.5 * xtol), (delta, r, hi)


def test_two_round_types_sum_their_shares():
    """Two round types: the basic value is sum_j n_j x fresh value_j at eps / (n_1 + n_2), and get_epsilon's
    bisection on it (several types) meets its own value. Mutation caught: each type at eps / n_j (its own count)."""
    mk = (lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(*BMG), N),
          lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.3, 2.5, 2), N))
    ca = sh.ComposedAccountant([(mk[0](), 2), (mk[1](), 1)])
    e = share(1.2, 3)
    ref = math.fsum([2 * float(mk[0]().get_delta(e)), float(mk[1]().get_delta(e))])
    b = basic_bounds(ca.parts, 1.2, lower=False)[1]
    assert ref <= b <= ref * (1 + 1e-12)
    assert ca.get_delta(1.2) == min(ca._pair_upper(1.2), b)
    r = ca.get_epsilon(1.5 * b, xtol=1e-3)
    assert ca.get_delta(r) <= 1.5 * b and ca.get_delta(r * (1 - 2e-3)) > 1.5 * b


@settings(max_examples=12, deadline=None, derandomize=True)
@given(eps=st.floats(0.01, 3.0))
def test_new_upper_is_the_min_and_above_its_lower_value(reviewer, eps):
    """At any eps > 0: upper == min(pair route, basic value) (so <= the pair route's old value) and >= the
    reported lower value. Mutations caught: the basic value taken even where it is larger (upper > pair route);
    the pair's lower reference kept where the basic value is reported (9.2e-23 > upper 2.9e-27, clamped to it)."""
    pair = reviewer._pair_upper(eps)
    basic = basic_bounds(reviewer.parts, eps, lower=False)[1]
    lo, up = reviewer.get_delta_bounds(eps)
    assert up == min(pair, basic) and up <= pair
    assert 0.0 <= lo <= up
    if up < pair:  # basic composition's value: its own reference lower value, not the pair's clamped to it
        assert lo == basic_bounds(reviewer.parts, eps)[0]
    assert reviewer.get_delta(eps) == up


def test_account_rounds_cli_reports_the_basic_route(capsys):
    """`sharpdp account --rounds 3` on the reviewer's round: delta = 3 x the round's certified value at 1/3 and the
    output names the route. Mutation caught: the CLI's route check against the pair value (says "pair")."""
    code, out, err = _run(capsys, "account", "--gamma", "0.3", "--sigma0", "2", "--dim", "2", "--n", str(N),
                          "--rounds", "3", "--epsilon", "1", "--json")
    assert code == 0, err
    r = json.loads(out)
    ref = K * _fresh(share(EPS, K))
    assert ref <= r["delta"] <= ref * (1 + 1e-12)
    assert r["composition_route"].startswith("basic composition") and r["delta_lower"] <= r["delta"]
    code, out, err = _run(capsys, "account", "--gamma", "0.3", "--sigma0", "2", "--dim", "2", "--n", str(N),
                          "--rounds", "3", "--epsilon", "1")
    assert code == 0 and "value by basic composition" in out.replace("\n  ", " "), out


def test_delta_route_names_the_smallest_certifiable_value(capsys):
    """The --delta line names the smallest certified value that get_epsilon's refusal names (one search), not
    only 2 n sampler_tv (2.29e-29, below it). Mutation caught: the line printing floor_at_any_epsilon as the
    smallest value (2.29e-29 != 2.887e-29)."""
    acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.95, 4.6, 1), 10**6)
    with pytest.raises(ValueError) as exc:
        acc.get_epsilon(2.5e-29)
    refused = float(re.search(r"smallest value ([0-9.e+-]+)", str(exc.value)).group(1))
    code, out, err = _run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1e6", "--delta", "3e-29",
                          "--json")
    assert code == 0, err
    sc = json.loads(out)["sampler_charge"]
    assert sc["smallest_certified_delta"] == refused and sc["floor_at_any_epsilon"] < refused
    code, out, err = _run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1e6", "--delta", "3e-29")
    text = out.replace("\n  ", " ")
    assert code == 0 and f"the smallest certified delta is {refused:.4g}" in text, text


def test_pair_route_kept_where_it_is_smaller():
    """In the body of the profile the pair route is the smaller value and is reported unchanged (10 rounds of
    shuffled binary RR, n = 2). Mutation caught: the basic value taken even where it is larger (`smaller` without
    its comparison: 1.0 reported at eps = 2)."""
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=2.0), 2, "zero_out")
    ca = sh.ComposedAccountant([(acc, 10)], 0.005)
    pairs = {eps: ca._pair_upper(eps) for eps in (2.0, 5.0)}
    for cached in (True, False):  # with the pair's profile values cached (cached_floor decides) and without
        if not cached:
            from sharpdp.shuffle.round_cache import clear_caches

            clear_caches()  # (the instance keeps its pairs; no cached lower value left: the basic value is computed)
        for eps, pair in pairs.items():
            assert pair < basic_bounds(ca.parts, eps, lower=False)[1], eps
            assert ca.get_delta(eps) == pair and ca.get_delta_bounds(eps)[1] == pair
