"""Typed results of the shuffle accountant (no logic): the public :class:`AccountantReport`, and
the values passed between the engine (:mod:`.lattice`), the exact blocks (:mod:`.blocks`), the
far-tail treatment (:mod:`.far_tail`) and the certification driver (:mod:`.driver`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class AccountantReport:
    """Certified bracket of the blanket divergence at one epsilon, with its error budget.

    ``lower <= D_up(eps) <= upper``. ``terms`` holds the error terms of the law that attains
    ``upper`` (units: delta, i.e. already divided by n gamma and scaled by e^{n Lambda}), and
    ``surcharge``, the randomizer's additive term included in ``upper`` (module step K), if any.
    """

    epsilon: float
    lower: float
    upper: float
    h: float = math.nan
    N: int = 0
    T: float = math.nan
    B: float = math.nan
    theta: float = math.nan
    n_log_mgf: float = math.nan
    law_index: int = -1
    terms: dict[str, Any] = field(default_factory=dict)

    @property
    def rel_gap(self) -> float:
        """(upper - lower) / lower (inf when lower is 0)."""
        return (self.upper - self.lower) / self.lower if self.lower > 0 else math.inf


@dataclass(frozen=True)
class Coarsen:
    """Outcome of a pass whose grid exceeds a size cap (N <= N_MAX, K J_LO <= K_MAX)."""

    h_fit: float  # (about) the smallest grid step that fits


@dataclass(frozen=True)
class Grid:
    """The lattice a value was computed on (shown by :class:`AccountantReport`)."""

    h: float  # grid step
    N: int  # FFT length
    T: float  # upper clamp (a node)
    B: float  # lower clamp (a node)
    theta: float = math.nan  # tilt of the upper law (nan: not a single-lattice value)
    n_log_mgf: float = math.nan  # n Lambda(theta) of the upper law
    log_mgf_err: float = math.nan  # bound n log(mass + tau) of the pmf errors' effect on n Lambda


@dataclass(frozen=True)
class LawBracket:
    """Certified bracket of D_up for one law, in delta units: ``lower <= D_up <= upper``.

    Produced by :func:`sharpdp.shuffle.accountant.driver.certify` for both of its modes (the full bracket,
    and the upper value alone where ``lower`` may be 0).
    """

    lower: float
    upper: float
    cap: float = math.inf  # the certified E[L_+] applied to ``upper`` (inf: not applied)
    grid: Grid | None = None  # the lattice of the value (None: closed form)
    h_ratio: float | None = None  # the grid step over sd(L) (get_epsilon's phase 2 reuses it)
    terms: Mapping[str, Any] = field(default_factory=dict)  # error budget, or a note on the closed form
