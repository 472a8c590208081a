"""Review rev44 (session 44): attack on docs/composition.md §2.26 (``limits.PAIR43_SETTLED_COVER``: a pure-LDP round's
pair samples all taken upper first and covered by U (1 + m), no bracket), at the sizes rev43 (2-RR, n >= 1000) and
pair43 (10-RR, n = 3000) did not reach: small n (few-user brackets, exact blocks), k = 3 and 5, both adjacencies.

Reference, independent of sharpdp's accountant: the exact blanket divergence E[(sum_i B_i L_i)_+] / (n gamma) of the
round's law (``laws_for``'s (gamma, law): the law's atoms and gamma as given), by brute-force enumeration of the
multinomial counts of the n users over {inactive} and the atoms (log-multinomial weights, math.fsum). Claims, with the
switch on: (1) the pair's delta at dense eps (its samples and the points between them, where the chord in e^eps is
read) is >= the exact divergence; (2) §2.26.4's accuracy: the pair's delta <= 1.01 x a fresh ``get_delta`` (switch
off) wherever that is >= 1e-12; (3) the rule ran (samples covered by the margin).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches, dominating_pair
from sharpdp.shuffle.laws import laws_for

from _main_floats34 import switch
from _rev44_spy import spy

ps = pytest.importorskip("sharpdp.shuffle.pair_settled")


def exact_blanket(gamma: float, values, probs, n: int) -> float:
    """E[(sum_i B_i L_i)_+] / (n gamma), B_i ~ Bernoulli(gamma), L_i iid on ``values`` (at most 3 atoms), by every
    count vector (c_1, .., c_k) of active users at the atoms (the rest inactive)."""
    v = [float(x) for x in values]
    p = [float(x) * gamma for x in probs]
    k = len(v)
    if max(v) <= 0:
        return 0.0
    q0 = 1.0 - gamma
    lq = [math.log(x) if x > 0 else -math.inf for x in p]
    terms = []
    c = np.arange(n + 1)
    if k == 1:
        grids = [c]
    elif k == 2:
        grids = list(np.meshgrid(c, c, indexing="ij"))
    else:
        grids = list(np.meshgrid(c, c, c, indexing="ij"))
    tot = sum(grids)
    ok = tot <= n
    cs = [g[ok].astype(float) for g in grids]
    c0 = n - sum(cs)
    logw = gammaln(n + 1) - gammaln(c0 + 1) + (c0 * math.log(q0) if q0 > 0 else np.where(c0 > 0, -np.inf, 0.0))
    for ci, lqi in zip(cs, lq):
        logw = logw - gammaln(ci + 1) + np.where(ci > 0, ci * lqi, 0.0)
    s = sum(ci * vi for ci, vi in zip(cs, v))
    pos = s > 0
    terms = np.exp(logw[pos]) * s[pos]
    return math.fsum(terms.tolist()) / (n * gamma)


def _exact_at(R, e: float, adjacency: str, n: int) -> float:
    out = 0.0
    for g, law in laws_for(R, e, adjacency):
        vals, probs = law.atoms()
        out = max(out, exact_blanket(float(g), np.asarray(vals), np.asarray(probs), n))
    return out


def test_brute_force_reference_inside_the_accountants_bracket():
    """The reference against the accountant's own certified bracket (switch off) on a few points (so the formula
    E[(sum B L)_+] / (n gamma) is the quantity certified)."""
    R = RandomizedResponse(3, 1.0)
    acc = ShuffleAccountant(R, 40, "replace", rel_tol=1e-3)
    for e in (0.0, 0.2, 0.5):
        lo, up = acc.get_delta_bounds(e)
        ex = _exact_at(R, e, "replace", 40)
        assert lo * (1 - 1e-9) <= ex <= up * (1 + 1e-9), (e, lo, ex, up)


ROUNDS = [(3, 1.0, 40, "replace"), (5, 2.0, 60, "replace"), (2, 0.5, 100, "replace"), (3, 3.0, 30, "zero_out")]


@pytest.mark.parametrize("k, eps0, n, adjacency", ROUNDS)
def test_small_n_settled_pair_dominates_exact_and_stays_accurate(monkeypatch, k, eps0, n, adjacency):
    """(1) and (3); (2) as far as main's own pair meets it: the pair with the rule is within 1 % above a fresh
    get_delta, or within its margin (1 + 2m) of main's pair (the switch off) where main's is not (the support's end of
    an atom law: test_main_pair_accuracy_at_the_supports_end below)."""
    from sharpdp.shuffle import pair_accuracy

    switch(monkeypatch, "PAIR43_SETTLED_COVER", True)
    calls = spy(monkeypatch, "settled_values", ps, pair_accuracy)
    R = RandomizedResponse(k, eps0)
    pair = dominating_pair(ShuffleAccountant(R, n, adjacency), progress=False)
    assert sum(int(np.sum(out[1])) for _, out in calls) > 0  # (the rule ran: samples covered by the margin)
    se = np.asarray(pair.sample_epsilons)
    mids = 0.5 * (se[1:] + se[:-1])
    pts = np.unique(np.concatenate([se, mids]))
    pts = pts[pts <= eps0]
    pts = pts[np.unique(np.linspace(0, pts.size - 1, 40).astype(int))]
    with monkeypatch.context() as mp:
        switch(mp, "PAIR43_SETTLED_COVER", False)
        main_pair = dominating_pair(ShuffleAccountant(R, n, adjacency), progress=False)
        fresh = ShuffleAccountant(R, n, adjacency)
        ups = [fresh.get_delta(float(e)) for e in pts]
    m = float(ps.limits.PAIR43_SETTLED_MARGIN)
    checked = 0
    for e, up in zip(pts.tolist(), ups):
        d = pair.get_delta(e)
        ex = _exact_at(R, e, adjacency, n)
        assert d >= ex * (1 - 1e-9), ("under the exact divergence", e, d, ex)
        if up >= 1e-12:
            checked += 1
            assert d <= 1.01 * up or d <= (1 + 2 * m) * main_pair.get_delta(e), ("accuracy", e, d / up)
    assert checked >= 10
    clear_caches()


@pytest.mark.xfail(strict=True, reason="rev44: docs/composition.md §2.12 / §2.26.4's accuracy (the pair within 1 % above "
                   "get_delta where delta >= 1e-12) fails at an atom law's support end, in main too (switch off): 3-RR "
                   "(eps0 = 3), n = 30, zero-out, eps = 1.99544 between the last positive sample (1.99439) and the first "
                   "zero one (1.99649): the chord is 1.102 x get_delta (1.668e-4 vs 1.513e-4). Not a certification "
                   "issue (the pair is above). Cause (docs/composition.md §2.28.2): no pair on the lattice can meet the claim there "
                   "(its delta is linear in e^eps between lattice points, so at least the chord of the true lattice "
                   "values, 1.102x delta here and up to 6x before the support end); the claim's exact domain: within "
                   "1 % above get_delta at the lattice points, and within 1 % above the chord of get_delta's lattice values "
                   "between them (tests/test_pair45_support_end.py)")
def test_main_pair_accuracy_at_the_supports_end(monkeypatch):
    switch(monkeypatch, "PAIR43_SETTLED_COVER", False)
    R = RandomizedResponse(3, 3.0)
    pair = dominating_pair(ShuffleAccountant(R, 30, "zero_out"), progress=False)
    e = 1.9954401279999998
    up = ShuffleAccountant(R, 30, "zero_out").get_delta(e)
    clear_caches()
    assert up >= 1e-12 and pair.get_delta(e) <= 1.01 * up, pair.get_delta(e) / up
