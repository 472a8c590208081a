"""FiniteRandomizer: an exact dyadic table, sampled exactly and certified as sampled (docs/sampling.md §10).

References: RandomizedResponse's own accountant values (a k-RR table through FiniteRandomizer);
the exact hockey-stick divergence of the shuffled output at n = 1, 2, enumerated in rational
arithmetic over every neighbouring pair of datasets; the exact integer table (chi-square of 10^6
draws; the dominating law against the exact privacy-amplification variable, in Fractions);
the bit patterns of the messages (attacks as in test_release_attacks_messages.py).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from sharpdp.shuffle import FiniteRandomizer, GeneralRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.randomizers.finite import ONE

ADJ = ("zero_out", "replace")


def _krr_table(k: int, eps0: float) -> np.ndarray:
    rr = RandomizedResponse(k, eps0)
    P = np.full((k, k), rr.p_other)
    np.fill_diagonal(P, rr.p_keep)
    return P


def _random_table(seed: int, r: int, m: int, fine: bool) -> FiniteRandomizer:
    """Positive integer rows summing to 2^64; ``fine``: arbitrary 64-bit entries (not exact doubles)."""
    rng = np.random.default_rng(seed)
    if not fine:
        return FiniteRandomizer.from_probabilities(rng.uniform(0.2, 1.0, size=(r, m)))
    rows = []
    for _ in range(r):
        cuts = sorted(int(v) for v in rng.integers(1, 2**63, size=m - 1, dtype=np.uint64) * 2 + 1)
        row = np.diff([0] + cuts + [ONE]).tolist()
        rows.append([int(v) for v in row])
    return FiniteRandomizer(np.array(rows, dtype=object))


# ------------------------------------------------------------------ exact references
def _exact_rows(fr: FiniteRandomizer) -> list[list[Fraction]]:
    """The r rows and ⊥ (the blanket min_x P / G) as Fractions."""
    N = fr.table.tolist()
    M = [min(c) for c in zip(*N)]
    G = sum(M)
    return [[Fraction(v, ONE) for v in row] for row in N] + [[Fraction(v, G) for v in M]]


def _shuffled_law(laws: list[list[Fraction]]) -> dict:
    """Exact law of the multiset of n independent outputs (one law per user)."""
    out: dict = {}
    m = len(laws[0])
    for ys in itertools.product(range(m), repeat=len(laws)):
        p = Fraction(1)
        for law, y in zip(laws, ys):
            p *= law[y]
        if p:
            key = tuple(sorted(ys))
            out[key] = out.get(key, 0) + p
    return out


def _hockey(P: dict, Q: dict, a: Fraction) -> Fraction:
    return sum((max(p - a * Q.get(s, 0), 0) for s, p in P.items()), Fraction(0))


def _brute_delta(fr: FiniteRandomizer, n: int, eps: float, adjacency: str) -> float:
    """max over neighbouring datasets (user 1 differs, the others at every row) of H_{e^eps}, exact."""
    rows = _exact_rows(fr)
    r = fr.n_inputs
    a = Fraction(math.exp(eps))
    if adjacency == "zero_out":
        pairs = [(x, r) for x in range(r)] + [(r, x) for x in range(r)]
    else:
        pairs = [(x, y) for x in range(r) for y in range(r) if x != y]
    best = Fraction(0)
    for others in itertools.product(range(r), repeat=n - 1):
        rest = [rows[z] for z in others]
        for x, y in pairs:
            best = max(best, _hockey(_shuffled_law([rows[x]] + rest), _shuffled_law([rows[y]] + rest), a))
    return float(best)


# ------------------------------------------------------------------ accountant
@pytest.mark.parametrize("k,eps0", [(3, 2.0), (4, 0.7)])
@pytest.mark.parametrize("adjacency", ADJ)
def test_krr_table_gives_the_krr_accountant_values(k, eps0, adjacency):
    """The k-RR table (rounded to 2^-53) through FiniteRandomizer: the same figures as RandomizedResponse,
    to 1e-12 relative at n = 1, 2 (where both brackets are tight); at n = 1000 overlapping brackets and
    lower values within 1e-2 (the accountant's grid; the upper value is rounded up by the law's value_error)."""
    rr = RandomizedResponse(k, eps0)
    fr = FiniteRandomizer.from_probabilities(_krr_table(k, eps0))
    assert fr.exact_doubles
    assert fr.gamma == pytest.approx(rr.gamma, rel=1e-15)
    np.testing.assert_allclose(fr.blanket_probs, 1.0 / k, rtol=1e-15)
    assert eps0 - 1e-14 <= fr.local_epsilon <= eps0 + 1e-13
    lo, up = fr.shuffle_indices(adjacency), rr.shuffle_indices(adjacency)
    np.testing.assert_allclose(lo, up, rtol=1e-12)
    for n in (1, 2, 1000):
        for eps in (0.1, 0.5, 1.0):
            a = ShuffleAccountant(fr, n, adjacency=adjacency).get_delta_bounds(eps)
            b = ShuffleAccountant(rr, n, adjacency=adjacency).get_delta_bounds(eps)
            if n <= 2:
                assert a[1] == pytest.approx(b[1], rel=1e-12, abs=1e-300)
            assert a[0] == pytest.approx(b[0], rel=1e-2, abs=1e-30)  # both certified, each within rel_tol = 1e-2 of its upper
            assert a[0] <= b[1] * (1 + 1e-12) and b[0] <= a[1] * (1 + 1e-12)


def test_krr_table_frequency_estimator_is_krrs():
    k, eps0 = 3, 1.0
    rr = RandomizedResponse(k, eps0)
    fr = FiniteRandomizer.from_probabilities(_krr_table(k, eps0))
    assert fr.mse_single == pytest.approx(rr.mse_single, rel=1e-12)
    msg = np.array([0, 0, 1, 2, 2, 2, 1, 0, 2])
    counts = np.bincount(msg, minlength=k)
    Z = math.exp(eps0) + k - 1
    want = (counts / msg.size - 1 / Z) * Z / math.expm1(eps0)  # the paper's estimator on the exact law
    np.testing.assert_allclose(fr.estimate(msg), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed,r,m,fine", [(1, 2, 3, False), (2, 3, 2, False), (3, 2, 3, True)])
@pytest.mark.parametrize("adjacency", ADJ)
def test_accountant_brackets_the_brute_force_delta(seed, r, m, fine, adjacency):
    """n = 1, 2: lower form <= exact max hockey-stick of the shuffled outputs <= certified upper value."""
    fr = _random_table(seed, r, m, fine)
    for n in (1, 2):
        for eps in (0.0, 0.2, 0.6):
            exact = _brute_delta(fr, n, eps, adjacency)
            up = ShuffleAccountant(fr, n, adjacency=adjacency).get_delta(eps)
            lower = ShuffleAccountant(fr.lower_form(), n, adjacency=adjacency).get_delta_bounds(eps)[0]
            assert up >= exact
            assert lower <= exact * (1 + 1e-12) + 1e-15
            if n == 1:  # one user: the blanket bound is the exact divergence
                assert up == pytest.approx(exact, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("fine", [False, True])
def test_the_laws_dominate_the_exact_privacy_amplification_variable(fine):
    """Every law handed to the accountant: total mass >= 1 and, for every t, P(L_stored >= t - value_error)
    >= P(L_exact >= t), in exact arithmetic (L_exact = (P_a - e^eps P_b) / R_BG, Y ~ R_BG, from the
    integers)."""
    fr = _random_table(7, 3, 5, fine)
    assert fr.exact_doubles is (not fine)
    rows = _exact_rows(fr)
    bg = rows[-1]
    r = fr.n_inputs
    for adjacency in ADJ:
        pairs = ([(x, r) for x in range(r)] + [(r, x) for x in range(r)] if adjacency == "zero_out"
                 else [(x, y) for x in range(r) for y in range(r) if x != y])
        for eps in (0.0, 0.4, 3.0):
            laws = [l for _, l in fr.privacy_amplification_laws(eps, adjacency)]
            a = Fraction(math.exp(eps))
            for x, y in pairs:
                exact = [((rows[x][j] - a * rows[y][j]) / bg[j], bg[j]) for j in range(len(bg))]
                ok = False
                for law in laws:
                    vs = [Fraction(float(v)) for v in law.values]
                    ps = [Fraction(float(p)) for p in law.probs]
                    err = Fraction(law.value_error)
                    if sum(ps) < 1:
                        continue
                    if all(sum(p for v, p in zip(vs, ps) if v + err >= t) >= sum(q for u, q in exact if u >= t)
                           for t, _ in exact):
                        ok = True
                        break
                assert ok, (adjacency, eps, x, y)


def test_nonpositive_laws_give_zero():
    """Replace beyond eps0 (and identical rows at eps > 0): every atom plus its error bound is <= 0, and
    the accountant's value is exactly 0."""
    fr = FiniteRandomizer.from_probabilities(_krr_table(3, 1.0))
    eps = fr.local_epsilon + 1e-12
    for _, law in fr.privacy_amplification_laws(eps, "replace"):
        assert law.values.max() + law.value_error <= 0.0
    assert ShuffleAccountant(fr, 50, "replace").get_delta(eps) == 0.0
    assert ShuffleAccountant(fr, 50, "zero_out").get_delta(eps) > 0.0
    same = FiniteRandomizer(np.array([[2**62, 3 * 2**62]] * 2, dtype=object))
    (g, law), = same.privacy_amplification_laws(1e-10, "replace")
    assert law.values.max() + law.value_error <= 0.0 and g == 1.0
    assert ShuffleAccountant(same, 10, "replace").get_delta(1e-10) == 0.0


# ------------------------------------------------------------------ rounding of a float table
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6), min_size=1, max_size=3),
       st.integers(0, 3))
def test_from_probabilities_rounds_to_an_exact_nearby_table(rows, zero_col):
    m = min(len(r) for r in rows)
    P = np.array([r[:m] for r in rows]) + 1e-3
    P[:, zero_col % m] = 0.0
    fr = FiniteRandomizer.from_probabilities(P)
    N = fr.table
    for i, row in enumerate(N.tolist()):
        assert sum(row) == ONE
        S = sum(Fraction(float(v)) for v in P[i])
        for j, v in enumerate(row):
            assert v % 2**11 == 0
            assert (v == 0) == (P[i, j] == 0.0)
            assert abs(Fraction(v, ONE) - Fraction(float(P[i, j])) / S) <= Fraction(2, 2**53)
    assert fr.exact_doubles
    np.testing.assert_array_equal(fr.probs, np.array([[float(v) / 2.0**64 for v in row] for row in N.tolist()]))


def test_from_probabilities_is_deterministic_and_breaks_ties_by_index():
    P = np.full((1, 3), 1.0)  # 2^53 = 3 q + 2: the two remainder units go to the first two entries
    N = FiniteRandomizer.from_probabilities(P).table.tolist()[0]
    q = 2**53 // 3
    assert N == [(q + 1) << 11, (q + 1) << 11, q << 11]
    assert FiniteRandomizer.from_probabilities(P).table.tolist()[0] == N


# ------------------------------------------------------------------ the sampler
def _law_of_row(fr, row):
    return np.array([v / 2.0**64 for v in fr.table.tolist()[row]])


def test_sampler_frequencies_match_the_table():
    """10^6 draws per input (a row, and x between rows = the mixture with p = f) against the exact table:
    chi-square with a fixed seed; outputs of mass 0 never occur."""
    table = [[2**62, 0, 2**62, 2**63 - 2**24, 2**24 - 2**10, 2**10],
             [2**61, 0, 2**61, 2**62, 2**62 + 2**61, 2**61]]
    fr = FiniteRandomizer(np.array(table, dtype=object), inputs=[0.0, 1.0])
    n = 1_000_000
    for x, p in ((0.0, 0.0), (1.0, 1.0), (0.25, 0.25)):
        y = fr.sample(np.full(n, x), rng=11, threads=2).astype(np.int64)
        assert np.all(y != 1)
        law = (1 - p) * _law_of_row(fr, 0) + p * _law_of_row(fr, 1)
        counts = np.bincount(y, minlength=6)
        keep = law * n >= 5
        assert counts[~keep].sum() == 0  # expected 2^-40 n = 1e-6 here
        assert chisquare(counts[keep], law[keep] * n / law[keep].sum() * counts[keep].sum() / n).pvalue > 1e-4


def test_sampler_is_reproducible_and_thread_independent():
    fr = _random_table(5, 3, 7, False)
    x = np.random.default_rng(0).integers(0, 3, size=3 * 4096 + 17)
    a = fr.sample(x, rng=123, threads=1)
    b = fr.sample(x, rng=123, threads=2)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.int64 and a.shape == x.shape
    assert not np.array_equal(a, fr.sample(x, rng=124))
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    np.testing.assert_array_equal(fr.sample(x, rng=g1), fr.sample(x, rng=g2))
    assert fr.sample(x).shape == x.shape  # rng=None: OS entropy


def test_numeric_inputs_are_rounded_without_bias():
    """E[message] is affine in x between rows; the mean estimate of 4 10^5 users at x = 0.3 is within 5 SE."""
    fr = FiniteRandomizer.from_probabilities([[0.5, 0.3, 0.2], [0.1, 0.3, 0.6]], inputs=[-1.0, 1.0],
                                             outputs=[-2.0, 0.5, 2.0])
    alpha, beta = fr.affine_map()
    mu = fr.probs @ fr.outputs
    assert alpha - beta == pytest.approx(mu[0], rel=1e-14) and alpha + beta == pytest.approx(mu[1], rel=1e-14)
    n = 400_000
    est = fr.estimate(fr.sample(np.full(n, 0.3), rng=3))[0]
    assert abs(est - 0.3) < 5 * math.sqrt(fr.mse_single / n)
    # the worst-case variance is at the mixture, above both rows' own
    assert fr.mse_single > max(np.max(fr.probs @ fr.outputs**2 - mu**2) / beta**2, 0)


# ------------------------------------------------------------------ attacks on the messages
def _bits(y):
    return np.ascontiguousarray(y, dtype=np.float64).view(np.uint64)


def test_messages_are_exactly_the_table_outputs_no_low_bit_channel():
    """x = -1 vs x = 1, 10^6 messages each: every message is bit for bit one of the outputs, and the
    lowest mantissa bit and the low 8 bits follow their laws under the exact table within 5 SE per bin
    (so the distinguishing advantage on them is the table's own)."""
    outputs = np.array([-3.141592653589793, -1 / 3, 0.1, 0.7, 2.718281828459045])
    fr = FiniteRandomizer.from_probabilities([[0.3, 0.25, 0.2, 0.15, 0.1], [0.1, 0.15, 0.2, 0.25, 0.3]],
                                             inputs=[-1.0, 1.0], outputs=outputs)
    allowed = set(_bits(outputs).tolist())
    n = 1_000_000
    for row, x in enumerate((-1.0, 1.0)):
        y = fr.sample(np.full(n, x), rng=20 + row)
        assert set(np.unique(_bits(y)).tolist()) <= allowed
        law = _law_of_row(fr, row)
        for mask in (1, 0xFF):
            stat = _bits(y) & np.uint64(mask)
            ref = _bits(outputs) & np.uint64(mask)
            for v in np.unique(ref):
                p = law[ref == v].sum()
                got = np.mean(stat == v)
                assert abs(got - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_the_finite_set_check_catches_a_float_sampler():
    """The check of the previous test fails on GeneralRandomizer.sample (floats off any finite set)."""
    from numba import njit

    @njit
    def dens(y, x):
        return 0.5 + 0.25 * x * y

    gr = GeneralRandomizer(dens, [-1.0, 1.0], (-1.0, 1.0), cells=16)
    fr = gr.discretize()
    y = gr.sample(np.full(2000, 1.0), rng=1)
    assert not set(_bits(y).tolist()) <= set(_bits(fr.outputs).tolist())
    z = fr.sample(np.full(2000, 1.0), rng=1)
    assert set(_bits(z).tolist()) <= set(_bits(fr.outputs).tolist())


# ------------------------------------------------------------------ the route from GeneralRandomizer
def _gaussian_mixture():
    from numba import njit

    c = 1 / math.sqrt(2 * math.pi)

    @njit
    def dens(y, x):
        return 0.5 * c * math.exp(-0.5 * y * y) + 0.5 * c * math.exp(-0.5 * (y - x) ** 2)

    @njit
    def blank(y):
        return c * math.exp(-0.5 * y * y)

    return GeneralRandomizer(dens, [-1.0, 1.0], (-9.0, 9.0), blanket=blank, gamma=0.5, cells=256,
                             log_curvature=1.0)


def test_discretize_gives_the_cell_masses_as_an_exact_table():
    gr = _gaussian_mixture()
    fr = gr.discretize()
    assert fr.floating_point_safe and fr.sampler_tv == 0.0 and not gr.floating_point_safe
    assert fr.n_inputs == 2 and fr.n_outputs == 256
    np.testing.assert_allclose(fr.outputs, 0.5 * (gr.edges[1:] + gr.edges[:-1]))
    # row 1 = cell masses of 0.5 N(0,1) + 0.5 N(1,1) on [-9, 9] (closed form), renormalised
    from scipy.special import ndtr

    e = gr.edges
    def cell(a, b):  # Phi(b) - Phi(a) without cancellation in the upper tail
        return np.where(b <= 0, ndtr(b) - ndtr(a), ndtr(-a) - ndtr(-b))

    ref = 0.5 * cell(e[:-1], e[1:]) + 0.5 * cell(e[:-1] - 1, e[1:] - 1)
    # (far-tail cells below one unit 2^-53 carry exactly one unit: docs/sampling.md §10.1)
    np.testing.assert_allclose(fr.probs[1], ref / ref.sum(), rtol=1e-9, atol=2.0**-52)
    assert np.all(fr.probs >= 2.0**-53)
    # the discretised mechanism's mean map is the continuous one's up to the binning (slope 1/2)
    alpha, beta = fr.affine_map()
    assert beta == pytest.approx(0.5, rel=1e-4) and abs(alpha) < 1e-12
    # a finer row grid: inputs between -1 and 1 are rows too, less rounding variance
    fine = gr.discretize(inputs=np.linspace(-1, 1, 5))
    assert fine.n_inputs == 5 and fine.mse_single < fr.mse_single
    with pytest.raises(ValueError, match="edges"):
        gr.discretize(edges=[-9.0, 0.0, 8.0])
    coarse = gr.discretize(edges=np.linspace(-9, 9, 19))
    assert coarse.n_outputs == 18
    # granularity 2^-64: far tails closer to the cell masses, not exact doubles, same certified figures
    f64 = gr.discretize(bits=64)
    assert not f64.exact_doubles and sum(f64.table.tolist()[1]) == ONE
    np.testing.assert_allclose(f64.probs[1], ref / ref.sum(), rtol=1e-9, atol=2.0**-63)
    for adjacency in ADJ:
        a = ShuffleAccountant(f64, 1, adjacency).get_delta(0.5)
        b = ShuffleAccountant(fr, 1, adjacency).get_delta(0.5)
        assert a == pytest.approx(b, rel=1e-9)


def test_discretized_round_replace_is_close_to_the_continuous_one():
    """Replace-one at n = 100: the discretised mechanism's certified delta is within 10 % of the
    continuous certified one (the table in docs/sampling.md §10.5)."""
    gr = _gaussian_mixture()
    fr = gr.discretize()
    for eps in (0.5, 1.0):
        d_fin = ShuffleAccountant(fr, 100, "replace").get_delta(eps)
        d_con = ShuffleAccountant(gr, 100, "replace").get_delta(eps)
        assert 0.5 * d_con < d_fin < 1.1 * d_con


# ------------------------------------------------------------------ interop and errors
def test_opendp_route_accepts_a_finite_randomizer():
    dp = pytest.importorskip("opendp.prelude")
    from sharpdp.interop.opendp import make_shuffled_round

    fr = FiniteRandomizer.from_probabilities(_krr_table(3, 1.5))
    acc = ShuffleAccountant(fr, 30, "replace")
    dom = dp.vector_domain(dp.atom_domain(bounds=(0, 2), T="i64"), size=30)
    meas = make_shuffled_round(acc, dom, rng=4)
    out = meas([0, 1, 2] * 10)
    assert out.shape == (30,) and set(np.unique(out).tolist()) <= {0, 1, 2}
    for eps in (0.2, 0.8):
        assert meas.map(1).delta(eps) >= acc.get_delta(eps)
    # the default input domain: the row indices (categorical) or [x_1, x_r] (numeric inputs)
    assert str(make_shuffled_round(acc, rng=4).input_domain) == str(dom)
    num = ShuffleAccountant(FiniteRandomizer.from_probabilities(_krr_table(3, 1.5), inputs=[-1.0, 0.0, 2.0]), 30,
                            "replace")
    out = make_shuffled_round(num, rng=4)(np.linspace(-1.0, 2.0, 30))
    assert out.shape == (30,) and set(np.unique(out).tolist()) <= {0, 1, 2}
    with pytest.raises(Exception):
        make_shuffled_round(num, rng=4)(np.full(30, 3.0))  # outside [x_1, x_r]


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(table=[[1, 2]]), ValueError, "sums to"),
    (dict(table=[[ONE + 1, -1]]), ValueError, ">= 0"),
    (dict(table=[[0.5, 0.5]]), TypeError, "table"),
    (dict(table=[[ONE, 0], [2**63, 2**63]]), ValueError, "probability 0"),
    (dict(table=[1, 2]), ValueError, "table"),
    (dict(table=[[2**63, 2**63]] * 2, inputs=[1.0, 0.0]), ValueError, "inputs"),
    (dict(table=[[2**63, 2**63]] * 2, outputs=[1.0]), ValueError, "outputs"),
])
def test_bad_tables_are_refused(kwargs, exc, match):
    table = kwargs.pop("table")
    with pytest.raises(exc, match=match):
        FiniteRandomizer(np.array(table, dtype=object), **kwargs)


def test_bad_calls_name_the_parameter():
    fr = FiniteRandomizer.from_probabilities([[0.6, 0.4], [0.4, 0.6]], inputs=[0.0, 1.0], outputs=[0.0, 1.0])
    cat = FiniteRandomizer.from_probabilities([[0.6, 0.4], [0.4, 0.6]])
    one = FiniteRandomizer.from_probabilities([[0.6, 0.4]])
    with pytest.raises(ValueError, match="x must lie"):
        fr.sample([2.0])
    with pytest.raises(ValueError, match="x must"):
        fr.sample(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="x"):
        cat.sample([2])
    with pytest.raises(ValueError, match="x"):
        cat.sample([0.5])
    with pytest.raises(ValueError, match="threads"):
        fr.sample([0.5], threads=0)
    with pytest.raises(ValueError, match="replace"):
        one.privacy_amplification_laws(0.5, "replace")
    with pytest.raises(ValueError, match="epsilon"):
        fr.privacy_amplification_laws(-1.0)
    with pytest.raises(ValueError, match="adjacency"):
        fr.privacy_amplification_laws(0.5, "bogus")
    with pytest.raises(ValueError, match="probs"):
        FiniteRandomizer.from_probabilities([[0.0, 0.0]])
    with pytest.raises(ValueError, match="probs"):
        FiniteRandomizer.from_probabilities([[-0.1, 1.0]])
    with pytest.raises(ValueError, match="outputs"):
        cat.affine_map()
    with pytest.raises(ValueError, match="messages"):
        cat.estimate([5])
