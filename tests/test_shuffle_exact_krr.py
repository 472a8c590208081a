"""ExactShuffleAccountant (sharp delta(eps) of shuffled binary RR, replace-one; docs/sharp_krr.md).

References: every dataset enumerated in 40-digit mpmath at n <= 8 (the worst-case claim of
docs/sharp_krr.md §2), the n classes summed in mpmath, full-support pmfs by scipy with the
threshold form of §3 at n = 1000 and 2000 (every class), the blanket ShuffleAccountant and the
clones bound (sharp <= both), and the pinned counterexample to "all other users equal is worst".
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import pathlib

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharpdp.shuffle import (
    ExactShuffleAccountant,
    RandomizedResponse,
    ShuffleAccountant,
    clones_delta,
)
from sharpdp.shuffle.exact_krr import N_MAX, all_equal_delta_bounds

mp.mp.dps = 40


@pytest.fixture(autouse=True)
def _forty_digits():
    """Every test at 40 digits: other test modules set mpmath's global precision at import or in a test (the 1e-35
    comparisons below failed in a clean-clone CI run where a later module had left it at 30)."""
    with mp.workdps(40):
        yield


def _mp_p(e0: float):
    e = mp.e ** mp.mpf(e0)
    return e / (1 + e)


def _mp_law(probs):
    """Law of a sum of independent Bernoulli(probs) (mpmath)."""
    law = [mp.mpf(1)]
    for pi in probs:
        new = [mp.mpf(0)] * (len(law) + 1)
        for c, v in enumerate(law):
            new[c] += v * (1 - pi)
            new[c + 1] += v * pi
        law = new
    return law


def _mp_hockey(P, Q, eps: float):
    t = mp.e ** mp.mpf(eps)
    return mp.fsum(max(a - t * b, 0) for a, b in zip(P, Q))


@functools.lru_cache(maxsize=8)
def _mp_dataset_laws(n: int, e0: float, prec: int) -> dict:
    """The count law of every dataset x in {0,1}^n at ``prec`` bits (the caller's precision): independent of
    eps, so shared by the eps of a test (a pure function of its arguments; lists of immutable mpf, read only)."""
    with mp.workprec(prec):
        p = _mp_p(e0)
        return {x: _mp_law([p if v else 1 - p for v in x]) for x in itertools.product((0, 1), repeat=n)}


def _mp_every_dataset(n: int, e0: float, eps: float):
    """max over every dataset x in {0,1}^n and every user i of delta(M(x) || M(x with x_i flipped))."""
    best = mp.mpf(0)
    laws = _mp_dataset_laws(n, e0, mp.mp.prec)
    for x, law in laws.items():
        for i in range(n):
            y = x[:i] + (1 - x[i],) + x[i + 1:]
            best = max(best, _mp_hockey(law, laws[y], eps))
    return best


def _mp_classes(n: int, e0: float, eps: float, classes=None):
    """delta_j of the classes j of docs/sharp_krr.md §2 (x1 = 1 vs 0, j of the others hold 1), mpmath
    (all classes when ``classes`` is None)."""
    p = _mp_p(e0)
    N = n - 1
    out = []
    for j in range(N + 1) if classes is None else classes:
        others = [p] * j + [1 - p] * (N - j)
        out.append(_mp_hockey(_mp_law([p] + others), _mp_law([1 - p] + others), eps))
    return out


def _mp_end_classes(n: int, e0: float, eps: float):
    """delta_0 and delta_{n-1} as _mp_classes computes them, with the law of the others in closed form: the n - 1
    others all hold 0 (class 0) or all hold 1 (class n - 1), so their count is Bin(n - 1, pi) and user 1's
    Bernoulli shifts it (O(n) mpmath terms instead of the O(n^2) convolution)."""
    p = _mp_p(e0)
    N = n - 1
    out = []
    for pi in (1 - p, p):  # the others' probability of a 1: class 0, class n - 1
        B = [mp.binomial(N, k) * pi**k * (1 - pi) ** (N - k) for k in range(N + 1)]

        def law(r):  # user 1 holds 1 with probability r
            return [(B[c] if c <= N else 0) * (1 - r) + (B[c - 1] if c >= 1 else 0) * r for c in range(N + 2)]

        out.append(_mp_hockey(law(p), law(1 - p), eps))
    return out


def _contains(lo: float, up: float, ref, slack: float = 1e-30) -> bool:
    """lo <= ref <= up up to the 40-digit reference's own rounding (1e-30 relative, 1e-35 absolute:
    at eps = eps0 the exact delta is 0 and the reference is a rounding residue)."""
    return mp.mpf(lo) <= ref * (1 + slack) + mp.mpf(1e-35) and ref <= mp.mpf(up) * (1 + slack) + mp.mpf(1e-35)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
@pytest.mark.parametrize("e0", [math.log(3.0), 2.0])
def test_every_dataset_enumerated(n, e0):
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    for eps in (0.0, 0.3 * e0, 0.7 * e0):
        ref = _mp_every_dataset(n, e0, eps)
        lo, up = acc.get_delta_bounds(eps)
        assert _contains(lo, up, ref), (n, e0, eps, lo, up, ref)
        assert up - lo <= 1e-9 * up


def test_all_equal_is_not_the_worst_case():
    """n = 6, eps0 = 1, eps = 0.25: the class j = 4 beats both "all other users equal" classes by 15 %."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 6)
    rep = acc.report(0.25)
    assert rep.terms["worst_class_j"] == 4 and not rep.terms["all_equal_is_worst"]
    ends = max(acc.delta_at_class(0.25, 0)[1], acc.delta_at_class(0.25, 5)[1])
    assert rep.lower > 1.15 * ends
    ref = _mp_classes(6, 1.0, 0.25)
    assert _contains(rep.lower, rep.upper, max(ref))
    assert float(ref[4]) == pytest.approx(0.10233082920417, rel=1e-12)
    assert float(max(ref[0], ref[5])) == pytest.approx(0.0888479096289, rel=1e-10)


def _scipy_threshold_form(n: int, e0: float, eps: float, classes=None) -> np.ndarray:
    """delta_j = max_t [a U_j(t - 1) - expm1(eps) P(U_j >= t)] (docs/sharp_krr.md §3, the threshold
    form) from full-support pmfs (scipy binom.pmf + FFT convolution), every class j (or the given ones)."""
    from scipy.signal import fftconvolve
    from scipy.stats import binom

    p = 1.0 / (1.0 + math.exp(-e0))
    q = 1.0 - p
    N = n - 1
    a = p - math.exp(eps) * q
    js = range(N + 1) if classes is None else classes
    out = np.empty(len(js))
    for i, j in enumerate(js):
        u = np.maximum(fftconvolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(N - j + 1), N - j, q)),
                       0.0)
        sf = np.concatenate([np.cumsum(u[::-1])[::-1], [0.0]])  # P(U >= t), t = 0..N+1
        t = np.arange(1, N + 2)
        out[i] = np.max(a * u[t - 1] - math.expm1(eps) * sf[t])
    return out


#: _scipy_threshold_form over every class (0.4-0.9 s of CPU per case) stored by
#: tests/data/make_exact_krr_scipy_reference.py: the maximum, its class, and the classes the test reads (0, 1,
#: n // 2, n - 1, the maximum's mirror and every class within 1e-6 of the maximum); the maximum's class is
#: recomputed live and must equal the store (a stale store or a changed reference function fails).
_SCIPY = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "exact_krr_scipy_reference.json").read_text())


@pytest.mark.parametrize("n,e0,eps", [(1000, 1.0, 0.1), (1000, 4.0, 1.2), (2000, 1.0, 0.06)])
def test_brute_force_every_class_scipy(n, e0, eps):
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    (case,) = [c for c in _SCIPY["cases"] if (c["n"], c["e0"], c["eps"]) == (n, e0, eps)]
    ref = {int(k): v for k, v in case["classes"].items()}
    top, j = case["max"], case["argmax"]
    assert _scipy_threshold_form(n, e0, eps, [j])[0] == pytest.approx(top, rel=1e-12)  # live
    up = acc.get_delta(eps)
    assert top > 1e-8
    assert top == pytest.approx(up, rel=1e-7)
    rep = acc.report(eps)
    assert rep.terms["worst_class_j"] in (j, n - 1 - j) or (
        rep.law_index in ref and ref[rep.law_index] == pytest.approx(top, rel=1e-7))
    for jj in (0, 1, n // 2, n - 1):
        assert acc.delta_at_class(eps, jj)[1] == pytest.approx(ref[jj], rel=1e-6, abs=1e-14)


@pytest.mark.parametrize("e0,n", [(1.0, 10), (1.0, 300), (4.0, 300), (0.5, 1000)])
def test_sharp_below_blanket_and_clones(e0, n):
    sharp = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    blanket = ShuffleAccountant(RandomizedResponse(2, e0), n, adjacency="replace")
    eps = np.array([0.05, 0.2, 0.5]) * e0
    _, up_s = sharp.get_delta_bounds(eps)
    up_b = blanket.get_delta(eps)
    assert np.all(up_s <= up_b)
    for e, u in zip(eps, up_s):
        assert u <= clones_delta(e0, n, float(e))


def test_reference_table_row_n1000():
    """Reference table (docs/sharp_krr.md §6), eps0 = 1, n = 1e3, delta = 1e-6: 0.1266 (here the class maximum is the all-equal one)."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 1000)
    e = acc.get_epsilon(1e-6)
    assert 0.12661 <= e <= 0.12661 * 1.0011
    assert acc.get_delta(e) <= 1e-6 < acc.get_delta(e * (1 - 1.1e-3))
    blanket = ShuffleAccountant(RandomizedResponse(2, 1.0), 1000, adjacency="replace").get_epsilon(1e-6)
    assert blanket == pytest.approx(0.1487, rel=2e-3) and e < 0.86 * blanket


def test_large_n_refused_with_advice():
    with pytest.raises(ValueError, match=r"n must be <= .*ShuffleAccountant"):
        ExactShuffleAccountant(RandomizedResponse(2, 1.0), N_MAX + 1)


@settings(max_examples=25, deadline=None)
@given(e0=st.floats(0.2, 5.0), n=st.integers(1, 12), f1=st.floats(0.0, 1.0), f2=st.floats(0.0, 1.0))
def test_properties_monotone_and_mpmath(e0, n, f1, f2):
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    e1, e2 = sorted((f1 * e0, f2 * e0))
    lo1, up1 = acc.get_delta_bounds(e1)
    lo2, up2 = acc.get_delta_bounds(e2)
    assert 0.0 <= lo1 <= up1 <= 1.0 and 0.0 <= lo2 <= up2 <= 1.0
    assert up1 >= lo2  # delta is non-increasing in eps
    ref = max(_mp_classes(n, e0, e2))
    assert _contains(lo2, up2, ref)


def test_epsilon0_and_n1_closed_forms():
    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.5), 1)
    p = 1.0 / (1.0 + math.exp(-1.5))
    for eps in (0.0, 0.4, 1.2):  # n = 1: delta = p - e^eps q (local RR)
        lo, up = acc.get_delta_bounds(eps)
        assert lo <= p * -math.expm1(eps - 1.5) <= up
    lo, up = acc.get_delta_bounds([1.5, 2.0, math.inf])  # eps >= eps0: exactly 0
    assert np.all(lo == 0.0) and np.all(up == 0.0)


def test_get_epsilon_bracket():
    acc = ExactShuffleAccountant(RandomizedResponse(2, 2.0), 400)
    for d in (1e-3, 1e-6, 1e-12):
        e = acc.get_epsilon(d, xtol=1e-4)
        assert acc.get_delta(e) <= d < acc.get_delta(e * (1 - 1.1e-4))


def test_usable_as_accountant_in_profile_and_pair():
    from sharpdp.shuffle import dominating_pair, privacy_profile

    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 50)
    prof = privacy_profile(acc, [-0.2, 0.0, 0.2, 1.0])
    d02 = acc.get_delta(0.2)
    assert prof[2] == pytest.approx(d02) and prof[3] == 0.0
    assert prof[0] >= 1 - math.exp(-0.2) and prof[1] >= prof[2]
    pair = dominating_pair(acc, 1e-2)
    assert pair is not None


@pytest.mark.parametrize("kw,match,exc", [
    ({"randomizer": RandomizedResponse(3, 1.0)}, r"k = 3 .*ShuffleAccountant", ValueError),
    ({"adjacency": "zero_out"}, r"adjacency", ValueError),
    ({"n": 0}, r"n must be >= 1", ValueError),
    ({"n": 1.5}, r"n must be an integer", ValueError),
    ({"rel_tol": 0.0}, r"rel_tol", ValueError),
    ({"randomizer": object()}, r"randomizer must be a RandomizedResponse", TypeError),
])
def test_bad_input(kw, match, exc):
    args = {"randomizer": RandomizedResponse(2, 1.0), "n": 10, "adjacency": "replace", "rel_tol": 1e-2}
    args.update(kw)
    with pytest.raises(exc, match=match):
        ExactShuffleAccountant(args["randomizer"], args["n"], args["adjacency"], rel_tol=args["rel_tol"])


def test_n_as_integer_valued_float():
    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 1e3)
    assert acc.n == 1000


@pytest.mark.parametrize("e0,n,eps", [(1.0, 7, 0.3), (2.0, 40, 0.5), (0.5, 300, 0.1)])
def test_all_equal_bounds_are_the_end_classes(e0, n, eps):
    """all_equal_delta_bounds brackets max(delta_0, delta_{n-1}) (mpmath) and is below the sharp value."""
    lo, up = all_equal_delta_bounds(e0, n, eps)
    ref = _mp_end_classes(n, e0, eps)
    if n <= 40:  # the closed form against the Bernoulli-by-Bernoulli convolution of _mp_classes
        for r, c in zip(ref, _mp_classes(n, e0, eps, classes=(0, n - 1))):
            assert abs(r - c) <= mp.mpf(10) ** -35 * (1 + abs(c))
    assert _contains(lo, up, max(ref))
    assert up <= ExactShuffleAccountant(RandomizedResponse(2, e0), n).get_delta(eps) * (1 + 1e-9)


def test_reference_table_large_n_rows_are_all_equal_lower_bounds():
    """Reference table rows (docs/sharp_krr.md §6) at n = 1e6 (delta = 1e-6): 0.002849 (eps0 = 1) and 0.02401 (eps0 = 4) are the
    all-equal datasets' epsilons: certified LOWER bounds on the sharp epsilon (docs/sharp_krr.md §6)."""
    for e0, quoted in ((1.0, 0.002849), (4.0, 0.02401)):
        above = quoted * (1 + 5e-4)
        below = quoted * (1 - 5e-4)
        assert all_equal_delta_bounds(e0, 10**6, below)[0] > 1e-6  # delta > 1e-6 a hair below the quoted eps
        assert all_equal_delta_bounds(e0, 10**6, above)[1] < 1e-6  # and < 1e-6 a hair above


def test_smallest_certified_delta_reports_the_sharp_bound():
    from sharpdp.shuffle import smallest_certified_delta
    from sharpdp.shuffle.certified import sharp_applies

    rr = RandomizedResponse(2, 1.0)
    d, src = smallest_certified_delta(rr, 1000, 0.12, "replace")
    assert src == "sharp" and d == ExactShuffleAccountant(rr, 1000).get_delta(0.12)
    assert d < ShuffleAccountant(rr, 1000, adjacency="replace").get_delta(0.12)
    # outside the sharp range: the former choice (blanket or clones), never "sharp"
    # the sharp range now reaches the library's limit n = 1e9 (docs/sharp_krr.md §5)
    assert N_MAX == 10**9 and sharp_applies(rr, N_MAX, "replace") and not sharp_applies(rr, N_MAX, "zero_out")
    assert smallest_certified_delta(rr, 1000, 0.12, "zero_out")[1] == "blanket"
    assert smallest_certified_delta(RandomizedResponse(3, 1.0), 200, 0.3, "replace")[1] in ("blanket", "clones")


@pytest.mark.parametrize("e0", [1e-6, 12.0, 300.0])
def test_extreme_epsilon0_against_mpmath(e0):
    """eps0 near 0, and large enough that p rounds to 1 in double (300): brackets still contain the
    40-digit value (mp.dps raised so that q = e^-300 p is resolved)."""
    n = 7
    acc = ExactShuffleAccountant(RandomizedResponse(2, e0), n)
    with mp.workdps(400):
        for eps in (0.0, 0.5 * e0, 0.9 * e0):
            lo, up = acc.get_delta_bounds(eps)
            ref = max(_mp_classes(n, e0, eps))
            assert _contains(lo, up, ref), (e0, eps, lo, up, ref)
            assert lo > 0 and (up - lo) <= 1e-6 * up


def test_get_epsilon_when_the_worst_class_is_not_a_candidate():
    """n = 80, eps0 = 2, delta = 0.1: just below the answer the largest class is j = 49, which is
    none of get_epsilon's first candidates (ends, their neighbours, middle); those alone would
    accept a smaller epsilon."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 2.0), 80)
    e = acc.get_epsilon(0.1, xtol=1e-6)
    assert acc.get_delta(e) <= 0.1
    below = e * (1 - 1e-5)
    rep = acc.report(below)
    assert rep.terms["worst_class_j"] == 49 and rep.lower > 0.1
    cand = (0, 1, 2, 39, 77, 78, 79)
    assert max(acc.delta_at_class(below, j)[1] for j in cand) <= 0.1
