"""Review rev45 (session 45): attack on docs/accountant.md §2.3 "Cut cells" (the lead's fix of rev44's finding: a
lognormal cell cut by the law's truncation z_lo charges the exact errors of fl(lo - v*) and fl(hi - v*)), through the
compiled kernel (``LognormalLaw.cells_fresh``), on the cut cells rev44's tests did not draw:

* z_lo < 0 with v* < 2 z_lo (both differences' operands negative, not Sterbenz: rev44 drew z_lo > 0 >= v*);
* laws with a shift a != 0, a scale b != 1, a weight != 1 and a second term (b_minus != 0: L = a + G e^{rV - r^2/2}
  - S e^{-rV - r^2/2}, both terms) (rev44: LognormalLaw(0, 1, r, z_lo) and GaussianRandomizer's law);
* the sign-flipped law (b < 0: the truncation at the top of V, v_hi = -z_lo);
* grids of several cells, the cut one first, and spans from 1e-12 of the cell's reach up.

Reference: tests/test_lognormal_cells_native.py's ``exact_cells`` (the cells' exact mass and hat weight between the
kernel's own V-edges by the Gaussian shift identities, mpmath at 80+ digits). Claim: every cell's (m +- em, w +- ew)
encloses them (the rule of §64.1 on and off).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle.laws import LognormalLaw

from _main_floats34 import switch
from test_lognormal_cells_native import exact_cells


def _inexact(x: float, y: float) -> bool:
    return Fraction(x) - Fraction(y) != Fraction(x - y)


def _check(law, x0: float, h: float, K: int) -> None:
    m, w, em, ew = law.cells_fresh(x0, h, K)
    mr, wr = exact_cells(law, x0, h, K)
    with mpmath.workdps(80):
        for j in range(K):
            assert abs(mpmath.mpf(float(m[j])) - mr[j]) <= mpmath.mpf(float(em[j])), ("mass", j, m[j], em[j], mr[j])
            assert abs(mpmath.mpf(float(w[j])) - wr[j]) <= mpmath.mpf(float(ew[j])), ("hat", j, w[j], ew[j], wr[j])


def _cut_grid(law, vs: float, zl: float, delta: float, flip: bool) -> tuple[float, float]:
    """(x0, h): a grid from L(v*) to L(z_lo + delta) (in the law's own orientation)."""
    if flip:  # (b < 0: L decreasing in Z, V = -Z; the cut at v_hi = -z_lo: v* above it, the next edge below)
        xa, xb = law._at(-vs), law._at(-zl - delta)
        x0, x1 = min(xa, xb), max(xa, xb)
        return x0, x1 - x0
    x0, x1 = law._at(vs), law._at(zl + delta)
    return x0, x1 - x0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rule=st.booleans(), r=st.floats(0.05, 3.0), zl=st.floats(-0.3, -1e-3), ratio=st.floats(2.05, 40.0),
       a=st.sampled_from([0.0, 0.37, -2.5]), b=st.sampled_from([1.0, 3.0, 0.2]), bm=st.sampled_from([0.0, -0.3]),
       wt=st.sampled_from([1.0, 0.013]), log_delta=st.floats(-12.0, -1.0), K=st.integers(1, 3))
def test_cut_cells_below_zero(monkeypatch, rule, r, zl, ratio, a, b, bm, wt, log_delta, K):
    """z_lo < 0, v* = ratio z_lo < 2 z_lo: fl(z_lo - v*) rounds (asserted by assume)."""
    switch(monkeypatch, "CELLS_FEW_NODES", rule)
    vs = ratio * zl
    law = LognormalLaw(a, b, r, z_lo=zl, weight=wt, b_minus=bm)
    reach = 0.25 / (abs(vs) + r + 1.0)
    delta = max(reach - (zl - vs), 1e-3 * reach) * 10**log_delta
    x0, h = _cut_grid(law, vs, zl, delta, False)
    assume(h > 0 and math.isfinite(h))
    v0 = law._v_scalar(x0)
    assume(math.isfinite(v0) and v0 < zl and _inexact(zl, v0))
    _check(law, x0, h, K)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rule=st.booleans(), r=st.floats(0.05, 3.0), zl=st.floats(-0.3, 0.3), share=st.floats(0.01, 0.9),
       a=st.sampled_from([0.0, 1.5]), log_delta=st.floats(-12.0, -1.0), K=st.integers(1, 3))
def test_cut_cells_of_the_flipped_law(monkeypatch, rule, r, zl, share, a, log_delta, K):
    """b < 0 (L decreasing in Z): the truncation is the top of V (v_hi = -z_lo); a grid across it."""
    switch(monkeypatch, "CELLS_FEW_NODES", rule)
    law = LognormalLaw(a, -1.0, r, z_lo=zl)
    reach = 0.25 / (abs(zl) + r + 1.25)
    vs = zl - share * reach - 1e-3
    delta = reach * 10**log_delta
    x0, h = _cut_grid(law, vs, zl, delta, True)
    assume(h > 0 and math.isfinite(h))
    _check(law, x0, h, K)


@pytest.mark.parametrize("rule", [False, True])
@pytest.mark.parametrize("zl, vs, r, bm", [(-0.01, -0.05, 0.5, 0.0), (-0.1, -0.9, 0.05, 0.0), (-0.003, -0.04, 2.0, -0.3),
                                           (-0.17, -0.47, 1.0, -0.3)])
def test_cut_cells_below_zero_cases(monkeypatch, rule, zl, vs, r, bm):
    switch(monkeypatch, "CELLS_FEW_NODES", rule)
    law = LognormalLaw(0.37, 3.0, r, z_lo=zl, b_minus=bm)
    for delta in (1e-11, 1e-7, 1e-3):
        x0, h = _cut_grid(law, vs, zl, delta, False)
        assert _inexact(zl, law._v_scalar(x0))
        _check(law, x0, h, 1)
        _check(law, x0, h / 2, 3)
