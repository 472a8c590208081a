"""The engine's constant factors (docs/accountant_tail.md §60): bit-identical kernels.

- §60.1: the log pmf kept per thread across the log-mgf kernels (``logs``): values equal to a fresh computation,
  whatever the order of the arrays asked and after an array is altered in place;
- §60.2: the narrow lognormal cells' nodes and the log-mgf's terms computed in tight loops: the same doubles as a
  plain-Python replica of the one-loop-per-node operations (Python floats are IEEE doubles; ``math.exp`` and
  ``math.expm1`` are the same libm calls as the kernel's);
- the map's cells keep main's floats (session 40's, every session-41 switch at its session-40 value).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _main_floats34 import session40_floats

from sharpdp import _core
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant

A = _core.accountant


# ----------------------------------------------------------------------------- §60.1 the kept log pmf
def _lattice(rng: np.random.Generator, K: int) -> np.ndarray:
    g = rng.uniform(0.0, 1.0, K) * np.exp(-0.5 * np.linspace(-6.0, 6.0, K) ** 2)
    g[rng.integers(0, K, K // 10)] = 0.0  # (zeros: no log)
    return g / g.sum()


def test_log_mgf_memo_matches_fresh_values(rng):
    gs = [_lattice(rng, K) for K in (300, 301, 5000)]
    lams = (0.0, 0.3, -0.7, 2.5)
    first = {(i, lam): A.log_mgf(g.copy(), -150, 0.01, lam) for i, g in enumerate(gs) for lam in lams}
    # interleaved (three arrays against the two kept entries) and repeated: the same floats
    for _ in range(2):
        for lam in lams[::-1]:
            for i in (2, 0, 1, 0, 2):
                assert A.log_mgf(gs[i], -150, 0.01, lam) == first[(i, lam)]
    # the same bits at another k0 or h are another law
    assert A.log_mgf(gs[0], -149, 0.01, 0.3) != first[(0, 0.3)]
    assert A.log_mgf(gs[0], -150, 0.02, 0.3) != first[(0, 0.3)]
    # an array altered in place after its log pmf was kept gives the altered law's values
    g = gs[1]
    A.log_mgf(g, -150, 0.01, 0.3)
    g[7] = g[7] * 1.5 + 1e-9
    fresh = A.log_mgf(g.copy(), -150, 0.01, 0.3)
    A.log_mgf(gs[2], -150, 0.01, 0.3)  # (another array in between)
    assert A.log_mgf(g, -150, 0.01, 0.3) == fresh != first[(1, 0.3)]
    # the edge and the tilt through the same kept entries: equal to their first values
    e1 = A.chernoff_edge(gs[2], -150, 0.01, 1e4, -30.0, 1, 1.0)
    t1 = A.tilt(gs[2], 1e-12 * gs[2], -150, 0.01, 0.2)
    A.log_mgf(gs[0], -150, 0.01, 0.0)
    assert A.chernoff_edge(gs[2], -150, 0.01, 1e4, -30.0, 1, 1.0) == e1
    t2 = A.tilt(gs[2], 1e-12 * gs[2], -150, 0.01, 0.2)
    assert np.array_equal(t1[0], t2[0]) and t1[1:] == t2[1:]


def _log_mgf_replica(g: np.ndarray, k0: int, h: float, lam: float) -> tuple[float, float, float]:
    """kernels::log_mgf_logs's L, mean and variance by its operations, one term at a time (plain Python floats)."""
    lg = [math.log(v) if v > 0 else -math.inf for v in g.tolist()]
    mx = -math.inf
    for k, lv in enumerate(lg):
        mx = max(mx, lv + lam * float(k0 + k) * h)
    s0 = s1 = s2 = 0.0
    for k, lv in enumerate(lg):
        if math.isinf(lv):
            continue
        x = float(k0 + k) * h
        e = math.exp(lv + lam * x - mx)
        s0 += e
        s1 += e * x
        s2 += e * x * x
    m1 = s1 / s0
    return mx + math.log(s0), m1, max(s2 / s0 - m1 * m1, 0.0)


@pytest.mark.parametrize("K", [5, 255, 256, 257, 1000])
def test_log_mgf_chunks_same_doubles(rng, K):
    g = _lattice(rng, K)
    for lam in (0.0, 1.7, -3.1):
        assert A.log_mgf(g, -K // 2, 0.05, lam) == _log_mgf_replica(g, -K // 2, 0.05, lam)


# ----------------------------------------------------------------------------- §60.2 narrow lognormal cells
_GLX = [float.fromhex(s) for s in ("0x1.454e34f5339a0p-6", "0x1.a06d536d82f88p-4", "0x1.e5dad4f9af698p-3",
                                   "0x1.a214dac30e32fp-2", "0x1.2ef5929e78e68p-1", "0x1.86894ac19425ap-1",
                                   "0x1.cbf255924fa0fp-1", "0x1.f5d58e5856633p-1")]
_GLW = [float.fromhex(s) for s in ("0x1.9ea1d04ca03aep-5", "0x1.c76fb531d2b94p-4", "0x1.413c50a25560ep-3",
                                   "0x1.736360b19933dp-3", "0x1.736360b19933dp-3", "0x1.413c50a25560ep-3",
                                   "0x1.c76fb531d2b94p-4", "0x1.9ea1d04ca03aep-5")]


def _narrow_replica(a, G, r, weight, xj, xn, h):
    """(m, w) of a narrow cell of the one-term law a + G e^{rV - r^2/2} (v_lo = -inf, v_hi = inf) by the kernel's
    operations, one node at a time; None where the cell is not narrow."""
    vs = A.lognormal_v1(a, G, 0.0, r, xj)
    hi = A.lognormal_v1(a, G, 0.0, r, xn)
    if not (math.isfinite(vs) and hi > vs and (hi - vs) * (abs(vs) + r + 1.0) <= 0.25):
        return None
    a0, span = 0.0, hi - vs
    P = G * math.exp(r * vs - 0.5 * r * r)
    sb = sg = 0.0
    for g in range(8):
        U = a0 + span * _GLX[g]
        base = math.exp(-vs * U - 0.5 * U * U)
        grow = P * math.expm1(r * U)
        if g == 0:
            sb, sg = base * _GLW[0], (grow * base) * _GLW[0]
        else:
            sb += base * _GLW[g]
            sg += (grow * base) * _GLW[g]
    phi = math.exp(-0.5 * vs * vs) / math.sqrt(2.0 * 3.141592653589793)
    mm = phi * span * sb
    ww = phi * span * sg + ((a - xj) + (P - 0.0)) * mm
    q = max(ww, 0.0) / h
    return weight * mm, weight * min(q, mm)


@pytest.mark.parametrize("a, G, r, weight, x0, h", [(-1.105170918075645, 0.04550026389635839, 4.0, 21.97789450799284,
                                                     -1.1, 1e-3),
                                                    (-1.0100501670841575, 0.31731050786291415, 2.0, 3.15, -1.0, 0.01),
                                                    (0.2, 1.3, 0.8, 1.0, 0.25, 0.05)])
def test_narrow_cells_same_doubles(a, G, r, weight, x0, h):
    K = 400
    m, w, _, _ = A.lognormal_cells(a, G, 0.0, r, -math.inf, math.inf, weight, x0, h, K)
    seen = 0
    for k in range(0, K, 7):
        xj = x0 + h * float(k)  # (the kernel's edges x0 + h k)
        ref = _narrow_replica(a, G, r, weight, xj, x0 + h * float(k + 1), h)
        if ref is None:
            continue
        seen += 1
        assert (float(m[k]), float(w[k])) == ref
    assert seen >= 20


# ----------------------------------------------------------------------------- the map's cells keep their floats
@pytest.mark.parametrize("rz, n, eps, lo, up", [
    (("bmg", 0.394, 1.15), 10**5, 0.01, "0x1.0e754765a9ae3p-20", "0x1.0eaf3fc011af0p-20"),
    (("gauss", 1.0), 10**6, 0.01, "0x1.52783dde3aea8p-12", "0x1.54fb0b001e802p-12"),
])
def test_map_cells_keep_main_floats(monkeypatch, rz, n, eps, lo, up):
    session40_floats(monkeypatch)
    r = BlanketMixedGaussian(rz[1], rz[2], 1) if rz[0] == "bmg" else GaussianRandomizer(rz[1], 1)
    b = ShuffleAccountant(r, n, "zero_out").get_delta_bounds(eps)
    assert (float(b[0]).hex(), float(b[1]).hex()) == (lo, up)
