"""The accuracy floor of the far-tail treatment (docs/accountant_tail.md §58): a body-dominated heavy-tailed law at large
n whose clamped Chernoff cap at ``FLOOR_TARGET`` is below it ends with Chernoff caps, without the treatment's rounds.

Below ``FLOOR_TARGET`` (1e-15) no accuracy target is kept (the accountant's contract, docs/accountant_tail.md §58.1):
the value returned is a certified upper value (the lesser of the clamped Chernoff cap of docs/accountant.md §6.3 and
a finer cap of the same form, :func:`fine_cap`) and a certified lower value in closed form (the single-user and Jensen lower values, docs/accountant.md §8.1 and
docs/accountant_edges.md section 3), possibly far apart. Where the law's value is made by the body (the normal
estimate of E[S_+]/(n gamma) at least the one-jump estimate), the treatment's body passes would chase a bracket of a
value far below any delta in use for seconds at n >= 1e8 (GaussianRandomizer(2), n = 1e8, eps = 0.001: 2.7 s). The
estimates only choose whether the cap is tried and kept; every value returned is a certified bound.
"""

from __future__ import annotations

import math

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.chernoff import body_chernoff, clamped_chernoff_cap
from sharpdp.shuffle.accountant.closed_forms import jensen_lower, single_user_lower
from sharpdp.shuffle.accountant.far_tail_grid import normal_value, pow2
from sharpdp.shuffle.accountant.lattice import choose_B, choose_T, lattice_laws
from sharpdp.shuffle.accountant.results import Coarsen, LawBracket
from sharpdp.shuffle.laws import Law


def body_dominated(law: Law, gamma: float, n: int) -> bool:
    """Whether the estimates send the law to :func:`floor_bracket`'s cap (docs/accountant_tail.md §58.2): n at least
    ``FLOOR_N``, L unbounded above (the law whose far-tail rounds run for the reported value), E[L] < 0, and the
    normal estimate of E[S_+]/(n gamma) below ``FLOOR_TARGET`` and at least the one-jump estimate
    tau((n - 1) gamma |E L|). Estimates only: they choose whether the caps are tried."""
    if not (limits.FLOOR_TARGET > 0.0 and n >= max(limits.FLOOR_N, 2) and law.continuous
            and math.isinf(law.support()[1])):
        return False
    mu, sd = law.mean(), law.std()
    if not (math.isfinite(mu) and mu < 0.0 and 0.0 < sd < math.inf):
        return False
    est = normal_value(law, gamma, n, mu, sd)
    return 0.0 < est < limits.FLOOR_TARGET and est >= float(law.stop_loss([-(n - 1) * gamma * mu])[1][0])


def fine_cap(law: Law, gamma: float, n: int, tail: float) -> float:
    """A certified upper value of D_up (docs/accountant_tail.md §58.3): the body's Chernoff value on the hat lattice law
    of clamp(L^, -B, T) (L^ the law raised by its value error, docs/accountant_tail.md §12) at a power-of-two step
    h >= sd/4 with at most ``FLOOR_NODES`` nodes, plus E[(L^ - T)_+], T the clamp with E[(L^ - T)_+] <= ``tail``
    (about). inf where the lattice does not fit the size caps or ``tail`` is not positive."""
    if not tail > 0.0:
        return math.inf
    run = law.shifted(up=True)
    sd, (lo_s, _) = run.std(), run.support()
    T = choose_T(run, tail)
    B = max(-lo_s, 0.0) if math.isfinite(lo_s) else choose_B(run, 0.01 * max(-run.mean(), sd))
    if not (math.isfinite(T) and math.isfinite(B) and T > 0.0):
        return math.inf
    h = 2.0 * pow2(max(sd / 4.0, (T + B) / limits.FLOOR_NODES))  # (>= the largest of the two, a power of two)
    lat = lattice_laws(run, gamma, h, math.ceil(T / h) * h, max(math.ceil(B / h), 1) * h, lower=False)
    if isinstance(lat, Coarsen):
        return math.inf
    # S <= A + J (A the sum of the clamped terms, J of the excesses over the clamp; E J = n gamma tau(T)): the hat law
    # dominates clamp(G, -B, T) in the increasing convex order, x_+ <= e^{lam x - 1} / lam (§6); exact nodes k h
    return (body_chernoff(lat, h, n, gamma) + float(run.stop_loss([math.ceil(T / h) * h])[1][0])) * (1 + 1e-9)


def floor_bracket(law: Law, gamma: float, n: int) -> LawBracket | None:
    """The certified bracket of docs/accountant_tail.md §58 for a far-tail law, or None (the treatment's rounds run).

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
        the lesser of that cap and :func:`fine_cap` with its clamp term ``FLOOR_TAIL`` times the normal estimate,
        and lower the larger of the single-user and Jensen lower values (0 possible); no rel_tol is targeted (§58.1).
        None elsewhere, and with ``FLOOR_TARGET = 0`` (main's floats).
    """
    if not body_dominated(law, gamma, n):
        return None
    cap = clamped_chernoff_cap(law, gamma, n, limits.FLOOR_TARGET)
    if cap is None or not cap.upper < limits.FLOOR_TARGET:
        return None
    up = min(cap.upper, fine_cap(law, gamma, n, limits.FLOOR_TAIL * normal_value(law, gamma, n)))
    lo = min(max(single_user_lower(law, gamma, n), jensen_lower(law, gamma, n)), up)
    return LawBracket(lo, up, terms={"note": "accuracy floor: clamped Chernoff cap below FLOOR_TARGET, no rel_tol "
                                             "(docs/accountant_tail.md §58)", "floor_cap": up})


__all__ = ["body_dominated", "fine_cap", "floor_bracket"]
