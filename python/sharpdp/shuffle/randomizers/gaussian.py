"""Gaussian local randomizer N(x, sigma0^2 I_d): the gamma = 0 blanket-mixed Gaussian.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 4.3.
"""

from __future__ import annotations

from sharpdp.shuffle.randomizers.bmg import BlanketMixedGaussian
from sharpdp.shuffle.templates import gaussian_chi_chua

__all__ = ["GaussianRandomizer"]


class GaussianRandomizer(BlanketMixedGaussian):
    """Gaussian local randomizer ``N(x, sigma0^2 I_d)`` (*Shuffling-Aware Optimization for Private Vector Mean
    Estimation*, Section 4.3): the gamma = 0 BMG.

    Parameters
    ----------
    sigma0 : float
        Gaussian scale > 0, in the units of the inputs x (each report is x + sigma0 Z; inputs lie in the unit
        ball, ||x||_2 <= 1, so the scale is relative to the ball's radius).
    dim : int
        Dimension d >= 1 (required). The samplers take any d; the shuffle accountant
        (:class:`~sharpdp.shuffle.ShuffleAccountant`) certifies d = 1 only and raises ValueError for d > 1.
    grid_bits : int or None, keyword-only
        Grid exponent of the release sampler (see :class:`BlanketMixedGaussian`; None: default).
    """

    def __init__(self, sigma0: float, dim: int, *, grid_bits: int | None = None) -> None:
        super().__init__(0.0, sigma0, dim, grid_bits=grid_bits)

    def _params(self) -> dict:
        p = super()._params()
        del p["gamma"]
        return p

    @property
    def chi_chua(self) -> float:
        """Chua et al.'s index (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Proposition 4.2):
        1/sqrt(V(sigma0^2)) with
        V(s^2) = e^{4/s^2} - 2 e^{2/s^2} + e^{1/s^2}; see :func:`sharpdp.shuffle.templates.gaussian_chi_chua`.

        Its use as a privacy bound rests on an open conjecture: an estimate, not a certificate.
        """
        return gaussian_chi_chua(self.sigma0)
