"""Whether the far-tail treatment applies to a law (docs/accountant_tail.md §8): a choice of speed only, both paths
certified (moved from :mod:`.far_tail`, which re-exports :func:`applicable`)."""

from __future__ import annotations

import math

from sharpdp.shuffle.accountant.far_tail_grid import normal_value as _normal_value
from sharpdp.shuffle.accountant.lattice import choose_B, choose_T
from sharpdp.shuffle.accountant.limits import PLAIN_NODES_MAX, VALUE_FLOOR
from sharpdp.shuffle.laws import Law


def applicable(law: Law, n: int, rel_tol: float = 1e-2, gamma: float | None = None) -> bool:
    """The treatment applies to continuous laws (not atoms) with an unbounded tail and finite sd, n >= 2, where
    the plain engine's clamps are costly.

    Costly: heavy, E[(L - mu - 50 sd)_+] > 1e-7 sd (e.g. BMG sigma0 <~ 1.5, Gaussian randomizer sigma0 <~ 2.5),
    or the plain engine's clamps on the unbounded sides more than PLAIN_NODES_MAX steps sd/4 away from 0 (a heavy
    left tail, or a tail heavy against a small sd), at the tail target of its first round (docs/accountant.md
    §6.1) or, given ``gamma``, of its later rounds, 0.05 rel_tol times an estimate of the value: the larger of the
    one-jump value tau((n - 1) gamma |E L|) (counted only where the first round's clamp reaches that point) and
    the normal approximation of E[S_+]/(n gamma) (floored at 1e-24).
    Both paths are certified: this choice is one of speed only (docs/accountant_tail.md §8).
    """

    lo_s, hi_s = law.support()
    if not (n >= 2 and not law.atomic and hi_s > 0 and (math.isinf(hi_s) or math.isinf(lo_s))):
        return False
    sd = law.std()
    if not 0.0 < sd < math.inf:
        return False
    mu = law.mean()  # (computed once: a law's moments cost a fraction of a millisecond each time)
    if math.isinf(hi_s):
        if law.tail_upper(mu + 50.0 * sd) > 1e-7 * sd:
            return True
    elif law.tail_lower(-(mu - 50.0 * sd)) > 1e-7 * sd:
        return True
    tgt = 1e-4 * rel_tol * sd
    cap0 = law.tail_upper(0.0)
    if tgt > 1e-2 * cap0:
        tgt = 1e-4 * rel_tol * cap0  # (the engine's first target, docs/accountant.md §6.1)
    if not tgt > 0.0:
        # (a target that underflows to 0, e.g. GaussianRandomizer(6), eps = 16, P[L > 0] ~ 4e-323: no finite clamp
        # meets it, choose_T would double T to inf; the plain engine, certified alike, takes such a law)
        return False
    if gamma is not None:
        # the engine's later rounds clamp for 0.05 rel_tol of the value; the one-jump value tau(|m|),
        # m = (n - 1) gamma E[L], estimates it (floored at the value floor, below which nothing is refined)

        # ... but only where the plain engine's first pass sees the jump (its clamp at the first target reaches
        # the jump point): beyond it that pass's value is the body's, and its later clamps are aimed at that
        jump_at = max(-(n - 1) * gamma * mu, 0.0)
        seen = not math.isinf(hi_s) or jump_at <= choose_T(law, tgt)
        est = float(law.stop_loss([jump_at])[1][0]) if seen else 0.0
        # ... or, where the bulk makes the value (light tails, large n), the normal approximation of E[S_+]/(n gamma)
        tgt = min(tgt, 0.05 * rel_tol * max(est, _normal_value(law, gamma, n, mu, sd), VALUE_FLOOR))
    if not tgt > 0.0:
        return False
    # only the unbounded side counts: a finite end of the support is a clamp of both paths alike
    span = (choose_T(law, tgt) if math.isinf(hi_s) else 0.0) + (choose_B(law, tgt) if math.isinf(lo_s) else 0.0)
    return span / (0.25 * sd) > PLAIN_NODES_MAX


__all__ = ["applicable"]
