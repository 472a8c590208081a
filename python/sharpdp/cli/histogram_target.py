"""`sharpdp histogram --epsilon EPS --delta DELTA`: the group size from which every member gets a target (EPS, DELTA).

The release is the count-dependent mechanism of "Better Privacy Guarantees for Larger Groups": a member of a group
of n members gets the per-count epsilon(n) at DELTA of the guarantee table (``ShiftedLogGaussian.epsilon``: the exact
Gaussian privacy profile of the edge n - 1 <-> n in log space, eq. (10), rounded up), which falls as n grows. The
target holds for every group of at least N members, N the smallest count whose certified epsilon(N) is <= EPS. N is a
function of the mechanism's public parameters and the target only (nothing here depends on the data). The proof is
in docs/histogram_release.md §11.
"""

from __future__ import annotations

from typing import Any

#: Largest count searched for the threshold (the mechanism's counts are < 2^53).
_N_CAP = 2**52


def groups_meeting(mech: Any, epsilon: float, delta: float) -> int | None:
    """N: the smallest count with ``mech.epsilon(N, delta) <= epsilon`` (doubling, then bisection on the integers), or
    None when no count up to 2^52 has it. The exact per-count epsilon is non-increasing in n and the library's value
    is never below it, so every group of at least N members has exact epsilon <= ``epsilon`` at ``delta``
    (docs/histogram_release.md §11)."""

    def fits(n: int) -> bool:
        return float(mech.epsilon(n, delta)) <= epsilon

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
    n = groups_meeting(mech, epsilon, delta)
    return {"epsilon": epsilon, "delta": delta, "groups_from": n,
            "epsilon_at_groups_from": None if n is None else float(mech.epsilon(n, delta)),
            "meaning": ("every member of a group of at least groups_from members gets (epsilon, delta)-DP: the "
                        "certified per-count epsilon of the guarantee table (exact Gaussian privacy profile of the "
                        "log-space shift) is epsilon_at_groups_from <= epsilon there and falls as groups grow; "
                        "members of smaller groups get less privacy (a larger epsilon: the guarantee table); null: no group size up to 2^52 does. "
                        "Functions of the mechanism's parameters and the target only")}


def target_text(t: dict[str, Any]) -> str:
    """The text line of :func:`target_guarantee`."""
    from sharpdp.cli.rounding import g_up

    head = f"target: epsilon = {t['epsilon']:.6g} nats at target delta = {t['delta']:g}: "
    if t["groups_from"] is None:
        return head + "no group size up to 2^52 meets it with these --r, --r0, --c"
    who = ("every group, empty ones too, meets it" if t["groups_from"] == 0 else
           f"every member of a group of at least {t['groups_from']} members gets it (certified epsilon "
           f"{g_up(t['epsilon_at_groups_from'], 4)} nats at n = {t['groups_from']}, the guarantee table's method)")
    if t["groups_from"] == 0:
        return head + who + " (docs/histogram_release.md §11)"
    return head + who + ("; members of smaller groups get less privacy (a larger epsilon: the table above; "
                         "docs/histogram_release.md §11)")
