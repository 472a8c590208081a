"""sphere.three_cap_measure's exact kink cut at coplanar configurations (switch SPHERE44_KINK_CUT, off by default;
docs/accountant_tail.md §67.4, docs/worst_case_pairs.md §6.1).

Independent references: the kink in closed form checked against its definition (a2 + a3 = 0 at psi = pi, a2 = a3 at
psi = 0) and against the touching quadratic's double root; mpmath quadrature of the t-integral with the kink given as a
breakpoint (tests/test_fix43_privunit_coplanar.py's ``mp_three_coplanar``); the radius-conditioned rule of
``privunit_coplanar`` (another method); the switch off, which keeps main's floats.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp.shuffle import sphere as S
from sharpdp.shuffle.randomizers.privunit_coplanar import coplanar_three_cap_measure
from test_fix43_privunit_coplanar import NEW_END, OLD_END, mp_three_coplanar


def _a(theta, t, c, s):
    return (theta - t * c) / (math.sqrt(1 - t * t) * s)


@pytest.mark.parametrize("theta, alpha, beta, psi", [
    (-0.3, *OLD_END), (0.2, 0.7, 0.9, 0.0), (-0.5, 1.0, 2.0, 0.0), (-0.1, 2.0, 2.4, math.pi), (0.1, 0.5, 0.8, math.pi)])
def test_kink_is_where_the_thresholds_meet(theta, alpha, beta, psi):
    ca, sa, cb, sb, cp = math.cos(alpha), math.sin(alpha), math.cos(beta), math.sin(beta), math.cos(psi)
    (t,) = S.coplanar_kink(theta, ca, sa, cb, sb, cp)
    if not -1 < t < 1:
        return
    a2, a3 = _a(theta, t, ca, sa), _a(theta, t, cb, sb)
    assert abs(a2 + a3 if cp < 0 else a2 - a3) <= 1e-12 * (1 + abs(a2) + abs(a3))
    # the touching quadratic (three_cap_measure's touch) vanishes to second order there: minus a square
    def touch(x):
        return ((1 - x * x) * sa * sa * sb * sb * (1 - cp * cp) - (theta - x * ca) ** 2 * sb * sb
                - (theta - x * cb) ** 2 * sa * sa + 2 * sa * sb * cp * (theta - x * ca) * (theta - x * cb))
    assert abs(touch(t)) <= 1e-14 and touch(t + 1e-3) < 0 and touch(t - 1e-3) < 0


def test_no_kink_where_the_thresholds_coincide():
    """psi = 0 and alpha = beta: a2 = a3 everywhere, no kink (the denominator vanishes)."""
    a = 1.1
    assert S.coplanar_kink(0.2, math.cos(a), math.sin(a), math.cos(a), math.sin(a), 1.0) == []


@pytest.mark.parametrize("k, theta, cfg", [(3, -0.3, OLD_END), (3, -0.3, NEW_END), (4, -0.3, OLD_END),
                                           (3, 0.2, (0.7, 0.9, 0.0)), (5, -0.5, (1.0, 2.0, 0.0))])
def test_cut_converges_where_the_t_rule_lost_it(monkeypatch, k, theta, cfg):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    ref = float(mp_three_coplanar(k, theta, *cfg))
    off = S.three_cap_measure(k, theta, *cfg)  # main's rule: the kink inside a piece where the double root was lost
    switch(monkeypatch, "SPHERE44_KINK_CUT", True)
    on = S.three_cap_measure(k, theta, *cfg)
    # (within 1e-8: at k = 3 the inner two-cap measure of nearly tangent caps keeps ~1e-8 of its own,
    # docs/worst_case_pairs.md §6.4)
    assert on == pytest.approx(ref, rel=1e-8, abs=1e-15)
    assert abs(on - ref) <= abs(off - ref) + 1e-15
    if cfg == OLD_END and k == 3:
        assert abs(off - ref) > 1e-4 * ref  # (the defect of docs/worst_case_pairs.md §6.1: the test can fail)


def test_switch_off_is_mains_rule(monkeypatch):
    """Off: the same float as without the rule's code; on, non-coplanar configurations do not move."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    cfg = (-0.3, *OLD_END)
    off = S.three_cap_measure(3, *cfg)
    switch(monkeypatch, "SPHERE44_KINK_CUT", True)
    assert S.three_cap_measure(3, -0.3, 2.0, 2.2, 1.0) == S.three_cap_measure(3, -0.3, 2.0, 2.2, 1.0)
    switch(monkeypatch, "SPHERE44_KINK_CUT", False)
    assert S.three_cap_measure(3, *cfg) == off
    non = S.three_cap_measure(4, -0.3, 2.0, 2.2, 1.0)
    switch(monkeypatch, "SPHERE44_KINK_CUT", True)
    assert S.three_cap_measure(4, -0.3, 2.0, 2.2, 1.0) == non


@settings(max_examples=30, deadline=None)
@given(k=st.integers(3, 8), theta=st.floats(-0.7, 0.7), alpha=st.floats(0.1, math.pi - 0.1),
       beta=st.floats(0.1, math.pi - 0.1), psi=st.sampled_from([0.0, math.pi]))
def test_cut_agrees_with_the_radius_rule(k, theta, alpha, beta, psi):
    from sharpdp.shuffle.accountant import limits

    old = limits.SPHERE44_KINK_CUT
    limits.SPHERE44_KINK_CUT = True
    try:
        on = S.three_cap_measure(k, theta, alpha, beta, psi, nodes=48)
    finally:
        limits.SPHERE44_KINK_CUT = old
    ref = coplanar_three_cap_measure(k, theta, alpha, beta, psi)
    assert on == pytest.approx(ref, rel=1e-7, abs=1e-12)
