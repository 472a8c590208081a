"""Review rev38 (session 38) of rev37's open item: BMG(0.0222, 0.582, 1), n = 5, replace, eps = 15.11 -- a finer rel_tol
gives a wider bracket (rel_tol <= 6e-3: [9.851660e-10, 1.077728e-9], 9.4 %; rel_tol 1e-2: [9.855387e-10, 9.887105e-10],
0.32 %; main 6d5c8782).

Why (rev38, ``report().terms``): both come from the few-user bracket of docs/accountant.md §6.8
(``closed_forms.small_n_bracket``). Its two-user quadrature runs only where the gap of the other terms (here the
three-user term j = 2, weight C(4, 2) g^2 (1 - g)^2 ~ 2.8e-3: a gap of ~0.31 % of the value) is within 0.5 rel_tol of
the value: at rel_tol 1e-2 it runs (0.32 %), at rel_tol <= 6e-3 it does not, the lattice engine cannot resolve this
law (e^eps = 3.65e6: its body upper value is 1.9e-6) and the report keeps the two-user term's cap E[L_+]: the upper
value 1.0777282793e-9 is E[L_+] itself. An accuracy miss (the 9.4 % bracket does not meet rel_tol), not an
under-report.

Reference (independent of the accountant): the blanket divergence of Theorem 1.3 for the antipodal pair, L = a +
b e^{rZ - r^2/2} + b' e^{-rZ - r^2/2} (a = g (1 - e^eps), b = 1 - g, b' = -(1 - g) e^eps, r = 1 / sigma0; L increasing
in Z), D_up = sum_m P(Bin(5, g) = m) E[(L_1 + ... + L_m)_+] / (5 g), by mpmath at 30 digits: E[L_+] = SL(0) and
E[(L_1 + L_2)_+] = E[SL(-L_1)] (adaptive quadrature over Z_1 on 16 pieces), SL(t) = E[(L - t)_+] in closed form at the
root of L(z) = t; the terms m >= 3 bounded by [0, m E[L_+]] ((S_m)_+ <= sum (L_i)_+). Result (rev38, 18 s):
E[L_+] = 1.0777282793507e-9, E[(L_1 + L_2)_+] = 9.8622026821e-12, D_up in [9.85575351136e-10, 9.88668690265e-10].
Both brackets hold that whole interval: no under-report at any rel_tol. E[L_+] is recomputed live here."""

from __future__ import annotations

import mpmath as mp
import pytest

from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches

G, S0, N, EPS = 0.0222, 0.582, 5, 15.11
REF = (9.85575351136e-10, 9.88668690265e-10)  # D_up's exact interval (m <= 2 exact, m >= 3 in [0, m E[L_+]])


def _e_plus() -> float:
    """E[L_+] of the antipodal pair's law by mpmath (the root of L(z) = 0 by bisection, 30 digits)."""
    mp.mp.dps = 30
    g, E, r = mp.mpf(G), mp.e ** mp.mpf(EPS), 1 / mp.mpf(S0)
    a, b, bm = g * (1 - E), 1 - g, -(1 - g) * E

    def L(z):
        return a + b * mp.e ** (r * z - r * r / 2) + bm * mp.e ** (-r * z - r * r / 2)

    z = mp.findroot(L, (mp.mpf(0), mp.mpf(30)), solver="bisect")
    Q = lambda x: mp.ncdf(-x)  # noqa: E731
    return float(a * Q(z) + b * Q(z - r) + bm * Q(z + r))


def test_cap_is_e_plus_and_bounds_the_reference():
    """E[L_+] recomputed (the wide bracket's upper value) is above D_up's whole reference interval."""
    e1 = _e_plus()
    assert abs(e1 - 1.0777282793507e-9) <= 1e-12 * e1
    assert e1 >= REF[1]


@pytest.mark.parametrize("rel_tol", [3e-2, 1e-2, 5e-3, 3e-3, 1e-3])
def test_bracket_holds_the_exact_interval(rel_tol, monkeypatch):
    """Lo <= D_up <= Up for every value D_up may take in the reference interval, at every rel_tol."""
    # (**) session 39, eps39: docs/accountant.md §8.17 (a), (c) prove D_up below REF[1] (the reference's own [0, m E[L_+]]
    # for m >= 3); with them on, tests/test_eps39_pair_split.py checks a tighter reference interval
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)
    switch(monkeypatch, "FEW_OPEN_JUMP", False)
    acc = ShuffleAccountant(BlanketMixedGaussian(G, S0, 1), N, "replace", rel_tol=rel_tol)
    lo, up = acc.get_delta_bounds(EPS)
    assert lo <= REF[0] and up >= REF[1], (rel_tol, lo, up, REF)


def test_finer_rel_tol_meets_it():
    """A finer rel_tol's bracket meets its rel_tol (failed on main 72b04806: 9.4 % at rel_tol 3e-3; passes with the
    pairs' form of docs/accountant.md §8.17, session 39)."""
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(G, S0, 1), N, "replace", rel_tol=3e-3)
    lo, up = acc.get_delta_bounds(EPS)
    assert up - lo <= 3e-3 * lo, (lo, up)
