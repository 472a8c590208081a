"""Review rev39 (session 39) of hat39's Lemma 55.1 (§55.1 of docs/accountant_tail.md, ``hat_density.convex_tail``):
where it returns (p_max, sigma), L's density p must be non-increasing and convex on [T0, inf) with p_max >= p(T0) and
sigma >= |p'(T0)|. Checked against L's density written here from the mechanism (not from the law's code): the Gaussian
randomizer's x-vs-bot law L = g e^(2y / s^2) - e^eps on y > 0 (y's density phi_s(y + 1) / g there), so
p(l) = phi_s(y + 1) / g * s^2 / (2 (l + e^eps)); the BMG's L = gamma - e^eps + (1 - gamma) e^(rZ - r^2/2),
p(l) = phi(z) / (r (l - a)); at 60 T0 per law on a geometric range through the inflection, the slope in closed form and
convexity by second differences on a geometric grid over [T0, 1e4 T0]; and every T0 where p is not convex on
[T0, 1.5 T0] (second differences, written here) is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

hat_density = pytest.importorskip("sharpdp.shuffle.accountant.hat_density")

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer  # noqa: E402
from sharpdp.shuffle.laws import laws_for  # noqa: E402


def _gauss(s, eps):
    E, g = math.exp(eps), math.erfc(1 / (s * math.sqrt(2)))
    a, r = -E, 2.0 / s  # (L - a = g e^{r y / s}: in the normal variable v = (y + 1) / s ... written directly below)

    def p(l):
        l = np.asarray(l, float)
        y = 0.5 * s * s * np.log((l + E) / g)
        return np.exp(-0.5 * ((y + 1) / s) ** 2) / (s * math.sqrt(2 * math.pi)) / g * s * s / (2 * (l + E))

    return laws_for(GaussianRandomizer(s, 1), eps, "zero_out")[0][1], p, a, r


def _bmg(gam, s0, eps):
    E, r = math.exp(eps), 1.0 / s0
    a, b = gam - E, 1 - gam

    def p(l):
        l = np.asarray(l, float)
        z = (np.log((l - a) / b) + 0.5 * r * r) / r
        return np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) / (r * (l - a))

    return laws_for(BlanketMixedGaussian(gam, s0, 1), eps, "zero_out")[0][1], p, a, r


CASES = [("g", 0.5, 0.01), ("g", 1.0, 0.01), ("g", 2.0, 0.001), ("g", 1.0, 1.0), ("g", 10.0, 0.001), ("g", 6.0, 0.5), ("b", 0.0202, 0.456, 0.1),
         ("b", 0.3, 1.0, 0.5), ("b", 0.0222, 0.582, 2.0)]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_convex_tail_only_where_the_density_is_convex(case):
    law, p, a, r = _gauss(*case[1:]) if case[0] == "g" else _bmg(*case[1:])
    returned = 0
    for T0 in np.geomspace(1e-3, 1e7, 60):
        ct = hat_density.convex_tail(law, float(T0))
        if ct is None:
            continue
        returned += 1
        p_max, sig = ct
        p0 = float(p(T0))
        assert p0 * (1 - 1e-9) <= p_max <= max(p0 * (1 + 1e-6), 1e-300), (case, T0, p_max, p0)  # (the formula is L's)
        dh = T0 * 1e-6
        slope = abs(float(p(T0 + dh) - p(T0))) / dh
        assert sig >= slope * (1 - 1e-4), (case, T0, sig, slope)
        x = T0 * np.geomspace(1.0, 1e4, 4001)
        v = p(x)
        assert np.all(np.diff(v) <= 1e-9 * v[:-1]), (case, T0)
        # convex: slopes between consecutive nodes non-decreasing
        s_ = np.diff(v) / np.diff(x)
        assert np.all(np.diff(s_) >= -1e-7 * np.abs(s_[:-1])), (case, T0)
    assert returned > 0, case
    # (not vacuous: below the inflection the density written here is not convex and the rule refuses)
    T = [float(t) for t in np.geomspace(1e-3, 1e7, 60)]
    nonconvex = [t for t in T if (lambda v: np.any(np.diff(np.diff(v) / np.diff(t * np.geomspace(1, 1.5, 50))) < 0))(
        p(t * np.geomspace(1, 1.5, 50)))]
    assert all(hat_density.convex_tail(law, t) is None for t in nonconvex), case
