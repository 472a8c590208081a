"""The neighbouring relations of the shuffle model (the one definition used by every module).

``"zero_out"`` (seed 001's: one user's input x replaced by the symbol bot, whose report is
drawn from the blanket R_BG; both orders x vs bot and bot vs x) and ``"replace"`` (one user's
input x1 replaced by another input x1' != x1). The default everywhere is ``"zero_out"``.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["ADJACENCIES", "Adjacency", "DEFAULT_ADJACENCY", "check_adjacency"]

Adjacency = Literal["zero_out", "replace"]
ADJACENCIES: tuple[str, str] = ("zero_out", "replace")
DEFAULT_ADJACENCY: Adjacency = "zero_out"


def check_adjacency(adjacency: str) -> str:
    """Validate the name of a neighbouring relation.

    Parameters
    ----------
    adjacency : str
        ``"zero_out"`` or ``"replace"``.

    Returns
    -------
    str
        ``adjacency`` unchanged.

    Raises
    ------
    ValueError
        If ``adjacency`` is not one of :data:`ADJACENCIES` (the message names the parameter).
    """
    if not isinstance(adjacency, str) or adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be one of {ADJACENCIES}, got {adjacency!r}")
    return adjacency
