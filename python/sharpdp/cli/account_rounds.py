"""`sharpdp account --rounds K`: the certified composition of K rounds (ComposedAccountant) and what its answer
prints beside the figure (which route gives it, the smallest certified value: docs/cli.md §2, docs/composition.md
§4.3-§4.4); the safe-side rounding of the figures it prints lives in :mod:`sharpdp.cli.rounding`."""

from __future__ import annotations

import sys
from typing import Any, Callable

from sharpdp.cli.rounding import g_down, g_up, short_floats  # noqa: F401  (re-exported: public names)


COMPOSED_LOWER = ("reference value: composes the rounds' lower values on the same pair and lattice and shows what "
                  "the construction costs (the bracket is of this composition bound, not of delta); it is not a "
                  "lower bound on the composed delta")


#: From this n on, ``--rounds K`` says up front that the round's pair can take minutes.
LARGE_N_ROUNDS = 10**7
#: Measured (``sharpdp account --gamma 0.95 --sigma0 4.6 --epsilon 1e-4 --rounds 3``, 2 cores at load 5-9,
#: 2026-12-05): n = 1e7 25 s of CPU (63 s wall); n = 1e8 and 1e9 stopped after 180 s wall with 120 / 22 of up to
#: 400 values; the Gaussian-like BMG(0.5, 1) at n = 1e9, 5 rounds, epsilon 1e-3: 11 values in 180 s.
LARGE_N_ROUNDS_NOTE = (". At n >= 10^7 one certified value of a heavy-tailed round costs 0.1-5 s (one round's figure, "
                       "without --rounds, takes seconds, up to about 15 s of CPU at n = 10^9), so the pair's up to 400 values can take many minutes (measured "
                       "on 2 busy cores: about 1 minute at n = 10^7; more than 3 minutes at n = 10^8 and 10^9); its bar "
                       "estimates the time left after its first stage; Ctrl-C stops it")


def compose_rounds(acc, rounds: int, eps, delta, discretization) -> dict[str, Any]:
    """Certified composition of ``rounds`` copies of the round (ComposedAccountant)."""
    from sharpdp import _validation as V
    from sharpdp.shuffle import ComposedAccountant

    dx = None if discretization is None else V.real("--discretization", discretization, lo=0.0, hi=1.0,
                                                        lo_open=True)
    # the round's dominating pair costs up to a few hundred certified profile values (seconds to
    # minutes): say so at once, then its bar (total = the sampling budget, left at 100 % when the
    # sampling stops early) from the start
    model: bool | None = _model_route(acc, eps, dx)  # (None: the model route fell back to the default pair)
    how = ("40 certified values at model-placed points (its bar, from the start, counts every certified value the "
           f"pair needs: about {_MODEL_VALUES} with the few that place the points, more where they are placed twice)"
           if model else
           "its certified privacy profile (its bar counts the certified values against their budget; it stops when "
           "accurate)")
    print(f"sharpdp account: composing {rounds} rounds: building the round's dominating pair from {how}"
          + (LARGE_N_ROUNDS_NOTE if acc.n >= LARGE_N_ROUNDS else ""), file=sys.stderr, flush=True)
    if model:
        # a BMG round at a given epsilon: the round's pair from 40 model-placed certified values
        # (docs/composition.md §4.2; certified, within ~1-6 % of the default pair, seconds instead of minutes)
        from sharpdp.shuffle.calibration.rounds import model_composition

        ca = _gathered(lambda: model_composition(acc.randomizer, acc.n, acc.adjacency, rounds, eps, progress=None))
        if "epsilons" not in ca._pair_options:  # (the fallback: the default pair, built from here on)
            model = None
            print("sharpdp account: the model-placed points reach no floor (the round's certified values level off "
                  "above it, docs/composition.md §4.2): building the default pair from the round's certified privacy "
                  "profile instead (its bar counts the values against their budget)", file=sys.stderr, flush=True)
    else:
        ca = ComposedAccountant([(acc, rounds)], dx, progress=None)  # a bar after 1 s; a quick step prints nothing
    out: dict[str, Any] = {"rounds": rounds, "discretization": ca.value_discretization_interval,
                           "pair": _FALLBACK_PAIR if model is None else _MODEL_PAIR if model else _PROFILE_PAIR}
    if eps is not None:
        lo, up = ca.get_delta_bounds(eps)
        # which route gives the value, and at which epsilon (basic composition's, possibly certified at a smaller
        # epsilon: docs/composition.md §4.3, §4.4): say so
        route, at = ca.delta_route(eps)
        out.update(epsilon=eps, delta=float(up), delta_lower=float(lo), delta_upper=float(up),
                   delta_lower_meaning=BASIC_LOWER if route == "basic" else COMPOSED_LOWER,
                   composition_route=_route_text(route, at, eps), certified_at_epsilon=at,
                   smallest_certified=_smallest(ca, eps, float(up)))
    else:
        try:
            found = float(ca.get_epsilon(delta))
        except ValueError as exc:  # (it names the smallest certified value: figures as the CLI prints them)
            raise ValueError(short_floats(str(exc), keep=(float(delta),))) from None
        route, _ = ca.delta_route(found)
        out.update(delta=delta, epsilon=found, composition_route=_route_text(route, found, found))
    return out


#: The model route's certified values when its points are placed once: one estimate of the composed value, the
#: value at the pair's top, the 40 points (docs/composition.md §4.2); the secant that moves a missed top and a
#: second placement add more (the bar's total grows then; its final line says it was estimated).
_MODEL_VALUES = 42


def _gathered(build: Callable[[], Any]) -> Any:
    """``build()`` under one bar, shown from the start (a log: by the progress rule's 2 s), that counts every
    certified value the model-placed pair needs: its steps' own bars (single values, the tail secant, the 40
    points, each shorter than the rule's delays) count into it instead of drawing (``progress_gather``)."""
    from sharpdp._progress import progress_bar, progress_gather

    bar = progress_bar(total=_MODEL_VALUES, desc="round's dominating pair (model-placed points)", unit=" values",
                       file=sys.stderr, leave=True, delay=0.0, estimated=True)
    try:
        with progress_gather(bar):
            out = build()
        bar.total = bar.n  # finished: nothing more to come
        return out
    finally:
        bar.close()


def _route_text(route: str, at: float, eps: float) -> str:
    """What gives the composed value at ``eps``: the dominating pair, basic composition, or basic composition at a
    smaller epsilon ``at`` (docs/composition.md §4.4)."""
    if route == "pair":
        return "dominating pair (docs/composition.md §4)"
    if at < eps:
        return (f"basic composition at epsilon = {g_up(at, 4)} nats, the smallest value found at or below this epsilon "
                "(delta is non-increasing in epsilon, so a value certified there holds here: docs/composition.md "
                "§4.4)")
    return _BASIC_ROUTE


def _smallest(ca: Any, eps: float, up: float) -> dict[str, Any] | None:
    """The smallest certified composed delta found (``ComposedAccountant.smallest_certified_delta``, the value
    get_epsilon's refusal names), where the rounds' release-sampler charge makes at least half of the value ``up``
    at ``eps`` (the value rises with epsilon through it: docs/composition.md §4.4); None elsewhere."""
    from sharpdp.shuffle.basic_composition import charge

    c = charge(ca.parts, eps)
    if not (up > 0.0 and c > 0.0 and c >= 0.5 * up):
        return None
    v, at, route = ca.smallest_certified_delta()
    return {"delta": v, "epsilon": at, "route": "basic composition" if route == "basic" else "dominating pair",
            "meaning": "the smallest certified composed delta found (the rounds' release-sampler charge grows with "
                       "epsilon); delta is non-increasing in epsilon, so it also holds at every larger epsilon "
                       "(docs/composition.md §4.4); no --delta below it is certified"}


def smallest_text(r: dict[str, Any]) -> str:
    """The text line of :func:`_smallest` (empty without one)."""
    s = r.get("smallest_certified")
    if not s:
        return ""
    return (f"\nsmallest certified delta: {g_up(s['delta'])} at epsilon = {g_up(s['epsilon'], 4)} nats ({s['route']}); it "
            f"also holds at every larger epsilon (delta is non-increasing in epsilon: docs/composition.md §4.4)")


_BASIC_ROUTE = ("basic composition: the sum over the rounds of each round's certified delta at epsilon / K (K rounds), "
                "below the dominating pair's composed value here (deep in the tails, where the pair's infinity mass "
                "or lattice dominates it; docs/composition.md §4.3)")
BASIC_LOWER = ("reference value of basic composition: the same sum of the round's lower values at epsilon / K (0 where "
               "the accountant computes none); it is not a lower bound on the composed delta")
_MODEL_PAIR = ("model-placed: the round's dominating pair from 40 certified values at model-placed points, "
               "about 1-6 % looser than the full profile's pair, "
               "which --discretization builds (docs/composition.md §4.2)")
_FALLBACK_PAIR = ("model-placed route, fallen back to the full profile: the model's 40 points reach no floor (the "
                  "round's certified values level off above it), so the round's dominating pair is built from its "
                  "certified privacy profile (docs/composition.md §4.2)")
_PROFILE_PAIR = "full profile: the round's dominating pair from its certified privacy profile (docs/composition.md §2)"


def _model_route(acc: Any, eps, dx) -> bool:
    """Whether ``--rounds`` composes through the model-placed pair (docs/composition.md §4.2): a BMG
    round (not bounded through bot) asked at an epsilon > 0, with the default lattice step."""
    from sharpdp.shuffle import ShuffleAccountant
    from sharpdp.shuffle.randomizers import BlanketMixedGaussian

    return (eps is not None and eps > 0 and dx is None and isinstance(acc, ShuffleAccountant)
            and type(acc.randomizer) is BlanketMixedGaussian and not getattr(acc, "via_bottom", False))
