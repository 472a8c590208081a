"""The Chernoff bounds' lam search (accountant/chernoff.py, docs/accountant_tail.md §13): every value is a valid
bound (brute-force n-fold convolution of small lattice laws) and is the minimum over lam (a dense grid of the
certified function, and the golden-section fallback) within 1e-6 in log."""

import math

import numpy as np
import pytest

from sharpdp.shuffle.accountant.chernoff import Chernoff


def _law(seed: int):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(4, 40))
    g = rng.random(K) ** 4
    g /= g.sum()
    return g, -int(rng.integers(0, K)), float(2.0 ** rng.integers(-3, 2))


def _fold(g, nn):
    out = np.array([1.0])
    for _ in range(nn):
        out = np.convolve(out, g)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("nn", [1, 3, 8])
def test_bounds_hold_and_are_minimal(seed, nn):
    g, k0, h = _law(seed)
    ch = Chernoff(g, np.zeros_like(g), k0, h, nn)
    s = _fold(g, nn)
    x = (nn * k0 + np.arange(s.size)) * h
    mean, sd = float(np.sum(s * x)), math.sqrt(float(np.sum(s * x * x)) - float(np.sum(s * x)) ** 2)
    lams = np.exp(np.linspace(math.log(ch.scale) - 25.0, math.log(ch.scale) + 12.0, 2001))
    for b in (mean - 2.5 * sd, mean - 0.3 * sd, mean + 0.7 * sd, mean + 2.5 * sd):
        pa, pb = float(np.sum(s[x >= b])), float(np.sum(s[x <= b]))
        ex = float(np.sum(s * np.maximum(x - b, 0.0)))
        la, lb, le = ch.log_p_above(b), ch.log_p_below(b), ch.log_excess(b)
        assert pa <= math.exp(la) * (1 + 1e-12) and pb <= math.exp(lb) * (1 + 1e-12)
        assert ex <= math.exp(le) * (1 + 1e-12)
        # the minimum over lam: a dense grid of the same certified function, and the golden section
        grid_a = min(min(-lam * b + nn * ch.log_mgf(lam) for lam in lams), 0.0)
        grid_b = min(min(lam * b + nn * ch.log_mgf(-lam) for lam in lams), 0.0)
        grid_e = min(-lam * b + nn * ch.log_mgf(lam) - 1.0 - math.log(lam) for lam in lams)
        gold_e = ch._min(lambda lam: -lam * b + nn * ch.log_mgf(lam) - 1.0 - math.log(lam), "e")
        assert la <= grid_a + 1e-6 and lb <= grid_b + 1e-6 and le <= grid_e + 1e-6 and le <= gold_e + 1e-6
