"""rev43 (not collected by pytest): an independent reference for replace-one through bot (docs/accountant.md §9,
Lemma 9.1): the bound Q(eps) = min over splits e1 + e2 = eps of min(1, A(e1) + e^{e1} B(e2)), A, B the zero-out legs
(x vs bot, bot vs x), each certified by a plain zero-out accountant of ONE law (a protocol object listing that leg's
law alone: no via-bottom code, no sampler charge, so its values are at most the legs' with the charge).

``q_lower``: a certified lower value of Q: on [a, b] between grid splits, A(e1) >= A(b), e^{e1} >= e^a and
B(eps - e1) >= B(eps - a) (both legs non-increasing in eps, docs/accountant.md §1.6), so the minimum over the
grid's intervals of lo_A(b) + e^a lo_B(eps - a) (rounded down by 1e-12) is below Q; the grid covers [0, eps].
``f_upper``: an upper value of A(e1) + e^{e1} B(eps - e1) at one split (rounded up by 1e-12).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle import ShuffleAccountant


class OneLaw:
    """A randomizer protocol object listing one zero-out law of ``rand`` (index ``i``) at every eps."""

    def __init__(self, rand, i: int) -> None:
        self.rand, self.i = rand, i

    def privacy_amplification_laws(self, epsilon, adjacency="zero_out"):
        return [self.rand.privacy_amplification_laws(epsilon, "zero_out")[self.i]]

    def privacy_amplification_surcharge(self, epsilon, adjacency="zero_out"):
        return 0.0


class Legs:
    """The two legs' certified brackets at any eps (memoised), each by its own accountant at ``rel_tol``."""

    def __init__(self, rand, n: int, rel_tol: float = 1e-2) -> None:
        ia, ib = rand.zero_out_legs()
        assert ia is not None and ib is not None and len(ia) == 1 and len(ib) == 1
        self.acc = [ShuffleAccountant(OneLaw(rand, ia[0]), n, rel_tol=rel_tol),
                    ShuffleAccountant(OneLaw(rand, ib[0]), n, rel_tol=rel_tol)]
        self.memo: dict = {}

    def __call__(self, j: int, e: float) -> tuple[float, float]:
        key = (j, float(e))
        if key not in self.memo:
            self.memo[key] = self.acc[j].get_delta_bounds(max(float(e), 0.0))
        return self.memo[key]


def spy_on(monkeypatch, fn, *modules) -> list:
    """Replace ``fn`` (by its name) in each of ``modules`` by a wrapper recording each result; returns the list."""
    got: list = []

    def wrapped(*a, **kw):
        got.append(fn(*a, **kw))
        return got[-1]

    for m in modules:
        monkeypatch.setattr(m, fn.__name__, wrapped)
    return got


def q_lower(legs: Legs, eps: float, k: int = 12, zoom: int = 12) -> float:
    """A certified lower value of Q(eps) on a grid of k + 1 splits, then ``zoom`` more inside the best intervals."""
    if eps <= 0.0:  # (the one split e1 = e2 = 0)
        return min(1.0, legs(0, 0.0)[0] + legs(1, 0.0)[0]) * (1 - 1e-12)
    grid = set(np.linspace(0.0, eps, k + 1).tolist())

    def bounds(g):
        g = sorted(g)
        return [(legs(0, b)[0] + math.exp(a) * legs(1, eps - a)[0], a, b) for a, b in zip(g[:-1], g[1:])]

    best = sorted(bounds(grid))[:2]
    for _, a, b in best:
        grid.update(np.linspace(a, b, zoom + 2)[1:-1].tolist())
    v = min(x for x, _, _ in bounds(grid))
    return min(1.0, v) * (1 - 1e-12)


def f_upper(legs: Legs, eps: float, e1: float) -> float:
    """An upper value of A(e1) + e^{e1} B(eps - e1) (capped at 1)."""
    return min(1.0, (legs(0, e1)[1] + math.exp(e1) * legs(1, max(eps - e1, 0.0))[1]) * (1 + 1e-12))
