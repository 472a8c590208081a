"""main's previous via_bottom (via_bottom_main.py, a frozen copy: the review's comparison reference), loaded once,
and a replace-one accountant of the Gaussian randomizer that uses it."""
import importlib.util
import pathlib
import sys

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

spec = importlib.util.spec_from_file_location("via_bottom_main", pathlib.Path(__file__).with_name("via_bottom_main.py"))
vbm = importlib.util.module_from_spec(spec)
sys.modules["via_bottom_main"] = vbm
spec.loader.exec_module(vbm)


def accountant(s, n, old):
    """ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace"), through main's previous search if ``old``."""
    a = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")
    if old:
        a._bottom = vbm.ViaBottom(a._bottom.bottom, a._bottom.legs)
    return a
