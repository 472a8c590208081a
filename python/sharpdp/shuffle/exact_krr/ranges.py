"""The range bounds of the branch and bound: which class of which population bounds a range of classes
(docs/sharp_krr.md §2.3, §2.4), and the closed-form estimates of the users a range drops (§4.11).

Certified: :func:`upper_edge` (the Chernoff edge k1 of §2.3) and :func:`representative` (the class of
Proposition 4, whose conditions it checks). Estimates only (nothing certified depends on them):
:func:`dropped_estimate` and :func:`size_for_budget`, which steer the sizes of the ranges.
"""

from __future__ import annotations

import math


def upper_edge(m: int, pi: float, pi_c: float, nats: float) -> int:
    """``chernoff_edges(m, pi, pi_c, nats)[1]`` (the same value): the smallest k above the mean with
    m KL(k/m || pi) >= nats + 1, minus one, found by bisection in a bracket grown from the normal
    guess instead of [mean, m] (m KL is increasing above the mean, so the smallest such k is the
    same; about 10 exponent evaluations instead of 2 log2 m)."""
    if m == 0:
        return 0
    need = nats + 1.0

    def exponent(k: int) -> float:
        x = k / m
        t1 = x * math.log(x / pi) if x > 0 else 0.0
        t2 = (1 - x) * math.log((1 - x) / pi_c) if x < 1 else 0.0
        return m * (t1 + t2)

    def exponent_real(k: float) -> float:  # the same expression at a real k (Newton's iterate)
        x = k / m
        return m * (x * math.log(x / pi) + (1 - x) * math.log((1 - x) / pi_c))

    if exponent(m) < need:
        return m
    a, b = math.ceil(m * pi), m  # exponent(b) >= need
    if exponent(a) >= need:
        return a - 1
    step = max(1, int(math.sqrt(2.0 * need * m * pi * pi_c)))
    # Newton's method on the real k from the normal guess, then the answer checked by its
    # definition (exponent(c) >= need > exponent(c - 1) for c = b; exponent increases above the mean,
    # so c is the bisection's b); anything else falls back to the bisection below
    k = float(a + step)
    for _ in range(6):
        if not a < k < m:
            break
        x = k / m
        slope = math.log(x / pi) - math.log((1 - x) / pi_c)  # d exponent / dk
        if not slope > 0:
            break
        k_next = k - (exponent_real(k) - need) / slope
        done = abs(k_next - k) < 0.25
        k = k_next
        if done:
            c = math.ceil(k)
            for c in (c, c + 1, c - 1):
                if a < c <= b and exponent(c) >= need and (c - 1 == a or exponent(c - 1) < need):
                    return c - 1
            break
    g = min(a + step, b)  # grow a bracket [a, b] with exponent(a) < need <= exponent(b) from the guess
    while exponent(g) < need:
        a, step = g, 2 * step
        g = min(a + step, b)
    b = g
    while b - a > 1:
        mid = (a + b) // 2
        if exponent(mid) >= need:
            b = mid
        else:
            a = mid
    return b - 1


#: From this pi = 1 - q/p on (eps0 >= 3.0) :func:`reach` returns the one-sided reach of §2.3 (r = mix).
ONE_SIDED_PI = 0.95


def _shape(pi: float, nats: float) -> tuple[float, float]:
    """(c, o) of the closed-form edge pi r + c sqrt(r) + o of Bin(r, pi) at the level ``nats``: the
    normal guess and the skewness offset (L + 1)(1 - 2 pi)/3 (within a few users of upper_edge for
    r >= 300; an estimate)."""
    return math.sqrt(2.0 * (nats + 1.0) * pi * (1.0 - pi)), (nats + 1.0) * (1.0 - 2.0 * pi) / 3.0


def reach(mix: int, pi: float, pi_c: float, nats: float) -> tuple[int, int]:
    """(r, k) with k = upper_edge(r, pi, pi_c, nats), 2 r - k >= mix and r <= mix (docs/sharp_krr.md
    §2.4): a representative class a bounds the classes [a + k - r, a + r], a range of 2 r - k + 1
    classes, dropping k users. r comes from the closed-form edge and is raised until 2 r - k >= mix
    (any such r is valid; a smaller one only drops fewer users: the guess aims one class above mix, and
    r is not lowered afterwards, which would cost another edge); r = mix always qualifies (k <= r) and is
    taken where pi >= ONE_SIDED_PI (eps0 >= 3: the ranges would be at most 1/p < 1.05 times longer, for
    more edge computations than the one of §2.3)."""
    if mix <= 0:
        return 0, 0
    if pi >= ONE_SIDED_PI:
        return mix, upper_edge(mix, pi, pi_c, nats)
    two = 2.0 - pi
    c, o = _shape(pi, nats)
    want = mix + 1.0 + o  # (2 - pi) x^2 - c x - o = mix + 1, x = sqrt(r)
    x = (c + math.sqrt(c * c + 4.0 * two * want)) / (2.0 * two) if want > 0 else 0.0
    r = min(max(math.ceil(x * x), (mix + 1) // 2, 1), mix)
    k = upper_edge(r, pi, pi_c, nats)
    for _ in range(8):  # up until 2 r - k >= mix (each step raises 2 r - k by >= its size, in exact arithmetic)
        if 2 * r - k >= mix:
            return r, k
        r = min(r + (mix - (2 * r - k)), mix)
        k = upper_edge(r, pi, pi_c, nats)
    return (r, k) if 2 * r - k >= mix else (mix, upper_edge(mix, pi, pi_c, nats))


def representative(j1: int, j2: int, top: int, r: int, k: int) -> int:
    """The class a of Proposition 4 (docs/sharp_krr.md §2.4) for the range [j1, j2] of the classes
    0..top (top = N): a + k - r <= j1, j2 <= a + r, 0 <= a and a + k <= top (the population of the
    representative, N - k other users, has a of input 1 and N - k - a of input 0). The one closest to
    (top - k)/2 (the lower one at a tie), so that the mirror range [top - j2, top - j1] gets the mirror
    representative top - k - a (§4.16: its windows are the mirror images of this one's) wherever the
    range lies on one side of the middle. Raises ValueError when no a qualifies (2 r - k < j2 - j1, or r, k
    out of range)."""
    lo = max(0, j2 - r)
    hi = min(j1 + r - k, top - k)
    if not (0 <= k <= r and 0 <= j1 <= j2 <= top and lo <= hi):
        raise ValueError(f"no representative class for the range [{j1}, {j2}] with r = {r}, k = {k}")
    twice_mid = top - k
    return lo if 2 * lo >= twice_mid else (hi if 2 * hi <= twice_mid else twice_mid // 2)


def dropped_estimate(mix: int, pi: float, nats: float) -> float:
    """About how many users the range bound of a range of mix + 1 classes drops (§2.4: k of
    :func:`reach` in closed form; an estimate)."""
    if mix <= 0:
        return 0.0
    two = 2.0 - pi
    c, o = _shape(pi, nats)
    x = (c + math.sqrt(c * c + 4.0 * two * max(mix + o, 0.0))) / (2.0 * two)
    one_sided = pi * mix + c * math.sqrt(mix)  # the representative at the range's first class (§2.3)
    if pi >= ONE_SIDED_PI:
        return min(float(mix), one_sided)
    return min(float(mix), max(pi * x * x + c * x + o, 0.0), one_sided)


def size_for_budget(budget: float, pi: float, nats: float) -> float:
    """About how many classes a range may span when it may drop ``budget`` users (the inverse of
    :func:`dropped_estimate`; an estimate, >= 0)."""
    if not budget > 0:
        return 0.0
    c, o = _shape(pi, nats)
    if pi >= ONE_SIDED_PI:  # pi x^2 + c x = budget, r = x^2 (§2.3)
        x = (-c + math.sqrt(c * c + 4.0 * pi * budget)) / (2.0 * pi)
        return x * x
    x = (-c + math.sqrt(c * c + 4.0 * pi * max(budget - o, 0.0))) / (2.0 * pi)  # pi x^2 + c x + o = budget
    return max((2.0 - pi) * x * x - c * x - o, x * x, 0.0)


__all__ = ["ONE_SIDED_PI", "dropped_estimate", "reach", "representative", "size_for_budget", "upper_edge"]
