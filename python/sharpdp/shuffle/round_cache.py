"""One shuffled round as a cache key, and the process-wide caches of its certified values and pairs.

:func:`check_accountant` is the one check that an object is the accountant of one shuffled round
(used by the profile, the pair, composition and the interop adapters); :func:`round_key` names the
round; the LRU-bounded caches hold its certified profile values and built dominating pairs, shared
by every accountant object of the same round within a process (``docs/composition.md`` §2.3).
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict

import numpy as np

from sharpdp.shuffle.accountant.memo import clear_result_memos

# Process-wide caches (docs/composition.md §2.3), shared by every accountant OBJECT of the same
# round (equal ``round_key``): the certified (lower, upper) profile values by eps, and the built
# dominating pairs (so to_pld, ComposedAccountant and ShufflePLDAccountant build a round's pair once
# per process). Both are LRU-bounded: MAX_ROUNDS rounds of values, MAX_PAIRS pairs.
MAX_ROUNDS = 64
MAX_PAIRS = 64
VALUES: "OrderedDict" = OrderedDict()  # round key -> ({eps: (lower, upper)}, randomizer)
PAIRS: "OrderedDict" = OrderedDict()  # (round key, Delta, pair options) -> DominatingPair
LOCK = threading.RLock()
# an accountant without a round key (unknown type) keeps its values per object, as before
OBJECT_VALUES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# replace-one accountants bounded through bot -> their zero-out twin (its values cached as above)
TWINS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# (round key, export step, switches) -> the export step's number of halvings (docs/composition.md §4.9), at most
# MAX_ROUNDS rounds; filled by sharpdp.shuffle.export_step, emptied by clear_caches with the others
SPLITS: "OrderedDict" = OrderedDict()


def check_accountant(accountant, name: str = "accountant") -> None:
    """TypeError naming ``name`` unless ``accountant`` is the accountant of one shuffled round: a
    :class:`~sharpdp.shuffle.ShuffleAccountant` or an :class:`~sharpdp.shuffle.ExactShuffleAccountant`
    (duck-typed: certified ``get_delta_bounds`` and an ``adjacency``; this module sits below the
    accountant, which delegates ``privacy_profile`` to it). The one check of the profile, the pair,
    composition and the interop adapters."""
    if callable(getattr(accountant, "pairs", None)) and hasattr(accountant, "parts"):
        raise TypeError(f"{name} must be the accountant of ONE shuffled round (ShuffleAccountant or "
                        f"ExactShuffleAccountant), got a {type(accountant).__name__} (already a composition: its "
                        f"rounds' dominating pairs are its .pairs())")
    if not callable(getattr(accountant, "get_delta_bounds", None)) or not hasattr(accountant, "adjacency") \
            or not hasattr(accountant, "randomizer") or not hasattr(accountant, "n"):
        raise TypeError(f"{name} must be a ShuffleAccountant or ExactShuffleAccountant (one shuffled round), got "
                        f"{type(accountant).__name__}")


def randomizer_key(randomizer):
    """Hashable identity of a randomizer's privacy laws and release sampler.

    sharpdp's own parametric randomizers (exact type, not a subclass) are fully determined by
    their type and constructor parameters (``repr``, i.e. ``_params()``) plus the sampler grid
    (``grid_bits``, also when defaulted): equal keys mean equal certified values.
    :class:`~sharpdp.shuffle.LatticePrivUnit` (exact type) is keyed the same way plus its public
    ``p``, ``theta``, ``dim`` and ``scale_bits``: the type keeps it apart from a PrivUnit of equal
    (p, theta, d), whose accountant adds no sampler charge and uses PrivUnit's eps0, not the lattice
    release's ``local_epsilon`` (docs/sampling.md §10.6); ``scale_bits`` fixes both. Any other
    randomizer (GeneralRandomizer, whose density is a callable; user classes; other subclasses) is
    keyed by the object itself: the cache entry then holds a strong reference to it, so its ``id``
    cannot be reused while the entry lives."""
    from sharpdp.shuffle.randomizers import (BlanketMixedGaussian, GaussianRandomizer, LatticePrivUnit, PrivUnit,
                                             RandomizedResponse)

    t = type(randomizer)
    if t in (BlanketMixedGaussian, GaussianRandomizer, PrivUnit, RandomizedResponse):
        return ("params", t, repr(randomizer), getattr(randomizer, "grid_bits", None),
                getattr(randomizer, "dim", None))
    if t is LatticePrivUnit:
        return ("params", t, repr(randomizer), float(randomizer.p), float(randomizer.theta), int(randomizer.dim),
                int(randomizer.scale_bits))
    return ("object", id(randomizer))


def round_key(accountant):
    """The cache key of one shuffled round (``docs/composition.md`` §2.3): accountant type,
    randomizer (:func:`randomizer_key`), n, adjacency, the accountant's ``rel_tol``, its sampler
    charge (``sampler_tau``, ``eps_tau``: what ``sampler_charge`` and the sampler grid add to
    delta) and whether replace-one is bounded through bot. None for an object that is not
    weak-referenceable or lacks these attributes (its values are then not shared)."""
    try:
        t = type(accountant)
        return (t, randomizer_key(accountant.randomizer), int(accountant.n),
                str(accountant.adjacency), float(getattr(accountant, "rel_tol", math.nan)),
                repr(getattr(accountant, "sampler_tau", None)), repr(getattr(accountant, "eps_tau", None)),
                bool(getattr(accountant, "via_bottom", False)))
    except (AttributeError, TypeError, ValueError):
        return None


def lru_get(table: OrderedDict, key, limit: int, make):
    """table[key] (moved to the most recent end), created by ``make()`` when missing; the oldest
    entries beyond ``limit`` are dropped."""
    with LOCK:
        hit = table.get(key)
        if hit is not None:
            table.move_to_end(key)
            return hit
        hit = table[key] = make()
        while len(table) > limit:
            table.popitem(last=False)
        return hit


def value_cache(accountant) -> dict:
    """The dict eps -> (lower, upper) shared by every accountant of the same round."""
    key = round_key(accountant)
    if key is not None:
        # (the randomizer rides along so an object-keyed entry keeps its id alive)
        return lru_get(VALUES, key, MAX_ROUNDS, lambda: ({}, accountant.randomizer))[0]
    try:
        return OBJECT_VALUES.setdefault(accountant, {})
    except TypeError:  # not weak-referenceable: no cache
        return {}


def sibling_samples(pkey) -> list:
    """The evaluation points (eps >= 0, sorted) of the cached pairs of the same round and options as the pair key
    ``pkey`` (round key, Delta, epsilons, pair options) on another lattice step: points whose certified values are
    in the round's value cache and may seed a pair on Delta (``docs/composition.md`` §2.4)."""
    key, dx, eps, rest = pkey[0], pkey[1], pkey[2], pkey[3:]
    out: set = set()
    with LOCK:
        for k, hit in PAIRS.items():
            if k[0] == key and k[2] is None and eps is None and k[3:] == rest and k[1] != dx:
                e = np.asarray(hit[0].sample_epsilons, dtype=float)
                # (the points _grid_eval evaluated: a hair below k Delta', 0 itself at k = 0)
                out.update(np.where(e > 0, np.nextafter(e, 0.0), 0.0).tolist())
    return sorted(out)


def clear_caches() -> None:
    """Empty the process-wide caches of privacy-profile values and dominating pairs.

    Every accountant of the same round (equal randomizer parameters, n, adjacency, rel_tol and
    sampler charge) shares one set of certified profile values and one dominating pair per
    (lattice step, pair options) within a process, so ``to_pld``, ``ComposedAccountant`` and
    ``ShufflePLDAccountant`` (dp_accounting's calibration loops) build a round's pair once. The
    caches hold at most 64 rounds of values and 64 pairs (least recently used dropped first;
    ``docs/composition.md`` §2.3), and the export step's number of halvings per round (§4.9). The engine's own result memos (bounded, per law and arguments) are emptied too,
    so the next call costs what it costs in a fresh process. Clearing them changes no value, only the time of the
    next call.

    Returns
    -------
    None
    """
    with LOCK:
        VALUES.clear()
        PAIRS.clear()
        OBJECT_VALUES.clear()
        TWINS.clear()
        SPLITS.clear()
    clear_result_memos()


_SHORT = {"BlanketMixedGaussian": "BMG", "GaussianRandomizer": "Gaussian", "RandomizedResponse": "RR"}


def round_label(accountant, width: int = 44) -> str:
    """A short name of the round for progress bars, e.g. ``BMG(0.0409, 0.596, 1) n=1e5 zero-out``: the randomizer's
    ``repr`` with its numbers to 3 significant digits (its type's short name where known), n, the adjacency; the
    randomizer part cut with "..." so that the whole fits ``width`` characters. No value of the round, only its
    public parameters."""
    import re

    rz = getattr(accountant, "randomizer", None)
    text = re.sub(r"-?\d+\.\d+(?:[eE][-+]?\d+)?", lambda m: f"{float(m.group()):.3g}", repr(rz))
    head, paren, rest = text.partition("(")
    text = _SHORT.get(head, head) + paren + rest
    text = re.sub(r"\b[A-Za-z_]\w*=", "", text)  # (keyword names dropped: the values say enough)
    n = getattr(accountant, "n", None)
    ns = "" if n is None else f" n={n}"
    if isinstance(n, int) and n >= 10**4:
        k = len(str(n)) - 1
        if n % 10**k == 0:  # one significant digit: 1e5, 3e4
            ns = f" n={n // 10**k}e{k}"
    adj = str(getattr(accountant, "adjacency", "")).replace("_", "-")
    tail = f"{ns} {adj}".rstrip()
    room = max(width - len(tail), 12)
    if len(text) > room:
        text = text[:room - 3] + "..."
    return text + tail


__all__ = ["LOCK", "MAX_PAIRS", "MAX_ROUNDS", "OBJECT_VALUES", "PAIRS", "TWINS", "VALUES", "check_accountant",
           "sibling_samples",
           "clear_caches", "lru_get", "randomizer_key", "round_key", "round_label", "value_cache"]
