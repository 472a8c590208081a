"""Review rev28 of docs/accountant_tail.md §30 (``far_tail.certify_bigjump``, ``HALVE_N`` = 2^19: a jump-term
refinement that would reach an FFT of >= 2^19 points halves the step instead of leaping; "speed only, every grid
certified").

Where the rule fires. A scan of GaussianRandomizer(s, 1), zero-out, s in {1.5, 1.8, 2, 2.2, 2.5, 3, 4.6}, n in
{3e5, 1e6, 3e6}, eps in {0.003, 0.01, 0.03, 0.1, 0.5} (the x-vs-bot law, ``certify_bigjump`` at rel_tol 1e-2 with
the rule and with HALVE_N = inf) found 12 cells where the leap reached 2^19 points (§30 names one: its own scan did
not cover s = 1.8, 2.2, 2.5, 3 nor n = 3e5, 3e6). In 7 of them the floats are the same; in 5 the upper value moved
(1.8 / 3e6 / 0.03: +2.1e-5 relative; 2 / 3e5 / 0.1: -2.5e-6; 2 / 1e6 / 0.03: +4.2e-6; 2 / 3e6 / 0.01: +3.7e-4;
2.2 / 1e6 / 0.01: +9.8 %, [2.4294e-23, 3.9279e-23] against the leap's [2.4836e-23, 3.5772e-23], which it contains:
looser, not wrong) and in the named cell the lower value rose (2.0712e-19 -> 2.1000e-19).
The same scan of BlanketMixedGaussian (gamma, sigma0) in {(0.584, 1.49), (0.198, 0.833), (0.0467, 0.619),
(0.171, 0.78), (0.0389, 0.529), (0.0201, 0.457), (0.027, 0.508)} (regime-map picks, rounded), n in {1e6, 1e7, 1e8},
eps in {0.001, 0.01, 0.1, 1}: 4 cells reach 2^19 points, all with the same floats; in one (0.198, 0.833), n = 1e8,
eps = 0.01, the rule halves four times up to the leap's own grid (N = 174960, 345600, 691200, 1366875, 2733750
against 174960, 2733750): 2.1 -> 3.4 s CPU for the same bracket (speed, not certification; reported).

References, independent of the accountant: the blanket divergence from the mechanism's densities by user 1's single
big jump over an Edgeworth body (tests/_review28_gauss_reference.py, ``d_up_jump``; an estimate: its tolerance is
three times its Edgeworth term plus 1 %, and it omits non-negative terms (two jumps, the body's own excursions), so
it is checked against the upper value with that tolerance and against the lower value with it as well where the
omitted terms are small); and the leap itself (HALVE_N = inf) and a run at rel_tol = 1e-3: certified brackets of the
same value must intersect.
"""

from __future__ import annotations

import math

import pytest

from _review28_gauss_reference import d_up_jump
from sharpdp.shuffle import GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import switch  # noqa: E402


def _run(s: float, n: int, eps: float, rel_tol: float = 1e-2):
    gamma, law = laws_for(GaussianRandomizer(s, 1), eps, "zero_out")[0]
    return far_tail.certify_bigjump(law.shifted(up=True), float(gamma), n, rel_tol, 1)


def _recording(fn, sink: list[int]):
    """``fn`` (the jump term) that appends each result's FFT length to ``sink``."""
    return lambda *a, **k: sink.append((res := fn(*a, **k)).N) or res


def _tol(s: float, eps: float, n: int) -> tuple[float, float]:
    ew, gauss = d_up_jump(s, eps, n)
    return ew, 3.0 * abs(ew - gauss) / ew + 1e-2


# (s, n, eps): cells where the leap reached >= 2^19 points before §30 (scan above)
FIRED = [(2.0, 10**6, 0.01), (2.2, 10**6, 0.01), (2.0, 3 * 10**6, 0.01), (1.8, 3 * 10**6, 0.03), (2.0, 3 * 10**5, 0.1),
         (1.8, 10**6, 0.1)]


@pytest.mark.parametrize("s, n, eps", FIRED)
def test_rule_and_leap_brackets_hold_the_single_jump_reference(monkeypatch, s, n, eps):
    """With the rule (HALVE_N = 2^19) and without it (the leap): both brackets contain the single-big-jump reference
    within its tolerance and intersect each other; the rule's FFTs stay below HALVE_N where the leap's did not."""
    # (**) session 37, lead: §51.1's TV bound (TV_WEIGHTED) removes the stalling TV term this mechanism needs
    switch(monkeypatch, "TV_WEIGHTED", False)
    seen: list[int] = []
    monkeypatch.setattr(far_tail, "jump_term", _recording(far_tail.jump_term, seen))
    on = _run(s, n, eps)
    n_on = max(seen)
    monkeypatch.setattr(far_tail, "HALVE_N", math.inf)
    seen.clear()
    off = _run(s, n, eps)
    assert max(seen) >= 2**19 and max(seen) > n_on  # (the rule's case: the leap ran; the rule stopped short of it)
    ref, tol = _tol(s, eps, n)
    for r in (on, off):
        assert 0.0 < r.lower <= r.upper
        assert r.upper >= ref * (1.0 - tol), (r.lower, r.upper, ref, tol)
        assert r.lower <= ref * (1.0 + tol), (r.lower, r.upper, ref, tol)
    assert max(on.lower, off.lower) <= min(on.upper, off.upper)


def test_named_cell_against_a_tighter_run_and_the_reference():
    """GaussianRandomizer(2, 1), n = 1e6, eps = 0.01 (§30's cell): the rule's bracket [2.1000e-19, 3.2173e-19], a run
    at rel_tol = 1e-3 ([2.3801e-19, 2.9474e-19], nested) and the reference 2.682e-19 (Gaussian body 2.675e-19):
    every pair of brackets intersects and each contains the reference."""
    on = _run(2.0, 10**6, 0.01)
    tight = _run(2.0, 10**6, 0.01, 1e-3)
    ref, tol = _tol(2.0, 0.01, 10**6)
    assert tol < 0.02
    assert max(on.lower, tight.lower) <= min(on.upper, tight.upper)
    for r in (on, tight):
        assert r.lower <= ref * (1 - tol) and ref * (1 + tol) <= r.upper
