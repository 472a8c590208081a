"""Matrix argument checks for sharpdp.crlb. Every error names the parameter."""

from __future__ import annotations

from typing import Any

import numpy as np

from sharpdp._validation import real_array

# Relative tolerance for symmetry and for negative eigenvalues of a PSD matrix.
SYM_RTOL = 1e-9


def matrix(name: str, value: Any, rows: int | None = None, cols: int | None = None) -> np.ndarray:
    """A finite 2-D float64 array with optional fixed dimensions."""
    return real_array(name, value, ndim=2, shape=(rows, cols))


def _scale(a: np.ndarray) -> float:
    return max(float(np.abs(a).max()), 1e-300)


def symmetric(name: str, value: Any, size: int | None = None) -> np.ndarray:
    """A square matrix symmetric up to ``SYM_RTOL`` (relative to its largest entry); returns the symmetrised copy."""
    a = matrix(name, value, size, size)
    if a.shape == (1, 1):
        return a
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be square, got shape {a.shape}")
    if np.abs(a - a.T).max() > SYM_RTOL * _scale(a):
        raise ValueError(f"{name} must be symmetric")
    return 0.5 * (a + a.T)


def psd(name: str, value: Any, size: int | None = None) -> np.ndarray:
    """A symmetric positive semidefinite matrix (eigenvalues >= -SYM_RTOL * largest |eigenvalue|)."""
    a = symmetric(name, value, size)
    if a.shape == (1, 1):  # scalar fast path (one measurement per step)
        if a[0, 0] < 0:
            raise ValueError(f"{name} must be positive semidefinite (got {a[0, 0]:.3g})")
        return a
    ev = np.linalg.eigvalsh(a)
    if ev[0] < -SYM_RTOL * max(abs(ev[-1]), abs(ev[0]), 1e-300):
        raise ValueError(f"{name} must be positive semidefinite (smallest eigenvalue {ev[0]:.3g})")
    return a


def pd(name: str, value: Any, size: int | None = None) -> np.ndarray:
    """A symmetric positive definite matrix (condition number below 1e12)."""
    a = symmetric(name, value, size)
    if a.shape == (1, 1):
        if not a[0, 0] > 0:
            raise ValueError(f"{name} must be positive definite (got {a[0, 0]:.3g})")
        return a
    ev = np.linalg.eigvalsh(a)
    if not ev[0] > 1e-12 * abs(ev[-1]):
        raise ValueError(f"{name} must be positive definite (eigenvalues in [{ev[0]:.3g}, {ev[-1]:.3g}])")
    return a


def psd_sqrt(a: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix (tiny negative eigenvalues clipped to 0)."""
    if a.shape == (1, 1):
        return np.sqrt(np.maximum(a, 0.0))
    ev, vec = np.linalg.eigh(a)
    return (vec * np.sqrt(np.clip(ev, 0.0, None))) @ vec.T


def psd_pinv(a: np.ndarray) -> np.ndarray:
    """Moore-Penrose inverse of a PSD matrix (same relative cut-off as the C++ core)."""
    if a.shape == (1, 1):  # one measurement per step: eigh gives ev = a, vec = +-1, so the same value
        ev1 = float(a[0, 0])
        return np.array([[1.0 / ev1 if ev1 > 1e-13 * max(abs(ev1), 1e-300) else 0.0]])
    ev, vec = np.linalg.eigh(a)
    tol = a.shape[0] * 1e-13 * max(float(np.max(np.abs(ev))), 1e-300)
    inv = np.where(ev > tol, 1.0 / np.where(ev > tol, ev, 1.0), 0.0)
    return (vec * inv) @ vec.T


def cross_term(name: str, U: Any, rows: int, S: np.ndarray) -> np.ndarray | None:
    """Validate U_k of recursion (16): shape (rows, m) and U_k = U_k S_k^+ S_k.

    Returns ``None`` when ``U`` is ``None`` or all zero (the O(1) path of Remark 23).
    """
    m = S.shape[0]
    if U is None:
        return None
    u = real_array(name, U, ndim=2, shape=(rows, m), allow_empty=True)
    if u.size == 0 or not u.any():
        return None
    proj = u @ psd_pinv(S) @ S
    if np.abs(proj - u).max() > 1e-8 * max(_scale(u), 1.0):
        raise ValueError(
            f"{name} must satisfy U_k = U_k S_k^+ S_k (its columns outside the range of S_k make the "
            "privacy level of recursion (16) invalid)"
        )
    return u
