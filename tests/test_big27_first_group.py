"""docs/accountant_tail.md §28: the far-tail lower value at a clamp whose lattice fits the centroid law's
first-group step. Checked on the Gaussian randomizer's
x-vs-bot law: at n = 1e6 with the lattice cap K_MAX lowered (so that the caps force a grid coarser than the first
group's step, as at n = 1e8 with the real cap) against a bracket ten times tighter on the real caps; at n = 1e8
against the upper value of the run without the rule."""

from __future__ import annotations


import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail, lattice
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import switch  # noqa: E402


def _law(sigma0: float, eps: float):
    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]
    return float(gamma), law.shifted(up=True)


@pytest.mark.parametrize("eps", [0.1, 0.01])
def test_first_group_run_contains_the_reference(monkeypatch, eps):
    """n = 1e6, K_MAX = 2^15: the caps force steps 6.75 / 12.25 against the first group's 0.84 / 0.77; without §28's
    run the lower value is the closed form's (six times low), with it the bracket meets 1.5 % and contains the
    reference [Lo, Up] at rel_tol 1e-3 on the real caps (gap 2e-4). Mutations caught: the run's lower value plus its
    pair term (a two-sided sandwich): above the reference's upper value; the run skipped: the gap claim."""
    # (**) session 35, lead: §28's run is what gives the lower value only with §45's hat lower values off (with them on,
    # the coarse round's lower value comes from the hat law whether §28 runs or not: tests/test_big35_hat_lower.py)
    switch(monkeypatch, "HAT_LOWER", False)
    gamma, law = _law(0.5, eps)
    n = 10**6
    ref = far_tail.certify_bigjump(law, gamma, n, 1e-3, 1)
    assert ref.lower > 0 and ref.upper - ref.lower <= 1e-3 * ref.lower
    monkeypatch.setattr(lattice, "K_MAX", 2**15)
    monkeypatch.setattr(far_tail, "K_MAX", 2**15)
    r = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    h_fg = far_tail._h_first_group(law.support()[0], law.mean())[0]
    assert r.h > 4 * h_fg  # (the settled round is the coarse one: the rule's case)
    assert r.lower <= ref.upper and r.upper >= ref.lower
    assert r.upper - r.lower <= 0.015 * r.lower
    monkeypatch.setattr(far_tail, "T0_FIT_MARGIN", 1e-300)  # (the rule off: T0_max above every clamp)
    off = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    assert off.upper == r.upper and off.lower < r.lower / 5


@pytest.mark.slow
def test_gap_at_1e8(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e8, eps = 0.1 (§28's first cell: [0.00401, 0.0128] on branch s27): the bracket
    meets 2.5 % (measured [0.0124086, 0.0126533], 1.97 %; the upper value is now the §28 run's), its lower value below
    the upper value of the run without §28's rule (0.012805; the run's lower value plus its pair term, 3.4e-4, would
    exceed it: the mutation of the test above)."""
    # (**) session 36, tail36: the report's upper value is main's settled round's (§48.2's coarser run off; its bracket
    # against main's rel_tol 1e-3 one: tests/test_tail36_steps.py)
    switch(monkeypatch, "CAP_COARSE", 1.0)
    acc = ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**8, "zero_out")
    lo, up = acc.get_delta_bounds(0.1)
    assert 0 < lo and up - lo <= 0.025 * lo
    gamma, law = _law(0.5, 0.1)
    monkeypatch.setattr(far_tail, "T0_FIT_MARGIN", 1e-300)
    off = far_tail.certify_bigjump(law, gamma, 10**8, 1e-2, -1)
    # (with §29 both runs give the same upper value; the report's is the settled round's, rounded up by an ulp)
    assert lo <= off.upper and up <= off.upper * (1 + 1e-15)
