"""The window's tail bound of :class:`~sharpdp.shuffle.ComposedAccountant` (``docs/composition.md`` §4: the mass
of the composed loss outside the FFT window, by a Chernoff bound on the sum of the computed tilted pmfs), and the
log-sum-exp it shares with the composition engine."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant.golden import golden_min


def lse(logs: np.ndarray) -> float:
    """log sum exp(logs) of a float array (-inf or the maximum where it is not finite)."""
    # (the array methods: the same reductions as np.max / np.sum without their dispatch, a hot path)
    top = float(logs.max())
    return top + math.log(float(np.exp(logs - top).sum())) if math.isfinite(top) else top


def window_chernoff(tilted, h: float, b: float, direction: int, scale: float) -> float:
    """log of a Chernoff bound on P(S >= b) (direction +1) or P(S < b) (-1) for the sum of the
    computed tilted pmfs: min over lambda >= 0 of -+lambda b + sum n_j log M_j(+-lambda). Any
    lambda is valid, so a geometric scan around 1/scale (scale: the sum's sd, nats) and a
    golden-section refinement suffice; 0.01 is added for the rounding of the log-MGFs. ``tilted``: the
    composition's (part, tilted pmf, tau, mass) tuples; ``h``: the lattice step (nats)."""
    logs = []
    for p, gt, tau, mass in tilted:
        lg = np.full(gt.size, -np.inf)
        lg[gt > 0] = np.log(gt[gt > 0])
        logs.append((p.count, lg, p.idx * h))

    def f(lam):
        return -direction * lam * b + sum(c * lse(lg + direction * lam * x) for c, lg, x in logs)

    lams = np.geomspace(1e-3, 1e3, 25) / scale
    vals = [f(float(x)) for x in lams]
    i = int(np.argmin(vals))
    a, c = float(lams[max(i - 1, 0)]), float(lams[min(i + 1, len(lams) - 1)])
    best = min(0.0, vals[i], golden_min(f, a, c, 30, left_on_tie=False))
    return best + 0.01 if best < 0 else 0.0
