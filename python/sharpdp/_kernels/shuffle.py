"""Numba kernels of the shuffle domain: tabulating and sampling user-supplied 1-D output densities.

Imported lazily by :class:`sharpdp.shuffle.GeneralRandomizer`. No fastmath: these values feed
quadrature and the privacy-amplification law.

The two public kernels take the user's densities as first-class functions of a fixed signature
(``float64(float64, float64)`` and ``float64(float64)``): they are compiled once per process, the
first time this module is imported, and each density is compiled on its own (a few hundredths of a
second) instead of the whole kernel again for every density (0.4-1.5 s each). The loops and the
floating-point operations are the same code either way (no fastmath, so LLVM may not reorder or
contract them across the call): the values are bit-identical to the specialised kernels. A density
that cannot be compiled to that signature (e.g. one with its own explicit float32 signature) falls
back to the same kernel body specialised on it, as before.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numba import types

_F64 = types.float64
_DENSITY = types.FunctionType(_F64(_F64, _F64))
_BLANKET = types.FunctionType(_F64(_F64))
_ARR = types.Array(types.float64, 1, "A", readonly=True)  # read only: accepts writable arrays too
_IDX = types.Array(types.int64, 1, "A", readonly=True)


def _eval_densities(density, blanket, inputs, points):
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


@nb.njit
def _partial_integral(density, x, a, y, t, w):
    """Gauss-Legendre (unit-rule nodes ``t`` on [-1, 1], weights ``w``) integral of density(., x) on [a, y]."""
    half = 0.5 * (y - a)
    mid = 0.5 * (y + a)
    s = 0.0
    for k in range(t.size):
        s += w[k] * density(mid + half * t[k], x)
    return half * s


def _sample_general(density, xs, starts, perm, edges, t, w, u_cell, u_in):
    """Inverse-CDF draws from the densities ``density(., xs[g])`` on the cells ``edges``.

    Samples ``perm[starts[g]:starts[g+1]]`` have input ``xs[g]``. For each input the cell masses
    are tabulated with the Gauss-Legendre rule (t, w); ``u_cell`` picks the cell, and inside it
    y solves Q[a, y] = u_in * Q[a, b] (the same rule on [a, y]) by safeguarded Newton steps (to 1e-13 of the cell width,
    or |residual| <= 1e-15 of the cell mass).
    Returns float64 of shape (len(perm),), in the order of the original samples.
    """
    ncell = edges.size - 1
    out = np.empty(perm.size)
    cum = np.empty(ncell + 1)
    for g in range(xs.size):
        x = xs[g]
        cum[0] = 0.0
        for c in range(ncell):
            m = _partial_integral(density, x, edges[c], edges[c + 1], t, w)
            if not (m >= 0.0) or not np.isfinite(m):
                raise ValueError("x: the density is negative or not finite for an input to be sampled")
            cum[c + 1] = cum[c] + m
        total = cum[ncell]
        if not total > 0.0:
            raise ValueError("x: the density has zero mass on the support for an input to be sampled")
        for j in range(starts[g], starts[g + 1]):
            i = perm[j]
            c = np.searchsorted(cum, u_cell[i] * total, side="right") - 1
            c = min(max(c, 0), ncell - 1)
            while c > 0 and cum[c + 1] - cum[c] <= 0.0:
                c -= 1
            a, b = edges[c], edges[c + 1]
            target = u_in[i] * (cum[c + 1] - cum[c])
            lo, hi = a, b
            # start from the root of the trapezoid-density CDF (stable quadratic formula)
            fa, fb, h = density(a, x), density(b, x), b - a
            y = a + u_in[i] * h
            if fa >= 0.0 and fb >= 0.0 and fa + fb > 0.0:
                tq = u_in[i] * 0.5 * h * (fa + fb)
                disc = fa * fa + 2.0 * (fb - fa) / h * tq
                if disc >= 0.0:
                    y = a + 2.0 * tq / (fa + math.sqrt(disc))
            tol = max(1e-13 * h, 4e-16 * (abs(a) + abs(b))) + 1e-300
            ftol = 1e-15 * (cum[c + 1] - cum[c])
            for _ in range(100):
                F = _partial_integral(density, x, a, y, t, w) - target
                if abs(F) <= ftol:
                    break
                if F > 0.0:
                    hi = y
                else:
                    lo = y
                f = density(y, x)
                if f > 0.0 and abs(F) <= tol * f:  # the Newton step is below the tolerance
                    y = min(max(y - F / f, a), b)
                    break
                yn = y - F / f if f > 0.0 else 0.5 * (lo + hi)
                if not (lo < yn < hi):
                    yn = 0.5 * (lo + hi)
                if hi - lo <= tol:
                    y = yn
                    break
                y = yn
            out[i] = y
    return out


_eval_fc = nb.njit(types.float64[:, ::1](_DENSITY, _BLANKET, _ARR, _ARR), cache=True)(_eval_densities)
_eval_any = nb.njit(_eval_densities)
_sample_fc = nb.njit(types.float64[::1](_DENSITY, _ARR, _IDX, _IDX, _ARR, _ARR, _ARR, _ARR, _ARR), cache=True)(_sample_general)
_sample_any = nb.njit(_sample_general)


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def eval_densities(density, blanket, inputs, points):
    """Table T[i, j] = density(points[j], inputs[i]) for each input i, and T[-1, j] = blanket(points[j]).

    ``density`` and ``blanket`` are Numba-compiled callables (float, float) -> float and
    float -> float. Returns float64 of shape (len(inputs) + 1, len(points)).
    """
    try:
        return _eval_fc(density, blanket, _f64(inputs), _f64(points))
    except (nb.core.errors.TypingError, TypeError):  # not compilable to the fixed signature
        return _eval_any(density, blanket, inputs, points)


def sample_general(density, xs, starts, perm, edges, t, w, u_cell, u_in):
    """Inverse-CDF draws from the densities ``density(., xs[g])`` on the cells ``edges`` (see the kernel below)."""
    try:
        return _sample_fc(density, _f64(xs), starts, perm, _f64(edges), _f64(t), _f64(w), _f64(u_cell), _f64(u_in))
    except (nb.core.errors.TypingError, TypeError):
        return _sample_any(density, xs, starts, perm, edges, t, w, u_cell, u_in)
