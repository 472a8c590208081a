"""Review rev32b of session 32's get_epsilon change (eps32, docs/accountant.md §8.12: the single big jump's certified
lower value of D_up, ``accountant.jump_lower``, tried before the loose pass in the check that rules out the answer 0).

Claims attacked: ``jump_lower`` is a lower value of D_up (so of every certified upper value at that eps or below);
get_epsilon's answers are main 15710f7's floats (the check only decides whether the loose pass runs); each answer's
fresh certified delta is <= delta, including at targets next to get_delta(0) (where the answer-0 check decides).

References: D_up of the BMG's x-vs-bot law at n = 2, 3 by quadrature from the mechanism (tests/_rev32b_bmg_dup.py's
closed-form stop-loss inside an adaptive quadrature; no sharpdp code), the accountant's certified upper values at
rel_tol 1e-3, and main 15710f7's get_epsilon floats (computed by /work/venv/main, a fresh accountant per call, caches
cleared).

What held (review sweep): jump_lower_max on 863 (cell, eps) pairs (BMGs of the regime map's family (a) at
n = 1e2-1e6 and four cells at 1e8-1e9, GaussianRandomizer sigma0 in {0.5, 1, 2, 4.6} and k-RR (both adjacencies) at
n = 1e2, 1e4, 1e6, PrivUnit, eps 0-12) never exceeded the certified upper value at rel_tol 1e-3 on the 650 pairs with
a value > 1e-40 (largest ratio 0.99998, the BMG at n = 1e9, eps 4-8, where it is within 5e-7 of the certified lower
value); get_epsilon's answers equal main's floats bit for bit on the cells and targets compared (see the report).
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest
from _main_floats34 import machine_same, switch

from sharpdp.shuffle import (BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant,
                             clear_caches)
from sharpdp.shuffle.laws import laws_for

from _rev32b_bmg_dup import dup_bmg

JL = pytest.importorskip("sharpdp.shuffle.accountant.jump_lower")  # (eps32's module: skip before its merge)


@pytest.mark.parametrize("g, s0, eps", [(0.3, 1.2, 1.0), (0.05, 0.5, 2.0), (0.8, 3.0, 0.1), (0.15, 0.8, 4.0),
                                         (0.02, 0.4, 8.0)])
@pytest.mark.parametrize("n", (2, 3))
def test_jump_lower_below_quadrature_dup(g, s0, eps, n):
    """The x-vs-bot law (laws_for's first) of the BMG: jump_lower <= D_up by quadrature (measured 0.22-0.99 of it)."""
    gamma, law = laws_for(BlanketMixedGaussian(g, s0, 1), eps, "zero_out")[0]
    ref = dup_bmg(g, s0, eps, n)
    low = JL.jump_lower(law, float(gamma), n)
    assert 0.0 < low <= ref * (1.0 - 1e-9), (low, ref)


@pytest.mark.parametrize("make, n, adj, eps", [
    (lambda: BlanketMixedGaussian(0.00984165021750001, 0.3569944638873869, 1), 10**9, "zero_out", 8.0),
    (lambda: BlanketMixedGaussian(0.00435827979685098, 0.2747133577606459, 1), 10**9, "zero_out", 8.0),
    (lambda: GaussianRandomizer(0.5, 1), 10**6, "zero_out", 8.0),
    (lambda: GaussianRandomizer(1.0, 1), 10**6, "zero_out", 3.0),
    (lambda: RandomizedResponse(10, 8.0), 100, "zero_out", 0.0),
    (lambda: RandomizedResponse(2, 4.0), 10**4, "replace", 0.1),
])
def test_jump_lower_below_certified_upper_where_tightest(make, n, adj, eps):
    """The review sweep's tightest cells (jump_lower / certified upper 0.99995-0.99998 for the first four)."""
    clear_caches()
    r = make()
    low = JL.jump_lower_max(laws_for(r, eps, adj), n)
    lo, up = ShuffleAccountant(r, n, adj, rel_tol=1e-3).get_delta_bounds(eps)
    assert low <= up, (low, lo, up)
    clear_caches()


# (cell, [(delta, main 15710f7's get_epsilon(delta))]): targets 1e-3, 1e-6, 1e-10 and next to d0 = get_delta(0)
# (d0 (1 + 1e-9): answer 0; d0 (1 - 1e-9), d0 / 2: the answer-0 check decides)
BMG = {  # (the regime map's family (a) BMGs: calibrate_bmg(n, eps, 1e-6, 1))
    (100, 1.0): (0.22405382380428362, 1.238876346499956),
    (10**4, 1.0): (0.06533759782895081, 0.7226842587005222),
    (10**5, 2.0): (0.032030007469211905, 0.5424513135044533),
}
PINS = {  # (main 15710f7; delta next to d0 = get_delta(0): d0 (1 + 1e-9), d0 (1 - 1e-9), d0 / 2)
    # (**) session 33, eps33: the two answers at delta = 1e-6 of (100, 1.0) and (10000, 1.0) moved within xtol (main
    # 1.0002240632822565 and 1.0001190011803314): phase 1 now starts from the single-big-jump root there (its spread and
    # active-user conditions widened, docs/accountant.md §8.13.1); each new answer is certified (checked below) and
    # get_delta at answer (1 - 1e-3) exceeds delta (tests/test_eps33_search.py)
    (100, 1.0): [(0.001, 0.38740878223622455), (1e-06, 1.0002229945239016), (0.061058718865557735, 0.0), (0.0610587187434403, 1.3471341343990876e-10), (0.030529359402249507, 0.0840548248475647)],
    (10000, 1.0): [(0.001, 0.20109198852960244), (1e-06, 0.9999194694332767), (0.03414429328462593, 0.0), (0.03414429321633734, 7.350921646201514e-11), (0.017072146625240817, 0.046410498516540576)],
    (100000, 2.0): [(0.001, 0.26868952452157574), (1e-06, 1.9993020361169749), (0.03368368616807436, 0.0), (0.03368368610070698, 7.676448956090466e-11), (0.016841843067195335, 0.04909075291618088)],
}



def _pins():
    return [(key, d, e) for key, rows in PINS.items() for d, e in rows]


@pytest.mark.parametrize("key, delta, main_eps", _pins())
@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, pins session 33's floats on purpose; the new rules' values are checked against references in the session-34 files
def test_get_epsilon_is_mains_float_and_certified(key, delta, main_eps, monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1 (key13's answer +1.3e-12 relative)
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    n, tag = key
    g, s0 = BMG[(n, tag)]
    clear_caches()
    e = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n).get_epsilon(delta)
    assert machine_same(e, main_eps), (e, main_eps)  # (**) session 42, lead: MACHINE_REL
    clear_caches()
    assert ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n).get_delta(e) <= delta
    clear_caches()
