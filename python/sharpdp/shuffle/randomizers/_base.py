"""Defaults shared by the randomizers of :mod:`sharpdp.shuffle` (implementation of the contract).

:class:`RandomizerBase` is the former base class ``sharpdp.shuffle.mechanisms.LocalRandomizer``
(the public name ``LocalRandomizer`` is now the :class:`typing.Protocol` of
:mod:`sharpdp.shuffle.contract`). It supplies ``__repr__`` and the defaults of the contract's
optional members: no surcharge, not pure-LDP, both replace-through-bot legs bounded by every
zero-out law, and ``shuffle_indices`` from ``chi_lo_for`` / ``chi_up_for``.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

from sharpdp import _validation as V
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency

__all__ = ["RandomizerBase", "memo_laws"]

# laws per randomizer object (weak: dropped with it) and key; at most _MEMO_SIZE keys per randomizer
_LAW_MEMO: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_MEMO_SIZE = 64


def memo_laws(owner: Any, key: tuple, compute: Callable[[], list]) -> list:
    """``compute()`` (a list of (gamma, law) pairs) kept per ``owner`` and ``key``: a randomizer's laws at one
    epsilon and adjacency do not depend on n, and an accountant's search, or accountants of one randomizer at
    several n, ask for the same ones. Returns a new list of the same (never modified) law objects."""
    memo = _LAW_MEMO.setdefault(owner, {})
    hit = memo.get(key)
    if hit is None:
        hit = compute()
        if len(memo) >= _MEMO_SIZE:
            memo.pop(next(iter(memo)))
        memo[key] = hit
    return list(hit)


class RandomizerBase:
    """Base class of the shuffle-model local randomizers (see :class:`sharpdp.shuffle.LocalRandomizer`)."""

    dim: int

    floating_point_safe: bool = False
    """Whether :meth:`sample` releases exactly a law the accountant certifies, or one within a bounded
    total-variation distance :attr:`sampler_tv` of it (docs/sampling.md). False by default: a
    floating-point sampler may leak its input through low-order bits (docs/sampling.md §8)."""

    @property
    def sampler_tv(self) -> float | None:
        """Per-message total-variation bound eta of the release sampler to a certified law (charge
        delta += (1 + e^eps) n eta, docs/sampling.md §4); None: no bound known (not floating-point
        safe)."""
        return None

    @property
    def sampler_refusal(self) -> str | None:
        """Why :meth:`sample` refuses every input of this randomizer (its parameters are beyond the release
        sampler), or None when it can sample them.

        The accountant certifies the mechanism's law whatever the sampler; this says whether sharpdp can
        also draw a release of it. Refusals that depend on the call (an input outside the domain,
        ``rng=None`` for a float sampler, a certificate-less ``LatticePrivUnit`` whose message finds no
        lattice vector) are not covered. None by default (no parameter limit).
        """
        return None

    @property
    def can_sample(self) -> bool:
        """True when :meth:`sample` accepts this randomizer's parameters (:attr:`sampler_refusal` is None)."""
        return self.sampler_refusal is None

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({params})"

    def _params(self) -> dict[str, Any]:
        return {}

    def chi_lo_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        raise NotImplementedError

    def chi_up_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        raise NotImplementedError

    def shuffle_indices(self, adjacency: str = DEFAULT_ADJACENCY) -> tuple[float, float]:
        """(chi_lo, chi_up) for ``adjacency`` (dimensionless; Takagi, Definition "Shuffle index")."""
        return self.chi_lo_for(adjacency), self.chi_up_for(adjacency)

    def privacy_amplification_surcharge(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """0.0: the laws of :meth:`privacy_amplification_laws` are exact, nothing is charged on top.

        Raises ValueError for a negative or NaN ``epsilon`` or an unknown ``adjacency``.
        """
        V.real("epsilon", epsilon, lo=0.0, allow_inf=True)
        check_adjacency(adjacency)
        return 0.0

    def zero_out_legs(self) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
        """(None, None): each leg of replace through bot is bounded by every zero-out law."""
        return None, None

    @property
    def local_epsilon(self) -> float | None:
        """None: not a pure eps0-LDP randomizer (subclasses that are override this)."""
        return None
