"""Shuffle-model local randomizers (seed 001, Section 4 and its appendix).

Descriptions of mechanisms live here; the accountant that evaluates them
lives in :mod:`sharpdp.shuffle.accountant`.
"""

from __future__ import annotations

import math

from sharpdp import _validation as V


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
