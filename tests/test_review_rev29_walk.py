"""Review rev29 of docs/accountant.md §8.8 (``search._look_value``: the look's model value is the geometric middle of
its loose bracket; ``search._walk``: at n >= 1e7 loose looks walk to the root). Claimed (§8.8 "Why it is
certified", §8 step 5): neither rule changes what a bracket end is, so ``get_epsilon(delta)`` returns an eps whose
certified upper value is <= delta for this accountant **and for a fresh one**; a look is a lower end only by its
certified lower value above delta; the final bracket's lower end within xtol has get_delta > delta (§8: a fresh
get_delta a little more than xtol below the answer may still be <= delta, so that is measured here, not claimed).

Checked on every cell: a fresh accountant (caches cleared) at the default rel_tol 1e-2 gives upper <= delta at the
answer; a fresh one at rel_tol 1e-3 gives a lower value <= delta there (else the truth would exceed delta); for the
BMG, the second-order Edgeworth estimate of the x-vs-bot divergence from the mechanism's densities
(tests/_rev29_bmg_reference.py) is <= delta within its tolerance. Scan (scripts of the review, not kept; rel_tol 1e-2):
BMG at n = 1e7, 1e8 (calibrate_bmg's picks and (0.1, 0.6)), delta 1e-3..1e-10: the walk ran in 5 of 6 cells,
every answer held; at the answer times (1 - xtol) the fresh upper value exceeded delta in every cell (the fresh
lower value too in 4 of 6). The walk forced at every n (``_WALK_N`` = 1, ``_LOOK_FAR`` = 0, ``_LOOK_NEAR`` = 0.5):
33 cells (BMG picks at n = 1e2..1e6, GaussianRandomizer(0.5 / 1 / 2) at n = 1e3..1e6, delta 1e-3 / 1e-6 / 1e-10),
the walk ran in 17, every positive answer held and its fresh upper value at the answer times (1 - xtol) exceeded
delta (one answer is exactly 0: checked below).
Also: xtol 1e-5 / 1e-2 / 0.1; a sequence of get_epsilon calls on one accountant (the monotone memos of step M,
which a fresh accountant does not have); k-RR and PrivUnit at n = 1e7 / 1e8 (atom laws: no look); replace-one.
"""

from __future__ import annotations

import pytest

from _rev29_bmg_reference import d_up_edgeworth
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, PrivUnit, RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import search
from sharpdp.shuffle.round_cache import clear_caches

BMG_1E8 = BlanketMixedGaussian(0.039943113754762914, 0.5276146875690877, 1)  # calibrate_bmg(1e8, 0.01, 1e-6, 1)'s


def _walks(monkeypatch) -> list[int]:
    seen: list[int] = []
    orig = search._walk

    def walk(*a, **k):
        seen.append(1)
        return orig(*a, **k)

    monkeypatch.setattr(search, "_walk", walk)
    return seen


def _fresh(mech, n: int, adjacency: str, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(mech, n, adjacency=adjacency, rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


def _check(mech, n: int, delta: float, adjacency: str = "zero_out", xtol: float = 1e-3, fine: bool = True,
           below: bool = True, acc=None) -> float:
    clear_caches()
    acc = acc or ShuffleAccountant(mech, n, adjacency=adjacency)
    e = acc.get_epsilon(delta, xtol=xtol)
    assert e > 0.0
    lo, up = _fresh(mech, n, adjacency, e)
    assert lo <= up <= delta, (e, lo, up, delta)  # the claim: a fresh accountant certifies the answer
    if fine:
        lo3, up3 = _fresh(mech, n, adjacency, e, 1e-3)
        assert lo3 <= delta and max(lo, lo3) <= min(up, up3), (e, lo3, up3)
    if below:  # measured in every scanned cell (an optimality check; §8 does not promise it for a fresh accountant)
        assert _fresh(mech, n, adjacency, e * (1.0 - xtol))[1] > delta, e
    return e


def test_bmg_n1e8_walk_answer_is_certified_fresh(monkeypatch):
    """The BMG of calibrate_bmg(1e8, 0.01, 1e-6, 1), delta = 1e-6 (§8.8's cell: the walk runs): answer 0.0099969,
    fresh [9.9362e-7, 9.9873e-7], rel_tol 1e-3 [9.9666e-7, 9.9721e-7]; at the answer (1 - xtol) the fresh upper is
    1.00485e-6 > delta (measured). The Edgeworth estimate at the answer is below delta within its tolerance."""
    walks = _walks(monkeypatch)
    e = _check(BMG_1E8, 10**8, 1e-6, fine=False)
    assert walks
    e2, e1, _ = d_up_edgeworth(BMG_1E8.gamma, BMG_1E8.sigma0, e, 10**8)
    assert e2 * (1.0 - 3.0 * abs(e2 - e1) / e2 - 2e-4) <= 1e-6, (e, e2, e1)


@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_bmg_n1e7_walk_answers_are_certified_fresh(monkeypatch, delta):
    """BMG(0.1, 0.6), n = 1e7: delta = 1e-6 -> 0.0115034 (fresh [9.9450e-7, 9.9729e-7]); 1e-3 -> 8.8444e-4 (fresh
    [9.9670e-4, 9.9989e-4]); the walk runs in both."""
    walks = _walks(monkeypatch)
    mech = BlanketMixedGaussian(0.1, 0.6, 1)
    e = _check(mech, 10**7, delta)
    assert walks
    e2, e1, _ = d_up_edgeworth(0.1, 0.6, e, 10**7)
    assert e2 * (1.0 - 3.0 * abs(e2 - e1) / e2 - 2e-4) <= delta, (e, e2, e1)


FORCED = [(BlanketMixedGaussian(0.3, 1.2, 1), 10**4, 1e-6), (BlanketMixedGaussian(0.198, 0.833, 1), 10**6, 1e-10),
          (GaussianRandomizer(2.0, 1), 10**3, 1e-6), (GaussianRandomizer(1.0, 1), 10**6, 1e-3)]


@pytest.mark.parametrize("mech, n, delta", FORCED)
def test_walk_forced_at_small_n_keeps_the_answer_certified(monkeypatch, mech, n, delta):
    """The walk at every n and every distance (``_WALK_N`` = 1, ``_LOOK_FAR`` = 0, ``_LOOK_NEAR`` = 0.5 xtol: up to
    four looks): the rules only choose points, so the answers stay certified for a fresh accountant."""
    monkeypatch.setattr(search, "_WALK_N", 1)
    monkeypatch.setattr(search, "_LOOK_FAR", 0.0)
    monkeypatch.setattr(search, "_LOOK_NEAR", 0.5)
    walks = _walks(monkeypatch)
    _check(mech, n, delta)
    assert walks


@pytest.mark.parametrize("xtol", [1e-5, 1e-2, 0.1])
def test_bmg_n1e7_other_xtols(xtol):
    """BMG(0.1, 0.6), n = 1e7, delta = 1e-6 at xtol 1e-5, 1e-2, 0.1: fresh certified at the answer."""
    _check(BlanketMixedGaussian(0.1, 0.6, 1), 10**7, 1e-6, xtol=xtol, fine=False)


def test_sequence_of_queries_on_one_accountant_is_certified_fresh():
    """get_epsilon at 1e-3, 1e-8, 1e-6 and then 3e-7 on one accountant (its monotone memos of module step M hold the
    earlier answers and values; a fresh accountant does not): the last answer is certified by a fresh accountant."""
    mech = BlanketMixedGaussian(0.1, 0.6, 1)
    clear_caches()
    acc = ShuffleAccountant(mech, 10**7)
    for d in (1e-3, 1e-8, 1e-6):
        acc.get_epsilon(d)
    _check(mech, 10**7, 3e-7, acc=acc, fine=False)


@pytest.mark.parametrize("mech, n, delta", [(RandomizedResponse(10, 4.0), 10**8, 1e-6),
                                            (PrivUnit(0.75, 0.2, 10), 10**8, 1e-6)])
def test_atom_laws_at_n1e8_replace(mech, n, delta):
    """k-RR and PrivUnit, replace-one, n = 1e8 (the regime map's families c, d): fresh certified answers."""
    _check(mech, n, delta, adjacency="replace", fine=False)


def test_answer_zero_is_certified_fresh():
    """GaussianRandomizer(2, 1), n = 1e6, delta = 1e-3: the answer is exactly 0 (§8 step 1); a fresh accountant's
    bracket at eps = 0 is [4.4136e-4, 4.4205e-4] <= delta (measured)."""
    mech = GaussianRandomizer(2.0, 1)
    clear_caches()
    assert ShuffleAccountant(mech, 10**6).get_epsilon(1e-3) == 0.0
    lo, up = _fresh(mech, 10**6, "zero_out", 0.0)
    assert lo <= up <= 1e-3


@pytest.mark.parametrize("mech, n, delta", [(GaussianRandomizer(1.0, 1), 10**7, 1e-6),
                                            (BlanketMixedGaussian(0.1, 0.6, 1), 10**7, 3e-7)])
def test_looks_that_become_lower_ends_are_certified(mech, n, delta):
    """The walk's looks (reports at rel_tol 0.1) whose certified lower value exceeds delta become lower ends (§8.8
    rule 2). Each such look lies below the answer, and a fresh rel_tol 1e-3 bracket there lies above delta and meets
    the look's (measured: GaussianRandomizer(1, 1): look at 0.00786036, [1.10244e-6, 1.12319e-6], fresh [1.11292e-6,
    1.11319e-6]; BMG(0.1, 0.6): look at 0.0130097, [3.29217e-7, 3.40613e-7], fresh [3.32844e-7, 3.32910e-7]; in the
    BMG of calibrate_bmg(1e8, 0.01, 1e-6, 1) the look at 0.00953223, [1.33420e-6, 1.35818e-6], fresh [1.34489e-6,
    1.34572e-6])."""
    clear_caches()
    acc = ShuffleAccountant(mech, n)
    looks: list[tuple[float, float, float]] = []
    report = acc._report

    def spy(e, rel_tol, *a, **k):
        r = report(e, rel_tol, *a, **k)
        if rel_tol > acc.rel_tol:
            looks.append((e, float(r.lower), float(r.upper)))
        return r

    acc._report = spy
    ans = acc.get_epsilon(delta)
    ends = [lk for lk in looks if lk[1] > delta]
    assert ends
    for e, lo, up in ends:
        assert e < ans
        lo3, up3 = _fresh(mech, n, "zero_out", e, 1e-3)
        assert delta < lo3 and max(lo, lo3) <= min(up, up3), (e, lo, up, lo3, up3)
