"""Laws of the privacy-amplification variable L = l_eps(Y), Y ~ R_BG (docs/accountant.md §1-§2).

:class:`~sharpdp.shuffle.laws.base.Law` is the interface the accountant needs; the families are
:class:`FiniteLaw` (atoms), :class:`LognormalLaw` and :class:`SumLaw`; :func:`laws_for` is the
protocol dispatch and :func:`bmg_laws` the laws of the Gaussian-type randomizers.
"""

from sharpdp.shuffle.laws.base import COMBO_ULPS, U, Law, UnitBoundLaw, check_threshold, laws_for
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws.finite import FiniteLaw, SubFinite
from sharpdp.shuffle.laws.lognormal import LognormalLaw
from sharpdp.shuffle.laws.sum import SumLaw

__all__ = ["COMBO_ULPS", "FiniteLaw", "Law", "LognormalLaw", "SubFinite", "SumLaw", "U", "UnitBoundLaw", "bmg_laws",
           "check_threshold", "laws_for"]
