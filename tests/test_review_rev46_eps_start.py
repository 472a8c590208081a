"""Review rev46 (session 46): attack on docs/accountant.md §8.25 (``limits.EPS45_START_PROBE``, on since session 45:
get_epsilon's phase 1 skipped where its first point is a start model's root of small spread; phase 2 probes that root
first with the model's slope). Claim: a choice of points only, so the answer eps* is certified WHATEVER the start:
delta(eps*) <= target.

rev45 checked the rule at its gate and forced (gate 1e300) with the start models' own roots. Here the start itself is
made adversarial: ``first_point``'s root (and the shape start's, §8.24.1) is moved by a factor in [0.25, 4] and its
slope by a factor in [0.01, 100] (still negative), the gate forced (1e300), so phase 2 begins anywhere inside the frame
with any slope. References: a fresh ``get_delta`` at eps* (<= target) and a fresh accountant at rel_tol 1e-3 whose
certified lower value at eps* must be <= target (else delta(eps*) > target); the answer also not above the answer of
main's search (the switch off) by more than the search's xtol (a looser answer is not an under-report, but an answer
far above would mean the skip returned an end that is not the root's: checked at 2 xtol).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "EPS45_START_PROBE"), reason="rule of session 45 absent")


def _answer(monkeypatch, mk, n: int, delta: float, f: float, kf: float) -> tuple[float, int]:
    from sharpdp.shuffle.accountant import search

    fp, ss, sp = search.first_point, search.shape_start, search.start_probe
    skipped = [0]

    def first_point(*a, **k):
        g, slope = fp(*a, **k)
        return (g * f, slope * kf) if slope is not None else (g, slope)

    def shape_start(*a, **k):
        out = ss(*a, **k)
        return (out[0] * f, out[1] * kf if out[1] is not None else None) if out is not None else None

    def start_probe(*a, **k):
        out = sp(*a, **k)
        skipped[0] += bool(out)
        return out

    with monkeypatch.context() as mp:
        switch(mp, "EPS45_START_PROBE", 1e300)
        mp.setattr(search, "first_point", first_point)
        mp.setattr(search, "shape_start", shape_start)
        mp.setattr(search, "start_probe", start_probe)
        eps = float(ShuffleAccountant(mk(), n).get_epsilon(delta))
        clear_caches()
    return eps, skipped[0]


def _check(mk, n: int, eps: float, delta: float) -> None:
    up = ShuffleAccountant(mk(), n).get_delta(eps)
    lo, _ = ShuffleAccountant(mk(), n, rel_tol=1e-3).get_delta_bounds(eps)
    clear_caches()
    assert up <= delta, ("a fresh get_delta at the answer above the target", eps, up, delta)
    assert lo <= delta, ("delta(answer) above the target", eps, lo, delta)


@pytest.mark.parametrize("f, kf", [(0.25, 1.0), (4.0, 1.0), (1.0005, 0.01), (0.9995, 100.0), (1.3, 0.05)])
def test_bmg_1e5_any_start(monkeypatch, f, kf):
    mk = lambda: BlanketMixedGaussian(0.394, 1.15, 1)  # noqa: E731
    eps, skipped = _answer(monkeypatch, mk, 10**5, 1e-6, f, kf)
    assert skipped  # (phase 1 was skipped: phase 2 began at the moved start)
    _check(mk, 10**5, eps, 1e-6)
    with monkeypatch.context() as mp:
        switch(mp, "EPS45_START_PROBE", 0.0)
        ref = float(ShuffleAccountant(mk(), 10**5).get_epsilon(1e-6))
        clear_caches()
    assert eps <= ref * (1 + 2e-3), (eps, ref)


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(g=st.sampled_from([0.0, 0.02, 0.2, 0.6]), s=st.floats(0.4, 3.0), logn=st.integers(4, 6),
       logd=st.integers(-10, -4), f=st.floats(0.25, 4.0), kf=st.floats(0.01, 100.0))
def test_answer_certified_from_any_start(monkeypatch, g, s, logn, logd, f, kf):
    mk = (lambda: GaussianRandomizer(s, 1)) if g == 0.0 else (lambda: BlanketMixedGaussian(g, s, 1))  # noqa: E731
    eps, _ = _answer(monkeypatch, mk, 10**logn, 10.0**logd, f, kf)
    _check(mk, 10**logn, eps, 10.0**logd)
