"""Review rev46 (session 46): attack on body46's docs/accountant_tail.md §70.1-§70.2 (``freq_cut.cut``: Lemma 70.1's chain
certifying n log|z_k| <= -760 for every lattice frequency K < k <= N / 2 of a non-negative pmf's DFT; used behind
``limits.BODY46_PRUNED_FORWARD`` to skip the forward FFT). Skipped while the module is absent (branch body46).

body46's own tests draw one family of pmfs (a rough Gaussian body plus an atom at its centre). Here adversarial ones:
two far clusters (|z| comes back near 1 at the frequency of their distance), mass mostly on a sublattice of step 2 or
3 with a little off it (|z| near m at N / 2 or N / 3), a single heavy atom with a thin scatter, mass slightly above 1 (an
upper pmf), odd N, the anchor (the largest node) at the circle's wrap, and n from 2e3 to 1e9. Reference: numpy's DFT
(absolute error below 1e-12 at these sizes): every k > K must have |z_k| <= e^{-760 / n} + 1e-12 (else the cut is
false: the pruned spectrum would drop a frequency that matters).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

freq_cut = pytest.importorskip("sharpdp.shuffle.accountant.freq_cut")


def _pmf(kind: str, N: int, seed: int, off: float, mass: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.zeros(N)
    if kind == "clusters":
        a, b = N // 7, N // 7 + rng.integers(N // 4, N // 2)
        for c in (a, b):
            y[c:c + 5] = rng.uniform(0.5, 1.0, 5)
    elif kind in ("sub2", "sub3"):
        step = 2 if kind == "sub2" else 3
        idx = np.arange(20, N // 2, step)
        y[idx] = rng.uniform(0.2, 1.0, idx.size)
        y[idx] /= y[idx].sum()
        odd = rng.integers(20, N // 2, 3)
        y[odd] += off
    elif kind == "atom":
        y[N // 3] = 1.0
        sc = rng.integers(0, N, 6)
        y[sc] += off
    else:  # "wrap": the largest node at 0, its neighbours across the wrap
        y[0] = 1.0
        y[[N - 1, N - 3, 1, 4]] = rng.uniform(0.05, 0.2, 4)
        y[N // 2 - 3:N // 2 + 3] = off
    y = y / y.sum() * mass
    return y


@settings(max_examples=200, deadline=None, derandomize=True)
@given(kind=st.sampled_from(["clusters", "sub2", "sub3", "atom", "wrap"]), N=st.sampled_from([64, 255, 1024, 4097]),
       seed=st.integers(0, 10**6), off=st.sampled_from([1e-9, 1e-6, 1e-3, 0.05]),
       mass=st.sampled_from([1.0, 1.0 + 1e-9, 1.0 + 1e-6, 0.999]), logn=st.floats(3.3, 9.0),
       ratio=st.sampled_from([1.01, 1.1, 2.0]))
def test_cut_certifies_every_frequency_above(kind, N, seed, off, mass, logn, ratio):
    y = _pmf(kind, N, seed, off, mass)
    n = float(round(10.0**logn))
    K = freq_cut.cut(y, n, ratio)
    if K is None:
        return
    az = np.abs(np.fft.rfft(y))
    lim = math.exp(freq_cut.LOG_CUT / n) + 1e-12
    bad = np.flatnonzero(az[K + 1:] > lim)
    assert bad.size == 0, (kind, N, n, K, int(bad[0]) + K + 1, float(az[K + 1 + bad[0]]), lim)


def test_cut_exists_and_is_checked():
    """(The property is not vacuous: a cut is found on these families.)"""
    found = 0
    for kind in ("clusters", "sub2", "atom", "wrap"):
        y = _pmf(kind, 1024, 7, 0.05, 1.0)
        K = freq_cut.cut(y, 1e8)
        found += K is not None and K < 512
    assert found >= 2
