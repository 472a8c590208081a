"""The export's accuracy: ``cover_upper``'s factor capped by the samples' certified lower values (a sample taken upper
first gets its bracket where the cap may bind; ``docs/composition.md`` §2.12).

:func:`sharpdp.shuffle.pair.cover` multiplies each sampled upper value U by 1 + g (g the largest bracket gap of the
sample and its neighbours) so that the pair lies above the accountant's own ``get_delta``; where the gaps are near the
accountant's ``rel_tol`` (1e-2) the covered value is up to ~2 % above the truth, and the export misses its goal of
being within 1 % above ``get_delta`` (the truth is at most ``get_delta``). :func:`capped_cover` keeps every covered
value at or above a certified upper value of the same sample (so the pair dominates: Claim A of
``docs/composition.md`` §2 holds for any values at or above certified upper values) and at most (1 + tau) times its
certified lower value where that lower value allows it (tau None: ``cover``'s values). Only a choice of values at or
above the certified ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.pair import chord_estimate, cover
from sharpdp.shuffle.pair_settled import settled_values

GOAL = 1e-2  # the export's accuracy goal: within 1 % above get_delta (docs/composition.md §5.1)
ACCURATE_FLOOR = 1e-13  # samples below it keep cover's value (the goal is stated where delta >= 1e-12)
MAX_BRACKETS = 200  # at most this many samples taken upper first get their bracket per curve
#: the sampling's estimate of a chord's error may be this far below the actual one (:func:`cap_tau`)
ESTIMATE_MARGIN = 1.25
GOAL_DELTA = 1e-12  # the goal is stated where delta >= this: upper_first_loose looks at no sample beyond the first below


def cap_tau(sampling_rel_tol: float) -> float | None:
    """The cap's margin tau: the goal less the sampling's interpolation target (1.25 ``rel_tol`` of the pair's
    chords, docs/composition.md §2.2), so that the chord of values <= (1 + tau) x the truth stays within the goal;
    None (no cap: ``cover`` as it is) where the sampling is too coarse for the goal (tau < GOAL / 2)."""
    tau = GOAL - ESTIMATE_MARGIN * float(sampling_rel_tol)
    return tau if tau >= 0.5 * GOAL else None


def capped_cover(lo, up, tau: float | None, bracket: Callable | None = None, floor: float = ACCURATE_FLOOR,
                 at=None, settled: float | None = None):
    """``cover(lo, up)`` with each value at or above ``floor`` capped at (1 + ``tau``) times the sample's certified
    lower value, never below its certified upper value.

    A sample without a lower value (NaN: taken upper first) whose cover factor squared exceeds 1 + tau (its own gap
    estimated by its neighbours') gets its bracket from ``bracket(indices)`` -> (lower, upper) when given (at most
    MAX_BRACKETS, the largest values first; its upper value the smaller of the two certified ones). A sample whose
    covered value U (1 + g) exceeds the cap gets max(U, min(U (1 + g), (1 + tau) L)), g the cover factor (the
    accountant's neighbouring gaps, which ``get_delta`` shows). With ``at`` (the samples' eps, increasing) and
    ``limits.EXPORT_UPPER_FIRST_CHECK``, a sample taken upper first also gets its bracket where its covered value
    exceeds (1 + tau) times the curve through its bracketed neighbours (:func:`upper_first_loose`,
    ``docs/composition.md`` §4.10). With ``settled`` (a margin m, :func:`~sharpdp.shuffle.pair_settled.settled_margin`)
    a sample without a lower value takes U (1 + m) and no bracket (``docs/composition.md`` §2.26).
    Returns the covered values.

    Certification: every returned value is >= a certified upper value of its sample (the ``max``), so the curve
    through them lies above the profile (Claim A, ``docs/composition.md`` §2.12).
    """
    lo = np.asarray(lo, dtype=float)
    up = np.asarray(up, dtype=float)
    c0 = cover(lo, up)
    if tau is None:
        return c0
    with np.errstate(divide="ignore", invalid="ignore"):
        fac = np.where(up > 0.0, c0 / up, 1.0)  # 1 + g (and the rounding margin)
    cap = (1.0 + tau) * np.nan_to_num(lo)
    known = np.nan_to_num(lo) > 0.0
    taken = np.zeros(up.size, dtype=bool)
    if settled is not None:  # (§2.26: samples taken upper first covered by the margin, no bracket)
        c0, taken = settled_values(lo, up, c0, settled, floor)
    over = (up >= floor) & np.where(known, c0 > cap, fac * fac > 1.0 + tau) & ~taken
    if at is not None and limits.EXPORT_UPPER_FIRST_CHECK:
        over |= (up >= floor) & upper_first_loose(at, lo, up, c0, tau) & ~taken
    lo2, up2 = lo.copy(), up.copy()
    idx = np.flatnonzero(over & ~known)
    if bracket is not None and idx.size:
        idx = np.sort(idx[np.argsort(-up[idx], kind="stable")[:MAX_BRACKETS]])
        lf, uf = bracket(idx)
        lo2[idx] = np.fmax(np.nan_to_num(lo[idx], nan=0.0), np.asarray(lf, dtype=float))
        up2[idx] = np.minimum(up[idx], np.asarray(uf, dtype=float))
    out = c0.copy()
    sel = over & (np.nan_to_num(lo2) > 0.0)
    out[sel] = np.maximum(up2[sel], np.minimum(up2[sel] * fac[sel], (1.0 + tau) * lo2[sel]))
    return np.minimum(out, 1.0)


def upper_first_loose(at, lo, up, covered, tau: float) -> np.ndarray:
    """Which samples taken upper first (``lo`` NaN or 0) have a covered value above (1 + r_i) times an estimate of
    their upper value from their bracketed neighbours (``docs/composition.md`` §4.10): the polynomial in eps through
    the logarithms of the certified upper values ``up`` of the bracketed samples nearest on each side (up to two
    each; at least one each, else no estimate and False). r_i = max(``tau``, s GOAL - ESTIMATE_MARGIN e_i), e_i the
    larger chord estimate (:func:`sharpdp.shuffle.pair.chord_estimate`, on the ``covered`` values, the sample's own
    replaced by the estimate) of the two
    segments next to the sample, s = ``limits.EXPORT_UPPER_FIRST_SHARE``: the room its value leaves the chords. Only
    a sample whose left neighbour's upper value is at least :data:`GOAL_DELTA` (a chord next to it may then pass where
    delta >= GOAL_DELTA). An estimate that chooses which samples get their bracket, never a value."""
    at = np.asarray(at, dtype=float)
    lo = np.nan_to_num(np.asarray(lo, dtype=float))
    known = np.flatnonzero(lo > 0.0)
    out = np.zeros(lo.size, dtype=bool)
    if known.size < 2:
        return out
    covered = np.asarray(covered, dtype=float)
    up = np.asarray(up, dtype=float)
    with np.errstate(divide="ignore"):
        log_up = np.log(up)
    t = np.exp(at)
    left = np.concatenate([[np.inf], up[:-1]])
    for i in np.flatnonzero((lo <= 0.0) & (covered > 0.0) & (left >= GOAL_DELTA)):  # (no lower value: as ``known``)
        p = int(np.searchsorted(known, i))
        if p == 0 or p == known.size:
            continue
        sten = known[max(p - 2, 0):p + 2]
        x = at[sten] - at[i]
        est = 0.0  # Lagrange's form at x = 0
        for j in range(sten.size):
            w = np.prod([x[m] / (x[m] - x[j]) for m in range(sten.size) if m != j])
            est += w * log_up[sten[j]]
        h = covered.copy()
        h[i] = np.exp(est)  # (the chords' estimate on the curve without this sample's own excess)
        e_i = max(chord_estimate(t, h, int(s)) for s in (i - 1, i) if 0 <= s < at.size - 1)
        room = limits.EXPORT_UPPER_FIRST_SHARE * GOAL - ESTIMATE_MARGIN * e_i
        out[i] = covered[i] > (1.0 + max(tau, room)) * np.exp(est)
    return out


__all__ = ["ACCURATE_FLOOR", "ESTIMATE_MARGIN", "GOAL", "GOAL_DELTA", "MAX_BRACKETS", "cap_tau", "capped_cover",
           "upper_first_loose"]
