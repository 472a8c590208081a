"""Review rev9 of docs/accountant_atoms.md §10 (binary RR's search: upward first bracket g, 4g, ...
with 0 as lower end, phase 1 on the law of largest cap, phase 1's 2 % reach, mstar's first stretch)
and docs/sharp_krr.md §4.15 (shallower range levels of ExactShuffleAccountant's decisions).

References are independent of the engines: the blanket divergence of laws_for's two-atom laws by
trinomial sums in mpmath (50 digits), the exact shuffle divergence of binary RR (max over classes j,
both directions) in mpmath, and mstar's old scan loop. tests/data/review_rev9/ holds the sweeps
(sweep.py, sweep_d0.py, exact_ref.py, krr_ref.py) that ran the full grids (700 get_epsilon calls at
eps0 in {1e-3, 0.1, 1, 4, 20}, n in {1, 2, 3, 10, 100, 1e3, 1e7}, delta in {0.5, 0.1, 1e-6, 1e-12,
1e-20} and around delta(0), both adjacencies; 72 ExactShuffleAccountant calls): no violation.
"""

from __future__ import annotations

import functools

import mpmath as mp
import pytest

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.laws import laws_for


def blanket_exact(eps0: float, x: float, n: int, adjacency: str) -> mp.mpf:
    """max over laws_for's laws of E[(sum_i B_i L_i)_+] / (n gamma), trinomial counts, 50 digits."""
    out = mp.mpf(0)
    with mp.workdps(50):
        for g, law in laws_for(RandomizedResponse(2, eps0), x, adjacency):
            assert law.values.size <= 2
            if law.values.max() <= 0:
                continue
            (a1, a2), (p1, p2) = [mp.mpf(float(v)) for v in law.values], [mp.mpf(float(p)) for p in law.probs]
            gm = mp.mpf(float(g))
            q1, q2 = gm * p1, gm * p2
            q0 = 1 - q1 - q2
            tot = mp.mpf(0)
            for c1 in range(n + 1):
                for c2 in range(n - c1 + 1):
                    s = c1 * a1 + c2 * a2
                    if s > 0:
                        tot += (mp.factorial(n) / (mp.factorial(c1) * mp.factorial(c2) * mp.factorial(n - c1 - c2))
                                * q1**c1 * q2**c2 * q0**(n - c1 - c2) * s)
            out = max(out, tot / (n * gm))
    return out


# (adjacency, eps0, n, delta): answers within 1.5e-3 of the exact root in exact_ref.py's bisection
CASES = [
    ("replace", 1e-3, 10, 1e-6), ("replace", 0.1, 10, 1e-6), ("replace", 1.0, 3, 0.1),
    ("replace", 4.0, 1, 0.5), ("replace", 4.0, 10, 0.1), ("replace", 20.0, 2, 0.1),
    ("zero_out", 1e-3, 3, 1e-6), ("zero_out", 0.1, 10, 1e-6), ("zero_out", 1.0, 1, 0.1),
    ("zero_out", 1.0, 10, 1e-20), ("zero_out", 4.0, 3, 0.1), ("zero_out", 4.0, 10, 1e-12),
]


@pytest.mark.parametrize("adjacency, eps0, n, delta", CASES)
def test_binary_rr_answer_certified_and_tight_small_n(adjacency, eps0, n, delta):
    """Catches an under-reported answer (a bracket end taken as certified that is not, e.g. c_hi from
    _upward_end with cap > delta, or 0 used as an answer when delta(0) > delta) and an absurdly loose one
    (the fallback of _upward_end returning the cap, phase 2 stopping at c_hi): the exact divergence at the
    answer is <= delta and 0.2 % below the answer it exceeds delta (the exact root lies within xtol)."""
    e = ShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency=adjacency).get_epsilon(delta)
    assert 0.0 < e < eps0
    assert ShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency=adjacency).get_delta(e) <= delta
    assert blanket_exact(eps0, e, n, adjacency) <= delta
    assert blanket_exact(eps0, e * (1 - 2e-3), n, adjacency) > delta


@pytest.mark.parametrize("adjacency, eps0, n", [("replace", 1.0, 3), ("zero_out", 0.1, 10), ("replace", 4.0, 1000),
                                                ("zero_out", 1e-3, 10**7)])
def test_targets_around_delta_at_zero(adjacency, eps0, n):
    """0 exactly when delta >= get_delta(0), else > 0 and certified: catches the lower end 0 being
    taken as an answer (or the get_delta(0) check skipped) when known_above_0 is wrongly set."""
    rr = RandomizedResponse(2, eps0)
    d0 = float(ShuffleAccountant(rr, n, adjacency=adjacency).get_delta(0.0))
    for f in (1 - 1e-9, 1.0, 1 + 1e-9):
        e = ShuffleAccountant(rr, n, adjacency=adjacency).get_epsilon(d0 * f)
        if f >= 1.0:
            assert e == 0.0
        else:
            assert e > 0.0
            assert ShuffleAccountant(rr, n, adjacency=adjacency).get_delta(e) <= d0 * f


@pytest.mark.parametrize("adjacency", ["replace", "zero_out"])
def test_answer_does_not_depend_on_call_order(adjacency):
    """A used accountant (get_delta at several points, another search first) gives the fresh answer:
    catches a search reading the running minimum or the memo of earlier calls (phase 1's lead law)."""
    rr, n, d = RandomizedResponse(2, 1.0), 1000, 1e-6
    e = ShuffleAccountant(rr, n, adjacency=adjacency).get_epsilon(d)
    acc = ShuffleAccountant(rr, n, adjacency=adjacency)
    for x in (0.0, 0.5 * e, e, 2 * e, 1.0):
        acc.get_delta(x)
    acc.get_epsilon(3e-7)
    assert acc.get_epsilon(d) == e


def test_far_off_guess_upward_bracket_fallback(monkeypatch):
    """_upward_end from a guess 1e-9 times the root (past 4^7 g: the geometric fallback) or from 0
    (returns the cap): the answer is still certified and equal within xtol to the normal one. Catches a
    fallback returning a point where cap_at > delta, or a non-monotone end."""
    from sharpdp.shuffle.accountant import search

    rr, n, d = RandomizedResponse(2, 1.0), 1000, 1e-6
    ref = ShuffleAccountant(rr, n, adjacency="zero_out").get_epsilon(d)
    guess = search._guess_epsilon
    for scale in (1e-9, 0.0, 1e6):
        monkeypatch.setattr(search, "_guess_epsilon", lambda acc, delta, s=scale: guess(acc, delta) * s)
        e = ShuffleAccountant(rr, n, adjacency="zero_out").get_epsilon(d)
        monkeypatch.setattr(search, "_guess_epsilon", guess)
        assert ShuffleAccountant(rr, n, adjacency="zero_out").get_delta(e) <= d
        assert abs(e / ref - 1) <= 2e-3


def _old_scan(s0: int, d: int, top: int) -> list[int]:
    seq = [s0]
    while seq[-1] < d:
        nxt = seq[-1] + max(1, seq[-1] // 50)
        if min(nxt, d) > top:
            break
        seq.append(nxt)
    return seq


def _new_scan(s0: int, d: int, top: int) -> list[int]:
    """blocks._block_law.mstar's list as of §10 (copied: mstar is a closure)."""
    seq = [s0]
    end = min(d, 100, top) if d > top else min(d, 100)
    if seq[0] < end:
        seq.extend(range(seq[0] + 1, end + 1))
    seq += _old_scan(seq[-1], d, top)[1:]
    return seq


def test_mstar_first_stretch_is_the_old_scan():
    """The one-go stretch below 100 equals the loop's list (catches an off-by-one at 100 or at top)."""
    for d in (1, 2, 50, 99, 100, 101, 150, 260):
        for top in (0, 1, 49, 50, 99, 100, 101, 120, 300):
            for s0 in range(1, d + 1, max(1, d // 37)):
                if min(s0, d) > top:
                    continue
                assert _new_scan(s0, d, top) == _old_scan(s0, d, top)


@functools.lru_cache(maxsize=4)
def _exact_class_laws(n: int, eps0: float) -> tuple:
    """(p, q, [U_j for every class j]) of exact_shuffle at 30 digits: independent of eps, so computed once per
    (n, eps0) for the eps of every test (a pure function of its arguments; mpf values are immutable)."""
    with mp.workdps(30):
        p = 1 / (1 + mp.exp(-mp.mpf(eps0)))
        q, N = 1 - p, n - 1
        P = [[mp.binomial(m, k) * p**k * q**(m - k) for k in range(m + 1)] for m in range(N + 1)]
        laws = []
        for j in range(N + 1):
            A, B = P[j], P[N - j][::-1]
            laws.append(tuple(mp.fsum(A[i] * B[c - i] for i in range(max(0, c - (N - j)), min(j, c) + 1))
                              for c in range(N + 1)))
        return p, q, tuple(laws)


@functools.lru_cache(maxsize=4)
def _exact_pairs(n: int, eps0: float) -> tuple:
    """The (P, Q) count laws of exact_shuffle, per class j and direction, at 30 digits: independent of eps, so
    computed once per (n, eps0) (P(c) = x U(c - 1) + (1 - x) U(c), Q likewise with y; (x, y) = (p, q), (q, p))."""
    p, q, laws = _exact_class_laws(n, eps0)
    N = n - 1
    out = []
    with mp.workdps(30):
        for U in laws:
            for x, y in ((p, q), (q, p)):
                def w(c, z):
                    return z * (U[c - 1] if c >= 1 else 0) + (1 - z) * (U[c] if c <= N else 0)
                out.append((tuple(w(c, x) for c in range(N + 2)), tuple(w(c, y) for c in range(N + 2))))
    return tuple(out)


def exact_shuffle(n: int, eps0: float, eps: float) -> mp.mpf:
    """Binary RR under replace-one: max over classes j (j of the n - 1 others hold 1) and both directions
    of sum_c (P(c) - e^eps Q(c))_+, 30 digits."""
    pairs = _exact_pairs(n, eps0)
    with mp.workdps(30):
        E = mp.exp(mp.mpf(eps))
        best = mp.mpf(0)
        for P, Q in pairs:
            best = max(best, mp.fsum(max(a - E * b, 0) for a, b in zip(P, Q)))
        return best


@pytest.mark.parametrize("eps0, delta, xtol", [(0.5, 1e-2, 1e-1), (0.5, 1e-6, 1e-3), (0.5, 1e-12, 1e-6),
                                               (2.0, 1e-2, 1e-6), (2.0, 1e-6, 1e-6)])
def test_exact_krr_answer_at_least_exact_and_within_xtol(eps0, delta, xtol):
    """§4.15: shallower first range level and no deeper re-evaluation of a range far above the target
    must leave the answer >= eps* and within xtol: catches a range charge not added (answer below eps*)
    or a range wrongly declared above (answer too loose)."""
    n = 65
    e = ExactShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency="replace").get_epsilon(delta, xtol=xtol)
    assert 0.0 < e < eps0
    assert exact_shuffle(n, eps0, e) <= delta
    assert exact_shuffle(n, eps0, e / (1 + xtol) * (1 - 1e-9)) > delta
