"""LocalRandomizer (the randomizer contract) declares can_sample and sampler_refusal, which every randomizer has
had since session 24 (docs/cli.md §5), typed and documented; isinstance still checks only the older members."""

from __future__ import annotations

import inspect
import typing

import numpy as np

from sharpdp.shuffle import BlanketMixedGaussian, LocalRandomizer, RandomizedResponse
from sharpdp.shuffle.contract import _MEMBERS


def test_the_protocol_declares_both_members_typed_and_documented():
    for name, returns in (("sampler_refusal", "str | None"), ("can_sample", "bool")):
        member = inspect.getattr_static(LocalRandomizer, name)
        assert isinstance(member, property), name  # (caught: the Protocol without them, s25)
        hints = typing.get_type_hints(member.fget)
        assert hints["return"] == (str | None if returns == "str | None" else bool)
        assert "docs/cli.md §5" in member.__doc__


def test_every_randomizer_answers_as_the_protocol_says():
    for rnd in (BlanketMixedGaussian(0.5, 3.0, 1), BlanketMixedGaussian(0.5, 3e4, 1), RandomizedResponse(4, 1.0)):
        assert isinstance(rnd, LocalRandomizer)
        assert rnd.can_sample is (rnd.sampler_refusal is None)
    assert not BlanketMixedGaussian(0.5, 3e4, 1).can_sample


def test_isinstance_is_unchanged_for_a_randomizer_without_them():
    assert "can_sample" not in _MEMBERS and "sampler_refusal" not in _MEMBERS  # (no behaviour change)

    class Plain:  # the older members only, as a user-defined randomizer written before session 24
        dim = 1

        def privacy_amplification_laws(self, epsilon, adjacency="zero_out"):
            return []

        def privacy_amplification_surcharge(self, epsilon, adjacency="zero_out"):
            return 0.0

        def zero_out_legs(self):
            return None, None

        def shuffle_indices(self, adjacency="zero_out"):
            return 0.0, 1.0

        def chi_lo_for(self, adjacency="zero_out"):
            return 0.0

        def chi_up_for(self, adjacency="zero_out"):
            return 1.0

        chi_lo, chi_up, mse_single, local_epsilon = 0.0, 1.0, 1.0, None

        def sample(self, x, rng=None, *, threads=None):
            return np.asarray(x)

        def estimate(self, messages):
            return np.mean(messages, axis=0)

    assert isinstance(Plain(), LocalRandomizer)
