"""Print the accountant's values on cases of the test suite, for bit-identity checks across revisions.

Usage (two installs, e.g. before and after a refactoring; run outside the repository so the
installed package is imported):

    python bench/accountant_values.py > before.txt   # with the old install
    python bench/accountant_values.py > after.txt    # with the new install
    diff before.txt after.txt                        # empty: bit-identical

Every value is printed with repr (17 significant digits), so an empty diff means bit-identical
results: zero-out and replace for the blanket-mixed Gaussian (n = 10 ... 1e6), replace through
bot for the Gaussian randomizer, the k-RR reference table, get_epsilon, the lower form, PrivUnit,
a certified GeneralRandomizer and calibrate_bmg.
"""
import pathlib
import sys
import warnings

import numpy as np
import sharpdp.shuffle as sh

# the lifted binary RR of the test suite (tests/_densities.py), the same densities as the tests use
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
from _densities import T, half, lifted_rr as lifted  # noqa: E402

warnings.simplefilter("ignore")  # the estimate-mode warning is not under test here

out = []
def rec(name, v):
    out.append(f"{name} {np.asarray(v, dtype=float).tolist()!r}")

for g, s, n, e in [(0.9, 3.0, 10, 0.02), (0.95, 4.6, 300, 0.002), (0.7, 1.5, 100, 0.1), (0.95, 4.6, 10**6, 1.106e-5)]:
    acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(g, s, 1), n)
    rec(f"bmg-z {g} {s} {n} {e}", acc.get_delta_bounds(e))
    rec(f"bmg-r {g} {s} {n} {e}", sh.ShuffleAccountant(sh.BlanketMixedGaussian(g, s, 1), n, "replace").get_delta_bounds(e))
rec("bmg eps", sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.95, 4.6, 1), 10**6).get_epsilon(1e-6))
rec("gauss-z", sh.ShuffleAccountant(sh.GaussianRandomizer(3.0, 1), 20).get_delta_bounds(0.3))
rec("gauss-r", sh.ShuffleAccountant(sh.GaussianRandomizer(4.6, 1), 100, "replace").get_delta_bounds(0.3))
for k, e0, e, n in [(3, 1.0, 0.3, 200), (5, 1.0, 0.25, 300), (10, 2.0, 0.4, 300)]:
    rec(f"rr {k}", sh.ShuffleAccountant(sh.RandomizedResponse(k, e0), n, adjacency="replace").get_delta_bounds(e))
rr = sh.ShuffleAccountant(sh.RandomizedResponse(10, 1.0), 10**5, adjacency="replace")
rec("rr eps", rr.get_epsilon(1e-6))
rec("rr lower form", rr.get_delta_lower_form(0.0066))
rec("rr-z", sh.ShuffleAccountant(sh.RandomizedResponse(4, 2.0), 2000).get_delta_bounds(0.3))
for adj in ("zero_out", "replace"):
    rec(f"pu {adj}", sh.ShuffleAccountant(sh.PrivUnit(0.7, 0.2, 4), 1000, adj).get_delta_bounds(0.2))
gr = sh.GeneralRandomizer(lifted, [-1.0, 1.0], (-1.0, 1.0), blanket=half, gamma=1 - T, breakpoints=[0.0], cells=32,
                          log_curvature=0.0)
rec("general", sh.ShuffleAccountant(gr, 1000).get_delta_bounds(0.1))
rec("calib", [sh.calibrate_bmg(10**4, 0.1, 1e-5, 1, progress=False).sigma0])
# the far-tail path (docs/accountant_tail.md): heavy laws of both families
for rz, n, e, adj in [(sh.BlanketMixedGaussian(0.02, 0.5, 1), 1000, 4.0, "replace"),
                      (sh.GaussianRandomizer(0.3, 1), 1000, 1.0, "zero_out"),
                      (sh.BlanketMixedGaussian(0.056, 0.52, 1), 327_346, 1.0, "zero_out")]:
    rec(f"far-tail {rz!r} {n} {e} {adj}", sh.ShuffleAccountant(rz, n, adj).get_delta_bounds(e))
# composition (docs/composition.md): k rounds of a shuffled k-RR and of a BMG
ca = sh.ComposedAccountant([(sh.ShuffleAccountant(sh.RandomizedResponse(2, 1.0), 50, rel_tol=5e-3), 3)], 1e-3)
rec("composed rr", ca.get_delta_bounds(np.array([0.2, 0.5, 1.0])))
cb = sh.ComposedAccountant([(sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.9, 3.0, 1), 100, rel_tol=3e-3), 4)], 1e-3)
rec("composed bmg", cb.get_delta_bounds(np.array([0.1, 0.3])))
print("\n".join(out))
