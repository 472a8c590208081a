"""get_epsilon's route (docs/accountant.md §8, §9.2): the refusals that need no search (the surcharge, the release
sampler's charge), the far end's check, and the choice of search: :func:`.search.search_epsilon` (zero-out, pure
eps0-LDP replace laws) or the replace bound through bot (:meth:`.via_bottom.ViaBottom.epsilon`). Called by
:meth:`sharpdp.shuffle.ShuffleAccountant.get_epsilon` before its monotone memo."""

from __future__ import annotations

import math
from typing import Any

from sharpdp.shuffle import contract
from sharpdp.shuffle.accountant.ends import bottom_end, charge_end, end_cap
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.limits import EPS_CAP, EPS_MAX
from sharpdp.shuffle.accountant.search import search_epsilon
from sharpdp.shuffle.accountant.zero_moments import zero_first, zero_upper


def route(acc: Any, delta: float, xtol: float) -> float:
    """get_epsilon's search on the accountant ``acc`` (validated delta and xtol), before the monotone memo."""
    s_min = contract.surcharge(acc.randomizer, EPS_CAP, acc.adjacency)  # non-increasing in epsilon
    if s_min >= delta:
        raise ValueError(f"delta: {delta!r} is not above the randomizer's surcharge {s_min!r} (e.g. output "
                         f"mass outside a GeneralRandomizer's support), which no epsilon removes")
    z = zero_upper(acc) if acc._bottom is None and (limits.EPS41B_ZERO_MOMENTS or limits.EPS42_ZERO_FIRST) else None
    if limits.EPS41B_ZERO_MOMENTS and z is not None and z <= delta:
        acc._memo_put(0.0, z)  # (the answer 0 by the sum's second moment; get_delta(0) <= z from now on: §8.21)
        return 0.0
    if limits.EPS42_ZERO_FIRST and z is not None and zero_first(z, delta, acc.rel_tol) and acc.get_delta(0.0) <= delta:
        return 0.0  # (the search's own answer where get_delta(0) <= delta, §8 step 1, found first: §8.22.6)
    cap0 = acc._local_epsilon()
    known = [e for e, u in zip(acc._memo_e, acc._memo_u) if u <= delta][:1]  # (the memo's smallest such key)

    def check_max() -> None:  # get_delta(EPS_MAX) <= delta, else a ValueError naming delta
        d_max = acc.get_delta(EPS_MAX)
        if d_max > delta:
            if math.isfinite(acc.eps_tau):
                # the charge grows with epsilon up to eps_tau, so a smaller epsilon may still have a certified
                # value below delta; get_epsilon searches only where the values are non-increasing
                raise ValueError(f"delta: {delta!r} is below what get_epsilon certifies for the released "
                                 f"messages (certified delta {d_max!r} at large epsilon, where the release "
                                 f"sampler's total-variation charge (1 + e^eps) n sampler_tv dominates, "
                                 f"docs/sampling.md §4); get_delta(epsilon) at a moderate epsilon may still "
                                 f"certify a smaller value")
            raise ValueError(f"delta: {delta!r} is not met at epsilon = {EPS_MAX} nats, the largest epsilon the "
                             f"accountant certifies (certified delta there: {d_max!r})")
    if acc._bottom is not None:  # through bot the check at EPS_MAX costs a full split search: made lazily
        if cap0 is not None:
            return acc._bottom.epsilon(delta, xtol, acc.get_delta)
        # (the release sampler's charge: below sampler_floor(700) the search's upper end below it, §9.9)
        end = bottom_end(acc, delta, known)
        return acc._bottom.epsilon(delta, xtol, acc.get_delta, acc._memo_put, check_max if end is None else None, end)
    if cap0 is None:  # (the release sampler's charge: the search's upper end below eps_tau, §8.3)
        hi_end = charge_end(acc, delta, known)
        if hi_end is None and not end_cap(acc) <= delta:  # (the caps decide it without a report: §8.5)
            check_max()
        return search_epsilon(acc, delta, xtol, None, hi_end)
    return search_epsilon(acc, delta, xtol, cap0)


__all__ = ["route"]
