"""Shuffled rounds inside Google's dp_accounting (``pip install "sharpdp[interop]"``).

- :func:`to_pld`: a ``PrivacyLossDistribution`` that dominates a shuffled round, built from its
  certified privacy profile (:func:`sharpdp.shuffle.profile.dominating_pair`).
- :class:`ShuffledRoundEvent`: a ``dp_accounting.DpEvent`` describing one shuffled round.
- :class:`ShufflePLDAccountant`: dp_accounting's ``PLDAccountant`` that also accepts
  ``ShuffledRoundEvent`` (alone, self-composed or inside a ``ComposedDpEvent``), so shuffled rounds
  compose with Gaussian, Laplace, subsampled, ... events, and
  ``dp_accounting.mechanism_calibration.calibrate_dp_mechanism`` works with it unchanged.

Where certification ends: the PLD handed to dp_accounting dominates the shuffled round exactly
(its masses are the dominating pair's, ``docs/composition.md`` §3). Everything dp_accounting does
with it afterwards (FFT composition, tail truncation at ``tail_mass_truncation``, the hockey-stick
sums, epsilon search) is ordinary floating-point arithmetic without interval bounds: its results
are estimates of a certified quantity, usually accurate to many digits but not certified. For a
certified composed delta of shuffled rounds use :class:`sharpdp.shuffle.ComposedAccountant`.

Neighbouring relations: sharpdp's ``"zero_out"`` (one user's report replaced by the blanket
bot) is dp_accounting's ``REPLACE_SPECIAL``; ``"replace"`` is ``REPLACE_ONE``.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any, Optional

try:
    import attr
    import dp_accounting
    from dp_accounting import dp_event, privacy_accountant
    from dp_accounting.pld import pld_pmf, pld_privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as _pld
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("sharpdp.interop.dp_accounting needs dp-accounting: pip install 'sharpdp[interop]' "
                      "(in a clone: pip install '.[interop]')") from exc

from sharpdp import _validation as V
from sharpdp._progress import progress_label
from sharpdp.shuffle import ExactShuffleAccountant, ShuffleAccountant
from sharpdp.shuffle.certified import sharp_applies
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.export_step import export_step
from sharpdp.shuffle.pair_relattice import relattice
from sharpdp.shuffle.profile import DominatingPair, check_accountant, check_interval, dominating_pair, doubling_epsilon

NeighborRel = dp_accounting.NeighboringRelation
class _DefaultStep(float):
    """dp_accounting's own default lattice step as ShufflePLDAccountant's default: the object (``is``) marks a step
    that was not given (docs/composition.md §4.7); its value is the float 1e-4."""


DEFAULT_INTERVAL = _DefaultStep(1e-4)  # (nats) ShufflePLDAccountant's step when none is given
_RELATION = {"zero_out": NeighborRel.REPLACE_SPECIAL, "replace": NeighborRel.REPLACE_ONE}


def pld_from_pair(pair: DominatingPair) -> "_pld.PrivacyLossDistribution":
    """dp_accounting PLD (pessimistic, symmetric) carrying exactly the pair's masses.

    Both orders of the neighbouring pair are dominated by the one pair (``docs/composition.md``
    §2), so the PLD is symmetric (its ADD and REMOVE parts coincide).

    A pair with ``certified`` False (built from lower values, a reference) gives a PLD that
    dominates nothing; the conversion itself is exact either way.

    Raises
    ------
    TypeError
        ``pair`` is not a :class:`~sharpdp.shuffle.DominatingPair`.
    """
    if not isinstance(pair, DominatingPair):
        raise TypeError(f"pair must be a DominatingPair, got {type(pair).__name__}")
    probs = dict(zip(pair.losses.tolist(), pair.probs.tolist()))
    pmf = pld_pmf.create_pmf(probs, pair.value_discretization_interval, pair.infinity_mass, True)
    return _pld.PrivacyLossDistribution(pmf)


def export_interval(accountant) -> float:
    """The lattice step :func:`to_pld` uses by default for ``accountant``'s round (nats).

    eps_d / 1000, eps_d the first eps of a doubling search from 1e-6 nats whose certified delta is
    <= 1e-12 (capped at the local epsilon of a pure-LDP randomizer and at 60 nats): between 500 and
    1000 lattice points where delta >= 1e-12, enough for the adaptive sampling of
    :func:`~sharpdp.shuffle.dominating_pair` to meet its interpolation target there, whatever the
    round's eps scale (a very private round has eps ~ 1e-4 at delta = 1e-6, a heavy-tailed one
    eps ~ 1-5). A few certified profile values (cached), found by
    :func:`~sharpdp.shuffle.profile.doubling_epsilon` without certifying the costly points far
    below 1e-12 (the same eps_d); for a replace-one round bounded through bot most comparisons come
    from its zero-out legs (``docs/composition.md`` §2.11: the same eps_d, or a finer one where a
    split beats the accountant's search). Only a resolution choice: any step gives a
    dominating PLD (``docs/composition.md`` §5.1). The same step is the default of
    :func:`~sharpdp.shuffle.dominating_pair` and (the smallest over its rounds) of
    :class:`~sharpdp.shuffle.ComposedAccountant`, so the three share one cached pair per round
    (``docs/composition.md`` §4.6; the computation: ``sharpdp.shuffle.export_step``).

    Parameters
    ----------
    accountant : ShuffleAccountant or ExactShuffleAccountant
        The round (randomizer, n, adjacency).

    Returns
    -------
    float
        The lattice step in nats, >= 1e-9 (eps_d >= 1e-6).

    Raises
    ------
    TypeError
        ``accountant`` is not the accountant of one shuffled round.
    """
    return export_step(accountant, doubling_epsilon)  # (docs/composition.md §4.6: the one default step)


def to_pld(accountant: ShuffleAccountant | ExactShuffleAccountant, value_discretization_interval: Optional[float] = None,
           **options: Any) -> "_pld.PrivacyLossDistribution":
    """A dp_accounting privacy-loss distribution that dominates a shuffled round.

    Parameters
    ----------
    accountant : ShuffleAccountant or ExactShuffleAccountant
        The round (randomizer, n, adjacency); the sharp accountant's certified upper values give a
        pair that dominates the shuffled binary RR round itself (docs/sharp_krr.md §5).
    value_discretization_interval : float or None, default None
        Lattice step of the privacy loss (nats, in [1e-12, 1]), as dp_accounting's own PLDs. None:
        chosen from the round by :func:`export_interval` (its eps scale), so that the PLD's delta
        is within about 1 % above the accountant's certified ``get_delta`` wherever delta >= 1e-12
        (``docs/composition.md`` §5.1, §2.12; for an accountant with ``rel_tol`` <= 1e-2) on the rounds
        measured (BMG, k-RR, PrivUnit, GaussianRandomizer at n = 2-10 of both adjacencies; the
        accountant's own gaps bound it where they exceed the cap's room: 1.0093 at n = 2). Always
        dominating. Give the step explicitly to compose the PLD with other dp_accounting PLDs (they
        must share it).
    **options
        Passed to :func:`sharpdp.shuffle.profile.dominating_pair` (``epsilons``, ``delta_floor``,
        ``max_evaluations``, ``rel_tol``, ``cover_upper``, ``progress``: True / False / None as there,
        the progress bar on stderr while the pair is built).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Pessimistic, symmetric. Its hockey-stick curve lies above the mechanism's privacy profile
        at every eps of either sign (lower convex hull in t = e^eps of certified upper values, then
        the pessimistic connect-the-dots distribution of Doroshenko et al., "Connect the Dots:
        Tighter Discrete Approximations of Privacy Loss Distributions"; proof in
        ``docs/composition.md`` §2-§3). With ``cover_upper`` (the default) it also lies above the
        accountant's own ``get_delta(eps)`` at every eps where that value's bracket gap
        (upper - lower)/lower is at most min(g_a, g_b, tau), g the cover factors of the pair's samples a, b
        around eps and tau the cap of ``docs/composition.md`` §2.12 (7.5e-3 at the default sampling; §2,
        "Covering U itself"); elsewhere, e.g. below
        delta = 1e-12 where a bracket can be wider than its neighbours' (outside the accuracy range of
        §5.1), it can be below ``get_delta`` (both are certified upper values of the profile).
        dp_accounting's arithmetic on it is not interval-certified (module docstring).

    Raises
    ------
    TypeError
        ``accountant`` is not a ShuffleAccountant or ExactShuffleAccountant (one shuffled round).
    ValueError
        Bad discretisation interval or options (see ``dominating_pair``).
    """
    check_accountant(accountant)  # (a None step: dominating_pair's default, export_interval's step)
    with progress_label("to_pld: "):  # (the pair's bars named after the public call)
        return pld_from_pair(dominating_pair(accountant, value_discretization_interval, **options))


@attr.s(frozen=True, slots=True, auto_attribs=True, repr=False)
class ShuffledRoundEvent(dp_event.DpEvent):
    """One round of n users' reports of ``randomizer``, shuffled (a dp_accounting ``DpEvent``).

    Only :class:`ShufflePLDAccountant` composes it; dp_accounting's own accountants report it as
    an unsupported event, and its ``repr`` (which their error message shows) says where to go.

    Attributes
    ----------
    randomizer : object
        Any randomizer :class:`sharpdp.shuffle.ShuffleAccountant` accepts (BlanketMixedGaussian,
        GaussianRandomizer, RandomizedResponse, PrivUnit, GeneralRandomizer, ...).
    n : int
        Number of users, 1 <= n <= 1e9.
    adjacency : str, default "zero_out"
        "zero_out" (dp_accounting's REPLACE_SPECIAL) or "replace" (REPLACE_ONE).
    bound : str, default "blanket"
        Which certified accountant gives the round's dominating pair: "blanket"
        (:class:`sharpdp.shuffle.ShuffleAccountant`, any randomizer) or "sharp"
        (:class:`sharpdp.shuffle.ExactShuffleAccountant`, the shuffled mechanism's own delta: binary
        ``RandomizedResponse`` with ``adjacency="replace"`` only, docs/sharp_krr.md).

    Raises
    ------
    ValueError, TypeError
        At construction: ``n`` not an integer in [1, 1e9], ``adjacency`` not one of the two,
        ``bound`` not "blanket" or "sharp", or "sharp" for a round it does not cover.
    """

    randomizer: Any
    n: int
    adjacency: str = "zero_out"
    bound: str = "blanket"

    def __attrs_post_init__(self) -> None:
        V.integer("n", self.n, lo=1, hi=10**9)
        if not callable(getattr(self.randomizer, "privacy_amplification_laws", None)):
            raise TypeError(f"randomizer: {type(self.randomizer).__name__} is not a local randomizer (no "
                            "privacy_amplification_laws(epsilon, adjacency)); pass e.g. "
                            "sharpdp.shuffle.BlanketMixedGaussian(gamma, sigma0, 1)")
        if self.adjacency not in _RELATION:
            raise ValueError(f"adjacency must be 'zero_out' or 'replace', got {self.adjacency!r}")
        if self.bound not in ("blanket", "sharp"):
            raise ValueError(f"bound must be 'blanket' or 'sharp', got {self.bound!r}")
        if self.bound == "sharp" and not sharp_applies(self.randomizer, self.n, self.adjacency):
            raise ValueError("bound='sharp' covers binary RandomizedResponse (k = 2) with adjacency='replace' "
                             f"only (ExactShuffleAccountant), got randomizer={self.randomizer!r}, "
                             f"adjacency={self.adjacency!r}; use bound='blanket'")

    def __repr__(self) -> str:
        return (f"ShuffledRoundEvent(randomizer={self.randomizer!r}, n={self.n!r}, adjacency={self.adjacency!r}, "
                f"bound={self.bound!r}; compose it with sharpdp.interop.dp_accounting.ShufflePLDAccountant, a "
                "PLDAccountant that knows shuffled rounds)")


class AdjacencyMismatchError(ValueError, privacy_accountant.UnsupportedEventError):
    """A ShuffledRoundEvent whose adjacency needs the other neighbouring relation (a ValueError
    with its own message; also dp_accounting's UnsupportedEventError, which callers may catch)."""


_MOVED: "OrderedDict" = OrderedDict()  # (id(export pair), step) -> (export pair, its PLD moved onto the step)
_MOVED_MAX = 16


def _moved_pld(pair: DominatingPair, step: float):
    """The PLD of ``pair`` moved onto ``step`` (:func:`~sharpdp.shuffle.pair_relattice.relattice`), kept for the
    accountants dp_accounting's calibration loops create (at most 16, the least recently used dropped; the entry
    holds the pair, so its id is not reused while it lives)."""
    key = (id(pair), float(step))
    hit = _MOVED.get(key)
    if hit is None or hit[0] is not pair:
        hit = _MOVED[key] = (pair, pld_from_pair(relattice(pair, step)))
        while len(_MOVED) > _MOVED_MAX:
            _MOVED.popitem(last=False)
    _MOVED.move_to_end(key)
    return hit[1]


def _pld_points(pld) -> int:
    """The number of lattice points of a dp_accounting PLD (the larger of its two directions)."""
    return max(int(pld._pmf_remove.size), int(pld._pmf_add.size))  # noqa: SLF001  (dp_accounting's own fields)


def pick_step(step: float, finest: float, rounds: int, epsilon: float, points: int) -> float | None:
    """The lattice step a :class:`ShufflePLDAccountant` made without one moves its composition to, or None (keep
    ``step``; ``docs/composition.md`` §4.8).

    None unless the finest export step of its shuffled rounds (``finest``) is below ``step`` and the rounds' lattice
    shift, ``rounds`` x ``step`` (each round's PLD at most one step above its export pair, §4.7), exceeds
    ``limits.EXPORT_PICK_REL`` x ``epsilon``; else ``finest`` times the largest power of two whose shift the query
    allows (``finest`` itself if none), raised to the smallest such multiple that keeps the composed PLD (``points``
    lattice points on ``step``) within ``limits.EXPORT_PICK_POINTS`` points, if that is below ``step``. An estimate
    that chooses a resolution only."""
    want = limits.EXPORT_PICK_REL * float(epsilon) / max(int(rounds), 1)  # (the step whose shift the query allows)
    if not finest < step or rounds <= 0 or step <= want:
        return None
    new = finest * 2.0 ** math.floor(math.log2(want / finest)) if want >= finest else finest
    budget = step * max(int(points), 1) / limits.EXPORT_PICK_POINTS  # (the composed PLD within the points' budget)
    if new < budget:
        new = finest * 2.0 ** math.ceil(math.log2(budget / finest))
    return new if new < step * (1 - 1e-9) else None


def _pair_keywords() -> frozenset:
    """Keywords of :func:`dominating_pair` a ShufflePLDAccountant passes on (``**pair_options``; its
    ``rel_tol`` is the accountant's, ``lower`` is refused)."""
    import inspect

    params = inspect.signature(dominating_pair).parameters
    return frozenset(k for k, p in params.items() if p.kind is p.KEYWORD_ONLY) - {"lower", "rel_tol"}


def _shuffled_rounds(event: dp_event.DpEvent):
    """Every ShuffledRoundEvent inside ``event`` (composed and self-composed events walked)."""
    if isinstance(event, ShuffledRoundEvent):
        yield event
    elif isinstance(event, dp_event.ComposedDpEvent):
        for e in event.events:
            yield from _shuffled_rounds(e)
    elif isinstance(event, dp_event.SelfComposedDpEvent):
        yield from _shuffled_rounds(event.event)


class ShufflePLDAccountant(pld_privacy_accountant.PLDAccountant):
    """dp_accounting's PLD accountant extended with :class:`ShuffledRoundEvent`.

    Parameters
    ----------
    neighboring_relation : dp_accounting.NeighboringRelation, default REPLACE_SPECIAL
        REPLACE_SPECIAL accepts "zero_out" rounds, REPLACE_ONE "replace" rounds; other events as in
        dp_accounting's ``PLDAccountant`` (each checks the relation itself).
    value_discretization_interval : float, default 1e-4
        Lattice step of every PLD (nats, in [1e-12, 1]); dp_accounting's own default. Not given: each shuffled
        round's PLD is its export pair (the one ``to_pld(acc)``, ``dominating_pair(acc)`` and
        ``ComposedAccountant`` share, built once per process) moved onto that lattice without new certified values
        (:func:`sharpdp.shuffle.pair_relattice.relattice`, ``docs/composition.md`` §4.7; ``limits.EXPORT_RELATTICE``
        False: a pair built on 1e-4 as before); at a query where very private rounds (export step below 1e-4) make
        that lattice coarse, the whole composition is moved onto a finer step picked from their export steps
        (:func:`pick_step`, ``docs/composition.md`` §4.8; ``limits.EXPORT_PICKS_STEP`` False: 1e-4 always). A step
        given explicitly: the round's pair built on that step, never changed.
    rel_tol : float, default 1e-2
        Passed to each round's :class:`~sharpdp.shuffle.ShuffleAccountant`, in (0, 1).
    **pair_options
        Passed to :func:`sharpdp.shuffle.profile.dominating_pair` (``epsilons``, ``delta_floor``,
        ``max_evaluations``, ``cover_upper``, ``progress``; its own ``rel_tol``, the sampling
        target, cannot be passed here: ``rel_tol`` above is the accountant's).
        Only its keyword-only options are accepted, except ``lower`` (a pair built from lower
        values certifies nothing); anything else is refused at construction.

    Raises
    ------
    TypeError
        ``neighboring_relation`` is not a ``dp_accounting.NeighboringRelation`` (e.g. a string);
        an unknown keyword.
    ValueError
        ``value_discretization_interval`` not in [1e-12, 1], ``rel_tol`` not in (0, 1).

    Notes
    -----
    ``compose(event, count)``, ``get_epsilon(target_delta)``, ``get_delta(target_epsilon)`` and
    ``supports(event)`` are dp_accounting's, with their arguments checked as the native
    accountants check theirs (``count`` an integer >= 1, ``target_delta`` in (0, 1),
    ``target_epsilon`` real, +-inf allowed (any sign, as dp_accounting's; docs/composition.md §8): ValueError/TypeError
    naming the argument), and a
    ShuffledRoundEvent whose adjacency does not match ``neighboring_relation`` refused by
    ``compose`` with a ValueError saying so (``supports`` returns False). A shuffled round enters as the PLD of
    :func:`to_pld` (certified domination); the composition and the final numbers are
    dp_accounting's uncertified floating-point arithmetic (module docstring). A round's pair is
    built once per process (shared by every accountant of the same round:
    :func:`sharpdp.shuffle.clear_caches`), its PLD cached per (randomizer object, n, adjacency)
    within one accountant; with the default step the round's export pair serves every accountant, whatever
    dp_accounting's calibration loops create (``docs/composition.md`` §4.7). The lattice step is this accountant's
    (dp_accounting composes only PLDs on one lattice): for a very private round (eps ~ 1e-3 at delta = 1e-6) 1e-4 is
    coarse and over-reports delta (1.4-2x at k = 1-1000 rounds of BMG(0.95, 4.6), n = 1e4); without a step given the
    accountant then moves to a finer one at its next query (class parameter above; ``value_discretization_interval``
    reports the step in use), unless its other events (e.g. a Gaussian release of eps ~ 1 and more) make the rounds'
    lattice shift negligible or the composed PLD too large for it.
    """

    _pld: Any  # the composed PLD, created by the base class (dp_accounting's type)
    _value_discretization_interval: float  # (the base class's step)

    def __init__(self, neighboring_relation: "dp_accounting.NeighboringRelation" = NeighborRel.REPLACE_SPECIAL,
                 value_discretization_interval: float = DEFAULT_INTERVAL, *, rel_tol: float = 1e-2,
                 **pair_options: Any):
        if not isinstance(neighboring_relation, NeighborRel):
            raise TypeError(f"neighboring_relation must be a dp_accounting.NeighboringRelation "
                            f"(REPLACE_SPECIAL for zero-out rounds, REPLACE_ONE for replace-one rounds), got "
                            f"{type(neighboring_relation).__name__} {neighboring_relation!r}")
        # (not given: dp_accounting's default lattice, each round's export pair moved onto it, docs/composition.md §4.7)
        self._relattice = value_discretization_interval is DEFAULT_INTERVAL
        value_discretization_interval = float(check_interval(value_discretization_interval))
        V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        unknown = sorted(set(pair_options) - _pair_keywords())
        if unknown:
            raise TypeError(f"ShufflePLDAccountant got unexpected keyword argument(s) {unknown}; it accepts "
                            f"neighboring_relation, value_discretization_interval, rel_tol and the options of "
                            f"dominating_pair {sorted(_pair_keywords())}")
        super().__init__(neighboring_relation, value_discretization_interval)
        self._rel_tol = rel_tol
        self._pair_options = pair_options
        self._round_plds: dict = {}
        self._finest = math.inf  # the finest export step of the shuffled rounds composed (docs/composition.md §4.8)
        self._moved_rounds = 0  # ... and how many rounds (counts included) were composed

    def compose(self, event: dp_event.DpEvent, count: int = 1) -> "ShufflePLDAccountant":
        """dp_accounting's ``compose``, with ``count`` checked and adjacency mismatches named.

        Raises
        ------
        TypeError
            ``count`` not an integer (a bool too), ``event`` not a DpEvent.
        ValueError
            ``count`` < 1; :class:`AdjacencyMismatchError` (a ValueError and an
            UnsupportedEventError): a ShuffledRoundEvent inside ``event`` whose adjacency needs
            the other neighbouring relation.
        dp_accounting.UnsupportedEventError
            An event that neither dp_accounting's PLD accountant nor this adapter supports.
        """
        count = V.integer("count", count, lo=1)
        for r in _shuffled_rounds(event):
            want = _RELATION[r.adjacency]
            if want != self.neighboring_relation:
                raise AdjacencyMismatchError(f"event: a ShuffledRoundEvent with adjacency {r.adjacency!r} needs "
                                 f"ShufflePLDAccountant(neighboring_relation={want}); this accountant uses "
                                 f"{self.neighboring_relation}")
        super().compose(event, count)
        return self

    def get_epsilon(self, target_delta: float) -> float:
        """dp_accounting's epsilon at ``target_delta`` in (0, 1) (nats; an uncertified estimate, class Notes)."""
        target_delta = V.probability_open("target_delta", target_delta)
        eps = super().get_epsilon(target_delta)
        return super().get_epsilon(target_delta) if self._pick_step(eps) else eps

    def get_delta(self, target_epsilon: float) -> float:
        """dp_accounting's delta at ``target_epsilon`` (nats, any sign, +-inf allowed; an uncertified estimate).

        For ``target_epsilon`` < 0 the composed PLD's hockey stick at e^eps < 1, as dp_accounting's own
        ``PLDAccountant`` answers it, kept within [1 - e^eps, 1] (every hockey stick H_t is; its float sum can
        leave that range by a few ulp); 1 at -inf (``docs/composition.md`` §8). NaN: ValueError.
        """
        eps = V.real("target_epsilon", target_epsilon, allow_inf=True)
        if eps == -math.inf:
            return 1.0
        self._pick_step(eps)
        delta = super().get_delta(eps)
        return min(1.0, max(delta, -math.expm1(eps))) if eps < 0 else delta

    @property
    def value_discretization_interval(self) -> float:
        """The lattice step of the composed PLD (nats): the step given, or without one dp_accounting's 1e-4 until a
        query finds a finer step for the very private shuffled rounds composed (``docs/composition.md`` §4.8)."""
        return float(self._value_discretization_interval)

    def _pick_step(self, epsilon: float) -> bool:
        """Without a step given: the composition moved onto a finer lattice where its shuffled rounds' export steps are
        finer than the current step and their lattice shift, one step per round, exceeds ``limits.EXPORT_PICK_REL``
        times ``epsilon`` (the query's eps); True if it moved (``docs/composition.md`` §4.8; a resolution choice
        only: every lattice gives a dominating PLD)."""
        if not (self._relattice and limits.EXPORT_RELATTICE and limits.EXPORT_PICKS_STEP):
            return False
        step = pick_step(self._value_discretization_interval, self._finest, self._moved_rounds, abs(epsilon),
                         _pld_points(self._pld))
        if step is None:
            return False
        self._value_discretization_interval = step  # every event of the ledger composed again on the new step
        self._pld = _pld.identity(value_discretization_interval=step)
        self._contains_non_dp_event = False
        self._round_plds = {}
        self._moved_rounds = 0
        self._maybe_compose(self.ledger, 1, True)
        return True

    def _round_pld(self, event: ShuffledRoundEvent):
        key = (id(event.randomizer), event.n, event.adjacency, event.bound)
        hit = self._round_plds.get(key)
        if hit is None or hit[0] is not event.randomizer:
            acc: Any
            if event.bound == "sharp":  # certified upper values of the mechanism's own delta (docs/sharp_krr.md)
                acc = ExactShuffleAccountant(event.randomizer, event.n, event.adjacency, rel_tol=self._rel_tol)
            else:
                acc = ShuffleAccountant(event.randomizer, event.n, event.adjacency, rel_tol=self._rel_tol)
            with progress_label("ShufflePLDAccountant.compose: "):  # (the pair's bars named after the public call)
                if self._relattice and limits.EXPORT_RELATTICE:  # the export pair, moved (docs/composition.md §4.7)
                    pair = dominating_pair(acc, **self._pair_options)
                    self._finest = min(self._finest, pair.value_discretization_interval)
                    pld = _moved_pld(pair, self._value_discretization_interval)
                else:
                    pld = pld_from_pair(dominating_pair(acc, self._value_discretization_interval, **self._pair_options))
            hit = (event.randomizer, pld)
            self._round_plds[key] = hit
        return hit[1]

    def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                       do_compose: bool) -> Optional["pld_privacy_accountant.CompositionErrorDetails"]:
        # (composed and self-composed events recurse through this method in the base class)
        if not isinstance(event, ShuffledRoundEvent):
            return super()._maybe_compose(event, count, do_compose)
        Details = pld_privacy_accountant.CompositionErrorDetails
        want = _RELATION[event.adjacency]  # checked when the event was built
        if want != self.neighboring_relation:  # (compose names it first; this serves supports())
            return Details(invalid_event=event, error_message=(
                f"adjacency {event.adjacency!r} of ShuffledRoundEvent needs neighboring_relation {want}; this "
                f"accountant uses {self.neighboring_relation}"))
        if do_compose:
            self._moved_rounds += count
            pld = self._round_pld(event)
            self._pld = self._pld.compose(pld if count == 1 else pld.self_compose(count))
        return None


__all__ = ["AdjacencyMismatchError", "ShufflePLDAccountant", "ShuffledRoundEvent", "export_interval", "pld_from_pair",
           "to_pld"]
