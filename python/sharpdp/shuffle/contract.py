"""The local-randomizer contract: what the accountant and the index code ask of a randomizer.

:class:`LocalRandomizer` is a runtime-checkable :class:`typing.Protocol`. Every randomizer of
:mod:`sharpdp.shuffle` implements it (through :class:`sharpdp.shuffle.randomizers.RandomizerBase`,
which supplies the optional members' defaults), and a user-defined randomizer that implements it
can be handed to :class:`sharpdp.shuffle.ShuffleAccountant`. The accountant itself calls only
:meth:`~LocalRandomizer.privacy_amplification_laws`, :meth:`~LocalRandomizer.privacy_amplification_surcharge`,
:meth:`~LocalRandomizer.zero_out_legs` and :attr:`~LocalRandomizer.local_epsilon`; the optional
capability ``lower_form()`` (:class:`SupportsLowerForm`) enables
:meth:`sharpdp.shuffle.ShuffleAccountant.get_delta_lower_form`.

Notation (Takagi, *Shuffling-aware optimization for private vector mean estimation*, Section 2):
R_x is the output law of input x, R_BG the blanket with mass gamma (gamma R_BG <= R_x for every
x), and the privacy-amplification variable of a neighbouring pair (x1, x1') is
l_eps(Y) = (R_x1(Y) - e^eps R_x1'(Y)) / R_BG(Y), Y ~ R_BG.
"""

from __future__ import annotations


import inspect
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from sharpdp.shuffle.laws import Law

__all__ = ["LocalRandomizer", "SupportsLowerForm", "SupportsSurcharge", "SupportsZeroOutLegs", "SupportsLocalEpsilon",
           "surcharge", "zero_out_legs", "local_epsilon", "lower_form"]

# Members checked by isinstance(obj, LocalRandomizer); see _StaticProtocolMeta.
_MEMBERS = ("dim", "privacy_amplification_laws", "privacy_amplification_surcharge", "zero_out_legs",
            "shuffle_indices", "chi_lo_for", "chi_up_for", "chi_lo", "chi_up", "sample", "estimate",
            "mse_single", "local_epsilon")
_METHODS = frozenset({"privacy_amplification_laws", "privacy_amplification_surcharge", "zero_out_legs",
                      "shuffle_indices", "chi_lo_for", "chi_up_for", "sample", "estimate"})
_MISSING = object()

if TYPE_CHECKING:
    _StaticProtocolMeta = type
else:
    class _StaticProtocolMeta(type(Protocol)):
        """isinstance() against the contract looks attributes up statically.

        Before Python 3.12 ``isinstance`` on a runtime-checkable protocol calls ``hasattr``, which
        evaluates properties (``chi_up`` integrates numerically; ``mse_single`` of a
        GeneralRandomizer can raise ValueError). Here members are found with
        :func:`inspect.getattr_static` on every Python version: nothing is computed.
        """

        def __instancecheck__(cls, instance: Any) -> bool:
            if cls is not LocalRandomizer:
                return super().__instancecheck__(instance)
            for name in _MEMBERS:
                attr = inspect.getattr_static(instance, name, _MISSING)
                if attr is _MISSING or (name in _METHODS and attr is None):
                    return False
            return True


@runtime_checkable
class LocalRandomizer(Protocol, metaclass=_StaticProtocolMeta):
    """Protocol of a shuffle-model local randomizer (Takagi, Section 2).

    Attributes
    ----------
    dim : int
        Dimension of an input (1 for categorical or scalar randomizers).

    Notes
    -----
    Adjacency names are those of :mod:`sharpdp.shuffle.adjacency` (default ``"zero_out"``).
    ``isinstance(obj, LocalRandomizer)`` checks that every member exists (statically: no
    property is evaluated), not their signatures.
    """

    dim: int

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = "zero_out") -> list[tuple[float, Law]]:
        """Laws of the privacy-amplification variable, one per worst-case pair and order.

        Parameters
        ----------
        epsilon : float
            eps >= 0, nats (already validated by the accountant).
        adjacency : {"zero_out", "replace"}

        Returns
        -------
        list of (float, Law)
            ``(gamma, law of l_eps(Y), Y ~ R_BG)``; the accountant bounds the maximum over them.
            A law whose stored values are rounded states the bound on that rounding as its
            ``value_error`` (per user, units of L; e.g. ``FiniteLaw(values, probs,
            value_error=...)``, docs/accountant.md §3.2.2); the default 0 declares them exact.

        Raises
        ------
        NotImplementedError
            ``adjacency`` without a proven worst-case pair (the accountant then bounds replace-one
            through bot with the zero-out laws, see :meth:`zero_out_legs`).
        """
        ...

    def privacy_amplification_surcharge(self, epsilon: float, adjacency: str = "zero_out") -> float:
        """Additive term of the certified upper value (e.g. output mass outside a truncated support).

        Returns a float in [0, 1] (0.0 for randomizers whose laws are exact); non-increasing in
        ``epsilon``.
        """
        ...

    def zero_out_legs(self) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
        """Indices, into the zero-out laws, of the legs (x vs bot, bot vs x) for replace through bot.

        ``None`` for a leg means: bound it by the maximum over all zero-out laws.
        """
        ...

    def shuffle_indices(self, adjacency: str = "zero_out") -> tuple[float, float]:
        """(chi_lo, chi_up), dimensionless shuffle indices (Takagi, Definition "Shuffle index")."""
        ...

    def chi_lo_for(self, adjacency: str = "zero_out") -> float:
        """Lower shuffle index for ``adjacency``."""
        ...

    def chi_up_for(self, adjacency: str = "zero_out") -> float:
        """Upper shuffle index for ``adjacency``."""
        ...

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, zero-out."""
        ...

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out."""
        ...

    def sample(self, x: Any, rng: Any = None, *, threads: int | None = None) -> np.ndarray:
        """One randomized message per input row; ``rng``: Generator, seed or None; ``threads``: None = all cores."""
        ...

    def estimate(self, messages: Any) -> np.ndarray:
        """Unbiased estimate from the (shuffled) messages."""
        ...

    @property
    def mse_single(self) -> float:
        """Worst-case single-user mean squared error of :meth:`estimate` (squared data units)."""
        ...

    @property
    def local_epsilon(self) -> float | None:
        """Pure-LDP level eps0 in nats, or None when the randomizer is not pure eps0-LDP."""
        ...

    @property
    def sampler_refusal(self) -> str | None:
        """Why :meth:`sample` refuses every input of this randomizer (its parameters are beyond the release
        sampler: e.g. a noise table above 2^18 entries), or None when it can sample them (docs/cli.md §5).

        The accountant certifies the mechanism's law whatever this says. Refusals that depend on the call
        (an input outside the domain, ``rng=None`` for a float sampler) are not covered. Not checked by
        ``isinstance`` (a randomizer written before it still implements the contract);
        :class:`sharpdp.shuffle.randomizers.RandomizerBase` supplies None.

        Returns
        -------
        str or None
            The message :meth:`sample` would raise (ValueError), or None.
        """
        ...

    @property
    def can_sample(self) -> bool:
        """True when :meth:`sample` accepts this randomizer's parameters, i.e. :attr:`sampler_refusal` is None
        (docs/cli.md §5); not checked by ``isinstance``, True by default in
        :class:`sharpdp.shuffle.randomizers.RandomizerBase`."""
        ...


@runtime_checkable
class SupportsLowerForm(Protocol):
    """Optional capability: a lower form whose accountant value is a certified lower bound on delta."""

    def lower_form(self) -> Any:
        """An object with ``privacy_amplification_laws`` whose accountant value bounds delta from below."""
        ...


# ----------------------------------------------------------------------------------------------
# The optional members, for objects that implement only privacy_amplification_laws (lower-form
# adapters, user-defined randomizers): each capability is a protocol, and the accountant reads it
# through the functions below, which supply the contract's default where it is absent.


@runtime_checkable
class SupportsSurcharge(Protocol):
    """Optional capability: an additive term of the certified upper value (module step K of
    :mod:`sharpdp.shuffle.accountant`)."""

    def privacy_amplification_surcharge(self, epsilon: float, adjacency: str = "zero_out") -> float:
        """A bound in [0, 1], non-increasing in ``epsilon``, on the part of D_up the laws leave out."""
        ...


@runtime_checkable
class SupportsZeroOutLegs(Protocol):
    """Optional capability: which zero-out laws bound the legs of replace through bot."""

    def zero_out_legs(self) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
        """See :meth:`LocalRandomizer.zero_out_legs`."""
        ...


@runtime_checkable
class SupportsLocalEpsilon(Protocol):
    """Optional capability: the pure-LDP level eps0 (nats) or None."""

    @property
    def local_epsilon(self) -> float | None:
        """See :attr:`LocalRandomizer.local_epsilon`."""
        ...


def surcharge(randomizer: Any, epsilon: float, adjacency: str) -> float:
    """The randomizer's surcharge at (epsilon, adjacency); 0.0 (the default) without the capability."""
    if isinstance(randomizer, SupportsSurcharge):
        return float(randomizer.privacy_amplification_surcharge(epsilon, adjacency))
    return 0.0


def sampler_tv(randomizer: Any) -> float:
    """Per-message total-variation bound eta of the randomizer's release sampler to the mechanism its
    laws describe (docs/sampling.md §4): ``randomizer.sampler_tv``; 0.0 when the attribute is absent
    or None (a sampler that is not floating-point safe, e.g. PrivUnit: the accountant then certifies
    the mathematical mechanism only, docs/sampling.md §6)."""
    eta = getattr(randomizer, "sampler_tv", None)
    return 0.0 if eta is None else float(eta)


def zero_out_legs(randomizer: Any) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """The randomizer's legs for replace through bot; (None, None) (every zero-out law bounds both
    legs) without the capability."""
    if isinstance(randomizer, SupportsZeroOutLegs):
        return randomizer.zero_out_legs()
    return None, None


def local_epsilon(randomizer: Any) -> float | None:
    """eps0 of a pure eps0-LDP randomizer (float), else None (also without the capability)."""
    if isinstance(randomizer, SupportsLocalEpsilon):
        cap = randomizer.local_epsilon
        return None if cap is None else float(cap)
    return None


def lower_form(randomizer: Any) -> Any:
    """The randomizer's lower form (an object with ``privacy_amplification_laws``).

    Raises
    ------
    NotImplementedError
        The randomizer has no lower form (e.g. the Gaussian types).
    """
    if not isinstance(randomizer, SupportsLowerForm):
        raise NotImplementedError(f"{type(randomizer).__name__} has no lower form (D_lo) yet")
    return randomizer.lower_form()
