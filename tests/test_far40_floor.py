"""docs/accountant_tail.md §58 (session 40, far40): the far-tail treatment's accuracy floor.

References, independent of the new code: main c6d2e6a1's certified brackets (the treatment's lattice and FFT rounds,
pinned), the few-user terms' quadrature at n = 2, 3 (docs/accountant.md §6.8), conditional Monte Carlo with a
confidence interval (tests/_review28_ak_reference.py, from the mechanism's densities, not the library's laws) and the
law raised by hand (its value error). The hook of §58 in ``far_tail.try_certify`` is requested from the lead; the
end-to-end tests install it by wrapping ``try_certify`` where the code lacks it (bench/bench_far40_floor.py).
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import copy
import math
import os
import sys

import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.closed_forms import small_n_bracket
from sharpdp.shuffle.accountant.far_tail_floor import body_dominated, fine_cap, floor_bracket
from sharpdp.shuffle.accountant.far_tail_grid import normal_value
from sharpdp.shuffle.laws import LognormalLaw, laws_for

from _main_floats34 import switch
from _review28_ak_reference import GaussXBot, d_up_ak

# main c6d2e6a1's get_delta_bounds (zero-out, rel_tol 1e-2): the far-tail rounds' certified brackets
MAIN_G2 = (9.949338522402655e-25, 2.447723363068457e-22)  # GaussianRandomizer(2), n = 1e8, eps = 0.001 (2.7 s)
MAIN_BMG = (6.033577778378318e-50, 9.862919737360442e-26)  # BlanketMixedGaussian(0.394, 1.15), n = 1e8, eps = 0.001


def _hook(monkeypatch) -> None:
    """§58's two lines at the top of ``far_tail.try_certify`` (docs/accountant_tail.md §58.1), where absent
    (bench/bench_far40_floor.py's ``install_hook``, undone by monkeypatch)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "bench"))
    try:
        from bench_far40_floor import install_hook
    finally:
        sys.path.pop(0)
    install_hook(monkeypatch.setattr)


def _law(rz, eps: float, i: int = 0):
    gamma, law = laws_for(rz, eps, "zero_out")[i]
    return float(gamma), law


def test_target_cell_bracket_against_mains():
    """GaussianRandomizer(2), n = 1e8, eps = 0.001: a bracket below 1e-15 meeting main's certified one; the finer cap
    (5.1e-20 at 2^15 nodes, 9.3e-23 at 2^16: below main's upper value) well under the coarse cap's 4.4e-16."""
    g, law = _law(sh.GaussianRandomizer(2.0, 1), 1e-3)
    assert body_dominated(law, g, 10**8)
    r = floor_bracket(law, g, 10**8)
    assert r is not None and 0.0 < r.lower <= r.upper < 1e-15
    assert r.lower <= MAIN_G2[1] and r.upper >= MAIN_G2[0]  # both contain D_up
    assert r.upper < 1e-19
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(limits, "FLOOR_NODES", 1 << 16)
        assert MAIN_G2[0] <= floor_bracket(law, g, 10**8).upper < MAIN_G2[1]


def test_end_to_end_with_the_hook(monkeypatch):
    _hook(monkeypatch)
    lo, up = sh.ShuffleAccountant(sh.GaussianRandomizer(2.0, 1), 10**8, "zero_out").get_delta_bounds(1e-3)
    assert 0.0 < lo <= up < 1e-15 and lo <= MAIN_G2[1] and up >= MAIN_G2[0]
    lo, up = sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.394, 1.15, 1), 10**8, "zero_out").get_delta_bounds(1e-3)
    assert lo <= MAIN_BMG[1] and up >= MAIN_BMG[0] and up < 1e-15


def test_switch_off_gives_mains_floats(monkeypatch):
    """``FLOOR_TARGET = 0``: the rule is off, the hook a no-op (main's floats bit for bit)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "FLOOR_TARGET", 0.0)
    _hook(monkeypatch)
    g, law = _law(sh.GaussianRandomizer(2.0, 1), 1e-3)
    assert not body_dominated(law, g, 10**8) and floor_bracket(law, g, 10**8) is None
    acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.394, 1.15, 1), 10**8, "zero_out")
    assert acc.get_delta_bounds(1e-3) == MAIN_BMG


@pytest.mark.parametrize("rz,eps,n", [(sh.GaussianRandomizer(1.0, 1), 2.0, 10**8),  # jump-dominated (one jump 5.6e-21)
                                      (sh.GaussianRandomizer(1.0, 1), 4.0, 10**8),
                                      (sh.GaussianRandomizer(2.0, 1), 1e-3, 10**7),  # value 2.2e-7
                                      (sh.GaussianRandomizer(2.0, 1), 1e-3, 10**6),  # n below FLOOR_N
                                      (sh.GaussianRandomizer(0.5, 1), 0.1, 10**8)])
def test_gate_declines(rz, eps, n):
    for g, law in laws_for(rz, eps, "zero_out"):
        assert floor_bracket(law, float(g), n) is None


def test_bounded_above_law_declines():
    g, law = _law(sh.GaussianRandomizer(2.0, 1), 1e-3, 1)
    assert math.isfinite(law.support()[1]) and not body_dominated(law, g, 10**8)


@pytest.mark.parametrize("s,eps", [(1.0, 1.0), (2.0, 0.5), (0.5, 2.0)])
@pytest.mark.parametrize("n", [2, 3])
def test_fine_cap_above_the_few_user_quadrature(s, eps, n):
    """fine_cap at n = 2, 3 against the few-user terms' certified bracket (docs/accountant.md §6.8: quadrature); a
    Chernoff value of a heavy-tailed law at n = 2 is loose (validity only)."""
    g, law = _law(sh.GaussianRandomizer(s, 1), eps)
    jb = small_n_bracket(law, g, n, 1e-3)
    assert jb is not None and jb[0] > 0.0
    for tail in (1e-3 * jb[0], 1e-8):
        up = fine_cap(law, g, n, tail)
        assert jb[0] <= up < math.inf


@pytest.mark.parametrize("s,eps,n", [(1.0, 1.0, 300), (2.0, 0.5, 300)])
def test_fine_cap_above_monte_carlo(s, eps, n):
    """Conditional Monte Carlo of the x-vs-bot law from its densities (5 standard errors)."""
    g, law = _law(sh.GaussianRandomizer(s, 1), eps)
    ref = GaussXBot(s, eps)
    assert abs(ref.g - g) <= 1e-12
    mean, se = d_up_ak(ref, ref.g, n, 2000)
    up = fine_cap(law, g, n, 1e-3 * mean)
    assert mean - 5.0 * se <= up < math.inf  # (a Chernoff value of a heavy-tailed law at n = 300: valid, not tight)


@pytest.mark.parametrize("c", [1e-4, 1e-2])
def test_fine_cap_charges_the_value_error(c):
    """A law stated with value error c: fine_cap bounds the law raised by hand (docs/accountant_tail.md §12), whose
    values dominate every law within c of the stored one (its lower value by the few-user quadrature at n = 3)."""
    gamma, law = laws_for(sh.BlanketMixedGaussian(0.056, 0.52, 1), 1.0, "zero_out")[0]
    assert isinstance(law, LognormalLaw)
    stated = copy.copy(law)
    stated.value_error = c
    raised = LognormalLaw(law.a + c, law.b, law.r, law.z_lo, law.weight, law.b_minus)
    jb = small_n_bracket(raised, float(gamma), 3, 1e-3)
    assert jb is not None and fine_cap(stated, float(gamma), 3, 1e-6 * jb[0]) >= jb[0]


def test_normal_estimate_only_gates():
    """The estimate sets the clamp of fine_cap, not validity: any tail gives a certified (larger or smaller) value."""
    g, law = _law(sh.GaussianRandomizer(2.0, 1), 1e-3)
    est = normal_value(law, g, 10**8)
    for f in (1e3, 1.0):
        assert fine_cap(law, g, 10**8, f * est) >= MAIN_G2[0]
    assert fine_cap(law, g, 10**8, 0.0) == math.inf
