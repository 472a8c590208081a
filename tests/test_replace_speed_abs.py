"""Replace-one through bot: leg B of a split certified to an absolute target (docs/accountant.md §9.4;
ViaBottom.split, ViaBottom.leg, ViaBottom._contract).

The new values are checked against those of before (leg B to rel_tol alone: ABS_SHARE = 0 on a fresh
accountant): the new upper value is at least the old certified lower value (both bound the same chain) and
within 0.1 rel_tol (of A) of the old upper value; the reported bracket still meets rel_tol. The old values
are stored (tests/data/make_replace_speed_abs_reference.py); the cheapest is recomputed live and must match.
The legs are
checked against an independent zero-out accountant (its own caches), which shares no state with the replace
accountant."""

from __future__ import annotations

import functools
import json
import math
import pathlib
from types import SimpleNamespace

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from _main_floats34 import switch  # noqa: E402

# (sigma0, n, eps): cells where leg B is negligible at some split (cheap ones)
CELLS = [(1.0, 1000, 0.1), (3.0, 1000, 1.0), (1.0, 50, 4.0), (2.0, 100, 0.5)]
# (sigma0, n, delta) of the get_epsilon check
DECIDE = (3.0, 1000, 1e-6)


def _acc(sigma0: float, n: int, share: float | None = None, rel_tol: float = 1e-2) -> ShuffleAccountant:
    acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "replace", rel_tol=rel_tol)
    assert acc.via_bottom
    if share is not None:
        acc._bottom.ABS_SHARE = share  # (instance attribute: the class is untouched)
    return acc


@functools.lru_cache(maxsize=None)
def _new_report(sigma0: float, n: int, eps: float):
    """(accountant, its report at eps) of the current module (ABS_SHARE default), shared by the two tests that
    need the same report (a report is a frozen value object; the accountant's caches only memoise certified
    values; 0.4-1.7 s of CPU per cell)."""
    acc = _acc(sigma0, n)
    return acc, acc.report(eps)


@functools.lru_cache(maxsize=None)
def _stored() -> dict:
    """The old values (ABS_SHARE = 0 on a fresh accountant), stored by
    tests/data/make_replace_speed_abs_reference.py."""
    path = pathlib.Path(__file__).resolve().parent / "data" / "replace_speed_abs_reference.json"
    return json.loads(path.read_text())


def test_stored_old_values_are_current():
    """The cheapest stored old report (sigma0 = 3, n = 1000, eps = 1) recomputed live: a change of the
    engine's values shows up as a stale reference."""
    data = _stored()
    assert data["rel_tol"] == 1e-2
    assert [(r["sigma0"], r["n"], r["epsilon"]) for r in data["reports"]] == CELLS
    g = data["get_epsilon"]
    assert (g["sigma0"], g["n"], g["delta"]) == DECIDE
    row = data["reports"][1]
    live = _acc(row["sigma0"], row["n"], share=0.0).report(row["epsilon"])
    assert live.lower == pytest.approx(row["lower"], rel=1e-9) and live.upper == pytest.approx(row["upper"], rel=1e-9)


@pytest.mark.parametrize("sigma0,n,eps", CELLS)
def test_new_bracket_against_old(sigma0, n, eps, monkeypatch):
    switch(monkeypatch, "VIA_BOTTOM_FLOOR_STOP", False)  # (**) session 36, rep36: pins older values below VALUE_FLOOR (docs/accountant.md §9.13, rule 4, moves them there)
    new = _new_report(sigma0, n, eps)[1]
    old = next(SimpleNamespace(**r) for r in _stored()["reports"] if (r["sigma0"], r["n"], r["epsilon"]) == (sigma0, n, eps))
    rt = 1e-2
    assert new.upper >= old.lower * (1 - 1e-12), (new, old)
    assert new.upper <= old.upper * (1 + rt), (new.upper, old.upper)
    assert old.lower <= new.upper and new.lower <= old.upper  # the brackets meet
    if old.upper - old.lower <= rt * old.lower and new.lower >= 1e-24 and new.upper < 1.0:
        # the contract (targeted for values >= 1e-24): the reported bracket within rel_tol where it was before
        assert new.upper - new.lower <= rt * new.lower * (1 + 1e-9), (new.lower, new.upper)


@pytest.mark.parametrize("sigma0,n,eps", CELLS[:2])
def test_split_legs_against_an_independent_zero_out_accountant(sigma0, n, eps, monkeypatch):
    """At the reported split, the chain's upper value is >= the chain of the independent accountant's
    certified lower legs (each leg's D_up >= its lower value): the new value is an upper bound of the same
    chain, and leg B's upper value is either within rel_tol of its own lower value or below the absolute
    target 0.1 rel_tol A_lo(e1) / e^{e1}."""
    switch(monkeypatch, "VIA_BOTTOM_BUDGET", False)  # (**) session 35, rep35: pins the reported split's legs at rel_tol of §9.4 (docs/accountant.md §9.12's switch off)
    switch(monkeypatch, "VIA_BOTTOM_FLOOR_STOP", False)  # (**) session 36, rep36: pins §9.4's legs below VALUE_FLOOR too (docs/accountant.md §9.13, rule 4, reports a loose split there)
    acc = _acc(sigma0, n)
    rep = acc.report(eps)
    e1 = float(rep.terms["epsilon_split"])
    vb = acc._bottom
    e2 = vb._second(eps, e1)
    ref = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n, "zero_out")
    la = ref._report(e1, 1e-2, only=vb.legs[0])
    lb = ref._report(e2, 1e-2, only=vb.legs[1])
    chain_lo = la.lower + math.exp(e1) * lb.lower
    assert rep.upper >= chain_lo * (1 - 1e-12), (rep.upper, chain_lo)
    ra, rb = vb.leg(0, e1, 1e-2), vb.leg(1, e2, 1e-2, math.inf)  # (math.inf: any cached report serves)
    assert rb.upper >= lb.lower * (1 - 1e-12) and ra.upper >= la.lower * (1 - 1e-12)
    t = vb.ABS_SHARE * 1e-2 * ra.lower / math.exp(e1)
    assert rb.upper < t * (1 + 1e-9) or rb.upper - rb.lower <= 1e-2 * rb.lower * (1 + 1e-9), (rb, t)


def test_negligible_leg_stops_early_and_stays_an_upper_bound():
    """Gaussian sigma0 = 1, n = 1000, leg B at e2 = 0.56 (~4.5e-8, negligible next to A ~ 1e-3; at e2 = 0.66,
    ~5e-11, the rel_tol leg costs 2.7 s against 0.04 s here; docs/accountant.md §9.2): with an absolute target far
    above it the leg stops at its first certified upper value (below the target, above the value certified to
    rel_tol: it did stop early); with target 0 it is the report of before."""
    acc = _acc(1.0, 1000)
    vb = acc._bottom
    tight = ShuffleAccountant(GaussianRandomizer(1.0, 1), 1000, "zero_out")._report(0.56, 1e-2, only=vb.legs[1])
    loose = vb.leg(1, 0.56, 1e-2, 1e-6)
    assert loose.upper < 1e-6
    assert loose.upper >= tight.lower * (1 - 1e-12)
    assert loose.upper > tight.upper  # (the target was used: the refinement stopped before rel_tol)
    again = vb.leg(1, 0.56, 1e-2, 0.0)  # a smaller target: certified again, the values of before
    assert (again.lower, again.upper) == (tight.lower, tight.upper)
    assert vb.leg(1, 0.56, 1e-2, 1e-6) is again  # (the tighter report serves a looser request)


def test_decide_upper_values_against_old():
    """get_epsilon's decide path (§9.2) uses the absolute target: its answer stays within the accountant's
    rel_tol of the old one's delta and its get_delta at the answer is <= delta."""
    sigma0, n, delta = DECIDE
    new = _acc(sigma0, n)
    e_new = new.get_epsilon(delta)
    assert new.get_delta(e_new) <= delta
    e_old = _stored()["get_epsilon"]["epsilon"]  # (stored; ABS_SHARE = 0 on a fresh accountant)
    assert abs(e_new - e_old) <= 0.02 * e_old, (e_new, e_old)
