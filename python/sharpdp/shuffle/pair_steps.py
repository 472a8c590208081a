"""Leg B's steep lattice steps at the pair's optimal splits, resolved on a finer lattice (``docs/composition.md``
§2.16).

The dominating pair of a replace-one round bounded through bot samples its split bound
V(k) = min over k1 of A(k1 Delta) + e^{k1 Delta} B((k - k1) Delta) of the legs' hull curves (``docs/composition.md``
§2.1). Near delta = 1e-12 the optimal split lifts leg B by e^{e1} ~ 1e3-1e4 and puts its second leg where B falls
~10x per lattice step: between two samples so far apart the hull curve (a chord in t) is up to ~1.7x above the leg,
and the split bound, forced to one of the two samples or that chord, loses up to ~1.6 % against ``get_delta``'s
golden-section split (docs/composition.md §2.14). :func:`resolve_steep` bisects such steps where a log-linear model of
the leg says the split bound loses more than STEEP_GAIN (at most three times: Delta / 8). Only a choice of samples: every value is a certified bracket of leg B at its point, so the
hull curves through them lie above the legs and the pair dominates whatever is sampled.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sharpdp.shuffle.pair import cover, leg_curve

STEEP_LEVEL = 1e-12  # a step of leg B holding the second leg of an optimal split with V >= this level ...
STEEP_GAIN = 5e-3  # ... where it may cost V more than this (relative; an estimate) ...
STEEP_ROUNDS = 3  # ... is bisected, the optimal splits recomputed after each round (the optimum moves): Delta / 8 at most
STEEP_MAX = 16  # at most this many steps per round (the largest excess first)


def _curves(ka, la, ua, kb, lb, ub, dx: float):
    """The covered legs' hull curves as the pair builds them (``pair_legs.leg_curves`` without the cap: an estimate
    that only chooses samples)."""
    ua_c, ub_c = cover(la, ua), cover(lb, ub)
    return leg_curve(ka, ua_c, lb, ub_c, kb, dx), leg_curve(kb, ub_c, la, ua_c, ka, dx)


def _model_b(kb, ub, k2: np.ndarray) -> np.ndarray:
    """Leg B at the indices ``k2`` (inside [kb[0], kb[-1]]) interpolated log-linearly between its samples: a model of
    the leg between them (below the chord in t), never a certified value."""
    with np.errstate(divide="ignore"):
        return np.exp(np.interp(k2, kb, np.log(np.maximum(ub, 1e-300))))


def steep_steps(ka, la, ua, kb, lb, ub, scale: int, dx: float) -> np.ndarray:
    """Indices i of leg B's steps [kb[i], kb[i+1]] (indices in units of dx / scale) where resolving the leg may lower
    the split bound: at a lattice point k dx (k integer) with V(k) >= STEEP_LEVEL, the split bound of the hull curves
    exceeds by more than STEEP_GAIN the split bound with leg B interpolated log-linearly between its samples
    (:func:`_model_b`), both over the second legs at B's samples and at the middles of its steps (and, for V, the
    first legs at A's vertices), and the model's optimal second leg is the middle of the step. At most STEEP_MAX, the
    largest excess first (an estimate: it only chooses samples)."""
    kb = np.asarray(kb, dtype=np.int64)
    ub = np.asarray(ub, dtype=float)
    if kb.size < 2:
        return np.empty(0, dtype=np.int64)
    ca, cb = _curves(np.asarray(ka) * 2, la, ua, kb * 2, lb, ub, dx / (scale * 2))
    k2 = np.concatenate([kb * 2, kb[:-1] + kb[1:]])  # (units dx / (2 scale): the samples and the steps' middles)
    mid = np.concatenate([np.full(kb.size, -1), np.arange(kb.size - 1)])  # the step whose middle it is
    b2 = _model_b(kb * 2, ub, k2)
    d = ca.dx
    ks = np.arange(0, (int(ka[-1]) + int(kb[-1])) // scale + 2, dtype=np.int64) * (scale * 2)
    out: dict[int, float] = {}
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(0, ks.size, 128):
            kk = ks[a:a + 128, None]
            k1 = kk - k2[None, :]
            lift, first = np.exp(k1 * d), ca(k1)
            v = np.minimum((first + lift * cb(np.broadcast_to(k2, k1.shape))).min(axis=1),
                           (ca(ca.k)[None, :] + np.exp(ca.k * d)[None, :] * cb(kk - ca.k[None, :])).min(axis=1))
            vm = first + lift * b2[None, :]
            j = np.argmin(vm, axis=1)
            m = vm[np.arange(j.size), j]
            excess = np.where(m > 0.0, v / m - 1.0, 0.0)
            for i, e, vv in zip(mid[j].tolist(), excess.tolist(), v.tolist()):
                if i >= 0 and vv >= STEEP_LEVEL and e > STEEP_GAIN and kb[i + 1] - kb[i] >= 1:
                    out[i] = max(out.get(i, 0.0), e)
    order = sorted(out, key=lambda i: -out[i])[:STEEP_MAX]
    return np.array(sorted(order), dtype=np.int64)


def resolve_steep(ka, la, ua, kb, lb, ub, scale: int, dx: float, sample: Callable):
    """The legs' samples with leg B's steep steps at the optimal splits (:func:`steep_steps`) bisected, in at most
    STEEP_ROUNDS rounds (each step at most halved per round, the optimal splits recomputed between rounds):
    ((ka, la, ua), (kb, lb, ub), new scale), every index in units of dx / (new scale), the new scale ``scale`` times
    a power of 2 (only where a step one unit wide is bisected; unchanged where no step is steep).
    ``sample(ks, left_upper, s)`` -> (lower, upper) of leg B at eps = k dx / s (a hair below), ``left_upper`` the
    upper value at the step's left end. Only a choice of samples: every value is a certified bracket of leg B at its
    point (``docs/composition.md`` §2.16)."""
    ka, la, ua = np.asarray(ka, dtype=np.int64), np.asarray(la, dtype=float), np.asarray(ua, dtype=float)
    kb, lb, ub = np.asarray(kb, dtype=np.int64), np.asarray(lb, dtype=float), np.asarray(ub, dtype=float)
    s = scale
    for _ in range(STEEP_ROUNDS):
        idx = steep_steps(ka, la, ua, kb, lb, ub, s, dx)
        if idx.size == 0:
            break
        if np.any(kb[idx + 1] - kb[idx] < 2):  # (a step one unit wide: the lattice halved, Delta / 2^j exact)
            ka, kb, s = ka * 2, kb * 2, s * 2
        pts = (kb[idx] + kb[idx + 1]) // 2
        lo_f, up_f = sample(pts, float(np.min(ub[idx])), s)
        kb = np.concatenate([kb, pts])
        lb = np.concatenate([lb, np.asarray(lo_f, dtype=float)])
        ub = np.concatenate([ub, np.asarray(up_f, dtype=float)])
        order = np.argsort(kb, kind="stable")
        kb, lb, ub = kb[order], lb[order], np.minimum.accumulate(ub[order])
    return (ka, la, ua), (kb, lb, ub), s
