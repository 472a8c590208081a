"""Review rev30 of session 30's far-tail rules (the far-tail document's §34 (cited by number only, so that this file
also passes tests/test_architecture.py on a main without them): §34.1 the saddle-point estimate in §33.4's skip test, §34.2 the
rounding charge's probability over several splits, §34.3 the body pass's cheap run with an absolute allowance, §34.4
the jump term's certain rejection of the cheap run from the value's bound).

References, independent of the rules reviewed:
* brackets of the base accountant (main 5011b92, none of session 30's rules) at rel_tol 1e-3, pinned below (REF):
  certified brackets of the same value, so a certified bracket of this code must meet each of them (its upper value
  at or above REF's lower value, its lower value at or below REF's upper value). The cells are every cell of this
  review's scan where the branch's floats differ from main's (360 cells: Gaussian randomizer sigma0 0.5, 1, 2, 4.6 and
  family a's BMG of bench/bench_regimes.py, zero-out and replace, n = 1e2 ... 1e9, eps 1e-3 ... 8; 14 differ, 3 of
  them slow replace cells left out here) and the four cells of a BMG grid (gamma 0.02 ... 0.2, sigma0 0.4 ... 0.8,
  n = 100, 1000, eps 4, 8) where §34.3 changed the floats;
* main's floats at rel_tol 1e-2 (BASE): with §34.2 and §34.3 switched off (``far_tail.CHEAP_SHARE = 0``, the first
  split only), §34.1 and §34.4 claim the same floats: bit for bit (measured over the whole scan: 356 of 356 cells);
* conditional Monte Carlo of P(L_1 + S_{n-1} > 0) (given S_{n-1}, P(L_1 > -S_{n-1}) in closed form from the
  mechanism's densities: tests/_review28_ak_reference.py's laws), against every split of §34.2 alone (5 standard
  errors);
* the jump term's run with the cheap run first (``doomed`` not given): where §34.4 dooms the cheap run, the sums must
  be those bit for bit;
* §33.4's rounds of bounded laws at small n (where the saddle and normal estimates are least reliable): the skip and
  ``skip_rounds=False`` give the same floats.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest

from _review28_ak_reference import GaussXBot, OneTerm, d_up_ak
from _review_scan import brackets_missing, floats_differing, rand
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail, jump
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.bmg import bmg_laws
from _main_floats34 import switch  # noqa: E402

try:
    from sharpdp.shuffle.accountant import far_tail_shift
except ImportError:  # (before session 30's far-tail rules)
    far_tail_shift = None

HAS_34 = far_tail_shift is not None and hasattr(far_tail, "CHEAP_SHARE")


def _rules_off(monkeypatch):
    """Session 30's rules that change floats, switched off where they exist."""
    monkeypatch.setattr(far_tail, "CHEAP_SHARE", 0.0, raising=False)
    if far_tail_shift is not None:
        monkeypatch.setattr(far_tail_shift, "SPLITS", far_tail_shift.SPLITS[:1])
    from sharpdp.shuffle.accountant import concentrated

    monkeypatch.setattr(concentrated, "_CURV_M", 10**12, raising=False)


BMG8 = ("B", 0.051057210686144563, 0.5666966712607993)  # family a's BMG at n = 100, eps = 8

# (randomizer, n, adjacency, eps): main 5011b92's brackets at rel_tol 1e-3
REF = {
    (("G", 2.0, 0), 100, "zero_out", 2.0): (1.9133598159779056e-10, 1.9135862718762603e-10),
    (("G", 2.0, 0), 100, "replace", 2.0): (4.2552252907458215e-09, 4.256049770544012e-09),
    (BMG8, 100, "zero_out", 8.0): (8.939597598912259e-07, 8.940587276414406e-07),
    (("G", 2.0, 0), 1000, "replace", 0.5): (3.911180319616062e-09, 3.912764585939592e-09),
    (("G", 1.0, 0), 1000, "replace", 4.0): (5.525282286276534e-06, 5.525964151161003e-06),
    (("G", 2.0, 0), 10000, "zero_out", 0.1): (9.332528999763969e-12, 9.335464124067313e-12),
    (("G", 2.0, 0), 10000, "replace", 0.1): (1.8928994111981897e-08, 1.893512241223452e-08),
    (("G", 1.0, 0), 10000, "replace", 2.0): (1.7003177458022843e-06, 1.700470422797231e-06),
    (("G", 2.0, 0), 100000, "zero_out", 0.1): (1.0207965780593565e-19, 1.0210618770710246e-19),
    (("G", 2.0, 0), 1000000, "zero_out", 0.01): (2.3801351973470996e-19, 2.947429334422675e-19),
    (("B", 0.02, 0.6), 1000, "zero_out", 8.0): (1.044154931212462e-09, 1.0444020345567488e-09),
    (("B", 0.05, 0.4), 100, "zero_out", 8.0): (0.0019089281075281613, 0.0019089780499702824),
    (("B", 0.05, 0.5), 100, "zero_out", 8.0): (2.4389201981870573e-05, 2.4389773774934286e-05),
    (("B", 0.1, 0.5), 100, "zero_out", 8.0): (4.141567446609889e-06, 4.1417393923776745e-06),
}


@pytest.mark.parametrize("rel_tol", [1e-2, 0.1, 0.5])
def test_brackets_meet_the_base_brackets_at_rel_tol_1e3(monkeypatch, rel_tol):
    """Every cell where §34 moved a float: the reported bracket (rel_tol 1e-2; 0.1 and 0.5, the loose looks, where
    §34.3's allowance is larger) meets main's rel_tol 1e-3 bracket. (Measured at tail30's 182c33b: lower values moved
    by -1.3e-5 ... +2.7e-6 relative, one upper value by +2.3e-6; every moved lower value below main's rel_tol 1e-3
    lower value.)"""
    switch(monkeypatch, "VIA_BOTTOM_CHORD", False)  # (**) session 41, lead: §9.19 (rel_tol 0.5: another split; a chain lower value, §9)
    bad = brackets_missing(REF, rel_tol)
    assert not bad, bad


# (randomizer, n, adjacency, eps): main 5011b92's brackets at rel_tol 1e-2 (a sample of the scan, and the cells where a
# session-30 rule moved a float)
BASE = {
    (("B", 0.22405382380428362, 1.238876346499956), 100, "replace", 1.0): (3.230376464328619e-05, 3.25554066527444e-05),
    (("B", 0.15569092228247317, 1.0443315004241214), 100, "replace", 2.0): (9.09230942764944e-06, 9.153075779899891e-06),
    (("B", 0.7906439315264555, 2.430619528896765), 1000, "replace", 0.01):
        (0.00013385596517356355, 0.00013475394343671253),
    (("B", 0.8837161265518001, 3.1082150918736384), 10000, "zero_out", 0.001):
        (9.917207764603276e-07, 9.982471045609738e-07),
    (("B", 0.6223225972663718, 1.6329276515341662), 10000, "replace", 0.01):
        (0.00011266813843729793, 0.00011342626854405186),
    (("B", 0.04938902579442474, 0.6446764485548181), 10000, "replace", 2.0):
        (1.148774593720265e-06, 1.1511590764347353e-06),
    (("B", 0.08366888697372162, 0.7569044579049077), 100000, "zero_out", 0.1):
        (9.956421845691076e-07, 9.99599509624177e-07),
    (("B", 0.08366888697372162, 0.7569044579049077), 100000, "replace", 0.1):
        (1.60844202572865e-05, 1.6120161639086825e-05),
    (("B", 0.02236494183043625, 0.4742232025365367), 100000, "zero_out", 4.0):
        (9.987796021742213e-07, 9.989999841108421e-07),
    (("B", 0.046734964751659336, 0.6194977229608577), 1000000, "zero_out", 0.1):
        (9.960402582420837e-07, 9.990430575572468e-07),
    (("B", 0.032018259533965844, 0.5419078070191767), 1000000, "replace", 0.5):
        (1.0232904108774757e-06, 1.0255889511649167e-06),
    (("B", 0.027018718327855053, 0.5082412099806768), 1000000, "replace", 1.0):
        (1.0132864675163435e-06, 1.0149964984241272e-06),
    (("B", 0.021719452960127065, 0.4694372301043296), 1000000, "zero_out", 2.0):
        (9.98616985864086e-07, 9.990005663334576e-07),
    (("B", 0.00917073516974465, 0.3490130918106981), 1000000, "zero_out", 8.0):
        (9.988039934379186e-07, 9.989999885965272e-07),
    (("G", 2.0, 0), 100, "zero_out", 0.001): (0.04246546400108062, 0.042593603589425925),
    (("G", 0.5, 0), 100, "zero_out", 0.01): (0.7279666880418031, 0.7280993692956226),
    (("G", 1.0, 0), 100, "zero_out", 0.1): (0.14723575931347868, 0.14751387476598454),
    (("G", 2.0, 0), 100, "zero_out", 0.5): (3.4899700366271325e-05, 3.506218432311018e-05),
    (("G", 0.5, 0), 100, "zero_out", 2.0): (0.5338435801384442, 0.5338884824637473),
    (("G", 1.0, 0), 100, "zero_out", 4.0): (0.00017559691227012205, 0.00017581002023455542),
    (("G", 4.6, 0), 1000, "zero_out", 0.001): (0.0035630225600532923, 0.00359108438055084),
    (("G", 0.5, 0), 1000, "zero_out", 0.1): (0.546205268689596, 0.5476061341556843),
    (("G", 1.0, 0), 1000, "zero_out", 0.5): (0.0058533887141140875, 0.005864693397395186),
    (("G", 0.5, 0), 1000, "zero_out", 2.0): (0.33004735214790765, 0.33031200742330236),
    (("G", 4.6, 0), 10000, "zero_out", 0.01): (9.473023903475999e-07, 9.501451060529996e-07),
    (("G", 2.0, 0), 10000, "zero_out", 0.5): (6.693156039028834e-18, 6.697902366614154e-18),
    (("G", 1.0, 0), 10000, "zero_out", 1.0): (1.7077466621013465e-05, 1.70932433188748e-05),
    (("G", 0.5, 0), 10000, "zero_out", 4.0): (0.0656867289007848, 0.06574932807200361),
    (("G", 0.5, 0), 100000, "zero_out", 0.01): (0.22808532379014063, 0.22861590759185146),
    (("G", 1.0, 0), 100000, "zero_out", 0.1): (5.5716155482615654e-05, 5.5937961129537317e-05),
    (("G", 0.5, 0), 100000, "zero_out", 0.1): (0.20901450161720864, 0.20934520423328484),
    (("G", 1.0, 0), 100000, "zero_out", 1.0): (6.785373117849837e-08, 6.789284566048788e-08),
    (("G", 0.5, 0), 100000, "zero_out", 4.0): (0.01905384904023896, 0.019073790495544158),
    (("G", 1.0, 0), 1000000, "zero_out", 0.001): (0.002362062829458163, 0.002371452522386936),
    (("G", 4.6, 0), 1000000, "zero_out", 0.001): (8.389759022176382e-08, 8.472395586864291e-08),
    (("G", 2.0, 0), 1000000, "zero_out", 0.001): (0.00011053864059150663, 0.00011080897453892281),
    (("G", 0.5, 0), 1000000, "zero_out", 0.1): (0.10322597301268595, 0.10337018073009843),
    (("G", 0.5, 0), 1000000, "zero_out", 4.0): (0.004144689217739789, 0.004148672628924266),
    (BMG8, 100, "zero_out", 8.0): (8.939559661931045e-07, 8.940107688299075e-07),
    (("G", 2.0, 0), 100, "zero_out", 2.0): (1.9133499824166992e-10, 1.9147388721725215e-10),
    (("G", 2.0, 0), 100, "replace", 2.0): (4.255026403400616e-09, 4.258074168324196e-09),
    (("G", 1.0, 0), 1000, "replace", 4.0): (5.52468339322874e-06, 5.526880479943044e-06),
    (("G", 2.0, 0), 10000, "zero_out", 0.1): (9.327636756081769e-12, 9.344251052514844e-12),
    (("G", 2.0, 0), 100000, "zero_out", 0.1): (1.0183005542737822e-19, 1.0234229741143059e-19),
    (("G", 2.0, 0), 1000000, "zero_out", 0.01): (2.1000430207173331e-19, 3.21732264542545e-19),
}


@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, pins session 33's floats on purpose; the new rules' values are checked against references in the session-34 files
def test_rules_off_give_mains_floats(monkeypatch):
    """§34.2 and §34.3 off: what remains (§34.1's choice of rounds, §34.4's certain rejections) gives main's floats
    bit for bit."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    switch(monkeypatch, "TV_WEIGHTED", False)  # (**) session 37, hat37: pins main's floats; §51's values: test_hat37_tv_weight.py
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37
    _rules_off(monkeypatch)
    # (**) session 35, mid35: main's floats need docs/accountant_tail.md §46's steps off too
    for name in ("END_ATOM_SNAP", "ATOM_SPACING_SNAP", "LOWER_ONLY_SETTLED"):
        switch(monkeypatch, name, False)
    bad = floats_differing(BASE)
    assert not bad, bad


def _cmc_positive_prob(ref, gamma: float, n: int, N: int, seed: int = 3) -> tuple[float, float]:
    """P(L_1 + S_{n-1} > 0) by conditional Monte Carlo: E[P(L_1 > -S_{n-1})], S_{n-1} sampled (mean, standard error)."""
    rng = np.random.default_rng(seed)
    k = rng.binomial(n - 1, gamma, N)
    out = np.empty(N)
    for K in np.unique(k):
        idx = np.flatnonzero(k == K)
        s = ref.sample(rng, (idx.size, int(K))).sum(axis=1) if K else np.zeros(idx.size)
        out[idx] = ref.tail(-s)[0]
    return float(out.mean()), float(out.std(ddof=1) / math.sqrt(N))


# (sigma0 or (gamma, sigma0), eps, n): x-vs-bot laws where the least split's bound is far below §14's (measured
# bound / reference: 1e1 ... 1e8; the smallest splits are the ones to check)
SPLIT_CELLS = [(1.0, 1.0, 100), (2.0, 0.5, 30), (2.0, 2.0, 10), (4.6, 0.1, 100), (1.0, 2.0, 30),
               ((0.3, 1.0), 1.0, 40), ((0.051057210686144563, 0.5666966712607993), 8.0, 100)]


@pytest.mark.skipif(not HAS_34, reason="session 30's far_tail_shift not in this build")
@pytest.mark.parametrize("law_p, eps, n", SPLIT_CELLS)
def test_every_split_bounds_the_conditional_monte_carlo(monkeypatch, law_p, eps, n):
    """§34.2: each split of SPLITS alone gives an upper value of P(L_1 + S_{n-1} > 0) at or above the conditional
    Monte Carlo estimate (5 standard errors), for the raised law and a round of certify_bigjump on it."""
    if isinstance(law_p, tuple):
        gamma, law = bmg_laws(law_p[0], law_p[1], eps, "zero_out")[0]
        ref = OneTerm(law_p[0] - math.exp(eps), 1.0 - law_p[0], 1.0 / law_p[1])
    else:
        gamma, law = laws_for(GaussianRandomizer(law_p, 1), eps, "zero_out")[0]
        ref = GaussXBot(law_p, eps)
    gamma = float(gamma)
    run = law.shifted(up=True)
    r = far_tail.certify_bigjump(run, gamma, n, 1e-2, 1)
    p, se = _cmc_positive_prob(ref, gamma, n, 20000)
    splits = far_tail_shift.SPLITS
    qs = []
    for sp in splits:
        monkeypatch.setattr(far_tail_shift, "SPLITS", (sp,))
        qs.append(far_tail.positive_prob_up(run, gamma, n, r))
    monkeypatch.setattr(far_tail_shift, "SPLITS", splits)
    assert all(q >= p - 5.0 * se for q in qs), (qs, p, se)
    # (a split run alone is run as the first, at the computed point -t - y; in the list, one float below it)
    assert far_tail.positive_prob_up(run, gamma, n, r) == pytest.approx(min(qs), rel=1e-9) and min(qs) < 1.0


def test_jump_terms_doomed_runs_give_the_cheap_first_floats(monkeypatch):
    """§31.1/§34.4: wherever ``doomed`` skips the jump term's cheap run, the window, weights and sums are those of
    the run without ``doomed`` (cheap run first, then the accurate one), bit for bit."""
    orig = jump._fft_sums
    seen = {"fired": 0, "diff": []}
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: the centroid law's window pinned (§49.1 skips it)
    # (**) session 37, far37: the first group's step pinned (§50's coarser first step does not doom these cheap runs)
    switch(monkeypatch, "FIRST_COARSE", False)

    def spy(g, eta, k0, h, nn, log_tgt, workers, thr_fn, weights, small, doomed=None):
        rec: list[bool] = []

        def d2(*a):
            rec.append(bool(doomed(*a)))
            return rec[-1]

        res = orig(g, eta, k0, h, nn, log_tgt, workers, thr_fn, weights, small, d2 if doomed is not None else None)
        if rec and rec[-1]:
            seen["fired"] += 1
            ref = orig(g, eta, k0, h, nn, log_tgt, workers, thr_fn, weights, small, None)
            if res[2] != ref[2] or any(not np.array_equal(a, b) for a, b in zip(res[1], ref[1])):
                seen["diff"].append((nn, h))
        return res

    monkeypatch.setattr(jump, "_fft_sums", spy)
    for s, n, eps in [(0.5, 10**6, 0.1), (0.5, 100, 8.0), (1.0, 10**6, 0.01), (0.5, 10**5, 0.5)]:
        clear_caches()
        ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out").get_delta_bounds(eps)
    assert not seen["diff"], seen
    if HAS_34:
        assert seen["fired"] >= 2, seen  # (sigma0 = 0.5, n = 1e6, eps = 0.1: both laws' cheap runs doomed, §34.4)


# bot-vs-x laws (bounded above) at small n where §33.4/§34.1 consider skipping a round: (randomizer, n, eps)
SMALL_N = [(("G", 2.0, 0), 100, 0.03), (("G", 2.0, 0), 100, 0.1), (("G", 4.6, 0), 100, 0.03),
           (("G", 2.0, 0), 1000, 0.03), (("B", 0.584, 1.49), 100, 0.01), (("B", 0.584, 1.49), 100, 0.03),
           (("G", 1.0, 0), 100, 0.003), (("G", 0.5, 0), 30, 0.01)]


@pytest.mark.skipif(not hasattr(far_tail, "SKIP_ROUNDS"), reason="docs/accountant_tail.md §33.4 not in this build")
def test_small_n_skip_test_gives_the_rounds_floats():
    """§34.1 (a subset of §33.4's skips): where the sum is far from normal (n = 30 ... 1000), certify_bigjump with the
    skip and with ``skip_rounds=False`` give the same lower and upper values."""
    bad = []
    for spec, n, eps in SMALL_N:
        gamma, law = laws_for(rand(spec), eps, "zero_out")[1]
        law = law.shifted(up=True)
        on = far_tail.certify_bigjump(law, float(gamma), n, 1e-2, 1)
        off = far_tail.certify_bigjump(law, float(gamma), n, 1e-2, 1, skip_rounds=False)
        if (on.lower, on.upper) != (off.lower, off.upper):
            bad.append((spec, n, eps, on.lower, on.upper, off.lower, off.upper))
    assert not bad, bad


@pytest.mark.skipif(not HAS_34, reason="session 30's far_tail.CHEAP_SHARE not in this build")
@pytest.mark.parametrize("spec", [BMG8, ("B", 0.05, 0.4), ("B", 0.1, 0.5)])
def test_cheap_share_widens_the_bracket_within_its_stated_cost(monkeypatch, spec):
    """§34.3: the bracket with the allowance is within 0.04 rel_tol of the value of the bracket without it (each end),
    and both meet main's rel_tol 1e-3 bracket."""
    rlo, rup = REF[(spec, 100, "zero_out", 8.0)]
    out = []
    for share in (far_tail.CHEAP_SHARE, 0.0):
        monkeypatch.setattr(far_tail, "CHEAP_SHARE", share)
        clear_caches()
        lo, up = ShuffleAccountant(rand(spec), 100, "zero_out").get_delta_bounds(8.0)
        out.append((float(lo), float(up)))
    (lo, up), (lo0, up0) = out
    assert up >= rlo and lo <= rup and up0 >= rlo and lo0 <= rup, (out, rlo, rup)
    assert abs(up - up0) <= 0.04 * 1e-2 * up0 and abs(lo - lo0) <= 0.04 * 1e-2 * up0, out


@pytest.mark.parametrize("spec, n, eps", [(("G", 2.0, 0), 3, 1.0), (("G", 4.6, 0), 10, 0.1), (("G", 1.0, 0), 2, 4.0),
                                          (BMG8, 2, 8.0), (BMG8, 10, 8.0), (("B", 0.05, 0.4), 10, 8.0)])
def test_small_n_upper_values_above_the_conditional_monte_carlo(spec, n, eps):
    """n = 2, 3, 10 (the sum far from normal; §34.3's laws among them): the zero-out upper value is at or above the
    x-vs-bot divergence by conditional Monte Carlo (4 standard errors; the report is the larger of two divergences).
    (Measured at tail30's 182c33b: 128 cells, Gaussian randomizer sigma0 0.5 ... 4.6, eps 1e-3 ... 8, n = 2, 3, 10,
    30, and three BMG at n = 2 ... 100: none below.)"""
    if spec[0] == "G":
        law = GaussXBot(spec[1], eps)
        gamma = law.g
    else:
        law, gamma = OneTerm(spec[1] - math.exp(eps), 1.0 - spec[1], 1.0 / spec[2]), spec[1]
    est, se = d_up_ak(law, gamma, n, 4000)
    clear_caches()
    lo, up = ShuffleAccountant(rand(spec), n, "zero_out").get_delta_bounds(eps)
    assert float(up) >= est - 4.0 * se and 0.0 <= float(lo) <= float(up), (lo, up, est, se)
