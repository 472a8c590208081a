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
    (:func:`_model_b`, second legs on the lattice dx / (2 scale)), and the model's optimal second leg lies inside the
    step (or at its end: both steps around it). At most STEEP_MAX, the largest excess first (an estimate: it only
    chooses samples)."""
    parts = 2
    kb = np.asarray(kb, dtype=np.int64)
    ub = np.asarray(ub, dtype=float)
    ca, cb = _curves(np.asarray(ka) * parts, la, ua, kb * parts, lb, ub, dx / (scale * parts))
    k_hi = (int(ka[-1]) + int(kb[-1])) // scale + 1
    ks = np.arange(0, k_hi + 1, dtype=np.int64) * (scale * parts)
    k2 = np.arange(int(kb[0]) * parts, int(kb[-1]) * parts + 1, dtype=np.int64)
    b2 = _model_b(kb * parts, ub, k2)
    d = ca.dx
    v_curve = np.empty(ks.size)
    excess = np.zeros(ks.size)
    at = np.zeros(ks.size, dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(0, ks.size, 64):
            kk = ks[a:a + 64, None]
            k1 = kk - k2[None, :]
            vc = ca(k1) + np.exp(k1 * d) * cb(np.broadcast_to(k2, k1.shape))
            vm = ca(k1) + np.exp(k1 * d) * b2[None, :]
            v_curve[a:a + 64] = vc.min(axis=1)
            j = np.argmin(vm, axis=1)
            m = vm[np.arange(j.size), j]
            excess[a:a + 64] = np.where(m > 0.0, v_curve[a:a + 64] / m - 1.0, 0.0)
            at[a:a + 64] = k2[j]
    out: dict[int, float] = {}
    wide = np.diff(kb) >= 1
    for x, e, v in zip(at.tolist(), excess.tolist(), v_curve.tolist()):
        if v >= STEEP_LEVEL and e > STEEP_GAIN:
            i = min(int(np.searchsorted(kb * parts, x, side="right")) - 1, kb.size - 2)
            for j in (i - 1, i) if kb[i] * parts == x else (i,):
                if 0 <= j < wide.size and wide[j]:
                    out[j] = max(out.get(j, 0.0), e)
    order = sorted(out, key=lambda j: -out[j])[:STEEP_MAX]
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
