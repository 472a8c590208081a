"""Which far-tail run is kept (docs/accountant_tail.md §33.4, §48.2, §54): the share of rel_tol within which a run at a
coarser step is kept, the miss up to which it runs again at half its factor, and §33.4's skipped rounds of a law
bounded above (moved from :mod:`.far_tail`, which keeps the name ``_skip_round``). Choices of which certified run or
round is computed and returned, never a value: every run of :func:`~.far_tail.certify_bigjump` is certified at any
step that divides its clamps (docs/accountant_tail.md §7, Claim 48.2)."""

from __future__ import annotations

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.chernoff import saddle_excess_estimate
from sharpdp.shuffle.accountant.far_tail_grid import normal_value
from sharpdp.shuffle.accountant.lattice import LatticeLaws
from sharpdp.shuffle.laws import Law


def scaled_accept() -> float:
    """The share of rel_tol within which a run at a coarser step (§48.2, §50) is kept: ``limits.COARSE_KEEP_ACCEPT``
    with ``limits.COARSE_KEEP`` (docs/accountant_tail.md §54), else ``limits.BODY_WHOLE_ACCEPT`` (main's)."""
    return limits.COARSE_KEEP_ACCEPT if limits.COARSE_KEEP else limits.BODY_WHOLE_ACCEPT


def miss_over(lo: float, up: float, rel_tol: float, accept: float) -> float:
    """(up - lo) / (accept rel_tol lo): at most 1 where the bracket (lo, up) meets ``accept`` rel_tol (inf for lo <= 0)."""
    return (up - lo) / (accept * rel_tol * lo) if lo > 0 else float("inf")


def next_factor(c: float, miss: float, jump: bool = False) -> float:
    """The factor of :func:`~.far_tail._coarse_first`'s next run after a run at factor ``c`` missed by ``miss`` (its gap
    over BODY_WHOLE_ACCEPT rel_tol times its lower value, or its jump term's gap over its target): main's (§48.2) c / 2
    where ``miss`` is at most ``limits.CAP_RETRY``, else 1.0, the caps' step; with ``limits.COARSE_KEEP`` (§54.1, §54.4)
    c / 2^k for the least k >= 1 with miss <= COARSE_KEEP_RETRY^k (a gap measured 2.5-3.6 times smaller per halving;
    ``jump``: the jump term's own miss, COARSE_JUMP_RETRY^k, its gap measured 3.5-3.7 times smaller per halving),
    1.0 where that is not above 1."""
    if not limits.COARSE_KEEP:
        return c / 2.0 if miss <= limits.CAP_RETRY else 1.0
    base, k = (limits.COARSE_JUMP_RETRY if jump else limits.COARSE_KEEP_RETRY), 1
    while miss > base ** k and c / 2.0 ** k > 1.0:
        k += 1
    return c / 2.0 ** k if c / 2.0 ** k > 1.0 else 1.0


def far_factor(law: Law, gamma: float, n: int) -> float:
    """The factor on CAP_COARSE of :func:`~.far_tail._coarse_first`'s first run: ``limits.COARSE_FAR_FACTOR`` where
    ``limits.COARSE_FAR`` is on and the normal estimate of the body's value (``far_tail_grid.normal_value``) is at most
    ``limits.COARSE_FAR_SHARE`` times the one-jump estimate tau(|m|) of :func:`~.far_tail.certify_bigjump` (the value is
    the jump term's, whose gap stays small at a coarser step), else 1 (docs/accountant_tail.md §54.4; estimates that
    only choose the first run of the ladder)."""
    if not limits.COARSE_FAR or limits.COARSE_FAR_FACTOR <= 1.0 or limits.CAP_COARSE <= 1.0:
        return 1.0  # (CAP_COARSE = 1: no coarser run at all, §48.2's off-value)
    est = max(float(law.stop_loss([max(-(n - 1) * gamma * law.mean(), 0.0)])[0][0]), limits.VALUE_FLOOR)
    if est < limits.COARSE_FAR_MIN:
        return 1.0  # (§54.5: below it §55's density cost makes the first run at CAP_COARSE cheap, the 16x run misses)
    return limits.COARSE_FAR_FACTOR if normal_value(law, gamma, n) <= limits.COARSE_FAR_SHARE * est else 1.0


def top_factors() -> tuple[float, ...]:
    """The factors on a law bounded above's clamp unit H at which :func:`~.far_tail.try_certify` runs for its upper value
    alone below the maximum so far, in order, each tried where the one before raised TailCoarsen (the size caps bind
    at its first step): ``limits.TOP_COARSE`` (docs/accountant_tail.md §52.2), then with ``limits.TOP_FIT`` that times
    ``limits.TOP_FIT_FACTOR`` (§54.3; every factor a power of 2, so that the steps divide the clamps as in §8)."""
    if limits.TOP_FIT and limits.TOP_FIT_FACTOR > 1.0:
        return (limits.TOP_COARSE, limits.TOP_COARSE * limits.TOP_FIT_FACTOR)
    return (limits.TOP_COARSE,)


def skip_round(law: Law, gamma: float, n: int, B: float, C: float, floor: float, rel_tol: float, lat: LatticeLaws,
               h: float, excess=saddle_excess_estimate) -> bool:
    """Whether a round of a law bounded above whose redo with B x 4 is certain above ``floor`` is skipped
    (docs/accountant_tail.md §33.4, §34.1; estimates only, a choice of rounds): the normal estimates v(B), v(4B) of the
    values clamped at -B, -4B (mean raised by tau_low) say that the clamp at -B raises the value by more than 2 rel_tol
    (its upper value then not the least), v(B) <= C, the round's certified Chernoff upper value (an estimate above a
    certified upper value is not one of a near-normal sum), and v(B) and the saddle-point estimate of the round's hat
    law ``lat`` (step ``h``) both say that the round's value exceeds ``floor`` (the redo's condition); ``excess``: the
    saddle-point estimate (:func:`~.chernoff.saddle_excess_estimate`, passed by the caller)."""
    mu, sd = law.mean(), law.std()
    v1 = normal_value(law, gamma, n, mu + law.tail_lower(B), sd)
    v4 = normal_value(law, gamma, n, mu + law.tail_lower(4.0 * B), sd)
    return floor < v1 <= C and (1.0 + 2.0 * rel_tol) * v4 < v1 and \
        floor < excess(lat.g, lat.k0, h, n) / (n * gamma)


__all__ = ["far_factor", "miss_over", "next_factor", "scaled_accept", "skip_round", "top_factors"]
