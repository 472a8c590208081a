"""get_epsilon's answer against independent references (docs/accountant.md §8, steps 5-6).

For a target delta the answer e must satisfy: a fresh accountant's certified get_delta(e) <= delta; the
blanket bound D_up(e), computed here from the randomizer's definition (exact enumeration of finite
randomizers, quadrature of the Gaussian mixtures, n = 2, 3), is <= delta; get_delta(e (1 - xtol)) > delta (the
answer is not more than xtol above the crossing of the certified curve). Also: the cells where phase 2 refits
its model and snaps its closing probe, targets at get_delta(0) and at values get_delta returns, curves that
drop to 0 (k-RR), answers in the target on one accountant, and the call counts of bench/geteps_ratio.py.
"""

from __future__ import annotations

import itertools
import math
import os
import sys

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from _blanket_pieces import bmg_pieces, gauss_pieces, nodes
from hypothesis import strategies as st

from sharpdp.shuffle import (BlanketMixedGaussian, FiniteRandomizer, GaussianRandomizer, RandomizedResponse,
                             ShuffleAccountant, clear_caches)
from sharpdp.shuffle.accountant import driver as D
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.plain import UpperOnly

XTOL = 1e-3


# ---------------------------------------------------------------------------------------------------------
# independent D_up: D_up(eps) = E[(L_1 + ... + L_M)_+] / (n gamma), M ~ Bin(n, gamma), L = l_eps(Y), Y ~ R_BG
# ---------------------------------------------------------------------------------------------------------

def _dup_atoms(gamma, atoms, n):
    """Exact D_up of a finite law (atoms [(value, prob)], mpmath) by enumeration of M and of all M-tuples."""
    tot = mp.mpf(0)
    for m in range(1, n + 1):
        e = mp.mpf(0)
        for combo in itertools.product(atoms, repeat=m):
            s = mp.fsum(v for v, _ in combo)
            if s > 0:
                e += mp.fprod(q for _, q in combo) * s
        tot += mp.binomial(n, m) * gamma**m * (1 - gamma) ** (n - m) * e
    return tot / (n * gamma)


def _table_laws(P, eps, adjacency):
    """(gamma, atoms) for every pair and order of the table P[x][y] (blanket: the normalised infimum);
    replace-one: every ordered pair x1 != x1'; zero-out: x vs bot and bot vs x for every x."""
    r, m = len(P), len(P[0])
    b = [min(P[x][y] for x in range(r)) for y in range(m)]
    gamma = mp.fsum(b)
    bg = [v / gamma for v in b]
    E = mp.exp(mp.mpf(eps))
    if adjacency == "replace":
        return [(gamma, [((P[x1][y] - E * P[x2][y]) / bg[y], bg[y]) for y in range(m)])
                for x1 in range(r) for x2 in range(r) if x1 != x2]
    return [(gamma, atoms) for x in range(r) for atoms in
            ([(P[x][y] / bg[y] - E, bg[y]) for y in range(m)], [(1 - E * P[x][y] / bg[y], bg[y]) for y in range(m)])]


def _dup_table(P, eps, n, adjacency):
    """Max of the exact D_up over the table's laws. D_up is a symmetric function of the atoms (a sum over all
    M-tuples), so laws whose atom multisets are equal (every ordered pair of k-RR) are enumerated once."""
    with mp.workdps(30):
        laws = {(g, tuple(sorted(a))) for g, a in _table_laws(P, eps, adjacency)}
        return float(max(_dup_atoms(g, list(a), n) for g, a in laws))


def _krr_table(k, e0):
    with mp.workdps(30):
        z = mp.exp(e0) + k - 1
        return [[(mp.exp(e0) if i == j else 1) / z for j in range(k)] for i in range(k)]


def _dyadic_rows(k, a):
    """A finite Laplace-like randomizer: input i releases j with probability ~ a^|i - j| (64-bit dyadic)."""
    rows = []
    for i in range(k):
        w = np.array([a ** abs(i - j) for j in range(k)])
        t = [int(x) for x in np.floor(w / w.sum() * 2**64)]
        t[i] += 2**64 - sum(t)
        rows.append(t)
    return rows


_DL_ROWS = _dyadic_rows(5, 0.5)
with mp.workdps(30):
    _DL = [[mp.mpf(v) / mp.mpf(2) ** 64 for v in row] for row in _DL_ROWS]


def _dup_mix(kind_of, gamma, s, eps, n, adjacency):
    """D_up at n = 2 or 3 of BMG (kind_of 'bmg') or GaussianRandomizer ('gauss'), max over the orders:
    E[(L1 + L2)_+] = E[SL(-l(Y1))] (and a product rule in 2-D for n = 3)."""
    best = 0.0
    for kind in (("x_bot", "bot_x") if adjacency == "zero_out" else ("replace",)):
        if kind_of == "gauss":
            g, dens, lf, sl = gauss_pieces(s, eps, kind)
        else:
            g = gamma
            _, dens, lf, sl = bmg_pieces(gamma, s, eps, kind)
        y, w = nodes(s)
        wd, ly = w * dens(y), lf(y)
        e1 = float(sl(np.array(0.0)))
        e2 = float(np.sum(wd * sl(-ly)))
        if n == 2:
            v = (1 - g) * e1 + g / 2 * e2
        else:
            e3 = sum(wd[i] * float(np.sum(wd * sl(-ly[i] - ly))) for i in range(len(y)))
            v = (3 * g * (1 - g) ** 2 * e1 + 3 * g * g * (1 - g) * e2 + g**3 * e3) / (3 * g)
        best = max(best, v)
    return best


def _fresh_delta(make, n, adjacency, eps):
    """get_delta of a new accountant, process caches emptied (no value from the search reused)."""
    clear_caches()
    return float(ShuffleAccountant(make(), n, adjacency).get_delta(eps))


def _fresh_epsilon(make, n, adjacency, delta, xtol=XTOL):
    clear_caches()
    return float(ShuffleAccountant(make(), n, adjacency).get_epsilon(delta, xtol=xtol))


# ---------------------------------------------------------------------------------------------------------
# the references themselves
# ---------------------------------------------------------------------------------------------------------

def test_references_agree_with_mpmath_quadrature_and_bracket_the_certified_values():
    """The product-rule D_up of BMG matches an mpmath quadrature (closed-form stop-loss, 30 digits) and lies in
    get_delta_bounds' bracket; the exact k-RR D_up lies in its bracket."""
    gamma, s, eps = 0.5, 2.0, 1.5
    with mp.workdps(30):
        g, E, w = mp.mpf(gamma), mp.exp(mp.mpf(eps)), mp.exp(-1 / (2 * mp.mpf(s) ** 2))
        c0, A, B = g * (1 - E), (1 - g) * w, E * (1 - g) * w  # replace 1 by -1: l = c0 + A u - B / u, u = e^{y/s^2}
        q = lambda z: mp.erfc(z / mp.sqrt(2)) / 2  # noqa: E731

        def sl(t):
            d = t - c0
            ys = s**2 * mp.log((d + mp.sqrt(d * d + 4 * A * B)) / (2 * A))
            return (c0 - t) * q(ys / s) + (1 - g) * q((ys - 1) / s) - E * (1 - g) * q((ys + 1) / s)

        lf = lambda y: c0 + A * mp.exp(y / s**2) - B * mp.exp(-y / s**2)  # noqa: E731
        e2 = mp.quad(lambda y: mp.npdf(y, 0, s) * sl(-lf(y)), [-40 * s, -4 * s, 0, 4 * s, 40 * s])
        ref_mp = float((1 - g) * sl(0) + g / 2 * e2)
    ref = _dup_mix("bmg", gamma, s, eps, 2, "replace")
    assert ref == pytest.approx(ref_mp, rel=1e-9)
    lo, up = ShuffleAccountant(BlanketMixedGaussian(gamma, s, 1), 2, "replace").get_delta_bounds(eps)
    assert lo <= ref <= up
    lo, up = ShuffleAccountant(RandomizedResponse(10, 2.0), 3, "replace").get_delta_bounds(0.75)
    assert lo <= _dup_table(_krr_table(10, 2.0), 0.75, 3, "replace") <= up


# ---------------------------------------------------------------------------------------------------------
# (a, b) the answer at n = 2, 3 against the independent D_up, and the xtol contract
# ---------------------------------------------------------------------------------------------------------

FINITE = [
    ("10-RR", lambda: RandomizedResponse(10, 2.0), lambda: _krr_table(10, 2.0)),
    ("4-RR", lambda: RandomizedResponse(4, 5.0), lambda: _krr_table(4, 5.0)),
    ("2-RR", lambda: RandomizedResponse(2, 1.0), lambda: _krr_table(2, 1.0)),
    ("dyadic Laplace", lambda: FiniteRandomizer(_DL_ROWS), lambda: _DL),
]


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
@pytest.mark.parametrize("cell", range(len(FINITE)), ids=[c[0] for c in FINITE])
def test_finite_answer_against_exact_enumeration(cell, adjacency, n):
    _, make, table = FINITE[cell]
    P = table()
    for delta in (1e-3, 1e-6, 1e-9):
        e = _fresh_epsilon(make, n, adjacency, delta)
        exact = _dup_table(P, e, n, adjacency)
        assert exact <= delta
        cert = _fresh_delta(make, n, adjacency, e)
        assert exact <= cert * (1 + 1e-9) + 1e-25 and cert <= delta  # (1e-25: mpmath's residue where L <= 0 exactly)
        if e > 0.0:
            assert _fresh_delta(make, n, adjacency, e * (1 - XTOL)) > delta


CONTINUOUS = [
    ("BMG(0.5, 2)", lambda: BlanketMixedGaussian(0.5, 2.0, 1), ("bmg", 0.5, 2.0), ("zero_out", "replace")),
    ("BMG(0.3, 1.2)", lambda: BlanketMixedGaussian(0.3, 1.2, 1), ("bmg", 0.3, 1.2), ("replace",)),
    ("Gauss(2)", lambda: GaussianRandomizer(2.0, 1), ("gauss", None, 2.0), ("zero_out",)),
]


@pytest.mark.parametrize("cell", range(len(CONTINUOUS)), ids=[c[0] for c in CONTINUOUS])
def test_continuous_answer_against_quadrature(cell):
    _, make, (kind, gamma, s), adjs = CONTINUOUS[cell]
    for adjacency in adjs:
        for n, delta in ((2, 1e-3), (2, 1e-9), (3, 1e-6)):
            e = _fresh_epsilon(make, n, adjacency, delta)
            ref = _dup_mix(kind, gamma, s, e, n, adjacency)
            cert = _fresh_delta(make, n, adjacency, e)
            assert ref <= cert * (1 + 1e-4)  # (1e-4: the product rule's error at the Gaussian blanket's kink)
            assert cert <= delta and ref <= delta
            assert _fresh_delta(make, n, adjacency, e * (1 - XTOL)) > delta


# ---------------------------------------------------------------------------------------------------------
# the refit and the snap (phase 2 on laws that are not atom laws)
# ---------------------------------------------------------------------------------------------------------

def _traced_epsilon(make, n, adjacency, delta, xtol):
    """get_epsilon with the refit's outcome and phase 2's probe points recorded."""
    seen: dict = {"refit": False, "pts": []}
    refit, probe = S._refit, S.probe

    def traced_refit(*a, **k):
        out = refit(*a, **k)
        seen["refit"] = out[2] is not None
        return out

    def traced_probe(acc, e, *a, **k):
        seen["pts"].append(e)
        return probe(acc, e, *a, **k)

    S._refit, S.probe = traced_refit, traced_probe
    try:
        e = _fresh_epsilon(make, n, adjacency, delta, xtol)
    finally:
        S._refit, S.probe = refit, probe
    return e, seen


@pytest.mark.parametrize("sigma0, n, delta, xtol, snaps", [
    (2.0, 10**5, 1e-4, 1e-3, False),  # refit on the loose look (docs/accountant.md §8.4): two probes, no snap needed
    # (before the look: three probes, the closing one snapped; the snap: tests/test_eps24_search.py)
    (2.0, 10**5, 1e-6, 1e-3, False),  # refit
    (1.5, 10**5, 1e-3, 0.1, False),  # refit at a wide xtol
])
def test_refit_and_snap_cells(sigma0, n, delta, xtol, snaps):
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e, seen = _traced_epsilon(make, n, "zero_out", delta, xtol)
    assert seen["refit"]
    snapped = any(abs(p - e * (1 - 0.95 * xtol)) <= 1e-9 * e for p in seen["pts"])
    assert snapped == snaps
    assert e in seen["pts"]  # the answer is an evaluated point
    assert _fresh_delta(make, n, "zero_out", e) <= delta
    assert _fresh_delta(make, n, "zero_out", e * (1 - xtol)) > delta


# ---------------------------------------------------------------------------------------------------------
# (c) edges
# ---------------------------------------------------------------------------------------------------------

def test_target_at_and_below_the_value_at_zero():
    make = lambda: BlanketMixedGaussian(0.5, 2.0, 1)  # noqa: E731
    d0 = _fresh_delta(make, 10, "zero_out", 0.0)
    for t in (d0, float(np.nextafter(d0, 1.0)), 1 - 1e-12):
        assert _fresh_epsilon(make, 10, "zero_out", t) == 0.0
    t = float(np.nextafter(d0, 0.0))
    e = _fresh_epsilon(make, 10, "zero_out", t)
    assert 0.0 < e and _fresh_delta(make, 10, "zero_out", e) <= t


@pytest.mark.parametrize("e0", [0.3, 1.0, 2.5])
def test_target_equal_to_a_returned_value(e0):
    """delta = get_delta(e0) (and one ulp either side): the answer is certified and not above e0 by more than
    the search's tolerance."""
    make = lambda: BlanketMixedGaussian(0.5, 2.0, 1)  # noqa: E731
    v = _fresh_delta(make, 10, "zero_out", e0)
    for t in (v, float(np.nextafter(v, 0.0)), float(np.nextafter(v, 1.0))):
        e = _fresh_epsilon(make, 10, "zero_out", t)
        assert _fresh_delta(make, 10, "zero_out", e) <= t
        if t >= v:
            assert e <= e0 / (1 - XTOL)


def test_curves_that_drop_to_zero():
    """k-RR: under zero-out D_up = 0 exactly from eps* = ln(max(k e^e0 / Z, Z / k)) on (L <= 0 for both orders); under
    replace-one the answer for tiny targets is eps0. Answers for tiny targets stay at or above the drop, within
    xtol, and are certified."""
    k, e0 = 10, 2.0
    z = math.exp(e0) + k - 1
    drop = math.log(max(k * math.exp(e0) / z, z / k))
    make = lambda: RandomizedResponse(k, e0)  # noqa: E731
    for t in (1e-15, 1e-100, 5e-324):
        e = _fresh_epsilon(make, 10, "zero_out", t)
        assert drop * (1 - XTOL) <= e <= drop / (1 - XTOL)
        assert _fresh_delta(make, 10, "zero_out", e) <= t
        assert _dup_table(_krr_table(k, e0), e, 3, "zero_out") <= t
        assert _fresh_epsilon(make, 10, "replace", t) == e0
    assert _fresh_delta(make, 10, "replace", e0 * (1 - XTOL)) > 1e-15


@settings(max_examples=12, deadline=None)
@given(st.floats(min_value=-12.0, max_value=-1.0))
def test_random_targets_exact_krr(log10_delta):
    delta = 10.0**log10_delta
    make = lambda: RandomizedResponse(4, 5.0)  # noqa: E731
    e = _fresh_epsilon(make, 3, "zero_out", delta)
    assert _dup_table(_krr_table(4, 5.0), e, 3, "zero_out") <= delta
    assert _fresh_delta(make, 3, "zero_out", e) <= delta


# ---------------------------------------------------------------------------------------------------------
# (d) answers in the target
# ---------------------------------------------------------------------------------------------------------

def test_answers_in_the_target():
    """One accountant, increasing targets: non-increasing answers. Fresh accountants: where the certified curve
    falls steeply (k-RR at its drop to 0) the answers of different targets agree only to xtol, in either order."""
    make = lambda: BlanketMixedGaussian(0.5, 2.0, 1)  # noqa: E731
    acc = ShuffleAccountant(make(), 10, "zero_out")
    ts = [1e-12, 1e-9, 3e-9, 1e-6, 1e-3]
    es = [acc.get_epsilon(t, xtol=XTOL) for t in ts]
    assert all(b <= a for a, b in zip(es, es[1:]))
    fresh = [_fresh_epsilon(lambda: RandomizedResponse(2, 1.0), 3, "zero_out", t) for t in (3e-11, 1.4e-8, 6e-8, 8e-6)]
    assert max(fresh) <= min(fresh) / (1 - XTOL)


# ---------------------------------------------------------------------------------------------------------
# (e) bench/geteps_ratio.py's counts
# ---------------------------------------------------------------------------------------------------------

def test_geteps_ratio_counts_match_an_independent_count():
    """count_calls' (reports, probes, upper-only passes) equal the number of reports the accountant cached,
    the probes phase 2 made and the certify calls in UpperOnly mode."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "bench"))
    try:
        import geteps_ratio
    finally:
        sys.path.pop(0)
    spec, n = dict(kind="gaussian", sigma0=2.0), 10**4
    clear_caches()
    c = geteps_ratio.count_calls(spec, n)
    counts = {"upper_only": 0, "probes": 0}
    certify, probe = D.certify, S.probe

    def counted_certify(law, gamma, n_, rel, threads, mode=None, *a, **k):
        if isinstance(mode, UpperOnly):
            counts["upper_only"] += 1
        return certify(law, gamma, n_, rel, threads, *(() if mode is None else (mode,)), *a, **k)

    def counted_probe(*a, **k):
        counts["probes"] += 1
        return probe(*a, **k)

    D.certify, S.probe = counted_certify, counted_probe
    try:
        clear_caches()
        acc = ShuffleAccountant(GaussianRandomizer(2.0, 1), n, "zero_out")
        e = float(acc.get_epsilon(1e-6))
    finally:
        D.certify, S.probe = certify, probe
    assert e == c["answer"]
    # (the accountant's cache also holds the loose look of docs/accountant.md §8.4, counted apart by count_calls)
    assert (c["reports"] + c["loose_reports"], c["probes"], c["upper_only"]) == (len(acc._reports), counts["probes"],
                                                                               counts["upper_only"])
    # ((4, 0, 3, 7) before the look; 8 reports before the first slope of _guess_slope; (3, 1, 2, 7) before the far
    # end's check was decided by the caps, docs/accountant.md §8.5: no report at eps_tau; (2, 1, 2, 7) before a probe
    # above delta was decided by law 0 alone, docs/accountant.md §8.7: the lower end's probe computes no report)
    assert (c["reports"], c["loose_reports"], c["probes"], c["upper_only"]) == (1, 1, 2, 7)


# ---------------------------------------------------------------------------------------------------------
# replace-one through bot: the answer's certificate is a split the search found, not get_delta's own
# ---------------------------------------------------------------------------------------------------------

def test_through_bot_answer_is_certified_by_a_valid_split():
    """GaussianRandomizer(2), n = 2, replace-one (through bot), delta = 1e-12: the searching accountant's
    get_delta(answer) <= delta, by the split e2 = its hint, whose value a fresh object reproduces; the split's first
    leg (x vs bot at e1, n = 2) is above an independent quadrature of it (leg B is ~1e-35)."""
    make = lambda: GaussianRandomizer(2.0, 1)  # noqa: E731
    clear_caches()
    acc = ShuffleAccountant(make(), 2, "replace")
    e = float(acc.get_epsilon(1e-12))
    e2 = acc._bottom._hint  # (read first: get_delta's own split search below resets it)
    assert float(acc.get_delta(e)) <= 1e-12
    clear_caches()
    fresh = ShuffleAccountant(make(), 2, "replace")
    s = fresh._bottom.split(e, 1.0 - e2 / e, fresh.rel_tol)
    assert s.upper <= 1e-12
    assert _dup_mix("gauss", None, 2.0, s.e1, 2, "zero_out") <= s.leg_a.upper


def test_through_bot_fresh_get_delta_at_the_answer():
    make = lambda: GaussianRandomizer(2.0, 1)  # noqa: E731
    e = _fresh_epsilon(make, 2, "replace", 1e-12)
    assert _fresh_delta(make, 2, "replace", e) <= 1e-12
