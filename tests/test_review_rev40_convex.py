"""Review rev40 (session 40) of Lemma 55.1 (docs/accountant_tail.md §55.1, ``hat_density.convex_tail``) at the edge of
its gate: for each law the smallest T0 it accepts (bisected to 1e-12 relative between a refused and an accepted T0), and
there L's density written here from the mechanism in mpmath (50 digits, not the law's code) must be non-increasing and
convex (p' <= 0, p'' >= 0 by mpmath's numerical derivatives) at T0 and on a geometric range above it; p_max >= p(T0),
sigma >= |p'(T0)| at the boundary; and the gate is tight (p'' < 0 at T0 (1 - 1e-3) where the boundary is the
inflection). Laws: GaussianRandomizer(0.5, 1, 2) x-vs-bot (zero-out) at eps 0.001 - 4 and BMGs with small gamma and
sigma0 (r = 1 / sigma0 up to 3.8: y* = 0.07), the calibrated picks of bench/README.md's regime map at n = 1e8 - 1e9.
rev39's test_review_rev39_hatdensity.py checked a fixed T0 grid in double; this one sits on the gate's boundary."""

from __future__ import annotations

import math

import numpy as np
import pytest
from mpmath import mp, mpf

hat_density = pytest.importorskip("sharpdp.shuffle.accountant.hat_density")

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer  # noqa: E402
from sharpdp.shuffle.laws import laws_for  # noqa: E402


def _gauss(s, eps):
    E, g = mp.e ** mpf(eps), mp.erfc(1 / (mpf(s) * mp.sqrt(2)))
    s = mpf(s)

    def p(l):  # y = (s^2/2) ln((l + E)/g) > 0 has density phi_s(y + 1) / g
        y = s * s / 2 * mp.log((l + E) / g)
        return mp.exp(-((y + 1) / s) ** 2 / 2) / (s * mp.sqrt(2 * mp.pi) * g) * s * s / (2 * (l + E))

    return laws_for(GaussianRandomizer(float(s), 1), eps, "zero_out")[0][1], p


def _bmg(gam, s0, eps):
    E, r = mp.e ** mpf(eps), 1 / mpf(s0)
    a, b = mpf(gam) - E, 1 - mpf(gam)

    def p(l):  # L = a + b e^{r Z - r^2/2}
        z = (mp.log((l - a) / b) + r * r / 2) / r
        return mp.exp(-z * z / 2) / mp.sqrt(2 * mp.pi) / (r * (l - a))

    return laws_for(BlanketMixedGaussian(gam, s0, 1), eps, "zero_out")[0][1], p


CASES = [("g", 0.5, 0.001), ("g", 0.5, 1.0), ("g", 1.0, 0.01), ("g", 2.0, 0.001), ("g", 2.0, 4.0),
         ("b", 0.0044, 0.266, 0.1), ("b", 0.0044, 0.266, 8.0), ("b", 0.0143, 0.405, 0.1), ("b", 0.0202, 0.456, 0.1),
         ("b", 0.171, 0.781, 0.001), ("b", 0.0786, 0.597, 0.001), ("b", 0.5, 2.0, 1.0),
         # (r < 0.7: y* > 1, the inflection above 0, where the gate binds)
         ("b", 0.5, 2.0, 0.001), ("b", 0.9, 4.6, 0.01), ("b", 0.95, 4.6, 0.5), ("g", 10.0, 0.001), ("g", 6.0, 0.01),
         ("g", 4.0, 0.1)]
#: the cases whose gate boundary lies above 0 (measured: y(T0) = y* (1 + 2e-9) there)
INNER = [("b", 0.5, 2.0, 0.001), ("b", 0.9, 4.6, 0.01), ("g", 10.0, 0.001)]


def _boundary(law):
    ts = np.geomspace(1e-6, 1e8, 141)
    ok = [hat_density.convex_tail(law, float(t)) is not None for t in ts]
    assert any(ok)
    k = ok.index(True)
    assert all(ok[k:]), "the gate is not monotone in T0"
    if k == 0:
        return float(ts[0]), False
    lo, hi = float(ts[k - 1]), float(ts[k])
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if hat_density.convex_tail(law, mid) is None:
            lo = mid
        else:
            hi = mid
    return hi, True


@pytest.mark.parametrize("case", CASES, ids=str)
def test_convex_tail_at_its_gate_boundary(case):
    with mp.workdps(50):
        law, p = _gauss(*case[1:]) if case[0] == "g" else _bmg(*case[1:])
        T0, inner = _boundary(law)
        p_max, sig = hat_density.convex_tail(law, T0)
        t0 = mpf(T0)
        assert p_max >= float(p(t0)) * (1 - 1e-12), (case, T0, p_max, float(p(t0)))
        assert sig >= float(abs(mp.diff(p, t0))) * (1 - 1e-9), (case, T0, sig)
        for t in [t0 * mpf(x) for x in (1, 1 + 1e-9, 1 + 1e-6, 1.001, 1.1, 2, 10, 1e3, 1e5)]:
            assert mp.diff(p, t) <= 0, (case, T0, float(t))
            d2 = mp.diff(p, t, 2)
            assert d2 >= -mpf(10) ** -30 * abs(p(t)) / t ** 2, (case, T0, float(t), float(d2))
        assert inner == (case in INNER), (case, T0)
        if inner:  # the boundary is the inflection (y(T0) = y*) or the law's v_lo: below it p'' < 0 or the gate refuses
            r = law.heavy_form().r
            y_star = (math.sqrt(1 + 4 / r ** 2) - 1) / 2
            hf = law.heavy_form()
            q = T0 - hf.a
            y0 = 1 + ((math.log(q / hf.G) + r * r / 2) / r) / r
            if case in INNER:  # (at the inflection: the gate is tight there)
                assert abs(y0 - y_star) < 1e-6 * y_star, (case, y0, y_star)
                assert mp.diff(p, t0 * (1 - mpf("1e-3")), 2) < 0, (case, T0)
