"""Shuffle model: local randomizers, shuffle indices, certified FFT accountant.

Source: Takagi, *Shuffling-aware optimization for private vector mean estimation*.

- The randomizer contract :class:`LocalRandomizer` (:mod:`~sharpdp.shuffle.contract`) and the
  randomizers, one per module under :mod:`~sharpdp.shuffle.randomizers`.
- :class:`ShuffleAccountant`: certified delta(eps) / eps(delta) of the shuffled randomizer.
- Calibration (:func:`calibrate_bmg`, :func:`optimal_bmg`), asymptotic templates
  (:mod:`~sharpdp.shuffle.templates`), the clones bound (:mod:`~sharpdp.shuffle.clones`) and
  :func:`smallest_certified_delta` (:mod:`~sharpdp.shuffle.certified`).
"""

from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma
from sharpdp.shuffle.laws import FiniteLaw, LognormalLaw
from sharpdp.shuffle.adjacency import ADJACENCIES, DEFAULT_ADJACENCY
from sharpdp.shuffle.contract import LocalRandomizer
from sharpdp.shuffle.randomizers import (
    BlanketMixedGaussian,
    FiniteRandomizer,
    GaussianRandomizer,
    GeneralRandomizer,
    PrivUnit,
    RandomizedResponse,
    privunit_constant,
)
from sharpdp.shuffle.templates import asymptotic_delta, gaussian_chi_chua, mse_lower_bound
from sharpdp.shuffle.accountant import AccountantReport, ShuffleAccountant
from sharpdp.shuffle.calibration import (
    CalibrationReport,
    calibrate_bmg,
    calibrate_bmg_report,
    calibrate_gaussian,
    calibrate_gaussian_report,
    optimal_bmg,
    template_delta_estimate,
)
from sharpdp.shuffle.clones import clones_delta, clones_epsilon
from sharpdp.shuffle.certified import smallest_certified_delta
from sharpdp.shuffle.exact_krr import ExactShuffleAccountant
from sharpdp.shuffle.profile import (
    DominatingPair,
    clear_caches,
    dominating_pair,
    privacy_profile,
    privacy_profile_bounds,
)
from sharpdp.shuffle.composition import ComposedAccountant

__all__ = [
    "ADJACENCIES",
    "AccountantReport",
    "CalibrationReport",
    "DEFAULT_ADJACENCY",
    "ComposedAccountant",
    "DominatingPair",
    "ExactShuffleAccountant",
    "dominating_pair",
    "privacy_profile",
    "privacy_profile_bounds",
    "FiniteLaw",
    "LognormalLaw",
    "ShuffleAccountant",
    "BlanketMixedGaussian",
    "FiniteRandomizer",
    "GaussianRandomizer",
    "GeneralRandomizer",
    "LocalRandomizer",
    "PrivUnit",
    "RandomizedResponse",
    "asymptotic_delta",
    "calibrate_bmg",
    "calibrate_bmg_report",
    "calibrate_gaussian",
    "calibrate_gaussian_report",
    "clear_caches",
    "clones_delta",
    "clones_epsilon",
    "gaussian_chi_chua",
    "mse_lower_bound",
    "privunit_constant",
    "gaussian_mechanism_delta",
    "gaussian_mechanism_epsilon",
    "gaussian_mechanism_sigma",
    "optimal_bmg",
    "smallest_certified_delta",
    "template_delta_estimate",
]
