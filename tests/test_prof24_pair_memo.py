"""The pair term's memo per law (python/sharpdp/shuffle/accountant/jump.py, pair_integral_up): the kept value
at a clamp T0 is the float a fresh computation gives (a law object without the memo), whatever the order of the
requests, and it still bounds I2(T0) = int_0^inf P(L > T0 + t)^2 dt from above (scipy quadrature)."""

import math

import numpy as np
import pytest
from scipy import integrate

from sharpdp.shuffle.accountant.far_tail import choose_T0
from sharpdp.shuffle.accountant.jump import pair_integral_up
from sharpdp.shuffle.laws.lognormal import LognormalLaw

PARAMS = [(-5.0, 0.9, 1.7), (0.4, 0.9, 1.3, None, 2.0, -0.7), (-0.2, 1.5, 2.5)]


def _law(p):
    a, b, r = p[:3]
    kw = {} if len(p) == 3 else dict(weight=p[4], b_minus=p[5])
    return LognormalLaw(a, b, r, **kw)


@pytest.mark.parametrize("p", PARAMS)
def test_memo_returns_the_fresh_float_in_any_order(p):
    law = _law(p)
    T0s = [0.5, 3.0, 0.5, 17.25, 3.0, 1.0, 17.25, 0.5]
    got = [pair_integral_up(law, T) for T in T0s]
    assert len(law._pair_memo) == 4  # the repeated clamps were answered from the memo
    for T, v in zip(T0s, got):
        assert v == pair_integral_up(_law(p), T)  # a fresh law: no memo
    assert got[0] > got[1] > got[3] > 0.0  # (I2 decreases in T0: distinct values, so a wrong key shows)


def test_memo_bounds_the_integral_from_above():
    law = _law(PARAMS[0])
    for T in (2.0, 9.0, 40.0):
        v = pair_integral_up(law, T)
        v2 = pair_integral_up(law, T)
        ref, err = integrate.quad(lambda t: law.prob_above(T + t)[0] ** 2, 0.0, math.inf, limit=400)
        assert v2 == v
        assert ref - err <= v <= 1.05 * (ref + err)


def test_clamp_search_unchanged_by_the_memo():
    # the closed form's and the FFT treatment's clamp searches on one law share the memo: each T0 is the one a
    # fresh law gives (the same floats)
    law = _law(PARAMS[0])
    n, gamma = 10**5, 0.3
    for target in (1e-6, 1e-9, 1e-6, 1e-12):
        assert choose_T0(law, gamma, n, target) == choose_T0(_law(PARAMS[0]), gamma, n, target)
    assert 0 < len(law._pair_memo) <= 256


def slotted_view(law, *methods):
    """``law`` seen through an object without attribute storage (``__slots__``: no per-object memo can be kept on
    it), forwarding only ``methods``; shared with tests/test_prof25_tail_memo.py."""
    def forward(name):
        return lambda self, *args: getattr(self._law, name)(*args)

    cls = type("Frozen", (), {"__slots__": ("_law",), **{m: forward(m) for m in methods}})
    view = cls()
    view._law = law
    return view


def test_law_without_attribute_storage_gets_the_value():
    law = _law(PARAMS[1])
    f = slotted_view(_law(PARAMS[1]), "prob_above_up", "stop_loss")
    assert pair_integral_up(f, 2.5) == pair_integral_up(law, 2.5) == pair_integral_up(f, 2.5)
    assert np.isfinite(pair_integral_up(f, 2.5))
