"""Shuffle model: local randomizers, shuffle indices, certified FFT accountant (seed 001)."""

from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma
from sharpdp.shuffle.calibration import calibrate_bmg, optimal_bmg, template_delta_estimate
from sharpdp.shuffle.indices import asymptotic_delta, gaussian_chi_chua, mse_lower_bound
from sharpdp.shuffle.mechanisms import BlanketMixedGaussian, GaussianRandomizer, LocalRandomizer
from sharpdp.shuffle.randomizers import GeneralRandomizer, PrivUnit, RandomizedResponse, privunit_constant
from sharpdp.shuffle.accountant import AccountantReport, ShuffleAccountant
from sharpdp.shuffle._laws import FiniteLaw, LognormalLaw
from sharpdp.shuffle.profile import DominatingPair, dominating_pair, privacy_profile, privacy_profile_bounds
from sharpdp.shuffle.composition import ComposedAccountant

__all__ = [
    "AccountantReport",
    "ComposedAccountant",
    "DominatingPair",
    "dominating_pair",
    "privacy_profile",
    "privacy_profile_bounds",
    "FiniteLaw",
    "LognormalLaw",
    "ShuffleAccountant",
    "BlanketMixedGaussian",
    "GaussianRandomizer",
    "GeneralRandomizer",
    "LocalRandomizer",
    "PrivUnit",
    "RandomizedResponse",
    "asymptotic_delta",
    "calibrate_bmg",
    "gaussian_chi_chua",
    "mse_lower_bound",
    "privunit_constant",
    "gaussian_mechanism_delta",
    "gaussian_mechanism_epsilon",
    "gaussian_mechanism_sigma",
    "optimal_bmg",
    "template_delta_estimate",
]
