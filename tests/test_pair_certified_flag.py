"""A dominating pair says whether it certifies anything (issue of the newcomer pass: a pair built
from an estimate-mode GeneralRandomizer used to report certified == True)."""

from __future__ import annotations

import warnings

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, dominating_pair


def test_pair_of_an_estimated_law_is_not_certified():
    from test_fuzz_public_api import _general  # the fuzz table's estimate-mode GeneralRandomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        g = _general()
    assert g.certified is False
    assert dominating_pair(ShuffleAccountant(g, 50), 0.05).certified is False


def test_pair_of_a_certified_law_is_certified_and_its_lower_reference_is_not():
    acc = ShuffleAccountant(RandomizedResponse(2, 1.0), 100)
    assert dominating_pair(acc, 0.05).certified is True
    assert dominating_pair(acc, 0.05, lower=True).certified is False
