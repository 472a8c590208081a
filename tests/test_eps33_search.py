"""Session 33 (eps33): get_epsilon's phase 1 from the single-big-jump root in a wider range (docs/accountant.md §8.13.1:
``jump_guess.SHIFT_SPREAD`` 0.05 -> 0.2, ``jump_guess.MIN_ACTIVE`` 20 -> 10).

References independent of the rule: fresh accountants' certified values at the answer and at answer (1 - xtol) (the
contract of docs/accountant.md §8: get_delta(answer) <= delta, and a point within xtol below it above delta), the
rule's bounds on the model's spread and active users computed here from the laws' moments, and the phase-1 pass counts
of main 617886d (bench counts, deterministic) against which the rule must not add passes.
"""

from __future__ import annotations

import math

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import jump_guess as JG
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.laws import laws_for

DELTA, XTOL = 1e-6, 1e-3

# (randomizer, n, upper-only passes of one fresh get_epsilon(1e-6) on main 617886d, at most this many now)
CELLS = [
    (lambda: BlanketMixedGaussian(0.11276520663139569, 0.9180954510094728, 1), 10**3, 5, 3),
    (lambda: BlanketMixedGaussian(0.08204497098463912, 0.7950413824087282, 1), 10**4, 5, 3),
    (lambda: BlanketMixedGaussian(0.06533759782895081, 0.7226842587005222, 1), 10**4, 5, 2),
    (lambda: BlanketMixedGaussian(0.15569092228247317, 1.0443315004241214, 1), 100, 4, 3),
    (lambda: GaussianRandomizer(2.0, 1), 100, 5, 2),
]


def _spread_active(r, n, e):
    """The model's spread sd(L) / (sqrt((n - 1) gamma) |E[L]|) and (n - 1) gamma of the law of largest J at e."""
    best = (0.0, math.inf, 0.0)
    for gamma, law in laws_for(r, e, "zero_out"):
        mu = law.mean()
        if not (law.top_bound() > 0 and mu < 0):
            continue
        act = (n - 1) * float(gamma)
        j = float(law.stop_loss([act * -mu])[1][0])
        if j > best[0]:
            best = (j, law.std() / (math.sqrt(act) * -mu), act)
    return best[1], best[2]


@pytest.mark.parametrize("make, n, main_passes, passes", CELLS)
def test_jump_start_in_the_wider_range_is_certified_and_saves_passes(make, n, main_passes, passes, monkeypatch):
    r = make()
    clear_caches()
    acc = ShuffleAccountant(r, n)
    g0 = S._guess_epsilon(acc, DELTA)
    x, k = JG.first_point(lambda e: laws_for(r, e, "zero_out"), n, DELTA, g0, 700.0)
    assert k is not None and k < 0 and x != g0  # (the model's root, outside the session-32 conditions)
    spread, active = _spread_active(r, n, x)
    assert 0.05 < spread <= JG.SHIFT_SPREAD or JG.MIN_ACTIVE <= active < 20.0, (spread, active)
    count = [0]
    orig = S.upper_value

    def counted(*a, **kw):
        count[0] += 1
        return orig(*a, **kw)

    monkeypatch.setattr(S, "upper_value", counted)
    e = acc.get_epsilon(DELTA)
    monkeypatch.setattr(S, "upper_value", orig)
    assert count[0] <= passes < main_passes
    clear_caches()
    assert ShuffleAccountant(r, n).get_delta(e) <= DELTA
    clear_caches()
    assert ShuffleAccountant(r, n).get_delta(e * (1.0 - XTOL)) > DELTA
    clear_caches()


def test_conditions_still_refuse_the_wide_spread_and_few_active():
    """The session-31 cells that made the conditions (iii)-(iv) are still refused: the BMG of calibrate_bmg at
    n = 1e9, eps = 0.01 (spread 0.25 at the root: its slope sent phase 1 three times too far, and 7 passes against 4
    in session 33's counts) and at n = 100, eps = 4 (7.5 active others: one pass more)."""
    for r, n, g0 in ((BlanketMixedGaussian(0.020407558963614108, 0.46074320548916337, 1), 10**9, 0.0069),
                     (BlanketMixedGaussian(0.0760893120129048, 0.8602549605612674, 1), 100, 2.4564)):
        assert JG.first_point(lambda e, r=r: laws_for(r, e, "zero_out"), n, DELTA, g0, 700.0) == (g0, None)


@pytest.mark.parametrize("make, n", [
    (lambda: BlanketMixedGaussian(0.04977722052621712, 0.6435479424676566, 1), 10**5),  # (the map's eps = 0.5)
    (lambda: BlanketMixedGaussian(0.0818756913907952, 0.7957295246939177, 1), 10**3),  # (eps = 2)
    (lambda: GaussianRandomizer(1.0, 1), 10**5),
])
def test_look_spared_where_the_jump_settles_phase_1(make, n, monkeypatch):
    """docs/accountant.md §8.13.2: no loose look at the phase-1 root (no report at rel_tol 0.1) where phase 1 started
    from the single-big-jump root and the others' spread is at most LOOK_SPREAD there; the answer is the float of the
    search with the rule off (the look only led to get_delta at that root), and certified by fresh accountants."""
    from sharpdp.shuffle import accountant as A

    r = make()
    looks = [0]
    orig = A.ShuffleAccountant._report

    def rep(self, eps, rel_tol, *a, **kw):
        looks[0] += rel_tol == S._LOOK_REL
        return orig(self, eps, rel_tol, *a, **kw)

    monkeypatch.setattr(A.ShuffleAccountant, "_report", rep)
    clear_caches()
    e = ShuffleAccountant(r, n).get_epsilon(DELTA)
    assert looks[0] == 0
    monkeypatch.setattr(JG, "LOOK_SPREAD", -1.0)  # (the rule off: the look of §8.4 is made)
    clear_caches()
    e_off = ShuffleAccountant(r, n).get_epsilon(DELTA)
    assert looks[0] == 1 and e_off == e
    clear_caches()
    assert ShuffleAccountant(r, n).get_delta(e) <= DELTA
    clear_caches()
    assert ShuffleAccountant(r, n).get_delta(e * (1.0 - XTOL)) > DELTA
    clear_caches()
