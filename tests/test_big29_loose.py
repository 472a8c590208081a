"""Session 29's far-tail rules (docs/accountant_tail.md §33): the jump term's refinement stopped where its lower value
is 0 and its upper value negligible (§33.1), a loose request's first step for a law bounded above (§33.2), and the
skipped round of a law bounded above whose redo with B x 4 is certain (§33.4). Brackets are checked against
references from finer grids or tighter targets (every bracket certified: they must overlap), and §33.4 against the
rounds of before (``skip_rounds=False``), field by field."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for

from test_rep25_far_tail_settle import _passes as _spy  # (the spy on far_tail.lattice_pass: (h, T0, B) per pass)

FIELDS = ("lower", "upper", "T0", "h", "B", "N", "multi", "body_up", "body_lo", "penalty_B")


def _law(rz, eps: float, i: int):
    gamma, law = laws_for(rz, eps, "zero_out")[i]
    return float(gamma), law.shifted(up=True)


# (randomizer, eps, n, negligible: law 0's upper value, the report's running maximum): the ⊥-vs-x law (bounded above)
# of the regime map's cells where §33.4 fires (GaussianRandomizer(2), BMG) and one where its estimate says no
SKIP_CELLS = [(GaussianRandomizer(2.0, 1), 0.001, 10**6, 1.108089745389228e-4, True),
              (BlanketMixedGaussian(0.198, 0.833, 1), 0.01, 10**6, 1.0021731243520756e-06, True),
              (GaussianRandomizer(2.0, 1), 0.001, 10**6, 0.0, True),
              (GaussianRandomizer(2.0, 1), 0.001, 10**3, 0.0, False)]


@pytest.mark.parametrize("rz,eps,n,neg,fires", SKIP_CELLS)
def test_skipped_rounds_same_floats_fewer_passes(monkeypatch, rz, eps, n, neg, fires):
    """§33.4: every field equals the rounds of before (skip_rounds False), and the passes run are a sub-multiset of
    those of before, fewer exactly where the rule fires."""
    gamma, law = _law(rz, eps, 1)
    seen = _spy(monkeypatch)
    off = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1, negligible=neg, skip_rounds=False)
    p_off = list(seen)
    seen.clear()
    on = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1, negligible=neg)
    for f in FIELDS:
        assert getattr(on, f) == getattr(off, f), f
    rest = list(p_off)
    for p in seen:
        rest.remove(p)
    assert bool(rest) == fires


def test_skipped_round_where_the_estimate_is_wrong_is_nested(monkeypatch):
    """§33.4 where its estimate is wrong: the ⊥-vs-x law of GaussianRandomizer(1), n = 1e6, eps = 0.01, below the
    caller's maximum 3.25e-4 (law 0's value) although its estimate at B = 519.5 says 4.1e-4: the round before stopped
    there (upper value below the maximum, no redo), the rule skips it and runs B x 4. Both certified; the bracket is
    the wider clamp's, nested in the one of before here (docs/accountant_tail.md §33.4)."""
    gamma, law = _law(GaussianRandomizer(1.0, 1), 0.01, 1)
    neg = 3.2477348157728043e-4
    # (**) session 30, tail30: §33.4's normal estimate alone (docs/accountant_tail.md §34.1's saddle-point estimate says
    # 2.6e-4 < neg here and keeps the round: tests/test_tail30.py), so that its wrong-estimate path stays under test
    monkeypatch.setattr(far_tail, "saddle_excess_estimate", lambda *a, **k: float("inf"))
    seen = _spy(monkeypatch)
    off = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, negligible=neg, skip_rounds=False)
    assert [p[2] for p in seen] == [519.5]
    seen.clear()
    on = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, negligible=neg)
    assert [p[2] for p in seen] == [2078.0]
    assert off.lower <= on.lower <= on.upper <= off.upper < neg


def test_skipped_rounds_switch_off_module_wide(monkeypatch):
    """SKIP_ROUNDS False gives the passes of skip_rounds=False (the module switch the docs name)."""
    gamma, law = _law(GaussianRandomizer(2.0, 1), 0.001, 1)
    seen = _spy(monkeypatch)
    far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1, skip_rounds=False)
    ref = list(seen)
    seen.clear()
    monkeypatch.setattr(far_tail, "SKIP_ROUNDS", False)
    far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1)
    assert seen == ref and len({p[2] for p in ref}) >= 2  # (B = 27 then 108 before the rule)


def test_loose_step_factor():
    assert [far_tail._loose_step(r, 10**8) for r in (1e-4, 1e-2, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)] == \
        [1.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 4.0]
    assert far_tail._loose_step(0.5, far_tail.LOOSE_STEP_N - 1) == 1.0


def test_loose_request_bounded_law_against_a_tight_one(monkeypatch):
    """§33.2: the ⊥-vs-x law of GaussianRandomizer(2), n = 1e8, eps = 2.189e-4 (bounded above at 0.38; get_epsilon's
    root at delta = 1e-6): at rel_tol 0.1 its first pass runs at twice the step of rel_tol 1e-2, its bracket meets 0.1
    and overlaps the bracket at rel_tol 1e-2 (both certified: both hold the true value); at n = 1e6 the step is that
    of rel_tol 1e-2."""
    gamma, law = _law(GaussianRandomizer(2.0, 1), 2.189e-4, 1)
    seen = _spy(monkeypatch)
    tight = far_tail.certify_bigjump(law, gamma, 10**8, 1e-2, 1)
    h_tight = seen[0][0]
    seen.clear()
    loose = far_tail.certify_bigjump(law, gamma, 10**8, 0.1, 1)
    assert seen[0][0] == 2.0 * h_tight
    assert 0.0 < loose.lower <= loose.upper <= loose.lower * 1.1
    assert loose.lower <= tight.upper and tight.lower <= loose.upper
    assert tight.upper - tight.lower <= 1e-2 * tight.lower
    seen.clear()
    far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1)
    far_tail.certify_bigjump(law, gamma, 10**6, 0.1, 1)
    assert seen[0][0] == seen[-1][0]


def test_negligible_jump_term_without_lower_value_not_refined(monkeypatch):
    """§33.1: GaussianRandomizer(2), n = 1e8, eps = 1e-4, x vs ⊥ (the body makes the value 1.1e-5, the jump term
    1.5e-14 with lower value 0 at its first step): one jump-term step, and the bracket overlaps that of the refinement
    of before (KEEP_N above every N: §27's and §33.1's stops off, the jump term refined to its own rel_tol / 2) and meets rel_tol."""
    gamma, law = _law(GaussianRandomizer(2.0, 1), 1e-4, 0)
    steps: list = []
    orig = far_tail.jump_term
    monkeypatch.setattr(far_tail, "jump_term", lambda *a, **k: steps.append(a[4]) or orig(*a, **k))
    on = far_tail.certify_bigjump(law, gamma, 10**8, 1e-2, 1)
    assert len(steps) == 1 and on.jump.lo == 0.0 and on.jump.up <= 5e-4 * on.body_lo
    steps.clear()
    monkeypatch.setattr(far_tail, "KEEP_N", 2**40)
    off = far_tail.certify_bigjump(law, gamma, 10**8, 1e-2, 1)
    assert len(steps) >= 2 and off.jump.lo > 0.0
    assert on.lower <= off.upper and off.lower <= on.upper
    assert on.upper - on.lower <= 1e-2 * on.lower
