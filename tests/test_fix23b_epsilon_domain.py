"""ExactShuffleAccountant and ShufflePLDAccountant at eps < 0, +-inf, NaN; get_epsilon's delta domain across the
public accountants (docs/composition.md §8, docs/sharp_krr.md §7).

References: the exact hockey-stick divergence of shuffled binary randomized response (replace-one), brute force
over every class of the other users' data and both orders, evaluated directly at e^eps < 1 (no swap identity);
dp_accounting's own PLDAccountant on the same PLD; the certified ComposedAccountant.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math
import re

import numpy as np
import pytest
from scipy.stats import binom

import sharpdp.shuffle as sh

E0, N = 1.0, 8


def _brute(eps: float) -> float:
    """max over classes j (others' ones) and both orders of H_{e^eps}(C | x1 = 1, C | x1 = 0), C the count of 1s."""
    p = math.e**E0 / (1 + math.e**E0)
    q, t, best = 1 - p, math.exp(eps), 0.0
    for j in range(N):
        u = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(N - j), N - 1 - j, q))
        a = np.concatenate([q * u, [0.0]]) + np.concatenate([[0.0], p * u])  # x1 = 1
        b = np.concatenate([p * u, [0.0]]) + np.concatenate([[0.0], q * u])  # x1' = 0
        best = max(best, float(np.maximum(a - t * b, 0).sum()), float(np.maximum(b - t * a, 0).sum()))
    return best


@pytest.fixture(scope="module")
def exact():
    return sh.ExactShuffleAccountant(sh.RandomizedResponse(k=2, epsilon0=E0), N)


def test_exact_accountant_brackets_the_brute_force_at_negative_epsilons(exact):
    grid = np.array([-3.0, -1.0, -0.6, -0.25, -0.05, -1e-9])
    lo, up = exact.get_delta_bounds(grid)
    for e, a, b in zip(grid, lo, up):
        ref = _brute(float(e))
        assert a <= ref * (1 + 1e-12) and b >= ref * (1 - 1e-12), (e, a, ref, b)  # both ends are bounds of delta
        assert b - a <= 1e-7 * ref, (e, a, b)  # and tight (the exact accountant's brackets, ~1e-8 relative)
    assert up.tolist() == np.atleast_1d(exact.privacy_profile(grid)).tolist()
    assert exact.get_delta(-0.25) == up[3]


def test_exact_accountant_infinities_mixed_signs_and_nan(exact):
    grid = np.array([[0.3, -math.inf], [math.inf, -0.3]])
    lo, up = exact.get_delta_bounds(grid)
    assert (lo[0, 1], up[0, 1]) == (1.0, 1.0) and (lo[1, 0], up[1, 0]) == (0.0, 0.0)  # H_0 = 1; eps0-LDP at +inf
    assert up[0, 0] == exact.get_delta(0.3) and up[1, 1] >= -math.expm1(-0.3)
    with pytest.raises(ValueError, match="NaN"):
        exact.get_delta([-0.1, math.nan])
    with pytest.raises(ValueError, match="epsilon"):
        exact.report(-0.1)  # the bracket and worst class at one eps >= 0, as ShuffleAccountant.report


@pytest.fixture(scope="module")
def pld_pair():
    pytest.importorskip("dp_accounting")
    import dp_accounting as dpa

    from sharpdp.interop.dp_accounting import ShufflePLDAccountant, ShuffledRoundEvent, to_pld

    rr = sh.RandomizedResponse(k=2, epsilon0=E0)
    with pytest.MonkeyPatch.context() as mp:
        session43_floats(mp)  # (**) session 44, lead: the switch-on (the pairs of session 43)
        ours = ShufflePLDAccountant(value_discretization_interval=1e-3).compose(ShuffledRoundEvent(rr, 300), 2)
        native = dpa.pld.PLDAccountant(value_discretization_interval=1e-3)
        native._pld = native._pld.compose(to_pld(sh.ShuffleAccountant(rr, 300, "zero_out"), 1e-3).self_compose(2))
        ours.get_delta(0.0)  # (its PLD built inside the pin)
    composed = sh.ComposedAccountant([(sh.ShuffleAccountant(rr, 300, "zero_out"), 2)])
    return ours, native, composed


def test_pld_adapter_answers_negative_epsilons_as_dp_accounting_does(monkeypatch, pld_pair):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    ours, native, composed = pld_pair
    for e in (-2.0, -0.3, -0.05, -1e-4):
        got, ref = ours.get_delta(e), native.get_delta(e)
        assert got == pytest.approx(ref, rel=1e-12, abs=1e-15), e  # dp_accounting's value (within [1 - e^eps, 1])
        assert -math.expm1(e) <= got <= 1.0
        assert got == pytest.approx(composed.get_delta(e), rel=1e-4), e  # near the certified value (its own lattice)
    assert ours.get_delta(-math.inf) == 1.0  # (dp_accounting's own sum gives 1 + 1e-15 there)
    assert ours.get_delta(-0.3) >= ours.get_delta(0.0) >= ours.get_delta(math.inf) >= 0.0
    with pytest.raises(ValueError, match="target_epsilon must not be NaN"):
        ours.get_delta(math.nan)


@pytest.mark.parametrize("bad, msg", [(0.0, "> 0.0"), (1.0, "< 1.0"), (1.5, "< 1.0"), (-0.1, "> 0.0"),
                                      (math.nan, "NaN"), (math.inf, "delta")])
def test_get_epsilon_refuses_the_same_deltas_everywhere(bad, msg, exact, pld_pair):
    """delta = 0 (no finite answer in general), delta >= 1 (every eps, no smallest one) and NaN: ValueError from every
    accountant, naming its argument (docs/composition.md §8)."""
    ours, _, composed = pld_pair
    rr = sh.RandomizedResponse(k=2, epsilon0=E0)
    for fn in (exact.get_epsilon, sh.ShuffleAccountant(rr, N, "replace").get_epsilon, composed.get_epsilon,
               ours.get_epsilon):
        with pytest.raises(ValueError, match=re.escape(msg)):
            fn(bad)

