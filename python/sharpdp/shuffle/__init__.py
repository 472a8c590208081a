"""Shuffle model: local randomizers, shuffle indices, certified FFT accountant (seed 001)."""

from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma
from sharpdp.shuffle.calibration import calibrate_bmg, optimal_bmg, template_delta_estimate
from sharpdp.shuffle.mechanisms import BlanketMixedGaussian, GaussianRandomizer, LocalRandomizer
from sharpdp.shuffle.accountant import AccountantReport, ShuffleAccountant
from sharpdp.shuffle._laws import FiniteLaw, LognormalLaw

__all__ = [
    "AccountantReport",
    "FiniteLaw",
    "LognormalLaw",
    "ShuffleAccountant",
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
