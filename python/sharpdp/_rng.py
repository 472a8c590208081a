"""Random-number plumbing shared by every sampler."""

from __future__ import annotations

import numpy as np

RngLike = "np.random.Generator | int | np.random.SeedSequence | None"


def as_generator(rng: np.random.Generator | int | np.random.SeedSequence | None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    ``None`` draws fresh OS entropy (never a fixed seed); an int or
    ``SeedSequence`` seeds a new generator; a ``Generator`` is used as is.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        if isinstance(rng, (int, np.integer)) and int(rng) < 0:
            raise ValueError(f"rng: a seed must be a non-negative integer, got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected a numpy Generator, an int seed or None, got {type(rng).__name__}")


def core_seed(rng: np.random.Generator | int | np.random.SeedSequence | None) -> int:
    """Draw the 64-bit seed handed to a C++ sampler from ``rng``.

    The C++ samplers derive one independent stream per fixed-size block of
    work from this seed, so output is identical for any number of threads.
    """
    return int(as_generator(rng).integers(0, 2**63, dtype=np.int64))


def core_threads(threads: int | None) -> int:
    """The ``threads=`` convention of every sampler, mapped to the C++ core's argument.

    Parameters
    ----------
    threads : int or None
        ``None`` (default everywhere): all cores; otherwise the number of worker threads, >= 1.
        The output of a sampler never depends on it (fixed blocks, one random stream each).

    Returns
    -------
    int
        0 for ``None`` (the core's "all cores"), else ``threads``.

    Raises
    ------
    TypeError
        If ``threads`` is not an integer (bools are rejected).
    ValueError
        If ``threads`` < 1.
    """
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be an int >= 1 or None (all cores), got {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1 or None (all cores), got {threads}")
    return int(threads)
