"""Random-number plumbing shared by every sampler.

Two modes (docs/sampling.md §1):

- ``rng=None`` (the default of every sampler and release): cryptographically secure randomness.
  The C++ samplers run ChaCha20 keyed by 32 bytes of fresh OS entropy (:func:`core_key`), and
  Python-side draws use a ChaCha20 numpy generator keyed the same way (:func:`as_generator`).
  The key is never stored, printed or returned.
- ``rng=`` an int seed, a ``SeedSequence`` or a numpy ``Generator``: reproducible research mode.
  The ChaCha20 key is drawn from that generator, so anyone who knows the seed can regenerate the
  noise: such a release is **not private unless the seed is kept secret**.
"""

from __future__ import annotations

import os

import numpy as np

RngLike = "np.random.Generator | int | np.random.SeedSequence | None"


def as_generator(rng: np.random.Generator | int | np.random.SeedSequence | None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    ``None`` gives a cryptographically secure generator: ChaCha20 (20 rounds, ``randomgen.ChaCha``)
    keyed by 256 bits of fresh OS entropy (``os.urandom``). An int in [0, 2**64) or a
    ``SeedSequence`` seeds a new (reproducible, not secret) numpy generator; a ``Generator`` is
    used as is.

    Raises
    ------
    TypeError
        ``rng`` of another type (a bool, a float, a string, ...).
    ValueError
        An int seed outside [0, 2**64).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError("rng: expected a numpy Generator, an int seed or None, got bool")
    if rng is None:
        return secure_generator()
    if isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        if isinstance(rng, (int, np.integer)) and not 0 <= int(rng) < 2**64:
            raise ValueError(f"rng: a seed must be an integer in [0, 2**64), got {rng}")
        return np.random.default_rng(rng)
    raise TypeError(f"rng: expected a numpy Generator, an int seed or None, got {type(rng).__name__}")


def secure_generator() -> np.random.Generator:
    """A numpy ``Generator`` on ChaCha20 (20 rounds) keyed by 256 bits of fresh OS entropy.

    For the Python-side draws of a release when ``rng=None``. Cryptographically secure: its key
    comes from ``os.urandom`` and is not kept anywhere else.
    """
    from randomgen import ChaCha  # imported on demand: only releases need it

    key = int.from_bytes(os.urandom(32), "little")
    return np.random.Generator(ChaCha(key=key, counter=0, rounds=20))


def core_key(rng: np.random.Generator | int | np.random.SeedSequence | None) -> bytes:
    """The 32-byte ChaCha20 key handed to a C++ sampler.

    ``None``: 32 bytes of fresh OS entropy (``os.urandom``), never derived from a seed.
    Otherwise four 64-bit words drawn from ``as_generator(rng)`` (little-endian), so a seeded
    call is reproducible and advances a caller's ``Generator`` by exactly four words.

    The C++ samplers read stream b of this key for block b of kSamplerBlockRows rows (or
    values), so their output is identical for any number of threads or partitions.

    Raises
    ------
    TypeError, ValueError
        As :func:`as_generator`.
    """
    if rng is None:
        return os.urandom(32)
    words = as_generator(rng).integers(0, 2**64, size=4, dtype=np.uint64)
    return words.astype("<u8").tobytes()


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


def refuse_unsafe_release(sampler: str, rng: object, allow_unsafe_float: object, why: str, instead: str) -> None:
    """Refuse a release (``rng=None``: the CSPRNG) by a sampler that is not floating-point safe.

    Parameters
    ----------
    sampler : str
        The sampler's name, e.g. ``"PrivUnit.sample"`` (for the message).
    rng : object
        The sampler's ``rng`` argument; only None (a release) is refused.
    allow_unsafe_float : bool
        The caller's explicit research-only opt-in (docs/sampling.md §6).
    why, instead : str
        Why its float messages are not what the accountant certifies, and the safe route (or what is
        missing), each one sentence.

    Raises
    ------
    TypeError
        If ``allow_unsafe_float`` is not a bool.
    ValueError
        If ``rng`` is None and ``allow_unsafe_float`` is False.
    """
    if not isinstance(allow_unsafe_float, (bool, np.bool_)):
        raise TypeError(f"allow_unsafe_float must be a bool, got {type(allow_unsafe_float).__name__}")
    if rng is None and not allow_unsafe_float:
        raise ValueError(
            f"rng=None asks for a release, and {sampler} is not floating-point safe: {why} and are not what "
            f"the accountant certifies (docs/sampling.md §6). {instead} Pass allow_unsafe_float=True for "
            "research only (the figures then cover the mathematical mechanism only), or rng=<seed> for a "
            "reproducible, non-private study")
