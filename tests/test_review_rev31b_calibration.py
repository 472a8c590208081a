"""Review rev31b of the calibrations in session 31 (eps31, docs/calibration.md §9: "measured, no rule changed"; the
calibrations do not call get_epsilon, whose search changed in docs/accountant.md §8.11).

Claims attacked: ``calibrate_bmg`` / ``calibrate_gaussian`` make the same evaluations as main 7b66b43 (their answers are
main's floats, pinned below: computed by /work/venv/main in a fresh process per call, caches cleared; the review found
them equal on 28 cells, n = 100 .. 1e8, eps 0.01 .. 8); each answer's fresh certified delta at eps (a new accountant at
rel_tol 1e-3, caches cleared) is <= delta; and calibrate_gaussian's sigma0 is within 2e-3 of the smallest certified one
(sigma0 (1 - 2e-3) is refuted: its fresh certified lower value exceeds delta; measured 1.021-1.082 delta on 12 cells).
(Observed, not a claim of this session: calibrate_bmg(100, 8, 1e-6, 1) stops on the closed forms of
docs/accountant.md §6.9 at a certified 8.94e-7 (0.894 delta); its mse_single 0.41044 is 1.1 % above the least
certified one found by the review on a gamma grid (0.40586 at gamma 0.040, sigma0 0.57935), the price that section
describes.)
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, calibrate_bmg,
                             calibrate_gaussian, clear_caches)

DELTA = 1e-6
# (kind, n, eps, main 7b66b43's answer: (gamma, sigma0) or (sigma0,))
CELLS = [
    ("bmg", 100, 0.01, (0.8770480975309936, 4.233060369635169)),
    ("gauss", 100, 0.01, (39.6240699007864,)),
    ("bmg", 100, 1.0, (0.22405382380428362, 1.238876346499956)),
    ("gauss", 100, 1.0, (1.917498386744928,)),
    ("bmg", 100, 8.0, (0.051057210686144563, 0.5666966712607993)),
    ("gauss", 100, 8.0, (0.8948975270915065,)),
    ("bmg", 10000, 0.1, (0.1945081189394096, 0.9639231743336123)),
    ("gauss", 10000, 0.1, (1.494403257345784,)),
    ("bmg", 10000, 8.0, (0.01700666758745193, 0.43156168334615724)),
    ("gauss", 10000, 8.0, (0.6957169136838202,)),
    ("bmg", 1000000, 0.1, (0.046734964751659336, 0.6194977229608577)),
    ("gauss", 1000000, 0.1, (0.9602357431838197,)),
    ("bmg", 1000000, 1.0, (0.027018718327855053, 0.5082412099806768)),
    ("gauss", 1000000, 1.0, (0.8042612096882678,)),
    # (**) session 32, eps32: the start at n >= 1e7, eps > 0.01 aims on the big jump with its Jensen correction, one
    # certifying evaluation as before, Err_1 +2.1e-5 / sigma0^2 +5.4e-6 (docs/calibration.md §10); certified below
    ("bmg", 100000000, 1.0, (0.013287715236163067, 0.3954227319423548)),
    ("gauss", 100000000, 1.0, (0.6445752414373822,)),
]


@pytest.mark.parametrize("kind, n, eps, ref", CELLS)
@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, pins session 33's floats on purpose; the new rules' values are checked against references in the session-34 files
def test_calibration_is_mains_float_and_certified(kind, n, eps, ref, monkeypatch):
    # (**) session 35, mid35: main's floats need docs/accountant_tail.md §46's steps off
    from _main_floats34 import machine_same, switch
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, lead: §8.19
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4

    for name in ("END_ATOM_SNAP", "ATOM_SPACING_SNAP", "LOWER_ONLY_SETTLED"):
        switch(monkeypatch, name, False)
    switch(monkeypatch, "HAT_DENSITY", False)  # (**) session 39, lead: §55 moves calibrate_gaussian(1e6, 0.1) by 6e-8 relative
    clear_caches()
    if kind == "bmg":
        b = calibrate_bmg(n, eps, DELTA, 1)
        got = (float(b.gamma), float(b.sigma0))
    else:
        got = (float(calibrate_gaussian(n, eps, DELTA).sigma0),)
    # (**) session 42, lead: a calibration's root moves with the last bits of its evaluations (another CPU's numpy and
    # OpenBLAS kernels, tests/_main_floats34.py): up to 6e-10 relative seen on an AVX2 machine, within the search's xtol
    assert machine_same(got, ref, rel=1e-8), (got, ref)
    clear_caches()
    r = BlanketMixedGaussian(got[0], got[1], 1) if kind == "bmg" else GaussianRandomizer(got[0], 1)
    _, up = ShuffleAccountant(r, n, rel_tol=1e-3).get_delta_bounds(eps)
    assert float(up) <= DELTA, float(up) / DELTA
    if kind == "gauss" and n <= 10**6:
        clear_caches()
        lo, _ = ShuffleAccountant(GaussianRandomizer(got[0] * (1.0 - 2e-3), 1), n, rel_tol=1e-3).get_delta_bounds(eps)
        assert float(lo) > DELTA, float(lo) / DELTA
