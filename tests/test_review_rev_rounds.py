"""Review rev-rounds: attacks on the k-round search's few-point dominating pairs (docs/composition.md §2
Claims A/B, §4.2; docs/calibration.md §4.1) with references that do not use the pair under test.

- an independent LOWER reference of the k-fold composition (tests/data/review_rev_rounds/make_reference.py:
  a convex curve below the round's certified profile brackets built from convexity alone, its pair
  composed exactly on a lattice with losses rounded down): every certified composed value must be >= it;
- dp_accounting composing the exported model pair (pessimistic connect-the-dots PLD) k times;
- k = 1 against the single-round accountant's certified values;
- adversarial explicit point sets (missing 0, duplicates, unsorted, one point, beyond the support, huge);
- the infinity mass (Claim B) and the CLI's account --rounds K output.

Held: every certified figure (model pair and default pair) is above the independent reference; the model
pair's composition is what dp_accounting composes the same pair to (within 2 %); adversarial point sets
dominate or are refused. Broke (tightness, not certification; xfail strict): replace-one rounds (the model
ignores the replace index, 3.25x looser), doubling_epsilon's jump to 60 nats (21 orders looser for tiny
composed deltas), the JSON of account --rounds K without the lower value's meaning.
"""

import json
import math
import pathlib

import numpy as np
import pytest

from _cli import run as _run
from sharpdp.shuffle import ComposedAccountant, ShuffleAccountant, dominating_pair
from sharpdp.shuffle.calibration.rounds import model_composition
from sharpdp.shuffle.randomizers import BlanketMixedGaussian

DATA = pathlib.Path(__file__).parent / "data" / "review_rev_rounds"
REFS = json.loads((DATA / "reference.json").read_text())


_MODEL_UP: dict = {}


def _model_up(case):
    """The model pair's certified composed delta of a reference case (computed once per module)."""
    key = (case["n"], case["adjacency"], case["k"])
    if key not in _MODEL_UP:
        b = BlanketMixedGaussian(case["gamma"], case["sigma0"], case["dim"])
        eps = case["eps"][0]
        _MODEL_UP[key] = model_composition(b, case["n"], case["adjacency"], case["k"], eps).get_delta_bounds(eps)
    return _MODEL_UP[key]


def _curve(pair, t):
    """H_t(P || Q) of a stored pair, from its P-atoms (Claim B): inf mass + sum p (1 - t e^-l)_+."""
    losses = pair.losses.astype(float) * pair.value_discretization_interval
    t = np.atleast_1d(np.asarray(t, dtype=float))
    return pair.infinity_mass + np.sum(pair.probs[None, :] * np.maximum(-np.expm1(np.log(t)[:, None] - losses[None, :]),
                                                                        0.0), axis=1)


@pytest.mark.parametrize("case", REFS, ids=lambda c: f"n{c['n']}-{c['adjacency']}-k{c['k']}")
def test_model_composition_above_independent_lower_reference(case):
    # catches: a pair that does not dominate the round between its samples (chord in eps instead of t, a hull
    # that cuts below the samples), masses rounded the wrong way, an infinity mass dropped in the composition,
    # a composition engine that under-reports. The reference is below EVERY certified composition of the round.
    up = _model_up(case)[1]
    ref = case["lower_reference"][0]
    assert up >= ref, (up, ref)
    # the default adaptive pair's composition (stored, make_full.py) is certified too: above the reference
    # (measured 1.3-7.7 % above it), so the reference is not vacuous
    assert case["full_composition"][1] >= ref
    assert up >= case["full_composition"][0] * (1 - 1e-3)


# (replace-one was xfail here: _pair_top modelled every round by the zero-out chi_lo, 3.25x the full
# composition; it now takes chi_lo / 2 for replace)
_TIGHT = REFS


@pytest.mark.parametrize("case", _TIGHT, ids=lambda c: f"n{c['n']}-{c['adjacency']}-k{c['k']}")
def test_model_composition_close_to_full_composition(case):
    # docs/composition.md §4.2: the search pair's figure is a little looser than the default pair's (~1.5 % at
    # the flights table's n; measured 3.8 % at n = 1000 and 5.6 % at n = 200, zero-out). Catches a model that
    # misplaces the points so badly that the search returns a needlessly noisy BMG.
    up = _model_up(case)[1]
    assert up <= 1.08 * case["full_composition"][1], (up, case["full_composition"])


@pytest.mark.parametrize("case", REFS[:1], ids=lambda c: f"n{c['n']}-k{c['k']}")
def test_model_pair_composed_by_dp_accounting(case):
    # dp_accounting composes the exported pair k times (its own FFT, pessimistic tail): the certified figure
    # must not be below what the pair itself composes to (catches an engine bracket on the wrong side)
    from sharpdp.interop.dp_accounting import pld_from_pair

    b = BlanketMixedGaussian(case["gamma"], case["sigma0"], case["dim"])
    k, eps = case["k"], case["eps"][0]
    ca = model_composition(b, case["n"], case["adjacency"], k, eps)
    up = ca.get_delta_bounds(eps)[1]
    pair = ca.pairs()[0]
    assert pair.certified
    d_ext = pld_from_pair(pair).self_compose(k).get_delta_for_epsilon(eps)
    assert up >= d_ext * (1 - 1e-9) and up <= d_ext * 1.02, (up, d_ext)
    # Claim B: the infinity mass is the last sample's certified upper value, charged in full: k-fold
    # composed delta >= 1 - (1 - inf)^k
    assert pair.infinity_mass >= pair.sample_deltas[-1] * (1 - 1e-12)
    assert up >= -math.expm1(k * math.log1p(-pair.infinity_mass))


_SMALL = BlanketMixedGaussian(0.9, 3.0, 1)  # n = 3000: cheap certified values


@pytest.fixture(scope="module")
def small():
    acc = ShuffleAccountant(_SMALL, 3000, rel_tol=0.05)
    ref = ShuffleAccountant(_SMALL, 3000)
    e = np.array([0.0, 0.002, 0.005, 0.008, 0.012])
    return acc, e, np.asarray(ref.get_delta_bounds(e)[0])


@pytest.mark.parametrize("name,eps", [
    ("missing zero", np.arange(1, 21) * 1e-3),
    ("duplicates", [0.005, 0.005, 0.01, 0.01, 0.0]),
    ("unsorted", [0.02, 0.005, 0.01, 0.0]),
    ("one point", [0.01]),
    ("only zero", [0.0]),
    ("beyond the support", [0.0, 0.01, 5.0, 60.0, 100.0]),
])
def test_adversarial_point_sets_still_dominate(small, name, eps):
    # Claim A for ANY point set containing 0: the k = 1 pair's curve and its composed value at k = 1 are >= the
    # round's certified LOWER values (of the blanket bound the upper values certify) at eps != samples too,
    # both signs (the negative side through the swap identity); 0 is always added. Catches: a set without 0
    # accepted as is (the first chord then starts below (0, 1)), unsorted/duplicate indices breaking the hull.
    acc, e, lower = small
    pair = dominating_pair(acc, 1e-3, epsilons=eps, cover_upper=False, progress=False)
    assert pair.certified and pair.sample_epsilons[0] == 0.0 and np.all(np.diff(pair.sample_epsilons) > 0)
    h = _curve(pair, np.exp(e))
    assert np.all(h >= lower * (1 - 1e-9)), (name, h, lower)
    # negative eps: delta(-e) >= 1 - e^-e + e^-e L(e)
    tn = np.exp(-e)
    assert np.all(_curve(pair, tn) >= (1 - tn) + tn * lower - 1e-15)
    if max(eps) < 1.0:  # (composing a pair with losses up to 100 nats on this lattice costs ~1 min)
        ca = ComposedAccountant([(acc, 1)], 1e-3, epsilons=eps, cover_upper=False, progress=False)
        assert np.all(np.asarray(ca.get_delta_bounds(e)[1]) >= lower * (1 - 1e-9))


@pytest.mark.parametrize("eps,needle", [([-0.01, 0.0], ">= 0"), ([np.nan], "finite"), ([np.inf], "finite"),
                                        ([0.0, 0.0015], "grid"), ([], "empty")])
def test_bad_point_sets_refused(small, eps, needle):
    with pytest.raises(ValueError, match=needle):
        dominating_pair(small[0], 1e-3, epsilons=eps, progress=False)


def test_huge_point_refused():
    # eps / Delta beyond int64 (1e8 nats on a 1e-12 lattice) wraps to a negative index: it must be refused,
    # never sampled at a wrapped (negative) eps. (Today's message is the accountant's "epsilon must be >= 0,
    # got -9223372.04", not a clear one; see the review report.)
    import warnings

    acc = ShuffleAccountant(_SMALL, 3000, rel_tol=0.05)
    with warnings.catch_warnings(), pytest.raises(ValueError):
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's "invalid value encountered in cast"
        dominating_pair(acc, 1e-12, epsilons=[0.0, 1e-6, 1e8], progress=False)


def test_one_round_model_pair_above_single_round_values(small):
    # k = 1: the few-point pair's certified composed value >= the single-round accountant's certified
    # (default accuracy) lower value of the blanket bound at eps (catches a model pair below the round itself)
    b, n, eps = _SMALL, 3000, 0.004
    ca = model_composition(b, n, "zero_out", 1, eps)
    lo1, up1 = ShuffleAccountant(b, n).get_delta_bounds(eps)
    up = ca.get_delta_bounds(eps)[1]
    assert up >= lo1 and up <= 1.25 * up1, (up, lo1, up1)  # (measured 1.12x)


@pytest.mark.parametrize("k", [1, 2])
def test_account_cli_rounds_prints_the_certified_model_value(capsys, k):
    # the printed delta is the model pair's certified composed value (k > 1), its lower end labelled a
    # reference and not a lower bound; k = 1 the single round's own certified value
    base = ["account", "--gamma", "0.9", "--sigma0", "3.0", "--n", "3000", "--rounds", str(k), "--epsilon", "0.004"]
    code, out, err = _run(capsys, *base, "--json")
    assert code == 0, err
    r = json.loads(out)
    b = _SMALL
    if k == 1:
        assert r["delta"] == pytest.approx(ShuffleAccountant(b, 3000).get_delta(0.004), rel=1e-12)
    else:
        ca = model_composition(b, 3000, "zero_out", k, 0.004)
        lo, up = ca.get_delta_bounds(0.004)
        assert r["delta"] == pytest.approx(up, rel=1e-12) and r["delta_upper"] == r["delta"]
        assert r["delta_lower"] == pytest.approx(lo, rel=1e-12)
        # the composition of k rounds is at least one round's (certified lower value) at the same epsilon
        assert r["delta"] >= ShuffleAccountant(b, 3000).get_delta_bounds(0.004)[0]
    code, out, _ = _run(capsys, *base)
    assert code == 0 and "certified delta" in out and ("not a lower bound" in out or k == 1)


# (was xfail: the BMG path of cli/account.py gave delta_lower without delta_lower_meaning; fixed)
def test_account_cli_rounds_json_labels_the_reference_lower_value(capsys):
    base = ["account", "--gamma", "0.9", "--sigma0", "3.0", "--n", "3000", "--rounds", "2", "--epsilon", "0.004"]
    code, out, err = _run(capsys, *base, "--json")
    assert code == 0, err
    assert "not a lower bound" in json.loads(out).get("delta_lower_meaning", "")


_DOUBLING_REASON = (
    "profile.doubling_epsilon tries j = 13 (start 2^13) right after j = 0; the accountant's raw certified upper "
    "values are not monotone at large eps (BMG(0.9, 3.0), n = 3000, fresh: 9.4e-31 at 3 nats, 2.2e-23 at 20, "
    "2.1e-16 at 50.2; all valid, delta itself is non-increasing) and privacy_profile only takes the minimum "
    "over values already cached at smaller eps, so 'above(13)' is True and the search returns 60 nats although "
    "start 2^1 = 0.012264 has a certified value 9.9e-28 <= delta. model_composition's model-miss rule then "
    "spreads its 40 points over [0, 60] (Delta = 0.15): account --rounds 3 --epsilon 0.02 on this round prints "
    "7.9e-4 (default pair: 5.3e-25; docs §4.2 says 2.6e-27). Certified, but 21 orders looser. Fix: in "
    "doubling_epsilon certify the points j = 1, 2, ... upward (or binary-search below js whenever "
    "up(start 2^js) > up(start), i.e. use min over j' <= j of the certified values, which is what 'certified "
    "delta(start 2^j) <= delta' means for a non-increasing delta)")


# (was xfail, _DOUBLING_REASON: fixed in profile.doubling_epsilon, which certifies upward where the far point did not decrease)
def test_doubling_epsilon_first_certified_point():
    from sharpdp.shuffle.profile import clear_caches, doubling_epsilon, privacy_profile

    clear_caches()  # (a warm value cache at small eps hides it)
    acc = ShuffleAccountant(_SMALL, 3000, rel_tol=0.05)
    floor, start = 5.281840503906822e-25, 0.006132
    got = doubling_epsilon(acc, floor, start=start)
    assert privacy_profile(acc, 2 * start) <= floor  # 9.9e-28: j = 1 already certifies the floor
    assert got <= 2 * start, got


# (was xfail, _DOUBLING_REASON: fixed in profile.doubling_epsilon, which certifies upward where the far point did not decrease)
def test_model_pair_for_a_tiny_composed_delta_is_not_spread_over_60_nats():
    from sharpdp.shuffle.profile import clear_caches

    clear_caches()
    ca = model_composition(_SMALL, 3000, "zero_out", 2, 0.008)
    # one round's certified value at 0.008 is ~1e-21; the default pair's composition ~1e-18 (its floor)
    assert ca.get_delta_bounds(0.008)[1] < 1e-15 and ca.value_discretization_interval < 1e-3


def test_loose_accountant_upper_values_above_accurate_lower_values():
    # the search pair's values come from an accountant at rel_tol 0.05: at the model's own points they must
    # stay above the rel_tol 2e-3 accountant's certified LOWER values of the same blanket bound (measured
    # margins at these points: >= +0.57 % here; +0.024 % at the flights table's K = 5 round, n = 327346).
    # Catches a loose-accuracy shortcut that reports a midpoint or lower value as the upper one.
    b, n, k, eps = BlanketMixedGaussian(0.6912200971923376, 1.982156093119624, 1), 1000, 5, 0.05
    pts = model_composition(b, n, "zero_out", k, eps).pairs()[0].sample_epsilons
    e = np.nextafter(np.array(pts), 0.0)
    e[0] = 0.0
    u5 = np.asarray(ShuffleAccountant(b, n, rel_tol=0.05).get_delta_bounds(e)[1])
    l2 = np.asarray(ShuffleAccountant(b, n, rel_tol=2e-3).get_delta_bounds(e)[0])
    assert np.all(u5 >= l2), np.min(u5 / np.maximum(l2, 1e-300))
