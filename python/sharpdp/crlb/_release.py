"""Floating-point-safe Gaussian releases of the CRLB mechanisms (docs/sampling.md §9).

A Gaussian mechanism ``z = theta + N(0, Sigma)`` with ``Sigma = L L^T`` (``L`` of shape (m, r), full
column rank r) is released as ``z = L xi'``, where ``xi'`` lies on the grid ``h Z^r``
(``h = 2^-grid_bits``): ``xi' = h (R + D)``, ``R`` the stochastic rounding of the whitened statistic
``w = L^+ theta`` onto ``Z^r / h`` (one 64-bit word per coordinate) and ``D`` i.i.d. rounded-Gaussian
integers ``round(Z / h)`` from the 128-bit table of :mod:`sharpdp._tables` (C++
``grid_gaussian_sample``). ``xi'`` is a post-processing of the Gaussian mechanism ``R + N(0, I)``
(unit variance per whitened coordinate); the final product by ``L`` is a float post-processing of a
grid value. :class:`GridRelease` states what this costs in privacy and accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import core_key, core_threads
from sharpdp._tables import rounded_gaussian_cdt

__all__ = ["DEFAULT_GRID_BITS", "MAX_GRID_BITS", "GridRelease", "grid_release", "release_gaussian", "whitener"]

DEFAULT_GRID_BITS = 12
"""Default grid of the whitened release: h = 2^-12 (noise table s = 4096, 53 312 entries, built
in about 1-4 s by the first process, then loaded from the disk cache, docs/sampling.md §4.1). docs/sampling.md §9.3 says why not finer."""

MAX_GRID_BITS = 14
"""Finest grid allowed: s = 2^14 gives a table of 213 246 entries (``_tables.MAX_TABLE_SIZE`` is 2^18)."""


def _up(x: float) -> float:
    return math.nextafter(x, math.inf)


def check_grid_bits(grid_bits: Any) -> int:
    """``grid_bits`` as an int in [0, MAX_GRID_BITS]; ``None`` means DEFAULT_GRID_BITS."""
    if grid_bits is None:
        return DEFAULT_GRID_BITS
    return V.integer("grid_bits", grid_bits, lo=0, hi=MAX_GRID_BITS)


@dataclass(frozen=True)
class GridRelease:
    """Privacy and accuracy cost of one whitened grid release of dimension ``dim`` (docs/sampling.md §9).

    All figures are per released vector (r = ``dim`` whitened coordinates, unit noise variance each).

    Attributes
    ----------
    dim : int
        Number r of whitened coordinates (the rank of the noise covariance).
    grid_bits : int
        k, the grid step is h = 2^-k (in whitened units, i.e. noise standard deviations).
    step : float
        h = 2^-k.
    sensitivity_charge : float
        h sqrt(r), rounded up: for a whitened L2 sensitivity Delta of the statistic (``||L^+ (theta - theta')||_2
        <= Delta`` for neighbouring data), each conditional release given the rounding words is a Gaussian
        mechanism (sigma = 1) of sensitivity < Delta + ``sensitivity_charge`` (§9.2).
    sampler_tv : float
        r eta_1, rounded up: total-variation distance between the sampled noise and exact rounded Gaussians
        (``CdtTable.tv_bound`` per coordinate); add ``(1 + e^eps) sampler_tv`` to delta per release (§9.4).
    fisher_factor : float
        (e^{h^2} - 1) / h^2, rounded up: the exact grid mechanism's Fisher information about the sensitive data
        is at most ``fisher_factor`` times the continuous one's, ``I_z(y) <= fisher_factor * S`` (§9.5).
    added_variance : float
        h^2 / 3 (h^2 / 4 from the rounding, h^2 / 12 from the rounded noise, Sheppard): the covariance of the
        release exceeds ``Sigma`` by at most ``added_variance * Sigma`` (§9.6).
    """

    dim: int
    grid_bits: int
    step: float
    sensitivity_charge: float
    sampler_tv: float
    fisher_factor: float
    added_variance: float

    def rho(self, sensitivity: float) -> float:
        """zCDP parameter of the exact grid release, ``(sensitivity + sensitivity_charge)^2 / 2``, rounded up.

        Parameters
        ----------
        sensitivity : float
            Whitened L2 sensitivity Delta >= 0 of the statistic (units: noise standard deviations).

        Returns
        -------
        float
            rho in nats (Bun and Steinke, *Concentrated Differential Privacy*, Proposition 1.6, applied to
            sensitivity Delta + h sqrt(r); the sampler's TV ``sampler_tv`` is not included: it enters delta).

        Raises
        ------
        ValueError
            If ``sensitivity`` is negative or not finite.
        """
        d = V.real("sensitivity", sensitivity, lo=0.0)
        return _up(_up(_up(d + self.sensitivity_charge) ** 2) / 2.0)

    def delta(self, epsilon: Any, sensitivity: float) -> Any:
        """delta(eps) of the released vector: Gaussian-mechanism profile at Delta + h sqrt(r), plus the sampler TV.

        ``gaussian_mechanism_delta(eps, 1, Delta + sensitivity_charge) + (1 + e^eps) sampler_tv`` (Balle and Wang,
        *Improving the Gaussian Mechanism for Differential Privacy*, Theorem 8; docs/sampling.md §9.4), rounded up.

        Parameters
        ----------
        epsilon : float or array_like of float
            eps >= 0 in nats.
        sensitivity : float
            Whitened L2 sensitivity Delta > 0.

        Returns
        -------
        float or numpy.ndarray
            Upper bound on delta(eps), same shape as ``epsilon``, at most 1.

        Raises
        ------
        ValueError, TypeError
            As :func:`sharpdp.conversions.gaussian_mechanism_delta`.
        """
        from sharpdp.conversions import gaussian_mechanism_delta

        d = V.real("sensitivity", sensitivity, lo=0.0, lo_open=True)
        base = gaussian_mechanism_delta(epsilon, 1.0, _up(d + self.sensitivity_charge))
        with np.errstate(over="ignore"):
            out = np.minimum(1.0, np.nextafter(base + (1.0 + np.exp(np.asarray(epsilon, float))) * self.sampler_tv,
                                               np.inf))
        return float(out) if np.ndim(out) == 0 else out


def grid_release(dim: int, grid_bits: int | None = None) -> GridRelease:
    """The cost figures of a whitened grid release of ``dim`` coordinates (:class:`GridRelease`).

    Parameters
    ----------
    dim : int
        Number of whitened coordinates (>= 0), the rank of the noise covariance.
    grid_bits : int, optional
        k in [0, 14]; default 12 (``DEFAULT_GRID_BITS``).

    Returns
    -------
    GridRelease

    Raises
    ------
    ValueError
        ``dim`` < 0 or ``grid_bits`` outside [0, 14].
    """
    r = V.integer("dim", dim, lo=0)
    k = check_grid_bits(grid_bits)
    h = math.ldexp(1.0, -k)
    eta = rounded_gaussian_cdt(math.ldexp(1.0, k)).tv_bound
    return GridRelease(
        dim=r,
        grid_bits=k,
        step=h,
        sensitivity_charge=_up(h * math.sqrt(r)),
        sampler_tv=_up(r * eta),
        fisher_factor=_up(_up(math.expm1(h * h) / (h * h))),
        added_variance=h * h / 3.0,  # exact: h^2 a power of 2, / 3 correctly rounded; the bound is loose anyway
    )


def whitener(name: str, Sigma: np.ndarray) -> np.ndarray:
    """``L`` of shape (m, r) with ``L L^T = Sigma`` on its range (eigenvalues above the ``psd_pinv`` cut-off).

    ``L = V_r Lambda_r^{1/2}`` from the eigendecomposition; directions with eigenvalue at or below
    ``m 1e-13 max|eigenvalue|`` are dropped (no noise and no signal released there: ``L L^T <= Sigma``
    up to rounding, a lower privacy level).
    """
    if Sigma.shape == (1, 1):
        v = float(Sigma[0, 0])
        return np.sqrt(Sigma) if v > 0 else np.zeros((1, 0))
    ev, vec = np.linalg.eigh(Sigma)
    tol = Sigma.shape[0] * 1e-13 * max(float(np.max(np.abs(ev))), 1e-300)
    keep = ev > tol
    if not np.all(np.isfinite(ev)):  # pragma: no cover - inputs are checked finite
        raise ValueError(f"{name}: eigendecomposition failed")
    return vec[:, keep] * np.sqrt(ev[keep])


def release_gaussian(w: np.ndarray, L: np.ndarray, *, grid_bits: int | None, rng: Any, threads: Any) -> np.ndarray:
    """``L (grid release of w)``: w of shape (..., r) whitened statistics, L (m, r); returns shape (..., m).

    The grid values ``h (R + D)`` are exact multiples of h = 2^-grid_bits (C++ ``grid_gaussian_sample``);
    ``rng`` gives the ChaCha20 key (:func:`sharpdp._rng.core_key`: ``None`` = OS entropy), ``threads``
    the worker count (the output never depends on it).

    Raises
    ------
    ValueError
        If some ``|w_i| >= 2^(52 - grid_bits)`` (the statistic is too large for the grid).
    """
    from sharpdp._core_loader import core

    k = check_grid_bits(grid_bits)
    th = core_threads(threads)
    key = core_key(rng)
    flat = np.ascontiguousarray(w, dtype=float).reshape(-1)
    limit = math.ldexp(1.0, 52 - k)
    if flat.size and not np.abs(flat).max() < limit:
        raise ValueError(f"the whitened statistic has a value of magnitude >= 2^{52 - k} = {limit:.3g} noise standard "
                         "deviations: too large for the grid (lower grid_bits or centre the data)")
    if flat.size == 0:
        xi = flat
    else:
        t = rounded_gaussian_cdt(math.ldexp(1.0, k))
        xi = core.samplers.grid_gaussian_sample(flat, k, t.hi, t.lo, t.guide, key, th)
    return xi.reshape(np.shape(w)) @ L.T
