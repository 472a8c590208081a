"""Privacy-preserving Cramer-Rao bounds, their recursions and attaining estimators.

Source: J. Ke, J. Wang, J.-F. Zhang, "Privacy-Preserving Cramer-Rao Lower Bound".
Privacy is measured by Fisher information: a mechanism releasing
``z`` from sensitive ``y`` has privacy level ``S`` when ``I_z(y) <= S``.

- Bounds: :func:`ppcrlb` (Thm 14), :func:`pp_fisher_information` (Def. 21),
  :func:`is_identifiable` (Thm 12), :func:`classical_crlb`,
  :func:`crlb_gap_lower_bound` (Cor. 18), :func:`dp_lower_bound` (Cor. 19),
  :func:`bayesian_ppcrlb` (Sec. 4.2), :func:`consensus_lower_bound` (Cor. 38).
- Recursions (C++ core): :class:`RecursivePPFisher` (Alg. 1),
  :class:`RecursivePPCRLB` (Alg. 2), :class:`PrivateRLS` (Alg. 3).
- Estimators: :func:`gaussian_mechanism` (18), :func:`efficient_estimator` (19),
  :func:`ml_private_estimator` (21), :func:`distributed_identification` (Alg. 4).
  Their releases are floating-point safe (exact multiples of a grid in whitened units,
  docs/sampling.md §9); :func:`grid_release` states the cost (:class:`GridRelease`).
"""

from __future__ import annotations

from sharpdp.crlb._release import GridRelease, grid_release
from sharpdp.crlb.bounds import (
    bayesian_ppcrlb,
    classical_crlb,
    consensus_lower_bound,
    crlb_gap_lower_bound,
    dp_lower_bound,
    is_identifiable,
    pp_fisher_information,
    ppcrlb,
)
from sharpdp.crlb.estimators import (
    DistributedResult,
    MLPrivateEstimate,
    distributed_identification,
    efficient_estimator,
    gaussian_mechanism,
    ml_private_estimator,
)
from sharpdp.crlb.recursive import PrivateRLS, RecursivePPCRLB, RecursivePPFisher

__all__ = [
    "ppcrlb",
    "pp_fisher_information",
    "is_identifiable",
    "classical_crlb",
    "crlb_gap_lower_bound",
    "dp_lower_bound",
    "bayesian_ppcrlb",
    "consensus_lower_bound",
    "RecursivePPFisher",
    "RecursivePPCRLB",
    "PrivateRLS",
    "gaussian_mechanism",
    "efficient_estimator",
    "ml_private_estimator",
    "MLPrivateEstimate",
    "distributed_identification",
    "DistributedResult",
    "GridRelease",
    "grid_release",
]
