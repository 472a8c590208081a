"""Gaussian local randomizer N(x, sigma0^2 I_d): the gamma = 0 blanket-mixed Gaussian (seed 001, Section 4.3)."""

from __future__ import annotations

from sharpdp.shuffle.randomizers.bmg import BlanketMixedGaussian
from sharpdp.shuffle.templates import gaussian_chi_chua

__all__ = ["GaussianRandomizer"]


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
        V(s^2) = e^{4/s^2} - 2 e^{2/s^2} + e^{1/s^2}; see :func:`sharpdp.shuffle.templates.gaussian_chi_chua`.

        Its use as a privacy bound rests on an open conjecture: an estimate, not a certificate.
        """
        return gaussian_chi_chua(self.sigma0)
