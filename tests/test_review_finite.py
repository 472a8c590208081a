"""Adversarial review of FiniteRandomizer (docs/sampling.md §10) against independent exact references.

References (none of them uses the accountant or the randomizer's own laws):
* the exact hockey-stick divergence of the shuffled multisets, maximised over every neighbouring pair of
  datasets whose users sit at table rows (n = 1..5), in exact integer arithmetic from the integer table,
  with e^eps bracketed by mpmath at 200 bits (e^eps rounded up for the check of the upper value, down for
  the lower form); inputs between rows are mixtures of rows, covered by joint convexity (§10.2);
* RandomizedResponse's own accountant at larger n (brackets must overlap);
* exact expectations (Fractions) of the input rounding, the mean and the frequency estimators;
* chi-square / binomial tests of the sampler with fixed seeds on extreme tables.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy.stats import binomtest, chisquare

from sharpdp.shuffle import FiniteRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.randomizers.finite import ONE

ADJ = ("zero_out", "replace")
U = 2.0**-53


# ------------------------------------------------------------------ exact references
@functools.lru_cache(maxsize=256)
def _exp_bracket(eps: float) -> tuple[Fraction, Fraction]:
    """Rationals lo <= e^eps <= hi (relative width 2^-179; exactly 1 at eps = 0); a pure function of eps, kept
    per eps (every n and adjacency of a table asks the same eps)."""
    if eps == 0:
        return Fraction(1), Fraction(1)
    ctx = mpmath.mp.clone()
    ctx.prec = 200
    m, e = ctx.frexp(ctx.exp(ctx.mpf(eps)))
    f = Fraction(int(ctx.ldexp(m, 200))) * Fraction(2) ** (e - 200)
    d = Fraction(1, 2**180)
    return f * (1 - d), f * (1 + d)


def _user_laws(N: list[list[int]]) -> list[tuple[list[int], int]]:
    """(numerators, denominator) of each row's law and, last, of ⊥ (the normalised infimum M / G)."""
    M = [min(c) for c in zip(*N)]
    return [(list(row), ONE) for row in N] + [(M, sum(M))]


def _add_user(law: tuple[list[int], int], dist: dict, den: int) -> tuple[dict, int]:
    """Law of the output counts after one more user (integer numerators over a common denominator)."""
    num, d = law
    out: dict = {}
    for key, p in dist.items():
        for j, q in enumerate(num):
            if q:
                k = list(key)
                k[j] += 1
                k = tuple(k)
                out[k] = out.get(k, 0) + p * q
    return out, den * d


@functools.lru_cache(maxsize=64)
def _pair_laws(N: tuple[tuple[int, ...], ...], n: int, adjacency: str) -> list[tuple[list[tuple[int, int]], int, int]]:
    """For every dataset's n - 1 other users and every neighbouring pair (x, y) of the last user: the
    joint support of the two shuffled laws as (P numerator, Q numerator) pairs and the denominators (P, Q);
    independent of e^eps, so shared by every eps of one table (a pure function of its arguments)."""
    laws = _user_laws([list(row) for row in N])
    r, m = len(N), len(N[0])
    pairs = ([(x, r) for x in range(r)] + [(r, x) for x in range(r)] if adjacency == "zero_out"
             else [(x, y) for x in range(r) for y in range(r) if x != y])
    out = []
    for rest in itertools.combinations_with_replacement(range(r), n - 1):
        dist, den = {(0,) * m: 1}, 1
        for z in rest:
            dist, den = _add_user(laws[z], dist, den)
        last = {x: _add_user(laws[x], dist, den) for x in {p for pr in pairs for p in pr}}
        for x, y in pairs:
            (P, dp), (Q, dq) = last[x], last[y]
            out.append(([(p, Q.get(key, 0)) for key, p in P.items()], dp, dq))
    return out


def exact_delta(N: list[list[int]], n: int, adjacency: str, a: Fraction) -> Fraction:
    """max over neighbouring datasets of H_a(shuffled D || shuffled D'), exactly (a in place of e^eps)."""
    best = Fraction(0)
    an, ad = a.numerator, a.denominator
    for pq, dp, dq in _pair_laws(tuple(tuple(row) for row in N), n, adjacency):
        u, v = dq * ad, dp * an
        s = 0
        for p, q in pq:
            t = p * u - q * v
            if t > 0:
                s += t
        best = max(best, Fraction(s, dp * dq * ad))
    return best


def _check_bracket(fr: FiniteRandomizer, ns, epss, adjacencies=ADJ) -> None:
    N = fr.table.tolist()
    for adjacency in adjacencies:
        if adjacency == "replace" and len(N) < 2:
            continue
        for n in ns:
            acc = ShuffleAccountant(fr, n, adjacency=adjacency)
            for eps in epss:
                a_lo, a_hi = _exp_bracket(eps)
                up = acc.get_delta(eps)
                lf = acc.get_delta_lower_form(eps)
                hi = exact_delta(N, n, adjacency, a_hi)  # <= delta(eps)
                lo = hi if a_lo == a_hi else exact_delta(N, n, adjacency, a_lo)  # >= delta(eps)
                assert Fraction(up) >= hi, (adjacency, n, eps, up, float(hi))
                assert Fraction(lf) <= lo, (adjacency, n, eps, lf, float(lo))


def _obj(rows):
    return np.array(rows, dtype=object)


def _krr(k: int, eps0: float) -> np.ndarray:
    rr = RandomizedResponse(k, eps0)
    P = np.full((k, k), rr.p_other)
    np.fill_diagonal(P, rr.p_keep)
    return P


def _fine_rows(seed: int, r: int, m: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(r):
        cuts = sorted(int(v) for v in rng.integers(1, 2**63, size=m - 1, dtype=np.uint64) * 2 + 1)
        rows.append([int(v) for v in np.diff([0] + cuts + [ONE]).tolist()])
    return rows


def _nasty(name: str) -> FiniteRandomizer:
    rng = np.random.default_rng(5)
    if name == "one_unit":  # entries of 1 unit: gamma ~ 1e-19, eps0 = 44.4
        return FiniteRandomizer(_obj([[1, ONE - 1], [ONE - 1, 1]]))
    if name == "one_unit_k3":
        return FiniteRandomizer(_obj([[1, 1, ONE - 2], [ONE - 2, 1, 1], [1, ONE - 2, 1]]))
    if name == "unit_and_halves":  # column 0: 1 unit against 2^62
        return FiniteRandomizer(_obj([[1, 2**63 - 1, 2**63], [2**62, 2**62, 2**63]]))
    if name == "granularity_2^-53":  # a probability of 1e-300 rounded up to one unit 2^-53
        return FiniteRandomizer.from_probabilities([[1e-300, 1.0, 0.5], [0.5, 1e-300, 1.0]])
    if name == "bits64_tiny":  # bits = 64: entries not exact doubles, tiny ones
        return FiniteRandomizer.from_probabilities([[1e-30, 1.0, 0.5], [0.5, 1e-30, 1.0]], bits=64)
    if name == "fine64":
        return FiniteRandomizer(_obj(_fine_rows(5, 3, 4)))
    if name == "row_is_blanket":  # k-RR plus the uniform row, which is the normalised infimum
        return FiniteRandomizer.from_probabilities(np.vstack([_krr(3, 1.0), np.full((1, 3), 1 / 3)]))
    if name == "near_identical":  # rows one unit apart
        return FiniteRandomizer(_obj([[2**62 + 1, 2**62 - 1, 2**63], [2**62, 2**62, 2**63]]))
    if name == "identical":
        return FiniteRandomizer(_obj([[2**62, 2**62, 2**63]] * 2))
    if name == "zero_columns":
        return FiniteRandomizer.from_probabilities([[0, 0.7, 0, 0.3, 0], [0, 0.2, 0, 0.8, 0]])
    if name == "odd_G":  # blanket masses M_j / G not dyadic, G small
        return FiniteRandomizer(_obj([[3, 5, ONE - 8], [7, 3, ONE - 10], [5, 7, ONE - 12]]))
    if name == "krr2":
        return FiniteRandomizer.from_probabilities(_krr(2, 0.8))
    if name == "wide_k6":
        return FiniteRandomizer.from_probabilities(rng.uniform(0.01, 1, size=(2, 6)))
    if name == "tall_r5":
        return FiniteRandomizer.from_probabilities(rng.uniform(0.01, 1, size=(5, 2)))
    if name == "one_row":
        return FiniteRandomizer.from_probabilities([[0.3, 0.7]])
    raise KeyError(name)


NASTY = ("one_unit", "one_unit_k3", "unit_and_halves", "granularity_2^-53", "bits64_tiny", "fine64",
         "row_is_blanket", "near_identical", "identical", "zero_columns", "odd_G", "krr2", "wide_k6",
         "tall_r5", "one_row")


# ------------------------------------------------------------------ accountant vs exact delta
@pytest.mark.parametrize("name", NASTY)
def test_accountant_brackets_the_exact_shuffled_delta_on_nasty_tables(name):
    """lower form <= exact max hockey-stick (all datasets at rows) <= certified upper value, n = 1..4 (5 for
    small tables), eps in {0, 1e-300, 1e-12, 0.5, 3, 40} and just below / at eps0 (both adjacencies)."""
    fr = _nasty(name)
    e0 = fr.local_epsilon
    epss = [0.0, 1e-300, 1e-12, 0.5, 3.0, 40.0]
    if e0 > 0:
        epss += [max(e0 - 1e-9, 0.0), e0 * (1 - 1e-15), e0]
    small = fr.n_inputs <= 3 and fr.n_outputs <= 4
    ns = (1, 2, 3, 4, 5) if small else (1, 2, 3)
    _check_bracket(fr, ns, sorted(set(epss)))


def _random_int_table(seed: int) -> FiniteRandomizer | None:
    """Random integer tables of four kinds: tiny entries (units), arbitrary 62-bit, powers of two, and
    near-identical rows 2^40 + small; random zero columns."""
    rng = np.random.default_rng(seed)
    r, m, mode = int(rng.integers(1, 4)), int(rng.integers(2, 5)), seed % 4
    zero = rng.random(m) < 0.2
    zero[0] = False
    rows = []
    for _ in range(r):
        if mode == 0:
            e = [int(v) for v in rng.integers(1, 50, size=m)]
        elif mode == 1:
            e = [int(v) for v in rng.integers(1, 2**62, size=m, dtype=np.uint64)]
        elif mode == 2:
            e = [1 << int(rng.integers(0, 62)) for _ in range(m)]
        else:
            e = [int(v) for v in rng.integers(2**40, 2**40 + 5, size=m, dtype=np.uint64)]
        e = [0 if zero[j] else v for j, v in enumerate(e)]
        big = max(range(m), key=lambda j: e[j])
        e[big] += ONE - sum(e)
        rows.append(e)
    return FiniteRandomizer(_obj(rows))


@pytest.mark.parametrize("seed", range(0, 24, 3))
def test_accountant_brackets_the_exact_delta_on_random_integer_tables(seed):
    """Fuzz (a larger run of 450 such tables found no violation): n = 1..4, eps 0, random, near eps0."""
    for s in (seed, seed + 1, seed + 2):
        fr = _random_int_table(s)
        rng = np.random.default_rng(1000 + s)
        e0 = fr.local_epsilon
        _check_bracket(fr, (int(rng.integers(1, 5)),), [0.0, float(rng.uniform(0, 2)), e0 * 0.999, e0])


@pytest.mark.parametrize("k,eps0", [(2, 0.5), (3, 3.0), (5, 1.0), (6, 6.0)])
@pytest.mark.parametrize("adjacency", ADJ)
def test_krr_table_brackets_overlap_randomized_response_at_larger_n(k, eps0, adjacency):
    """k-RR through the table (rounded to 2^-53) against RandomizedResponse: brackets overlap (up to the
    1e-12 relative difference of the two mechanisms) at n = 30, 300, eps up to just below eps0."""
    fr = FiniteRandomizer.from_probabilities(_krr(k, eps0))
    rr = RandomizedResponse(k, eps0)
    for n in (30, 300):
        A, B = ShuffleAccountant(fr, n, adjacency=adjacency), ShuffleAccountant(rr, n, adjacency=adjacency)
        for eps in (0.0, 0.3 * eps0, 0.9 * eps0):
            a, b = A.get_delta_bounds(eps), B.get_delta_bounds(eps)
            assert a[0] <= b[1] * (1 + 1e-12) + 1e-300 and b[0] <= a[1] * (1 + 1e-12) + 1e-300, (n, eps, a, b)


# ------------------------------------------------------------------ stored doubles: safe side
@pytest.mark.parametrize("name", NASTY)
def test_gamma_blanket_and_local_epsilon_are_rounded_on_the_safe_side(name):
    """gamma <= G 2^-64 < next double; R_BG(y) <= M_y / G; local_epsilon >= ln(max ratio) (mpmath 200 bits)
    and within 4 ulps of it."""
    fr = _nasty(name)
    N = fr.table.tolist()
    M = [min(c) for c in zip(*N)]
    G = sum(M)
    assert Fraction(fr.gamma) <= Fraction(G, ONE) < Fraction(math.nextafter(fr.gamma, 2.0))
    for b, mj in zip(fr.blanket_probs.tolist(), M):
        assert Fraction(b) <= Fraction(mj, G) < Fraction(math.nextafter(b, 2.0))
    ratio = max((Fraction(max(c), min(c)) for c in zip(*N) if c[0] > 0), default=Fraction(1))
    ctx = mpmath.mp.clone()
    ctx.prec = 200
    exact = ctx.log(ctx.mpf(ratio.numerator)) - ctx.log(ctx.mpf(ratio.denominator))
    assert ctx.mpf(fr.local_epsilon) >= exact
    assert fr.local_epsilon <= float(exact) + 4 * math.ulp(float(exact))


@pytest.mark.parametrize("name", ["one_unit", "bits64_tiny", "odd_G", "fine64", "near_identical", "row_is_blanket"])
def test_laws_dominate_the_exact_variable_on_nasty_tables(name):
    """Every exact L = (P_a - e^eps P_b)(Y) / R_BG(Y), Y ~ M / G (integers, e^eps rounded up in the ⊥ order
    and down in the other, i.e. the larger exact L), is dominated by some listed law: mass >= 1 and
    P(L~ >= t - value_error) >= P(L >= t) for every t (or, for a law clipped to <= 0 without value error, every
    exact atom <= 0: docs/sampling.md §10.3)."""
    fr = _nasty(name)
    laws = _user_laws(fr.table.tolist())
    r = fr.n_inputs
    bg = [Fraction(v, laws[-1][1]) for v in laws[-1][0]]
    rows = [[Fraction(v, d) for v in num] for num, d in laws]
    for adjacency in ADJ:
        if adjacency == "replace" and r < 2:
            continue
        pairs = ([(x, r) for x in range(r)] + [(r, x) for x in range(r)] if adjacency == "zero_out"
                 else [(x, y) for x in range(r) for y in range(r) if x != y])
        for eps in (0.0, 0.7, fr.local_epsilon * 0.5, fr.local_epsilon):
            a = _exp_bracket(eps)[0]  # the smaller e^eps gives the larger L
            stored = [(list(map(Fraction, law.values.tolist())), list(map(Fraction, law.probs.tolist())),
                       Fraction(law.value_error)) for _, law in fr.privacy_amplification_laws(eps, adjacency)]
            for x, y in pairs:
                exact = [((rows[x][j] - a * rows[y][j]) / bg[j], bg[j]) for j in range(len(bg)) if bg[j] > 0]
                nonpositive = max(u for u, _ in exact) <= 0  # a law clipped to <= 0 (no value error) suffices
                ok = any(sum(ps) >= 1 and ((nonpositive and max(vs) <= 0 and err == 0)
                                           or all(sum(p for v, p in zip(vs, ps) if v + err >= t)
                                                  >= sum(q for u, q in exact if u >= t) for t, _ in exact))
                         for vs, ps, err in stored)
                assert ok, (adjacency, eps, x, y)


# ------------------------------------------------------------------ sampler
def test_sampler_on_extreme_tables():
    """Single positive output (first or last column), one-unit entries (never drawn in 2 10^5), and a
    table of mass 2^-40 .. 1 - 2^-2: chi-square against the exact table."""
    n = 200_000
    only_last = FiniteRandomizer(_obj([[0, 0, ONE], [0, 0, ONE]]))
    assert np.all(only_last.sample(np.zeros(1000, dtype=np.int64), rng=1) == 2)
    only_first = FiniteRandomizer(_obj([[ONE, 0, 0]]))
    assert np.all(only_first.sample(np.zeros(1000, dtype=np.int64), rng=1) == 0)
    unit = FiniteRandomizer(_obj([[1, ONE - 2, 1], [ONE - 2, 1, 1]]))
    y0 = unit.sample(np.zeros(n, dtype=np.int64), rng=2)
    y1 = unit.sample(np.ones(n, dtype=np.int64), rng=3)
    assert np.all(y0 == 1) and np.all(y1 == 0)
    row = [2**24, 2**40, 2**58, 2**62, 0]
    row[-1] = ONE - sum(row)
    fr = FiniteRandomizer(_obj([row, row[::-1]]))
    for x in (0, 1):
        law = np.array([v / 2.0**64 for v in fr.table.tolist()[x]])
        counts = np.bincount(fr.sample(np.full(n, x), rng=10 + x, threads=2), minlength=5)
        keep = law * n >= 5
        assert counts[~keep].sum() <= 2  # expected 2^-40 n + 2^-24... < 0.02
        assert chisquare(counts[keep], law[keep] / law[keep].sum() * counts[keep].sum()).pvalue > 1e-4


def test_input_rounding_at_rows_between_and_at_the_ends():
    """Rows separable by the output (1-unit cross mass): at x = x_i exactly the row is x_i; at the ends
    [x_1, x_r]; just inside an end the upper row has probability ceil(f 2^64) 2^-64 (tiny); at f = 1/3
    a binomial test; outside the range a ValueError."""
    fr = FiniteRandomizer(_obj([[ONE - 2, 1, 1], [1, ONE - 2, 1], [1, 1, ONE - 2]]), inputs=[-1.0, 0.5, 2.0],
                          outputs=[10.0, 20.0, 30.0])
    n = 100_000
    for x, want in ((-1.0, 10.0), (0.5, 20.0), (2.0, 30.0), (math.nextafter(-1.0, 0.0), 10.0),
                    (math.nextafter(2.0, 0.0), 30.0)):
        assert np.all(fr.sample(np.full(1000, x), rng=4) == want), x
    y = fr.sample(np.full(n, 1.0), rng=5)  # f = 1/3 between 0.5 and 2.0
    assert set(np.unique(y).tolist()) <= {20.0, 30.0}
    assert binomtest(int(np.sum(y == 30.0)), n, 1 / 3).pvalue > 1e-4
    for bad in (-1.0000001, 2.0000001, np.nan):
        with pytest.raises(ValueError, match="x"):
            fr.sample(np.array([bad]), rng=1)


@pytest.mark.parametrize("inputs,xs", [
    ([0.0, 1.0], [1 / 3, 0.1, math.nextafter(1.0, 0.0), 2.0**-1074, 0.5]),
    ([-3.0, 1e-300, 7.0], [-1.0, 1e-301, 6.999999999, 1e-300 / 3]),
    ([0.0, 3 * 2.0**-1074], [2.0**-1074, 2 * 2.0**-1074]),
    ([1e300, 1.5e300], [1.2e300]),
    ([-1e308, 1e308], [0.0, 5e307, -5e307, math.nextafter(1e308, 0.0)]),  # span above DBL_MAX
])
def test_input_rounding_bias_by_exact_expectation(inputs, xs):
    """E[row value] - x, exactly from the thresholds: within (3.01 u f + 2^-64)(x_{i+1} - x_i) (§10.2)."""
    fr = FiniteRandomizer(_obj([[2**63, 2**63]] * len(inputs)), inputs=inputs, outputs=[0.0, 1.0])
    with np.errstate(all="raise"):
        lo, up, _ = fr._rows_of(np.array(xs))
    X = [Fraction(v) for v in inputs]
    for x, i, t in zip(xs, lo.tolist(), up.tolist()):
        p = Fraction(int(t), ONE)
        mean = X[i] if i == len(X) - 1 else X[i] + p * (X[i + 1] - X[i])
        j = min(i, len(X) - 2)
        span = X[j + 1] - X[j]
        f = (Fraction(x) - X[j]) / span
        bound = (Fraction(3.01) * Fraction(U) * f + Fraction(1, ONE)) * span
        assert abs(mean - Fraction(x)) <= bound, (x, float(mean - Fraction(x)), float(bound))


# ------------------------------------------------------------------ estimators
def test_mean_estimator_bias_by_exact_expectation():
    """Affine tables (two rows; a 4-row table whose E[Y | x] is exactly affine): the exact expectation of
    estimate() at each row, from the integer table, is the row's input to 1e-13 relative."""
    cases = [
        (FiniteRandomizer.from_probabilities([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6]], inputs=[-1.0, 1.0],
                                             outputs=[-2.0, 0.5, 2.0])),
        # E[Y | x] = -1/4, 0, 1/4 (exactly affine), three rows
        (FiniteRandomizer(_obj([[2**63, 2**62, 2**62], [3 * 2**61, 2**62, 3 * 2**61], [2**62, 2**62, 2**63]]),
                          inputs=[0.0, 1.0, 2.0], outputs=[-1.0, 0.0, 1.0])),
        (FiniteRandomizer(_obj([[ONE - 1, 1], [1, ONE - 1]]), inputs=[-5.0, 5.0], outputs=[-5.0, 5.0])),
    ]
    for fr in cases:
        alpha, beta = fr.affine_map()
        for i, row in enumerate(fr.table.tolist()):
            ey = sum(Fraction(v, ONE) * Fraction(float(y)) for v, y in zip(row, fr.outputs.tolist()))
            est = (ey - Fraction(alpha)) / Fraction(beta)
            x = Fraction(float(fr.inputs[i]))
            assert abs(est - x) <= Fraction(1e-13) * (1 + abs(x)), (i, float(est - x))


def test_frequency_estimator_is_unbiased_by_exact_expectation():
    """E[estimate_frequencies] = A P_exact^T f for tables of exact doubles and of 64-bit entries: f to 1e-12."""
    for fr in (FiniteRandomizer.from_probabilities(_krr(4, 1.5)), FiniteRandomizer(_obj(_fine_rows(3, 3, 5))),
               FiniteRandomizer.from_probabilities(_krr(2, 0.1))):
        A = fr._freq_map
        P = np.array([[float(Fraction(v, ONE)) for v in row] for row in fr.table.tolist()])
        for f in (np.eye(fr.n_inputs)[0], np.full(fr.n_inputs, 1 / fr.n_inputs)):
            np.testing.assert_allclose(A @ (P.T @ f), f, atol=1e-12)


def test_a_slightly_non_affine_table_is_accepted_and_its_bias_is_the_residual():
    """affine_map accepts E[Y | x] non-affine by ~1e-9 relative (documented, docs/sampling.md §10.4); the
    exact bias of estimate() at a row is then the residual / beta (7e-10 here), not the rounding bias alone."""
    d = 1e-9
    P = np.array([[0.6, 0.3, 0.1], [0.3, 0.4, 0.3], [0.1 + d, 0.3 - d, 0.6]])
    fr = FiniteRandomizer.from_probabilities(P, inputs=[0.0, 1.0, 2.0], outputs=[0.0, 1.0, 2.0])
    alpha, beta = fr.affine_map()
    mu = fr.probs @ fr.outputs
    resid = np.abs(alpha + beta * fr.inputs - mu)
    for i, row in enumerate(fr.table.tolist()):
        ey = sum(Fraction(v, ONE) * Fraction(float(y)) for v, y in zip(row, fr.outputs.tolist()))
        bias = abs((ey - Fraction(alpha)) / Fraction(beta) - i)
        assert float(bias) == pytest.approx(resid[i] / abs(beta), rel=1e-3, abs=1e-15)
    assert 5e-10 < max(resid) / abs(beta) <= 1e-9 * (1 + max(abs(mu)) + 1) / abs(beta)


@pytest.mark.parametrize("eps0", [0.5, 4.0])
def test_binary_rr_table_against_the_exact_mechanism_delta(eps0):
    """Binary RR through the table (rounded to 2^-53, within n 2^-52 in total variation of the shuffled
    outputs) against ExactShuffleAccountant's bracket of the mechanism's own delta (replace-one, worst
    case over datasets): lower form <= exact upper + slack and exact lower <= certified upper + slack."""
    from sharpdp.shuffle import ExactShuffleAccountant

    fr = FiniteRandomizer.from_probabilities(_krr(2, eps0))
    rr = RandomizedResponse(2, eps0)
    for n in (10, 400):
        ex = ExactShuffleAccountant(rr, n)
        acc = ShuffleAccountant(fr, n, adjacency="replace")
        slack = n * 2.0**-52
        for eps in (0.0, 0.2 * eps0, 0.6 * eps0, 0.95 * eps0):
            lo_ex, up_ex = ex.get_delta_bounds(eps)
            assert acc.get_delta(eps) >= lo_ex - slack, (n, eps)
            assert acc.get_delta_lower_form(eps) <= up_ex + slack, (n, eps)


def test_from_probabilities_donor_entry_moves_by_one_unit_per_bump():
    """Each bump takes its unit from the largest entry at that moment, so that entry can move by more than
    the 2 2^-b the docs first stated: b = 4, p = (1, 1e-9 x 5) gives 11/16 (error 5/16). Checked against the
    corrected bound (1 + d_j) 2^-b per entry and (m / 2 + bumps) 2^-b in total variation (docs §10.1)."""
    p = [1.0] + [1e-9] * 5
    fr = FiniteRandomizer.from_probabilities([p], bits=4)
    k = [v >> 60 for v in fr.table.tolist()[0]]
    assert k == [11, 1, 1, 1, 1, 1]
    S = sum(Fraction(v) for v in p)
    err = [abs(Fraction(kj, 16) - Fraction(pj) / S) for kj, pj in zip(k, p)]
    assert err[0] > Fraction(2, 16)  # the former per-entry claim does not hold for the donor
    assert err[0] <= Fraction(1 + 5, 16) and all(e <= Fraction(1, 16) for e in err[1:])
    assert sum(err) / 2 <= Fraction(3 + 5, 16)


def _chacha_words(key: bytes, stream: int, count: int) -> np.ndarray:
    """``count`` little-endian 64-bit words of the ChaCha20 keystream of ``key`` with the 64-bit nonce
    ``stream`` (original construction: 16-byte IV = counter 0 then the nonce, little-endian), from the
    ``cryptography`` package (an independent implementation)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

    iv = (0).to_bytes(8, "little") + stream.to_bytes(8, "little")
    enc = Cipher(algorithms.ChaCha20(key, iv), mode=None).encryptor()
    return np.frombuffer(enc.update(bytes(8 * count)), dtype="<u8")


def test_sampler_is_bit_for_bit_the_documented_inverse_cdf_on_chacha20():
    """Reimplementation of docs/sampling.md §10.2 on an independent ChaCha20: per value, word u (row
    i + [u < U_i]) then word v (smallest j < last with v < C_j, else last), stream b for the values of
    block b (4096 values); the sampler's output equals it on every value (two blocks, numeric inputs at
    rows, between rows and at the ends; threads 1 and 2)."""
    from sharpdp._rng import core_key

    table = [[2**62, 0, 2**62, 2**63 - 2**24, 2**24 - 2**10, 2**10],
             [2**61, 0, 2**61, 2**62, 2**62 + 2**61, 2**61],
             [1, 0, ONE - 4, 1, 1, 1]]
    fr = FiniteRandomizer(_obj(table), inputs=[-1.0, 0.25, 3.0])
    rng = np.random.default_rng(77)
    n = 4096 + 333
    x = rng.choice([-1.0, 0.25, 3.0, 0.0, 2.9, -0.999, 1e-300], size=n)
    key = core_key(np.random.default_rng(5))
    got1 = fr.sample(x, rng=np.random.default_rng(5), threads=1)
    got2 = fr.sample(x, rng=np.random.default_rng(5), threads=2)
    np.testing.assert_array_equal(got1, got2)
    lo, up, _ = fr._rows_of(x)
    cum = [np.cumsum(np.array(row, dtype=object)).tolist() for row in fr.table.tolist()]
    last = [max(j for j, v in enumerate(row) if v > 0) for row in fr.table.tolist()]
    want = np.empty(n, dtype=np.int64)
    for b in range(0, n, 4096):
        words = _chacha_words(key, b // 4096, 2 * min(4096, n - b)).tolist()
        for t in range(min(4096, n - b)):
            i = b + t
            u, v = words[2 * t], words[2 * t + 1]
            row = int(lo[i]) + (1 if u < int(up[i]) else 0)
            want[i] = next((j for j in range(last[row]) if v < cum[row][j]), last[row])
    np.testing.assert_array_equal(got1, want)


def test_numpy_integer_entries_in_an_object_table_are_accepted():
    """Rows built with numpy integer arithmetic (np.uint64 / np.int64 scalars in a list or object array) are
    integers: accepted, the same mechanism as Python ints; booleans and floats still refused."""
    ref = FiniteRandomizer(_obj([[2**63, 2**63], [2**62, 3 * 2**62]]))
    for rows in ([[np.uint64(2**63), np.uint64(2**63)], [np.uint64(2**62), np.uint64(3 * 2**62)]],
                 _obj([[np.uint64(2**62) * np.uint64(2), 2**63], [np.int64(2**62), np.uint64(3 * 2**62)]])):
        fr = FiniteRandomizer(rows)
        assert fr.table.tolist() == ref.table.tolist()
        assert all(type(v) is int for row in fr.table.tolist() for v in row)
    with pytest.raises(TypeError, match="table"):
        FiniteRandomizer(_obj([[np.True_, 2**64 - 1]]))
    with pytest.raises(TypeError, match="table"):
        FiniteRandomizer(_obj([[2.0**63, 2**63]]))
