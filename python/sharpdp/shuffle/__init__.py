"""Shuffle model: local randomizers, shuffle indices, certified FFT accountant (seed 001)."""

from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma
from sharpdp.shuffle.calibration import calibrate_bmg, optimal_bmg, template_delta_estimate
from sharpdp.shuffle.mechanisms import BlanketMixedGaussian, GaussianRandomizer, LocalRandomizer

__all__ = [
    "BlanketMixedGaussian",
    "GaussianRandomizer",
    "LocalRandomizer",
    "calibrate_bmg",
    "gaussian_mechanism_delta",
    "gaussian_mechanism_epsilon",
    "gaussian_mechanism_sigma",
    "optimal_bmg",
    "template_delta_estimate",
]
