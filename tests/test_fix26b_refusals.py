"""get_epsilon's refusals through bot below the release sampler's charge (docs/accountant.md §9.9): each says in plain
words what was proved, and names the smallest certified value computed (the memo, the search's points) with its eps,
as "the smallest found" where the search does not prove it minimal. Fresh accountants: GaussianRandomizer(2, 1),
n = 1000, replace (e_c = 1.95 at delta 1e-31, 4.58 at 1e-30; 4 tau = 3.98e-32)."""

from __future__ import annotations

from _main_floats34 import switch
import re

import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle import clear_caches

HEAD = r"^delta: .* is below what the released messages can be certified for"  # (tests/test_fix26_bottom_end.py)
SMALLEST = r"smallest value ([0-9.e+-]+), at eps = ([0-9.e+-]+)"  # (tests/test_lead24_charge_end.py's pattern)


def _acc() -> sh.ShuffleAccountant:
    clear_caches()
    return sh.ShuffleAccountant(sh.GaussianRandomizer(2.0, 1), 1000, "replace")


@pytest.mark.parametrize("delta, proved", [
    (1e-31, "no epsilon in [0, 700] has a certified value <= delta (proved before any split): above eps = e_c = 1.95"),
    (3e-32, "so no epsilon in [0, 700] has one <= delta"),
])
def test_fast_refusal_says_what_was_proved_and_that_nothing_was_computed(delta, proved):
    """Step 2's refusal states its lower value's meaning (a bound on what the bound through bot certifies, not on
    the mechanism's delta) and both fast refusals say no certified value was computed. Mutation caught: the old
    step-2 message ("at least a leg's D_up there, at least 1.2e-17", no proved claim, no note)."""
    with pytest.raises(ValueError, match=HEAD) as info:
        _acc().get_epsilon(delta)
    text = str(info.value)
    assert proved in text, text
    assert "none was computed for this refusal: get_delta(epsilon) computes one" in text
    if delta == 1e-31:
        assert "alone exceeds it, and below it every split" in text  # (test_fix26_bottom_end's wording kept)
        assert "a lower value of the larger of the two legs' D_up at e_c" in text
        assert "not on the mechanism's own delta" in text


@pytest.mark.slow
def test_fast_refusal_names_the_memos_smallest_value(monkeypatch):
    """After get_delta(1) and get_delta(5), the step-2 refusal at 1e-31 names the smaller of the two values
    (get_delta(5) ~ 9.9e-28, the smallest computed) at eps = 5, checked against the object's own get_delta.
    Mutation caught: the note's min replaced by max (names get_delta(1)'s value at eps = 1)."""
    switch(monkeypatch, "VIA_BOTTOM_FLOOR_STOP", False)  # (**) session 36, lead: below the value floor 1e-24
    # get_delta reports the first certified split (docs/accountant.md §9.13), not the minimum this pin compares with
    acc = _acc()
    v1, v5 = float(acc.get_delta(1.0)), float(acc.get_delta(5.0))
    assert v5 < v1 and 5e-28 < v5 < 2e-27
    with pytest.raises(ValueError, match=HEAD) as info:
        acc.get_epsilon(1e-31)
    assert f"the smallest certified value this accountant has computed is {v5!r}, at eps = 5.0" in str(info.value)


@pytest.mark.slow
def test_search_refusal_says_smallest_found_and_includes_the_memo(monkeypatch):
    """Step 3's refusal at 1e-30 (e_c = 4.58): on a fresh object it names the smallest of the search's points
    ("the smallest found", not a proved minimum) and that object's get_delta there reports it; on an object that
    computed get_delta(4.94) ~ 9.9e-28 (above e_c, below every point the search tries, ~3.9e-27 at least) it names
    that value at 4.94. Mutation caught: the memo left out of the named minimum (names ~3.9e-27 at 4.48)."""
    switch(monkeypatch, "FEW_WIDE", False)  # (**) session 38, lead: §8.16 proves this refusal before any split (another message)
    acc = _acc()
    with pytest.raises(ValueError, match=HEAD) as info:
        acc.get_epsilon(1e-30)
    text = str(info.value)
    assert "not certified at any epsilon tried" in text and "not a proved minimum" in text, text
    u, at = (float(x) for x in re.search(SMALLEST, text).groups())
    assert re.search(r"the smallest found among the \d+ certified values the search computed", text)
    assert float(acc.get_delta(at)) == u and u > 1e-30

    seen = _acc()
    v = float(seen.get_delta(4.94))
    assert v < u
    with pytest.raises(ValueError, match=HEAD) as info:
        seen.get_epsilon(1e-30)
    got_u, got_at = (float(x) for x in re.search(SMALLEST, str(info.value)).groups())
    assert (got_u, got_at) == (v, 4.94)
