"""The accuracy floor of the far-tail treatment (docs/accountant_tail.md §57): a body-dominated heavy-tailed law at large
n whose clamped Chernoff cap at ``FLOOR_TARGET`` is below it ends with that cap, without the treatment's rounds.

Below ``FLOOR_TARGET`` (1e-15) no accuracy target is kept (the accountant's contract, docs/accountant_tail.md §57.1):
the value returned is a certified upper value (the clamped Chernoff cap of docs/accountant.md §6.3) and a certified
lower value in closed form (the single-user and Jensen lower values, docs/accountant.md §8.1 and
docs/accountant_edges.md section 3), possibly far apart. Where the law's value is made by the body (the normal
estimate of E[S_+]/(n gamma) at least the one-jump estimate), the treatment's body passes would chase a bracket of a
value far below any delta in use for seconds at n >= 1e8 (GaussianRandomizer(2), n = 1e8, eps = 0.001: 2.7 s). The
estimates only choose whether the cap is tried and kept; every value returned is a certified bound.
"""

from __future__ import annotations

import math

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.chernoff import clamped_chernoff_cap
from sharpdp.shuffle.accountant.closed_forms import jensen_lower, single_user_lower
from sharpdp.shuffle.accountant.far_tail_grid import normal_value
from sharpdp.shuffle.accountant.results import LawBracket
from sharpdp.shuffle.laws import Law


def body_dominated(law: Law, gamma: float, n: int) -> bool:
    """Whether the estimates send the law to :func:`floor_bracket`'s cap (docs/accountant_tail.md §57.2): n at least
    ``FLOOR_N``, L unbounded above (the law whose far-tail rounds run for the reported value), E[L] < 0 and the normal estimate of E[S_+]/(n gamma) below ``FLOOR_TARGET`` and at least the
    one-jump estimate tau((n - 1) gamma |E L|). Estimates only: they choose whether the cap is tried."""
    if not (limits.FLOOR_TARGET > 0.0 and n >= max(limits.FLOOR_N, 2) and law.continuous
            and math.isinf(law.support()[1])):
        return False
    mu, sd = law.mean(), law.std()
    if not (math.isfinite(mu) and mu < 0.0 and 0.0 < sd < math.inf):
        return False
    est = normal_value(law, gamma, n, mu, sd)
    return 0.0 < est < limits.FLOOR_TARGET and est >= float(law.stop_loss([-(n - 1) * gamma * mu])[1][0])


def floor_bracket(law: Law, gamma: float, n: int) -> LawBracket | None:
    """The certified bracket of docs/accountant_tail.md §57 for a far-tail law, or None (the treatment's rounds run).

    Parameters
    ----------
    law : Law
        Law of the privacy-amplification variable L (one pair and order), heavy-tailed (far-tail treatment).
    gamma : float
        Blanket mass, in (0, 1].
    n : int
        Number of users.

    Returns
    -------
    LawBracket or None
        Where :func:`body_dominated` holds and the clamped Chernoff cap at threshold ``FLOOR_TARGET``
        (docs/accountant.md §6.3; the law's value error charged) is below ``FLOOR_TARGET``: (lower, upper) with upper
        the least of that cap and of up to ``FLOOR_TRIES`` caps at thresholds 1e-3, 1e-6, ... times it (tried while
        each is below a tenth of the least so far) and lower the larger of the single-user and Jensen lower values (0 possible); no rel_tol is targeted
        (§57.1). None elsewhere, and with ``FLOOR_TARGET = 0`` (main's floats).
    """
    if not body_dominated(law, gamma, n):
        return None
    thr = limits.FLOOR_TARGET
    cap = clamped_chernoff_cap(law, gamma, n, thr)
    if cap is None or not cap.upper < thr:
        return None
    up = cap.upper
    for _ in range(limits.FLOOR_TRIES):  # (the least of certified upper values: a choice of which caps run)
        thr *= 1e-3  # (a cap made by its clamp term ~1e-3 thr: the next one's clamp further out)
        nxt = clamped_chernoff_cap(law, gamma, n, thr)
        if nxt is None or not nxt.upper < 0.1 * up:
            up = min(up, nxt.upper) if nxt is not None else up
            break
        up = nxt.upper
    lo = min(max(single_user_lower(law, gamma, n), jensen_lower(law, gamma, n)), up)
    return LawBracket(lo, up, terms={"note": "accuracy floor: clamped Chernoff cap below FLOOR_TARGET, no rel_tol "
                                             "(docs/accountant_tail.md §57)", "floor_cap": up})


__all__ = ["body_dominated", "floor_bracket"]
