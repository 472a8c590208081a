"""get_epsilon's walk on the shape model (docs/accountant.md §8.20: ``walk_model.shape_root``, ``limits.EPS41_WALK_SHAPE``,
``limits.EPS41_WALK_NEAR``). Only the loose looks' points move. References: closed forms for the model's root and slope
(a synthetic shape and level with known roots), a synthetic accountant with a known D_up for ``search._walk``, a fresh
accountant's certified bracket at the answer (upper value <= delta) and one xtol below it (a value above delta: the
xtol contract of docs/accountant.md §8), a fresh rel_tol-1e-3 bracket at the answer (the truth <= delta), and the same
search with the rules off (session 40's points)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from _main_floats34 import session40_floats, switch
from test_eps24_search import _traced
from test_eps28_search import _Synthetic as _Synthetic28

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant import walk_model as W
from sharpdp.shuffle.round_cache import clear_caches

DELTA = 1e-6
XTOL = 1e-3


def _f(v: float, delta: float = DELTA) -> float:
    """The search's model coordinate of a value v: log(-log delta) - log(-log v)."""
    return math.log(-math.log(delta)) - math.log(-math.log(v))


def _shape_is(monkeypatch: pytest.MonkeyPatch, m) -> None:
    monkeypatch.setattr(W, "shape", lambda pairs, n: m(pairs))  # (laws_at below is the identity: pairs = eps)


def test_one_look_level_root_and_slope(monkeypatch: pytest.MonkeyPatch) -> None:
    """M(e) = exp(-30 e^2), a look v = 1.3 M(e1): the root of 1.3 M = delta in closed form, and the slope of the
    search's coordinate there: d f / d log e = -(d log v / d log e) / log v = -(-60 e^2) / log delta."""
    _shape_is(monkeypatch, lambda e: math.exp(-30.0 * e * e))
    e1 = 0.9
    pts = [(math.log(e1), _f(1.3 * math.exp(-30.0 * e1 * e1)))]
    root = math.sqrt(math.log(1.3 / DELTA) / 30.0)
    z, k = W.shape_root(lambda e: e, 10**8, DELTA, pts, 0.1, 10.0)
    assert math.exp(z) == pytest.approx(root, rel=2e-6)
    assert k == pytest.approx(60.0 * root * root / math.log(DELTA), rel=1e-5)


def test_two_looks_level_moving_in_log_eps(monkeypatch: pytest.MonkeyPatch) -> None:
    """D(e) = c e^s M(e) (log level linear in log e): two looks fix it, the root is exact."""
    c, s = 2.0, 3.0
    _shape_is(monkeypatch, lambda e: math.exp(-30.0 * e * e))

    def d(e: float) -> float:
        return c * e**s * math.exp(-30.0 * e * e)

    pts = [(math.log(e), _f(d(e))) for e in (0.9, 0.8)]
    z, _ = W.shape_root(lambda e: e, 10**8, DELTA, pts, 0.1, 10.0)
    assert d(math.exp(z)) == pytest.approx(DELTA, rel=1e-4)
    # one look only: the level of the last look, held constant (not the root of D)
    z1, _ = W.shape_root(lambda e: e, 10**8, DELTA, pts[1:], 0.1, 10.0)
    assert abs(math.exp(z1) / math.exp(z) - 1.0) > 1e-3


def test_no_root_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """None (the walk's secant step, as before) outside a factor 2 of the last look, inside (lo, hi) only, where M is
    not formed, and with the rule off."""
    _shape_is(monkeypatch, lambda e: math.exp(-30.0 * e * e))
    pts = [(math.log(0.9), _f(1.3 * math.exp(-30.0 * 0.81)))]
    assert W.shape_root(lambda e: e, 10**8, DELTA, pts, 0.1, 0.5) is None  # (root 0.68 beyond hi)
    far = [(math.log(3.0), _f(1e-100))]
    assert W.shape_root(lambda e: e, 10**8, DELTA, far, 0.1, 10.0) is None  # (root beyond 1.5)
    _shape_is(monkeypatch, lambda e: 0.0)
    assert W.shape_root(lambda e: e, 10**8, DELTA, pts, 0.1, 10.0) is None
    _shape_is(monkeypatch, lambda e: math.exp(-30.0 * e * e))
    switch(monkeypatch, "EPS41_WALK_SHAPE", False)
    assert W.shape_root(lambda e: e, 10**8, DELTA, pts, 0.1, 10.0) is None


class _Synthetic(_Synthetic28):
    """tests/test_eps28_search.py's fake accountant (D(e) = exp(-30 e^2), loose report [0.995 D(e), 1.01 D(e)]), its
    report at any rel_tol."""

    def _report(self, e: float, rel_tol: float) -> SimpleNamespace:
        self.looked.append(e)
        return SimpleNamespace(lower=0.995 * self.d(e), upper=1.01 * self.d(e), law_index=0)


@pytest.mark.parametrize("shaped", [True, False])
def test_walk_on_the_shape(monkeypatch: pytest.MonkeyPatch, shaped: bool) -> None:
    """The walk from a phase-1 root 20 % off with half the true slope: on a shape M = D / 1.4 it looks once and ends
    within 0.1 xtol of the root (phase 2's slope the true one, no looks' points handed on); the secant (rule off, or
    no ``laws_at``) needs more looks. No look is an upper end either way."""
    _shape_is(monkeypatch, lambda e: _Synthetic.d(e) / 1.4)
    root = math.sqrt(math.log(1 / DELTA) / 30.0)
    acc = _Synthetic()
    r1 = 1.2 * root
    u = S._look_value(0.995 * acc.d(r1), 1.01 * acc.d(r1))
    pts = [(math.log(r1), _f(u))]
    lo, hi, x, k, pts_out = S._walk(acc, DELTA, 0.1 * root, 10 * root, pts, -1.0, XTOL, [],
                                    (lambda e: e) if shaped else None)
    assert hi == 10 * root and x is not None
    if shaped:
        assert len(acc.looked) == 1 and pts_out == []
        assert abs(x / root - 1.0) <= 0.1 * XTOL  # (the look's middle is 1.0025 D: the level is that look's)
        assert k == pytest.approx(60.0 * root * root / math.log(DELTA), rel=1e-3)
    else:
        assert len(acc.looked) >= 2 and len(pts_out) == 1 + len(acc.looked)
        assert abs(x / root - 1.0) <= 5 * XTOL


def _fresh(mech, n: int, eps: float, rel_tol: float = 1e-2) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(mech, n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


def test_bmg_n1e7_one_look_fewer(monkeypatch: pytest.MonkeyPatch) -> None:
    """BMG(0.1, 0.6), n = 1e7, delta = 1e-6 (a walk cell): two looks instead of three, two probes either way
    (measured: 0.0115033498 against main's 0.0115033606). The answer: a fresh accountant's upper value at
    it <= delta, a fresh one at the answer (1 - xtol) above delta, a fresh rel_tol-1e-3 bracket at it below delta and
    nested in the default one, and within xtol of the rules-off answer."""
    def make():
        return BlanketMixedGaussian(0.1, 0.6, 1)

    n = 10**7
    e, looks, probes = _traced(make, n, "zero_out", DELTA)
    lo, up = _fresh(make(), n, e)
    assert lo <= up <= DELTA
    assert _fresh(make(), n, e * (1.0 - XTOL))[1] > DELTA
    lo3, up3 = _fresh(make(), n, e, 1e-3)
    assert lo3 <= DELTA and max(lo, lo3) <= min(up, up3)
    session40_floats(monkeypatch)  # (every session-41 switch off: main's search)
    e0, looks0, probes0 = _traced(make, n, "zero_out", DELTA)
    assert e0 == pytest.approx(0.01150336064029373, rel=1e-12)  # (main's float, measured on 4eee1c4c)
    assert abs(e0 / e - 1.0) <= XTOL
    assert looks == looks0 - 1 and len(probes) == len(probes0) == 2


def test_shape_step_gauss2_n1e8_look_at_rel_0_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """GaussianRandomizer(2, 1), n = 1e8 with the look at the phase-1 root at rel_tol 0.1 (the setting of
    tests/test_eps29_search.py's gate test, pinned there with the rule off): the model explains that look within 2 %,
    so phase 2 starts at its root (one look, no walk). The moved answer: a fresh accountant's upper value at it <=
    delta, a fresh value one xtol below it above delta (the xtol contract), within xtol of the rule-off answer."""
    from sharpdp.shuffle import GaussianRandomizer

    def make():
        return GaussianRandomizer(2.0, 1)

    n = 10**8
    switch(monkeypatch, "EPS_LOOK_REL_LARGE", 0.1)
    switch(monkeypatch, "EPS48_BODY_START", 0.0)  # (its look: docs/accountant.md §8.28 skips it at this cell)
    e, looks, probes = _traced(make, n, "zero_out", DELTA)
    assert looks == 1 and 2 <= len(probes) <= 4
    assert _fresh(make(), n, e)[1] <= DELTA
    assert _fresh(make(), n, e * (1.0 - XTOL))[1] > DELTA
    switch(monkeypatch, "EPS41_SHAPE_STEP", False)
    e0, _, _ = _traced(make, n, "zero_out", DELTA)
    assert e0 != e and abs(e0 / e - 1.0) <= XTOL
