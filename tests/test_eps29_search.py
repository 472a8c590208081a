"""get_epsilon's walk gate (docs/accountant.md §8.9): the loose looks of §8.8 walk to the root only where the first
look's value carries a big-jump share; phase 1's interpolation stop at 10 % (§8.9.1). Only points move. References: synthetic reports for :func:`looks.walks`; a
fresh accountant's certified get_delta_bounds at the answer (upper value <= delta) and 10 xtol below it (lower value
> delta); the same search with the walk off (the answer must be the very same float where the gate stops the walk)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest
from _main_floats34 import switch
from test_eps24_search import _traced

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import looks
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.results import AccountantReport
from sharpdp.shuffle.round_cache import clear_caches

DELTA = 1e-6
XTOL = 1e-3


def test_walks_reads_the_jump_share() -> None:
    def rep(jump: float | None, upper: float = 1e-6) -> AccountantReport:
        terms = {} if jump is None else {"jump_upper": jump, "body_upper": upper - jump}
        return AccountantReport(0.01, 0.99 * upper, upper, terms=terms)

    assert looks.walks(rep(0.96e-6))  # (the BMG of calibrate_bmg at n = 1e8, eps = 0.01)
    assert looks.walks(rep(1.9e-11))  # (share 1.9e-5: the BMG at eps = 0.001)
    assert looks.walks(rep(looks.WALK_JUMP * 1e-6))  # (the threshold itself walks)
    assert not looks.walks(rep(1.1e-16))  # (share 1.1e-10: GaussianRandomizer(2, 1), n = 1e8)
    assert not looks.walks(rep(None))  # (no far-tail terms: no share)
    assert not looks.walks(rep(0.0, upper=0.0))
    assert not looks.walks(AccountantReport(0.01, 0.0, 1e-6, terms={"jump_upper": "n/a"}))


def test_memoised_calls_once() -> None:
    calls: list[float] = []

    def f(e: float) -> float:
        calls.append(e)
        return 2.0 * e

    g = looks.memoised(f, 2)
    assert [g(1.0), g(1.0), g(2.0), g(3.0), g(3.0)] == [2.0, 2.0, 4.0, 6.0, 6.0]
    assert calls == [1.0, 2.0, 3.0, 3.0]  # (at most 2 values kept: 3.0 is recomputed)


def _fresh_bounds(n: int, eps: float) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(2.0, 1), n, "zero_out").get_delta_bounds(eps)
    return float(lo), float(up)


def test_gate_stops_the_walk_n1e8(monkeypatch: pytest.MonkeyPatch) -> None:
    """GaussianRandomizer(2, 1), n = 1e8: the first look is all body (share ~1e-10), so the gate keeps one look and
    phase 2's probes; the answer is the walk-off search's float, and certified."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "EPS41_SHAPE_STEP", False)  # (**) session 41, eps41: docs/accountant.md §8.20
    n = 10**8
    # (**) session 36, eps36: _traced counts looks at rel_tol S._LOOK_REL (0.1); the look at the phase-1 root asks 0.3
    # at n >= 1e8 (docs/accountant.md §8.14.1, checked in tests/test_eps36_search.py): main's look here
    switch(monkeypatch, "EPS_LOOK_REL_LARGE", 0.1)
    e, n_looks, pts = _traced(lambda: GaussianRandomizer(2.0, 1), n, "zero_out", DELTA)
    assert n_looks == 1 and 2 <= len(pts) <= 4
    monkeypatch.setattr(S, "_WALK_N", 10**30)  # (the walk off: §8.8 rule 2 never runs)
    e_off, n_looks_off, _ = _traced(lambda: GaussianRandomizer(2.0, 1), n, "zero_out", DELTA)
    assert e_off == e and n_looks_off == 1
    assert _fresh_bounds(n, e)[1] <= DELTA
    assert _fresh_bounds(n, e * (1.0 - 10 * XTOL))[0] > DELTA


# the BMG of calibrate_bmg at n = 1e6, eps = 2 and 8 (regime map family (a)): phase 1's values are get_delta's own
# (the big-jump closed form), and its interpolation within 20 % left r1 1.3-1.4 xtol below the root: three probes
INTERP_CELLS = [
    (0.021719452960127065, 0.4694372301043296, 10**6),
    (0.00917073516974465, 0.3490130918106981, 10**6),
]


@pytest.mark.parametrize("gamma,sigma0,n", INTERP_CELLS)
def test_phase1_interpolation_saves_a_probe(gamma: float, sigma0: float, n: int,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/accountant.md §8.9.1 (measured, not enabled): with phase 1's interpolation stop at 10 % phase 2 makes two
    probes (three at 20 %, the default);
    both answers certified by a fresh accountant and within xtol of each other."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    def make():
        return BlanketMixedGaussian(gamma, sigma0, 1)

    # (**) session 31, eps31: phase 1 from the Gaussian-limit guess (the single-big-jump first point off,
    # docs/accountant.md §8.11): from that point phase 1 of these cells makes one pass and no interpolation stop
    monkeypatch.setattr(S, "first_point", lambda laws_at, n, delta, g0, hi: (g0, None))
    monkeypatch.setattr(S, "_INTERP", 0.1)  # (the rule, not enabled by default)
    e, _, pts = _traced(make, n, "zero_out", DELTA)
    monkeypatch.setattr(S, "_INTERP", 0.2)  # (the default)
    e0, _, pts0 = _traced(make, n, "zero_out", DELTA)
    assert len(pts) == 2 and len(pts0) == 3
    assert abs(e / e0 - 1.0) <= XTOL
    for x in (e, e0):
        clear_caches()
        lo, up = ShuffleAccountant(make(), n, "zero_out").get_delta_bounds(x)
        assert up <= DELTA
        clear_caches()
        lo, up = ShuffleAccountant(make(), n, "zero_out").get_delta_bounds(x * (1.0 - 10 * XTOL))
        assert lo > DELTA
