"""The export's accuracy: ``cover_upper``'s factor capped by the samples' lower values, with the few samples whose
bracket is too wide for the cap certified again at a finer ``rel_tol`` (``docs/composition.md`` §2.12).

:func:`sharpdp.shuffle.pair.cover` multiplies each sampled upper value U by 1 + g (g the largest bracket gap of the
sample and its neighbours) so that the pair lies above the accountant's own ``get_delta``; where the gaps are near the
accountant's ``rel_tol`` (1e-2) the covered value is up to ~2 % above the truth, and the export misses its goal of
being within 1 % above ``get_delta`` (the truth is at most ``get_delta``). :func:`capped_cover` keeps every covered
value at or above a certified upper value of the same sample (so the pair dominates: Claim A of
``docs/composition.md`` §2 holds for any values at or above certified upper values) and at most (1 + tau) times its
certified lower value where that lower value allows it. Only a choice of values above the certified ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from sharpdp.shuffle.pair import cover

GOAL = 1e-2  # the export's accuracy goal: within 1 % above get_delta (docs/composition.md §5.1)
FINE_TOL = 2.5e-3  # rel_tol of a sample certified again where its bracket is too wide for the cap
ACCURATE_FLOOR = 1e-13  # samples below it keep cover's value (the goal is stated where delta >= 1e-12)
MAX_FINE = 200  # at most this many samples certified again per curve


def cap_tau(sampling_rel_tol: float) -> float:
    """The cap's margin tau: the goal less the sampling's interpolation target (1.25 ``rel_tol`` of the pair's
    chords, docs/composition.md §2.2), so that the chord of values <= (1 + tau) x the truth stays within the goal."""
    return max(GOAL - 1.25 * float(sampling_rel_tol), 0.0)


def capped_cover(lo, up, tau: float, fine: Callable | None = None, floor: float = ACCURATE_FLOOR):
    """``cover(lo, up)`` with each value at or above ``floor`` capped at (1 + ``tau``) times the sample's certified
    lower value, never below its certified upper value.

    A sample whose covered value exceeds the cap (for a sample without a lower value, NaN: whose cover factor squared
    exceeds 1 + tau, its own gap estimated by its neighbours') is certified again by ``fine(indices)`` -> (lower,
    upper) when given (at most MAX_FINE, the largest values first): its bracket becomes the intersection [max(L, L'),
    min(U, U')] of the two certified ones and its value max(U'', min(U'' (1 + g), (1 + tau) L'')), g the cover factor
    of the original samples (the accountant's own gaps, which ``get_delta`` shows). Returns the covered values.

    Certification: every returned value is >= a certified upper value of its sample (the ``max``), so the curve
    through them lies above the profile (Claim A, ``docs/composition.md`` §2.12).
    """
    lo = np.asarray(lo, dtype=float)
    up = np.asarray(up, dtype=float)
    c0 = cover(lo, up)
    with np.errstate(divide="ignore", invalid="ignore"):
        fac = np.where(up > 0.0, c0 / up, 1.0)  # 1 + g (and the rounding margin)
    cap = (1.0 + tau) * np.nan_to_num(lo)
    known = np.nan_to_num(lo) > 0.0
    over = (up >= floor) & np.where(known, c0 > cap, fac * fac > 1.0 + tau)
    lo2, up2 = lo.copy(), up.copy()
    idx = np.flatnonzero(over)
    if fine is not None and idx.size:
        idx = np.sort(idx[np.argsort(-up[idx], kind="stable")[:MAX_FINE]])
        lf, uf = fine(idx)
        lo2[idx] = np.fmax(np.nan_to_num(lo[idx], nan=0.0), np.asarray(lf, dtype=float))
        up2[idx] = np.minimum(up[idx], np.asarray(uf, dtype=float))
    out = c0.copy()
    sel = over & (np.nan_to_num(lo2) > 0.0)
    out[sel] = np.maximum(up2[sel], np.minimum(up2[sel] * fac[sel], (1.0 + tau) * lo2[sel]))
    return np.minimum(out, 1.0)


def fine_twin(accountant, cache, tol: float = FINE_TOL):
    """An accountant of the same round at ``rel_tol`` ``tol`` (kept per accountant in ``cache``), or None where the
    accountant has no ``rel_tol`` finer than ``tol`` to refine or cannot be built again from (randomizer, n,
    adjacency)."""
    rt = getattr(accountant, "rel_tol", None)
    if not isinstance(rt, float) or not math.isfinite(rt) or rt <= tol:
        return None
    twin = cache.get(accountant)
    if twin is None:
        try:
            twin = type(accountant)(accountant.randomizer, accountant.n, accountant.adjacency, rel_tol=tol)
        except TypeError:
            return None
        cache[accountant] = twin
    return twin


__all__ = ["ACCURATE_FLOOR", "FINE_TOL", "GOAL", "MAX_FINE", "cap_tau", "capped_cover", "fine_twin"]
