"""The far-tail treatment's count clamp for laws bounded above with a heavy left tail (the Gaussian randomizer's
and the BMG's bot-vs-x law; docs/accountant_tail.md §8, "B for a law bounded above"), against references
independent of it: mpmath quadrature of D_up at n = 2, 3 and the plain engine at n = 100, 1000."""

from __future__ import annotations

import mpmath as mp
import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.accountant.driver import Bracket
from sharpdp.shuffle.accountant.plain import certify_law_mode
from sharpdp.shuffle.laws import laws_for


def _bx(sigma0: float, eps: float):
    """(gamma, law) of the bot-vs-x order (the second zero-out law, docs/worst_case_pairs.md §4)."""
    return laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[1]


def _quad_bx(sigma0: float, eps: float, n: int) -> float:
    """D_up of the bot-vs-x law at n = 2 or 3 by mpmath (docs/worst_case_pairs.md §4): L = c0 = 1 - e^eps g with
    probability 1/2, else l(z) = 1 - e^eps g e^{r z - r^2/2} with z of density phi(z)/g on z > 1/s (r = 2/s);
    tau(t) = E[(L - t)_+] in closed form, E[(L_1 + ... + L_k)_+] = E tau(-(L_2 + ... + L_k)) by quadrature over
    the atom / continuous cases, and D_up = sum_k C(n, k) g^k (1 - g)^(n - k) E[(L_1 + ... + L_k)_+] / (n g)."""
    mp.mp.dps = 20
    s, e = mp.mpf(sigma0), mp.mpf(eps)
    g = mp.erfc(1 / (s * mp.sqrt(2)))
    r, zl, ee = 2 / s, 1 / s, mp.e ** e
    c0, k = 1 - ee * g, ee * g * mp.e ** (-r * r / 2)  # l(zl) = c0: the atom sits at the top of the support

    def ell(z):
        return 1 - k * mp.e ** (r * z)

    def z_at(v):  # l(z) = v
        return mp.log((1 - v) / k) / r

    def tau(t):
        if t >= c0:
            return mp.mpf(0)
        zs = z_at(t)
        return (c0 - t) / 2 + ((1 - t) * (mp.ncdf(zs) - mp.ncdf(zl))
                               - k * mp.e ** (r * r / 2) * (mp.ncdf(zs - r) - mp.ncdf(zl - r))) / g

    def cont(f, top):  # E[f(l(z)); continuous part] over z in (zl, z_at(top)) (f = 0 beyond)
        zt = z_at(top)
        return mp.quad(lambda z: f(ell(z)) * mp.npdf(z), [zl, zt]) / g if zt > zl else mp.mpf(0)

    terms = [tau(0), tau(-c0) / 2 + cont(lambda v: tau(-v), -c0)]
    if n == 3:
        terms.append(tau(-2 * c0) / 4 + cont(lambda v: tau(-(c0 + v)), -2 * c0)
                     + cont(lambda v: cont(lambda w: tau(-(v + w)), -c0 - v), -2 * c0))
    return float(sum(mp.binomial(n, j) * g ** j * (1 - g) ** (n - j) * terms[j - 1] for j in range(1, n + 1))
                 / (n * g))


@pytest.mark.parametrize("n", [2, 3])
def test_bottom_vs_x_against_quadrature(n):
    """The far-tail bracket (count clamp B = 19, 21) holds the quadrature value and is within 1e-5 of it (the
    drift rule's clamp B ~ 5e6 left the step at 16, the lattice's coarsest: a bracket of ~4 % at n = 3)."""
    gamma, law = _bx(0.5, 0.01)
    ref = _quad_bx(0.5, 0.01, n)
    r = far_tail.try_certify(law, gamma, n, 1e-4, 1)
    assert r is not None  # (the heavy-tail switch: the far-tail path)
    assert r.lower <= ref <= r.upper
    assert r.upper - r.lower <= 1e-5 * ref


@pytest.mark.parametrize("n,eps", [(100, 0.01), (1000, 0.01), (100, 0.5), (10000, 0.5)])
def test_bottom_vs_x_against_the_plain_engine(n, eps):
    """Far-tail bracket at rel_tol 1e-3 within 1e-3 and overlapping the plain engine's (an independent pipeline:
    the clamp paid in full, docs/accountant.md §3-§4) at rel_tol 1e-4."""
    gamma, law = _bx(0.5, eps)
    ft = far_tail.try_certify(law, gamma, n, 1e-3, 1)
    pl = certify_law_mode(law, gamma, n, 1e-4, 1, Bracket())
    assert ft is not None and ft.lower > 0.0 and pl.lower > 0.0
    assert ft.upper - ft.lower <= 1e-3 * ft.lower
    assert ft.lower <= pl.upper and pl.lower <= ft.upper


@pytest.mark.parametrize("n,expect", [(100, 0.7280), (1000, 0.5587)])
def test_small_eps_gap_of_the_regime_map(n, expect):
    """The regime map's (bench/README.md) GaussianRandomizer(0.5) zero-out at eps = 0.01 was bracketed 7.2 % / 5.8 % wide (the bot-vs-x
    law's upper value from the lattice's coarsest step); now within the 1 % goal, near the x-vs-bot value."""
    lo, up = ShuffleAccountant(GaussianRandomizer(0.5, 1), n).get_delta_bounds(0.01)
    assert 0.0 < lo <= up <= lo * 1.01
    assert lo == pytest.approx(expect, rel=1e-3)
