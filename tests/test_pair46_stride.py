"""Session 46, pair46: a privacy profile's own sweep with strides; the skipped eps take the chord in e^eps of their
certified ends (docs/composition.md §2.29, ``limits.PROFILE46_STRIDE``, off by default; the tests switch it on).

References: the Gaussian mechanism's closed-form profile (convex in e^eps, independent of the accountant), mpmath's
chord at 50 digits, the exact blanket divergence of k-RR under replace-one by binomial sums
(tests/test_krr29_settled_upper.py's ``_blanket_three_atoms``, no lattice), and the switch off (every eps certified).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from _main_floats34 import switch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from test_krr29_settled_upper import _blanket_three_atoms

import sharpdp.shuffle as sh
from sharpdp.shuffle import profile_stride
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.profile_chords import chord_sweep


def _gauss(mu: float, e: np.ndarray) -> np.ndarray:
    """The Gaussian mechanism's exact profile (sensitivity 1, sigma = 1 / mu)."""
    return stats.norm.cdf(-e / mu + mu / 2) - np.exp(e) * stats.norm.cdf(-e / mu - mu / 2)


class _Fake:
    """An accountant stand-in: certified upper values (exact profile times 1 + a known slack >= 0), its calls counted."""

    def __init__(self, mu: float, slack: float, rel_tol: float = 1e-2):
        self.mu, self.slack, self.rel_tol, self.calls = mu, slack, rel_tol, []

    def __call__(self, x: np.ndarray):
        self.calls.extend(np.asarray(x).tolist())
        return np.zeros(len(x)), _gauss(self.mu, np.asarray(x)) * (1.0 + self.slack)


def _run(fake: _Fake, eps: np.ndarray, on: bool = True):
    with chord_sweep():
        got_e, lo, up, fill = profile_stride.stride_eval(fake, eps, fake, on, lambda e, u: u, "test", False)
    cache = dict(zip(got_e.tolist(), up.tolist()))
    keys = np.array(sorted(cache))
    ups = np.minimum.accumulate(np.array([cache[k] for k in keys.tolist()]))
    return got_e, fill(eps, ups[np.searchsorted(keys, eps)])


def test_predicted_overshoot_matches_mpmath_chord():
    """The prediction's model: the chord in t of exp(-r (e - a)) against the function, at 50 digits."""
    mpmath.mp.dps = 50
    for a, b, r in ((0.0, 0.01, 30.0), (0.3, 0.32, 400.0), (1.0, 1.5, 2.0)):
        inner = np.linspace(a, b, 7)[1:-1].tolist()
        got = profile_stride.predicted_overshoot(a, b, inner, r)
        ta, tb = mpmath.e ** a, mpmath.e ** b
        want = max((mpmath.e ** (-r * (b - a)) + (1 - mpmath.e ** (-r * (b - a))) * (tb - mpmath.e ** e) / (tb - ta))
                   * mpmath.e ** (r * (e - a)) - 1 for e in inner)
        assert abs(got - float(want)) <= 1e-9 * max(1.0, float(want))
        assert got > 0.0


def test_geometric_excess_zero_on_a_geometric_value_and_inf_at_zero():
    assert abs(profile_stride.geometric_excess(0.0, 1e-3, 1.0, 1e-5, 0.5, 1e-4)) < 1e-12
    assert profile_stride.geometric_excess(0.0, 1e-3, 1.0, 0.0, 0.5, 1e-4) == math.inf


def test_gaussian_profile_strides_certified_and_within_the_aim(monkeypatch):
    """300 eps of the Gaussian mechanism's profile down to ~1e-13: every value at or above the exact profile, within
    the aim (0.5 rel_tol) plus the ends' slack of it, and fewer certified eps than requested."""
    switch(monkeypatch, "PROFILE46_STRIDE", True)
    eps = np.linspace(0.0, 8.0, 300)
    fake = _Fake(1.0, 1e-3)
    got_e, up = _run(fake, eps)
    exact = _gauss(1.0, eps)
    assert np.all(up >= exact)
    m = exact >= 1e-13
    assert np.max(up[m] / exact[m]) <= (1.0 + 1e-3) * (1.0 + 0.5 * 1e-2) * 1.001
    assert got_e.size < 250 and len(fake.calls) == got_e.size
    assert profile_stride.LAST["filled"] == 300 - got_e.size


def test_switch_off_certifies_every_eps(monkeypatch):
    switch(monkeypatch, "PROFILE46_STRIDE", False)
    eps = np.linspace(0.0, 8.0, 50)
    fake = _Fake(1.0, 0.0)
    got_e, up = _run(fake, eps)
    assert got_e.size == 50 and np.array_equal(up, _gauss(1.0, eps))


def test_outside_the_profile_sweep_or_with_lower_values_no_strides(monkeypatch):
    switch(monkeypatch, "PROFILE46_STRIDE", True)
    eps = np.linspace(0.0, 8.0, 50)
    fake = _Fake(1.0, 0.0)
    got_e, _, _, _ = profile_stride.stride_eval(fake, eps, fake, True, lambda e, u: u, "t", False)  # (no sweep mark)
    assert got_e.size == 50
    got_e, _ = _run(_Fake(1.0, 0.0), eps, on=False)
    assert got_e.size == 50


@settings(max_examples=40, deadline=None)
@given(mu=st.floats(0.2, 5.0), slack=st.floats(0.0, 3e-3), n_pts=st.integers(3, 400),
       top=st.floats(0.5, 30.0), aim=st.floats(0.1, 1.0))
def test_property_every_value_at_or_above_the_exact_profile(mu, slack, n_pts, top, aim):
    """Any Gaussian profile, grid and aim: every value (certified or a chord) at or above the exact profile."""
    with pytest.MonkeyPatch.context() as mp:
        switch(mp, "PROFILE46_STRIDE", True)
        switch(mp, "PROFILE46_STRIDE_AIM", aim)
        eps = np.linspace(0.0, top, n_pts)
        _, up = _run(_Fake(mu, slack), eps)
    exact = _gauss(mu, eps)
    assert np.all(up >= exact)


def test_krr_profile_against_the_exact_blanket_divergence(monkeypatch):
    """10-RR (eps0 = 4), n = 1e5, replace, 300 eps of [0, 0.2] (delta down to ~1e-13): with strides at most 80 %
    of the eps certified, every value at or above the exact blanket divergence (binomial sums) at 15 eps and within
    1 % of it where it is >= 1e-12."""
    switch(monkeypatch, "PROFILE46_STRIDE", True)
    r, n = sh.RandomizedResponse(10, 4.0), 10**5
    eps = np.linspace(0.0, 0.2, 300)
    sh.clear_caches()
    up = sh.ShuffleAccountant(r, n, "replace").privacy_profile(eps)
    assert profile_stride.LAST["certified"] <= 240 and profile_stride.LAST["filled"] >= 60
    for e, u in zip(eps[1::20].tolist(), up[1::20].tolist()):
        (g, law), = laws_for(r, e, "replace")
        v, p = law.atoms()
        x = _blanket_three_atoms(float(g), v, p, n)
        assert u >= x
        if x >= 1e-12:
            assert u <= 1.01 * x, (e, u, x)


def test_run_weight_counts_a_strides_upper_only_value_as_its_eps_steps():
    """plain_warm.put: an upper-only value (a predicted gap) counts 1 run, ``run_weight(3)`` 3; the weight is restored
    on exit and a measured bracket resets the count (main's counts outside the rule)."""
    from sharpdp.shuffle.accountant import plain_warm

    key = ("fam",)
    with plain_warm.warm_sweep():
        plain_warm.put(key, 1.0, 0.01, 3.0, 3.0, 1e-3, 0.99e-3)
        plain_warm.put(key, 1.0, 0.01, 3.0, 3.0, 0.9e-3, predicted_gap=0.005)
        assert plain_warm.get(key).runs == 1
        with plain_warm.run_weight(3):
            plain_warm.put(key, 1.0, 0.01, 3.0, 3.0, 0.8e-3, predicted_gap=0.005)
        assert plain_warm.get(key).runs == 4
        plain_warm.put(key, 1.0, 0.01, 3.0, 3.0, 0.7e-3, predicted_gap=0.005)
        assert plain_warm.get(key).runs == 5
        plain_warm.put(key, 1.0, 0.01, 3.0, 3.0, 0.6e-3, 0.59e-3)
        assert plain_warm.get(key).runs == 0


def test_a_support_end_no_overflow_and_every_value_above_the_exact_profile(monkeypatch):
    """A profile linear in t down to 0 at a support end (0.5 - 0.4 e^eps, convex in t): the stride prediction at the
    huge rate before the end gives no stride (found with tests/test_shuffle_composition.py's k-RR rounds), every value
    at or above the exact one, 0 beyond the end where the ends are 0."""
    switch(monkeypatch, "PROFILE46_STRIDE", True)
    assert profile_stride.predicted_overshoot(1.05, 1.13, [1.06, 1.1], 141033.3) == math.inf
    exact = lambda e: np.maximum(0.0, 0.5 - 0.4 * np.exp(e))  # noqa: E731
    fake = _Fake(1.0, 0.0)
    fake.__class__ = type("_Edge", (_Fake,), {"__call__": lambda self, x: (np.zeros(len(x)), exact(np.asarray(x)))})
    eps = np.linspace(0.0, 0.4, 400)
    _, up = _run(fake, eps)
    assert np.all(up >= exact(eps))
    assert np.all(up[eps > 0.2232] == 0.0)
