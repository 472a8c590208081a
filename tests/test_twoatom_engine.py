"""The exact two-atom engine inside the accountant (docs/accountant_atoms.md §12.6-§12.7): get_delta's
bracket inside the lattice engine's and around scipy's exact sum, get_epsilon's answers certified and
tight against the exact sum, the lattice switch, and n = 1e8."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _krr_reference import exact_two_atom

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.driver import certify, exact_two_atoms, lattice_for_two_atoms
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.laws import laws_for

DELTA = 1e-6


def exact_delta(e0: float, n: int, adj: str, eps: float) -> float:
    """max over the laws of scipy's exact sum (uncertified; ~1e-12 relative here)."""
    return max(exact_two_atom(float(g), law.values, law.probs, n) for g, law in laws_for(RandomizedResponse(2, e0), eps, adj))


@pytest.mark.parametrize("e0, n, eps", [(1.0, 1000, 0.12), (0.5, 10_000, 0.015), (4.0, 3000, 0.6), (2.0, 10_000, 0.1)])
@pytest.mark.parametrize("adj", ["replace", "zero_out"])
def test_get_delta_bracket_inside_the_lattice_engines(e0, n, eps, adj):
    rr = RandomizedResponse(2, e0)
    lo, up = ShuffleAccountant(rr, n, adj).get_delta_bounds(eps)
    with lattice_for_two_atoms():
        lo_o, up_o = ShuffleAccountant(rr, n, adj).get_delta_bounds(eps)
    ex = exact_delta(e0, n, adj, eps)
    assert lo_o <= lo <= up <= up_o
    assert lo * (1 - 1e-11) <= ex <= up * (1 + 1e-11)
    assert up - lo <= 1e-7 * lo < up_o - lo_o  # (the old bracket ~1e-2 wide, the new ~1e-9)


@pytest.mark.parametrize("e0, n", [(0.5, 1000), (1.0, 100_000), (4.0, 10_000), (2.0, 1_000_000)])
@pytest.mark.parametrize("adj", ["replace", "zero_out"])
def test_get_epsilon_certified_and_tight(e0, n, adj):
    rr = RandomizedResponse(2, e0)
    e = ShuffleAccountant(rr, n, adj).get_epsilon(DELTA)
    assert ShuffleAccountant(rr, n, adj).get_delta(e) <= DELTA
    assert exact_delta(e0, n, adj, e) <= DELTA < exact_delta(e0, n, adj, e * (1 - 2e-3))
    # within the lattice engine's xtol bracket (docs/accountant_atoms.md §12.7)
    with lattice_for_two_atoms():  # (and the lattice search of docs/accountant_atoms.md §10-§11 stays certified)
        e_old = ShuffleAccountant(rr, n, adj).get_epsilon(DELTA)
        assert ShuffleAccountant(rr, n, adj).get_delta(e_old) <= DELTA
    assert exact_delta(e0, n, adj, e_old) <= DELTA
    assert abs(e / e_old - 1) <= 1e-3


def test_switch_selects_the_engine():
    g, law = laws_for(RandomizedResponse(2, 1.0), 0.05, "replace")[0]
    assert exact_two_atoms()
    new = certify(law, float(g), 10_000, 1e-2, 1, Bracket())
    with lattice_for_two_atoms():
        assert not exact_two_atoms()
        old = certify(law, float(g), 10_000, 1e-2, 1, Bracket())
    assert exact_two_atoms()
    assert "two-atom" in new.terms["note"] and old.grid is not None and "note" not in old.terms
    assert old.lower <= new.lower <= new.upper <= old.upper


def test_n_1e8_against_the_scipy_sum():
    n, e0, eps = 10**8, 1.0, 5e-4
    g, law = laws_for(RandomizedResponse(2, e0), eps, "replace")[0]
    r = certify(law, float(g), n, 1e-2, 1, Bracket())
    ex = exact_two_atom(float(g), law.values, law.probs, n)
    assert 1e-12 < ex and r.lower * (1 - 1e-9) <= ex <= r.upper * (1 + 1e-9)
    assert r.upper - r.lower <= 1e-6 * r.lower


def test_krr_zero_out_get_delta_takes_the_exact_sum():
    rr = RandomizedResponse(5, 1.0)
    acc = ShuffleAccountant(rr, 5000, "zero_out")
    rep = acc.report(0.05)
    assert "two-atom" in rep.terms["note"]
    ex = max(exact_two_atom(float(g), law.values, law.probs, 5000) for g, law in laws_for(rr, 0.05, "zero_out")
             if law.support()[1] > 0)
    assert rep.lower * (1 - 1e-11) <= ex <= rep.upper * (1 + 1e-11) and math.isfinite(rep.upper)
    assert rep.upper - rep.lower <= 1e-6 * rep.lower
    assert np.isfinite(acc.get_epsilon(DELTA))
