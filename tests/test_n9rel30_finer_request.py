"""A finer request's far-tail bracket intersected with the default request's (docs/accountant_tail.md §36, session 30,
n9rel30): at GaussianRandomizer(0.7338154753785715, 1), n = 1e9, eps = 0.01 (zero-out) the rel_tol-1e-3 run alone
takes the clamp T0 = 1392640 for its smaller pair term, where the size caps allow no step finer than 5.3125 (the
default's T0 = 826880 allows 2.65625): its bracket [8.732e-7, 1.00543e-6] is wider than the default's
[9.672e-7, 9.923e-7]. Both are certified brackets of one value, so their intersection is; the finer request now
returns it. References: the finer run alone (the rule switched off) and the default request's run."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail
from _main_floats34 import session34_floats  # noqa: E402

S, N, EPS = 0.7338154753785715, 10**9, 0.01


def _bracket(rel_tol: float) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(S, 1), N, "zero_out", rel_tol=rel_tol).get_delta_bounds(EPS)
    return float(lo), float(up)


def test_finer_request_is_the_intersection_of_its_run_and_the_default_run(monkeypatch: pytest.MonkeyPatch):
    session34_floats(monkeypatch)  # (**) session 35, lead: pins session 34's floats (or a mechanism of them) on purpose; the new rules' values: the session-35 test files
    lo2, up2 = _bracket(1e-2)
    with monkeypatch.context() as m:
        m.setattr(far_tail, "COARSE_REL_TOL", 0.0)  # the finer run alone (the rule of §36 off)
        lo_f, up_f = _bracket(1e-3)
    lo3, up3 = _bracket(1e-3)
    # the finer run alone is certified but wide (the defect the rule repairs), and meets the default's bracket
    assert up_f - lo_f > 4.0 * (up2 - lo2) and max(lo_f, lo2) <= min(up_f, up2)
    # the finer request: within both certified brackets, and their intersection (up to the accountant's own
    # roundings of the per-law values, 1e-8 relative)
    assert max(lo_f, lo2) <= lo3 <= up3 <= min(up_f, up2)
    assert lo3 == pytest.approx(max(lo_f, lo2), rel=1e-8) and up3 == pytest.approx(min(up_f, up2), rel=1e-8)
    assert up3 <= 1e-6
