"""The decision step of the calibrations at small n (docs/accountant.md §6.9): the closed-form bracket
``ShuffleAccountant.closed_form_bounds`` against the full evaluation (``get_delta_bounds``) and an mpmath
quadrature of D_up at n = 2, the decisions of ``decide_bounds``, and the calibrations' certificates."""

from __future__ import annotations

import pytest

import sharpdp.shuffle as sh
import sharpdp.shuffle.calibration.search as S
from sharpdp.shuffle.calibration.gaussian import calibrate_gaussian_report
from test_smalln_jump import GAUSSIAN_N2_CASES, stored_gaussian_n2_reference


@pytest.mark.parametrize("sigma0,eps", GAUSSIAN_N2_CASES)
def test_closed_form_bounds_contain_the_n2_quadrature(sigma0, eps):
    # the mpmath value from the definition (tests/test_smalln_jump.py recomputes it and checks the store)
    ref = stored_gaussian_n2_reference(sigma0, eps)
    lo, up = sh.ShuffleAccountant(sh.GaussianRandomizer(sigma0, 1), 2, sampler_charge=False).closed_form_bounds(eps)
    assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (lo, ref, up)


@pytest.mark.parametrize("rz,n,eps,adj", [
    (sh.GaussianRandomizer(2.0, 1), 10, 5.0, "zero_out"),   # few-user bracket ~45 % wide
    (sh.GaussianRandomizer(4.0, 1), 5, 1.0, "zero_out"),    # wide (x 40): a straddle pays the full evaluation
    (sh.GaussianRandomizer(1.5, 1), 100, 1.0, "zero_out"),
    (sh.GaussianRandomizer(2.0, 1), 3, 5.0, "replace"),
    (sh.BlanketMixedGaussian(0.3, 1.0, 1), 5, 2.0, "zero_out"),
])
def test_closed_form_bounds_against_the_full_evaluation(rz, n, eps, adj):
    """Both are certified brackets of the same blanket value: they intersect, and the closed-form one
    is never tighter than the truth allows (its lower <= the full upper, its upper >= the full lower)."""
    acc = sh.ShuffleAccountant(rz, n, adj)
    lo_c, up_c = acc.closed_form_bounds(eps)
    lo, up = (float(v) for v in acc.get_delta_bounds(eps))
    assert 0.0 <= lo_c <= up_c <= 1.0
    assert lo_c <= up * (1 + 1e-12) and lo <= up_c * (1 + 1e-12), (lo_c, up_c, lo, up)


def test_decide_bounds_decisions():
    """Up_c <= delta certifies and Lo_c > delta refutes without the full evaluation; the full
    evaluation agrees with each decision; a wide straddling bracket pays the full evaluation."""
    rz, n, eps = sh.GaussianRandomizer(2.0, 1), 10, 5.0
    acc = sh.ShuffleAccountant(rz, n)
    lo_c, up_c = acc.closed_form_bounds(eps)
    lo, up = (float(v) for v in acc.get_delta_bounds(eps))
    assert 0.0 < lo_c < up_c
    d = S.decide_bounds(rz, n, "zero_out", eps, up_c * 1.001)
    assert d == (lo_c, up_c, "closed_form_bounds") and up <= up_c * 1.001  # certified, and the full agrees
    d = S.decide_bounds(rz, n, "zero_out", eps, lo_c * 0.999)
    assert d[2] == "closed_form_bounds" and d[0] > lo_c * 0.999 and up > lo_c * 0.999  # refuted, full agrees
    wide = sh.GaussianRandomizer(4.0, 1)  # closed-form bracket [7e-6, 3e-4] at n = 5, eps = 1
    lo_w, up_w = sh.ShuffleAccountant(wide, 5).closed_form_bounds(1.0)
    assert up_w > 2.0 * lo_w > 0.0
    d = S.decide_bounds(wide, 5, "zero_out", 1.0, (lo_w * up_w) ** 0.5)
    assert d[2] == "get_delta_bounds" and d[1] - d[0] <= 1e-2 * d[0]
    d = S.decide_bounds(wide, 600, "zero_out", 1.0, 1e-6)  # above DECIDE_N_MAX: always the full evaluation
    assert d[2] == "get_delta_bounds"


def test_calibrate_gaussian_decided_is_certified_and_near_the_full_search():
    """(10, 5, 1e-15): minutes with the full evaluations, now answered by closed forms; the answer is
    certified by the method it names, and 1 % smaller is refuted (its certified lower value > delta)."""
    n, eps, delta = 10, 5.0, 1e-15
    rep = calibrate_gaussian_report(n, eps, delta)
    sigma0 = rep.randomizer.sigma0
    acc = sh.ShuffleAccountant(rep.randomizer, n)
    assert rep.certificate == "closed_form_bounds"
    assert acc.closed_form_bounds(eps) == rep.delta_bounds and rep.delta_bounds[1] <= delta
    assert sh.ShuffleAccountant(sh.GaussianRandomizer(sigma0 * 0.99, 1), n).closed_form_bounds(eps)[0] > delta


def test_calibrate_gaussian_against_the_full_search(monkeypatch):
    """(10, 5, 1e-9): the decided search's sigma0 within 1e-4 (relative) of the full search's."""
    fast = calibrate_gaussian_report(10, 5.0, 1e-9)
    monkeypatch.setattr(S, "DECIDE_N_MAX", 0)
    full = calibrate_gaussian_report(10, 5.0, 1e-9)
    assert full.certificate == "get_delta_bounds"
    s_fast, s_full = fast.randomizer.sigma0, full.randomizer.sigma0
    assert s_full * (1 - 1e-6) <= s_fast <= s_full * (1 + 1e-4), (s_fast, s_full)
    assert sh.ShuffleAccountant(fast.randomizer, 10).get_delta(5.0) <= 1e-9
