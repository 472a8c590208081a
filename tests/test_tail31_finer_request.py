"""A finer request's far-tail runs (docs/accountant_tail.md §37.1, session 31, tail31).

(a) GaussianRandomizer(0.5, 1), n = 1e8, eps = 0.001 (zero-out), rel_tol 1e-3: the finer run's rounds lose the
centroid law's first group (step 3.03 > 0.758), and §28's run at T0_max = 331093 does not fit the caps at rel_tol
1e-3 (its jump term's window needs a step >= 0.78): that run is now made at rel_tol 1e-2 (`_fit_run`), the very
run the default request makes, and §36's second run is skipped. Reference: session 30's answer, the intersection
of the finer run without the fallback and the default request's bracket (both certified), which the new bracket
must equal (up to the accountant's own roundings, 1e-8 relative).

(b) BMG (calibrate_bmg's pick), n = 1e9, eps = 0.001, rel_tol 1e-3: the lattice cap does not set the finer run's
step (h = 0.734 for both requests), so §36's second run is skipped; the default request's bracket (the run that
was skipped) does not improve on the finer one at either end.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.accountant.jump import TailCoarsen
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import switch  # noqa: E402


def _bracket(randomizer, n: int, eps: float, rel_tol: float) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(randomizer, n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


def _fit_run_without_fallback(law, gamma, n, rel_tol, workers, max_rounds, negligible, doomed, T0_fit):
    """Session 30's §28 run: at the request's rel_tol only (TailCoarsen where it does not fit)."""
    return far_tail.certify_bigjump(law, gamma, n, rel_tol, workers, True, max_rounds, negligible, doomed=doomed,
                                    T0_max=T0_fit)


def test_finer_request_takes_the_default_fit_run_where_its_own_does_not_fit(monkeypatch: pytest.MonkeyPatch):
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: §37.1's premise (the finer run alone has no lower value)
    R, N, EPS = GaussianRandomizer(0.5, 1), 10**8, 0.001
    lo2, up2 = _bracket(R, N, EPS, 1e-2)
    with monkeypatch.context() as m:
        m.setattr(far_tail, "_fit_run", _fit_run_without_fallback)
        m.setattr(far_tail, "COARSE_REL_TOL", 0.0)  # (the finer run alone: no fallback, no §36 run)
        lo_f, up_f = _bracket(R, N, EPS, 1e-3)
    lo3, up3 = _bracket(R, N, EPS, 1e-3)
    # the finer run alone lost its lower value (the centroid law and §28's run), its upper value is the better one
    assert lo_f < 0.2 * lo2 and up_f < up2
    # the new answer is session 30's: both ends of the intersection of two certified brackets, and meets 1e-3
    assert max(lo_f, lo2) <= lo3 * (1 + 1e-8) and up3 <= min(up_f, up2) * (1 + 1e-8)
    assert lo3 == pytest.approx(max(lo_f, lo2), rel=1e-8) and up3 == pytest.approx(min(up_f, up2), rel=1e-8)
    assert up3 - lo3 <= 1e-3 * lo3


def test_fit_run_at_the_finer_rel_tol_does_not_fit_the_caps():
    """(a)'s premise, on the law itself: §28's run raises at rel_tol 1e-3, and `_fit_run` returns the run at 1e-2."""
    gamma, law = laws_for(GaussianRandomizer(0.5, 1), 0.001, "zero_out")[0]  # (the x vs ⊥ law)
    gamma, n = float(gamma), 10**8
    run = law.shifted(up=True)
    T0_fit = 331093.3333333334  # K_MAX / J_LO * h_first_group / T0_FIT_MARGIN, h_first_group = 0.7578125
    with pytest.raises(TailCoarsen):
        far_tail.certify_bigjump(run, gamma, n, 1e-3, -1, True, T0_max=T0_fit)
    r = far_tail._fit_run(run, gamma, n, 1e-3, -1, 8, 0.0, True, T0_fit)
    ref = far_tail.certify_bigjump(run, gamma, n, 1e-2, -1, True, T0_max=T0_fit)
    assert r.coarse_fit and not ref.coarse_fit
    assert (r.lower, r.upper, r.T0, r.h) == (ref.lower, ref.upper, ref.T0, ref.h)


def test_second_run_skipped_where_the_cap_does_not_set_the_step():
    R = BlanketMixedGaussian(0.07887975715707618, 0.5969535466821054, 1)
    N, EPS = 10**9, 0.001
    lo2, up2 = _bracket(R, N, EPS, 1e-2)
    lo3, up3 = _bracket(R, N, EPS, 1e-3)
    # the skipped run (the default request's) would not have tightened either end
    assert lo2 <= lo3 and up3 <= up2
    assert up3 - lo3 <= up2 - lo2
