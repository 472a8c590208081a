"""Review rev43 (session 43): attack on eps42's docs/accountant.md §8.22 (``mirror_law``, ``limits.EPS42_MIRROR``; and
``zero_moments.zero_first``, ``limits.EPS42_ZERO_FIRST``: get_delta(0) first) at n >= MIRROR_N = 1e6, where the
rule runs (rev42's tests ran the rule at small n with hand-built mirror pairs; this file takes the library's own
randomizers, zero-out and replace-one, at the rule's own sizes).

Claims attacked:
* get_epsilon's answer with both rules on is certified: a fresh bracket with both rules OFF at rel_tol 1e-3 (another
  certified computation: no mirror, no zero-first, tighter legs) at the answer has its lower value <= delta, for delta
  just below, inside and above the bracket at eps = 0 (the answer 0 is the rule's own ground);
* the report at eps = 0 with the rules on meets the rules-off rel_tol-1e-3 bracket, and its upper value is at least
  that bracket's lower value;
* at the rule's threshold (n = MIRROR_N - 1 vs MIRROR_N) the two reports' brackets are each within the rules-off fine
  bracket's reach (each upper >= the fine lower at its own n).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

ml = pytest.importorskip("sharpdp.shuffle.accountant.mirror_law")

CELLS = {
    "gauss1": (lambda: GaussianRandomizer(1.0, 1), 10**6, "zero_out"),
    "bmg": (lambda: BlanketMixedGaussian(0.0202, 0.456, 1), 10**6, "zero_out"),
    "rr4": (lambda: RandomizedResponse(4, 3.0), 10**6, "replace"),
}


def _acc(name: str, n: int | None = None, **kw) -> ShuffleAccountant:
    mk, n0, adj = CELLS[name]
    return ShuffleAccountant(mk(), n0 if n is None else n, adj, **kw)


def _off_fine(monkeypatch, name: str, eps: float, n: int | None = None) -> tuple[float, float]:
    """The rules-off bracket at rel_tol 1e-3 of a fresh accountant (the certified reference)."""
    with monkeypatch.context() as mp:
        switch(mp, "EPS42_MIRROR", False)
        switch(mp, "EPS42_ZERO_FIRST", False)
        out = _acc(name, n, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    return out


@pytest.mark.parametrize("name", list(CELLS))
def test_get_epsilon_answers_certified_near_the_value_at_zero(monkeypatch, name):
    switch(monkeypatch, "EPS42_MIRROR", True)  # (the rules attacked, whatever their defaults)
    switch(monkeypatch, "EPS42_ZERO_FIRST", True)
    clear_caches()
    lo0, up0 = _acc(name).get_delta_bounds(0.0)
    flo0, fup0 = _off_fine(monkeypatch, name, 0.0)
    assert max(lo0, flo0) <= min(up0, fup0), ((lo0, up0), (flo0, fup0))
    answers = []
    for d in (0.995 * lo0, 0.5 * (lo0 + up0), 1.003 * up0):
        clear_caches()
        e = _acc(name).get_epsilon(d)
        lo, _ = _off_fine(monkeypatch, name, e)
        assert lo <= d, (name, d, e, lo)  # (an answer e too small would have lo > d: an under-report)
        answers.append(e)
    assert answers[0] > 0.0 and answers[-1] == 0.0  # (the search did go both ways: not an idle test)


@pytest.mark.parametrize("name", ["gauss1", "bmg"])
def test_threshold_of_the_rule(monkeypatch, name):
    """n = MIRROR_N - 1 (the image law's own run) and n = MIRROR_N (its mirrored bracket): each report's upper value is
    at least the rules-off fine lower value at its n, its lower value at most that fine upper value."""
    from sharpdp.shuffle.accountant import mirror_law

    n1 = int(getattr(limits, "MIRROR_N", getattr(mirror_law, "MIRROR_N", 10**6)))  # (eps43 moves it to limits)
    for n in (n1 - 1, n1):
        clear_caches()
        lo, up = _acc(name, n).get_delta_bounds(0.0)
        flo, fup = _off_fine(monkeypatch, name, 0.0, n)
        assert up >= flo and lo <= fup, (n, (lo, up), (flo, fup))
