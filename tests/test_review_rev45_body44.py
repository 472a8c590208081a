"""Review rev45 (session 45): attack on docs/accountant_tail.md §66.1 (``limits.BODY44_FIRST_SKIP``,
``far_tail_steps.first_aim``: a far-tail round's first body pass at half the round's step where the pass at the step
is expected to be followed by one at its half; a choice of passes, every value certified).

rev44 checked the rule's two cells of §66.1 against the switch off and a finer accountant. Here: (1) other cells at
n >= 1e8 where the rule fires with its own thresholds (BlanketMixedGaussian(0.0389, 0.529), n = 1e8, eps = 0.005 and
n = 1e9, eps = 0.002); (2) the rule forced everywhere (``BODY44_FIRST_N`` = 2, ``BODY44_FIRST_MIN`` = 0,
``BODY44_FIRST_RATIO`` = 1e300: the first pass at h / 2 wherever the size caps allow it; "a choice of passes" must stay
certified whatever the thresholds) at n = 1e5 ... 1e7, and a hypothesis property over (sigma, n, eps). References: the
switch off (main's certified bracket) and a finer accountant (rel_tol 1e-3, switch off); the rule's bracket must meet
both. (No exact reference at these n: the law's n-fold sums are out of reach of quadrature and Monte Carlo's error
is wider than the brackets.)
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

from _main_floats34 import switch
from _rev44_spy import spy

pytestmark = pytest.mark.skipif(not hasattr(limits, "BODY44_FIRST_SKIP"), reason="rule of a branch not merged")


def _bracket(monkeypatch, mk, n: int, eps: float, forced: bool) -> tuple[tuple[float, float], bool]:
    """The rule's bracket (forced thresholds or its own) and whether it aimed a first pass at a half step."""
    from sharpdp.shuffle.accountant import far_tail

    with monkeypatch.context() as mp:
        switch(mp, "BODY44_FIRST_SKIP", True)
        if forced:
            switch(mp, "BODY44_FIRST_N", 2)
            switch(mp, "BODY44_FIRST_MIN", 0.0)
            switch(mp, "BODY44_FIRST_RATIO", 1e300)
        calls = spy(mp, "aim", far_tail)
        on = ShuffleAccountant(mk(), n).get_delta_bounds(eps)
        clear_caches()
    return on, any(out < a[0] for a, out in calls)


def _refs(monkeypatch, mk, n: int, eps: float, fine: bool = True) -> list:
    with monkeypatch.context() as mp:
        switch(mp, "BODY44_FIRST_SKIP", False)
        out = [ShuffleAccountant(mk(), n).get_delta_bounds(eps)]
        if fine:
            out.append(ShuffleAccountant(mk(), n, rel_tol=1e-3).get_delta_bounds(eps))
        clear_caches()
    return out


def _meets(on, refs) -> None:
    assert 0.0 <= on[0] <= on[1] <= 1.0
    for ref in refs:
        assert max(on[0], ref[0]) <= min(on[1], ref[1]), (on, ref)


@pytest.mark.parametrize("n, eps", [(10**8, 0.005), (10**9, 0.002)])
def test_own_thresholds_at_other_far_tail_cells(monkeypatch, n, eps):
    mk = lambda: BlanketMixedGaussian(0.0389, 0.529, 1)  # noqa: E731
    on, fired = _bracket(monkeypatch, mk, n, eps, forced=False)
    assert fired
    _meets(on, _refs(monkeypatch, mk, n, eps, fine=n < 10**9))


CELLS = [("g1", 1.0, 0.0, 10**6, 0.002), ("g1", 1.0, 0.0, 10**7, 0.01), ("g2", 2.0, 0.0, 10**5, 0.002),
         ("g2", 2.0, 0.0, 10**6, 0.002), ("bmg", 1.0, 0.2, 10**5, 0.02)]


@pytest.mark.parametrize("name, s, g, n, eps", CELLS)
def test_forced_first_half_step_meets_off_and_fine(monkeypatch, name, s, g, n, eps):
    mk = (lambda: GaussianRandomizer(s, 1)) if g == 0.0 else (lambda: BlanketMixedGaussian(g, s, 1))
    on, fired = _bracket(monkeypatch, mk, n, eps, forced=True)
    assert fired
    _meets(on, _refs(monkeypatch, mk, n, eps))


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(s=st.floats(0.8, 3.0), logn=st.integers(5, 7), eps=st.floats(0.001, 0.03))
def test_forced_first_half_step_property(monkeypatch, s, logn, eps):
    mk = lambda: GaussianRandomizer(s, 1)  # noqa: E731
    on, _ = _bracket(monkeypatch, mk, 10**logn, eps, forced=True)
    _meets(on, _refs(monkeypatch, mk, 10**logn, eps, fine=False))
