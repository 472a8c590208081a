"""The golden section's probe of a new split gated by the legs cached beside it (docs/accountant.md §9.23; switch
``limits.REP46_PROBE_GATE``): a choice of which certified legs run, never a value.

§9.22.2's probe (``CliffSearch._golden_split`` with ``limits.VIA_BOTTOM_GOLDEN_PROBE``) decides a golden-section split
worse than the kept one by a certified lower value of its chain (leg A at the section's rel_tol, leg B at PROBE_TOL to the
decision's absolute target) before certifying it: at a cliff of leg B that probe's leg B costs a fifth to a half of the leg
at rel_tol 0.1, but where the new split is the better one it is wasted (docs/accountant.md §9.22.4). :func:`probe_first`
probes only where the legs certified already on both sides of the new split's legs predict its chain well above the
level that decides it worse (log-linear interpolation of their brackets' midpoints: leg B falls nearly exponentially
toward its cliff, docs/accountant.md §9.10)."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.via_bottom_chord import anchors


def log_between(pts: list[tuple[float, float, float]], e: float) -> float | None:
    """An estimate of a leg at e from certified brackets ``pts`` = sorted (e_i, lower_i, upper_i) of it: the log-linear
    interpolation of the midpoints (the upper value where the lower one is 0) of the nearest brackets below and above e;
    None without a bracket on each side or where a midpoint is not positive. An estimate only (a place to look)."""
    below = [p for p in pts if p[0] < e]
    above = [p for p in pts if p[0] > e]
    if not below or not above:
        return None
    (ea, la, ua), (eb, lb, ub) = below[-1], above[0]
    va = 0.5 * (la + ua) if la > 0.0 else ua
    vb = 0.5 * (lb + ub) if lb > 0.0 else ub
    if not (va > 0.0 and vb > 0.0 and math.isfinite(va) and math.isfinite(vb)):
        return None
    x = (e - ea) / (eb - ea)
    return math.exp(math.log(va) + x * (math.log(vb) - math.log(va)))


def probe_first(vb: Any, eps: float, f: float, bar: float) -> bool:
    """True where ``limits.REP46_PROBE_GATE`` = g > 0 and the split at f of the split search at eps is predicted worse than
    ``bar`` by a margin: with A and B the estimates of :func:`log_between` from ``vb``'s certified legs (its leg cache, every
    rel_tol), A >= bar, or e^{e1} B >= g (bar - A) (leg B at least g times the level at which the chain reaches the bar, so
    that a probe's loose lower value of leg B is expected to decide). False without the switch, a finite bar, the
    engine's leg cache, or legs on both sides. A choice of which certified legs run (docs/accountant.md §9.23)."""
    gate = limits.REP46_PROBE_GATE
    if not (gate > 0.0 and math.isfinite(bar) and bar > 0.0) or getattr(vb, "bottom", None) is None \
            or not isinstance(getattr(vb, "_leg_cache", None), dict):
        return False  # (a search without the engine's legs, e.g. a test's synthetic one: main's section)
    e1 = f * eps
    e2 = vb._second(eps, e1)
    a = log_between(anchors(vb, e1, 0), e1)
    b = log_between(anchors(vb, e2, 1), e2)
    if a is None or b is None:
        return False
    room = bar - a
    return room <= 0.0 or math.exp(e1) * b >= gate * room
