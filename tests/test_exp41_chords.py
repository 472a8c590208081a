"""Session 41, exp41: ``privacy_profile``'s eps strictly between two of the round's cached certified values take the
chord in t = e^eps of their upper values, rounded up, where the chord's estimated overshoot is within
PROFILE_CHORD_AIM rel_tol (docs/composition.md §2.24, ``profile_chords``, switch ``limits.PROFILE_CHORDS``).

References: the Gaussian mechanism's profile in closed form (a hockey-stick curve, convex in e^eps) evaluated with
mpmath; the exact blanket divergence of k-RR under replace-one adjacency by multinomial sums
(tests/data/make_krr_reference.py, independent of sharpdp); the lower values of fresh rel_tol = 1e-3 brackets
(``get_delta_bounds``, no sweep); mpmath's chord at 50 digits; main 4eee1c4c's floats (digest recorded from
/work/venv/main) with the switch off.
"""

from __future__ import annotations

import functools
import hashlib

import mpmath as mp
import numpy as np
import pytest
from _main_floats34 import switch
from test_prof36_warm import KRR_REF  # (the exact k-RR sums' loader: tests/data/make_krr_reference.py)

from sharpdp.shuffle import (BlanketMixedGaussian, RandomizedResponse, ShuffleAccountant, clear_caches,
                             dominating_pair, privacy_profile)
from sharpdp.shuffle.profile_chords import chord_fill, chord_sweep, chord_value


class _Count:
    certified = 0


@pytest.fixture(autouse=True)
def _chords_on(monkeypatch):
    """docs/composition.md §2.24.1: the rule is off by default; these tests check it switched on."""
    switch(monkeypatch, "PROFILE_CHORDS", True)


def _counted(acc, monkeypatch):
    """Counts the accountant's certified evaluations (the eps the profile did not take from a chord); the signature
    kept (the profile reads it)."""
    real, c = acc.get_delta_bounds, _Count()

    @functools.wraps(real)
    def counted(eps, *a, **kw):
        c.certified += int(np.size(eps))
        return real(eps, *a, **kw)

    monkeypatch.setattr(acc, "get_delta_bounds", counted)
    return c


def _gauss_profile(mu, e):
    """The Gaussian mechanism's privacy profile (sensitivity / sigma = mu) at eps = e, mpmath."""
    e = mp.mpf(e)
    return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)


def test_chord_value_rounds_up():
    """chord_value is at or above mpmath's chord in e^eps (50 digits), within 1e-11 of it, and at most u_a: nearby
    eps (the t's differ by 1e-8 of t) and far ones."""
    rng = np.random.default_rng(41)
    with mp.workdps(50):
        for _ in range(300):
            e_a = float(rng.uniform(0, 3))
            width = float(10 ** rng.uniform(-8, 0))
            e_b = e_a + width
            e = e_a + float(rng.uniform(0.01, 0.99)) * width
            u_b = float(10 ** rng.uniform(-20, -1))
            u_a = u_b * float(1 + 10 ** rng.uniform(-6, 3))
            ta, tb, t = mp.exp(e_a), mp.exp(e_b), mp.exp(e)
            exact = mp.mpf(u_b) + (mp.mpf(u_a) - u_b) * (tb - t) / (tb - ta)
            got = chord_value(e_a, u_a, e_b, u_b, e)
            assert got >= exact and got <= u_a, (e_a, e_b, e, got, exact)
            assert got <= exact * (1 + mp.mpf(1e-11)) or got == u_a


class _Acc:
    rel_tol = 1e-2


def test_fill_against_closed_form_profile():
    """A cache of upper values (0 to 1e-3 above) of the Gaussian mechanism's profile (mu = 1) at 200 eps of [0, 7]:
    inside the sweep, every eps taking a chord is at or above the exact profile, within 0.6 % of it, and the others
    are left to certify; outside the sweep or with the switch off nothing is filled. An entry with a level (a coarse
    value) is no chord's end."""
    rng = np.random.default_rng(7)
    keys = np.linspace(0.0, 7.0, 200)
    with mp.workdps(30):
        exact_k = [float(_gauss_profile(1.0, e)) for e in keys]
        cache = {float(e): (float("nan"), d * (1 + float(rng.uniform(0, 1e-3)))) for e, d in zip(keys, exact_k)}
        coarse = float(0.5 * (keys[100] + keys[101]))
        cache[coarse] = (float("nan"), 10.0 * exact_k[100], 1e-9)  # (certified but coarse: not an end)
        eps = np.sort(np.setdiff1d(np.linspace(0.0, 7.0, 1401), keys))
        missing, fill = chord_fill(cache, eps, _Acc())
        assert missing.size == eps.size  # (outside the sweep: nothing)
        with chord_sweep():
            missing, fill = chord_fill(cache, eps, _Acc())
        got = fill(eps, np.full(eps.size, np.nan))
        taken = ~np.isnan(got)
        assert 600 <= taken.sum() < eps.size and missing.size == eps.size - taken.sum()
        assert not np.isin(missing, eps[taken]).any()
        ref = np.array([float(_gauss_profile(1.0, e)) for e in eps[taken]])
    assert np.all(got[taken] >= ref), np.min(got[taken] / ref)
    assert np.all(got[taken] <= ref * 1.006), np.max(got[taken] / ref)
    near = (eps > keys[100]) & (eps < keys[101])
    assert np.all(got[near & taken] <= 1.01 * np.array(exact_k[100]))  # (the coarse entry's 10x value is no end)


def test_switch_off_main_floats(monkeypatch):
    """Switch off: 5-RR (eps0 = 1), n = 300, replace, a profile of 40 eps after the round's pair: main 4eee1c4c's floats
    bit for bit, every eps certified; switch on: other floats, from chords."""
    switch(monkeypatch, "PROFILE_CHORDS", False)
    dominating_pair(ShuffleAccountant(RandomizedResponse(5, 1.0), 300, "replace"), progress=False)
    acc = ShuffleAccountant(RandomizedResponse(5, 1.0), 300, "replace")
    c = _counted(acc, monkeypatch)
    u = privacy_profile(acc, np.linspace(0.013, 0.9, 40), progress=False)
    assert hashlib.sha256(np.ascontiguousarray(u, dtype="<f8").tobytes()).hexdigest()[:16] == "eeba7b1899122fd7"
    assert c.certified == 40
    switch(monkeypatch, "PROFILE_CHORDS", True)
    dominating_pair(ShuffleAccountant(RandomizedResponse(5, 1.0), 300, "replace"), progress=False)
    u2 = privacy_profile(ShuffleAccountant(RandomizedResponse(5, 1.0), 300, "replace"), np.linspace(0.013, 0.9, 40),
                         progress=False)
    assert not np.array_equal(u, u2)


def test_krr_profile_after_pair_against_exact_sums(monkeypatch):
    """5-RR (eps0 = 1), n = 300, replace: a 40-eps profile after the round's pair takes most values from chords; every
    value at or above the exact blanket divergence and within 1.25 % of it where delta >= 1e-12."""
    clear_caches()
    pair = dominating_pair(ShuffleAccountant(RandomizedResponse(5, 1.0), 300, "replace"), progress=False)
    se, sd = pair.sample_epsilons, pair.sample_deltas
    eps = np.linspace(0.013, float(se[np.nonzero(sd <= 1e-12)[0][0]]), 40)
    acc = ShuffleAccountant(RandomizedResponse(5, 1.0), 300, "replace")
    c = _counted(acc, monkeypatch)
    got = privacy_profile(acc, eps, progress=False)
    assert c.certified <= 8, c.certified

    def exact(e):
        vals, probs, gamma = KRR_REF.krr_replace_law(5, 1.0, float(e))
        return KRR_REF.exact_dup(vals, probs, gamma, 300)

    ref = np.array([exact(e) for e in eps])
    assert np.all(got >= ref * (1 - 1e-9)), np.min(got / ref)
    big = ref >= 1e-12
    assert np.all(got[big] <= ref[big] * 1.0125), np.max(got[big] / ref[big])
    neg = privacy_profile(acc, -eps[::4], progress=False)  # (the swap identity on chord values; the round is symmetric)
    ref_neg = -np.expm1(-eps[::4]) + np.exp(-eps[::4]) * ref[::4]
    assert np.all(neg >= ref_neg * (1 - 1e-12)), np.min(neg / ref_neg)


def test_private_round_profile_after_pair(monkeypatch):
    """The private round BMG(0.95, 4.6), n = 1e4, zero-out (the plain engine): a 60-eps profile after the round's pair
    takes at least 50 values from chords; every value at or above the lower value of a fresh rel_tol = 1e-3 bracket
    and within 1.25 % of it (lower > 1e-15)."""
    clear_caches()
    mk = lambda r=1e-2: ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**4, "zero_out", rel_tol=r)  # noqa: E731
    pair = dominating_pair(mk(), progress=False)
    se, sd = pair.sample_epsilons, pair.sample_deltas
    eps = np.linspace(0.0, float(se[np.nonzero(sd <= 1e-13)[0][0]]), 60)
    acc = mk()
    c = _counted(acc, monkeypatch)
    got = privacy_profile(acc, eps, progress=False)
    assert c.certified <= 10, c.certified
    lo, _ = mk(1e-3).get_delta_bounds(eps)
    assert np.all(got >= lo), np.min(got / lo)
    m = lo > 1e-15
    assert np.all(got[m] <= lo[m] * 1.0125), np.max(got[m] / lo[m])


def test_fill_at_tiny_eps_needs_distinct_floats_of_e_eps():
    """Cached ends at eps = 0 and 3.3e-264 (equal floats e^eps, found by OpenDP's property test): no estimate, no
    warning, the eps between them left to certify; an eps between distinct floats still takes a chord at or above the
    exact profile (the Gaussian mechanism's, mu = 1)."""
    with mp.workdps(30):
        keys = [0.0, 3.288884285374632e-264, 1e-3, 2e-3, 3e-3]
        cache = {e: (float("nan"), float(_gauss_profile(1.0, e))) for e in keys}
        eps = np.array([1e-300, 1.5e-3])
        with chord_sweep():
            missing, fill = chord_fill(cache, eps, _Acc())
        assert missing.tolist() == [1e-300]
        got = fill(eps, np.full(2, np.nan))
        assert got[1] >= float(_gauss_profile(1.0, 1.5e-3))


def test_no_chord_to_a_cached_infinite_eps():
    """docs/composition.md §2.24.1: a cached eps = inf (delta 0) is no chord's end (its weight was inf / inf: NaN
    values); the profile after it is finite, non-increasing and above a fresh accountant's lower values."""
    clear_caches()
    acc = ShuffleAccountant(RandomizedResponse(k=2, epsilon0=1.0), 50, rel_tol=3e-3)
    privacy_profile(acc, [0.0, 0.5, np.inf])
    u = privacy_profile(acc, [0.6, 1.0, 2.0, 3.0])
    assert np.all(np.isfinite(u)) and np.all(np.diff(u) <= 0.0)
    fresh = ShuffleAccountant(RandomizedResponse(k=2, epsilon0=1.0), 50, rel_tol=3e-3)
    assert np.all(u >= np.array([fresh.get_delta_bounds(e)[0] for e in (0.6, 1.0, 2.0, 3.0)]))
