"""Review rev38 (session 38) of session 37's §51.4 (docs/accountant_tail.md, ``limits.CLOSED_WHOLE_ACCEPT``: at
n >= 1e8 the closed form returns its first stage within 0.8 rel_tol) at n = 1e9, against a reference tighter than the
bracket and independent of the accountant (rev37 had only main's rel_tol-1e-3 bracket and an FFT bracket of main).

Reference (the single-big-jump form with a Gaussian body): GaussianRandomizer(1), zero-out, x vs bot, where the other
n - 1 users' sum S' lies 14-2300 sd below 0 (eps >= 0.01 at n = 1e8, 1e9), D_up = E[S_+] / (n g) = E[SL(-S')] up to
the events of two large jumps, SL(t) = E[(L - t)_+] in closed form (tests/_review28_ak_reference.py's ``GaussXBot``),
S' ~ N((n - 1) g (1 - e^eps), (n - 1) Var(B L)) with E[r^2] = g^2 / 2 + g e^{4/s^2} Phi(3/s), by 200-point
Gauss-Hermite. Its error (the body's cumulants beyond the second, two jumps): SL's log-slope times the body's sd is
0.1 here, so the third cumulant moves it by ~1e-6 relative. Validated against main's (6d5c8782) certified rel_tol-1e-3
brackets at n = 1e8 (eps 0.01, 0.1, 0.5, 1: the reference lies inside each, 2.5e-5 - 7e-5 relative above its lower
value, the brackets 0.02-0.07 % wide).
Measured (rev38): n = 1e9, eps = 0.01 reference 1.7776154e-13; §51.4's bracket [1.7745877e-13, 1.7835256e-13]; main's
stage 3 [1.7775190e-13, 1.7790350e-13], rel_tol 1e-4 [1.7774371e-13, 1.7785172e-13] -- all hold it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from _review28_ak_reference import GaussXBot
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

# main's rel_tol-1e-3 brackets (GaussianRandomizer(1), zero-out)
MAIN_TIGHT = {(10**8, 0.01): (4.308484595359791e-10, 4.3113775089630213e-10),
              (10**8, 0.1): (1.499680053296988e-13, 1.4999438540104276e-13),
              (10**8, 0.5): (1.2796470693973987e-16, 1.27973627933401e-16),
              (10**8, 1.0): (2.088955240973411e-18, 2.089097228672707e-18)}
REL = 2e-4  # (a margin for the reference's approximation, estimated ~1e-6 relative; the brackets checked are 0.5 % wide)


def sbj_reference(s: float, n: int, eps: float, k: int = 200) -> float:
    """E[SL(-S')], S' the Gaussian body of the other n - 1 users (module docstring)."""
    G = GaussXBot(s, eps)
    g, E = G.g, G.E
    er2 = g * g / 2 + g * math.exp(4 / s ** 2) * special.ndtr(3 / s)
    var = g * (er2 - 2 * E + E * E) - (g * (1 - E)) ** 2
    m, sd = (n - 1) * g * (1 - E), math.sqrt((n - 1) * var)
    assert m / sd < -10.0  # (the body far below 0: one jump makes D_up)
    x, w = np.polynomial.hermite_e.hermegauss(k)
    t = -(m + sd * x)
    p, e = G.tail(t)
    return float(np.sum(w / math.sqrt(2 * math.pi) * (e - t * p)))


@pytest.mark.parametrize("cell", sorted(MAIN_TIGHT), ids=str)
def test_reference_inside_main_tight(cell):
    """The reference lies in main's certified rel_tol-1e-3 bracket (within REL)."""
    lo, up = MAIN_TIGHT[cell]
    v = sbj_reference(1.0, *cell)
    assert lo * (1 - REL) <= v <= up * (1 + REL), (cell, v, lo, up)


@pytest.mark.parametrize("n, eps", [(10**9, 0.01), (10**9, 0.1), (10**8, 0.01), (10**8, 0.1)])
def test_bracket_holds_the_reference(n, eps):
    """The default bracket (§51.4's at n = 1e9, eps = 0.01) holds the reference and meets rel_tol."""
    v = sbj_reference(1.0, n, eps)
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), n)
    lo, up = acc.get_delta_bounds(eps)
    assert lo <= v * (1 + REL) and up >= v * (1 - REL), (n, eps, lo, up, v)
    assert up - lo <= acc.rel_tol * lo
