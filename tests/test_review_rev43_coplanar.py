"""Review rev43 (session 43): attack on fix43's docs/worst_case_pairs.md §6.2 (``privunit_coplanar``,
``limits.PRIVUNIT_COPLANAR_CHECKED``, on: the coplanar three-cap measure by conditioning on the projection's radius).
Skipped while the module is absent (branch fix43).

Independent reference (mpmath at 30 digits, no sharpdp code): the projection X of U uniform on S^{k-1} onto the plane
of v1, v2, v3 has the density (k - 2)/(2 pi) (1 - |x|^2)^{(k-4)/2} on the unit disk (Archimedes' theorem at k = 4:
uniform), and the three caps are the half-planes <x, v_j> >= theta, so the measure is a one-dimensional integral over
x1 of the y-integral in closed form (arcsin at k = 3, the chord's length at k = 4, their combinations at k = 5, 6),
split at every intersection of two boundary lines or of a line and the circle. A different computation from the
rule's (no arcs, no radius integral), so it checks the configuration's conventions too (v3 = (cos beta, +-sin beta)).
"""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from _rev43_mp import digits_fixture

pc = pytest.importorskip("sharpdp.shuffle.randomizers.privunit_coplanar")


_digits = digits_fixture(30)  # (mpmath's digits for every reference here, set per test)


def _F(k: int, y, c):
    """An antiderivative in y of (c^2 - y^2)^{(k-4)/2} on [-c, c]."""
    if k == 3:
        return mpmath.asin(y / c)
    if k == 4:
        return y
    if k == 5:
        return (y * mpmath.sqrt(max(c * c - y * y, 0)) + c * c * mpmath.asin(y / c)) / 2
    return c * c * y - y ** 3 / 3


def reference(k: int, theta: float, alpha: float, beta: float, psi: float):
    th = mpmath.mpf(theta)
    b3 = beta if math.cos(psi) > 0 else -beta
    cs = [(mpmath.mpf(1), mpmath.mpf(0))] + [(mpmath.cos(mpmath.mpf(a)), mpmath.sin(mpmath.mpf(a))) for a in (alpha, b3)]

    def inner(x):
        c = mpmath.sqrt(max(1 - x * x, 0))
        lo, hi = -c, c
        for a, b in cs:  # a x + b y >= theta
            if abs(b) < mpmath.mpf(10) ** -25:
                if a * x < th:
                    return mpmath.mpf(0)
            elif b > 0:
                lo = max(lo, (th - a * x) / b)
            else:
                hi = min(hi, (th - a * x) / b)
        if hi <= lo or c == 0:
            return mpmath.mpf(0)
        return _F(k, hi, c) - _F(k, lo, c)

    pts = {mpmath.mpf(-1), mpmath.mpf(1)}
    for i, (a, b) in enumerate(cs):  # line-circle: a x + b y = theta, x^2 + y^2 = 1
        phi = mpmath.atan2(b, a)
        if abs(th) <= 1:
            w = mpmath.acos(th)
            pts.update({mpmath.cos(phi + w), mpmath.cos(phi - w)})
        for a2, b2 in cs[i + 1:]:  # line-line
            det = a * b2 - a2 * b
            if abs(det) > mpmath.mpf(10) ** -20:
                pts.add((th * b2 - th * b) / det)
    pts = sorted(p for p in pts if -1 <= p <= 1)
    return (k - 2) / (2 * mpmath.pi) * mpmath.quad(inner, pts)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.sampled_from([3, 4, 5, 6]), theta=st.floats(-0.7, 0.7), alpha=st.floats(0.05, math.pi - 0.05),
       beta=st.floats(0.05, math.pi - 0.05), psi=st.sampled_from([0.0, math.pi]))
def test_coplanar_measure_against_the_disk_integral(k, theta, alpha, beta, psi):
    got = pc.coplanar_three_cap_measure(k, theta, alpha, beta, psi)
    ref = reference(k, theta, alpha, beta, psi)
    assert abs(got - ref) <= 1e-12 + 1e-8 * ref, (got, float(ref))


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_the_section_6_1_point(k):
    """§6.1's search point of PrivUnit(0.6, -0.3, 3) (alpha, beta = 2.531595, 1.875795, psi = pi) at theta = -0.3 and
    the kink's neighbourhood, at every k of the reference."""
    for alpha, beta in ((2.531595, 1.875795), (2.530037, 1.876574), (1.0, 1.0)):
        got = pc.coplanar_three_cap_measure(k, -0.3, alpha, beta, math.pi)
        ref = reference(k, -0.3, alpha, beta, math.pi)
        assert abs(got - ref) <= 1e-12 + 1e-9 * ref, (k, alpha, beta, got, float(ref))
