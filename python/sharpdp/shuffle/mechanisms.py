"""Former module of the Gaussian-type randomizers; kept so old import paths keep working.

The randomizers now live one per module in :mod:`sharpdp.shuffle.randomizers`;
``LocalRandomizer`` is the protocol of :mod:`sharpdp.shuffle.contract`.
"""

from sharpdp.shuffle.contract import LocalRandomizer
from sharpdp.shuffle.randomizers.bmg import BlanketMixedGaussian
from sharpdp.shuffle.randomizers.gaussian import GaussianRandomizer

__all__ = ["BlanketMixedGaussian", "GaussianRandomizer", "LocalRandomizer"]
