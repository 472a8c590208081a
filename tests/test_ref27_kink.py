"""ref27: the n = 2 quadrature of tests/_bmg_reference.py splits its outer integral at the inner stop-loss's kinks.

E[(L(y) + c)_+] (``Pair.stoploss``) changes form where L(y) reaches a branch end of c; the outer integrand is not
analytic there and mpmath's tanh-sinh quadrature, without a breakpoint, was off by 2.1e-5 (low) at BMG(0.1, 0.5),
eps 8, 1.6e-6 (low) at (0.3, 0.5), eps 2 and 3.4e-5 (high) at (0.3, 1.0), eps 4 (zero-out, x vs bot). The
references here are independent of the fix: the branch ends read off ``stoploss``'s own cases, and the value's
invariance when every piece of the quadrature is cut in 16 (a converged quadrature does not move).
"""

from __future__ import annotations

import mpmath as mp
import pytest

from _bmg_reference import Pair


@pytest.mark.parametrize("g, s, eps, kind", [(0.1, 0.5, 8.0, "xb"), (0.3, 0.5, 2.0, "xb"), (0.3, 0.5, 0.5, "bx"),
                                             (0.0, 0.5, 1.0, "xb0"), (0.0, 0.5, 1.0, "bx0"), (0.0, 0.3, 0.2, "bx0")])
def test_kinks_are_where_L_reaches_the_stoploss_branch_ends(g, s, eps, kind):
    """L(y_k) is a value of c where ``stoploss`` switches case (xb: a0 = g - e^eps + c = 0; bx: a0 = 1 - e^eps g + c
    = 0; xb0: k = (e^eps - c)/g0 in {0, 1}; bx0: k = (1 + c)/g0 in {0, e^eps}), one kink per branch end L reaches.
    Mutation caught: the factor 2 dropped from the xb kink (y_k = 1/2 + s^2 log((e^eps - g)/(1 - g)))."""
    with mp.workdps(30):
        p = Pair(g, s, eps, kind)
        ee = p.ee
        ends = {"xb": [ee - p.g], "bx": [ee * p.g - 1]}.get(kind)
        if ends is None:
            ends = [ee, ee - p.g0] if kind == "xb0" else [mp.mpf(-1), p.g0 * ee - 1]
        ks = p.kinks()
        assert len(ks) == len(ends)
        for y, c in zip(ks, ends):
            assert abs(p.L(y) - c) <= mp.mpf(10) ** -25 * max(1, abs(c)), (y, p.L(y), c)


@pytest.mark.parametrize("g, s, eps", [(0.1, 0.5, 8.0), (0.3, 0.5, 2.0), (0.3, 1.0, 4.0)])
def test_n2_quadrature_does_not_move_when_every_piece_is_cut_in_16(g, s, eps):
    """At 25 digits (the stored references' precision) D_2 moves by < 1e-12 relative when every piece is cut in 16
    (measured: <= 2e-26). Mutation caught: ``kinks`` returning [] (the old reference: it moved by 2.1e-5, 1.6e-6 and
    3.4e-5 at these cells)."""
    with mp.workdps(25):
        p = Pair(g, s, eps, "xb")
        one, fine = p.d2(), p.d2(split=16)
    assert abs(one - fine) <= 1e-12 * fine, (g, s, eps, one, fine)
