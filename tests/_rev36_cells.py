"""Shared by session 36's review tests: a moved zero-out bracket checked against main's rel_tol-1e-3 bracket."""

from __future__ import annotations

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches


def check_overlaps_main_tight(cell: tuple[float, int, float], ref: tuple[float, float]) -> None:
    """GaussianRandomizer(s, 1), n, zero-out at eps (``cell``): the bracket never lies below main's tight lower value
    ``ref[0]`` (no under-report), overlaps ``ref``, and meets the accountant's rel_tol."""
    s, n, eps = cell
    ref_lo, ref_up = ref
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n)
    lo, up = acc.get_delta_bounds(eps)
    assert up >= ref_lo * (1 - 1e-12), (cell, lo, up, ref_lo)  # (never under-reports)
    assert lo <= ref_up * (1 + 1e-12), (cell, lo, up, ref_up)
    assert up - lo <= acc.rel_tol * lo, (cell, lo, up)
