"""Review rev34 of session 34's calibrations at n = 1e8 and get_epsilon cells (cal34, the accountant document's §8.14 and
the calibration document's §12). The claims attacked: every calibration's answer keeps its public promise
(``ShuffleAccountant(answer, n).get_delta(epsilon) <= delta`` with a fresh accountant at the default rel_tol, and the
report's ``delta_bounds`` is that fresh bracket, the calibration document's §1 and §11), no tighter certificate puts the
truth above the target (a fresh lower value at rel_tol 1e-3 <= delta), and the answer is not noisier than main
81992f2's by more than the tolerance the optimality tests hold the search to (the calibration document's §3.1: 1e-3 in
Err_1); every get_epsilon answer's fresh certified upper value is <= delta (the accountant document's §8).

References: main 81992f2's answers (the regime map of main, /tmp/map33c, family (a) and (b) calibration columns) and a
fresh accountant per check, caches cleared.

Review sweep (cal34 at 31480e3, the report's bracket at rel_tol 0.02): calibrate_gaussian and calibrate_bmg at
(n, eps) = (1e7, 0.01 / 0.003), (3e7, 0.005), (1e8, 0.01 / 0.005 / 0.001), (1e9, 0.01 / 0.001), delta = 1e-6: every
fresh default-rel_tol upper value at the answer <= delta (each below the report's rel_tol-0.02 upper value), every
rel_tol-1e-3 lower value <= delta, Err_1 within +1.3e-4 of main's; at f4fb0d0 this file passes.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, calibrate_bmg_report,
                             calibrate_gaussian_report, clear_caches)

DELTA = 1e-6
ERR_ROOM = 2e-3  # (the optimality tests' tolerance 1e-3, doubled: a search's answer may sit either side of main's)


def _fresh(r, n: int, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(r, n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


# (kind, n, eps, main 81992f2's Err_1 of the answer)
CAL = [
    ("bmg", 10**8, 0.01, 0.34362786328979045),
    ("gauss", 10**8, 0.01, 0.6926589063893294),
]


@pytest.mark.parametrize("kind, n, eps, main_err", CAL)
def test_calibration_at_1e8_keeps_its_promise(kind, n, eps, main_err):
    clear_caches()
    if kind == "bmg":
        rep = calibrate_bmg_report(n, eps, DELTA, 1, progress=False)
        r = BlanketMixedGaussian(rep.randomizer.gamma, rep.randomizer.sigma0, 1)
        err = r.sigma0**2 / (1 - r.gamma) ** 2 + r.gamma / (1 - r.gamma)
    else:
        rep = calibrate_gaussian_report(n, eps, DELTA, progress=False)
        r = GaussianRandomizer(rep.randomizer.sigma0, 1)
        err = r.sigma0**2
    assert rep.delta_bounds[1] <= DELTA
    fresh = _fresh(r, n, eps)  # (the public promise: a fresh accountant at the default rel_tol 1e-2)
    assert fresh[1] <= DELTA, (fresh, rep.delta_bounds)
    if rep.certificate == "get_delta_bounds":  # (the report's bracket is a fresh accountant's at the rel_tol it names)
        again = _fresh(r, n, eps, float(getattr(rep, "rel_tol", 1e-2)))
        assert (float(rep.delta_bounds[0]), float(rep.delta_bounds[1])) == again
    assert err <= main_err * (1.0 + ERR_ROOM), (err, main_err)


# (cell, n, delta): the get_epsilon cells of the map over 3x one get_delta_bounds on main (the cal34 brief's goal 2)
EPS_CELLS = [
    (("bmg", 0.051057210686144563, 0.5666966712607993), 100),
    (("gauss", 2.0), 10**8),
]


@pytest.mark.parametrize("cell, n", EPS_CELLS)
def test_get_epsilon_answer_certified(cell, n):
    r = BlanketMixedGaussian(cell[1], cell[2], 1) if cell[0] == "bmg" else GaussianRandomizer(cell[1], 1)
    clear_caches()
    e = float(ShuffleAccountant(r, n, "zero_out").get_epsilon(DELTA))
    lo, up = _fresh(r, n, e)
    assert up <= DELTA, (e, lo, up)
    assert lo <= DELTA
