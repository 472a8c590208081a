"""A far-tail round whose jump term the closed form of docs/accountant_tail.md §24 brackets within rel_tol/2 runs its
jump grid at the clamp's unit H (docs/accountant_tail.md §28, speed only), checked on GaussianRandomizer(0.5)'s x-vs-bot
law at n = 100, eps = 8 against a fresh bracket at a ten times tighter tolerance (where the closed form's 0.29 % misses
rel_tol/2 and the rule is off: the fine grid of before) and against the code with the rule off."""

from __future__ import annotations

from sharpdp.shuffle import GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for


def _run(monkeypatch, law, gamma, n, rel_tol, rule=True):
    """(bracket, the steps of the jump-term passes) of certify_bigjump, with §28's rule on or off."""
    steps: list[float] = []
    orig = far_tail.jump_term
    monkeypatch.setattr(far_tail, "jump_term", lambda *a, **k: steps.append(a[4]) or orig(*a, **k))
    if not rule:
        monkeypatch.setattr(far_tail, "_closed_jump", lambda *a: None)
    r = far_tail.certify_bigjump(law, gamma, n, rel_tol)
    monkeypatch.undo()
    return r, steps


def test_closed_form_spares_the_fine_jump_grid(monkeypatch):
    """The rule on: one jump pass at the coarse step (N = 2400 instead of 303,750), one round (no redo for a larger
    T0: the redo rule reads the intersected lower value), the bracket within rel_tol; it intersects the rule-off
    bracket and the fresh rel_tol = 1e-3 one (three certified brackets of one value) and contains the latter's lower
    and upper ends' overlap. Mutations caught: the rule removed (one pass at h = 0.21875, N = 303,750); the redo rule
    reading the FFT treatment's lower value 0 (a second round at T0 = 1.3e4); the grid test ignoring cf (refined
    down to the first-group step: passes at h < 1)."""
    gamma, law = laws_for(GaussianRandomizer(0.5, 1), 8.0, "zero_out")[0]
    n = 100
    r1, s1 = _run(monkeypatch, law, gamma, n, 1e-2)
    r0, s0 = _run(monkeypatch, law, gamma, n, 1e-2, rule=False)
    r3, s3 = _run(monkeypatch, law, gamma, n, 1e-3)
    assert len(s1) == 1 and s1[0] > 1.0 and r1.N < 2**15 and r1.T0 == r0.T0
    assert len(s0) == 1 and s0[0] < 1.0 and r0.N > 2**18  # (the code of before)
    assert all(h < 1.0 for h in s3)  # (the closed form's 0.29 % misses rel_tol/2 = 0.05 %: rule off)
    assert 0.0 < r1.lower and r1.upper - r1.lower <= 1e-2 * r1.lower
    assert 0.0 < r3.lower and r3.upper - r3.lower <= 1e-3 * r3.lower
    for a, b in ((r1, r0), (r1, r3)):
        assert max(a.lower, b.lower) <= min(a.upper, b.upper)
    assert r1.lower <= r3.lower and r3.upper <= r1.upper
