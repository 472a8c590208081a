"""docs/accountant_tail.md §30: a jump-term refinement to an FFT of HALVE_N points or more halves the step at a time.
Checked on the Gaussian randomizer's x-vs-bot law, sigma0 = 2, n = 1e6, eps = 0.01 (the regime map's cell whose
refinement leapt from h = 0.3125 to h / 32, N = 1.15e6, for a gap that stays near 0.5 from h / 2 on)."""

from __future__ import annotations

import math

from sharpdp.shuffle import GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import switch  # noqa: E402


def _law(sigma0: float, eps: float):
    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]
    return float(gamma), law.shifted(up=True)


def test_halving_stops_where_the_gap_stalls(monkeypatch):
    """The jump term's FFTs stay below HALVE_N and the bracket is inside the leap's (rule off: HALVE_N = inf), both
    certified, so they overlap; the closed form's lower value (docs/accountant_tail.md §24) lies below both upper
    values. Mutation caught: HALVE_N = inf (the leap: N = 1 152 000 > 2^19, lower value 2.0712e-19 < 2.09e-19)."""
    # (**) session 37, lead: §51.1's TV bound (TV_WEIGHTED) removes the stalling TV term this mechanism needs
    switch(monkeypatch, "TV_WEIGHTED", False)
    gamma, law = _law(2.0, 0.01)
    n = 10**6
    seen: list[int] = []
    orig = far_tail.jump_term

    def counted(*a, **k):
        r = orig(*a, **k)
        seen.append(r.N)
        return r

    monkeypatch.setattr(far_tail, "jump_term", counted)
    r = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    assert seen and max(seen) < far_tail.HALVE_N
    monkeypatch.setattr(far_tail, "HALVE_N", math.inf)
    seen.clear()
    off = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    assert max(seen) >= 2**19  # (the rule's case: the leap ran)
    assert r.lower <= off.upper and off.lower <= r.upper
    assert r.upper <= off.upper * (1 + 1e-4) and r.lower >= 2.09e-19 > off.lower
    assert 0 < r.lower < r.upper < 3.2181e-19
