"""Argument checks shared by all domains. Every error names the parameter."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def real(name: str, value: Any, *, lo: float | None = None, hi: float | None = None,
         lo_open: bool = False, hi_open: bool = False, allow_inf: bool = False) -> float:
    """Validate a real scalar in an interval and return it as float.

    Raises ``TypeError`` for non-numbers and ``ValueError`` (naming ``name``)
    for NaN, infinities (unless ``allow_inf``) and values outside the interval.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value.item()
        else:
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must not be NaN")
    if math.isinf(v) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {v}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {v}")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError(f"{name} must be {'<' if hi_open else '<='} {hi}, got {v}")
    return v


def integer(name: str, value: Any, *, lo: int | None = None, hi: int | None = None) -> int:
    """Validate an integer scalar (floats with integral value are accepted)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got bool")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"{name} must be an integer, got {value}")
        value = int(value)
    if not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if lo is not None and v < lo:
        raise ValueError(f"{name} must be >= {lo}, got {v}")
    if hi is not None and v > hi:
        raise ValueError(f"{name} must be <= {hi}, got {v}")
    return v


def real_array(name: str, value: Any, *, ndim: int | None = None, shape: tuple[int | None, ...] | None = None,
               lo: float | None = None, hi: float | None = None, allow_empty: bool = False) -> np.ndarray:
    """Validate an array of reals: C-contiguous float64, finite, optional shape and bounds.

    Complex input (which numpy would cast by dropping the imaginary part) is a TypeError.
    """
    try:
        raw = np.asarray(value)
        if raw.dtype.kind == "c":
            raise TypeError(f"{name} must be an array of real numbers, got complex values")
        if raw.dtype.kind in "USVM":
            raise TypeError(f"{name} must be an array of real numbers, got dtype {raw.dtype}")
        arr = np.ascontiguousarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, TypeError) and str(exc).startswith(name):
            raise
        raise TypeError(f"{name} must be an array of real numbers") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    if not np.isfinite(arr).all():  # (the method: np.all's dispatch costs more than the check on small arrays)
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    if lo is not None and arr.size and arr.min() < lo:
        raise ValueError(f"{name} must be >= {lo} everywhere, found {arr.min()}")
    if hi is not None and arr.size and arr.max() > hi:
        raise ValueError(f"{name} must be <= {hi} everywhere, found {arr.max()}")
    return arr


def pair_like(arr: np.ndarray, lo: np.ndarray, up: np.ndarray) -> tuple[Any, Any]:
    """(lo, up) computed on ``arr.ravel()`` back in ``arr``'s shape: floats for a 0-d ``arr``."""
    if arr.ndim == 0:
        return float(lo[0]), float(up[0])
    return lo.reshape(arr.shape), up.reshape(arr.shape)


def epsilon_values(name: str, value: Any) -> np.ndarray:
    """Validate privacy-loss arguments (nats, any sign, scalar or array, +-inf allowed).

    Returns a float64 array of the input's shape. ``TypeError`` (naming ``name``) for text,
    complex, boolean or other non-real input; ``ValueError`` for NaN.
    """
    if isinstance(value, (bool, np.bool_, str, bytes)) or value is None:
        raise TypeError(f"{name} must be a real number or an array of real numbers, got {type(value).__name__}")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real number or an array of real numbers") from exc
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number or an array of real numbers, got dtype {raw.dtype}")
    arr = raw.astype(np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN")
    return arr


def probability_open(name: str, value: Any) -> float:
    """A probability strictly inside (0, 1), e.g. a target delta."""
    return real(name, value, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
