"""Blanket-mixed Gaussian local randomizer.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4 (Algorithm 1) and Appendix C.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import core_seed, core_threads
from sharpdp.shuffle.laws import bmg_laws as _bmg_laws
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.randomizers._base import RandomizerBase

__all__ = ["BlanketMixedGaussian", "bmg_chi_up"]

# Rows of x may exceed the unit norm by this much (rounding of a scaled row).
_BALL_TOL = 1e-12


class BlanketMixedGaussian(RandomizerBase):
    """Blanket-mixed Gaussian local randomizer (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
    Algorithm 1).

    With probability ``gamma`` the message is a blanket draw ``N(0, sigma0^2 I_d)``,
    otherwise ``N(x, sigma0^2 I_d)``, for an input ``x`` in the unit L2 ball.

    Parameters
    ----------
    gamma : float
        Blanket mass, 0 <= gamma < 1 (gamma = 0 is the plain Gaussian randomizer).
    sigma0 : float
        Gaussian scale > 0 (same units as the data; inputs live in the unit ball).
    dim : int
        Dimension d >= 1.

    Raises
    ------
    ValueError
        If gamma is not in [0, 1), sigma0 <= 0, dim < 1, or any is NaN.
    """

    def __init__(self, gamma: float, sigma0: float, dim: int) -> None:
        self.gamma = V.real("gamma", gamma, lo=0.0, hi=1.0, hi_open=True)
        self.sigma0 = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
        self.dim = V.integer("dim", dim, lo=1)

    def _params(self) -> dict:
        return {"gamma": self.gamma, "sigma0": self.sigma0, "dim": self.dim}

    def sample(self, x, rng=None, *, threads: int | None = None, row_offset: int = 0,
               total_rows: int | None = None) -> np.ndarray:
        """Randomize every row of ``x`` (one message per user), in C++.

        Row i becomes ``Y_i = sigma0 Z_i + (1 - B_i) x_i`` with
        ``Z_i ~ N(0, I_d)`` (ziggurat method) and ``B_i ~ Bernoulli(gamma)``
        (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Algorithm 1). Rows are
        processed in fixed blocks of ``sharpdp._core.samplers.BLOCK_ROWS``,
        each with its own random stream, so the output depends only on the
        seed drawn from ``rng`` and is bit-identical for any ``threads``.

        Parameters
        ----------
        x : array_like of float64, shape (n, dim)
            Inputs in the unit L2 ball (row norms <= 1 + 1e-12), n >= 1.
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the 64-bit seed (``None``: fresh OS entropy).
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
            The messages, in the order of the rows (not shuffled).

        Raises
        ------
        ValueError
            If ``x`` is empty, not of shape (n, dim), not finite, or has a
            row outside the unit ball; if ``threads`` < 1; if ``row_offset``
            < 0 or ``total_rows`` < ``row_offset + n``.
        """
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
        from sharpdp._core_loader import core

        # Finiteness and the unit-ball condition are checked in C++, in the sampling pass.
        return core.samplers.bmg_sample(x, self.gamma, self.sigma0, core_seed(rng), nthreads,
                                        (1.0 + _BALL_TOL) ** 2, row_offset, total_rows)

    def estimate(self, messages) -> np.ndarray:
        """Unbiased linear estimate of the mean of the inputs.

        Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4.1,
        eq. (gaussian-blanket-unbiased-estimator).

        ``(1 / (1 - gamma)) * mean of the rows``: E[Y] = (1 - gamma) x for
        each message, so the estimate is unbiased for the mean of the inputs,
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
        return exact_column_means(y) / (1.0 - self.gamma)

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, closed form (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Section 4.2)::

            chi_lo^2 = gamma / ((1 - gamma)^2 (exp(1/sigma0^2) - 1)).

        Dimensionless; 0 when gamma = 0.
        """
        b = 1.0 / self.sigma0**2
        if b > 700.0 or math.isinf(b):  # expm1(b) = e^b in double: log space (no overflow)
            if self.gamma == 0.0:
                return 0.0
            return math.exp(0.5 * (math.log(self.gamma) - 2.0 * math.log1p(-self.gamma) - b))
        return math.sqrt(self.gamma / ((1.0 - self.gamma) ** 2 * math.expm1(b)))

    @property
    def mse_single(self) -> float:
        """Worst-case single-user MSE of the unbiased estimator Y/(1-gamma)
        (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4.2)::

            Err_1 = d sigma0^2 / (1 - gamma)^2 + gamma / (1 - gamma).

        Squared data units (sum over the d coordinates).
        """
        g = self.gamma
        return self.dim * self.sigma0**2 / (1.0 - g) ** 2 + g / (1.0 - g)

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
        """Laws of the privacy-amplification variable for the accountant (see :func:`sharpdp.shuffle._laws._bmg_laws`).

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
    """
    g = V.real("gamma", gamma, lo=0.0, hi=1.0, hi_open=True)
    s = V.real("sigma0", sigma0, lo=0.0, lo_open=True)
    return 1.0 / math.sqrt(max(_bmg_up_variance(g, s, 1.0, x) for x in (-1.0, 1.0)))


def _bmg_up_variance(g: float, s: float, x1: float, x: float) -> float:
    """(1-g)^2 ∫ (phi(y-x1) - phi(y))^2 / (g phi(y) + (1-g) phi(y-x)) dy, phi = N(0, s^2) density (1-D)."""
    from scipy import integrate

    def f(y):
        # divide through by phi(y) in log space: (e^{u1} - 1)^2 phi(y) / (g + (1-g) e^{u})
        u1 = (2 * y * x1 - x1 * x1) / (2 * s * s)
        u = (2 * y * x - x * x) / (2 * s * s)
        if u1 == 0.0:
            return 0.0
        log_num = 2 * (u1 + math.log1p(-math.exp(-u1)) if u1 > 30 else math.log(abs(math.expm1(u1))))
        log_den = u if g == 0.0 else float(np.logaddexp(math.log(g), math.log1p(-g) + u))
        log_phi = -0.5 * (y / s) ** 2 - math.log(s * math.sqrt(2 * math.pi))
        return math.exp(log_num + log_phi - log_den)

    lim = 40 * s + 10  # the integrand is dominated by a N(2 x1 - x, s^2)-shaped bump
    val, _ = integrate.quad(f, -lim, lim, points=sorted({0.0, x1, x}), limit=500, epsabs=0, epsrel=1e-10)
    return (1 - g) ** 2 * val
