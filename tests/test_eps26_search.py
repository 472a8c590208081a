"""get_epsilon's phase 1: the first straddle where the first model point's value is above delta (docs/accountant.md
§8.7, ``search._STRADDLE_UP``). References: the values phase 1 itself certified (the second point must lie on the
other side of delta from the first), a plain bisection on fresh ``get_delta`` values at a tenth of the search's
tolerance, and a hypothesis property (a fresh accountant certifies delta at the answer, and the answer is within xtol
of the bisection's crossing)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_eps24_search import _bisect, _fresh_delta

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.round_cache import clear_caches

XTOL = 1e-3


def _phase1_values(monkeypatch, make, n: int, delta: float) -> tuple[float, list[float]]:
    """A fresh get_epsilon (default xtol) and the values of phase 1's model points in order (its first ``_root``)."""
    seen: list[list[float]] = []
    orig = S._root

    def traced(fun, *a, **k):
        vals: list[float] = []
        seen.append(vals)
        return orig(lambda x: vals.append(float(fun(x))) or vals[-1], *a, **k)

    with monkeypatch.context() as m:
        m.setattr(S, "_root", traced)
        clear_caches()
        e = float(ShuffleAccountant(make(), n, "zero_out").get_epsilon(delta))
    return e, seen[0]


# cells of bench/geteps_ratio.py where the asymptotic guess's value was 50-1500x delta and the straddle point at 0.3
# stayed above delta (calibrate_bmg's picks at eps = 4, 1; GaussianRandomizer sigma0 = 2 at n = 100); where the
# model's slope is more than 3x too steep (calibrate_bmg(1e4, 1), sigma0 = 1 at n = 1e4) 2.0 does not straddle either
ABOVE_CELLS = [
    (lambda: BlanketMixedGaussian(0.05223839707297821, 0.6537030804493348, 1), 1000),  # (calibrate_bmg(1e3, 4))
    (lambda: BlanketMixedGaussian(0.032933209021645184, 0.5492635146682706, 1), 10**4),  # (calibrate_bmg(1e4, 4))
    (lambda: BlanketMixedGaussian(0.11276520663139569, 0.9180954510094728, 1), 1000),  # (calibrate_bmg(1e3, 1))
    (lambda: BlanketMixedGaussian(0.02236494183043625, 0.4742232025365367, 1), 10**5),  # (calibrate_bmg(1e5, 4))
    (lambda: GaussianRandomizer(2.0, 1), 100),
]


@pytest.mark.parametrize("make, n", ABOVE_CELLS)
def test_first_pair_straddles_when_the_first_value_is_above(monkeypatch, make, n):
    """The first model point's value is above delta and the second's at or below it (the pair straddles the root);
    the answer is certified by a fresh accountant and within xtol of a fresh bisection's crossing."""
    delta = 1e-6
    e, vals = _phase1_values(monkeypatch, make, n, delta)
    assert len(vals) >= 2 and vals[0] > 10 * delta
    assert vals[1] <= delta
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["gauss", "bmg"]), st.sampled_from([100, 1000, 10**4]),
       st.floats(min_value=0.6, max_value=1.4), st.floats(min_value=-9.0, max_value=-4.0))
def test_random_targets_certified_and_within_xtol(monkeypatch, kind, n, sigma0, log10_delta):
    """Heavy randomizers (GaussianRandomizer, BMG with gamma = 0.1), where the first value is often far above delta:
    the answer is certified by a fresh accountant and within xtol of a fresh bisection's crossing (at xtol / 10)."""
    delta = 10.0**log10_delta
    make = (lambda: GaussianRandomizer(sigma0, 1)) if kind == "gauss" else \
        (lambda: BlanketMixedGaussian(0.1, sigma0, 1))
    e, _ = _phase1_values(monkeypatch, make, n, delta)
    assert 0.0 < e < 700.0
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1 - 3 * XTOL), e * (1 + 3 * XTOL), XTOL / 10)
    assert lo <= e <= hi * (1 + XTOL)
