"""Review rev42 (session 42): attack on docs/accountant.md §8.21 (session 41's ``zero_moments.zero_upper`` /
``zero_lower``, ``limits.EPS41B_ZERO_MOMENTS``, ``EPS41B_ZERO_LOWER``).

Independent references (none reads the library's laws):
- tests/_rev42_zero_ref.py: the BMG's and the Gaussian randomizer's laws at eps = 0 written from the mechanisms; D_up(0)
  by scipy quadrature at n = 1, 2 (relative accuracy ~1e-10, the margins checked are >= 1e-3) and by Monte Carlo with
  the blanket's Y drawn directly (6 standard errors) at n = 3 ... 1e4;
- mpmath quadrature (30 digits) of a lognormal part's partial moments E[L^k; I], k = 1, 2, 4, against the closed
  forms' brackets (a hypothesis property over a, G, S, r, the truncation and the weight);
- k-RR: the exact delta(0) of the shuffled histograms (exhaustive convolution, tests/test_review_rev41b_zero.py's
  reference is re-derived here at gamma near 1 and with atoms at 0);
- get_epsilon at delta just above / below zero_upper: the answer 0 only where the exact D_up(0) <= delta, and a positive
  answer certified by a fresh accountant's get_delta.
Every assertion states the certification claim: it fails if the claim is broken."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpmath import mp, mpf

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, LognormalLaw, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import zero_moments as zm
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.round_cache import clear_caches

import _rev42_zero_ref as ref


def _make(kind: str, par: tuple):
    if kind == "bmg":
        return BlanketMixedGaussian(par[0], par[1], 1)
    return GaussianRandomizer(par[0], 1)


def _mine(kind: str, par: tuple, adjacency: str):
    return ref.bmg_laws(*par, adjacency) if kind == "bmg" else ref.gauss_laws(*par)


EDGE = [("bmg", (0.171, 0.78), "zero_out"), ("bmg", (0.171, 0.78), "replace"), ("bmg", (0.99, 0.5), "replace"),
        ("bmg", (0.999, 2.0), "zero_out"), ("bmg", (0.01, 30.0), "replace"), ("bmg", (0.5, 0.12), "zero_out"),
        ("bmg", (0.3, 0.095), "replace"), ("g", (1.0,), "zero_out"), ("g", (0.3,), "zero_out"),
        ("g", (4.6,), "zero_out"), ("g", (30.0,), "zero_out")]


@pytest.mark.parametrize("kind, par, adjacency", EDGE)
@pytest.mark.parametrize("n", [1, 2])
def test_quadrature_small_n(kind, par, adjacency, n):
    """n = 1, 2: moment_upper >= the quadrature's D_up(0) of the worst listed pair (the max over the laws written from
    the mechanism), and every law's moment_lower <= that max; the laws' gamma is the mechanism's."""
    g, mine = _mine(kind, par, adjacency)
    lib = laws_for(_make(kind, par), 0.0, adjacency)
    assert all(abs(float(gg) - g) <= 1e-12 * g for gg, _ in lib)
    exact = max(ref.dup0_quad(law, g, n) for law in mine)
    ups = [zm.moment_upper(law, float(gg), n) for gg, law in lib]
    los = [zm.moment_lower(law, float(gg), n) for gg, law in lib]
    assert all(u is not None for u in ups) or par[-1] < 1 / 26.4  # (r^2 >= 700: no value, the search decides)
    up = max((u for u in ups if u is not None), default=math.inf)
    assert up >= exact * (1 + 1e-6), (kind, par, adjacency, n, up, exact)
    assert max(los) <= exact * (1 - 1e-6), (kind, par, adjacency, n, max(los), exact)


MC = [("bmg", (0.171, 0.78), "replace", 3, 200_000), ("bmg", (0.171, 0.78), "zero_out", 50, 40_000),
      ("bmg", (0.95, 4.6), "zero_out", 1000, 4_000), ("bmg", (0.0389, 0.529), "zero_out", 300, 10_000),
      ("bmg", (0.01, 30.0), "replace", 10_000, 2_000), ("g", (1.0,), "zero_out", 3, 200_000),
      ("g", (1.0,), "zero_out", 2000, 3_000), ("g", (4.6,), "zero_out", 10_000, 1_500),
      ("g", (0.5,), "zero_out", 500, 10_000)]


@pytest.mark.parametrize("kind, par, adjacency, n, reps", MC)
def test_monte_carlo_larger_n(kind, par, adjacency, n, reps):
    """n = 3 ... 1e4: zero_upper >= MC - 6 se (the rule's claim: an upper value of D_up(0) plus the charges) and
    zero_lower <= MC + 6 se, Y drawn from the mechanism's blanket (seeded)."""
    g, mine = _mine(kind, par, adjacency)
    mc = [ref.dup0_mc(law, g, n, reps, seed=42 + i) for i, law in enumerate(mine)]
    clear_caches()
    acc = ShuffleAccountant(_make(kind, par), n, adjacency)
    z, zl = zm.zero_upper(acc), zm.zero_lower(acc)
    top = max(m + 6 * s for m, s in mc)
    assert z is not None and all(z >= m - 6 * s for m, s in mc), (z, mc)
    assert zl <= top, (zl, mc)


def _partial(a, G, S, r, w, lo, hi, k):
    """mpmath: E[L^k; lo < V < hi] w, L = a + G e^{rV - r^2/2} - S e^{-rV - r^2/2}."""
    mp.dps = 30
    a, G, S, r, w = (mpf(x) for x in (a, G, S, r, w))

    def f(v):
        L = a + G * mp.exp(r * v - r * r / 2) - S * mp.exp(-r * v - r * r / 2)
        return L ** k * mp.exp(-v * v / 2) / mp.sqrt(2 * mp.pi)

    lo_, hi_ = (max(lo, -60.0), min(hi, 60.0))
    pts = sorted({x for x in (lo_, -k * float(r), 0.0, k * float(r), hi_) if lo_ <= x <= hi_})
    return w * mp.quad(f, [mpf(x) for x in pts])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=st.floats(-2.0, 2.0), G=st.sampled_from([0.0, 0.05, 0.8, 3.0]), S=st.sampled_from([0.0, 0.05, 0.8, 3.0]),
       r=st.sampled_from([0.003, 0.05, 0.5, 1.282, 2.0, 3.5]), w=st.sampled_from([1.0, 0.37, 3.15]),
       lo=st.sampled_from([-math.inf, -2.0, 0.0, 1.0, 3.0]), width=st.sampled_from([0.5, 2.0, math.inf]))
def test_lognormal_partial_moments_property(a, G, S, r, w, lo, width):
    """A lognormal part's closed forms (``_lognormal_moments``: E L bracket, E L^2 upper; ``_lognormal_higher``: E L^2
    lower, E L^4 upper) hold the mpmath partial moments, for any orientation, truncation and weight."""
    if G == 0.0 and S == 0.0:
        return
    hi = lo + width if math.isfinite(lo) else width
    law = LognormalLaw(a, G, r, z_lo=lo, weight=w, b_minus=-S)  # (G >= 0 >= -S: increasing, V = Z)
    if math.isfinite(hi):  # (an interval part: the oriented form's attributes, as the sum laws' parts carry them)
        law._vhi = hi
    got1 = zm._lognormal_moments(law)
    got2 = zm._lognormal_higher(law)
    assert got1 is not None and got2 is not None
    _, mu_lo, mu_hi, m2_up = got1
    m2_lo, m4_up = got2
    e1, e2, e4 = (_partial(a, G, S, r, w, law._vlo, law._vhi, k) for k in (1, 2, 4))
    assert mpf(mu_lo) <= e1 <= mpf(mu_hi), (mu_lo, e1, mu_hi)
    assert mpf(m2_lo) <= e2 <= mpf(m2_up), (m2_lo, e2, m2_up)
    assert e4 <= mpf(m4_up), (e4, m4_up)


def _krr_exact_dup0(k: int, eps0: float, n: int, adjacency: str) -> float:
    """The exact D_up(0) of k-RR's worst pair (the max over the listed orders), from the mechanism (enumeration)."""
    g, laws = ref.krr_laws(k, eps0, adjacency)
    return max(ref.dup0_atoms(law, g, n) for law in laws)


def _krr_true_delta0(k: int, eps0: float, n: int, adjacency: str) -> float:
    """The exact shuffled delta(0) of k-RR (tests/test_review_rev41b_zero.py's exhaustive histogram reference)."""
    from test_review_rev41b_zero import _exact_delta0

    return _exact_delta0(k, eps0, n, adjacency)


@pytest.mark.parametrize("eps0", [1e-6, 1e-3])
@pytest.mark.parametrize("adjacency", ["zero_out", "replace"])
@pytest.mark.parametrize("n", [1, 4, 9])
def test_krr_gamma_near_one(eps0, adjacency, n):
    """k-RR at eps0 -> 0 (gamma = k / (e^eps0 + k - 1) within 1e-6 of 1, atoms of size eps0, replace's atom at 0):
    the exact D_up(0) <= zero_upper and zero_lower <= it (the exact shuffled delta(0) below both)."""
    for k in (2, 3):
        exact = _krr_exact_dup0(k, eps0, n, adjacency)
        assert _krr_true_delta0(k, eps0, n, adjacency) <= exact * (1 + 1e-9)  # (the blanket bound, §1.3)
        clear_caches()
        acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency)
        z, zl = zm.zero_upper(acc), zm.zero_lower(acc)
        assert z is not None and z >= exact * (1 - 1e-9), (k, z, exact)
        assert zl <= exact * (1 + 1e-9) + 1e-300, (k, zl, exact)


@pytest.mark.parametrize("k, eps0, n, adjacency", [(2, 1.0, 6, "zero_out"), (3, 0.5, 8, "replace"),
                                                   (2, 1e-3, 5, "zero_out")])
@pytest.mark.parametrize("side", [1 + 1e-9, 1 - 1e-9])
def test_get_epsilon_at_the_boundary(k, eps0, n, adjacency, side):
    """delta = zero_upper (1 +- 1e-9): the answer is 0 only where the exact delta(0) <= delta; an answer 0 leaves
    get_delta_bounds(0) with lower <= upper <= delta on that accountant; a positive answer is certified by a fresh
    accountant (get_delta(answer) <= delta)."""
    clear_caches()
    z = zm.zero_upper(ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency))
    assert z is not None
    delta = z * side
    if not 0.0 < delta < 1.0:
        pytest.skip("delta outside (0, 1)")
    exact = _krr_true_delta0(k, eps0, n, adjacency)
    clear_caches()
    acc = ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency)
    e = float(acc.get_epsilon(delta))
    if side > 1:
        assert e == 0.0
    if e == 0.0:
        assert exact <= delta
        lo, up = acc.get_delta_bounds(0.0)
        assert lo <= up <= delta
        assert lo <= _krr_exact_dup0(k, eps0, n, adjacency) * (1 + 1e-9) + 1e-15  # (a lower value of D_up(0))
    else:
        clear_caches()
        assert float(ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency).get_delta(e)) <= delta


@pytest.mark.parametrize("kind, par, n", [("bmg", (0.171, 0.78), 3000), ("g", (1.0,), 3000)])
def test_heavy_boundary_answer_zero_bracket(kind, par, n):
    """Heavy laws: delta just above zero_upper gives 0 and the accountant's bracket at 0 stays ordered (its certified
    lower value <= the memo's zero_upper <= delta); MC of D_up(0) below delta."""
    clear_caches()
    z = zm.zero_upper(ShuffleAccountant(_make(kind, par), n))
    delta = z * (1 + 1e-12)
    acc = ShuffleAccountant(_make(kind, par), n)
    assert float(acc.get_epsilon(delta)) == 0.0
    lo, up = acc.get_delta_bounds(0.0)
    assert lo <= up <= delta
    g, mine = _mine(kind, par, "zero_out")
    for i, law in enumerate(mine):
        m, s = ref.dup0_mc(law, g, n, 3000, seed=7 + i)
        assert m - 6 * s <= delta
