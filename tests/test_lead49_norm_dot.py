"""docs/accountant_tail.md §74, Lemma 74.1: the several-part spectrum's ``norm_Q`` (``fft._half_norm_up``) bounds the
full Hermitian spectrum's l2 norm whatever numpy's dot products round, also where sqrt 2's margin is 0 (half spectra
whose end entries are 0). Reference: the exact squared norm in rationals (every double squared exactly)."""
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle.accountant import fft, limits


def _exact_full_sq(Q) -> Fraction:
    """|Q_0|^2 + 2 sum_{0 < k < m - 1} |Q_k|^2 + |Q_{m-1}|^2 (even N = 2 (m - 1)), exactly."""
    sq = [Fraction(float(x)) ** 2 + Fraction(float(y)) ** 2 for x, y in zip(Q.real, Q.imag)]
    return sq[0] + 2 * sum(sq[1:-1], Fraction(0)) + sq[-1]


def _flat(seed: int, m: int, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    Q = scale * rng.uniform(0.5, 1.0, m) * np.exp(1j * rng.uniform(0.0, 6.3, m))
    Q[0] = Q[-1] = 0.0  # the margin of sqrt 2 is 0
    return Q


def test_sqrt2_alone_falls_below_the_exact_norm(monkeypatch):
    """Session 48's bound (sqrt 2 alone) is below the exact norm on some flat draws: the lemma's factor is needed."""
    monkeypatch.setattr(limits, "LEAD49_NORM_DOT", False)
    below = sum(Fraction(fft._half_norm_up(Q, 2 * (Q.size - 1))) ** 2 < _exact_full_sq(Q)
                for Q in (_flat(seed, 1500) for seed in range(40)))
    assert below >= 3


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 4000),
       scale=st.sampled_from([1.0, 1e-3, 1e-150, 1e-160, 1e-170, 1e150]))
def test_rule_bounds_the_exact_norm(seed, m, scale):
    """With the rule (on by default), ``norm_Q`` >= the exact full norm: flat spectra of any size, also tiny ones whose
    squares underflow (the absolute term) and large ones."""
    assert limits.LEAD49_NORM_DOT
    Q = _flat(seed, m, scale)
    bound = fft._half_norm_up(Q, 2 * (m - 1))
    assert Fraction(bound) ** 2 >= _exact_full_sq(Q)
    assert bound <= np.sqrt(2.0) * np.linalg.norm(Q) * (1 + 1e-6) + 1e-150  # and not loose
