"""Review rev31b of the export's accuracy rules of session 31 (exp31, docs/composition.md §2.12): ``cover`` capped at
(1 + tau) times the samples' certified lower values (``pair_accuracy.capped_cover``) and leg B's cliffs resolved on
Delta / 64 (``pair_legs.resolve_cliffs``); privacy_profile's progress bar ("the same floats").

Claims attacked: ``to_pld(acc)`` dominates (its delta at every eps >= the certified lower value of a fresh
rel_tol-1e-3 bracket of main 7b66b43, pinned below, and >= the brute-force replace delta at n = 2 of
tests/_rev30b_replace_reference.py) and is within 1 % above ``get_delta`` wherever delta >= 1e-12 (the cap may put it
a little below ``get_delta``: docs/composition.md §2.12, both certified; here it must stay >= the accountant's own
certified lower value for zero-out rounds); ``privacy_profile`` (any ``progress``) is main's float for float and above
the base lower values.

Measured by the review (branch exp31 at e7a1607; 40-point grids up to the eps of delta = 1e-12; ratio = PLD / get_delta):
GaussianRandomizer(s, 1) zero-out, s = 0.5 / 1 / 2 / 4.6: n = 2: 1.0020 / 1.0051 / 1.0075 / 1.0058; n = 3: 1.0045 /
1.0060 / 1.0063 / 1.0082; n = 10: 1.0056 / 1.0053 / - / 1.0069; the BMGs of calibrate_bmg at n = 100 (eps = 1) and 1e4
(eps = 0.01, 1): 1.0051, 1.0031, 1.0058; k-RR(2, 1) n = 100, k-RR(10, 4) n = 1e4, PrivUnit(0.75, 0.2, 10) n = 1e4
(replace): 1.0048, 1.0058, 1.0039; replace through bot n = 2: s = 1 1.0096, s = 2 1.0065. The lowest PLD / (main's
rel_tol-1e-3 lower value): 1.00004 (s = 0.5, n = 2, eps 13.0). No value below a reference.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from _rev30b_replace_reference import replace_delta_n2

from sharpdp.shuffle import GaussianRandomizer, RandomizedResponse, ShuffleAccountant, clear_caches
from _main_floats34 import machine_same, session34_floats, switch  # noqa: E402

pytest.importorskip("dp_accounting")
HAS_RULES = importlib.util.find_spec("sharpdp.shuffle.pair_accuracy") is not None
needs_rules = pytest.mark.skipif(not HAS_RULES, reason="the export's accuracy rules (exp31, docs/composition.md "
                                                       "§2.12) not in this build")

# (sigma0, n): main 7b66b43's certified lower values of a fresh rel_tol-1e-3 accountant (zero-out) at eps
BASE_LOWER = {
    (1.0, 2): [(0.35999815903929505, 0.3929815156365504), (2.15998895423577, 0.12924148646818825),
               (3.9599797494322457, 0.023725920157873604), (5.759970544628721, 0.0022525630534498513),
               (7.559961339825196, 0.00010541903889947757), (9.359952135021672, 2.362248123048918e-06),
               (11.159942930218147, 2.4877461615567632e-08), (12.959933725414622, 1.2158385417479052e-10)],
    (0.5, 3): [(0.8111197461484068, 0.7693954317534141), (4.866718476890441, 0.4038947695340735),
               (8.922317207632474, 0.10881938536964528), (12.977915938374508, 0.01296196827515192),
               (17.033514669116542, 0.0006290370628927737), (21.089113399858576, 1.1894602735231198e-05),
               (25.14471213060061, 8.54103673368443e-08), (29.200310861342643, 2.2922981731043883e-10)],
    (2.0, 2): [(0.16553129299398578, 0.16643318692723438), (0.9931877579639147, 0.037121108723174055),
               (1.8208442229338435, 0.005243003260630806), (2.6485006879037725, 0.00045819288136747245),
               (3.4761571528737014, 2.3165815192413063e-05), (4.30381361784363, 6.453708540576858e-07),
               (5.131470082813559, 9.63778769372658e-09), (5.959126547783488, 7.584103435308684e-11)],
}


def _pld(acc):
    from sharpdp.interop.dp_accounting import to_pld
    return to_pld(acc, progress=False)


def _grid_ratios(acc, pld, n_pts=24):
    """(eps, PLD delta, get_delta, the accountant's own lower value) on an even grid up to the eps of delta = 1e-12."""
    e12 = float(acc.get_epsilon(1e-12))
    eps = np.linspace(0.0, e12, n_pts + 1)[1:]
    lo, up = (np.asarray(x, float) for x in acc.get_delta_bounds(eps))
    pv = np.array([float(pld.get_delta_for_epsilon(float(e))) for e in eps])
    return eps, pv, up, lo


@pytest.mark.parametrize("s, n", sorted(BASE_LOWER))
def test_zero_out_export_dominates_and_is_within_one_percent(s, n):
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out")
    pld = _pld(acc)
    ref = BASE_LOWER[(s, n)]
    pv = np.array([float(pld.get_delta_for_epsilon(e)) for e, _ in ref])
    assert np.all(pv >= np.array([lo for _, lo in ref])), pv / np.array([lo for _, lo in ref])
    eps, pv, gd, lo = _grid_ratios(acc, pld)
    sel = gd >= 1e-12
    assert sel.sum() >= 10
    assert np.all(pv >= lo), (eps[pv < lo], (pv / lo)[pv < lo])
    if HAS_RULES:  # (the 1 % claim: a strict xfail of tests/test_review_rev30b_export.py before §2.12)
        r = pv[sel] / gd[sel]
        assert r.max() <= 1.01, (r.max(), eps[sel][np.argmax(r)])


@pytest.mark.parametrize("s", [1.0, 2.0])
def test_replace_n2_export_above_brute_force_and_within_one_percent(s):
    """Replace through bot, n = 2: the PLD's delta >= the brute-force replace delta (quadrature, <= 5e-4 relative,
    eps in [0, 4]) and <= 1.01 get_delta wherever get_delta >= 1e-12, the cliff of leg B included. (It may lie below
    get_delta's values at small eps: the pair's split bound is not the accountant's split search, docs/composition.md
    §2.1; through bot get_delta's lower value is no lower value of delta, docs/accountant.md §9.)"""
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), 2, "replace")
    pld = _pld(acc)
    eb = np.array([0.0, 0.1, 0.3, 0.6, 1.0, 1.5, 2.0, 3.0, 4.0])
    ref = np.maximum(replace_delta_n2(s, eb, -1.0), replace_delta_n2(s, eb, 1.0)) * (1 - 1e-3)
    pv = np.array([float(pld.get_delta_for_epsilon(float(e))) for e in eb])
    assert np.all(pv >= ref), pv / ref
    if HAS_RULES:
        e12 = float(acc.get_epsilon(1e-12))
        eps = np.linspace(0.0, e12, 25)[1:]
        gd = np.array([float(acc.get_delta(float(e))) for e in eps])
        sel = gd >= 1e-12
        pv = np.array([float(pld.get_delta_for_epsilon(float(e))) for e in eps[sel]])
        r = pv / gd[sel]
        assert r.max() <= 1.01, (r.max(), eps[sel][np.argmax(r)])


@needs_rules
def test_krr_replace_export_within_one_percent_and_above_its_lower_values():
    """A k-RR round (a proven replace pair, no bot): within 1 % above get_delta, never below its certified lower
    value (measured 1.0000 - 1.0048)."""
    clear_caches()
    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 100, "replace")
    pld = _pld(acc)
    eps, pv, gd, lo = _grid_ratios(acc, pld)
    sel = gd >= 1e-12
    assert np.all(pv >= lo)
    r = pv[sel] / gd[sel]
    assert r.max() <= 1.01, r.max()


# main 7b66b43's privacy_profile values (a fresh accountant, caches cleared)
PROFILE_MAIN = [
    ((1.0, 2, "zero_out"), [-1.0, 0.0, 0.5, 1.44, 3.0, 4.68, 8.0, 12.0],
     [0.7356915198747871, 0.46182644910616677, 0.36758634490623526, 0.21531737022506123, 0.06335883903276576,
      0.010118092434792841, 4.4710854237088744e-05, 2.286208141117563e-09]),
    ((1.0, 2, "replace"), [-2.0, 0.05, 1.0, 4.0, 13.616136312100489, 20.0],
     [0.9060637023126786, 0.9060916083774467, 0.5246868209258735, 0.07253299091613792, 5.617313910136428e-10,
      1.4017908802287858e-20]),
]


@pytest.mark.parametrize("cell, eps, ref", PROFILE_MAIN)
@pytest.mark.parametrize("progress", [None, False, True])
@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, pins session 33's floats on purpose; the new rules' values are checked against references in the session-34 files
def test_privacy_profile_is_mains_float_for_float(cell, eps, ref, progress, monkeypatch):
    from sharpdp.shuffle import profile
    session34_floats(monkeypatch)  # (**) session 35, lead: pins session 34's floats (or a mechanism of them) on purpose; the new rules' values: the session-35 test files
    switch(monkeypatch, "VIA_BOTTOM_CLOSED_EDGE", False)  # (**) session 37, lead: §9.14 moves the n = 2 replace values
    switch(monkeypatch, "REP49_SHRINK_STOP", False)  # (session 49, rep49: the bisection of before, stopped at its gain)
    s, n, adj = cell
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, adj)
    if "progress" in profile.privacy_profile.__code__.co_varnames:
        got = profile.privacy_profile(acc, eps, progress=progress)
    else:
        got = acc.privacy_profile(eps)
    assert machine_same([float(x) for x in np.asarray(got, float)], ref)  # (**) session 42, lead: MACHINE_REL
    if adj == "zero_out":
        lo = dict(BASE_LOWER[(1.0, 2)])
        pv = np.asarray(acc.privacy_profile([e for e in lo]), float)
        assert np.all(pv >= np.array(list(lo.values())))
