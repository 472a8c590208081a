"""Binary randomized response through the exact blocks (docs/accountant.md §5.2, docs/accountant_atoms.md §3):
the block construction against brute force and 40-digit sums, and the certified brackets and
get_epsilon answers against an independent summation of the exact blanket divergence."""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest

from _krr_reference import exact_two_atom as _exact_two_atom
from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import blocks as BL
from sharpdp.shuffle.laws import laws_for




def _compositions_reference(total: int, parts: int) -> list[tuple[int, ...]]:
    """All count vectors of length ``parts`` with sum <= total, in lexicographic order (brute force)."""
    return [c for c in itertools.product(range(total + 1), repeat=parts) if sum(c) <= total]


@pytest.mark.parametrize("total, parts", [(0, 1), (5, 1), (7, 2), (6, 3), (4, 4)])
def test_compositions_are_all_count_vectors_in_order(total: int, parts: int) -> None:
    got = [tuple(int(x) for x in row) for row in BL._compositions(total, parts)]
    assert got == _compositions_reference(total, parts)


def test_block_weights_against_40_digit_sums() -> None:
    """Each count vector's probability C(t, M) g^M (1 - g)^(t - M) M!/(c1! c2!) p1^c1 p2^c2 within the stated
    relative bound of its 40-digit value, and the last entry P(M > M*) likewise."""
    mp.mp.dps = 40
    t, ms, gamma = 40, 25, 0.5378828427399903
    pa = np.array([0.5, 0.5])
    BL._WEIGHTS_CACHE.clear()
    counts, pp, rel, p_tr, _ = BL._block_weights(t, ms, gamma, pa)
    assert pp is not None and pp.size == counts.shape[0] + 1 and not pp.flags.writeable
    g = mp.mpf(gamma)
    for row, p in zip(counts.astype(int).tolist(), pp[:-1].tolist()):
        c1, c2 = row
        M = c1 + c2
        ref = (mp.binomial(t, M) * g**M * (1 - g)**(t - M) * mp.binomial(M, c1) * mp.mpf(0.5)**M)
        assert abs(p - ref) <= rel * ref + 1e-300
    tail = mp.fsum(mp.binomial(t, M) * g**M * (1 - g)**(t - M) for M in range(ms + 1, t + 1))
    assert abs(pp[-1] - tail) <= rel * tail and pp[-1] == p_tr
    assert abs(float(mp.fsum(pp.tolist())) - 1.0) <= 1e-12


@pytest.mark.parametrize("eps0, n, eps", [(1.0, 10_000, 0.0432), (4.0, 10_000, 0.41), (0.5, 2_000, 0.05)])
def test_binary_rr_bracket_contains_the_exact_value(eps0: float, n: int, eps: float) -> None:
    acc = ShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency="replace")
    (gamma, law), = laws_for(acc.randomizer, eps, "replace")
    ref = _exact_two_atom(float(gamma), law.values, law.probs, n)
    lo, up = acc.get_delta_bounds(eps)
    assert lo <= ref * (1 + 1e-9) and ref <= up
    assert up <= ref * (1 + acc.rel_tol) * (1 + 1e-9)  # the relative target is met


@pytest.mark.parametrize("eps0, n, adjacency", [(1.0, 10_000, "replace"), (2.0, 100_000, "replace"),
                                                (1.0, 10_000, "zero_out")])
def test_binary_rr_get_epsilon_is_certified_and_tight(eps0: float, n: int, adjacency: str) -> None:
    """At the answer the exact value (max over the laws) is at most delta, and 2 % below the answer
    (2 rel_tol: beyond the bracket's width) it exceeds delta: the answer is certified and tight."""
    delta = 1e-6
    acc = ShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency=adjacency)
    e = acc.get_epsilon(delta)
    assert acc.get_delta(e) <= delta

    def exact(x: float) -> float:
        return max(_exact_two_atom(float(g), law.values, law.probs, n) for g, law in laws_for(acc.randomizer, x,
                                                                                              adjacency))

    assert exact(e) <= delta < exact(0.98 * e)
