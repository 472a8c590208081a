"""`sharpdp histogram --epsilon EPS --delta DELTA`: the groups whose members get a target (epsilon, delta).

The release is the count-dependent mechanism of "Better Privacy Guarantees for Larger Groups": a member of a group
of n members gets zCDP budget v(n), which falls as n grows (eqs. (5)-(6)). A target (EPS, DELTA) is met by every
count whose budget is at most rho*, the largest rho whose (epsilon, delta) conversion (Canonne, Kamath & Steinke
2020, "The Discrete Gaussian for Differential Privacy", Proposition 12 / Corollary 13: the library's
:func:`sharpdp.conversions.zcdp_to_epsilon`) is at most EPS at DELTA; so the target holds for every group of at
least N members, N the smallest count with v(N) <= rho*. Both are functions of the mechanism's public parameters
and the target only (nothing here depends on the data). The proof is in docs/histogram_release.md §11.
"""

from __future__ import annotations

import math
from typing import Any

#: Largest count searched for the threshold (the mechanism's counts are < 2^53).
_N_CAP = 2**52
#: Bisection steps on rho (each one conversion, about a millisecond): the bracket's relative width ends below 2^-60.
_RHO_STEPS = 80


def rho_for_target(epsilon: float, delta: float) -> float:
    """rho*: a zCDP parameter whose conversion ``zcdp_to_epsilon(rho*, delta)`` is <= ``epsilon`` (checked on the
    value returned, so the answer is certified whatever the conversion's monotonicity), within 2^-60 relative of
    the largest such rho.

    The search starts from Bun & Steinke's closed form rho_BS = (sqrt(L + epsilon) - sqrt(L))^2, L = log(1/delta),
    the rho whose simple conversion rho + 2 sqrt(rho L) is exactly epsilon (Bun & Steinke 2016, Proposition 1.3);
    the conversion used is tighter, so rho* >= rho_BS up to its rounding (docs/histogram_release.md §11).

    Parameters
    ----------
    epsilon : float
        Target epsilon > 0 (nats), finite.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float
        rho* > 0 (nats).
    """
    from sharpdp.conversions import zcdp_to_epsilon

    def ok(rho: float) -> bool:
        return float(zcdp_to_epsilon(rho, delta)) <= epsilon

    L = -math.log(delta)
    lo = (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2 * (1.0 - 1e-9)
    while not ok(lo):  # (not expected: the tighter conversion at rho_BS is <= epsilon up to its rounding)
        lo *= 0.5
    hi = 2.0 * lo
    while ok(hi):
        lo, hi = hi, 2.0 * hi
    for _ in range(_RHO_STEPS):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def groups_meeting(mech: Any, rho: float) -> int | None:
    """N: the smallest count with ``mech.budget(N) <= rho`` (doubling, then bisection on the integers), or None
    when no count up to 2^52 has it. The library's v(n) is rounded up and the exact v(n) decreases in n, so every
    group of at least N members has exact budget <= rho (docs/histogram_release.md §11)."""

    def fits(n: int) -> bool:
        return float(mech.budget(n)) <= rho

    if fits(0):
        return 0
    lo, hi = 0, 1  # fits(lo) is False; look for a hi that fits
    while not fits(hi):
        if hi >= _N_CAP:
            return None
        lo, hi = hi, min(2 * hi, _N_CAP)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return hi


def target_guarantee(mech: Any, epsilon: float, delta: float) -> dict[str, Any]:
    """The ``target`` object of ``sharpdp histogram --epsilon`` (``--json``; the text's ``target:`` line)."""
    rho = rho_for_target(epsilon, delta)
    n = groups_meeting(mech, rho)
    return {"epsilon": epsilon, "delta": delta, "rho": rho, "groups_from": n,
            "meaning": ("rho is the largest per-count zCDP budget whose conversion to (epsilon, delta)-DP (Canonne, "
                        "Kamath & Steinke 2020, Corollary 13) is at most the target epsilon at the target delta; "
                        "every member of a group of at least groups_from members has budget v(n) <= rho, so gets "
                        "the target (epsilon, delta); smaller groups get less (the guarantee table); null: no group "
                        "size up to 2^52 does. Functions of the mechanism's parameters and the target only")}


def target_text(t: dict[str, Any]) -> str:
    """The text line of :func:`target_guarantee`."""
    from sharpdp.cli.rounding import g_down

    head = (f"target: epsilon = {t['epsilon']:.6g} nats at target delta = {t['delta']:g} needs per-count zCDP "
            f"rho <= {g_down(t['rho'], 4)} (the largest rho whose conversion, Canonne, Kamath & Steinke 2020, gives "
            "at most that epsilon); ")
    if t["groups_from"] is None:
        return head + "no group size up to 2^52 meets it with these --r, --r0, --c"
    who = ("every group, empty ones too" if t["groups_from"] == 0 else
           f"every member of a group of at least {t['groups_from']} members")
    return head + f"{who} gets it (v(n) <= rho); smaller groups get less (the table above; docs/histogram_release.md §11)"
