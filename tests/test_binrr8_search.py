"""Binary RR get_epsilon after the search changes of docs/accountant_atoms.md §10 (the first bracket
of two-atom laws in steps of 4 from the guess with 0 as its certified lower end, phase 1 following
the law of largest cap alone and stopping once its model root is within 2 % of its last point,
mstar's scan built in one step below 100): every answer certified
(get_delta of a fresh accountant at most delta; the exact blanket divergence, summed over the
trinomial counts, at most delta) and tight (the exact value exceeds delta 0.3 % below it), and the
measured fact phase 1's model relies on (the law of largest cap E[L_+] has the largest exact value
near the answer), against the same independent trinomial sums.
"""

from __future__ import annotations

import numpy as np
import pytest

from _krr_reference import exact_two_atom, trinomial
from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.closed_forms import trivial_cap
from sharpdp.shuffle.laws import laws_for

DELTA = 1e-6




def exact(rr: RandomizedResponse, x: float, n: int, adjacency: str) -> float:
    """The exact blanket divergence at x: the maximum over the laws of get_delta."""
    return max(trinomial(float(g), law.values, law.probs, n) for g, law in laws_for(rr, x, adjacency))


def test_trinomial_sum_agrees_with_the_binomial_reference() -> None:
    """The two independent exact sums agree (the trinomial one is the reference below)."""
    rr = RandomizedResponse(2, 1.0)
    for adjacency in ("replace", "zero_out"):
        for g, law in laws_for(rr, 0.15, adjacency):
            a = trinomial(float(g), law.values, law.probs, 400)
            b = exact_two_atom(float(g), law.values, law.probs, 400)
            assert a == pytest.approx(b, rel=1e-9)


@pytest.mark.parametrize("eps0, n, adjacency", [(0.5, 400, "replace"), (1.0, 1000, "replace"),
                                                (4.0, 1000, "replace"), (0.5, 1000, "zero_out"),
                                                (2.0, 400, "zero_out"), (4.0, 1000, "zero_out")])
def test_answer_certified_and_tight_against_trinomial_sums(eps0: float, n: int, adjacency: str) -> None:
    rr = RandomizedResponse(2, eps0)
    e = ShuffleAccountant(rr, n, adjacency=adjacency).get_epsilon(DELTA)
    assert 0.0 < e < eps0
    assert ShuffleAccountant(rr, n, adjacency=adjacency).get_delta(e) <= DELTA  # a fresh accountant
    assert exact(rr, e, n, adjacency) <= DELTA < exact(rr, e * (1.0 - 3e-3), n, adjacency)


@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 4.0])
def test_law_of_largest_cap_is_the_largest_near_the_answer(eps0: float) -> None:
    """Zero-out binary RR has two laws; phase 1 models the root on the one of largest E[L_+] alone
    (a model only: the answer is certified by phase 2 whatever it models). Near the answer that law
    has the largest exact value, so the model's root is the maximum's."""
    rr, n = RandomizedResponse(2, eps0), 1000
    e = ShuffleAccountant(rr, n).get_epsilon(DELTA)
    for x in (0.98 * e, e, 1.02 * e):
        pairs = laws_for(rr, x, "zero_out")
        assert len(pairs) == 2
        caps = [trivial_cap(law) for _, law in pairs]
        vals = [trinomial(float(g), law.values, law.probs, n) for g, law in pairs]
        assert caps[0] != caps[1]
        assert int(np.argmax(caps)) == int(np.argmax(vals)), (x, caps, vals)


def test_answers_do_not_depend_on_the_order_of_calls() -> None:
    """The search has no state across accountants: two fresh accountants, and a second call on one
    with a different delta in between, give the same answer (bit for bit)."""
    rr, n = RandomizedResponse(2, 2.0), 10_000
    a = ShuffleAccountant(rr, n).get_epsilon(DELTA)
    acc = ShuffleAccountant(rr, n)
    acc.get_epsilon(1e-8)
    assert ShuffleAccountant(rr, n).get_epsilon(DELTA) == a
    assert acc.get_delta(a) <= DELTA
