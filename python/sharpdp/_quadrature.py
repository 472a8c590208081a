"""Gauss-Legendre rules shared by every domain (the one place that builds them).

A shared service below the domains: imports numpy only.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["composite_gauss_legendre", "gauss_legendre"]


@functools.lru_cache(maxsize=64)
def _rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(n)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the n-point Gauss-Legendre rule on [-1, 1].

    Parameters
    ----------
    n : int
        Number of nodes, n >= 1.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        float64 nodes (increasing) and weights, each of shape (n,); read-only (cached), the same
        values as :func:`numpy.polynomial.legendre.leggauss`.

    Raises
    ------
    ValueError
        If n < 1.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return _rule(n)


def composite_gauss_legendre(edges: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes and weights on the cells [edges[c], edges[c+1]].

    Parameters
    ----------
    edges : numpy.ndarray of float64, shape (ncells + 1,)
        Increasing cell edges.
    order : int
        Nodes per cell, >= 1.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Nodes and weights, each float64 of shape (ncells * order,), ordered cell by cell.
    """
    x, w = gauss_legendre(order)
    edges = np.asarray(edges, dtype=np.float64)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[1:] + edges[:-1])
    nodes = (mid[:, None] + half[:, None] * x[None, :]).reshape(-1)
    weights = (half[:, None] * w[None, :]).reshape(-1)
    return nodes, weights
