"""Review rev28b (session 28), claim 2: driver._plain_cannot_tighten (docs/composition.md §2.8) skips the plain
engine where its clamp term exceeds the few-user upper value; claimed: the same floats. Check on
GaussianRandomizer(sigma0, 1) zero-out, n in 2..500, eps 8..16: the report with the rule equals (exactly, as
floats) the report with the rule disabled (monkeypatched to return False), and the rule fired somewhere."""

import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import driver
from sharpdp.shuffle.randomizers import GaussianRandomizer

_NS = [2, 3, 5, 7, 10, 30, 60, 120, 500]
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


@pytest.mark.parametrize("sigma0,n,eps", [(1.0, 2, 8.0), (1.0, 5, 8.0), (1.0, 30, 11.0), (1.0, 120, 16.0),
                                          (0.5, 7, 8.0), (2.0, 30, 8.0)])
def test_bracket_contains_conditional_mc(sigma0, n, eps):
    """The reported bracket against the Asmussen-Kroese conditional Monte Carlo of tests/_review28_ak_reference.py
    (unbiased, the mechanism's densities, not sharpdp's laws): 5 standard errors + 1e-9 relative."""
    import os
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    from _review28_ak_reference import GaussXBot, d_up_ak
    b = GaussianRandomizer(sigma0, 1)
    est, se = d_up_ak(GaussXBot(sigma0, eps), GaussXBot(sigma0, eps).g, n, 4000)
    r = ShuffleAccountant(b, n, "zero_out").report(eps)
    print(sigma0, n, eps, r.lower, r.upper, est, se)
    assert r.lower <= est * (1 + 1e-9) + 5 * se and r.upper >= est * (1 - 1e-9) - 5 * se, (r.lower, r.upper, est, se)
