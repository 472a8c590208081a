"""Blanket-mixed Gaussian local randomizer.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4 (Algorithm 1) and Appendix C.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import core_key, core_threads
from sharpdp.shuffle.laws import bmg_laws as _bmg_laws
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.randomizers._base import RandomizerBase

__all__ = ["BlanketMixedGaussian", "bmg_chi_up", "default_grid_bits"]

# Rows of x may exceed the unit norm by this much (rounding of a scaled row).
_BALL_TOL = 1e-12
# Default grid: s = sigma0 / h >= 2^8, and h sqrt(d) <= 2^-8 for d >= 2, unless s would exceed 2^14.
_MIN_S_BITS, _DIM_BITS, _MAX_S = 8, 8, 2.0**14
_MAX_GRID_BITS = 52
# The rounded row must stay in the unit ball: scale = (1 - h sqrt(d)) (1 - 2^-30) leaves room for
# the norm tolerance and the floating-point scaling (docs/sampling.md §2).
_SCALE_MARGIN = 2.0**-30


def default_grid_bits(sigma0: float, dim: int) -> int:
    """Default grid exponent k (grid step h = 2^-k) of the BMG release sampler (docs/sampling.md §2).

    k is the smallest integer in [0, 52] with s = sigma0 2^k >= 256 and, for dim >= 2,
    h sqrt(dim) <= 2^-8; for dim >= 2 it is lowered (not below the first condition) while
    s > 2^14, so that the noise table stays small. For dim = 1 this puts s in [256, 512) whenever
    2^-52 256 <= sigma0 < 512 (h = 1 above).

    Parameters
    ----------
    sigma0 : float
        Gaussian scale > 0.
    dim : int
        Dimension >= 1.

    Returns
    -------
    int
        k in [0, 52].
    """
    sigma0 = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
    dim = V.integer("dim", dim, lo=1)
    k_s = 0
    while k_s < _MAX_GRID_BITS and math.ldexp(sigma0, k_s) < 2.0**_MIN_S_BITS:
        k_s += 1
    if dim == 1:
        return k_s
    k_d = _DIM_BITS + ((dim - 1).bit_length() + 1) // 2  # smallest k with 2^-k sqrt(dim) <= 2^-8
    k = min(max(k_s, k_d), _MAX_GRID_BITS)
    while k > k_s and math.ldexp(sigma0, k) > _MAX_S:
        k -= 1
    return k


class BlanketMixedGaussian(RandomizerBase):
    """Blanket-mixed Gaussian local randomizer (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
    Algorithm 1).

    With probability ``gamma`` the message is a blanket draw ``N(0, sigma0^2 I_d)``,
    otherwise ``N(x, sigma0^2 I_d)``, for an input ``x`` in the unit L2 ball.

    :meth:`sample` releases a grid version of it, exactly a post-processing of this mechanism
    (docs/sampling.md §2): messages are multiples of the grid step h = 2^-grid_bits, the law of a
    message is within :attr:`sampler_tv` (total variation) of that post-processing, and the
    accountant's laws for (gamma, sigma0) certify it once delta is raised by
    (1 + e^eps) n sampler_tv.

    Parameters
    ----------
    gamma : float
        Blanket mass, 0 <= gamma < 1 (gamma = 0 is the plain Gaussian randomizer).
    sigma0 : float
        Gaussian scale > 0 (same units as the data; inputs live in the unit ball).
    dim : int
        Dimension d >= 1.
    grid_bits : int or None, keyword-only
        Grid exponent k in [0, 52] of the release sampler, grid step h = 2^-k (None: the default
        :func:`default_grid_bits`, s = sigma0 / h in [256, 512) for dim 1). The rounding adds a
        variance about h^2 / 12 + h^2 / 4 per coordinate (<= 5e-6 sigma0^2 for the default with
        dim 1); for dim >= 2 the inputs are first scaled by :attr:`grid_scale` = (1 - h sqrt(d))
        (1 - 2^-30), which the estimator divides back (docs/sampling.md §7).

    Raises
    ------
    ValueError
        If gamma is not in [0, 1), sigma0 <= 0, dim < 1, grid_bits not in [0, 52], or any is NaN.
        (:meth:`sample` raises if the grid is too coarse for dim, h sqrt(d) >= 1/2, or too fine
        for sigma0: s = sigma0 / h above about 20 000.)
    """

    floating_point_safe = True
    """The release sampler draws a certified law (docs/sampling.md §2)."""

    stable_law_order = True
    """:meth:`privacy_amplification_laws` lists the same pairs in the same order at every epsilon (zero-out: x vs bot,
    bot vs x; replace: one law), so a law's certified value at a smaller epsilon bounds it (docs/accountant.md §7.5)."""

    def __init__(self, gamma: float, sigma0: float, dim: int, *, grid_bits: int | None = None) -> None:
        self.gamma = V.real("gamma", gamma, lo=0.0, hi=1.0, hi_open=True)
        self.sigma0 = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
        self.dim = V.integer("dim", dim, lo=1)
        self._grid_bits_arg = None if grid_bits is None else V.integer("grid_bits", grid_bits, lo=0,
                                                                       hi=_MAX_GRID_BITS)
        self.grid_bits: int = (default_grid_bits(self.sigma0, self.dim) if self._grid_bits_arg is None
                               else self._grid_bits_arg)
        self.grid_step = math.ldexp(1.0, -self.grid_bits)
        # scale < 1 - h sqrt(d) (each factor rounded down): the rounded row stays in the unit ball;
        # 0 when the grid is too coarse for dim (h sqrt(d) >= 1/2), which sample() refuses
        gap = self.grid_step * math.sqrt(self.dim)
        self.grid_scale = 1.0 if self.dim == 1 else (
            0.0 if gap >= 0.5 else math.nextafter((1.0 - gap) * (1.0 - _SCALE_MARGIN), 0.0))
        # the blanket coin compares a 64-bit word with ceil(gamma 2^64): gamma' = that / 2^64 >= gamma
        self.blanket_threshold = math.ceil(math.ldexp(self.gamma, 64))
        self.gamma_sampled = math.ldexp(self.blanket_threshold, -64)

    def _params(self) -> dict:
        p = {"gamma": self.gamma, "sigma0": self.sigma0, "dim": self.dim}
        if self._grid_bits_arg is not None:
            p["grid_bits"] = self._grid_bits_arg
        return p

    @property
    def noise_scale(self) -> float:
        """s = sigma0 / h = sigma0 2^grid_bits: the grid noise is h round(s Z), Z ~ N(0, 1)."""
        return math.ldexp(self.sigma0, self.grid_bits)

    @property
    def sampler_tv(self) -> float:
        """Upper bound eta on the total-variation distance between the law of one released message
        and the certified post-processing of BMG (docs/sampling.md §3-§4), a probability.

        eta = dim ((ceil(13.2 s) + 1) 2^-128 + 1e-38), s = :attr:`noise_scale`: per coordinate the
        128-bit table's rounding (at most 2^-128 per entry, at most ceil(13.2 s) + 1 entries) plus
        the truncated tail (<= 1e-38, :data:`sharpdp._tables.TAIL_BOUND`); rounded up. About
        1e-35 per coordinate for the default grid. The accountant's delta(eps) for n messages is
        raised by (1 + e^eps) n eta.
        """
        from sharpdp._tables import TAIL_BOUND

        entries = math.ceil(13.2 * self.noise_scale) + 1
        per_coord = math.nextafter(math.nextafter(entries * 2.0**-128, math.inf) + TAIL_BOUND, math.inf)
        return math.nextafter(self.dim * per_coord, math.inf)

    @property
    def estimate_scale(self) -> float:
        """E[message] / x for the release sampler: (1 - gamma) * grid_scale (float).

        Exact up to a relative 2^-60 (the blanket coin's gamma' = gamma + < 2^-64 and the
        rounding probabilities are multiples of 2^-64); the unbiased estimator divides the mean of
        the messages by it. Equal to 1 - gamma for dim 1.
        """
        return (1.0 - self.gamma) * self.grid_scale

    @property
    def sampler_refusal(self) -> str | None:
        """Why :meth:`sample` refuses this randomizer's parameters, or None when it samples them.

        The grid sampler needs h sqrt(dim) < 1/2, s = sigma0 / h >= 2^-10 and a noise table of at most
        :data:`sharpdp._tables.MAX_TABLE_SIZE` (2^18) entries, 13.2 s + 1 (s = :attr:`noise_scale`;
        with the default grid, sigma0 above about 2e4 at dim 1). The accountant certifies the law at
        any sigma0 (:attr:`can_sample` says whether a release can also be drawn).

        Returns
        -------
        str or None
            The error message :meth:`sample` raises (naming ``sigma0`` and/or ``grid_bits``), or None.
        """
        from sharpdp._tables import MAX_TABLE_SIZE

        if self.grid_scale == 0.0:
            return (f"sigma0, grid_bits: the grid step 2^-{self.grid_bits} is too coarse for "
                    f"dim={self.dim} (need h sqrt(dim) < 1/2; pass a larger grid_bits)")
        if self.noise_scale < 2.0**-10:  # the grid (at most 52 bits) is coarser than the noise itself
            return (f"sigma0: {self.sigma0!r} is too small for the grid sampler (s = sigma0 / h = "
                    f"{self.noise_scale:.6g} < 2^-10 with grid_bits = {self.grid_bits}; the finest grid "
                    "is 2^-52)")
        if 13.2 * self.noise_scale + 1 > MAX_TABLE_SIZE:
            return (f"sigma0, grid_bits: the noise table for s = sigma0 / h = {self.noise_scale:.6g} "
                    f"would exceed {MAX_TABLE_SIZE} entries (sigma0 too large for the grid sampler, or "
                    "pass fewer grid_bits)")
        return None

    def sample(self, x, rng=None, *, threads: int | None = None, row_offset: int = 0,
               total_rows: int | None = None) -> np.ndarray:
        """Randomize every row of ``x`` (one message per user) on the grid h Z^d, in C++.

        Row i becomes ``Y_i = h D_i + (1 - B_i) x~_i`` (docs/sampling.md §2): ``x~_i`` is the
        unbiased stochastic rounding of ``grid_scale * x_i`` onto h Z^d (each coordinate rounded up
        with probability its fractional part, as a 64-bit integer threshold), ``B_i ~
        Bernoulli(gamma')`` with gamma' = ceil(gamma 2^64) 2^-64 (one 64-bit comparison), and
        ``D_i`` has i.i.d. coordinates with the rounded-Gaussian law R_s(j) = Phi((j + 1/2)/s) -
        Phi((j - 1/2)/s), s = sigma0 / h, drawn from a 128-bit table (within :attr:`sampler_tv` in
        total variation). Hence ``Y_i`` is h round(W / h) for W ~ BMG(gamma', sigma0) at input
        ``x~_i``: a post-processing of the certified mechanism (*Shuffling-Aware Optimization for
        Private Vector Mean Estimation*, Algorithm 1). Every value is an exact multiple of h.
        Rows are processed in fixed blocks of ``sharpdp._core.samplers.BLOCK_ROWS``, each with its
        own random stream, so the output depends only on the key drawn from ``rng`` and is
        bit-identical for any ``threads``. The first call for a given (sigma0, grid) builds the
        noise table with mpmath (about 0.3 s for dim 1; cached).

        Parameters
        ----------
        x : array_like of float64, shape (n, dim)
            Inputs in the unit L2 ball (row norms <= 1 + 1e-12), n >= 1.
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the 256-bit stream key (``None``: fresh OS entropy).
        threads : int or None, keyword-only
            Worker threads >= 1 (None: all cores). Does not change the output.
        row_offset : int, default 0, keyword-only
            Global position of the first row of ``x`` in a larger table that
            is randomized piece by piece (e.g. one partition of a distributed
            dataset), >= 0.
        total_rows : int or None, keyword-only
            Number of rows of that table (default ``row_offset + n``). With
            the same ``rng``, the messages of the rows ``[row_offset,
            row_offset + n)`` are then bit-identical to the same rows of one
            call on the whole table: the random streams are keyed by the
            global row position, never by the partitioning.

        Returns
        -------
        numpy.ndarray of float64, shape (n, dim)
            The messages, in the order of the rows (not shuffled), multiples of :attr:`grid_step`.

        Raises
        ------
        ValueError
            If ``x`` is empty, not of shape (n, dim), not finite, or has a
            row outside the unit ball; if ``threads`` < 1; if ``row_offset``
            < 0 or ``total_rows`` < ``row_offset + n``; if the grid cannot carry the noise (s =
            sigma0 / h below 2^-10, or a noise table above its size cap, or h sqrt(dim) >= 1/2).
        """
        x, nthreads, row_offset, total_rows = self._sample_args(x, threads, row_offset, total_rows)
        from sharpdp._core_loader import core
        from sharpdp._tables import rounded_gaussian_cdt

        refusal = self.sampler_refusal
        if refusal is not None:
            raise ValueError(refusal)
        table = rounded_gaussian_cdt(self.noise_scale)
        # Finiteness and the unit-ball condition are checked in C++, in the sampling pass.
        return core.samplers.bmg_grid_sample(x, self.blanket_threshold, self.grid_bits, self.grid_scale, table.hi,
                                             table.lo, table.guide, core_key(rng), nthreads,
                                             (1.0 + _BALL_TOL) ** 2, row_offset, total_rows)

    def _sample_float_reference(self, x, rng=None, *, threads: int | None = None, row_offset: int = 0,
                                total_rows: int | None = None) -> np.ndarray:
        """NOT A RELEASE SAMPLER (tests and benchmarks only): the former floating-point sampler
        ``sigma0 Z + (1 - B) x`` (ziggurat), whose low-order mantissa bits depend on x
        (docs/sampling.md §2). Same arguments as :meth:`sample`."""
        x, nthreads, row_offset, total_rows = self._sample_args(x, threads, row_offset, total_rows)
        from sharpdp._core_loader import core

        return core.samplers._bmg_sample_float_reference(x, self.gamma, self.sigma0, core_key(rng), nthreads,
                                                         (1.0 + _BALL_TOL) ** 2, row_offset, total_rows)

    def _sample_args(self, x, threads, row_offset, total_rows):
        try:
            raw = np.asarray(x)
            if raw.dtype.kind not in "biuf":  # complex, text, objects: not silently cast
                raise TypeError(f"x must be an array of real numbers, got dtype {raw.dtype}")
            x = np.ascontiguousarray(raw, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("x must be an array of real numbers") from exc
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}), got {x.shape}")
        if x.shape[0] == 0:
            raise ValueError("x must not be empty")
        nthreads = core_threads(threads)
        row_offset = V.integer("row_offset", row_offset, lo=0)
        end = row_offset + x.shape[0]
        total_rows = end if total_rows is None else V.integer("total_rows", total_rows, lo=end)
        return x, nthreads, row_offset, total_rows

    def estimate(self, messages) -> np.ndarray:
        """Unbiased linear estimate of the mean of the inputs.

        Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4.1,
        eq. (gaussian-blanket-unbiased-estimator).

        ``mean of the rows / estimate_scale``: E[Y] = (1 - gamma) grid_scale x for
        each message of :meth:`sample` (grid_scale = 1 for dim 1; relative bias below 2^-60, see
        :attr:`estimate_scale`), so the estimate is unbiased for the mean of the inputs,
        with worst-case MSE ``mse_single / n``. The mean is summed exactly
        and rounded once, so the result is bit-identical for any order of the
        rows (shuffled or not) and for any split of them into partial sums
        (see :mod:`sharpdp.distributed`).

        Parameters
        ----------
        messages : array_like of float64, shape (n, dim)
            Messages produced by :meth:`sample`, n >= 1.

        Returns
        -------
        numpy.ndarray of float64, shape (dim,)

        Raises
        ------
        ValueError
            If ``messages`` is empty, not of shape (n, dim) or not finite.
        """
        from sharpdp._kernels.exact_sum import exact_column_means

        y = V.real_array("messages", messages, shape=(None, self.dim))
        if self.grid_scale == 0.0:
            raise ValueError(f"grid_bits: no release sampler for this grid (2^-{self.grid_bits} too coarse for "
                             f"dim={self.dim}), hence no estimator")
        return exact_column_means(y) / self.estimate_scale

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, closed form (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Section 4.2)::

            chi_lo^2 = gamma / ((1 - gamma)^2 (exp(1/sigma0^2) - 1)).

        Dimensionless; 0 when gamma = 0.
        """
        inv = 1.0 / self.sigma0  # (1/sigma0)^2, not 1/sigma0^2: sigma0^2 overflows for sigma0 > ~1.3e154
        b = inv * inv
        if self.gamma == 0.0:
            return 0.0
        if b > 700.0 or math.isinf(b):  # expm1(b) = e^b in double: log space (no overflow)
            return math.exp(0.5 * (math.log(self.gamma) - 2.0 * math.log1p(-self.gamma) - b))
        if b < 1e-150:  # expm1(b) = b (1 + b/2 + ...): relative error < 1e-150; b may underflow to 0
            return math.sqrt(self.gamma) / (1.0 - self.gamma) * self.sigma0  # (inf past the float range)
        return math.sqrt(self.gamma / ((1.0 - self.gamma) ** 2 * math.expm1(b)))

    @property
    def mse_single(self) -> float:
        """Worst-case single-user MSE of the unbiased estimator Y/(1-gamma)
        (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4.2)::

            Err_1 = d sigma0^2 / (1 - gamma)^2 + gamma / (1 - gamma).

        Squared data units (sum over the d coordinates).
        """
        g = self.gamma
        return self.dim * (self.sigma0 * self.sigma0) / (1.0 - g) ** 2 + g / (1.0 - g)  # (inf, not OverflowError)

    @property
    def release_mse_single(self) -> float:
        """Worst-case single-user MSE of :meth:`estimate` on messages of :meth:`sample` (the grid
        release, docs/sampling.md §7), squared data units::

            d (sigma0^2 + h^2/12 + (1 - gamma) h^2/4) / ((1 - gamma)^2 c^2) + gamma / (1 - gamma),

        h = :attr:`grid_step`, c = :attr:`grid_scale` (1 for dim 1): the rounded noise has variance
        sigma0^2 + h^2/12 (Sheppard's correction; the error is of order exp(-2 pi^2 s^2) relative,
        s = sigma0 / h) and the input rounding at most h^2/4 per coordinate (0 on the grid).
        Compare :attr:`mse_single` (the continuous mechanism): relative excess below 5.1e-6 for
        dim 1 with the default grid. Ignores the relative 2^-60 of gamma' and of the rounding
        probabilities. Infinite if the grid is unusable (``grid_scale`` = 0).
        """
        g, h, c = self.gamma, self.grid_step, self.grid_scale
        if c == 0.0:
            return math.inf
        noise = self.sigma0**2 + h * h / 12.0 + (1.0 - g) * h * h / 4.0
        return self.dim * noise / ((1.0 - g) ** 2 * c * c) + g / (1.0 - g)

    @property
    def chi_up(self) -> float:
        """Upper shuffle index (zero-out, worst case over inputs).

        Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition 2.5 (Section 2.4).

        Computed by :func:`bmg_chi_up`; dimensionless.
        """
        return bmg_chi_up(self.gamma, self.sigma0)

    def chi_lo_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """:attr:`chi_lo` for ``adjacency="zero_out"``; see :meth:`shuffle_indices`."""
        return self.shuffle_indices(adjacency)[0]

    def chi_up_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """:attr:`chi_up` for ``adjacency="zero_out"``; see :meth:`shuffle_indices`."""
        return self.shuffle_indices(adjacency)[1]

    def shuffle_indices(self, adjacency: str = DEFAULT_ADJACENCY) -> tuple[float, float]:
        """(chi_lo, chi_up), dimensionless (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5 (Section 2.4)).

        Raises
        ------
        ValueError
            Unknown ``adjacency``.
        NotImplementedError
            ``adjacency="replace"``: only the zero-out indices are implemented for this family.
        """
        if check_adjacency(adjacency) != "zero_out":
            raise NotImplementedError(f"adjacency: {type(self).__name__} implements the zero-out shuffle "
                                      "indices only (chi_lo, chi_up)")
        return self.chi_lo, self.chi_up

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """Laws of the privacy-amplification variable for the accountant (see :func:`sharpdp.shuffle.laws.bmg.bmg_laws`).

        Parameters
        ----------
        epsilon : float
            eps >= 0, nats.
        adjacency : {"zero_out", "replace"}

        Returns
        -------
        list of (float, Law)
            Zero-out: ``[(gamma, x vs bot), (gamma, bot vs x)]`` (|x| = 1, the worst case);
            replace (gamma > 0): the antipodal pair's law (one law covers both orders).

        Raises
        ------
        ValueError
            epsilon not finite and >= 0; gamma = 0 (GaussianRandomizer) with dim > 1; unknown
            ``adjacency``.
        NotImplementedError
            gamma = 0 with ``adjacency="replace"`` (no proven worst-case pair; the accountant
            bounds replace-one through bot instead).
        """
        epsilon = V.real("epsilon", epsilon, lo=0.0)
        if self.gamma == 0 and self.dim != 1:
            raise ValueError("dim: GaussianRandomizer accounting supports dim=1 until general randomizers arrive "
                             f"(got dim={self.dim})")
        return _bmg_laws(self.gamma, self.sigma0, epsilon, adjacency)

    def zero_out_legs(self) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
        """((0,), (1,)): the zero-out laws are listed in the order (x vs bot, bot vs x)."""
        return (0,), (1,)


def bmg_chi_up(gamma: float, sigma0: float) -> float:
    """Upper shuffle index of the blanket-mixed Gaussian BMG(gamma, sigma0), zero-out.

    Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition 2.5 (Section 2.4).

    With R_⊥ = R_BG = N(0, s^2 I) = R_0, chi_up^-2 = sup over x1, x in the unit ball of
    (1 - gamma)^2 * integral (phi_x1 - phi_0)^2 / (gamma phi_0 + (1 - gamma) phi_x). The integrand
    depends on y only through span{x1, x}; this function evaluates the colinear extreme
    configurations x1 = e, x = -e and x = e by 1-D adaptive quadrature (scipy.integrate.quad,
    relative tolerance 1e-10) and returns the smaller index. That these configurations are the
    worst case is checked numerically on grids in the tests (not proven). gamma = 0 gives
    chi_chua (:func:`gaussian_chi_chua`). Dimensionless, independent of d. Also
    available as ``BlanketMixedGaussian.chi_up``.

    The quadrature runs on the integrand scaled by its largest value (the integral reaches
    e^{4/sigma0^2}); where a closed-form bound (:func:`_log_chi_up_bound`) puts chi_up below half the
    smallest subnormal (sigma0 < ~0.025) the value is 0.0, as chi_lo and chi_chua underflow there.

    Parameters
    ----------
    gamma : float
        Blanket weight, in [0, 1).
    sigma0 : float
        Noise scale, finite and > 0 (0.0 below ~0.025, sigma0 / (1 - gamma) above 1e8).

    Returns
    -------
    float
        chi_up >= 0 (dimensionless; inf past the double range).

    Raises
    ------
    ValueError, TypeError
        gamma not in [0, 1), sigma0 not finite and > 0, either NaN or not a real number.
    """
    g = V.real("gamma", gamma, lo=0.0, hi=1.0, hi_open=True)
    s = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
    if s > _CHI_UP_LARGE:
        # chi_up = s / (1 - g) (1 - c(g) / s^2), 0 < c(g) <= 9/4 (c(0) = 9/4: chi_chua's series; the
        # quadrature gives c(0.5) ~ 0.875, c(0.9) ~ 0.315): the leading term is within 2.3e-16 relative
        # here, below the quadrature's tolerance; the integrand itself underflows for s >~ 1e154
        return s / (1.0 - g)  # (inf past the float range)
    if _log_chi_up_bound(g, s) < _LOG_UNDERFLOW:
        return 0.0  # the value rounds to 0.0 in double (below half the smallest subnormal)
    return math.exp(-0.5 * max(_bmg_up_log_variance(g, s, 1.0, x) for x in (-1.0, 1.0)))


#: sigma0 above which :func:`bmg_chi_up` is its leading term s / (1 - gamma)
_CHI_UP_LARGE = 1e8
#: log of 2.4e-324, below half the smallest subnormal 5e-324: a value below rounds to 0.0
_LOG_UNDERFLOW = -745.2


def _log_chi_up_bound(g: float, s: float) -> float:
    """Upper bound on log chi_up(g, s) in closed form (small sigma0: the value underflows there).

    With a = 1/(2 s^2), the configuration x1 = 1, x = -1 alone bounds the variance below: on y >= 1,
    phi_{-1} <= phi_0, so the denominator g phi_0 + (1 - g) phi_{-1} is at most phi_0, and
    phi_1 - phi_0 >= (1 - e^{-a}) phi_1; phi_1^2 / phi_0 = e^{2a} phi_2, and the N(2, s^2) mass of
    y >= 1 is at least 1/2. So chi_up^-2 >= (1 - g)^2 (1 - e^{-a})^2 e^{2a} / 2, i.e.
    log chi_up <= log(2)/2 - a - log(1 - g) - log(1 - e^{-a}).
    """
    inv = 1.0 / s  # (1/s)^2 rather than 1/s^2: no overflow of s^2 before the division
    a = 0.5 * inv * inv
    if math.isinf(a):
        return -math.inf
    return 0.5 * math.log(2.0) - a - math.log1p(-g) - math.log(-math.expm1(-a))


def _bmg_up_variance(g: float, s: float, x1: float, x: float) -> float:
    """(1-g)^2 ∫ (phi(y-x1) - phi(y))^2 / (g phi(y) + (1-g) phi(y-x)) dy, phi = N(0, s^2) density (1-D)
    (inf where it exceeds the double range; :func:`_bmg_up_log_variance` is its logarithm)."""
    lv = _bmg_up_log_variance(g, s, x1, x)
    return math.exp(lv) if lv < 709.0 else math.inf


def _bmg_up_log_variance(g: float, s: float, x1: float, x: float) -> float:
    """log of :func:`_bmg_up_variance`, by quadrature of the integrand scaled by its largest value
    on a grid (the integral reaches e^{4/s^2} at small s: no overflow for any s the callers pass,
    s >= 0.025 in :func:`bmg_chi_up`); -inf when x1 = 0 (the integrand is 0)."""
    from scipy import integrate

    inv2 = 1.0 / (2.0 * s * s)

    def log_f(y: np.ndarray) -> np.ndarray:
        # divide through by phi(y) in log space: (e^{u1} - 1)^2 phi(y) / (g + (1-g) e^{u})
        u1 = (2 * y * x1 - x1 * x1) * inv2
        u = (2 * y * x - x * x) * inv2
        with np.errstate(divide="ignore", over="ignore"):  # u1 = 0: log 0 = -inf (the integrand is 0)
            big = np.maximum(u1, 30.0)
            log_num = np.where(u1 > 30, 2 * (big + np.log1p(-np.exp(-big))), 2 * np.log(np.abs(np.expm1(u1))))
        log_den = u if g == 0.0 else np.logaddexp(math.log(g), math.log1p(-g) + u)
        log_phi = -0.5 * (y / s) ** 2 - math.log(s * math.sqrt(2 * math.pi))
        return log_num + log_phi - log_den

    lim = 40 * s + 10  # the integrand is dominated by a N(2 x1 - x, s^2)-shaped bump
    pts = sorted({0.0, x1, x})
    # the scale: the largest log integrand on a grid finer than the bump (spacing <= s / 100 + 0.003);
    # any finite scale is exact (the integral is rescaled back), this one keeps the integrand <= ~1
    scale = float(np.max(log_f(np.concatenate([np.linspace(-lim, lim, 8001), pts]))))
    if scale == -math.inf:
        return -math.inf
    val, _ = integrate.quad(lambda y: math.exp(float(log_f(np.float64(y))) - scale), -lim, lim, points=pts, limit=500,
                            epsabs=0, epsrel=1e-10)
    return 2.0 * math.log1p(-g) + scale + math.log(val) if val > 0.0 else -math.inf
