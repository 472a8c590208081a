"""Session 30 (cal30): the calibration search's loose stage 1 ends on a close bracket, and stage 3's first certifying
point is a loose point already certified where the model gains less than the stop tolerance (docs/calibration.md §8).

The search runs on a synthetic accountant (``closed_then_full`` replaced): log delta(x) = log 1e-6 - 30 (x - x*) +
4 (x - x*)^2 in x = log sigma0, brackets +-0.4 % at the loose rel_tol 0.1 and +-0.1 % at the certifying 1e-2, so the
boundary x* and the least objective are known exactly; n = 1e8, eps = 0.001 puts the search on loose evaluations.
"""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle.calibration import search as CS

from _cal34_switches import session33_calibration  # noqa: F401  (the fixture)
from _main_floats34 import switch

# (**) session 34, cal34: un-nested, this file pins the calibration rules of docs/calibration.md §6-§8 on purpose:
# it runs with §12's switches off (certifying evaluations at rel_tol 1e-2, stage 2's probes made)
pytestmark = pytest.mark.usefixtures("session33_calibration")

XS = math.log(1.16)
DELTA = 1e-6


def _true(x: float) -> float:
    return DELTA * math.exp(-30.0 * (x - XS) + 4.0 * (x - XS) ** 2)


def _run(monkeypatch, bracket_tol: float, x0: float, slope: float) -> tuple[list, tuple]:
    calls: list = []

    def ctf(x, n, adj, e, d, rel_tol=CS.CERT_REL_TOL, skip=math.inf):
        w = 0.004 if rel_tol > CS.CERT_REL_TOL else 0.001
        calls.append((x, rel_tol))
        return _true(x) * (1 - w), _true(x) * (1 + w), "get_delta_bounds", math.inf

    with monkeypatch.context() as m:
        m.setattr(CS, "closed_then_full", ctf)
        m.setattr(CS, "STAGE1_BRACKET", bracket_tol)
        s = CS.Search(lambda x, t: x, (lambda x, t: math.log(DELTA) - slope * (x - XS),), lambda x, t: math.exp(2 * x),
                      10**8, 0.001, DELTA, "zero_out", False, "synthetic")
        assert s.search_rel == 0.1  # (the loose search of docs/calibration.md §6)
        x = s.bracket(XS + x0, None, math.log(DELTA) - math.log(1.01) / 2, CS.STAGE1_TOL, 5)
        s.certify(x, None)
    assert s.best is not None
    return calls, s.best


@pytest.mark.parametrize("x0, slope", [(-0.05, 40.0)])
def test_close_bracket_ends_stage1(monkeypatch, x0, slope):
    """A base of the wrong slope (40 against 30): stage 1's points bracket the aim within 0.15 after three loose
    evaluations; the rule ends it there and stage 3 certifies the interpolation at once (4 evaluations against 5 with
    the rule off). The answer is certified (its certifying upper value <= delta, the synthetic's exact bracket), and
    its objective is within 1e-3 (relative, the optimality tests' tolerance, docs/calibration.md §3.1) of the exact
    optimum: sigma0^2 where the certifying upper value (+0.1 %) meets delta."""
    switch(monkeypatch, "CAL_LOOSE_REL_TOL", 0.1)  # (**) session 35, cal35: §6's rel_tol 0.1 (§13: 0.3 at n >= 1e8)
    on, best_on = _run(monkeypatch, CS.STAGE1_BRACKET, x0, slope)
    off, best_off = _run(monkeypatch, 0.0, x0, slope)
    assert len(on) == 4 and len(off) == 5
    assert [r for _, r in on].count(CS.CERT_REL_TOL) == 1  # (one certifying evaluation, the answer's)
    for best in (best_on, best_off):
        f, x, _, lo, up = best
        assert up <= DELTA and up == _true(x) * 1.001  # (certified by its own evaluation at the certifying rel_tol)
        # the least objective: sigma0^2 where the certifying upper value meets delta exactly (bisection on the synthetic)
        a, b = XS - 0.01, XS + 0.01
        for _ in range(60):
            m = 0.5 * (a + b)
            a, b = (a, m) if _true(m) * 1.001 <= DELTA else (m, b)
        assert math.exp(2 * b) <= f <= math.exp(2 * b) * (1 + 1e-3)


def test_loose_good_point_certified_first():
    """Stage 3's first certifying point (``Search._loose_good``): a loose point already <= delta replaces the model's
    proposal where the proposal gains less than gain_rtol (1e-3 at n >= 1e7) on it, not otherwise; never a loose point
    above delta."""
    s = CS.Search(lambda x, t: x, (lambda x, t: 0.0,), lambda x, t: math.exp(2 * x), 10**8, 0.001, DELTA,
                  "zero_out", False, "synthetic")
    x_good = math.log(0.733815)
    s.pts = [(math.log(0.732829), None, math.log(1.04e-6), False, 1.025e-6, 1.047e-6),
             (x_good, None, math.log(9.87e-7), False, 9.76e-7, 9.968e-7)]
    assert s.gain_rtol == CS.GAIN_RTOL_LARGE
    near = math.log(0.733662)  # (gains 4.2e-4 in sigma0^2: below 1e-3)
    assert s._loose_good(near, None) == (x_good, None)
    far = math.log(0.7330)  # (gains 2.2e-3: the model's point)
    assert s._loose_good(far, None) == (far, None)
    s.pts[1] = (x_good, None, math.log(1.0e-6), False, 9.9e-7, 1.0001e-6)  # (above delta: not a candidate)
    assert s._loose_good(near, None) == (near, None)
