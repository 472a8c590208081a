"""LatticePrivUnit's compiled sampler against the pure-Python reference, bit for bit (docs/sampling.md §10.6).

The proof of docs/sampling.md §10.6 is about the algorithm of ``_lattice_reference`` (exact bits and Bernoulli
coins from ChaCha20 stream LATTICE_STREAM + i, Canonne-Kamath-Steinke discrete Gaussians, the exact cone test);
the core (``sharpdp._core.samplers.lattice_privunit_sample``) must release the very same integers for the same
(key, index, x row, p, theta, scale_bits). The laws themselves are checked in tests/test_privunit_lattice.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betainc
from sharpdp._core_loader import core
from sharpdp._rng import core_key
from sharpdp.shuffle import LatticePrivUnit
from sharpdp.shuffle.randomizers._lattice_reference import ExactCone, reference_message
from sharpdp.shuffle.randomizers.privunit_lattice import LATTICE_STREAM, MAX_WORST_COORDINATES


def _reference(key: bytes, x: np.ndarray, p: float, theta: float, bits: int, stream0: int = LATTICE_STREAM):
    return [reference_message(key, stream0 + i, ExactCone(row, theta), p, 1 << bits, x.shape[1])
            for i, row in enumerate(x)]


def _core_raw(key: bytes, x: np.ndarray, p: float, theta: float, bits: int, stream0: int = LATTICE_STREAM,
              threads: int = 1, width: int | None = None):
    num, den = p.as_integer_ratio()
    w = bits // 64 + 2 if width is None else width
    limbs, row_bits = core.samplers.lattice_privunit_sample(x, num, den.bit_length() - 1, theta, bits, key, stream0,
                                                           threads, w)
    out = []
    for i in range(x.shape[0]):  # two's complement, little-endian limbs, decoded independently of the module
        row = []
        for j in range(x.shape[1]):
            v = int.from_bytes(limbs[i, j].astype("<u8").tobytes(), "little", signed=True)
            row.append(v)
        out.append(row)
    return out, row_bits


def _rows(d: int, n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    if d >= 2:  # tiny dyadic exponents (subnormal and near-subnormal components), signs mixed
        x[0] = [1.0, -(2.0**-1070)] + [2.0**-1060 * (-1) ** k for k in range(d - 2)]
        x[1] = [-(2.0**-1074)] * (d - 1) + [-1.0]
    x[-1] = 0.0
    x[-1, -1] = 1.0
    return x


CASES = [  # (dim, p, theta, scale_bits)
    (1, 0.7, 0.3, 0), (1, 0.6, -0.4, 1), (2, 0.7, 0.3, 2), (2, 0.6, -0.5, 96), (3, 0.7, 0.2, 96),
    (3, 0.65, -0.1, 96), (16, 0.7, 0.1, 96), (16, 0.6, -0.05, 7), (3, 0.7, 0.2, 480), (2, 0.8, 0.0, 64),
    (3, 0.7, 5e-324, 96), (2, 0.9, -(2.0**-600), 130), (3, 0.5 + 2.0**-40, 0.25, 200), (2, 0.7, 0.6, 63),
]


@pytest.mark.parametrize("d,p,theta,bits", CASES)
def test_core_matches_the_reference_bit_for_bit(d, p, theta, bits):
    n = 12 if bits < 400 and d < 16 else 6
    key = core_key(1000 + 7 * d + bits)
    x = _rows(d, n, seed=d + bits)
    got, row_bits = _core_raw(key, x, p, theta, bits)
    assert np.all(row_bits >= 0)  # every row done in the core at these parameters
    assert got == _reference(key, x, p, theta, bits)
    assert max(max(abs(v) for v in row).bit_length() for row in got) == int(row_bits.max())
    # the public sampler releases the same integers (Python ints, object array), for any thread count
    r = LatticePrivUnit(p, theta, d, scale_bits=bits)
    for threads in (1, 2):
        z = r.sample(x, rng=1000 + 7 * d + bits, threads=threads)
        assert z.dtype == object and z.shape == (n, d)
        assert all(type(v) is int for v in z.flat)
        assert z.tolist() == got


def test_stream_offset_and_threads_do_not_change_a_message():
    key, x = core_key(5), _rows(3, 40, seed=5)
    a, _ = _core_raw(key, x, 0.7, 0.2, 96, threads=1)
    b, _ = _core_raw(key, x, 0.7, 0.2, 96, threads=3)
    c, _ = _core_raw(key, x[10:], 0.7, 0.2, 96, stream0=LATTICE_STREAM + 10)
    assert a == b and a[10:] == c
    d, _ = _core_raw(core_key(6), x, 0.7, 0.2, 96)
    assert sum(u != v for u, v in zip(a, d)) == 40  # another key: other messages (the test can fail)


def test_rows_the_core_cannot_hold_are_flagged_and_drawn_by_the_reference():
    key, x = core_key(8), _rows(2, 5, seed=8)
    limbs, row_bits = core.samplers.lattice_privunit_sample(x, 7, 3, 0.2, 96, key, LATTICE_STREAM, 1, 1)
    assert np.all(row_bits == -1) and not np.any(limbs)  # |z| ~ 2^96 does not fit one limb: not done, zeroed
    _, ok = _core_raw(key, x, 0.875, 0.2, 96, width=2)
    assert np.all((ok >= 90) & (ok <= 110))


def test_sample_draws_the_undone_rows_with_the_reference(monkeypatch):
    # Catches: undone rows released as zeros, or redrawn on another stream (then they would differ).
    real = core.samplers.lattice_privunit_sample
    undone, calls = [1, 4], []

    def flagging(x, *args):
        calls.append(len(x))
        limbs, row_bits = real(x, *args)
        limbs[undone] = 0
        row_bits[undone] = -1
        return limbs, row_bits

    monkeypatch.setattr(core.samplers, "lattice_privunit_sample", flagging)
    x, r = _rows(3, 6, seed=11), LatticePrivUnit(0.7, 0.2, 3)
    z = r.sample(x, rng=12)
    assert z.tolist() == _reference(core_key(12), x, 0.7, 0.2, 96)
    assert calls == [6] and all(any(v != 0 for v in z[i]) for i in undone)


@pytest.mark.parametrize("kw,match", [
    (dict(theta=1.0), "theta"), (dict(theta=float("nan")), "theta"), (dict(scale_bits=481), "scale_bits"),
    (dict(scale_bits=-1), "scale_bits"), (dict(p_num=8), "p"), (dict(p_num=0), "p"), (dict(p_exp=0), "p"),
    (dict(width=0), "width"), (dict(x=np.zeros((2, 3))), "nonzero"), (dict(x=np.full((2, 3), np.inf)), "finite"),
])
def test_core_rejects_bad_arguments(kw, match):
    args = dict(x=np.eye(3), p_num=7, p_exp=3, theta=0.2, scale_bits=96, key=bytes(32), stream0=0, threads=1, width=3)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        core.samplers.lattice_privunit_sample(**args)


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.integers(0, 2**40), st.integers(1, 4),
       st.floats(0.05, 0.95), st.floats(-0.5, 0.5), st.integers(0, 130),
       st.lists(st.floats(-1.0, 1.0, allow_subnormal=True), min_size=4, max_size=4))
def test_property_core_equals_reference(key, index, d, p, theta, bits, coords):
    x = np.array(coords[:d], dtype=np.float64)
    if not np.any(x):
        x[0] = -1.0
    x = x[None, :]
    stream0 = LATTICE_STREAM + index
    got, row_bits = _core_raw(key, x, p, theta, bits, stream0=stream0)
    assert row_bits[0] >= 0
    assert got == _reference(key, x, p, theta, bits, stream0=stream0)


def test_refuses_when_the_rarer_coin_needs_too_many_draws():
    # dim x max(1/s, 1/q) is the expected number of coordinates drawn for a message of the rarer cap coin;
    # s from the regularised incomplete beta (T = <U, v>, (1 + T) / 2 ~ Beta(a, a), a = (d - 1) / 2)
    for p, theta, d in ((0.7, 0.3, 100), (0.7, 0.35, 100), (0.7, 0.33, 100), (0.6, -0.45, 50), (0.7, 0.2, 3)):
        a = 0.5 * (d - 1)
        s = float(betainc(a, a, 0.5 * (1.0 - theta)))
        worst = d * max(1.0 / s, 1.0 / (1.0 - s))
        assert p / s + (1 - p) / (1 - s) < 1e4  # the older per-message mean cap alone would accept all of them
        if worst > MAX_WORST_COORDINATES * 1.01:
            with pytest.raises(ValueError, match="rarer cap coin"):
                LatticePrivUnit(p, theta, d)
        elif worst < MAX_WORST_COORDINATES * 0.99:
            assert math.isclose(LatticePrivUnit(p, theta, d).expected_proposals, p / s + (1 - p) / (1 - s),
                                rel_tol=1e-6)
    with pytest.raises(ValueError, match="rarer cap coin"):
        LatticePrivUnit(0.7, 0.35, 100)
    LatticePrivUnit(0.7, 0.3, 100)
    # a rare coin on a tiny cap: mean p / s + (1 - p) / q about 101, but 1 / s = 1e11 proposals for that coin
    r = None
    with pytest.raises(ValueError, match="rarer cap coin"):
        r = LatticePrivUnit(1e-9, 1 - 2e-11, 3)
    assert r is None


@pytest.mark.parametrize("cap", [1, 2, 3])
def test_proposal_cap_gives_up_at_the_same_proposal_as_the_reference(cap):
    # scale_bits = 1, theta = 0.3: about a third of the messages need more than one proposal, so a cap of
    # 1-3 abandons some rows; the core abandons (row_bits -2) exactly the rows the reference gives up on
    # (None), and the others are the same messages as without a cap
    key, bits, p, theta = bytes(range(32)), 1, 0.7, 0.3
    x = _rows(2, 64, 5)
    num, den = p.as_integer_ratio()
    limbs, row_bits = core.samplers.lattice_privunit_sample(x, num, den.bit_length() - 1, theta, bits, key,
                                                           LATTICE_STREAM, 1, 2, cap)
    uncapped, _ = _core_raw(key, x, p, theta, bits)
    ref = [reference_message(key, LATTICE_STREAM + i, ExactCone(row, theta), p, 1 << bits, 2, cap)
           for i, row in enumerate(x)]
    gave_up = [z is None for z in ref]
    assert 0 < sum(gave_up) < len(ref)
    assert list(row_bits == -2) == gave_up
    for i, z in enumerate(ref):
        if z is not None:
            assert [int.from_bytes(limbs[i, j].astype("<u8").tobytes(), "little", signed=True)
                    for j in range(2)] == z == uncapped[i]


def test_uncertified_sampler_raises_at_its_cap_and_certified_ones_have_none():
    # without a certificate a thin cone at a small scale can hold no lattice point of moderate norm (here the
    # complement of K_x, half-angle 4.5e-4, at sigma = 8: mass ~ exp(-30)): sample raises instead of running
    # for ever; a certified LatticePrivUnit is the exact, uncapped algorithm
    r = LatticePrivUnit(0.5, -0.9999999, 2, scale_bits=3)
    assert r.local_epsilon is None
    r._max_proposals = 20_000  # the real cap, max(1e6, 1000 expected_proposals) = 3.5e6, takes seconds
    with pytest.raises(RuntimeError, match="nothing was released"):
        r.sample(np.array([[math.cos(1.0), math.sin(1.0)]] * 4), rng=1, threads=1)
    assert LatticePrivUnit(0.5, -0.9999999, 2)._max_proposals == 0
    assert LatticePrivUnit(0.7, 0.2, 3)._max_proposals == 0
