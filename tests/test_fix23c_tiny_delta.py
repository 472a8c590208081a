"""get_epsilon at tiny delta targets with the release sampler's charge (docs/accountant.md §8.3).

The certified value D_up(eps) + (1 + e^eps) n sampler_tv rises again beyond a few nats, so above eps_tau it exceeds
a tiny delta that a small epsilon certifies. The answer must be that small root, in both orders of calls (fresh, and
after a get_delta that fills the monotone memo), checked against a bisection on fresh accountants' get_delta_bounds.
"""

from __future__ import annotations

import json

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant

BMG = BlanketMixedGaussian(0.95, 4.6, 1)
XTOL = 1e-3


def _fresh_up(n: int, eps: float) -> float:
    """The upper value of a fresh accountant (no monotone memo from other calls)."""
    return float(ShuffleAccountant(BMG, n).get_delta_bounds(eps)[1])


def _bisect(n: int, delta: float, hi: float) -> tuple[float, float]:
    """(lo, hi): fresh value > delta at lo, <= delta at hi, hi - lo <= 2e-4 hi (fresh value at hi <= delta given)."""
    lo = 0.0
    while hi - lo > 2e-4 * hi:
        mid = (lo * hi) ** 0.5 if lo > 0.0 else 0.5 * hi
        if _fresh_up(n, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return lo, hi


@pytest.mark.parametrize("n, e0, delta", [(10**4, 0.5, 1e-30), (10**6, 1e-3, 1e-15)])
def test_tiny_delta_small_root_both_orders(n, e0, delta):
    assert _fresh_up(n, e0) <= delta  # the brief's witness: e0 certifies delta
    assert _fresh_up(n, 700.0) > delta  # (the value at eps_tau, reported at 700: the charge dominates there)
    fresh = ShuffleAccountant(BMG, n).get_epsilon(delta, xtol=XTOL)
    acc = ShuffleAccountant(BMG, n)
    acc.get_delta(e0)  # fills the monotone memo first
    after = acc.get_epsilon(delta, xtol=XTOL)
    lo, hi = _bisect(n, delta, e0)
    for a in (fresh, after):
        assert 0.0 < a <= e0
        assert _fresh_up(n, a) <= delta  # certified for a fresh accountant
        assert lo * (1 - 1e-9) <= a <= hi * (1 + 2 * XTOL)  # the small root, to xtol
        assert _fresh_up(n, a * (1 - 2 * XTOL)) > delta  # nothing certified xtol below it


def test_refused_only_below_the_charge_at_zero_with_the_reason():
    n = 10**6
    acc = ShuffleAccountant(BMG, n)
    c0 = acc.sampler_term(0.0)
    with pytest.raises(ValueError, match="charge alone at eps = 0"):
        acc.get_epsilon(0.5 * c0)
    a = ShuffleAccountant(BMG, n).get_epsilon(1e-20)  # refused before fix23c
    assert 0.0 < a < 1e-3 and _fresh_up(n, a) <= 1e-20


def test_without_the_charge_unchanged():
    acc = ShuffleAccountant(BMG, 10**4, sampler_charge=False)
    a = acc.get_epsilon(1e-30, xtol=XTOL)
    assert float(ShuffleAccountant(BMG, 10**4, sampler_charge=False).get_delta(a)) <= 1e-30
    assert a < 0.5


@pytest.mark.parametrize("eps, charged", [(1e-3, False), (40.0, True)])
def test_cli_account_names_the_charge_where_it_makes_the_value(eps, charged, capsys):
    from sharpdp.cli import main

    args = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000"]
    assert main([*args, "--epsilon", str(eps), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    acc = ShuffleAccountant(BMG, 10**6)
    charge = acc.sampler_term(min(eps, acc.eps_tau))
    assert (charge >= 0.5 * r["delta"]) == charged  # (n = 1e6: the charge is 2.3e-29 at 1e-3, where D_up is 7.9e-28)
    assert ("sampler's charge" in r["bracket_note"]) == charged
    assert main([*args, "--delta", "1e-15"]) == 0  # refused before fix23c
    assert "certified epsilon = 6.8" in capsys.readouterr().out
