"""The names of the figures ``sharpdp figures --only NAME`` draws (:func:`sharpdp.apps.shuffle_figures.write_figures`'s
``only``): a module of its own with no import, so that the CLI's parser lists them without loading pandas or
matplotlib (the core install has neither; docs/cli.md §11)."""

from __future__ import annotations

from typing import Iterable

#: The figures by name, and what each one draws.
FIGURE_NAMES = {
    "figure1": "RMSE against epsilon at (n, delta) = (1e4, 1e-5): shuffled BMG, shuffled Gaussian, central GM",
    "figure2": "the certified privacy profile delta(epsilon) at (n, RMSE) = (1e3, 3.16), and the central GM's",
    "figure3": "the n-scaling of the fixed Figure 2 BMG at delta = 1e-5",
}


def figure_numbers(only: str | Iterable[str] | None = None) -> tuple[int, ...]:
    """The figures (1, 2, 3) that ``only`` names (None: all three).

    Parameters
    ----------
    only : str, iterable of str or None
        A name of :data:`FIGURE_NAMES`, several, or None.

    Returns
    -------
    tuple of int
        The figures' numbers, increasing.

    Raises
    ------
    ValueError
        Naming ``only`` and the names of :data:`FIGURE_NAMES`, for a name not among them or an empty list.
    """
    if only is None:
        return (1, 2, 3)
    names = [only] if isinstance(only, str) else list(only)
    bad = [n for n in names if n not in FIGURE_NAMES]
    if bad or not names:
        raise ValueError(f"only: {bad[0] if bad else 'nothing'!r} is not a figure; the names are "
                         + ", ".join(FIGURE_NAMES))
    return tuple(sorted({int(n[-1]) for n in names}))
