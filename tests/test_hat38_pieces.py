"""Session 38, hat38: §45.2's coupling cost of a spread measure on pieces (docs/accountant_tail.md §53).

References: (1) Lemma 45.1's exact excess E w(A^) - E w(A') of small sums of atom laws, enumerated exactly
(tests/test_review_rev35_tail.py's ``_atom_sum``), for the two convex weights §53.1 splits (phi_c of a tail law above
T0 with its kink at -T0, and the body's E(x + clamp(G))_+), against the pieces' cost; (2) brute-force suprema of
window sums over a range; (3) exact piece masses of an atom law; (4) main's rel_tol-1e-3 brackets (certified by
another route: the engine's centroid passes), hard-coded from /work/venv/main (6d5c8782) or from earlier sessions'
tests, which the moved brackets must overlap; (5) the switch off gives main's floats bit for bit.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest

from _main_floats34 import switch
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import hat_lower, limits
from sharpdp.shuffle.laws import FiniteLaw
from test_review_rev35_tail import _atom_sum


def _tail_law(h: float) -> FiniteLaw:
    """A law with a bulk near 0 and a long upper tail of atoms on multiples of h / 8."""
    v = np.array([-1.5, -0.5, 0.25, 1.0, 2.5, 4.0, 6.5, 9.0, 14.5, 23.0]) * h
    p = np.array([0.3, 0.25, 0.15, 0.1, 0.07, 0.05, 0.035, 0.025, 0.015, 0.01])
    return FiniteLaw(v, p / p.sum())


@pytest.mark.parametrize("s0,s_end,z_lo,z_hi,scale,mass", [
    (1.0, 23.0, -math.inf, -1.0, 1.0, 0.4), (0.5, 9.0, -9.0, 1.5, 0.3, 0.3), (2.0, 2.2, -math.inf, -2.0, 1.0, 0.2)])
def test_pieces_partition_and_bound_each_piece_mass(s0, s_end, z_lo, z_hi, scale, mass):
    """The pieces tile [z_lo, z_hi] downwards from z_hi, and each mass is >= the exact mu-mass of its half-open piece for
    the measure mu((-inf, -s]) = scale P(L >= s) (L an atom law: exact sums)."""
    law = _tail_law(1.0)
    v, p = law.values, law.probs
    mass = max(mass, scale * float(p[v >= s0].sum()))  # (mu's total: at least its part at or below -s0)
    parts = hat_lower.reflected_pieces(law, mass, s0, s_end, z_lo, z_hi, scale)
    assert parts[0][2] == z_hi and parts[-1][1] == z_lo
    for (_, lo_a, _), (_, _, hi_b) in zip(parts, parts[1:]):
        assert lo_a == hi_b  # contiguous
    cut = [-float(hi) for _, _, hi in parts[1:]]  # s_1 .. s_J
    assert cut[-1] == pytest.approx(s_end, rel=1e-15) and all(a < b for a, b in zip(cut, cut[1:]))
    at_least = [scale * float(p[v >= s].sum()) for s in cut]
    exact = [mass - at_least[0]] + [a - b for a, b in zip(at_least, at_least[1:])] + [at_least[-1]]
    for (m, _, _), e in zip(parts, exact):
        assert m >= e - 1e-15 and m <= mass * (1 + 1e-9)


@pytest.mark.parametrize("nn,gamma,h,T0", [(3, 0.8, 1.0, 3.0), (4, 0.5, 0.5, 2.0), (5, 0.3, 1.0, 1.0), (2, 1.0, 2.0, 4.0)])
def test_phi_c_pieces_bound_the_exact_excess(nn, gamma, h, T0):
    """phi_c(a) = sum_{l > T0} p_l (a + l)_+ + (c - P(L > T0)) (a + T0)_+ (convex; mu = the law of L above T0 reflected,
    and the kink): Lemma 45.1's exact excess of the hat sum (users of the atom law, active w.p. gamma) stays below the
    pieces' cost, which is at most the one-part cost of §45.2."""
    law = _tail_law(h)
    v, p = law.values, law.probs
    xa, a, xq, q = _atom_sum(nn, gamma, v, p, h)
    c = float(p[v > T0].sum()) * 1.01  # (an upper value of P(L > T0), as in Lemma 4)
    big = v > T0

    def w(x):
        return (np.maximum(x[:, None] + v[big][None, :], 0.0) @ p[big]) + (c - p[big].sum()) * np.maximum(x + T0, 0.0)

    excess = float(np.sum(q * w(xq)) - np.sum(a * w(xa)))
    s_end = max(-float(xq[0]), 2.0 * T0)
    main = hat_lower.coupling_cost(xq, q, 0.0, 0.0, h, nn, gamma, [(c, -math.inf, -T0)])
    one = hat_lower.coupling_cost(xq, q, 0.0, 0.0, h, nn, gamma, [(c, -math.inf, -T0)], sums=True)
    cost = hat_lower.spread_cost(xq, q, 0.0, 0.0, h, nn, gamma, law, c, T0, s_end, -math.inf, -T0, pieces=True)
    pieces = hat_lower.coupling_cost(xq, q, 0.0, 0.0, h, nn, gamma,
                                     hat_lower.reflected_pieces(law, c, T0, s_end, -math.inf, -T0), sums=True)
    assert -1e-12 <= excess <= cost * (1 + 1e-9) + 1e-14, (excess, cost)
    assert cost == min(one, pieces) and one <= main and pieces < main
    assert hat_lower.spread_cost(xq, q, 0.0, 0.0, h, nn, gamma, law, c, T0, s_end, -math.inf, -T0) == main


@pytest.mark.parametrize("nn,gamma,h,T0", [(3, 0.8, 1.0, 9.0), (4, 0.5, 0.5, 4.0), (6, 0.4, 1.0, 23.0)])
def test_body_pieces_bound_the_exact_excess(nn, gamma, h, T0):
    """f(x) = E(x + G')_+, G' = 0 w.p. 1 - gamma, else clamp(L, ., T0) (mu = (1 - gamma) at 0 and gamma times the law of
    -clamp(L) on pieces from 2h to T0, its clamp atom at -T0 the last): the exact excess stays below the cost."""
    law = _tail_law(h)
    v, p = law.values, law.probs
    vc = np.minimum(v, T0)
    xa, a, xq, q = _atom_sum(nn, gamma, vc, p, h)

    def f(x):
        return (1 - gamma) * np.maximum(x, 0.0) + gamma * (np.maximum(x[:, None] + vc[None, :], 0.0) @ p)

    excess = float(np.sum(q * f(xq)) - np.sum(a * f(xa)))
    B = float(-vc.min())
    cost = (hat_lower.coupling_cost(xq, q, 0.0, 0.0, h, nn, gamma, [(1.0 - gamma, 0.0, 0.0)])
            + hat_lower.spread_cost(xq, q, 0.0, 0.0, h, nn, gamma, law, gamma, 2.0 * h, T0, -T0, B, gamma, pieces=True))
    assert -1e-12 <= excess <= cost * (1 + 1e-9) + 1e-14, (excess, cost)


@pytest.mark.parametrize("seed", range(4))
def test_range_sums_bound_every_window_of_the_range(seed):
    """_range_sums(R) >= the largest sum of q over the nodes within R of any z in [z_lo, z_hi] (a fine scan of z)."""
    rng = np.random.default_rng(seed)
    h = 0.5
    x = (np.arange(400) - 200) * h
    q = rng.random(400) ** 4
    q /= q.sum()
    C = np.concatenate(([0.0], np.cumsum(q)))
    R = np.array([0.2, 1.0, 3.3, 10.0, 40.0])
    zlo, zhi = sorted(rng.uniform(-80.0, 80.0, 2))
    got = hat_lower._range_sums(x, C, 0.0, 0.0, h, float(zlo), float(zhi), R)
    for r, g in zip(R, got):
        best = max(float(q[np.abs(x - z) <= r].sum()) for z in np.linspace(zlo, zhi, 801))
        assert g >= best * (1 - 1e-12)
    # an unbounded range below: every node up to z_hi + R
    got = hat_lower._range_sums(x, C, 0.0, 0.0, h, -math.inf, float(zhi), R)
    for r, g in zip(R, got):
        assert g >= float(q[x <= zhi + r].sum()) * (1 - 1e-12)


def _bounds(s0: float, n: int, eps: float) -> tuple[float, float]:
    clear_caches()
    return ShuffleAccountant(GaussianRandomizer(s0, 1), n).get_delta_bounds(eps)


def test_switch_off_restores_main_floats(monkeypatch):
    """HAT_PIECES = False: main's (6d5c8782) floats bit for bit at a cell where the rule moves the lower value."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    main = (0.10295785316419281, 0.10342238253815425)  # (/work/venv/main, GaussianRandomizer(0.5), n = 1e6, eps 0.1)
    on = _bounds(0.5, 10**6, 0.1)
    switch(monkeypatch, "HAT_PIECES", False)
    assert _bounds(0.5, 10**6, 0.1) == main
    assert on[1] == main[1] and on[0] > main[0]  # (the same window: the lower value only rises)


# main's rel_tol-1e-3 brackets (certified; tests/test_review_rev37_far.py's MOVED and REDO, and /work/venv/main
# 6d5c8782 for the others, session 38)
MAIN_TIGHT = {(0.5, 10**6, 0.1): (0.10321818008979508, 0.10325115540673127),
              (0.5, 10**6, 1.0): (0.03623764581761104, 0.03624706725344306),
              (0.5, 10**8, 0.001): (0.028959448358522925, 0.02897891873091703),
              (0.5, 10**8, 0.5): (0.0036063074618197127, 0.0036328529711363356),  # (a coarse run kept: moved)
              (0.5, 10**8, 1.0): (0.001712137403307647, 0.0017142925116636176)}


@pytest.mark.parametrize("cell", list(MAIN_TIGHT), ids=str)
def test_moved_brackets_overlap_main_tight_and_meet_rel_tol(cell):
    """The moved brackets (docs/accountant_tail.md §53.3's table) overlap main's rel_tol-1e-3 brackets and meet rel_tol."""
    lo, up = _bounds(*cell)
    ref_lo, ref_up = MAIN_TIGHT[cell]
    assert 0.0 < lo <= ref_up * (1 + 1e-12) and ref_lo <= up * (1 + 1e-12), (lo, up, ref_lo, ref_up)
    assert up - lo <= 1e-2 * lo


def test_hat_values_nested_in_main_at_the_same_window(monkeypatch):
    """At one round's window (GaussianRandomizer(1), n = 1e8, eps 0.01, the first step) the jump term's hat lower value
    with pieces is at least the one-part value, and the centroid bracket is unchanged."""
    from sharpdp.shuffle.accountant import jump

    seen: dict = {}
    orig = jump._hat_values

    def spy(*a, **k):
        out = orig(*a, **k)
        seen.setdefault(limits.HAT_PIECES, []).append(out[0])
        return out

    monkeypatch.setattr(jump, "_hat_values", spy)
    switch(monkeypatch, "HAT_DENSITY", False)  # (**) session 39, hat39: §55 moves this cell (test_hat39_density.py)
    on = _bounds(1.0, 10**8, 0.01)
    switch(monkeypatch, "HAT_PIECES", False)
    off = _bounds(1.0, 10**8, 0.01)
    assert on == off  # (the centroid window decides this cell's bracket)
    assert len(seen[True]) == len(seen[False])
    assert all(a >= b for a, b in zip(seen[True], seen[False])) and max(seen[True]) > 0.0


def test_loose_requests_keep_main_costs(monkeypatch):
    """At rel_tol > HAT_PIECES_TOL (a calibration's probes) the hat values are main's: the same floats with the switch
    on and off (GaussianRandomizer(0.5), n = 1e6, eps 0.1, rel_tol 0.3)."""
    def run():
        clear_caches()
        return ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**6, rel_tol=0.3).get_delta_bounds(0.1)
    on = run()
    switch(monkeypatch, "HAT_PIECES", False)
    assert run() == on
    switch(monkeypatch, "HAT_PIECES", True)
    switch(monkeypatch, "HAT_PIECES_TOL", 1.0)  # (the gate open: the lower value moves, the gate is what kept it)
    moved = run()
    assert moved != on and moved[0] > on[0] and moved[1] == on[1]
