"""sharpdp.interop.dp_accounting: arguments checked at construction and named (issue: silent
acceptance, "Unsupported event" wrapping, inf/NaN instead of an error)."""

from __future__ import annotations

import math

import pytest
import sharpdp.shuffle as sh

dpa = pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import (
    AdjacencyMismatchError,
    ShuffledRoundEvent,
    ShufflePLDAccountant,
)

RR = sh.RandomizedResponse(k=2, epsilon0=1.0)


def test_construction_refuses_a_string_relation_and_a_misspelled_keyword():
    with pytest.raises(TypeError, match="neighboring_relation must be a dp_accounting.NeighboringRelation"):
        ShufflePLDAccountant("REPLACE_SPECIAL")
    with pytest.raises(TypeError, match=r"unexpected keyword argument\(s\) \['rel_tl'\]"):
        ShufflePLDAccountant(rel_tl=1e-3)
    with pytest.raises(TypeError, match="lower"):  # a pair of lower values certifies nothing
        ShufflePLDAccountant(lower=True)
    with pytest.raises(ValueError, match="rel_tol"):
        ShufflePLDAccountant(rel_tol=0.0)
    with pytest.raises(ValueError, match="adjacency"):
        ShuffledRoundEvent(RR, 10, "REPLACE_ONE")
    with pytest.raises(ValueError, match="n must be <= 1000000000"):
        ShuffledRoundEvent(RR, 10**10)


def test_compose_count_and_adjacency_mismatch_are_named():
    acc = ShufflePLDAccountant(value_discretization_interval=1e-2, max_evaluations=30, progress=False)
    with pytest.raises(TypeError, match="count must be an integer, got bool"):
        acc.compose(ShuffledRoundEvent(RR, 50), True)
    with pytest.raises(ValueError, match="count must be >= 1"):
        acc.compose(ShuffledRoundEvent(RR, 50), 0)
    nested = dpa.ComposedDpEvent([dpa.GaussianDpEvent(2.0), ShuffledRoundEvent(RR, 50, "replace")])
    with pytest.raises(AdjacencyMismatchError, match=r"needs ShufflePLDAccountant\(neighboring_relation="
                                                     r"NeighboringRelation.REPLACE_ONE\)") as info:
        acc.compose(nested)
    assert "Unsupported event" not in str(info.value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, dpa.UnsupportedEventError)
    assert not acc.supports(nested)
    assert acc.ledger == dpa.NoOpDpEvent()  # nothing was composed


def test_get_epsilon_and_get_delta_refuse_out_of_range_arguments():
    acc = ShufflePLDAccountant(value_discretization_interval=1e-2, max_evaluations=30, progress=False)
    acc.compose(ShuffledRoundEvent(RR, 50))
    for bad in (0.0, 1.0, 1.5, -1e-3, math.nan):
        with pytest.raises(ValueError, match="target_delta"):
            acc.get_epsilon(bad)
    with pytest.raises(ValueError, match="target_epsilon"):
        acc.get_delta(math.nan)  # (eps < 0 and -inf are answered: docs/composition.md §8)
    # valid extremes: a value, not NaN; delta(eps) decreases to the infinity mass
    assert 0.0 <= acc.get_delta(math.inf) <= acc.get_delta(0.5) <= acc.get_delta(0.0) <= 1.0
    assert math.isfinite(acc.get_epsilon(1e-6))


def test_dp_accountings_own_accountant_points_to_the_adapter():
    with pytest.raises(dpa.UnsupportedEventError, match="compose it with sharpdp.interop.dp_accounting."
                                                        "ShufflePLDAccountant"):
        dpa.pld.PLDAccountant().compose(ShuffledRoundEvent(RR, 50))
