"""Review rev28b (session 28), claim 2: driver._plain_cannot_tighten (docs/composition.md §2.8) skips the plain
engine where its clamp term exceeds the few-user upper value; claimed: the same floats. Check on
GaussianRandomizer(sigma0, 1) zero-out, n in 2..500, eps 8..16: the report with the rule equals (exactly, as
floats) the report with the rule disabled (monkeypatched to return False), and the rule fired somewhere."""

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import driver
from sharpdp.shuffle.randomizers import GaussianRandomizer

_NS = [2, 3, 4, 5, 7, 10, 15, 30, 60, 120, 250, 500]
_ES = [8.0, 11.0, 16.0]


@pytest.mark.parametrize("sigma0", [0.5, 1.0, 2.0])
def test_rule_gives_same_floats(sigma0, monkeypatch):
    b = GaussianRandomizer(sigma0, 1)
    fired = []
    orig = driver._plain_cannot_tighten

    def spy(*a):
        v = orig(*a)
        fired.append(v)
        return v

    monkeypatch.setattr(driver, "_plain_cannot_tighten", spy)
    on = {(n, e): ShuffleAccountant(b, n, "zero_out").report(e) for n in _NS for e in _ES}
    monkeypatch.setattr(driver, "_plain_cannot_tighten", lambda *a: False)
    for (n, e), r in on.items():
        s = ShuffleAccountant(b, n, "zero_out").report(e)
        assert (r.lower, r.upper) == (s.lower, s.upper), (sigma0, n, e, (r.lower, r.upper), (s.lower, s.upper))
        assert r.lower <= r.upper
    print(sigma0, "rule fired", sum(fired), "of", len(fired))
