"""Former home of the index and geometry helpers; kept so old import paths keep working.

Each concept now has its own module: :mod:`sharpdp.shuffle.templates` (asymptotic templates),
:mod:`sharpdp.shuffle.tables` (finite tables, their indices and atoms),
:mod:`sharpdp.shuffle.clones` (the clones bound), :mod:`sharpdp.shuffle.quadrature` (certified
1-D quadrature), :mod:`sharpdp.shuffle.sphere` (spherical caps), :mod:`sharpdp.shuffle.adjacency`
(adjacency names), the BMG's chi_up in :mod:`sharpdp.shuffle.randomizers.bmg`, and
``smallest_certified_delta`` (above the accountant) in :mod:`sharpdp.shuffle.certified`.
"""

from sharpdp.shuffle.adjacency import ADJACENCIES as _ADJACENCIES  # noqa: F401
from sharpdp.shuffle.adjacency import check_adjacency
from sharpdp.shuffle.clones import clones_delta, clones_epsilon
from sharpdp.shuffle.quadrature import (
    CERT_FP,
    certified_grid,
    certified_interval_integrals,
    certified_log_error,
    certified_pair_variance,
    certified_two_point_atoms,
    log_curvature_violation,
)
from sharpdp.shuffle.randomizers.bmg import _bmg_up_variance, bmg_chi_up  # noqa: F401
from sharpdp.shuffle.sphere import sphere_tail, three_cap_measure, two_cap_measure
from sharpdp.shuffle.tables import (
    finite_laws,
    merge_atoms,
    table_chi_lo,
    table_chi_up,
    table_pairs,
    table_pav_atoms,
    unique_laws,
)
from sharpdp.shuffle.templates import asymptotic_delta, gaussian_chi_chua, gaussian_chua_variance, mse_lower_bound


def __getattr__(name: str):
    # smallest_certified_delta sits above the accountant: imported on demand so that importing
    # this compatibility module never pulls the accountant in.
    if name == "smallest_certified_delta":
        from sharpdp.shuffle.certified import smallest_certified_delta

        return smallest_certified_delta
    raise AttributeError(f"module 'sharpdp.shuffle.indices' has no attribute {name!r}")


__all__ = ["CERT_FP", "asymptotic_delta", "certified_grid", "certified_interval_integrals", "certified_log_error",
           "certified_pair_variance", "certified_two_point_atoms", "check_adjacency", "clones_delta",
           "clones_epsilon", "finite_laws", "gaussian_chi_chua", "gaussian_chua_variance", "log_curvature_violation",
           "merge_atoms", "mse_lower_bound", "smallest_certified_delta", "sphere_tail", "table_chi_lo",
           "table_chi_up", "table_pairs", "table_pav_atoms", "three_cap_measure", "two_cap_measure",
           "unique_laws", "bmg_chi_up"]
