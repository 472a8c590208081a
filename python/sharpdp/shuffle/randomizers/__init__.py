"""Shuffle-model local randomizers, one per module (Takagi, *Shuffling-aware optimization for
private vector mean estimation*, Section 4 and its appendix).

- :mod:`~sharpdp.shuffle.randomizers.bmg`: :class:`BlanketMixedGaussian`;
- :mod:`~sharpdp.shuffle.randomizers.gaussian`: :class:`GaussianRandomizer`;
- :mod:`~sharpdp.shuffle.randomizers.krr`: :class:`RandomizedResponse`;
- :mod:`~sharpdp.shuffle.randomizers.privunit`: :class:`PrivUnit`, :func:`privunit_constant`;
- :mod:`~sharpdp.shuffle.randomizers.privunit_lattice`: :class:`LatticePrivUnit` (PrivUnit's
  floating-point-safe release on the integer lattice);
- :mod:`~sharpdp.shuffle.randomizers.general`: :class:`GeneralRandomizer`;
- :mod:`~sharpdp.shuffle.randomizers.finite`: :class:`FiniteRandomizer` (exact dyadic table, exact sampler).

Each implements :class:`sharpdp.shuffle.LocalRandomizer` (defaults from :class:`RandomizerBase`).
This package also keeps the former module path ``sharpdp.shuffle.randomizers`` working.
"""

from sharpdp.shuffle.randomizers._base import RandomizerBase
from sharpdp.shuffle.randomizers._table import LowerForm, TableRandomizer
from sharpdp.shuffle.randomizers.bmg import BlanketMixedGaussian
from sharpdp.shuffle.randomizers.finite import FiniteRandomizer
from sharpdp.shuffle.randomizers.gaussian import GaussianRandomizer
from sharpdp.shuffle.randomizers.general import GeneralRandomizer
from sharpdp.shuffle.randomizers.krr import RandomizedResponse
from sharpdp.shuffle.randomizers.privunit import PrivUnit, privunit_constant
from sharpdp.shuffle.randomizers.privunit_lattice import LatticePrivUnit, lattice_sampler_tv

_TableRandomizer = TableRandomizer  # former private name

__all__ = ["BlanketMixedGaussian", "FiniteRandomizer", "GaussianRandomizer", "GeneralRandomizer", "LatticePrivUnit",
           "LowerForm", "PrivUnit", "RandomizedResponse", "RandomizerBase", "TableRandomizer", "lattice_sampler_tv",
           "privunit_constant"]
