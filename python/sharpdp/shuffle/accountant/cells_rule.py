"""The lognormal cells' rule read from ``limits`` (docs/accountant_tail.md §62.2, §64): the laws' floor cannot import
``limits``, so the accountant registers this reader with :func:`sharpdp.shuffle.laws.lognormal.set_two_node_rule`
on import (``fft.py`` imports this module); a switch flipped at run time (tests' ``switch``) is read at each call."""

from __future__ import annotations

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import lognormal


def two_node() -> int:
    """The kernel's rule bits: 1 where ``limits.CELLS_FEW_NODES`` or ``limits.CELLS_TWO_NODE`` (the narrower cells by
    2, 3 or 4 nodes, each tier proven within the kernel's allowance: docs/accountant_tail.md §64.1; §62.2's unproven
    2-point rule, which CELLS_TWO_NODE selected in session 42, is gone), else 0 (the 8-point rule in every narrow
    cell); plus 2 where ``limits.GAUSS48_SMALL_EXP`` (the nodes' small-argument exp/expm1 by polynomials, §76.1)."""
    few = 1 if (limits.CELLS_FEW_NODES or limits.CELLS_TWO_NODE) else 0
    return few | (2 if limits.GAUSS48_SMALL_EXP else 0)


def chords() -> int:
    """``limits.G46_STOP_LOSS_CHORDS``: from this many sorted thresholds a lognormal law's stop-loss bracket takes the
    chords and secants between every 32nd threshold (docs/accountant_tail.md §71.1); 0: the kernel at each."""
    return int(limits.G46_STOP_LOSS_CHORDS)


lognormal.set_two_node_rule(two_node)
lognormal.set_chords_rule(chords)
