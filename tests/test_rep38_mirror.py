"""Leg B's lower value of replace-one through bot from leg A's law at -e2 (docs/accountant.md §9.15,
``limits.VIA_BOTTOM_MIRROR``): the identity D_up^B(e) = 1 - e^e (1 - D_up^A(-e)) against quadrature of the
Gaussian randomizer's densities at n = 1 and 2 (independent of the laws' code), the mirror's bracket against leg B's
own where both are certified narrow, the raised lower value at n = 1e8, the rounding, the gates and the switch."""

from __future__ import annotations

import math

import mpmath
import pytest
from _main_floats34 import switch
from scipy import integrate
from scipy.special import ndtr

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.accountant.via_bottom_mirror import leg_b_lower, mirror_law
from sharpdp.shuffle.laws import laws_for


def _h(c: float, t: float, s: float) -> float:
    """E[(c + L)_+] for L = 1 - t r(Y), Y ~ R_BG = phi_s(|y| + 1) / g, r = g on y < 0 (mass 1/2) and g e^{2y/s^2}
    on y > 0 (R_x = phi_s(y - 1)); phi_s(y + 1) e^{2y/s^2} = phi_s(y - 1) gives the integral in closed form."""
    g = 2.0 * float(ndtr(-1.0 / s))
    out = 0.5 * max(c + 1.0 - t * g, 0.0)
    if c + 1.0 <= t * g:
        return out
    y = 0.5 * s * s * math.log((c + 1.0) / (t * g))  # (c + 1 - t g e^{2y/s^2} >= 0 below it)
    mass = float(ndtr((y + 1.0) / s) - ndtr(1.0 / s))  # integral_0^y phi_s(u + 1) du
    tilt = float(ndtr((y - 1.0) / s) - ndtr(-1.0 / s))  # integral_0^y phi_s(u - 1) du
    return out + ((c + 1.0) * mass - t * g * tilt) / g


def _leg_b_quad(s: float, e: float, n: int) -> float:
    """D_up of the Gaussian randomizer's bot vs x law at e (x = 1) by quadrature: n = 1, E[L_+]; n = 2,
    [2 g (1 - g) E[L_+] + g^2 E[(L_1 + L_2)_+]] / (2 g) (Theorem 1.3 with M ~ Bin(2, g))."""
    g, t = 2.0 * float(ndtr(-1.0 / s)), math.exp(e)
    one = _h(0.0, t, s)
    if n == 1:
        return one

    def inner(y: float) -> float:  # density phi_s(y + 1) / g on y > 0 times E[(L(y) + L_2)_+]
        return math.exp(-0.5 * ((y + 1.0) / s) ** 2) / (s * math.sqrt(2 * math.pi) * g) * \
            _h(1.0 - t * g * math.exp(2.0 * y / (s * s)), t, s)

    top = 0.5 * s * s * math.log(2.0 / (t * g)) + 1.0  # (beyond it L(y) <= -1 - ... and the integrand is 0)
    two = 0.5 * _h(1.0 - t * g, t, s) + integrate.quad(inner, 0.0, top, epsabs=0.0, epsrel=1e-12, limit=400)[0]
    assert n == 2
    return (2.0 * g * (1.0 - g) * one + g * g * two) / (2.0 * g)


def _mirror_bracket(s: float, e: float, n: int, rel_tol: float) -> tuple[float, float]:
    """Leg B's bracket at e from the mirror law's certified bracket (lower by leg_b_lower; the upper value by the same
    identity, rounded up generously: a test's reference only)."""
    rnd = GaussianRandomizer(s, 1)
    gamma, law = mirror_law(rnd, ((0,), (1,)), e)
    r = certify(law, gamma, n, rel_tol, 1)
    return leg_b_lower(float(r.lower), e), (1.0 - math.exp(e) * (1.0 - float(r.upper))) * (1 + 1e-12) + 1e-15


@pytest.mark.parametrize("s", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("e", [0.01, 0.1, 0.5])
@pytest.mark.parametrize("n", [1, 2])
def test_mirror_against_quadrature(s, e, n):
    ref = _leg_b_quad(s, e, n)
    lo, up = _mirror_bracket(s, e, n, 1e-3)
    assert lo <= ref * (1 + 1e-9) and ref <= up
    assert lo >= ref * (1 - 2e-2) - 1e-12  # (the mirror's lower value is a useful one, not 0)
    # leg B's own certified bracket holds the same value (the identity, not the quadrature, is what is tested)
    rnd = GaussianRandomizer(s, 1)
    g, law_b = laws_for(rnd, e, "zero_out")[1]
    rb = certify(law_b, g, n, 1e-3, 1)
    assert rb.lower <= ref * (1 + 1e-9) and ref <= rb.upper * (1 + 1e-9)


def test_quadrature_reference_itself():
    """The reference's n = 1 value by a second, independent route: mpmath's quadrature of E[(1 - t r(Y))_+]."""
    s, e = 1.0, 0.1
    g, t = 2.0 * float(ndtr(-1.0 / s)), math.exp(e)
    mpmath.mp.dps = 30
    ystar = 0.5 * s * s * math.log(1.0 / (t * g))
    f = lambda y: mpmath.npdf(y + 1, 0, s) / g * (1 - t * g * mpmath.e ** (2 * y / s**2))  # noqa: E731
    val = 0.5 * max(1.0 - t * g, 0.0) + float(mpmath.quad(f, [0, ystar]))
    assert _leg_b_quad(s, e, 1) == pytest.approx(val, rel=1e-10)


@pytest.mark.parametrize("s,n,e", [(0.5, 10**3, 0.1), (1.0, 10**4, 0.05), (0.5, 10**6, 0.062)])
def test_mirror_meets_leg_b_own_bracket(s, n, e):
    """Two certified brackets of the same D_up (leg B's law directly, and leg A's law at -e by §9.15) intersect, and
    the mirror's lower value is close to leg B's own upper value where leg B's bracket is narrow."""
    rnd = GaussianRandomizer(s, 1)
    g, law_b = laws_for(rnd, e, "zero_out")[1]
    rb = certify(law_b, g, n, 1e-2, 1)
    lo, up = _mirror_bracket(s, e, n, 1e-2)
    assert lo <= rb.upper and rb.lower <= up
    if rb.lower > 0:
        assert lo >= rb.lower * (1 - 3e-2)


def test_n1e8_bracket_meets_rel_tol_and_keeps_main_upper(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e8, eps = 0.01 (leg B's own lower value 0, an 80 % bracket before): the rule on the
    search's report keeps its split and upper value, raises its lower value to within rel_tol, and leg B's new lower
    value stays below leg B's own certified upper value."""
    from sharpdp.shuffle.accountant.via_bottom_mirror import raise_lower

    acc = ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**8, "replace")
    vb = acc._bottom
    switch(monkeypatch, "VIA_BOTTOM_MIRROR", False)
    off = vb.report(0.01, acc.rel_tol)  # (main's report)
    best = vb._last
    monkeypatch.setattr(limits, "VIA_BOTTOM_MIRROR", True)
    on = raise_lower(vb, off, best, acc.rel_tol)
    assert on.upper == off.upper and on.terms["epsilon_split"] == off.terms["epsilon_split"]
    assert off.lower < on.lower <= on.upper
    assert (off.upper - off.lower) > 0.5 * off.lower  # (the miss this rule closes)
    assert on.upper - on.lower <= acc.rel_tol * on.lower
    assert best.leg_b.lower < on.terms["leg_b_mirror"] <= best.leg_b.upper


def test_small_n_cells_unchanged(monkeypatch):
    """Where the reported split meets rel_tol already (every cell of the regime map's family e measured), the report is
    the one of before, bit for bit."""
    for s, n, eps in ((1.0, 10**3, 1.0), (0.46, 10, 1.0), (4.6, 10**3, 1.0)):
        on = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(eps)
        switch(monkeypatch, "VIA_BOTTOM_MIRROR", False)
        off = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(eps)
        monkeypatch.setattr(limits, "VIA_BOTTOM_MIRROR", True)
        assert on == off


def test_leg_b_lower_rounds_down():
    """1 - e^{e}(1 - a) in 50 digits is at least leg_b_lower's value, which is within its rounding allowance (16 u of
    the product, 4 u absolute, and a few u for the operations themselves) of it."""
    mpmath.mp.dps = 50
    for a in (0.0636404, 0.5, 1e-9, 0.999999, 0.0):
        for e in (0.0, 1e-12, 0.009, 0.0624, 1.0, 30.0):
            exact = 1 - mpmath.e ** mpmath.mpf(e) * (1 - mpmath.mpf(a))
            got = leg_b_lower(a, e)
            assert got >= 0.0 and mpmath.mpf(got) <= max(exact, 0)
            assert mpmath.mpf(got) >= exact - 2.0**-53 * (24 * mpmath.e ** e * (1 - mpmath.mpf(a)) + 6)


def test_gates():
    from sharpdp.shuffle import BlanketMixedGaussian, RandomizedResponse

    rnd = GaussianRandomizer(0.5, 1)
    assert mirror_law(rnd, ((0,), (1,)), 0.1) is not None
    assert mirror_law(rnd, (None, None), 0.1) is None  # (legs as the maximum over all laws: no mirror pair)
    assert mirror_law(rnd, ((0,), (1,)), 61.0) is None
    assert mirror_law(BlanketMixedGaussian(0.2, 1.0, 1), ((0,), (1,)), 0.1) is None  # (gamma > 0: its own replace law)
    assert mirror_law(RandomizedResponse(2, 1.0), ((0,), (1,)), 0.1) is None
    assert mirror_law(GaussianRandomizer(0.02, 1), ((0,), (1,)), 0.1) is None  # (unit-bound laws, gamma 1)

    class Other(GaussianRandomizer):
        def privacy_amplification_laws(self, epsilon, adjacency="zero_out"):
            return super().privacy_amplification_laws(epsilon, adjacency)

    assert mirror_law(Other(0.5, 1), ((0,), (1,)), 0.1) is None  # (an override: its laws are not known to mirror)


def test_switch_off_is_identity(monkeypatch):
    """With the switch off raise_lower returns the report it is given (main's floats)."""
    from sharpdp.shuffle.accountant.via_bottom_mirror import raise_lower

    switch(monkeypatch, "VIA_BOTTOM_MIRROR", False)
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 100, "replace")
    rep = acc._bottom.report(0.5, acc.rel_tol)
    assert raise_lower(acc._bottom, rep, acc._bottom._last, 1e-9) is rep
