"""Numba kernels of the shuffle domain: tabulating user-supplied 1-D output densities.

Imported lazily by :class:`sharpdp.shuffle.GeneralRandomizer`. No fastmath: these values feed
quadrature and the privacy-amplification law.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit
def eval_densities(density, blanket, inputs, points):
    """Table T[i, j] = density(points[j], inputs[i]) for each input i, and T[-1, j] = blanket(points[j]).

    ``density`` and ``blanket`` are Numba-compiled callables (float, float) -> float and
    float -> float. Returns float64 of shape (len(inputs) + 1, len(points)).
    """
    m = inputs.size
    out = np.empty((m + 1, points.size))
    for j in range(points.size):
        y = points[j]
        for i in range(m):
            out[i, j] = density(y, inputs[i])
        out[m, j] = blanket(y)
    return out


def gauss_legendre_nodes(edges: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes and weights on the cells [edges[c], edges[c+1]].

    Returns (nodes, weights), each of shape (ncells * order,), ordered cell by cell.
    """
    x, w = np.polynomial.legendre.leggauss(order)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    nodes = (mid[:, None] + half[:, None] * x[None, :]).reshape(-1)
    weights = (half[:, None] * w[None, :]).reshape(-1)
    return nodes, weights
