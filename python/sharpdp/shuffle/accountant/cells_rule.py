"""The lognormal cells' rule read from ``limits`` (docs/accountant_tail.md §62.2, §64): the laws' floor cannot import
``limits``, so the accountant registers this reader with :func:`sharpdp.shuffle.laws.lognormal.set_two_node_rule`
on import (``fft.py`` imports this module); a switch flipped at run time (tests' ``switch``) is read at each call."""

from __future__ import annotations

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import lognormal


def two_node() -> int:
    """The cells' rule bits: 1 where ``limits.CELLS_TWO_NODE`` (the 2-point tier), 2 where ``limits.CELLS_FEW_NODES``
    (the 3- and 4-point tiers), each proven within the kernel's allowance (docs/accountant_tail.md §64.1)."""
    return (1 if limits.CELLS_TWO_NODE else 0) | (2 if limits.CELLS_FEW_NODES else 0)


lognormal.set_two_node_rule(two_node)
