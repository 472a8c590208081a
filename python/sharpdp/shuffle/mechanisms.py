"""Shuffle-model local randomizers (seed 001, Section 4 and its appendix).

Descriptions of mechanisms live here; the accountant that evaluates them
lives in :mod:`sharpdp.shuffle.accountant`.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import core_seed

# Rows of x may exceed the unit norm by this much (rounding of a scaled row).
_BALL_TOL = 1e-12


class LocalRandomizer:
    """Base class of the shuffle-model local randomizers.

    Subclasses provide ``dim``, ``sample``, ``estimate``, ``chi_lo`` and
    ``mse_single``.
    """

    dim: int

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self) -> dict:
        return {}


class BlanketMixedGaussian(LocalRandomizer):
    """Blanket-mixed Gaussian local randomizer (seed 001, Algorithm "Blanket-Mixed Gaussian Mechanism").

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

    def sample(self, x, rng=None, threads: int | None = None, *, row_offset: int = 0,
               total_rows: int | None = None) -> np.ndarray:
        """Randomize every row of ``x`` (one message per user), in C++.

        Row i becomes ``Y_i = sigma0 Z_i + (1 - B_i) x_i`` with
        ``Z_i ~ N(0, I_d)`` (ziggurat method) and ``B_i ~ Bernoulli(gamma)``
        (seed 001, Algorithm "Blanket-Mixed Gaussian Mechanism"). Rows are
        processed in fixed blocks of ``sharpdp._core.samplers.BLOCK_ROWS``,
        each with its own random stream, so the output depends only on the
        seed drawn from ``rng`` and is bit-identical for any ``threads``.

        Parameters
        ----------
        x : array_like of float64, shape (n, dim)
            Inputs in the unit L2 ball (row norms <= 1 + 1e-12), n >= 1.
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the 64-bit seed (``None``: fresh OS entropy).
        threads : int, optional
            Worker threads (default: all cores). Does not change the output.
        row_offset : int, default 0
            Global position of the first row of ``x`` in a larger table that
            is randomized piece by piece (e.g. one partition of a distributed
            dataset), >= 0.
        total_rows : int or None
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
            x = np.ascontiguousarray(x, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError("x must be an array of real numbers") from exc
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}), got {x.shape}")
        if x.shape[0] == 0:
            raise ValueError("x must not be empty")
        nthreads = 0 if threads is None else V.integer("threads", threads, lo=1)
        row_offset = V.integer("row_offset", row_offset, lo=0)
        end = row_offset + x.shape[0]
        total_rows = end if total_rows is None else V.integer("total_rows", total_rows, lo=end)
        from sharpdp._core_loader import core

        # Finiteness and the unit-ball condition are checked in C++, in the sampling pass.
        return core.samplers.bmg_sample(x, self.gamma, self.sigma0, core_seed(rng), nthreads,
                                        (1.0 + _BALL_TOL) ** 2, row_offset, total_rows)

    def estimate(self, messages) -> np.ndarray:
        """Unbiased linear estimate of the mean of the inputs (seed 001, eq. (gaussian-blanket-unbiased-estimator)).

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
        """Lower shuffle index, closed form (seed 001, Section 4.2)::

            chi_lo^2 = gamma / ((1 - gamma)^2 (exp(1/sigma0^2) - 1)).

        Dimensionless; 0 when gamma = 0.
        """
        return math.sqrt(self.gamma / ((1.0 - self.gamma) ** 2 * math.expm1(1.0 / self.sigma0**2)))

    @property
    def mse_single(self) -> float:
        """Worst-case single-user MSE of the unbiased estimator Y/(1-gamma) (seed 001, Section 4.2)::

            Err_1 = d sigma0^2 / (1 - gamma)^2 + gamma / (1 - gamma).

        Squared data units (sum over the d coordinates).
        """
        g = self.gamma
        return self.dim * self.sigma0**2 / (1.0 - g) ** 2 + g / (1.0 - g)


    @property
    def chi_up(self) -> float:
        """Upper shuffle index (seed 001, Section 2.3; zero-out, worst case over inputs).

        Computed by :func:`sharpdp.shuffle.indices.bmg_chi_up`; dimensionless.
        """
        from sharpdp.shuffle.indices import bmg_chi_up

        return bmg_chi_up(self.gamma, self.sigma0)


class GaussianRandomizer(BlanketMixedGaussian):
    """Gaussian local randomizer ``N(x, sigma0^2 I_d)`` (seed 001, Section 4.3): the gamma = 0 BMG.

    Parameters
    ----------
    sigma0 : float
        Gaussian scale > 0.
    dim : int
        Dimension d >= 1.
    """

    def __init__(self, sigma0: float, dim: int) -> None:
        super().__init__(0.0, sigma0, dim)

    def _params(self) -> dict:
        return {"sigma0": self.sigma0, "dim": self.dim}

    @property
    def chi_chua(self) -> float:
        """Chua et al.'s index (seed 001, Prop. "Gaussian risk"): 1/sqrt(V(sigma0^2)) with
        V(s^2) = e^{4/s^2} - 2 e^{2/s^2} + e^{1/s^2}; see :func:`sharpdp.shuffle.indices.gaussian_chi_chua`.

        Its use as a privacy bound rests on an open conjecture: an estimate, not a certificate.
        """
        from sharpdp.shuffle.indices import gaussian_chi_chua

        return gaussian_chi_chua(self.sigma0)

