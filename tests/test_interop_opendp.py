"""sharpdp.interop.opendp: a shuffled round as an OpenDP measurement.

References: the accountant's own certified values (the profile must be at or above them, within
1 %), the exact output laws of shuffled binary randomized response at n = 2 (every zero-out pair,
both orders: the profile must lie above their hockey-stick divergence), OpenDP's own Laplace
measurement (composition must add up exactly as OpenDP's basic composition does), and a replay of
the randomizer and the shuffle from the same seed (the function releases exactly what the
accountant certifies).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
import sharpdp.shuffle as sh
from hypothesis import given, settings
from hypothesis import strategies as st

dp = pytest.importorskip("opendp.prelude")
from opendp import mod as odp_mod
from sharpdp.interop.opendp import ZERO_OUT_DISTANCE, make_shuffled_round
from test_composition_review import _binary_rr_pairs

BMG = sh.BlanketMixedGaussian(gamma=0.0653375976890112, sigma0=0.7226842589090982, dim=1)


@pytest.fixture(scope="module")
def bmg_round():
    acc = sh.ShuffleAccountant(BMG, 10_000)
    return acc, make_shuffled_round(acc, rng=1)


def test_profile_is_the_accountants_certified_profile(bmg_round):
    acc, m = bmg_round
    prof = m.map(1)
    for eps in (0.0, 0.3, 0.7, 1.0, 1.5, 2.5):
        ref = acc.get_delta(eps)
        got = prof.delta(eps)
        assert ref <= got <= 1.01 * ref
    for delta in (1e-3, 1e-6, 1e-9):
        eps = prof.epsilon(delta)
        # OpenDP's bisection returns the end whose certified value meets the target ...
        assert sh.privacy_profile(acc, eps) <= delta
        # ... within 1 % of the accountant's own (safe-end) answer
        assert eps == pytest.approx(acc.get_epsilon(delta), rel=1e-2)


def _binary_rr_pairs_mp(n, eps0):
    """_binary_rr_pairs at 50 digits (mpmath): the exact count laws of every zero-out pair."""
    with mp.workdps(50):
        p = mp.e ** mp.mpf(eps0) / (1 + mp.e ** mp.mpf(eps0))

        def conv(a, b):
            return [mp.fsum(a[i] * b[k - i] for i in range(len(a)) if 0 <= k - i < len(b))
                    for k in range(len(a) + len(b) - 1)]

        def pmf(m, q):
            return [mp.binomial(m, i) * q**i * (1 - q) ** (m - i) for i in range(m + 1)]

        out = []
        for m in range(n):
            base = conv(pmf(m, p), pmf(n - 1 - m, 1 - p))
            bot = conv(base, [mp.mpf(1) / 2, mp.mpf(1) / 2])
            for last in ([p, 1 - p], [1 - p, p]):
                d = conv(base, last)
                out += [(d, bot), (bot, d)]
        return out


def test_profile_dominates_exact_shuffled_binary_rr():
    """n = 2, zero-out: the exact count laws of every neighbouring pair, both orders, at 50 digits (the
    blanket bound is tight here to ~1e-14 at eps = 0, so the reference must not carry double rounding)."""
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=2.0), 2, "zero_out")
    prof = make_shuffled_round(acc).map(1)
    pairs = _binary_rr_pairs_mp(2, 2.0)
    float_pairs = _binary_rr_pairs(2, 2.0)
    for eps in (0.0, 0.1, 0.3, 0.5):  # the largest loss is log(2 e^2 / (1 + e^2)) = 0.566
        with mp.workdps(50):
            t = mp.e ** mp.mpf(eps)
            exact = max(mp.fsum(max(x - t * y, 0) for x, y in zip(a, b)) for a, b in pairs)
        assert exact > 0
        # the 50-digit reference agrees with the double one (the same laws)
        assert float(exact) == pytest.approx(max(float(np.maximum(a - math.exp(eps) * b, 0.0).sum())
                                                 for a, b in float_pairs), rel=1e-13)
        assert mp.mpf(prof.delta(eps)) >= exact


def test_metric_domain_and_map_conventions():
    rr = sh.RandomizedResponse(k=3, epsilon0=1.0)
    m = make_shuffled_round(sh.ShuffleAccountant(rr, 40, "replace"))
    assert str(m.input_metric) == "ChangeOneDistance()"
    assert str(m.input_domain) == "VectorDomain(AtomDomain(bounds=[0, 2], T=i64), size=40)"
    assert str(m.output_measure) == "SmoothedMaxDivergence"
    z = make_shuffled_round(sh.ShuffleAccountant(rr, 40, "zero_out"))
    assert str(z.input_metric) == ZERO_OUT_DISTANCE
    assert z.map(0).delta(0.0) == 0.0
    with pytest.raises(ValueError, match="^d_in"):
        z.map(2)
    with pytest.raises(ValueError, match="^epsilon must be >= 0"):
        z.map(1).delta(-0.1)
    with pytest.raises(TypeError, match="accountant"):
        make_shuffled_round(rr)
    with pytest.raises(ValueError, match="threads"):
        make_shuffled_round(sh.ShuffleAccountant(rr, 40), threads=0)


def test_callers_opendp_features_are_left_alone():
    before = set(odp_mod.GLOBAL_FEATURES)
    m = make_shuffled_round(sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=1.0), 20))
    m.map(1).delta(0.5)
    assert set(odp_mod.GLOBAL_FEATURES) == before


def test_release_is_the_randomizer_then_a_shuffle():
    acc = sh.ShuffleAccountant(BMG, 500)
    x = np.random.default_rng(3).uniform(-1.0, 1.0, (500, 1))
    got = make_shuffled_round(acc, rng=11)(x)
    g = np.random.default_rng(11)
    expected = BMG.sample(x, rng=g)[g.permutation(500)]
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match="^x must hold"):
        make_shuffled_round(acc, rng=11)(x[:10])


def test_composes_with_opendp_measurements():
    """fix_delta turns the profile into (eps, delta); OpenDP's composition then adds it to a Laplace sum."""
    n = 50
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=2.0), n, "replace")
    rnd = make_shuffled_round(acc, rng=5)
    dp.enable_features("contrib")
    try:
        lap = (dp.t.make_metric_unbounded(rnd.input_domain, rnd.input_metric) >> dp.t.then_sum()
               >> dp.m.then_laplace(4.0))
        fixed = dp.c.make_fix_delta(rnd, 1e-6)
        both = dp.c.make_composition([fixed, dp.c.make_approximate(lap)])
        eps_round, delta_round = fixed.map(1)
        assert delta_round == 1e-6
        assert sh.privacy_profile(acc, eps_round) <= 1e-6
        assert eps_round == pytest.approx(acc.get_epsilon(1e-6), rel=1e-2)
        eps_both, delta_both = both.map(1)
        # one changed record in [0, 1] moves the sum by at most 1: Laplace(4) costs 1/4
        assert eps_both == pytest.approx(eps_round + 0.25, rel=1e-12)
        assert delta_both == pytest.approx(1e-6, rel=1e-12)
        messages, noisy_sum = both(np.ones(n, dtype=np.int64))
        assert sorted(np.unique(messages).tolist()) <= [0, 1] and len(messages) == n
        assert math.isfinite(noisy_sum)
    finally:
        dp.disable_features("contrib")


@settings(max_examples=25, deadline=None)
@given(e1=st.floats(0.0, 3.0), e2=st.floats(0.0, 3.0))
def test_profile_is_non_increasing(e1, e2):
    prof = _RR_PROFILE
    lo, hi = sorted((e1, e2))
    assert 0.0 <= prof.delta(hi) <= prof.delta(lo) <= 1.0


_RR_PROFILE = make_shuffled_round(sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=1.0), 30)).map(1)


def test_sharpdp_errors_arrive_as_themselves():
    """sharpdp's own errors reach the caller with sharpdp's type and message alone (not OpenDP's FFI wrapper
    whose message is a trace ending in them), as an OpenDPException too (what OpenDP documents for these
    calls): checked before OpenDP runs (record count, d_in, epsilon) or raised by the sampler inside OpenDP's
    call (a category outside [0, k)). Through an OpenDP combinator the call is OpenDP's: its OpenDPException,
    sharpdp's message at the end."""
    rr = sh.RandomizedResponse(k=2, epsilon0=1.0)
    m = make_shuffled_round(sh.ShuffleAccountant(rr, 30), rng=2)
    cases = [(lambda: m(np.zeros(29, dtype=np.int64)), "x must hold the n = 30 users' records, got 29"),
             (lambda: m.invoke(np.full(30, 5, dtype=np.int64)), "x must hold categories in [0, 2), found 5"),
             (lambda: m.map(3), "d_in: the shuffle accountant bounds one differing user (d_in <= 1), got 3"),
             (lambda: m.map(-1), "d_in must be >= 0, got -1"),
             (lambda: m.check(2, 1.0), "d_in: the shuffle accountant bounds one differing user"),
             (lambda: m.map(1).delta(-0.5), "epsilon must be >= 0, got -0.5"),
             (lambda: m.map(0).delta(float("nan")), "epsilon is NaN")]
    for j, (call, message) in enumerate(cases):
        with pytest.raises(ValueError) as info:
            call()
        assert isinstance(info.value, odp_mod.OpenDPException)
        assert info.value.variant == ("FailedFunction" if j < 2 else "FailedMap")
        assert str(info.value).startswith(message), str(info.value)
        assert "FFI" not in str(info.value) and "Traceback" not in str(info.value)
    with pytest.raises(ValueError, match="^d_in must be an integer"):
        m.map(1.5)
    with pytest.raises(TypeError, match="^epsilon must be a real number") as info:
        m.map(1).delta("0.5")
    assert isinstance(info.value, odp_mod.OpenDPException)
    # the measurement still works, directly and in OpenDP's combinators
    assert sorted(set(m(np.ones(30, dtype=np.int64)).tolist())) <= [0, 1]
    assert 0.0 < m.map(1).delta(0.5) == sh.privacy_profile(sh.ShuffleAccountant(rr, 30), 0.5)
    dp.enable_features("contrib")
    try:
        both = dp.c.make_composition([dp.c.make_fix_delta(m, 1e-6)] * 2)
        with pytest.raises(odp_mod.OpenDPException) as info:
            both(np.full(30, 5, dtype=np.int64))
        assert str(info.value).rstrip().endswith('found 5\n")'), str(info.value)[-200:]
    finally:
        dp.disable_features("contrib")
    # OpenDP's own errors stay OpenDP's (no stale sharpdp error from the failed composed call above)
    with pytest.raises(odp_mod.OpenDPException, match="between zero and one"):
        m.map(1).epsilon(2.0)


def test_uncertified_randomizer_is_refused():
    """A GeneralRandomizer without log_curvature has estimated (not certified) accountant values."""
    from test_fuzz_public_api import _general  # the fuzz table's estimate-mode GeneralRandomizer

    rnd = _general()
    assert rnd.certified is False
    with pytest.raises(ValueError, match="not certified"):
        make_shuffled_round(sh.ShuffleAccountant(rnd, 100))


def test_an_input_domain_of_another_size_or_of_single_values_is_refused_when_built():
    """The accountant certifies a dataset of exactly n records: a vector domain of another size, or a domain of
    single values, is refused by make_shuffled_round naming input_domain (not at the first invocation)."""
    rr = sh.ShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=1.0), 100)
    for dom, msg in ((dp.vector_domain(dp.atom_domain(T="i64"), size=50), "holds datasets of 50 records"),
                     (dp.atom_domain(T=float), "domain of single values")):
        with pytest.raises(ValueError, match=f"^input_domain: .*{msg}"):
            make_shuffled_round(rr, input_domain=dom)
    m = make_shuffled_round(rr, input_domain=dp.vector_domain(dp.atom_domain(T="i64"), size=100))
    assert m.map(1).delta(1.0) > 0.0
