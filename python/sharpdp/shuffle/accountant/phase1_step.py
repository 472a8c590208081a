"""The grid step of get_epsilon's phase 1 (docs/accountant.md §8 step 4; docs/accountant_atoms.md §6, §8): moved out of
:mod:`sharpdp.shuffle.accountant.search` unchanged (its size limit), re-exported there."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: phase 1's grid step over sd (docs/accountant.md §8) ...
H_RATIO = 0.125
#: ... for two-atom laws (binary RR), whose passes are cheap: a model root within ~0.03 % instead of
#: ~0.1 % saves phase 2 a refined probe (docs/accountant_atoms.md §8)
H_RATIO_TWO = 0.0625
#: ... over the sd of the atoms within this many times the top of the law, for atom laws whose far
#: negative atoms make the sd (docs/accountant_atoms.md §6)
CORE = 64.0


def phase1_h_ratio(law: Any, gamma: float) -> float:
    """Grid step over sd(B L) of phase 1's upper value (a speed choice; every step gives a
    certified upper value): 1/8 (1/16 for a two-atom law), times sd_core / sd for an atom law, sd_core the sd of B L with
    the atoms below -CORE top set to 0 (docs/accountant_atoms.md §6). Far negative atoms (k-RR
    at large eps0: one near -e^eps k) make sd, and a step sd/8, far coarser than the atoms near 0
    that decide the value; the blocks' sd scales the same way (variances add), so the ratio
    carries over to the block law."""
    at = law.atoms()
    if at is None or at[0].size < 2:
        return H_RATIO
    v, p = at
    base = H_RATIO_TWO if v.size == 2 else H_RATIO  # (binary RR: docs/accountant_atoms.md §8)
    top = float(np.max(v))
    if not top > 0.0:
        return base
    core = np.where(v >= -CORE * top, v, 0.0)
    var = gamma * float(np.sum(p * v * v)) - (gamma * float(np.sum(p * v))) ** 2
    var_core = gamma * float(np.sum(p * core * core)) - (gamma * float(np.sum(p * core))) ** 2
    if not (var > 0.0 and var_core > 0.0 and math.isfinite(var)) or var_core >= var:
        return base
    return base * max(math.sqrt(var_core / var), 1.0 / 4096.0)


def two_atoms(pairs: Any) -> bool:
    """Every law one of two atoms (binary RR under either adjacency)."""
    return all((at := law.atoms()) is not None and at[0].size == 2 for _, law in pairs)


__all__ = ["CORE", "H_RATIO", "H_RATIO_TWO", "phase1_h_ratio", "two_atoms"]
