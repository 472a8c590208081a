"""Phase 2's probe of get_epsilon's search (docs/accountant_atoms.md §8, the decision mode; docs/accountant.md §8):
on which side of delta ``get_delta(e)`` lies, as a fresh accountant would report it. Used by
:func:`sharpdp.shuffle.accountant.search.search_epsilon` (re-exported there as ``search.probe``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sharpdp.shuffle.accountant.closed_forms import plus, trivial_cap
from sharpdp.shuffle.accountant.driver import certify
from sharpdp.shuffle.accountant.limits import EPS_CAP, TINY
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.contract import surcharge
from sharpdp.shuffle.laws import laws_for


#: law 0's value alone may decide a probe "above" where the laws are not all atom laws (docs/accountant.md §8.7); False:
#: the code before (bench/geteps_ratio.py --no-early)
EARLY = True


def probe(acc: Any, e: float, delta: float, cap0: float | None,
          laws: Callable[[float], Any] | None = None, lows: list[float] | None = None, early: bool = True) -> float:
    """Phase 2's probe (docs/accountant_atoms.md §8, the decision mode): a value u with
    get_delta(e) <= u when u <= delta, and a certified upper value of D_up(e) above delta from
    get_delta's own refinement (or a certified lower value above delta) when u > delta.

    Each law is certified as :meth:`get_delta` certifies it, without the ``negligible`` stop and in
    :class:`Bracket` mode with a decision: its refinement stops once its bracket so far puts the
    reported value at most delta, or its lower value above delta. The passes run are a prefix of
    get_delta's, whose upper value is the minimum over its passes, so get_delta(e) is at most the
    value decided here. A law that ends above delta ends the probe (the laws left cannot make it
    decide below, docs/accountant_atoms.md §9). Decided values return their upper value (on the decided side of delta:
    above it when a lower value is) for the search's model, as get_delta would. Values are taken before
    get_delta's running minimum (a fresh accountant's decision). Laws that are not all atom laws: the
    report's upper value; beyond 60 nats or eps_tau, at or beyond eps0, the closed-forms-only twin:
    get_delta.
    ``laws``: laws_for at e (the search's memo), by default built here. ``lows``: when given, the
    largest certified lower value of D_up(e) of the atom laws' passes (of the report, for other laws) is appended
    to it. ``early`` (laws not all atom laws): law 0's value alone may decide "above" (docs/accountant.md §8.7); off
    where the caller needs the report itself (the refit's law at the phase-1 root)."""
    if (e > EPS_CAP or e > acc.eps_tau or (cap0 is not None and e >= cap0) or not e >= 0.0
            or getattr(acc, "_closed_only", False)):
        return float(acc.get_delta(e))
    s = surcharge(acc.randomizer, e, acc.adjacency)
    charge = acc.sampler_term(e)

    def reported(u: float) -> float:
        """get_delta's value for a maximum law value u (surcharge, sampler charge, floor) before its
        running minimum (module step M): a decision then holds for a fresh accountant too, and does
        not depend on the accountant's earlier get_delta calls (docs/accountant_atoms.md §8)."""
        if s > 0.0:
            u = plus(u, s)
        if charge > 0.0:
            u = min(1.0, plus(u, charge))
        return min(max(u, TINY), 1.0)

    def decide(lo: float, up: float) -> bool:
        return reported(up) <= delta or lo > delta

    lo_max = up_max = 0.0
    # the law of largest cap first: where it decides "above", the others are not certified (no
    # law's run depends on the others: no negligible stop here, docs/accountant_atoms.md §8)
    pairs = laws(e) if laws is not None else laws_for(acc.randomizer, e, acc.adjacency)
    if not all(law.atoms() is not None for _, law in pairs):
        # (the far-tail treatment's refinement is not a sequence of passes): get_delta's value before its
        # running minimum, as for the atom laws (docs/accountant_atoms.md §8); its lower value (of D_up(e), the
        # maximum over the laws' certified lower values) joins ``lows`` too
        # law 0 first, certified as the report certifies it (Bracket(), no negligible stop): where its value alone is
        # reported above delta, so is the report's (the maximum over the laws), and the other laws are not certified
        # (docs/accountant.md §8.7); otherwise the report reuses it
        first = None
        if early and EARLY and len(pairs) > 1 and getattr(acc, "_bottom", None) is None and not acc._has_report(e):
            gamma, law = pairs[0]
            first = certify(law, float(gamma), acc.n, acc.rel_tol, acc.threads, Bracket())
            if reported(first.upper) > delta:
                if lows is not None:
                    lows.append(float(first.lower))
                return reported(first.upper)
        rep = acc._report(e, acc.rel_tol, first=first)
        if lows is not None:
            lows.append(float(rep.lower))
        return min(max(float(rep.upper), TINY), 1.0)
    for gamma, law in sorted(pairs, key=lambda gl: -trivial_cap(gl[1])):
        r = certify(law, float(gamma), acc.n, acc.rel_tol, acc.threads, Bracket(decide=decide))
        lo_max, up_max = max(lo_max, r.lower), max(up_max, r.upper)
        if lo_max > delta:
            break  # get_delta(e) >= D_up(e) >= lo_max > delta
        if reported(r.upper) > delta:
            # this law ran its full refinement (a decision below delta would have stopped it) and
            # ended above delta: the probe's outcome is "above" whatever the laws left give
            # (docs/accountant_atoms.md §9)
            break
    if lows is not None:
        lows.append(lo_max)
    u = reported(up_max)
    # (the upper value, as get_delta returns, on the decided side: lo_max > delta implies u > delta)
    return max(u, lo_max) if lo_max > delta else u


__all__ = ["probe"]
