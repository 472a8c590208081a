"""The pair's last sampling stage aimed at the export's accuracy budget (``docs/composition.md`` §2.17).

The export of a round's pair is meant to lie within ``pair_accuracy.GOAL`` (1 %) above the accountant's ``get_delta``
where delta >= 1e-12. Two things put it above the truth: ``cover_upper``'s values at the samples, at most about
(1 + g)^2 times the truth and never more than (1 + tau) times a certified lower value where the cap of
``pair_accuracy.capped_cover`` binds (g the accountant's bracket gaps near the sample, tau = GOAL - 1.25 rel_tol), and
the chord in t = e^eps between two samples (the sampling's interpolation target, estimated within a factor 1.25). The
sampling of ``docs/composition.md`` §2.2 aims every segment at ``rel_tol``, the room left by the worst case b = tau;
where the gaps near a segment are small the chord may take the rest: :func:`segment_targets` gives each segment the
target (PAIR_BUDGET_SHARE GOAL - b) / 1.25 with b = min((1 + g)^2 - 1, tau), at least ``rel_tol`` and at most
``limits.PAIR_BUDGET_MAX`` ``rel_tol``. Only a choice of which certified values are taken (Claim A of
``docs/composition.md`` §2 holds for any samples).
"""

from __future__ import annotations

import numpy as np

from sharpdp.shuffle import contract
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.pair import cover
from sharpdp.shuffle.pair_accuracy import ESTIMATE_MARGIN, GOAL, cap_tau


def applies(accountant, cover_upper: bool, lower: bool) -> bool:
    """Whether the pair of ``accountant`` is sampled with :func:`segment_targets`: built with ``cover_upper`` (the
    budget is ``capped_cover``'s), not the ``lower`` reference, not a round through bot (its samples are the split
    bound of the legs' curves, §2.1), and a randomizer that is not pure eps0-LDP. A pure-LDP randomizer's (k-RR,
    PrivUnit) privacy loss has atoms: its profile is piecewise linear in t with kinks at the atoms, where the chord
    estimate of §2.2 (from the neighbouring chords) under-states the error by up to ~3x at small n (binary RR, n = 50,
    replace: 1.0054 of ``get_delta`` at the target 2e-3, 1.0135 at 6e-3), so it keeps main's target."""
    return (bool(cover_upper) and not lower and not getattr(accountant, "via_bottom", False)
            and contract.local_epsilon(getattr(accountant, "randomizer", None)) is None)


def segment_targets(lo: np.ndarray, up: np.ndarray, rel_tol: float) -> np.ndarray | None:
    """Per-segment interpolation targets of the last sampling stage from the samples' brackets (``lo`` NaN where a
    sample was taken upper first: ``cover`` takes its neighbours' gaps), or None (the switch
    ``limits.PAIR_GAP_BUDGET`` off, or no cap: ``rel_tol`` too coarse for the goal; every segment then keeps
    ``rel_tol``, main's sampling).

    Parameters
    ----------
    lo, up : numpy.ndarray of float64, shape (m,)
        Certified lower (NaN: not computed) and upper values of the samples so far, in increasing eps.
    rel_tol : float
        The pair's interpolation target (``dominating_pair``'s ``rel_tol``).

    Returns
    -------
    numpy.ndarray of float64, shape (m - 1,), or None
        Segment i's target, in [rel_tol, PAIR_BUDGET_MAX rel_tol]: (PAIR_BUDGET_SHARE GOAL - b_i) / 1.25,
        b_i = min((1 + g_i)^2 - 1, tau), g_i the larger ``cover`` factor less one of its two ends (at least the factor
        of any sample taken between them, docs/composition.md §2.17); ``rel_tol`` where both ends are below
        ``limits.PAIR_BUDGET_LEVEL``.
    """
    tau = cap_tau(rel_tol)
    if not limits.PAIR_GAP_BUDGET or tau is None or up.size < 2:
        return None
    up = np.asarray(up, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(up > 0.0, cover(lo, up) / up - 1.0, 0.0)
    g_seg = np.maximum(g[:-1], g[1:])
    used = np.minimum((1.0 + g_seg) ** 2 - 1.0, tau)  # what cover's values take of the budget at the ends
    tgt = (limits.PAIR_BUDGET_SHARE * GOAL - used) / ESTIMATE_MARGIN
    tgt = np.clip(tgt, rel_tol, limits.PAIR_BUDGET_MAX * rel_tol)
    # near the export's floor main's own margin is spent (upper-first values looser than their neighbours' brackets
    # say, docs/composition.md §2.5): the segments whose larger end is below PAIR_BUDGET_LEVEL keep rel_tol
    return np.where(np.maximum(up[:-1], up[1:]) >= limits.PAIR_BUDGET_LEVEL, tgt, rel_tol)


__all__ = ["ESTIMATE_MARGIN", "applies", "segment_targets"]
