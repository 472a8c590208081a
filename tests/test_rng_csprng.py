"""The generator behind every sampler: ChaCha20 keyed by 32 bytes (docs/sampling.md §1).

Checked against an independent ChaCha20 (the ``cryptography`` package's, OpenSSL's), plus the
key plumbing of ``sharpdp._rng``: fresh OS entropy for ``rng=None``, reproducible seeded keys.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp import _core
from sharpdp._rng import as_generator, core_key

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms  # the [test] extra's independent ChaCha20


def _reference_words(key: bytes, stream: int, count: int) -> np.ndarray:
    # ChaCha20 keystream (encryption of zeros); the 16-byte nonce is state words 12..15:
    # a 64-bit block counter starting at 0, then the 64-bit stream number (little-endian)
    nonce = (0).to_bytes(8, "little") + stream.to_bytes(8, "little")
    enc = Cipher(algorithms.ChaCha20(key, nonce), mode=None).encryptor()
    return np.frombuffer(enc.update(bytes(8 * count)), dtype="<u8")


@settings(max_examples=40, deadline=None)
@given(key=st.binary(min_size=32, max_size=32), stream=st.integers(0, 2**64 - 1),
       count=st.integers(0, 300))
def test_keystream_is_chacha20(key, stream, count):
    got = _core.samplers.keystream_words(key, stream, count)
    assert np.array_equal(got, _reference_words(key, stream, count))


def test_keystream_across_many_refills_and_the_rfc_zero_key():
    key = bytes(32)
    words = _core.samplers.keystream_words(key, 0, 10_000)
    assert np.array_equal(words, _reference_words(key, 0, 10_000))
    # RFC 8439 §2.4.2-style sanity: the all-zero key's first block starts 76 b8 e0 ad (Bernstein's
    # ChaCha20 test vector for key 0, nonce 0)
    assert words[:1].tobytes()[:4] == bytes.fromhex("76b8e0ad")


def test_key_must_be_32_bytes():
    with pytest.raises(ValueError, match="32 bytes"):
        _core.samplers.keystream_words(b"short", 0, 4)
    with pytest.raises(ValueError, match="32 bytes"):
        _core.samplers.standard_normals(4, bytes(31))


def test_core_key_modes():
    # rng=None: fresh OS entropy every call, never a fixed or repeated key
    keys = {core_key(None) for _ in range(64)}
    assert len(keys) == 64 and all(len(k) == 32 for k in keys)
    # seeded: reproducible, and different seeds give different keys
    assert core_key(7) == core_key(7) != core_key(8)
    assert core_key(np.random.SeedSequence(5)) == core_key(np.random.SeedSequence(5))
    # a Generator is advanced by exactly four 64-bit words
    g, h = np.random.default_rng(3), np.random.default_rng(3)
    core_key(g)
    h.integers(0, 2**64, size=4, dtype=np.uint64)
    assert g.integers(0, 2**62) == h.integers(0, 2**62)
    with pytest.raises(TypeError, match="rng"):
        core_key(1.5)


def test_rng_none_is_a_chacha20_generator():
    g = as_generator(None)
    assert type(g.bit_generator).__name__ == "ChaCha"
    assert g.bit_generator.state["state"]["rounds"] == 20
    a, b = as_generator(None).integers(0, 2**63, 4), as_generator(None).integers(0, 2**63, 4)
    assert not np.array_equal(a, b)


def test_unseeded_samplers_differ_and_seeded_ones_repeat():
    from sharpdp.shuffle import BlanketMixedGaussian

    bmg = BlanketMixedGaussian(0.5, 1.0, 1)
    x = np.zeros((5000, 1))
    assert not np.array_equal(bmg.sample(x), bmg.sample(x))
    assert np.array_equal(bmg.sample(x, rng=11, threads=1), bmg.sample(x, rng=11, threads=2))
