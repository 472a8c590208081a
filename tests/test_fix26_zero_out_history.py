"""History audit of zero-out get_epsilon (fix26, task 3): an accountant that answered other calls first (get_delta at
other epsilons, get_epsilon at other deltas) answers like a fresh one, up to what the documented monotone memos allow
(docs/accountant.md §7.2: get_delta's running minimum, get_epsilon's memo of answers): the same refusal or not, answers
within 2 xtol of each other (each the safe end of a bracket of relative width xtol around the same crossing), and
the history's answer certified by a fresh accountant's get_delta (the memo's values are certified values at eps'
<= eps, each also a fresh value there)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import sharpdp.shuffle as sh
from sharpdp.shuffle import clear_caches

XTOL = 1e-3


def _acc() -> sh.ShuffleAccountant:
    return sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.95, 4.6, 1), 10**4)


def _answer(acc: sh.ShuffleAccountant, delta: float) -> float | None:
    try:
        return acc.get_epsilon(delta, xtol=XTOL)
    except ValueError:
        return None


_CALL = st.one_of(st.tuples(st.just("delta"), st.floats(0.01, 4.0)),
                  st.tuples(st.just("eps"), st.floats(-30.0, -2.0)))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(_CALL, min_size=1, max_size=3), st.floats(-32.0, -3.0))
def test_zero_out_get_epsilon_does_not_depend_on_earlier_calls(history, log10_delta):
    """Mutation caught: get_epsilon's memo returning the smallest stored answer of any delta (an answer for a larger
    delta served for a smaller one: history [get_epsilon(1e-2)], delta 1e-5: 0.0 against 1.1e-4 fresh)."""
    delta = 10.0**log10_delta
    clear_caches()
    fresh = _answer(_acc(), delta)
    clear_caches()
    seen = _acc()
    for kind, x in history:
        if kind == "delta":
            seen.get_delta(x)
        else:
            _answer(seen, 10.0**x)
    after = _answer(seen, delta)
    assert (fresh is None) == (after is None), (fresh, after)
    if fresh is None or after is None:
        return
    assert abs(fresh - after) <= 2 * XTOL * max(fresh, after, 1e-12) or max(fresh, after) <= 1e-12, (fresh, after)
    clear_caches()
    assert _acc().get_delta(after) <= delta or math.isclose(after, 0.0)
