"""Choosing blanket-mixed Gaussian (and Gaussian randomizer) parameters.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Sections 4.2 and 5.

* :func:`optimal_bmg` (:mod:`.optimal`) — the (gamma, sigma0) minimising the worst-case single-user
  MSE ``Err_1`` under a lower shuffle index constraint ``chi_lo >= chi`` (numerical optimisation
  of the paper's closed forms).
* :func:`calibrate_bmg` (:mod:`.bmg`; k composed rounds: :mod:`.rounds`) and
  :func:`calibrate_gaussian` (:mod:`.gaussian`) — the randomizer with the smallest ``Err_1`` whose
  *certified* shuffled delta(epsilon) at n users is below a target, from the certified accountant
  :class:`sharpdp.shuffle.ShuffleAccountant`, found by the search of :mod:`.search` on the
  uncertified estimates of :mod:`.estimates` (docs/calibration.md).
"""

from sharpdp.shuffle.calibration.bmg import calibrate_bmg, calibrate_bmg_report
from sharpdp.shuffle.calibration.estimates import template_chi, template_delta_estimate
from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian, calibrate_gaussian_report
from sharpdp.shuffle.calibration.optimal import optimal_bmg
from sharpdp.shuffle.calibration.search import CalibrationReport

__all__ = ["CalibrationReport", "calibrate_bmg", "calibrate_bmg_report", "calibrate_gaussian",
           "calibrate_gaussian_report", "optimal_bmg", "template_chi", "template_delta_estimate"]
