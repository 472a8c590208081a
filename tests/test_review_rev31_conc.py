"""Review rev31 of session 31's closed-form stage (the far-tail document's §38, cited by number only so that this file
also passes tests/test_architecture.py on a main without it): §38.1 P(X_m > -T0) with at most one term above a level
(``mgf.one_jump_tail_up``), §38.2 the binomial probabilities in saddle-point form (``closed_forms.log_binom_sharp``),
§38.3 the new stage of ``concentrated._certify`` (a choice among certified brackets), and the commits' "speed only,
the same floats" claims (the sharp stage's reuse of the first call's terms, ``_tilted_curv`` without the sort).

References, independent of the rules reviewed:
* mpmath's loggamma at 40 digits for log P(M = m), M ~ Bin(N, gamma): random N in [200, 1e9], gamma in [1e-6, 1), m
  within 14 sd, at the |v| = 0.1 edge of the series' range and at min(m, N - m) = 99 ... 101 (the switch);
* a lattice lower value of P(X_m > -T0), X_m the sum of m copies of V = min(L, T0): each cell of V's law (from the
  mechanism's own tail functions in tests/_review28_ak_reference.py, not the package's laws) put at its lower end, the
  m-fold law by an FFT; Gaussian randomizer laws sigma0 0.5, 1, 2 (eps 0.1, 1, 4) and BMG laws, m = 2 ... 250, -T0 -
  m E V from 0.4 T0 to 3.3 T0 (one jump enough, and two needed);
* the base accountant (main 7b66b43, none of §38) at rel_tol 1e-3, pinned below (REF): certified brackets of the same
  value, so the branch's brackets must meet them, at every cell of this review's scan where the branch's floats differ
  from main's;
* main 7b66b43's floats at the accountant's rel_tol 1e-2 (BASE): with §38's stage made a no-op (the ``jumps`` and
  ``sharp_pmf`` flags dropped), the branch must give them bit for bit (the other changes claim the same floats).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from _main_floats34 import switch
from _review28_ak_reference import GaussXBot, OneTerm
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import closed_forms, concentrated, mgf
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.bmg import bmg_laws

HAS_38 = hasattr(mgf, "one_jump_tail_up") and hasattr(closed_forms, "log_binom_sharp")
needs_38 = pytest.mark.skipif(not HAS_38, reason="§38's closed-form stage is not in this build")


def _rand(spec):
    kind, a, b = spec
    return GaussianRandomizer(a, 1) if kind == "G" else BlanketMixedGaussian(a, b, 1)


def _stage_off(monkeypatch):
    """§38's stage made a no-op: ``_jump_upper`` without ``jumps`` (the sharp stage again) and ``_jump_lower`` without
    ``sharp_pmf`` (§18 (d)'s probabilities)."""
    ju, jl = concentrated._jump_upper, concentrated._jump_lower

    def up_off(*a, **k):
        k.pop("jumps", None)
        return ju(*a, **k)

    def lo_off(*a, **k):
        k.pop("sharp_pmf", None)
        return jl(*a, **k)

    monkeypatch.setattr(concentrated, "_jump_upper", up_off)
    monkeypatch.setattr(concentrated, "_jump_lower", lo_off)


# ----------------------------------------------------------------------------------------------- §38.2 vs mpmath
def _binom_points(seed: int, trials: int):
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        N = int(10 ** rng.uniform(2.3, 9.0))
        g = float(10 ** rng.uniform(-6, 0)) if rng.random() < 0.7 else float(1 - 10 ** rng.uniform(-6, -0.3))
        mean, sd = N * g, math.sqrt(N * g * (1 - g))
        ms = {round(mean + z * sd) for z in rng.uniform(-14, 14, 5)}
        for s in (1, -1):  # (the edge |v| = 0.1 of the series' range)
            x = mean * (1 + s * 0.1) / (1 - s * 0.1)
            ms.update(round(x) + d for d in (-1, 0, 1))
        ms.update((99, 100, 101, N - 101, N - 100, N - 99))
        yield N, g, np.array(sorted(k for k in ms if 0 <= k <= N), float)


@needs_38
def test_log_binom_sharp_error_bound_holds_against_mpmath():
    mp.mp.dps = 40
    worst, count, sharp = 0.0, 0, 0
    for N, g, ms in _binom_points(31, 150):
        val, err = closed_forms.log_binom_sharp(N, ms, g)
        _, err0 = closed_forms.log_binom(N, ms, g)
        gm = mp.mpf(g)
        lgN = mp.loggamma(N + 1)
        for k, v, e, e0 in zip(ms, val, err, err0):
            k = int(k)
            exact = lgN - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) + k * mp.log(gm) + (N - k) * mp.log(1 - gm)
            d = abs(float(exact - mp.mpf(float(v))))
            assert d <= e, (N, g, k, float(v), float(exact), e)
            worst, count, sharp = max(worst, d / e), count + 1, sharp + (e < e0)
    assert count > 2000 and sharp > 300  # (the saddle-point form was used on many of them)
    assert worst > 1e-3  # (the bound is not vacuous: measured worst 0.44 of the bound)


# ----------------------------------------------------------------------------------------------- §38.1 vs a lattice
def _lattice_tail_lo(ref, a: float, T0: float, m: int, x: float, K: int) -> float:
    """A lower value of P(X_m > x), X_m the sum of m copies of min(L, T0): the law of min(L, T0) on K cells of
    [a, T0] (L >= a), each cell's mass at its lower end (so the lattice sum is <= X_m); the m-fold law by an FFT."""
    h = (T0 - a) / K
    e = a + h * np.arange(K + 1)
    e[-1] = T0
    S = np.asarray(ref.tail(e)[0], float)  # P(L > e)
    base = np.empty(K + 1)
    base[0] = 1.0 - S[1]
    base[1:K] = S[1:K] - S[2:K + 1]
    base[K] = S[K]
    base = np.maximum(base, 0.0)
    size = 1 << int(math.ceil(math.log2(m * K + 1)))
    pm = np.fft.irfft(np.fft.rfft(base, size) ** m, size)[: m * K + 1]
    return float(np.sum(pm[m * a + h * np.arange(pm.size) > x]))


LAWS = [("G", 0.5, 1.0), ("G", 0.5, 4.0), ("G", 1.0, 0.1), ("G", 1.0, 1.0), ("G", 2.0, 0.1), ("G", 2.0, 1.0),
        ("B", (0.3, 0.7), 1.5), ("B", (0.05, 0.57), 8.0), ("B", (0.0133, 0.395), 1.0), ("B", (0.02, 0.46), 0.1)]


def _law_and_ref(spec):
    kind, p, eps = spec
    if kind == "G":
        ref = GaussXBot(p, eps)
        return laws_for(GaussianRandomizer(p, 1), eps, "zero_out")[0][1], ref, ref.g - ref.E
    g0, s0 = p
    return bmg_laws(g0, s0, eps, "zero_out")[0][1], OneTerm(g0 - math.exp(eps), 1 - g0, 1 / s0), g0 - math.exp(eps)


@needs_38
@pytest.mark.parametrize("spec", LAWS, ids=[f"{k}{p}-e{e}" for k, p, e in LAWS])
def test_one_jump_tail_above_a_lattice_lower_value(spec):
    law, ref, a = _law_and_ref(spec)
    mu = law.mean()
    checked = 0
    for m in (2, 5, 20, 80, 250):
        for frac in (0.3, 0.9, 2.5):  # -T0 - m E V = T0 / frac
            T0 = -mu * m * frac / (1.0 + frac)
            if T0 <= max(a, 0.0) + 1e-9 or T0 < 0.5:
                continue
            bound = mgf.one_jump_tail_up(law, T0, np.array([float(m)]), lambda lev: concentrated._mean_v(law, lev)[1])
            bound = float(bound[0])
            lo = _lattice_tail_lo(ref, a, T0, m, -T0, int(min(2000, max(300, 5e5 / m))))
            if lo < 1e-9:  # (below the FFT's noise: not informative)
                continue
            assert bound >= lo, (spec, m, frac, T0, bound, lo)
            checked += 1
    assert checked >= 2


# ----------------------------------------------------------------------------------------------- the accountant
# (randomizer, n, eps): main 7b66b43's brackets at rel_tol 1e-3 (the FFT treatment: the closed form refuses both), at
# the cells of this review's scan where §38's stage changed the floats (Gaussian randomizer sigma0 0.5, 1, 2, 4.6 and
# family a's BMG, zero-out, n = 1e4 ... 1e9, eps 1e-3 ... 8 at rel_tol 1e-2: 195 of 200 cells main's floats, 2 moved,
# 3 over the time limit on main)
REF = {
    (("G", 0.5, 0), 10**9, 1.0): (0.00023703603454943247, 0.00023735372531680192),
    (("G", 1.0, 0), 10**9, 0.01): (1.7770188295342763e-13, 1.7782568217710068e-13),
    (("G", 1.0, 0), 10**9, 0.1): (1.7104534118607116e-17, 1.7111690292963678e-17),
    (("G", 1.0, 0), 10**9, 1.0): (4.941405973518658e-23, 4.948230765820021e-23),
    # (main at rel_tol 1e-4: a cell outside the regime map found by this review's search, sigma0 0.5 ... 1.3, n = 1e7,
    # 3e8, 1e9, where §38's stage accepts at rel_tol 1e-3; and a map cell)
    (("G", 0.6, 0), 10**7, 2.0): (4.3829378609892966e-05, 4.383833828820873e-05),
    (("G", 0.5, 0), 10**9, 4.0): (6.968604700840541e-06, 6.972580338376611e-06),
    # (main at rel_tol 1e-5: the one cell of a search over sigma0 0.5, 1, 2, n = 1e2 ... 1e5, eps 0.2 ... 8 (step 0.2),
    # rel_tol 1e-2 and 1e-3, where §38's stage accepts at small n; there the closed form's bracket [8.0482208e-5,
    # 8.0576330e-5] is wider than main's FFT bracket at rel_tol 1e-2, [8.0495472e-5, 8.0571400e-5], at both ends)
    (("G", 1.0, 0), 1000, 2.2): (8.052776837583545e-05, 8.052803912617189e-05),
}
# (all but the first two: §38's stage accepts them at rel_tol 1e-3 only)
REF_REL = {(("G", 1.0, 0), 10**9, 0.1): 1e-3, (("G", 1.0, 0), 10**9, 1.0): 1e-3, (("G", 0.6, 0), 10**7, 2.0): 1e-3,
           (("G", 0.5, 0), 10**9, 4.0): 1e-3}

# (randomizer, n, eps): main 7b66b43's brackets at rel_tol 1e-2 (/tmp/map30 of session 30 and this review's runs):
# the two cells above, and cells the closed form accepts at its sharp stage, where the first call's terms are reused
BASE = {
    (("G", 0.5, 0), 10**9, 1.0): (0.00023703603454943247, 0.00023735372531680192),
    (("G", 1.0, 0), 10**9, 0.01): (1.7770211987162097e-13, 1.7791475195748726e-13),
    (("G", 1.0, 0), 10**9, 0.1): (1.7104499756647883e-17, 1.7117586533169512e-17),
    (("G", 1.0, 0), 10**9, 1.0): (4.9414059748609694e-23, 4.9488408187950484e-23),
    (("G", 0.5, 0), 10**9, 2.0): (6.692583001621671e-05, 6.69841943477661e-05),
    (("G", 1.0, 0), 10**8, 0.5): (1.2796470691151216e-16, 1.2799588041653763e-16),
    (("B", 0.020104468458158786, 0.45659017565152327), 10**8, 0.1): (9.934731256049307e-07, 9.944717252182052e-07),
    (("B", 0.011128265411935699, 0.37220511033260534), 10**9, 0.5): (9.9518444633867e-07, 9.964035567697616e-07),
}


def _bracket(spec, n, eps, rel_tol=1e-2):  # (zero-out)
    clear_caches()
    concentrated._MEMO.clear()
    lo, up = ShuffleAccountant(_rand(spec), n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


@needs_38
@pytest.mark.parametrize("cell", list(REF), ids=[f"{c[0][0]}{c[0][1]}-n{c[1]:.0e}-e{c[2]}" for c in REF])
def test_new_stage_brackets_meet_the_base_at_rel_tol_1e3(cell):
    """The brackets the closed form now returns (the FFT treatment's before) meet main's rel_tol 1e-3 brackets: no
    upper value below main's lower value, no lower value above main's upper value. (Measured on conc31's d1b9e8e:
    [2.3713747e-4, 2.3735803e-4] against [2.3703603e-4, 2.3735373e-4]; [1.7775190e-13, 1.7790350e-13] against
    [1.7770188e-13, 1.7782568e-13].)"""
    rlo, rup = REF[cell]
    lo, up = _bracket(*cell, REF_REL.get(cell, 1e-2))
    assert 0.0 < lo <= up
    assert up >= rlo and lo <= rup, (cell, lo, up, rlo, rup)
    assert (up - lo) / lo <= 1e-2


@needs_38
def test_stage_off_gives_mains_floats(monkeypatch):
    """With §38's stage a no-op, the branch's other changes (the sharp stage's reuse of the first call's f(mh) and
    Bennett tail, the lower base's reuse of the Jensen terms, ``_tilted_curv`` without the sort) give main's floats bit
    for bit, at the two cells §38 moves and at cells accepted at the sharp stage."""
    switch(monkeypatch, "G46_STOP_LOSS_CHORDS", 0)  # (**) session 46, g46: docs/accountant_tail.md §71.1
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    _stage_off(monkeypatch)
    switch(monkeypatch, "TV_WEIGHTED", False)  # (**) session 37, hat37: pins main's floats; §51's values: test_hat37_tv_weight.py
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37
    switch(monkeypatch, "HAT_PIECES", False)  # (**) session 38, lead: HAT_PIECES (§53) moves this pinned float
    bad = []
    for cell, ref in BASE.items():
        got = _bracket(*cell)
        if got != ref:
            bad.append((cell, got, ref))
    assert not bad, bad


def test_unchanged_cells_keep_mains_floats(monkeypatch):
    """The cells of BASE other than the two §38 moves: main's floats with the stage on (it runs only where the sharp
    stage refused)."""
    switch(monkeypatch, "G46_STOP_LOSS_CHORDS", 0)  # (**) session 46, g46: docs/accountant_tail.md §71.1
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "HAT_DENSITY", False)  # (**) session 39, hat39: §55 moves the BMG n = 1e8 cell (its bracket contains this one)
    switch(monkeypatch, "COARSE_KEEP", False)  # (**) session 39, lead: with §54.5's gate §54.1 keeps a coarser run there (containing this one)
    bad = []
    for cell, ref in list(BASE.items())[2:]:
        got = _bracket(*cell)
        if got != ref:
            bad.append((cell, got, ref))
    assert not bad, bad
