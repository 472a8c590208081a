"""Review rev41b (session 41): attack on docs/accountant.md §8.21 (``zero_moments.zero_upper`` / ``zero_lower``).

Independent references:
- k-RR: the exact delta(0) of the shuffled protocol = the total variation between the histograms of the n reports of
  two neighbouring datasets, maximised over all the other users' inputs (exhaustive), built by convolution of the
  reports' pmfs (no sharpdp code). Float error: each histogram probability is a sum of products with relative error
  <= 4 n u, so the TV is within 1e-12 absolute here; the checks allow 1e-12.
- heavy laws (Gaussian, BMG): fresh certified brackets of ``get_delta_bounds(0)`` at rel_tol 1e-3 (zero_upper must be
  >= Lo, zero_lower must be <= Up).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import epsilon_route
from sharpdp.shuffle.accountant.zero_moments import zero_lower, zero_upper
from sharpdp.shuffle.round_cache import clear_caches


def _report(k: int, eps0: float, x: int | None) -> np.ndarray:
    """k-RR's report pmf for input x (None: bot, whose report is the blanket, uniform on k)."""
    if x is None:
        return np.full(k, 1.0 / k)
    q = np.full(k, 1.0 / (math.exp(eps0) + k - 1))
    q[x] = math.exp(eps0) / (math.exp(eps0) + k - 1)
    return q


def _add(dist: np.ndarray, q: np.ndarray) -> np.ndarray:
    """One more user with report pmf q: dist is indexed by the counts of reports 0 .. k-2 (the last is implied)."""
    k = len(q)
    out = q[k - 1] * dist
    for j in range(k - 1):
        sh = np.zeros_like(dist)
        idx_src = [slice(None)] * (k - 1)
        idx_dst = [slice(None)] * (k - 1)
        idx_src[j], idx_dst[j] = slice(0, -1), slice(1, None)
        sh[tuple(idx_dst)] = dist[tuple(idx_src)]
        out = out + q[j] * sh
    return out


def _compositions(total: int, parts: int):
    if parts == 1:
        yield (total,)
        return
    for c in range(total + 1):
        for rest in _compositions(total - c, parts - 1):
            yield (c, *rest)


def _exact_delta0(k: int, eps0: float, n: int, adjacency: str) -> float:
    """max over the other n - 1 users' inputs of TV(histogram | victim 0, histogram | victim 1 or bot)."""
    other = None if adjacency == "zero_out" else 1
    rows = np.array([_report(k, eps0, x) for x in range(k)])
    a_row, b_row = _report(k, eps0, 0), _report(k, eps0, other)
    return max(_tv(_add(dist, a_row), _add(dist, b_row)) for dist in _others(rows, n))


def _others(rows: np.ndarray, n: int):
    """The histogram of the other n - 1 users' reports for every assignment of inputs (rows: report pmfs)."""
    r, m = rows.shape
    for counts in _compositions(n - 1, r):
        dist = np.zeros((n + 1,) * (m - 1))
        dist[(0,) * (m - 1)] = 1.0
        for x, c in enumerate(counts):
            for _ in range(c):
                dist = _add(dist, rows[x])
        yield dist


def _tv(a: np.ndarray, b: np.ndarray) -> float:
    return 0.5 * math.fsum(np.abs(a - b).ravel().tolist())


def test_reference_sanity():
    """The reference at n = 1 is the single report's TV: (e^eps0 - 1) / (e^eps0 + k - 1) (replace), and for bot
    (e^eps0 - 1)(k - 1) / (k (e^eps0 + k - 1))."""
    e = math.exp(1.0)
    assert abs(_exact_delta0(3, 1.0, 1, "replace") - (e - 1) / (e + 2)) < 1e-15
    assert abs(_exact_delta0(3, 1.0, 1, "zero_out") - (e - 1) * 2 / (3 * (e + 2))) < 1e-15


@pytest.mark.parametrize("k, eps0, ns", [(2, 1.0, range(1, 21)), (2, 3.0, (1, 2, 5, 12, 20)),
                                         (3, 0.5, (1, 2, 4, 8, 12)), (4, 2.0, (1, 2, 3, 6))])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_krr_zero_upper_above_true_delta0(k, eps0, ns, adjacency):
    """zero_upper >= the exact shuffled delta(0) (exhaustive reference) and >= the engine's certified lower value;
    zero_lower <= the engine's certified upper value (which is >= D_up(0))."""
    for n in ns:
        clear_caches()
        acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency, rel_tol=1e-3)
        ref = _exact_delta0(k, eps0, n, adjacency)
        z = zero_upper(acc)
        lo, up = acc.get_delta_bounds(0.0)
        assert z is not None
        assert z >= ref - 1e-12, (k, eps0, n, adjacency, z, ref)
        assert z >= lo, (k, eps0, n, adjacency, z, lo)
        assert ref <= up + 1e-12, (k, eps0, n, adjacency, ref, up)  # (the reference is what the engine bounds)
        assert zero_lower(acc) <= up, (k, eps0, n, adjacency, zero_lower(acc), up)


@pytest.mark.parametrize("make, adjacency", [
    (lambda: GaussianRandomizer(1.0, 1), "zero_out"),
    (lambda: GaussianRandomizer(0.3, 1), "zero_out"),
    (lambda: BlanketMixedGaussian(0.171, 0.78, 1), "zero_out"),
    (lambda: BlanketMixedGaussian(0.171, 0.78, 1), "replace"),
    (lambda: BlanketMixedGaussian(0.05, 0.4, 1), "replace"),
])
@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_heavy_small_n_brackets(make, adjacency, n):
    """Heavy laws at small n (large fourth moment): Lo(0) <= zero_upper and zero_lower <= Up(0), rel_tol 1e-3."""
    clear_caches()
    acc = ShuffleAccountant(make(), n, adjacency, rel_tol=1e-3)
    z, zl = zero_upper(acc), zero_lower(acc)
    lo, up = acc.get_delta_bounds(0.0)
    assert z is not None and z >= lo, (n, adjacency, z, lo)
    assert zl <= up, (n, adjacency, zl, up)


def test_replace_through_bot_does_not_fire(monkeypatch):
    """GaussianRandomizer has no replace laws: the accountant goes through bot (``_bottom``) and the rule must not
    run there (§8.21: 'It is formed only where get_delta is the direct bound')."""
    called = []
    monkeypatch.setattr(epsilon_route, "zero_upper", lambda acc: called.append(acc) or zero_upper(acc))
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**4, "replace")
    assert acc._bottom is not None
    eps = acc.get_epsilon(0.5)
    assert not any(a is acc for a in called)
    assert eps >= 0.0 and acc.get_delta(eps) <= 0.5


def _sample_law(law, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of L from the law's parts read as measures (atoms: values and masses; a lognormal part: weight w times the
    N(0, 1) density on (v_lo, v_hi), L = a + G e^{r V - r^2/2} - S e^{-r V - r^2/2}), by inverse-cdf sampling of the
    truncated normal (scipy); independent of zero_moments' closed forms."""
    from scipy.stats import norm, truncnorm

    parts = getattr(law, "parts", None) or [law]
    masses = []
    for p in parts:
        at = p.atoms()
        masses.append(float(np.sum(at[1])) if at is not None else
                      float(p.weight) * float(norm.cdf(float(p._vhi)) - norm.cdf(float(p._vlo))))
    assert abs(sum(masses) - 1.0) < 1e-9
    which = rng.choice(len(parts), size=size, p=np.asarray(masses) / sum(masses))
    out = np.empty(size)
    for i, p in enumerate(parts):
        m = which == i
        at = p.atoms()
        if at is not None:
            v, q = np.asarray(at[0], float), np.asarray(at[1], float)
            out[m] = rng.choice(v, size=int(m.sum()), p=q / q.sum())
        else:
            a, G, S, r = float(p.a), float(p._G), float(p._S), float(p.r)
            V = truncnorm.rvs(float(p._vlo), float(p._vhi), size=int(m.sum()), random_state=rng)
            out[m] = a + G * np.exp(r * V - r * r / 2) - S * np.exp(-r * V - r * r / 2)
    return out


@pytest.mark.parametrize("make, adjacency", [(lambda: GaussianRandomizer(1.0, 1), "zero_out"),
                                             (lambda: BlanketMixedGaussian(0.171, 0.78, 1), "replace"),
                                             (lambda: BlanketMixedGaussian(0.3, 0.6, 1), "zero_out")])
@pytest.mark.parametrize("n, reps", [(1, 200_000), (10, 40_000), (300, 4_000)])
def test_moment_bounds_against_monte_carlo(make, adjacency, n, reps):
    """D_up(0) = E[S_+] / (n gamma), S = sum of n B_i L_i, by Monte Carlo (seeded; reps sums; 6 standard errors):
    moment_upper >= MC - 6 se and moment_lower <= MC + 6 se for every law listed at 0."""
    from sharpdp.shuffle.accountant.zero_moments import moment_lower, moment_upper
    from sharpdp.shuffle.laws import laws_for

    rng = np.random.default_rng(41)
    for gamma, law in laws_for(make(), 0.0, adjacency):
        gamma = float(gamma)
        b = rng.random((reps, n)) < gamma
        x = np.zeros((reps, n))
        x[b] = _sample_law(law, int(b.sum()), rng)
        s = np.maximum(x.sum(axis=1), 0.0) / (n * gamma)
        mc, se = float(s.mean()), float(s.std(ddof=1)) / math.sqrt(reps)
        u, lo = moment_upper(law, gamma, n), moment_lower(law, gamma, n)
        assert u is not None and u >= mc - 6 * se, (n, adjacency, u, mc, se)
        assert lo <= mc + 6 * se, (n, adjacency, lo, mc, se)


def test_gauss_law1_monte_carlo_n1e4():
    """GaussianRandomizer(1, 1), zero_out, n = 1e4 (the law with the heavy lower tail of §8.21's n = 1e8 cell): Monte
    Carlo of E[S_+] / (n gamma) per law (seeded, 1200 sums, 6 standard errors) below moment_upper, and the fresh
    certified lower value at rel_tol 1e-3 below zero_upper; D_up(0) scales as n^(-1/2) at mu = 0, as the bound does."""
    from sharpdp.shuffle.accountant.zero_moments import moment_upper
    from sharpdp.shuffle.laws import laws_for

    rng, n, reps = np.random.default_rng(7), 10**4, 1200
    for gamma, law in laws_for(GaussianRandomizer(1.0, 1), 0.0, "zero_out"):
        gamma = float(gamma)
        sums = np.empty(reps)
        for i in range(reps):
            k = int(rng.binomial(n, gamma))
            sums[i] = _sample_law(law, k, rng).sum()
        s = np.maximum(sums, 0.0) / (n * gamma)
        mc, se = float(s.mean()), float(s.std(ddof=1)) / math.sqrt(reps)
        u = moment_upper(law, gamma, n)
        assert u is not None and u >= mc - 6 * se and u <= 1.6 * (mc + 6 * se), (u, mc, se)
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), n, "zero_out", rel_tol=1e-3)
    lo, up = acc.get_delta_bounds(0.0)
    z = zero_upper(acc)
    assert z is not None and lo <= z


class _Surcharged:
    """k-RR's laws plus a fixed surcharge s (the protocol's ``privacy_amplification_surcharge``)."""

    def __init__(self, base, s: float) -> None:
        self.base, self.s = base, s

    def privacy_amplification_laws(self, epsilon, adjacency):
        return self.base.privacy_amplification_laws(epsilon, adjacency)

    def privacy_amplification_surcharge(self, epsilon, adjacency="zero_out"):
        return self.s


@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_surcharge_is_added(adjacency):
    """zero_upper carries the surcharge (z >= bare + s): at delta = exact delta(0) + s / 2 the answer is not 0 (the
    accountant's value at 0 is >= exact delta(0) + s), and get_delta(answer) <= delta."""
    n, s = 12, 0.02
    bare = zero_upper(ShuffleAccountant(RandomizedResponse(2, 1.0), n, adjacency))
    acc = ShuffleAccountant(_Surcharged(RandomizedResponse(2, 1.0), s), n, adjacency)
    z = zero_upper(acc)
    assert bare is not None and z is not None and z >= bare + s
    ref = _exact_delta0(2, 1.0, n, adjacency)
    delta = ref + s / 2  # (< D_up(0) + s <= the engine's get_delta(0); the rule must not fire: z >= ref + s)
    assert delta < z
    eps = acc.get_epsilon(delta)
    assert eps > 0.0 and acc.get_delta(eps) <= delta


class _Atoms:
    """A bare atom law (values v, masses p, value_error ve) for moment_upper / moment_lower."""

    def __init__(self, v, p, ve: float = 0.0) -> None:
        self.v, self.p, self.value_error = np.asarray(v, float), np.asarray(p, float), ve

    def atoms(self):
        return self.v, self.p


def _dup0(v, p, gamma: float, n: int) -> float:
    """E[S_+] / (n gamma) by enumeration of the atoms' counts (multinomial, two atoms here)."""
    tot = 0.0
    for k in range(n + 1):  # k users present
        pk = math.comb(n, k) * gamma ** k * (1 - gamma) ** (n - k)
        for j in range(k + 1):  # j of them at v[0]
            s = j * v[0] + (k - j) * v[1]
            tot += pk * math.comb(k, j) * p[0] ** j * p[1] ** (k - j) * max(s, 0.0)
    return tot / (n * gamma)


@pytest.mark.parametrize("v, p", [([-5.0, 1.0], [0.5, 0.5]), ([-1e-3, 30.0], [0.999, 0.001]),
                                  ([-1e-160, 1e-160], [0.5, 0.5]), ([-3.0, 2.0], [0.4, 0.6]),
                                  ([-100.0, 0.01], [0.001, 0.999])])
@pytest.mark.parametrize("n, gamma", [(1, 1.0), (2, 0.3), (7, 0.9), (25, 0.05)])
def test_moment_bounds_edge_laws(v, p, n, gamma):
    """Edge laws (mean far below 0, a rare large positive atom, a tiny second moment, value_error): moment_upper >=
    the exact D_up(0) (enumeration; the reference's float error is within 1e-12 relative) and moment_lower <= it."""
    from sharpdp.shuffle.accountant.zero_moments import moment_lower, moment_upper

    exact = _dup0(v, p, gamma, n)
    for ve in (0.0, 1e-3 * max(abs(x) for x in v)):
        law = _Atoms(v, p, ve)
        u, lo = moment_upper(law, gamma, n), moment_lower(law, gamma, n)
        assert u is not None and u >= exact * (1 - 1e-12), (n, gamma, u, exact)
        assert lo <= exact * (1 + 1e-12) + 1e-300, (n, gamma, lo, exact)
        # the law moved by ve per value: the bound of the stored law must cover the moved law too
        moved = _dup0([v[0] + ve, v[1] + ve], p, gamma, n)
        assert u >= moved * (1 - 1e-12), (n, gamma, ve, u, moved)


def test_gauss_1e8_cell_against_certified_lower():
    """§8.21's cell GaussianRandomizer(1, 1), n = 1e8: zero_upper (3.589e-4, both laws) >= a fresh certified lower value
    of get_delta(0) (2.847e-4 at rel_tol 0.01, 12 s CPU: the engine's bracket [2.847e-4, 5.306e-4]); zero_lower <= its
    upper value."""
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**8)
    z, zl = zero_upper(acc), zero_lower(acc)
    lo, up = acc.get_delta_bounds(0.0)
    assert z is not None and lo <= z and zl <= up


def _exact_delta0_table(rows: np.ndarray, n: int) -> float:
    """Replace adjacency, any finite randomizer (rows: report pmfs): max over the victim's pair (i, j) and the other
    n - 1 users' inputs of the TV between the histograms (exhaustive, as :func:`_exact_delta0`)."""
    r = rows.shape[0]
    pairs = [(i, j) for i in range(r) for j in range(r) if i != j]
    return max(_tv(_add(dist, rows[i]), _add(dist, rows[j])) for dist in _others(rows, n) for i, j in pairs)


@pytest.mark.parametrize("table", [[[5, 1, 2], [1, 4, 3], [2, 2, 4]], [[9, 1], [2, 8]], [[1, 1, 6], [3, 3, 2]]])
@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_finite_table_replace_above_true_delta0(table, n):
    """FiniteRandomizer (its laws carry value_error), replace: zero_upper >= the exact shuffled delta(0)."""
    from sharpdp.shuffle import FiniteRandomizer

    rows = np.asarray(table, float)
    fr = FiniteRandomizer.from_probabilities(rows / rows.sum(axis=1, keepdims=True))
    rows = np.asarray([[v / 2.0 ** 64 for v in row] for row in fr._N])  # (the certified table, units of 2^-64)
    clear_caches()
    acc = ShuffleAccountant(fr, n, "replace", rel_tol=1e-3)
    ref = _exact_delta0_table(rows, n)
    z = zero_upper(acc)
    lo, up = acc.get_delta_bounds(0.0)
    assert ref <= up + 1e-12, (table, n, ref, up)
    assert z is None or (z >= ref - 1e-12 and z >= lo), (table, n, z, ref, lo)


@pytest.mark.parametrize("eps0", [20.0, 37.0, 50.0, 300.0])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
def test_krr_large_eps0(eps0, adjacency):
    """k-RR at large eps0 (delta(0) within 1e-16 of 1 or 1/2; the fourth-moment lower value nearly exact at n = 1):
    zero_lower <= the exact delta(0) <= zero_upper and zero_lower <= the engine's upper value."""
    for n in (1, 2, 5):
        clear_caches()
        acc = ShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency, rel_tol=1e-3)
        ref, (lo, up) = _exact_delta0(2, eps0, n, adjacency), acc.get_delta_bounds(0.0)
        z, zl = zero_upper(acc), zero_lower(acc)
        assert z is not None and z >= ref - 1e-12 and z >= lo
        assert zl <= ref + 1e-12 and zl <= up, (eps0, n, adjacency, zl, ref, up)
