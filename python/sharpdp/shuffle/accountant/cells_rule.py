"""The lognormal cells' rule read from ``limits`` (docs/accountant_tail.md §62.2): the laws' floor cannot import
``limits``, so the accountant registers this reader with :func:`sharpdp.shuffle.laws.lognormal.set_two_node_rule`
on import (``fft.py`` imports this module); a switch flipped at run time (tests' ``switch``) is read at each call."""

from __future__ import annotations

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import lognormal


def two_node() -> bool:
    """``limits.CELLS_TWO_NODE``: the narrowest lognormal cells by the 2-point rule (docs/accountant_tail.md §62.2)."""
    return bool(limits.CELLS_TWO_NODE)


lognormal.set_two_node_rule(two_node)
