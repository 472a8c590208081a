"""The closed form's lower value with the curvature of phi_c (docs/accountant_tail.md §19): the density's lower
values against the formula, the lower value of E phi(X_m) against an exact convolution (valid, and tighter than
Jensen's), and the heavy round's closed-form bracket (upper value unchanged, lower value raised, inside the FFT
treatment's)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws.lognormal import LognormalLaw

HEAVY = (0.04089409561900239, 0.5960134902126553), 10**5  # bench/bench_composition.py "heavy"


def _dens(s, a, G, r):
    v = (math.log((s - a) / G) + 0.5 * r * r) / r
    return math.exp(-0.5 * v * v) / math.sqrt(2 * math.pi) / (r * (s - a))


def test_density_lower_values_against_the_formula():
    law = LognormalLaw(-5.0, 0.9, 1.7)
    a, G, r = law.one_term()
    s = np.array([1.0, 30.0, 400.0, 5e4])
    lo = law.density_lo(s)
    for x, d in zip(s, lo):
        assert _dens(x, a, G, r) * (1 - 1e-9) <= d <= _dens(x, a, G, r)  # a lower value, tight
        assert d <= law.density_up([x])[0]
    # v(s) < 0 (below the density's monotone part) or outside the range: 0, still a lower value
    assert np.all(law.density_lo([a - 1.0, a + 1e-3, math.inf]) == 0.0)
    assert np.all(LognormalLaw(-5.0, -0.9, 1.7).density_lo([-10.0, -6.0]) == 0.0)  # another law: no claim


def _exact_phi(law, T0, m, h):
    """E phi(X_m), X_m the sum of m copies of min(L, T0), by an FFT convolution of the law of min(L, T0) on cells of
    width h (cell masses from ndtr; each cell at its midpoint); written independently of the package."""
    a, G, r = law.one_term()
    edges = a + h * np.arange(0, int(math.ceil((T0 - a) / h)) + 1)
    edges[-1] = T0
    F = np.where(edges > a, ndtr((np.log(np.maximum(edges - a, 1e-300) / G) + 0.5 * r * r) / r), 0.0)
    base = np.append(np.diff(F), 0.0)
    base[-1] += 1.0 - F[-1]  # the atom at T0
    size = 1 << int(math.ceil(math.log2(m * base.size)))
    pm = np.fft.irfft(np.fft.rfft(base, size) ** m, size)[: m * (base.size - 1) + 1]
    x = m * (a + 0.5 * h) + h * np.arange(pm.size)
    k = np.maximum(T0, -x) - a
    v = (np.log(k / G) + 0.5 * r * r) / r
    return float(np.dot(pm, G * ndtr(r - v) - k * ndtr(-v)))


def test_lower_value_of_e_phi_against_an_exact_convolution(monkeypatch):
    gamma, law = bmg_laws(0.3, 0.7, 1.5, "zero_out")[0]
    T0, m = 40.0, np.array([150.0])
    mu_lo, mu_hi, sig2, b = concentrated._moments(law, T0)
    mh = concentrated._up(m * mu_hi)
    Q = concentrated._up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)
    lo = float(concentrated._lower_m(law, T0, m, mu_lo, mu_hi, mh, Q, b)[0])
    exact = _exact_phi(law, T0, 150, 8e-3)
    assert abs(_exact_phi(law, T0, 150, 1.6e-2) / exact - 1) < 2e-5  # (the reference's own discretisation)
    monkeypatch.setattr(concentrated, "_curvature_lo", lambda law, T0, m, *a: np.zeros(m.shape))
    jensen = float(concentrated._lower_m(law, T0, m, mu_lo, mu_hi, mh, Q, b)[0])
    assert jensen < lo <= exact * (1 - 1e-4)  # valid, with room for the reference's error
    assert exact - lo <= 0.8 * (exact - jensen)  # and at least a fifth of Jensen's gap closed


def test_heavy_round_bracket_upper_unchanged_lower_raised(monkeypatch):
    gamma, law = bmg_laws(*HEAVY[0], 2.0, "zero_out")[0]
    gamma = float(gamma)
    concentrated._MEMO.clear()
    old = concentrated.certify(law, gamma, HEAVY[1], 1e-2, far_tail.choose_T0)  # (accepted without the term)
    new = concentrated.with_curvature(old, law, gamma, HEAVY[1])
    assert concentrated.certify(law, gamma, HEAVY[1], 1e-2, far_tail.choose_T0) is new  # (the memo keeps it)
    concentrated._MEMO.clear()
    assert old is not None and not old.curved and new.curved
    assert new.upper == old.upper and new.T0 == old.T0 and new.lower > old.lower * (1 + 3e-4)
    monkeypatch.setattr(concentrated, "_curvature_lo", lambda law, T0, m, *a: np.zeros(m.shape))
    assert concentrated.with_curvature(old, law, gamma, HEAVY[1]).lower == old.lower  # (old is Jensen's alone)
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)  # the FFT treatment alone
    fft = far_tail.certify_bigjump(law, gamma, HEAVY[1], 1e-2)
    assert fft.N > 0 and new.lower <= fft.upper and new.lower >= fft.lower * (1 - 1e-3)
