"""Review rev31b of get_epsilon's session-31 search rules (eps31, docs/accountant.md §8.11): phase 1 from the root of
the single-big-jump model (``jump_guess.first_point``, §8.11.1), one phase-1 pass from that root (``jump_guess.ONE_PASS``,
§8.11.3) and the look's reach 1 xtol at n >= 1e7 (``looks.LOOK_REACH_LARGE``, §8.11.2).

The claims attacked: the answer of get_epsilon is certified (a fresh accountant, caches cleared, rel_tol 1e-3, has an
upper value <= delta there) and still the smallest eps to about xtol (the fresh certified lower value 2 xtol below the
answer exceeds delta: the true crossing lies within 2 xtol below the answer); with the rule switched off
(``first_point`` returning the Gaussian-limit guess, ``ONE_PASS`` False) the search is main 7b66b43's, float for float;
and where the model's estimate is wrong (small n, where the sum of the other users is far from its mean shift; the
rule forced onto every cell by ``JUMP_DOMINATES`` = 0 and ``SHIFT_SPREAD`` = inf) the answers stay certified and
within 2 xtol of main's.

References: main's answers (pinned below) were computed by /work/venv/main (main 7b66b43, without these rules) in a
fresh process per cell with caches cleared; the certified brackets at rel_tol 1e-3 are computed here (the accountant's
get_delta_bounds is not changed by the rules). Measured by the review on 80 + 120 (fuzzed) cells of BMG / Gaussian
randomizer / k-RR / PrivUnit, n = 2 .. 1e9, delta 1e-14 .. 0.2: 40 cells where the jump root applies, every answer's
fresh rel_tol-1e-3 upper value <= delta (0.9894-0.9998 delta) and the fresh lower value at (1 - xtol) x the answer
above delta (1.0007-1.033 delta); with the rule forced onto 146 cells every answer within 1e-3 of main's.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import importlib.util

import pytest
from _main_floats34 import switch

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches

HAS_JUMP = importlib.util.find_spec("sharpdp.shuffle.accountant.jump_guess") is not None
needs_jump = pytest.mark.skipif(not HAS_JUMP, reason="get_epsilon's single-big-jump first point (eps31, "
                                                     "docs/accountant.md §8.11) not in this build")
XTOL = 1e-3


def _rand(spec):
    return BlanketMixedGaussian(spec[1], spec[2], 1) if spec[0] == "bmg" else GaussianRandomizer(spec[1], 1)


# (spec, n, adjacency, delta, main 7b66b43's get_epsilon(delta) answer)
JUMP_CELLS = [
    (("bmg", 0.032933209021645184, 0.5492635146682706), 10**4, "zero_out", 1e-6, 4.000826521192664),
    (("bmg", 0.027018718327855053, 0.5082412099806768), 10**6, "zero_out", 1e-6, 0.9997824772157415),
    (("bmg", 0.027018718327855053, 0.5082412099806768), 10**6, "zero_out", 1e-12, 5.120366114335459),
    (("bmg", 0.00917073516974465, 0.3490130918106981), 10**6, "zero_out", 1e-6, 8.00181207902798),
    (("gauss", 1.0), 100, "zero_out", 1e-6, 6.408665202966849),
    (("gauss", 1.0), 10**4, "zero_out", 1e-6, 1.9426791319183536),
    (("gauss", 0.5), 10**7, "zero_out", 1e-6, 10.240724692185829),
]


def _check_certified_and_tight(spec, n, adj, delta, ans, ref):
    clear_caches()
    fresh = ShuffleAccountant(_rand(spec), n, adj, rel_tol=1e-3)
    lo, up = (float(x) for x in fresh.get_delta_bounds(ans))
    assert up <= delta, (ans, up / delta)
    lo2, _ = (float(x) for x in fresh.get_delta_bounds(ans * (1.0 - 2.0 * XTOL)))
    assert lo2 > delta, (ans, lo2 / delta)  # the crossing lies within 2 xtol below the answer
    assert abs(ans / ref - 1.0) <= 2.0 * XTOL, (ans, ref)


@pytest.mark.parametrize("spec, n, adj, delta, ref", JUMP_CELLS)
def test_answer_certified_and_within_xtol_where_the_jump_root_applies(spec, n, adj, delta, ref):
    """The answer is a certified upper end (fresh rel_tol-1e-3 upper <= delta) whose crossing lies within 2 xtol
    below it, and within 2 xtol of main's answer; with the rule present, the jump root is phase 1's first point here."""
    seen = []
    if HAS_JUMP:
        from sharpdp.shuffle.accountant import search
        orig = search.first_point

        def spy(*a):
            out = orig(*a)
            seen.append(out[1] is not None)
            return out

        search.first_point = spy
    try:
        clear_caches()
        ans = float(ShuffleAccountant(_rand(spec), n, adj).get_epsilon(delta, xtol=XTOL))
    finally:
        if HAS_JUMP:
            search.first_point = orig
    if HAS_JUMP:
        assert seen and seen[0], "the single-big-jump root was not taken"
    _check_certified_and_tight(spec, n, adj, delta, ans, ref)


# cells with n < 1e7 (LOOK_REACH_LARGE does not act): the rule off must give main's float
OFF_CELLS = [
    (("bmg", 0.0760893120129048, 0.8602549605612674), 100, "zero_out", 1e-6, 3.9717084977132284),
    (("bmg", 0.04938902579442474, 0.6446764485548181), 10**4, "zero_out", 1e-6, 2.000315949026614),
    (("bmg", 0.6223225972663718, 1.6329276515341662), 10**4, "zero_out", 1e-6, 0.009998795315243848),
    (("bmg", 0.032018259533965844, 0.5419078070191767), 10**6, "zero_out", 1e-6, 0.499856127087859),
    (("bmg", 0.0156813351197499, 0.4185081545444173), 10**6, "zero_out", 1e-6, 4.000718635522977),
    (("gauss", 2.0), 2, "zero_out", 1e-6, 4.213603595151916),
    (("gauss", 1.0), 10**4, "zero_out", 1e-6, 1.9426791319183536),
    (("gauss", 0.5), 10**6, "zero_out", 1e-6, 12.54538182078977),
    (("gauss", 4.6), 10**4, "zero_out", 1e-6, 0.009955115646045325),
    (("bmg", 0.0021691278590779137, 0.5057099111636996), 2498186, "zero_out", 4.326024275324659e-06,
     1.8097671962032653),
]


@needs_jump
@pytest.mark.parametrize("spec, n, adj, delta, ref", OFF_CELLS)
def test_rule_off_is_mains_search_float_for_float(monkeypatch, spec, n, adj, delta, ref):
    """With ``first_point`` returning the Gaussian-limit guess and ``ONE_PASS`` off, get_epsilon is main's (the rule
    touches nothing else below n = 1e7)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    from sharpdp.shuffle.accountant import search
    monkeypatch.setattr(search, "first_point", lambda laws_at, n_, delta_, g0, hi: (g0, None))
    monkeypatch.setattr(search, "ONE_PASS", False)
    switch(monkeypatch, "EPS_FEW_USERS", False)  # (**) session 37, eps37
    clear_caches()
    assert float(ShuffleAccountant(_rand(spec), n, adj).get_epsilon(delta, xtol=XTOL)) == ref


# cells where the model's conditions fail (its estimate is not trusted there), with main's answers
FORCED_CELLS = [
    # small n (below MIN_ACTIVE active others): with one other user (n = 2) the "shift of the others" is a single draw;
    # the jump root applied here before cb61df2 (MIN_ACTIVE)
    (("gauss", 2.0), 2, "zero_out", 1e-6, 4.213603595151916),
    (("gauss", 2.0), 3, "zero_out", 1e-6, 4.015725774323407),
    (("gauss", 2.0), 10, "zero_out", 1e-6, 2.816784129303553),
    (("gauss", 2.0), 9, "zero_out", 1.3617950598233705e-08, 3.8613115739732438),
    (("bmg", 0.0760893120129048, 0.8602549605612674), 100, "zero_out", 1e-6, 3.9717084977132284),
    (("gauss", 4.6), 3, "zero_out", 1e-6, 1.3893606940783336),
    (("gauss", 1.0), 2, "zero_out", 1e-6, 9.728439423098132),
    (("bmg", 0.6223225972663718, 1.6329276515341662), 10**4, "zero_out", 1e-6, 0.009998795315243848),
    (("bmg", 0.06533759782895081, 0.7226842587005222), 10**4, "zero_out", 1e-6, 1.0001190011803314),
    (("bmg", 0.027018718327855053, 0.5082412099806768), 10**6, "zero_out", 1e-3, 0.08043692444586446),
    (("gauss", 0.5), 10**5, "zero_out", 0.1, 1.1177244795545975),
    (("bmg", 0.0613802320440736, 0.9096857753049253), 6, "zero_out", 8.601703760331518e-10, 6.752343533964492),
    (("bmg", 0.25018121599671017, 7.044844557647936), 6, "zero_out", 4.617964773128574e-06, 0.36616321648308886),
]


@needs_jump
@pytest.mark.parametrize("spec, n, adj, delta, ref", FORCED_CELLS)
def test_forced_jump_root_where_its_estimate_is_wrong_stays_certified(monkeypatch, spec, n, adj, delta, ref):
    """The jump root forced onto cells outside its conditions (``JUMP_DOMINATES`` = 0, ``SHIFT_SPREAD`` = inf): the
    first point is then a wrong estimate, and the answer must still be a certified upper end within 2 xtol of the
    crossing and of main's answer."""
    from sharpdp.shuffle.accountant import jump_guess, search
    monkeypatch.setattr(jump_guess, "JUMP_DOMINATES", 0.0)
    monkeypatch.setattr(jump_guess, "SHIFT_SPREAD", float("inf"))
    seen = []
    orig = search.first_point

    def spy(*a):
        out = orig(*a)
        seen.append(out[1] is not None)
        return out

    monkeypatch.setattr(search, "first_point", spy)
    clear_caches()
    ans = float(ShuffleAccountant(_rand(spec), n, adj).get_epsilon(delta, xtol=XTOL))
    assert seen and seen[0], "the forced jump root was not taken"
    _check_certified_and_tight(spec, n, adj, delta, ans, ref)
