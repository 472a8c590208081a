"""A law of a report settled by its own certified upper value at a smaller epsilon (docs/accountant.md §7.5).

Inside a privacy profile's sweep (:func:`.plain_warm.active`) the report at eps keeps, per law index, the certified
upper values it computed at the sweep's earlier (smaller) epsilons. Where the randomizer lists its laws in the same
pair and order at every epsilon (``stable_law_order``), law i's upper value U_i(eps') at eps' <= eps bounds D_up of
law i at eps (docs/accountant.md §1.6: D_up of each pair and order is non-increasing in eps). A law with
U_i(eps') <= the maximum so far cannot raise the report's upper value, so its certification at eps is skipped (its
lower value is not needed for a certified report: the maximum over fewer laws' lower values is still a lower value).
"""

from __future__ import annotations

import bisect

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.plain_warm import active


class LawSettle:
    """Per accountant: for each law index, its certified upper values by epsilon (sorted), recorded in sweeps."""

    def __init__(self, randomizer) -> None:
        self.on = bool(getattr(randomizer, "stable_law_order", False))
        self._eps: dict[int, list[float]] = {}
        self._up: dict[int, list[float]] = {}

    def applies(self) -> bool:
        """Whether this report may settle or record laws: the switch on, the randomizer's law order stable, and
        inside a privacy profile's sweep."""
        return self.on and limits.SWEEP_LAW_SETTLE and active()

    def settled(self, i: int, eps: float, up_max: float) -> bool:
        """True where a recorded upper value of law i at some eps' <= eps is <= up_max (law i cannot raise the
        report's maximum at eps). The tightest recorded value is the one at the largest such eps' (the values
        recorded for one law are certified at their own eps; the smallest over eps' <= eps is used)."""
        es = self._eps.get(i)
        if not es:
            return False
        k = bisect.bisect_right(es, eps)
        return k > 0 and min(self._up[i][:k]) <= up_max

    def put(self, i: int, eps: float, upper: float) -> None:
        """Record law i's certified upper value at eps."""
        es, us = self._eps.setdefault(i, []), self._up.setdefault(i, [])
        k = bisect.bisect_left(es, eps)
        if k < len(es) and es[k] == eps:
            us[k] = min(us[k], upper)
            return
        es.insert(k, eps)
        us.insert(k, upper)
        if len(es) > limits.MEMO_MAX:  # (bounded: the oldest-eps half dropped, a choice only)
            del es[: len(es) // 2], us[: len(us) // 2]


__all__ = ["LawSettle"]
