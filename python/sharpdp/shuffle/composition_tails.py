"""Pieces of :class:`~sharpdp.shuffle.ComposedAccountant`'s engine (``docs/composition.md`` §4): one round's finite
part (:class:`RoundPart`), the eps-independent state of one evaluation (:class:`PreparedWindow`), the window's tail bound (the
mass of the composed loss outside the FFT window, by a Chernoff bound on the sum of the computed tilted pmfs) and
the log-sum-exp they share."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sharpdp.shuffle.accountant.golden import golden_min
from sharpdp.shuffle.profile import DominatingPair


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


class RoundPart:
    """One round's finite part (P-masses on lattice indices k0 + i) and its count."""

    def __init__(self, pair: DominatingPair, count: int):
        # losses of probability 0 carry no mass: trimmed from both ends (the tilt at a large theta would
        # otherwise meet 0 x e^{theta x} overflow at empty top nodes, and the support top would be too high)
        nz = np.flatnonzero(pair.probs > 0)
        k, pr = (pair.losses[nz[0]:nz[-1] + 1], pair.probs[nz[0]:nz[-1] + 1]) if nz.size else (pair.losses[:0],
                                                                                               pair.probs[:0])
        self.k0 = int(k[0]) if k.size else 0
        self.kmax = int(k[-1]) if k.size else 0
        K = int(k[-1] - self.k0) + 1 if k.size else 1
        self.g = np.zeros(K)
        if k.size:
            self.g[k - self.k0] = pr
        self.logg = np.log(np.where(self.g > 0, self.g, 1.0))
        self.logg[self.g <= 0] = -np.inf
        self.idx = np.arange(K, dtype=float) + self.k0
        self.count = count
        self.inf = pair.infinity_mass

    def log_mgf(self, lam: float, h: float) -> float:
        return lse(self.logg + lam * h * self.idx)

    def tilted_moments(self, lam: float, h: float) -> tuple[float, float]:
        """Mean and variance (nats) of the part's law tilted by e^{lam x}."""
        w = self.logg + lam * h * self.idx
        w = np.exp(w - w.max())
        s0 = float(w.sum())
        m1 = float(w @ self.idx) / s0
        m2 = float(w @ (self.idx * self.idx)) / s0
        return m1 * h, max(m2 - m1 * m1, 0.0) * h * h


@dataclass(frozen=True)
class PreparedWindow:
    """The eps-independent state of one composed evaluation (:meth:`ComposedAccountant._prepare`):
    the tilt ``theta`` and sup of the weights ``supw``, the tilted parts and their pmf-error sums
    ``taus``, the scale sum n_j Lambda_j (``log_scale``, ``abs_scale``: its absolute terms), the
    window's certified convolution ``qv`` (at the nodes ``x``, nats) with its l2 error ``err_q``, the
    window's wrap-around term ``wrap`` and the infinity mass bracket ``p_inf``."""

    theta: float
    supw: float
    tilted: list
    taus: list
    log_scale: float
    abs_scale: float
    qv: np.ndarray
    err_q: float
    x: np.ndarray
    wrap: float
    p_inf: tuple
