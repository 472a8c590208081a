"""Grid and clamp choices of the far-tail treatment (docs/accountant_tail.md §8, §11.2): the clamp T0 sized by
the pair term, the estimates that steer the grid, the step at which the centroid law closes its first group, the
lower clamps. Choices of speed only: every value of :mod:`.far_tail` is certified for any T0, B and step (§7)."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant.jump import pair_first_term, pair_first_terms, pair_integral_up
from sharpdp.shuffle.accountant.lattice import choose_B
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import BODY_WHOLE_ACCEPT
from sharpdp.shuffle.laws import Law


def pow2(x: float) -> float:
    return 2.0 ** math.floor(math.log2(x))


def choose_T0(law: Law, gamma: float, n: int, target: float) -> float:
    """Smallest (about) T0 >= sd(L) with (n - 1) gamma / 2 * I2(T0) <= target."""
    sd = law.std()
    base = max(law.mean(), 0.0) + sd

    def pair(T):
        return 0.5 * (n - 1) * gamma * pair_integral_up(law, T)

    T = base
    # (pair_integral_up's first Riemann term alone shows pair(T) > target where it is large: the same floats
    # as the full call, whose sum of non-negative terms is at least that term, rounding being monotone; the first
    # terms of the doubling points T = base 2^j, j < 64, in one call: the same floats, elementwise)
    first = pair_first_terms(law, base * 2.0 ** np.arange(64.0), 0.5 * (n - 1) * gamma)
    for j in range(200):
        if (first[j] if j < first.size else pair_first_term(law, T, 0.5 * (n - 1) * gamma)) > target:
            T *= 2.0
            continue
        if pair(T) <= target:
            break
        T *= 2.0
    return bisect_T0(lambda x: pair(x) <= target, T / 2.0 if T > base else T, T)


def bisect_T0(holds, lo: float, T: float) -> float:
    """The clamp searches' bisection (``holds(T)``: the pair term meets its target at T; it fails at ``lo``, unless
    lo = T): halves [lo, T] until T - lo <= 0.02 T (at most 30 steps); returns the last T where it holds."""
    for _ in range(30):
        if T - lo <= 0.02 * T:
            break
        mid = 0.5 * (lo + T)
        if holds(mid):
            T = mid
        else:
            lo = mid
    return T


def normal_value(law: Law, gamma: float, n: int, mu: float | None = None, sd: float | None = None) -> float:
    """The normal approximation of E[S_+]/(n gamma) (an estimate, not a bound: it only steers choices of speed);
    ``mu``, ``sd``: the law's mean and sd when already known."""
    mu = law.mean() if mu is None else mu
    sd = law.std() if sd is None else sd
    m_s, s_s = n * gamma * mu, math.sqrt(n * gamma * (sd * sd + mu * mu))
    z = m_s / s_s
    e = s_s * math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi) + 0.5 * m_s * math.erfc(-z / math.sqrt(2))
    return e / (n * gamma)


def first_group_ok(h: float, lo_s: float, top: float) -> bool:
    """The centroid law's first group can close on a node <= top at step h: its first piece is the fine cell
    [f, f + h/4) holding lo_s (f = floor(4 lo_s / h) h / 4; the fine grid contains 0), whose mean c is at most
    f + h/4, and the sweep targets the node ceil(c/h + 1/4) h <= ceil(f/h + 1/2) h (docs/accountant.md §4.2)."""
    f = math.floor(4.0 * lo_s / h) * h / 4.0
    return math.ceil(f / h + 0.5) * h <= top


def h_first_group(lo_s: float, mean: float) -> tuple[float, int]:
    """(h, j): the largest step h = j 2^e (j odd, <= 127) at which the centroid (lower) law of a law supported in
    [lo_s, inf), lo_s < 0, can close its first group (the one holding the bottom of the support) on a node at or
    below the mean (minus a margin for the clamp at T0). A coarser grid puts the whole law in one unfinished
    group: no lower value (docs/accountant_tail.md §8, §11.2). A choice of speed only; j > 1 (a dyadic, not a
    power-of-two step) often allows a grid several times coarser than the powers of two."""
    top = mean - 0.05 * (mean - lo_s)
    h1 = pow2(-lo_s)
    for _ in range(80):
        if first_group_ok(h1, lo_s, top):
            break
        h1 /= 2.0
    best, bj = h1, 1
    e_hi = math.floor(math.log2(-lo_s))
    for e in range(e_hi, e_hi - 14, -1):
        for j in range(3, 128, 2):
            h = j * 2.0**e
            if h <= best:
                continue
            if h > -lo_s:
                break
            if first_group_ok(h, lo_s, top):
                best, bj = h, j
    return best, bj


def count_clamp(law: Law, gamma: float, n: int, hi_s: float, lo_s: float) -> float:
    """The lower clamp B of a law bounded above by hi_s > 0 with an unbounded left tail: twice hi_s times a
    count of active users the n - 1 others exceed with negligible probability (mean + 8 sd + 8), so that the
    others' clamped sum (at most hi_s per active user) stays below B/2 and the penalty of
    docs/accountant_tail.md §5 is negligible (a choice of speed only: the penalty is certified and B grows by 4
    while it is not small, §8)."""
    if math.isfinite(lo_s) or not hi_s > 0.0:
        return math.inf
    m = max(n - 1, 1) * gamma
    return 2.0 * hi_s * (m + 8.0 * math.sqrt(m) + 8.0)


def drift_clamp(law: Law, mean: float, sd: float) -> float:
    """The drift rule's lower clamp: max(4 sd, the B with tau_low(B) <= |E L| / 4 when E L < 0), so that the clamp
    leaves most of the (negative) drift (docs/accountant_tail.md §8; speed only)."""
    return max(4.0 * sd, choose_B(law, 0.25 * abs(mean)) if mean < 0 else 4.0 * sd)


def whole_share(lo: float, up: float, body_gap: float, share: float, rel_tol: float) -> float:
    """The body passes' target from a round's whole bracket (lo, up) on the body's bracket so far, of gap
    ``body_gap`` (docs/accountant_tail.md §44.1-§44.2): -1.0 where (lo, up) meets BODY_WHOLE_ACCEPT rel_tol (the
    passes stop), else the share §31.2's leap compares the body's gap with: the larger of ``share`` and the body gap
    that would meet it, the round's other gaps fixed; ``share`` itself where BODY_WHOLE_STOP is off (main's passes)."""
    if not limits.BODY_WHOLE_STOP:
        return share
    if 0.0 < lo and up - lo <= BODY_WHOLE_ACCEPT * rel_tol * lo:
        return -1.0
    return max(share, BODY_WHOLE_ACCEPT * rel_tol * lo - (up - lo) + body_gap)


__all__ = ["bisect_T0", "choose_T0", "count_clamp", "drift_clamp", "first_group_ok", "h_first_group", "normal_value", "pow2",
           "whole_share"]
