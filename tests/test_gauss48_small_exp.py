"""Session 48 (gauss48): the lognormal cells' small-argument exp / expm1 by Taylor polynomials
(docs/accountant_tail.md §76, Lemma 76.1; switch ``limits.GAUSS48_SMALL_EXP``, rule bit 2 of the kernel).

* Lemma 76.1: ``exp_small`` / ``expm1_small`` within 4u relative of mpmath's exp / expm1 on |y| <= 2^-7 (random,
  log-uniform down to subnormals, the tier boundaries 2^-13 and 2^-7 and their neighbours, +-0).
* The kernel's cells with the rule bit on lie within their own bounds of the exact values (mpmath on the kernel's
  V-edges), as rev42's test checks for main's rule; the bit moves values (so the path runs) by far less than the bounds.
* The switch reaches the kernel through ``cells_rule.two_node`` and ``LognormalLaw.cells``; a whole call's bracket
  (GaussianRandomizer(0.5), n = 1e8, eps = 0.01) stays within 1e-12 relative (measured: the same doubles).
"""

from __future__ import annotations

import numpy as np
import pytest
from _main_floats34 import machine_same, switch
from mpmath import mp, mpf, ncdf
from mpmath import exp as mexp
from mpmath import expm1 as mexpm1

U = 2.0**-53


def _core():
    from sharpdp._core_loader import core

    return core.accountant


def _arguments() -> np.ndarray:
    rng = np.random.default_rng(48)
    uni = rng.uniform(-(2.0**-7), 2.0**-7, 3000)
    mags = 10.0 ** rng.uniform(-320, np.log10(2.0**-7), 3000)
    logu = mags * rng.choice([-1.0, 1.0], mags.size)
    edges = []
    for e in (2.0**-13, 2.0**-7):
        for s in (-1.0, 1.0):
            x = s * e
            edges += [x, np.nextafter(x, 0.0), np.nextafter(np.nextafter(x, 0.0), 0.0)]
    edges += [np.nextafter(2.0**-13, 1.0), -np.nextafter(2.0**-13, 1.0), 5e-324, -5e-324, 2.0**-1022, 1e-17, -1e-17]
    return np.concatenate([uni, logu, np.array(edges)])


@pytest.mark.parametrize("m1", [False, True])
def test_lemma_76_1_against_mpmath(m1):
    """|p(y) - f(y)| <= 4u |f(y)| for f = exp (m1 False) or expm1 (m1 True), |y| <= 2^-7 (measured <= 2.1u)."""
    y = _arguments()
    got = _core().lognormal_small_exp(y, m1)
    mp.dps = 40
    worst = 0.0
    for yi, gi in zip(y.tolist(), got.tolist()):
        exact = mexpm1(mpf(yi)) if m1 else mexp(mpf(yi))
        rel = abs(mpf(gi) - exact) / abs(exact) if exact != 0 else abs(mpf(gi))
        worst = max(worst, float(rel))
    assert worst <= 4 * U, worst / U
    # (a polynomial that is not exp / expm1 fails by far: the lemma's bound is tight enough to see a wrong coefficient)
    assert worst > 0.0


def test_zero_and_sign():
    """expm1_small(+-0) = +-0 exactly (libm's expm1 too), exp_small(+-0) = 1."""
    out = _core().lognormal_small_exp(np.array([0.0, -0.0]), True)
    assert out[0] == 0.0 and not np.signbit(out[0]) and out[1] == 0.0 and np.signbit(out[1])
    assert np.all(_core().lognormal_small_exp(np.array([0.0, -0.0]), False) == 1.0)


@pytest.mark.parametrize("bad", [2.0**-7 * (1 + 2.0**-52), -0.5, np.nan, np.inf])
def test_binding_rejects_large_arguments(bad):
    with pytest.raises(ValueError, match="2\\^-7"):
        _core().lognormal_small_exp(np.array([0.001, bad]), False)


# (a, G, S, r, x0, h, K): one-term laws (G or S zero) and a two-term one, grids fine enough that most narrow cells take
# the 2-point tier (rule bit 1) and some the 3-, 4- and 8-point rules
LAWS = [(0.0, 1.0, 0.0, 1.0, 0.9, 1e-4, 400), (-0.8, 0.8, 0.0, 1.28, 0.0, 2e-5, 400),
        (0.0, 1.0, 0.0, 3.0, 0.05, 2e-6, 300), (1.0, 0.0, 0.05, 4.0, 0.9, 4e-5, 300),
        (0.1, 0.6, 0.3, 0.7, 0.2, 1e-4, 300), (0.0, 1.0, 0.0, 1.0, 0.5, 0.01, 150)]


def _cells(law, rule: int):
    a, G, S, r, x0, h, K = law
    return _core().lognormal_cells(a, G, S, r, -np.inf, np.inf, 1.0, x0, h, K, rule)


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("rule", [2, 3])
def test_cells_within_their_bounds(law, rule):
    """The cells with rule bit 2 (and bit 1): |m - exact| <= em and |w - exact| <= ew, the exact values by mpmath on
    the kernel's own V-edges (``lognormal_v``: the cells are certified for those edges, docs/accountant.md §3.2.1)."""
    a, G, S, r, x0, h, K = law
    m, w, em, ew = _cells(law, rule)
    mp.dps = 50
    xs = x0 + h * np.arange(K + 1, dtype=float)
    vs = _core().lognormal_v(a, G, S, r, xs)
    worst = 0.0
    for k in range(K):
        v0, v1 = mpf(float(vs[k])), mpf(float(vs[k + 1]))
        if not v1 > v0:
            continue
        me = ncdf(v1) - ncdf(v0)
        rr = mpf(r)
        mom = (a - mpf(float(xs[k]))) * me + G * (ncdf(v1 - rr) - ncdf(v0 - rr)) - S * (ncdf(v1 + rr) - ncdf(v0 + rr))
        we = min(mom / h, me)  # (the hat weight min(E[L - x_j; cell] / h, m), as the kernel's)
        dm, dw = abs(mpf(float(m[k])) - me), abs(mpf(float(w[k])) - we)
        assert dm <= em[k] and dw <= ew[k], k
        worst = max(worst, float(dm / em[k]) if em[k] > 0 else 0.0)
    assert worst < 0.5


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("few", [0, 1])
def test_rule_moves_values_inside_the_bounds(law, few):
    """Bit 2 against the same rule without it: the bounds em, ew are the same formulas of nearly the same values, the
    masses and weights move by less than 1e-3 of them, and some cells move (the polynomial path runs)."""
    old = _cells(law, few)
    new = _cells(law, few | 2)
    m0, w0, em0, ew0 = old
    m1, w1, em1, ew1 = new
    assert np.all(np.abs(m1 - m0) <= 1e-3 * em0 + 1e-300)
    assert np.all(np.abs(w1 - w0) <= 1e-3 * ew0 + 1e-300)
    assert np.allclose(em1, em0, rtol=1e-12, atol=0) and np.allclose(ew1, ew0, rtol=1e-12, atol=0)


def test_rule_bit_changes_some_cells():
    """The polynomial path is taken: hat weights move in their last bits (measured 109 of 400 cells; the masses, from
    exp_small alone, which differs from glibc's exp in ~0.2 % of arguments, did not move here)."""
    law = LAWS[1]
    moved = np.count_nonzero(_cells(law, 3)[1] != _cells(law, 1)[1])
    assert moved > 10


def test_switch_reaches_kernel_rule(monkeypatch):
    from sharpdp.shuffle.accountant import cells_rule, limits

    switch(monkeypatch, "GAUSS48_SMALL_EXP", False)
    base = cells_rule.two_node()
    assert base & 2 == 0
    switch(monkeypatch, "GAUSS48_SMALL_EXP", True)
    assert cells_rule.two_node() == base | 2
    assert limits.GAUSS48_SMALL_EXP is True


def test_whole_call_on_and_off(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e8, eps = 0.01 (the regime map's cause-2 cell): off = session 47's bracket (recorded
    natively here; ``machine_same``); on, a bracket within 1e-12 relative of it (each certified by the same proof,
    §76.1)."""
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    def bracket():
        return ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**8, "zero_out").get_delta_bounds(0.01)

    switch(monkeypatch, "GAUSS48_SMALL_EXP", False)
    lo0, up0 = bracket()
    assert machine_same((lo0, up0), ("0x1.a9bc688f33d17p-6", "0x1.adb5b83694710p-6"))  # (session 47's, this machine)
    switch(monkeypatch, "GAUSS48_SMALL_EXP", True)
    lo1, up1 = bracket()
    assert lo1 <= up1 and lo1 <= up0 and lo0 <= up1
    assert abs(lo1 - lo0) <= 1e-12 * lo0 and abs(up1 - up0) <= 1e-12 * up0


def test_law_cells_follow_the_switch(monkeypatch):
    """``LognormalLaw.cells`` calls the kernel with rule 3 where the switch is on (CELLS_FEW_NODES on), rule 1 where off;
    the kept cells follow the switch."""
    from sharpdp.shuffle.laws.lognormal import LognormalLaw

    law = LognormalLaw(-0.8, 0.8, 1.28)
    x0, h, K = 0.0, 2e-5, 400
    a = _core()
    for on, rule in ((False, 1), (True, 3), (False, 1)):
        switch(monkeypatch, "GAUSS48_SMALL_EXP", on)
        got = law.cells(x0, h, K)
        want = a.lognormal_cells(law.a, law._G, law._S, law.r, law._vlo, law._vhi, law.weight, x0, h, K, rule)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), on
