"""The shifted-log Gaussian mechanism for count-dependent zCDP histograms.

Source: "Better Privacy Guarantees for Larger Groups", sections 3-5 and 8.
All logarithms are natural; budgets v(n) are zCDP parameters (nats per Renyi order);
epsilon is in nats.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any

import numpy as np
from scipy.special import erfinv

from sharpdp import _validation as V

#: Names of the per-count (epsilon, delta) conversions accepted by ``epsilon(..., method=)``.
EPSILON_METHODS = ("gaussian", "cks20", "bun_steinke")

# Counts must be exactly representable integers in float64.
_MAX_COUNT = float(2**53)


def _as_float_counts(name: str, counts: Any) -> np.ndarray:
    try:
        arr = np.asarray(counts)
    except Exception as exc:  # pragma: no cover - exotic objects
        raise TypeError(f"{name} must be an array of non-negative integers") from exc
    if arr.dtype == object and arr.size and all(isinstance(v, int) and not isinstance(v, bool) for v in arr.flat):
        # Python ints beyond int64 (e.g. 10**20): numeric, so the range check names them
        bad = next(v for v in arr.flat if not 0 <= v < 2**53)
        raise ValueError(f"{name} must hold non-negative integers < 2**53 (exact in float64), got {bad}")
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of non-negative integers, got dtype {arr.dtype}")
    return np.asarray(arr, dtype=np.float64, order="C")  # keeps 0-d shapes (ascontiguousarray does not)


def validate_counts(name: str, counts: Any) -> np.ndarray:
    """Non-negative integer counts as a float64 array (any shape, may be empty).

    Raises
    ------
    TypeError
        If ``counts`` is not numeric.
    ValueError
        If any entry is NaN, infinite, negative, non-integral or >= 2**53 (the
        message names ``name``).
    """
    arr = _as_float_counts(name, counts)
    if arr.size:
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite (found NaN or inf)")
        if arr.min() < 0:
            raise ValueError(f"{name} must be >= 0, found {arr.min()}")
        if np.any(arr != np.floor(arr)):
            raise ValueError(f"{name} must be integers, found a non-integer value")
        if arr.max() >= _MAX_COUNT:
            raise ValueError(f"{name} must be < 2**53")
    return arr


# Upward rounding factor for mu(n) and v(n). Computing mu(n) = log1p(1/(m - 1 + c))/sigma in
# double precision takes four correctly rounded or <= 1-ulp steps (m - 1 + c; 1/x; log1p,
# whose condition number x/((1 + x) log1p(x)) is <= 1; /sigma): relative error <= 5 u with
# u = 2^-53 (1 ulp <= 2u). v = mu^2/2 then has relative error <= 11 u. Multiplying by
# 1 + 2^-47 = 1 + 64 u (an exact double) and rounding once more leaves a value >= the exact
# one: (1 - 11u)(1 + 64u)(1 - u) > 1. The excess is below 1e-14 relative.
_ROUND_UP = 1.0 + 2.0**-47


def _edge_mu(n: np.ndarray, c: float, sigma: float) -> np.ndarray:
    """Gaussian-shift parameter mu(n) = log((n + c)/(n - 1 + c))/sigma of edge n-1 <-> n (n >= 1).

    n = 0 is mapped to n = 1 (the convention v(0) = v(1) of eq. 5). Rounded up: never below
    the exact value for the given (double) c and sigma (see ``_ROUND_UP``).
    """
    return _edge_mu_nearest(n, c, sigma) * _ROUND_UP


def _edge_mu_nearest(n: np.ndarray, c: float, sigma: float) -> np.ndarray:
    """mu(n) as computed (relative error <= 5 u, either direction)."""
    m = np.maximum(n, 1.0)
    return np.log1p(1.0 / (m - 1.0 + c)) / sigma


@functools.lru_cache(maxsize=1 << 14)
def _edge_epsilon(u: float, delta: float) -> float:
    """Gaussian-profile epsilon of one shift u > 0 at delta (safe side); memoised (a pure function of
    two doubles: the same value as recomputing it, about a millisecond saved per repeated edge)."""
    from sharpdp.conversions import gaussian_mechanism_epsilon, zcdp_to_epsilon

    e = gaussian_mechanism_epsilon(delta, 1.0, u)
    # For tiny shifts (counts ~1e12 and up) the certified double-precision profile cannot
    # resolve delta and its search ends at inf; the zCDP conversion of the same Gaussian
    # (v = mu^2/2, rounded up) is also a valid upper bound on epsilon: keep the smaller.
    return min(e, zcdp_to_epsilon(0.5 * u * u * _ROUND_UP, delta))


def _epsilon_from_mu(mu: np.ndarray, delta: float) -> np.ndarray:
    """Exact Gaussian-profile epsilon for each shift mu (safe side), mu >= 0."""
    # mu is already rounded up (_edge_mu); a larger mu only increases epsilon.
    uniq, inv = np.unique(mu, return_inverse=True)
    d = float(delta)
    eps = [0.0 if u == 0.0 else _edge_epsilon(u, d) for u in uniq.tolist()]
    return np.array(eps)[inv].reshape(mu.shape)


def _epsilon_from_budget(v: np.ndarray, delta: float, method: str) -> np.ndarray:
    from sharpdp.conversions import zcdp_to_epsilon, zcdp_to_epsilon_bun_steinke

    conv = zcdp_to_epsilon if method == "cks20" else zcdp_to_epsilon_bun_steinke
    uniq, inv = np.unique(v, return_inverse=True)  # v is already rounded up (budget)
    eps = np.array([conv(float(u), delta) for u in uniq])
    return eps[inv].reshape(v.shape)


def _check_method(method: str) -> str:
    if method not in EPSILON_METHODS:
        raise ValueError(f"method must be one of {EPSILON_METHODS}, got {method!r}")
    return method


def _scalar_or_array(arr: np.ndarray, like: Any) -> Any:
    return float(arr.reshape(-1)[0]) if np.ndim(like) == 0 else arr


#: Bounds of ``grid_bits`` (grid step 2^-grid_bits), those of the C++ kernel.
GRID_BITS_RANGE = (0, 60)


def default_grid_bits(r: float, r0: float) -> int:
    """Default grid exponent k (step g = 2^-k) of the release: the smallest k >= 10 with g <= (r - r0)/8.

    Rounding to the grid moves a release by at most g/2, and r max(n, 1) - E|x_hat - n| >= r - r0
    at every count (eq. 9), so the grid uses at most 1/16 of the utility slack
    (docs/histogram_release.md §2). Capped at 60.
    """
    k = max(10, math.ceil(math.log2(8.0 / (r - r0))))
    return min(k, GRID_BITS_RANGE[1])


def _check_grid_bits(grid_bits: Any) -> int:
    if isinstance(grid_bits, (bool, np.bool_)) or not isinstance(grid_bits, (int, np.integer)):
        raise TypeError(f"grid_bits must be an int, got {type(grid_bits).__name__}")
    lo, hi = GRID_BITS_RANGE
    if not lo <= int(grid_bits) <= hi:
        raise ValueError(f"grid_bits must be in [{lo}, {hi}], got {grid_bits}")
    return int(grid_bits)


class ShiftedLogGaussian:
    r"""Shifted-log Gaussian mechanism ("Better Privacy Guarantees for Larger Groups", Theorem 3.1 and eq. 4).

    Each count :math:`n` is released as

    .. math:: \hat x = [(n + c)\exp(\sigma Z - \sigma^2) - c]_+,\qquad Z\sim\mathcal N(0,1),

    with :math:`\sigma = \Phi^{-1}(1/2 + r_0/(2(1+c)))` (eq. 3). It meets the repaired utility
    requirement :math:`E|\hat x - n| \le r_0(n+c)/(1+c) < r\max(n, 1)` (eq. 2 and 9) and
    count-dependent group-wise zCDP with budget v(n) of eqs. (5)-(6), v(n) = O(n^-2).

    Parameters
    ----------
    r : float
        Target relative expected absolute error, in (0, 1].
    r0 : float or None, default None
        Design slack, 0 < r0 < r. The default is ``r / 2``, the choice in the proof of the
        paper's Theorem 1.1: it keeps a factor-two safety margin on the strict utility
        inequality. v(n) scales roughly like 1/r0^2, so callers who want the smallest budget
        for a given r should pass r0 close to r (the guarantee stays strict for any r0 < r).
        With ``r = 1`` and ``r0=None`` the mechanism is the data-independent release of
        Proposition 2.3 (see Notes).
    c : float, default 1.0
        Shift 0 < c <= 1e12 (Corollary 3.2's default c = 1; the cap keeps eq. 4 accurate in
        double precision). Smaller c gives a larger sigma and a
        smaller large-count budget but a larger boundary budget v(1) (section 5.1).
    grid_bits : int or None, default None
        Output grid of :meth:`release`: step g = 2^-grid_bits near 0, relative step <= 2^-30
        from 2^31 g on (docs/histogram_release.md §2). None: :func:`default_grid_bits` (at
        least 10; g <= (r - r0)/8). Range [0, 60].

    Attributes
    ----------
    r, r0, c : float
        The parameters (``r0`` is None for the data-independent release).
    sigma : float
        Log-space noise standard deviation (eq. 3); ``math.inf`` for the data-independent
        release.
    data_independent : bool
        True for Proposition 2.3's release (r = 1, r0 = None).
    grid_bits : int or None
        The release grid's exponent (None for the data-independent release).

    Raises
    ------
    ValueError
        If r is not in (0, 1], r0 not in (0, r), c not finite and > 0, or any is NaN, or r0 so
        small against 1 + c that sigma underflows (r0/(1 + c) below ~1e-308).

    Notes
    -----
    *Data-independent release (r = 1).* Proposition 2.3: releasing the constant 1/2 has
    E|1/2 - n| = 1/2 < 1 at n = 0 and n - 1/2 < n at n >= 1, so it meets eq. (2) strictly at
    every count, and since its law does not depend on the data every Renyi divergence is 0:
    v = 0 identically (epsilon = 0 at every delta). With ``integer=True`` the constant is
    stochastically rounded to 0 or 1 (still data independent, same expected errors).

    *Floating point.* :meth:`release` does not compute eq. (4) in floating point (such a
    release leaks through its low-order bits: values possible under n but not under n + 1).
    It releases the grid value nearest to the real-valued eq. (4) output, sampled exactly
    from that value's law by inversion with verified error bounds
    (docs/histogram_release.md): a post-processing of the certified mechanism, so every
    figure above (budget, epsilon) holds for the released values as they are.
    """

    def __init__(self, r: float, r0: float | None = None, c: float = 1.0, grid_bits: int | None = None) -> None:
        self.r = V.real("r", r, lo=0.0, hi=1.0, lo_open=True)
        # c <= 1e12 keeps the cancellation in (n + c) e^x - c below ~1e-4 counts in float64
        self.c = V.real("c", c, lo=0.0, hi=1e12, lo_open=True)
        self.data_independent = self.r == 1.0 and r0 is None
        if self.data_independent:
            self.r0 = None
            self.sigma = math.inf
            self.grid_bits = None if grid_bits is None else _check_grid_bits(grid_bits)
            return
        self.r0 = self.r / 2.0 if r0 is None else V.real("r0", r0, lo=0.0, hi=self.r, lo_open=True, hi_open=True)
        self.grid_bits = default_grid_bits(self.r, self.r0) if grid_bits is None else _check_grid_bits(grid_bits)
        # eq. (3) as sqrt(2) erfinv(r0/(1 + c)): same value, but no rounding of 1/2 + tiny
        self.sigma = float(math.sqrt(2.0) * erfinv(self.r0 / (1.0 + self.c)))
        if not self.sigma >= sys.float_info.min:  # 0 or subnormal: r0/(1 + c) underflows
            raise ValueError(f"r0 is too small for c: sigma = sqrt(2) erfinv(r0/(1 + c)) = {self.sigma!r} is not a "
                             f"normal float (r0/(1 + c) must be >= ~1e-308), got r0={self.r0!r}, c={self.c!r}")

    def __repr__(self) -> str:
        if self.data_independent:
            return "ShiftedLogGaussian(r=1.0)  # data-independent release, v = 0"
        return (f"ShiftedLogGaussian(r={self.r!r}, r0={self.r0!r}, c={self.c!r}, grid_bits={self.grid_bits!r}; "
                f"sigma={self.sigma:.6g})")

    # ------------------------------------------------------------------ budgets
    def budget(self, n: Any) -> Any:
        """Count-dependent zCDP budget v(n), eqs. (5)-(6) (Corollary 3.2 for c = 1).

        v(n) = log^2((n + c)/(n - 1 + c)) / (2 sigma^2) for n >= 1 and v(0) = v(1); it bounds both
        Renyi directions across the edge n-1 <-> n at every order alpha > 1 by alpha v(n).

        Parameters
        ----------
        n : int or array_like of int
            Counts >= 0, any shape.

        Returns
        -------
        float or numpy.ndarray of float64
            v(n) >= 0 in nats, same shape as ``n``; nonincreasing in n; 0 for the
            data-independent release. Rounded up: never below the exact v(n) for the
            mechanism's (double) ``c`` and ``sigma``, and above it by less than 1e-14 relative.

        Raises
        ------
        ValueError, TypeError
            If ``n`` has negative, non-integer, NaN or infinite entries.
        """
        arr = validate_counts("n", n)
        if self.data_independent:
            return _scalar_or_array(np.zeros_like(arr), n)
        mu = _edge_mu_nearest(arr, self.c, self.sigma)
        return _scalar_or_array(0.5 * mu * mu * _ROUND_UP, n)  # rounded up (see _ROUND_UP)

    def edge_mu(self, n: Any) -> Any:
        """Gaussian-shift parameter of the edge n-1 <-> n in log space (eq. 10).

        mu(n) = |log((n + c)/(n - 1 + c))| / sigma, with mu(0) = mu(1); v(n) = mu(n)^2 / 2.
        Same shapes and errors as :meth:`budget`.
        """
        arr = validate_counts("n", n)
        if self.data_independent:
            return _scalar_or_array(np.zeros_like(arr), n)
        return _scalar_or_array(_edge_mu(arr, self.c, self.sigma), n)

    def expected_abs_error(self, n: Any) -> Any:
        """Exact pre-clipping expected absolute error (eq. 9): (n + c) r0 / (1 + c).

        Clipping and stochastic rounding do not increase it; the grid of :meth:`release` adds at
        most g/2 + 2^-31 (n + c) (g = 2^-grid_bits; pointwise max(g/2, 2^-31 v),
        docs/histogram_release.md §2), which the default grid keeps below 1/16 of the utility
        slack r - r0. For the data-independent release it is the exact |n - 1/2|.

        Returns
        -------
        float or numpy.ndarray of float64
            Same shape as ``n``, in count units.
        """
        arr = validate_counts("n", n)
        if self.data_independent:
            return _scalar_or_array(np.abs(arr - 0.5), n)
        return _scalar_or_array((arr + self.c) * self.r0 / (1.0 + self.c), n)

    def epsilon(self, n: Any, delta: float, method: str = "gaussian") -> Any:
        """Per-count epsilon at ``delta`` for a member of a group of count n.

        Conversions (``method``):

        - ``"gaussian"`` (default, tightest): before clipping each edge n-1 <-> n is exactly a
          Gaussian shift with mu(n) = log((n + c)/(n - 1 + c))/sigma in log space (eq. 10), so
          the exact Gaussian privacy profile (Balle & Wang 2018, via
          :func:`sharpdp.conversions.gaussian_mechanism_epsilon`) applies; clipping and
          rounding are post-processing. Where the certified double-precision profile cannot
          resolve delta (mu below ~1e-9, i.e. counts above ~1e9 at r = 0.1), the smaller
          ``"cks20"`` value of the same edge is returned (also a valid upper bound).
        - ``"cks20"``: :func:`sharpdp.conversions.zcdp_to_epsilon` applied to v(n).
        - ``"bun_steinke"``: v(n) + 2 sqrt(v(n) log(1/delta))
          ("Better Privacy Guarantees for Larger Groups", Section 5.1).

        n = 0 uses the edge 0 <-> 1 (a person joining an empty group). Every value is rounded
        to the safe side (never below the exact epsilon of the chosen conversion). The value
        covers what :meth:`release` samples (an exact post-processing, docs/histogram_release.md).
        Cost: one numerical inversion per
        distinct count (about a millisecond each).

        Parameters
        ----------
        n : int or array_like of int
            Counts >= 0, any shape.
        delta : float
            Target delta in (0, 1).
        method : {"gaussian", "cks20", "bun_steinke"}

        Returns
        -------
        float or numpy.ndarray of float64
            epsilon >= 0 in nats, same shape as ``n``; 0 for the data-independent release.

        Raises
        ------
        ValueError
            Bad ``n``, ``delta`` not in (0, 1), or unknown ``method``.
        """
        arr = validate_counts("n", n)
        delta = V.probability_open("delta", delta)
        _check_method(method)
        if self.data_independent:
            return _scalar_or_array(np.zeros_like(arr), n)
        if method == "gaussian":
            eps = _epsilon_from_mu(_edge_mu(arr, self.c, self.sigma), delta)
        else:
            eps = _epsilon_from_budget(np.asarray(self.budget(arr), dtype=float), delta, method)
        return _scalar_or_array(eps, n)

    # ------------------------------------------------------------------ release
    def release(self, counts: Any, rng: Any = None, integer: bool = False, *, threads: int | None = None,
                grid_bits: int | None = None) -> np.ndarray:
        """Release counts with eq. (4), clipped at 0, on a grid, sampled exactly (optionally rounded).

        Each count n is released as the grid value nearest to v = [(n + c) exp(sigma Z - sigma^2)
        - c]_+ (grid of :attr:`grid_bits`: step g near 0, relative step <= 2^-30 above 2^31 g),
        drawn from the exact law of that grid value by inversion with verified error bounds
        (docs/histogram_release.md §3-§5): a post-processing of the real-valued mechanism, so
        its budget and epsilon hold as they are. No floating-point rounding mixes the count
        with the noise.
        |release - v| <= max(g/2, 2^-31 v) before the optional rounding.

        Parameters
        ----------
        counts : array_like of int
            True counts >= 0 (integers, < 2**53), any shape (may be empty).
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the 256-bit ChaCha20 key of the C++ sampler (docs/sampling.md); None (the
            default, and the only private choice unless the seed is secret) draws it from OS
            entropy. The output depends only on the key, never on ``threads``.
        integer : bool, default False
            If True, round each grid value y to floor(y) + Bernoulli(y - floor(y)) with an
            independent uniform word (exact: y is dyadic), which keeps the mean of y; the
            expected absolute error to an integer count is unchanged.
        threads : int or None, keyword-only
            Worker threads >= 1 (None: all cores); the output does not depend on it.
        grid_bits : int or None, keyword-only
            Grid exponent in [0, 60] for this call; None uses :attr:`grid_bits`. The privacy
            figures do not depend on it (post-processing).

        Returns
        -------
        numpy.ndarray of float64
            Same shape as ``counts``; every entry a grid value (finite, >= +0.0, never NaN,
            -0.0 or negative); integer-valued when ``integer=True``.

        Raises
        ------
        ValueError, TypeError
            Bad counts (negative, non-integer, NaN), ``threads`` < 1 or bad ``grid_bits``.

        Notes
        -----
        Timing: the kernel's work per count is data dependent in rare cases (a corrected
        candidate, or an interval left to the exact resolution in mpmath, about 1e-4 of the
        counts at n ~ 1e6), so the running time carries a weak signal about the counts
        (docs/histogram_release.md §7).
        """
        from sharpdp._core_loader import core
        from sharpdp._rng import core_key, core_threads

        arr = _as_float_counts("counts", counts)
        nthreads = core_threads(threads)
        if not isinstance(integer, (bool, np.bool_)):
            raise TypeError(f"integer must be a bool, got {type(integer).__name__}")
        bits = self.grid_bits if grid_bits is None else _check_grid_bits(grid_bits)
        key = core_key(rng)
        if self.data_independent:
            validate_counts("counts", arr)
            if not integer:
                return np.full(arr.shape, 0.5)
            # stochastic rounding of the constant 1/2: a fair 0/1 coin, still data independent
            return (core.samplers.keystream_words(key, 0, arr.size) & np.uint64(1)).astype(np.float64).reshape(arr.shape)
        flat = arr.reshape(-1)
        try:  # the C++ kernel checks the counts inside its parallel loop (no extra passes here)
            out, index, cand, words, round_words, _steps = core.histogram.release(
                flat, self.c, self.sigma, bits, key, bool(integer), nthreads)
        except ValueError:
            validate_counts("counts", arr)  # raises the precise message
            raise
        if index.size:
            from sharpdp.histogram._exact import resolve

            bins = resolve(flat, self.c, self.sigma, bits, index, cand, words, key)
            out[index.astype(np.intp)] = core.histogram.grid_values(bins, bits, round_words if integer else None)
        return out.reshape(arr.shape)


class ComposedRelease:
    """Pointwise composition of count-dependent zCDP budgets ("Better Privacy Guarantees for Larger Groups", section 8).

    Releasing the same histogram with mechanisms M_1, ..., M_k (also adaptively, with
    parameters fixed in advance) satisfies count-dependent zCDP with
    v_tot(n) = sum_t v_t(n).

    Parameters
    ----------
    *mechanisms : ShiftedLogGaussian
        At least one mechanism.

    Notes
    -----
    For shifted-log Gaussian components the joint edge n-1 <-> n is exactly a Gaussian shift
    with mu_tot(n) = sqrt(sum_t mu_t(n)^2) (independent Gaussian coordinates in log space), so
    :meth:`epsilon` can still use the exact Gaussian profile.
    """

    def __init__(self, *mechanisms: ShiftedLogGaussian) -> None:
        if not mechanisms:
            raise ValueError("mechanisms: at least one mechanism is required")
        for m in mechanisms:
            if not isinstance(m, ShiftedLogGaussian):
                raise TypeError(f"mechanisms must be ShiftedLogGaussian instances, got {type(m).__name__}")
        self.mechanisms = tuple(mechanisms)

    def __repr__(self) -> str:
        return f"ComposedRelease({', '.join(map(repr, self.mechanisms))})"

    def budget(self, n: Any) -> Any:
        """v_tot(n) = sum_t v_t(n) (nats); same shapes and errors as ShiftedLogGaussian.budget."""
        arr = validate_counts("n", n)
        total = np.zeros(arr.shape)
        for m in self.mechanisms:
            total = total + np.asarray(m.budget(arr))
        return _scalar_or_array(total * self._sum_round_up, n)

    @property
    def _sum_round_up(self) -> float:
        """Factor covering the rounding of a k-term sum of non-negative terms ((k - 1) u, u = 2^-53)
        and of one more operation, so the result stays >= the exact value."""
        return 1.0 + 4.0 * (len(self.mechanisms) + 1) * 2.0**-53

    def epsilon(self, n: Any, delta: float, method: str = "gaussian") -> Any:
        """Per-count epsilon of the composition at ``delta``; methods as in ShiftedLogGaussian.epsilon."""
        arr = validate_counts("n", n)
        delta = V.probability_open("delta", delta)
        _check_method(method)
        if method == "gaussian":
            mu2 = np.zeros(arr.shape)
            for m in self.mechanisms:
                mu2 = mu2 + np.asarray(m.edge_mu(arr)) ** 2
            eps = _epsilon_from_mu(np.sqrt(mu2) * self._sum_round_up, delta)
        else:
            eps = _epsilon_from_budget(np.asarray(self.budget(arr), dtype=float), delta, method)
        return _scalar_or_array(eps, n)


def compose(*mechanisms: ShiftedLogGaussian) -> ComposedRelease:
    """Compose releases of the same histogram: budgets add pointwise ("Better Privacy Guarantees for Larger
    Groups", section 8; see :class:`ComposedRelease`).

    Parameters
    ----------
    *mechanisms : ShiftedLogGaussian
        At least one mechanism, parameters fixed in advance (the releases may be adaptive).

    Returns
    -------
    ComposedRelease
        ``budget(n)`` = sum of the components' v_t(n) (nats), ``epsilon(n, delta)`` per count.

    Raises
    ------
    ValueError
        If no mechanism is given.
    TypeError
        If a component is not a :class:`ShiftedLogGaussian`.
    """
    return ComposedRelease(*mechanisms)
