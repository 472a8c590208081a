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


#: The smallest ``--r`` :func:`r_for_target` searches (a target met there is met by smaller r too, perhaps).
R_FLOOR = 1e-9

#: The group sizes at which ``--epsilon`` suggests an ``--r`` (``--for-groups N``: that N only).
SUGGEST_GROUPS = (10, 100, 1000, 10000)


def r_for_target(epsilon: float, delta: float, groups: int, c: float) -> float | None:
    """The ``--r`` to run with so that every member of a group of at least ``groups`` members gets (``epsilon``,
    ``delta``)-DP, or None when no r < 1 does (``--r 1`` is the data-independent release).

    The mechanism is ``ShiftedLogGaussian(r, r / 2, c)`` (``--r0`` at its default). Its certified per-count epsilon
    falls as r grows (more noise), so a bisection on log r finds the boundary; the answer is rounded up to 3
    significant digits and checked: the certified epsilon at ``groups`` of the mechanism with that r is <= ``epsilon``
    (so it holds for every larger group: :func:`groups_meeting`, docs/histogram_release.md §11). A larger r meets it
    too, with more noise; the release run with it says so in its own ``target:`` line."""
    import math

    from sharpdp.histogram import ShiftedLogGaussian

    def fits(r: float) -> bool:
        return float(ShiftedLogGaussian(r, None, c).epsilon(groups, delta)) <= epsilon

    lo, hi = R_FLOOR, 0.999
    if not fits(hi):
        return None
    if fits(lo):
        return lo  # (the search's floor: a smaller r may meet it too; the text says so)
    for _ in range(60):  # (log-space bisection: fits(hi) holds, fits(lo) does not)
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
        if hi / lo < 1.0 + 1e-6:
            break
    scale = 10.0 ** (math.floor(math.log10(hi)) - 2)
    r = math.ceil(hi / scale) * scale
    r = float(f"{r:.3g}")  # (3 significant digits, written as the user will type it)
    while r < hi or not fits(r):  # (the printed value itself is checked; up a step if its rounding went down)
        r = float(f"{r + scale:.3g}")
    return r if r < 1.0 else None


def r_suggestions(epsilon: float, delta: float, c: float, groups: int | None = None) -> dict[str, Any]:
    """The ``r_for_groups`` object of ``--epsilon``'s target (``--json``; text: :func:`r_suggestions_text`): for each
    group size N (``groups``, else :data:`SUGGEST_GROUPS`), the ``--r`` of :func:`r_for_target`."""
    sizes = (groups,) if groups is not None else SUGGEST_GROUPS
    return {"c": c, "sizes": [{"groups_from": n, "r": r_for_target(epsilon, delta, n, c)} for n in sizes],
            "meaning": ("the --r to run with (3 significant digits, --r0 at its default r/2, this --c) so that every "
                        "member of a group of at least groups_from members gets (epsilon, delta)-DP by the guarantee "
                        "table's certified per-count epsilon, checked at that r; null: no r < 1 does (--r 1 releases "
                        "nothing about the data). A larger r means more noise: expected relative error about r "
                        "(docs/histogram_release.md §11). Functions of the target and the mechanism's constants only")}


def r_suggestions_text(s: dict[str, Any], epsilon: float) -> str:
    """The text line of :func:`r_suggestions`."""
    parts = [f"groups of >= {x['groups_from']}: r = {x['r']:g}"
             + (" (the search's floor; a smaller r may do too)" if x["r"] == R_FLOOR else "") if x["r"] is not None else
             f"groups of >= {x['groups_from']}: no r below 1 (--r 1 releases nothing about the data)" for x in s["sizes"]]
    return (f"to choose --r for epsilon = {epsilon:g} nats (--r0 default, --c {s['c']:g}): " + "; ".join(parts)
            + " (a larger --r: more noise, expected relative error about r)")
