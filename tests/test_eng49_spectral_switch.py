"""Session 49's switch ``limits.ENG49_SPECTRAL_SUM`` (docs/composition.md §2.34.3): the engine's window sum by Parseval
(docs/accountant_tail.md §65.1) from FFT length ``ENG49_SPECTRAL_MIN_N`` on. References: the rule off (the inverse FFT
and the node loop) on the light rounds' profiles, where the rule ran (a spy); the helpers of spectral_sum.py against
Python's integers and a loop of libm calls (the same integers and doubles)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from _main_floats34 import switch
from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import lattice, spectral_sum


def test_mul_mod_is_python_integers():
    rng = np.random.default_rng(3)
    for N in (16, 5000, 82_944, 2**23):
        ks = np.sort(rng.integers(0, N // 8 + 1, size=50)).astype(np.int64)
        for c in (0, 7, -12_345, 2**40 + 3, -(2**61), 2**70 + 1):
            want = [(int(k) * c) % N for k in ks.tolist()]
            assert spectral_sum._mul_mod(ks, c, N).tolist() == want


def test_libm_is_the_loop():
    x = np.random.default_rng(4).uniform(-4.0, 4.0, size=333)
    for f in (math.sin, math.cos):
        got = spectral_sum._libm(f, x)
        assert [v.hex() for v in got.tolist()] == [f(v).hex() for v in x.tolist()]


@pytest.mark.parametrize("eps", [0.015, 0.03, 0.06])
def test_light_round_on_meets_off(monkeypatch, eps):
    """10-RR (eps0 = 4), replace, n = 1e6: the certified upper value with the rule on is within 1e-9 relative of the
    rule off (both certified; they differ by the two sums' rounding and their bounds), and the rule ran."""
    ran = []
    orig = lattice.window_sum

    def spy(*a, **k):
        r = orig(*a, **k)
        ran.append(r is not None)
        return r

    monkeypatch.setattr(lattice, "window_sum", spy)
    rnd = RandomizedResponse(10, 4.0)
    switch(monkeypatch, "ENG49_SPECTRAL_SUM", False)
    clear_caches()
    off = ShuffleAccountant(rnd, 1_000_000, "replace").get_delta(eps)
    assert not ran
    switch(monkeypatch, "ENG49_SPECTRAL_SUM", True)
    clear_caches()
    on = ShuffleAccountant(rnd, 1_000_000, "replace").get_delta(eps)
    assert any(ran)
    assert on > 0 and off > 0
    assert abs(on - off) <= 1e-9 * off
