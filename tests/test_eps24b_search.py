"""get_epsilon skips the loose look where the law that led phase 1 takes the closed form of
docs/accountant_tail.md §18 at the phase-1 root (docs/accountant.md §8.4): the look would cost a report there, and the
check's closed form is get_delta's own at r1 (memoised). The answers against an independent reference: a plain
bisection on fresh ``get_delta`` values at a tenth of the search's tolerance (the xtol contract), and the look kept
where the closed form does not apply."""

from __future__ import annotations

import pytest
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.laws import laws_for
from tests.test_eps24_search import XTOL, _bisect, _fresh_delta, _traced

# GaussianRandomizer(1, 1) at delta = 1e-6: x vs bot leads phase 1 and takes the closed form at the phase-1 root
CLOSED_CELLS = [(1.0, 100, 1e-6), (1.0, 10**3, 1e-6), (1.0, 10**4, 1e-6)]


@pytest.mark.parametrize("sigma0, n, delta", CLOSED_CELLS)
def test_no_look_where_the_led_law_is_closed_form_and_answer_against_bisection(sigma0, n, delta):
    make = lambda: GaussianRandomizer(sigma0, 1)  # noqa: E731
    e, looks, pts = _traced(make, n, "zero_out", delta)
    assert looks == 0 and 1 <= len(pts) <= 2  # (no loose report; at most two get_delta calls in phase 2)
    assert _fresh_delta(make, n, "zero_out", e) <= delta  # certified at the answer, by a fresh accountant
    lo, hi = _bisect(make, n, "zero_out", delta, e * (1.0 - 2.0 * XTOL), e * (1.0 + 1e-9), XTOL / 10.0)
    # the xtol contract: the answer is within xtol above the reference crossing (never below its lower end)
    assert lo < e <= hi * (1.0 + XTOL) and e <= lo * (1.0 + XTOL) / (1.0 - XTOL / 10.0)


def test_the_check_is_the_engines_closed_form_at_r1():
    """closed_at is true exactly where concentrated.certify accepts the raised law at the accountant's rel_tol, and
    the value it memoises is the one a fresh report at that epsilon uses: the report's upper value equals the closed
    form's upper value (the bot-vs-x law has a plain value far below it at this n)."""
    n, eps = 10**4, 1.9408084569403952  # (the phase-1 root of the cell above)
    gamma, law = laws_for(GaussianRandomizer(1.0, 1), eps, "zero_out")[0]
    assert S.closed_at(gamma, law, n, 1e-2)
    cb = concentrated.certify(law.shifted(up=True), float(gamma), n, 1e-2, S.far_tail.choose_T0)
    rep = ShuffleAccountant(GaussianRandomizer(1.0, 1), n).report(eps)
    assert rep.law_index == 0 and float(rep.upper) == pytest.approx(cb.upper, rel=1e-12)
    gamma2, law2 = laws_for(GaussianRandomizer(2.0, 1), 0.0405, "zero_out")[0]
    assert not S.closed_at(gamma2, law2, n, 1e-2)  # (sigma0 = 2: the closed form refused, the look kept below)


def test_look_kept_where_no_closed_form():
    """GaussianRandomizer(2, 1), n = 1e4: phase 1 led by a far-tail law without the closed form: the look runs."""
    e, looks, pts = _traced(lambda: GaussianRandomizer(2.0, 1), 10**4, "zero_out", 1e-6)
    assert looks == 1 and _fresh_delta(lambda: GaussianRandomizer(2.0, 1), 10**4, "zero_out", e) <= 1e-6
