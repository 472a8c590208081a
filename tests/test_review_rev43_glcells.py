"""Review rev43 (session 43): attack on g43's docs/accountant_tail.md §64.1 (Lemma 64.1: the n-point Gauss-Legendre
rule's relative error on a narrow lognormal cell, n = 2, 3, 4, behind ``limits.CELLS_FEW_NODES``, off). The kernel
(C++, changed on g43) is not built here: this file checks the lemma itself, in mpmath alone (no sharpdp code), so it
runs on any branch.

Cell: u in [u0, u1], 0 <= u0 < u1, kappa = u1 (|v*| + r + 1) <= 1/4; integrands e(u) = exp(-v* u - u^2/2) (the mass),
(e^{r u} - 1) e(u) and (1 - e^{-r u}) e(u) (the moment's two terms). Claim: the n-point rule's relative error is at most
c_n T(2n) kappa^{2n} e^kappa on the mass and R_n(kappa) = 2 c_n (T(2n) kappa^{2n} + 2n T(2n-1) kappa^{2n-1}) e^kappa on
each moment term; the three tiers' thresholds keep R_n below 1e-14. Reference: mpmath quadrature at 40 digits; the
nodes and weights exact (mpmath's Legendre roots), so only the rule's truncation is measured. Adversarial cells: the
tier's threshold kappa, v* from -40 to 40 (both signs: the slope against the curvature), r from 1e-3 to 60, u0 = 0
(the moment's worst: its integral's lower value uses u1 / 2) or near u1.
"""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from _rev43_mp import digits_fixture


_digits = digits_fixture(40)  # (mpmath's digits for every reference here, set per test)

T = [1, 1, 2, 4, 10, 26, 76, 232, 764]  # sum of |coefficients| of He_k
TIERS = {2: 1e-4, 3: 1.0 / 128, 4: 1.0 / 16}


def c_n(n: int) -> float:
    return math.factorial(n) ** 4 / ((2 * n + 1) * math.factorial(2 * n) ** 3)


def R(n: int, kappa: float) -> float:
    return 2 * c_n(n) * (T[2 * n] * kappa ** (2 * n) + 2 * n * T[2 * n - 1] * kappa ** (2 * n - 1)) * math.exp(kappa)


def _nodes(n: int) -> list[tuple]:
    """The exact n-point Gauss-Legendre nodes and weights on [-1, 1] (closed forms)."""
    sq = mpmath.sqrt
    if n == 2:
        return [(-1 / sq(3), 1), (1 / sq(3), 1)]
    if n == 3:
        return [(-sq(mpmath.mpf(3) / 5), mpmath.mpf(5) / 9), (0, mpmath.mpf(8) / 9), (sq(mpmath.mpf(3) / 5), mpmath.mpf(5) / 9)]
    a, b = sq(mpmath.mpf(3) / 7 - 2 * sq(mpmath.mpf(6) / 5) / 7), sq(mpmath.mpf(3) / 7 + 2 * sq(mpmath.mpf(6) / 5) / 7)
    wa, wb = (18 + sq(30)) / 36, (18 - sq(30)) / 36
    return [(-b, wb), (-a, wa), (a, wa), (b, wb)]


def _gl(f, a, b, n: int):
    return (b - a) / 2 * mpmath.fsum(w * f((a + b) / 2 + (b - a) / 2 * x) for x, w in _nodes(n))


def _errors(n: int, v: float, r: float, kappa: float, frac: float) -> tuple[float, float, float]:
    vs, rr = mpmath.mpf(v), mpmath.mpf(r)
    u1 = mpmath.mpf(kappa) / (abs(vs) + rr + 1)
    u0 = frac * u1
    e = lambda u: mpmath.exp(-vs * u - u * u / 2)  # noqa: E731
    fs = [e, lambda u: mpmath.expm1(rr * u) * e(u), lambda u: -mpmath.expm1(-rr * u) * e(u)]
    out = []
    for f in fs:
        exact = mpmath.quad(f, [u0, u1])
        out.append(float(abs(_gl(f, u0, u1, n) - exact) / exact))
    return tuple(out)


def test_constants():
    assert c_n(2) == pytest.approx(1 / 4320, rel=1e-15) and c_n(3) == pytest.approx(1 / 2016000, rel=1e-15)
    for n, k in TIERS.items():
        assert R(n, k) < 1e-14 - 5e-16  # (truncation plus the nodes' placement inside kGlRel's 1e-14)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("v, r", [(-40.0, 1e-3), (-37.0, 0.2), (0.0, 60.0), (20.0, 40.0), (40.0, 1e-3), (-5.0, 5.0)])
def test_lemma_at_the_thresholds(n, v, r):
    kappa = TIERS[n]
    em, e1, e2 = _errors(n, v, r, kappa, 0.0)
    assert em <= c_n(n) * T[2 * n] * kappa ** (2 * n) * math.exp(kappa), em
    assert e1 <= R(n, kappa) and e2 <= R(n, kappa), (e1, e2, R(n, kappa))


@settings(max_examples=30, deadline=None)
@given(n=st.sampled_from([2, 3, 4]), v=st.floats(-40.0, 40.0), log_r=st.floats(-3.0, 1.8), share=st.floats(1e-3, 1.0),
       frac=st.sampled_from([0.0, 0.3, 0.9, 0.999]))
def test_lemma_property(n, v, log_r, share, frac):
    kappa = share * TIERS[n]
    em, e1, e2 = _errors(n, v, 10**log_r, kappa, frac)
    assert em <= c_n(n) * T[2 * n] * kappa ** (2 * n) * math.exp(kappa) * (1 + 1e-9) + 1e-30
    assert max(e1, e2) <= R(n, kappa) * (1 + 1e-9) + 1e-30, (e1, e2, R(n, kappa))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_reference_rule_is_gauss_legendre_and_the_bound_not_vacuous(n):
    """The reference's nodes integrate degree 2n - 1 exactly, and at the tier's threshold (v* = -40, r = 1e-3) the
    measured moment error is within 400x of R_n (the bound is not vacuous; measured: 4.3x, 30x, 300x)."""
    f = lambda u: u ** (2 * n - 1) + 3 * u ** 2  # noqa: E731
    assert abs(_gl(f, mpmath.mpf(0), mpmath.mpf(1), n) - (mpmath.mpf(1) / (2 * n) + 1)) < mpmath.mpf(10) ** -35
    _, e1, _ = _errors(n, -40.0, 1e-3, TIERS[n], 0.0)
    assert R(n, TIERS[n]) / 400 <= e1 <= R(n, TIERS[n])
