"""A far-tail round that meets rel_tol/2 is kept: no redo for a smaller T0 (docs/accountant_tail.md §27), checked on
the Gaussian randomizer's x-vs-bot law at n = 1e6 against a fresh bracket at a ten times tighter tolerance (which
redoes its first round: the rule's other side)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import switch  # noqa: E402


def _run(monkeypatch, law, gamma, n, rel_tol):
    """(bracket, number of rounds: calls of choose_T0) of certify_bigjump."""
    targets: list[float] = []
    orig = far_tail.choose_T0

    def counted(*args):
        targets.append(args[3])
        return orig(*args)

    monkeypatch.setattr(far_tail, "choose_T0", counted)
    r = far_tail.certify_bigjump(law, gamma, n, rel_tol)
    return r, len(targets)


@pytest.mark.parametrize("eps", [0.001])
def test_first_round_kept_where_it_meets_half_the_target(monkeypatch, eps):
    """GaussianRandomizer(0.5), n = 1e6: the one-jump estimate is 4x the value (the pair term exceeds 1.2 PAIR_FRAC
    rel_tol val, the redo rule of §8 fires), but the first round's bracket is 0.42 % wide at rel_tol = 1e-2: it is
    kept (one round); at rel_tol = 2e-4 it misses rel_tol/2 and is redone (two rounds). Both brackets are certified
    brackets of one value: they intersect, and each is within its target.
    Mutations caught: the rule removed (``and not met`` dropped: 2 rounds at rel_tol = 1e-2); its threshold loosened
    to 5 rel_tol (1 round at rel_tol = 1e-3 before §29).
    (**) re-pinned after the compiled cells' exact empty intervals (docs/accountant_tail.md §29): the first round at
    rel_tol = 1e-3 is now 0.044 % wide and kept, so the redo side is checked at rel_tol = 2e-4 (two rounds, 0.018 %)."""
    gamma, law = laws_for(GaussianRandomizer(0.5, 1), eps, "zero_out")[0]
    n = 10**6
    r1, k1 = _run(monkeypatch, law, gamma, n, 1e-2)
    r3, k3 = _run(monkeypatch, law, gamma, n, 2e-4)  # (**)
    assert (k1, k3) == (1, 2)
    assert 0.0 < r1.lower and r1.upper - r1.lower <= 0.5e-2 * r1.lower
    assert 0.0 < r3.lower and r3.upper - r3.lower <= 2e-4 * r3.lower
    assert max(r1.lower, r3.lower) <= min(r1.upper, r3.upper)
    assert r3.upper <= r1.upper  # (the tighter bracket does not lose the upper side: 1.25881e-1 against 1.26373e-1)



def test_jump_refinement_stops_where_negligible_against_the_body(monkeypatch):
    """GaussianRandomizer(2), n = 1e5, eps = 0.01, x vs bot: the jump term (~2.7e-10, gap 1.4 %) is ~1e-4 of the body
    (~2.4e-6): its grid is not refined (one jump-term FFT pass, §27 (b)); with the rule off (KEEP_N above every N: the
    code of before) it is refined (two passes; three before §29). Both brackets and a fresh one at rel_tol = 1e-3 are
    certified brackets of one value: they intersect, and each meets its target. Mutations caught: rule (b) removed
    (three passes with the rule on); its test reversed (J_up - J_lo >= ...: three passes).
    (**) re-pinned after the compiled cells' exact empty intervals (docs/accountant_tail.md §29): the rule-off run
    needs two passes instead of three (its jump term no longer carries the empty cells' allowances)."""
    gamma, law = laws_for(GaussianRandomizer(2.0, 1), 0.01, "zero_out")[0]
    n, out = 10**5, []
    switch(monkeypatch, "JUMP_HAT_BODY", False)  # (**) session 36, jump36: the rule-off run (KEEP_N above every N) pinned; §49.1's body branch leans on §27 (b)
    orig = far_tail.jump_term
    for keep_n, rel_tol in ((far_tail.KEEP_N, 1e-2), (2**60, 1e-2), (far_tail.KEEP_N, 1e-3)):
        calls: list[float] = []
        monkeypatch.setattr(far_tail, "KEEP_N", keep_n)
        monkeypatch.setattr(far_tail, "jump_term", lambda *a, **k: calls.append(a[4]) or orig(*a, **k))
        r = far_tail.certify_bigjump(law, gamma, n, rel_tol)
        out.append((r, len(calls)))
        assert 0.0 < r.lower and r.upper - r.lower <= rel_tol * r.lower
        assert r.jump.up < 1e-3 * r.lower  # (the premise: the jump term is negligible against the value)
    assert [k for _, k in out][:2] == [1, 2]  # (**)
    assert max(r.lower for r, _ in out) <= min(r.upper for r, _ in out)


@pytest.mark.xfail(strict=True, reason="(**) docs/accountant_tail.md §29: with the empty cells exact, the finer steps no "
                   "longer lose the upper value at this cell (2 passes with rule (c) on and off): its scenario needs "
                   "a new cell")
def test_refinement_stops_where_a_finer_step_lost_the_upper_value_and_no_lower(monkeypatch):
    """GaussianRandomizer(2), n = 1e6, eps = 0.01, x vs bot (the regime map's 7.9 s cell): the jump term's lower value is
    0 at every step the caps allow and each finer step (h / 4) gives a larger upper value; the closed form of §24 makes
    the round's values. §27 (c) stops the refinement at the first finer step that lost the upper value: two jump-term
    passes per round instead of four, and the same floats as with the rule off (KEEP_N above every N: the code of
    before). Mutation caught: rule (c) removed (8 passes instead of 4)."""
    gamma, law = laws_for(GaussianRandomizer(2.0, 1), 0.01, "zero_out")[0]
    orig, out = far_tail.jump_term, []
    for keep_n in (far_tail.KEEP_N, 2**60):
        calls: list[float] = []
        monkeypatch.setattr(far_tail, "KEEP_N", keep_n)
        monkeypatch.setattr(far_tail, "jump_term", lambda *a, **k: calls.append(a[4]) or orig(*a, **k))
        r = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2)
        out.append((r.lower, r.upper, len(calls)))
    assert [k for *_, k in out] == [4, 8]
    assert out[0][:2] == out[1][:2] and 0.0 < out[0][0]
