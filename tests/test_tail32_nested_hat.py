"""docs/accountant_tail.md §39.3: the hat law at step h is the hat rounding, at step h, of the hat law at step h/2.

The hat rounding of A §3.2 moves l in [x_j, x_j + h] to x_j + h with probability (l - x_j)/h: linear interpolation
between the nodes. On nested lattices (h/2)Z within hZ the coarse interpolation is the fine one followed by a fair
coin at every odd fine node (the coarse hat functions are sums of fine ones), so in exact arithmetic

    g_h[j] = g_{h/2}[2j] + (g_{h/2}[2j - 1] + g_{h/2}[2j + 1]) / 2,

and the per-user mean is preserved while the variance grows by exactly (h/2)^2 P(odd fine node). The test builds
both lattice laws independently with ``lattice_laws`` (different fine cells: widths h/4 and h/8) and checks the
identity within the laws' error bounds ``eta`` and 1e-10 relative for the cells' moment errors (and the moment identities with a rounding margin), on
the law of the regime map's BMG cell n = 1e8, eps = 0.01 where §39 measures the hat's bias."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle import BlanketMixedGaussian
from sharpdp.shuffle.accountant.lattice import lattice_laws
from sharpdp.shuffle.laws import laws_for

from _review_scan import hat_merge


def _cell_law():
    gamma, law = laws_for(BlanketMixedGaussian(0.039943127470521624, 0.5276147158804813, 1), 0.01, "zero_out")[0]
    return float(gamma), law.shifted(up=True)


def test_coarse_hat_is_the_hat_of_the_fine_hat():
    gamma, law = _cell_law()
    h, T, B = 0.7734375, 22176.0, 792.0  # the cell's first body step and clamps (§37.2)
    coarse = lattice_laws(law, gamma, h, T, B, lower=False)
    fine = lattice_laws(law, gamma, h / 2, T, B, lower=False)
    assert fine.g.size == 2 * coarse.g.size - 1 and fine.kB == 2 * coarse.kB
    merged = hat_merge(fine.g)
    # eta bounds the mass errors; the cells' moment errors (relative up to ~1.3e-11 in the far tail here) are an upward shift of the hat law
    # that eta leaves out (A §3.2): 1e-10 relative covers them
    tol = coarse.eta + hat_merge(fine.eta) + 1e-10 * (coarse.g + merged)
    diff = np.abs(coarse.g - merged)
    assert np.all(diff <= tol), float(np.max(diff - tol))
    # not vacuous: the merge of a shifted fine law breaks the identity far beyond the error bounds
    assert np.max(np.abs(coarse.g - hat_merge(np.roll(fine.g, 1))) - tol) > 1e-6


def test_mean_kept_variance_grows_by_the_odd_nodes():
    gamma, law = _cell_law()
    h, T, B = 0.7734375, 22176.0, 792.0
    coarse = lattice_laws(law, gamma, h, T, B, lower=False)
    fine = lattice_laws(law, gamma, h / 2, T, B, lower=False)
    xc = (coarse.k0 + np.arange(coarse.g.size)) * h
    xf = (fine.k0 + np.arange(fine.g.size)) * (h / 2)
    mc, mf = math.fsum(coarse.g * xc), math.fsum(fine.g * xf)
    span = T + B
    err = span * (float(coarse.eta.sum()) + float(fine.eta.sum())) + 1e-12 * span
    assert abs(mc - mf) <= err
    vc = math.fsum(coarse.g * (xc - mc) ** 2)
    vf = math.fsum(fine.g * (xf - mf) ** 2)
    odd = math.fsum(fine.g[1::2])
    added = (h / 2) ** 2 * odd
    assert added > 0.01 * gamma * h * h  # (the active users spread over the odd nodes too)
    assert abs((vc - vf) - added) <= 2 * span * span * (float(coarse.eta.sum()) + float(fine.eta.sum())) \
        + 1e-9 * vc
