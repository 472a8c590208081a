"""Helpers shared by the review files that scan accountant cells against pinned reference brackets.

A cell key is ``(spec, n, adjacency, eps)`` with ``spec`` ``("G", sigma0, _)`` (``GaussianRandomizer(sigma0, 1)``) or
``("B", gamma, sigma0)`` (``BlanketMixedGaussian(gamma, sigma0, 1)``); a reference is a certified bracket
``(lower, upper)`` of the same delta.
"""

from __future__ import annotations

import numpy as np

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches


def rand(spec):
    """The randomizer of a cell key's ``spec``."""
    kind, a, b = spec
    return GaussianRandomizer(a, 1) if kind == "G" else BlanketMixedGaussian(a, b, 1)


def bracket(spec, n, adj, eps, rel_tol=None):
    """A fresh (caches cleared) ``get_delta_bounds(eps)`` of the cell, as floats."""
    clear_caches()
    kw = {} if rel_tol is None else {"rel_tol": rel_tol}
    lo, up = ShuffleAccountant(rand(spec), n, adj, **kw).get_delta_bounds(eps)
    return float(lo), float(up)


def brackets_missing(ref, rel_tol=None):
    """The cells of ``ref`` whose bracket does not meet the reference bracket (two certified brackets of one value
    must intersect), or is not ordered."""
    bad = []
    for (spec, n, adj, eps), (rlo, rup) in ref.items():
        lo, up = bracket(spec, n, adj, eps, rel_tol)
        if not (0.0 <= lo <= up and up >= rlo and lo <= rup):
            bad.append((spec, n, adj, eps, lo, up, rlo, rup))
    return bad


def floats_differing(ref):
    """The cells of ``ref`` whose bracket is not the reference's (bit for bit on the machine that recorded it; to
    ``_main_floats34.MACHINE_REL`` on another: session 42)."""
    from _main_floats34 import machine_same

    bad = []
    for (spec, n, adj, eps), want in ref.items():
        got = bracket(spec, n, adj, eps)
        if not machine_same(tuple(got), tuple(want)):
            bad.append((spec, n, adj, eps, got, want))
    return bad


def hat_merge(fine: np.ndarray) -> np.ndarray:
    """The hat rounding at step h of a pmf on the nodes of step h/2 (node 0 even; both lattices start at the same
    node): even nodes kept, each odd node's mass split half and half to its two neighbours (docs/accountant_tail.md
    §39, Lemma 39.1)."""
    out = fine[0::2].copy()
    odd = fine[1::2]
    out[: odd.size] += 0.5 * odd
    out[1: odd.size + 1] += 0.5 * odd
    return out
