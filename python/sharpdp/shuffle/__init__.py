"""Shuffle model: local randomizers, shuffle indices, certified FFT accountant.

Source: Takagi, *Shuffling-aware optimization for private vector mean estimation*.

- The randomizer contract :class:`LocalRandomizer` (:mod:`~sharpdp.shuffle.contract`) and the
  randomizers, one per module under :mod:`~sharpdp.shuffle.randomizers`.
- :class:`ShuffleAccountant`: certified delta(eps) / eps(delta) of the shuffled randomizer.
- Calibration (:func:`calibrate_bmg`, :func:`optimal_bmg`), asymptotic templates
  (:mod:`~sharpdp.shuffle.templates`), the clones bound (:mod:`~sharpdp.shuffle.clones`) and
  :func:`smallest_certified_delta` (:mod:`~sharpdp.shuffle.certified`).

The names below are imported on first use (PEP 562), so importing a submodule such as
:mod:`sharpdp.shuffle.adjacency` (the command line's ``--help``) does not load the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sharpdp._lazy import lazy_namespace

if TYPE_CHECKING:  # the same names, for type checkers and IDEs
    from sharpdp.conversions import gaussian_mechanism_delta, gaussian_mechanism_epsilon, gaussian_mechanism_sigma
    from sharpdp.shuffle.laws import FiniteLaw, LognormalLaw
    from sharpdp.shuffle.adjacency import ADJACENCIES, DEFAULT_ADJACENCY
    from sharpdp.shuffle.contract import LocalRandomizer
    from sharpdp.shuffle.randomizers import (
        BlanketMixedGaussian,
        FiniteRandomizer,
        GaussianRandomizer,
        GeneralRandomizer,
        LatticePrivUnit,
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

# public name -> module that defines it
_MODULES = {
    "gaussian_mechanism_delta": "sharpdp.conversions",
    "gaussian_mechanism_epsilon": "sharpdp.conversions",
    "gaussian_mechanism_sigma": "sharpdp.conversions",
    "FiniteLaw": "sharpdp.shuffle.laws",
    "LognormalLaw": "sharpdp.shuffle.laws",
    "ADJACENCIES": "sharpdp.shuffle.adjacency",
    "DEFAULT_ADJACENCY": "sharpdp.shuffle.adjacency",
    "LocalRandomizer": "sharpdp.shuffle.contract",
    "BlanketMixedGaussian": "sharpdp.shuffle.randomizers",
    "FiniteRandomizer": "sharpdp.shuffle.randomizers",
    "GaussianRandomizer": "sharpdp.shuffle.randomizers",
    "GeneralRandomizer": "sharpdp.shuffle.randomizers",
    "LatticePrivUnit": "sharpdp.shuffle.randomizers",
    "PrivUnit": "sharpdp.shuffle.randomizers",
    "RandomizedResponse": "sharpdp.shuffle.randomizers",
    "privunit_constant": "sharpdp.shuffle.randomizers",
    "asymptotic_delta": "sharpdp.shuffle.templates",
    "gaussian_chi_chua": "sharpdp.shuffle.templates",
    "mse_lower_bound": "sharpdp.shuffle.templates",
    "AccountantReport": "sharpdp.shuffle.accountant",
    "ShuffleAccountant": "sharpdp.shuffle.accountant",
    "CalibrationReport": "sharpdp.shuffle.calibration",
    "calibrate_bmg": "sharpdp.shuffle.calibration",
    "calibrate_bmg_report": "sharpdp.shuffle.calibration",
    "calibrate_gaussian": "sharpdp.shuffle.calibration",
    "calibrate_gaussian_report": "sharpdp.shuffle.calibration",
    "optimal_bmg": "sharpdp.shuffle.calibration",
    "template_delta_estimate": "sharpdp.shuffle.calibration",
    "clones_delta": "sharpdp.shuffle.clones",
    "clones_epsilon": "sharpdp.shuffle.clones",
    "smallest_certified_delta": "sharpdp.shuffle.certified",
    "ExactShuffleAccountant": "sharpdp.shuffle.exact_krr",
    "DominatingPair": "sharpdp.shuffle.profile",
    "clear_caches": "sharpdp.shuffle.profile",
    "dominating_pair": "sharpdp.shuffle.profile",
    "privacy_profile": "sharpdp.shuffle.profile",
    "privacy_profile_bounds": "sharpdp.shuffle.profile",
    "ComposedAccountant": "sharpdp.shuffle.composition",
}

__getattr__, __dir__ = lazy_namespace(__name__, _MODULES, globals())

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
    "LatticePrivUnit",
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
