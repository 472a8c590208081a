"""Attacks on LatticePrivUnit's released integer vectors (docs/sampling.md §6, §8, §10.6).

As in tests/test_release_attacks_messages.py: an attacker who sees one message of a user with input
e1 or e2 (neighbours under replace-one) reads the low-order bits of a coordinate. For a pure
eps0-LDP mechanism within total variation eta of the certified one, every bin u of every statistic
satisfies P(u | a) <= e^eps0 P(u | b) + (1 + e^eps0) eta, on both sides, so an observed violation
beyond Monte Carlo error is a leak; the advantage max_u |P(u | a) - P(u | b)| is at most
e^eps0 - 1 + delta. Porosity (an output impossible under the neighbour) is the extreme case.
The same checks FAIL on the float sampler ``PrivUnit.sample(allow_unsafe_float=True)``: the tests
can fail. Sample sizes: 10^6 lattice messages per side (the compiled sampler, about 3 us per message at
d = 3 on one core); 20,000 per side suffice for the float sampler's porosity to show.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from sharpdp.shuffle import LatticePrivUnit, PrivUnit

N = 1_000_000  # lattice messages per side
N_FLOAT = 20_000  # float messages per side (its leak shows at this size already)
Z = 5.0  # Monte Carlo allowance, standard errors per bin
P, THETA, D = 0.7, 0.2, 3
E1, E2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])


def _int_stats(r: LatticePrivUnit, x: np.ndarray, seed: int, chunk: int = 250_000) -> dict[str, np.ndarray]:
    """The statistics of N messages of input x, drawn in chunks (memory), each its own key."""
    lows, smalls = [], []
    for k in range(0, N, chunk):
        z = r.sample(np.tile(x, (min(chunk, N - k), 1)), rng=seed * 1000 + k // chunk)
        # exact: |z_0| < |z| / 4 iff 16 z_0^2 < |z|^2 (as the float attack's |y_0| < 1/4), decided in
        # doubles where the two sides differ by more than 1e-9 relative (the doubles' error is ~1e-15) and
        # on the Python ints elsewhere
        c0 = z[:, 0]
        zf = z.astype(np.float64)
        lhs, rhs = 16 * zf[:, 0] ** 2, (zf * zf).sum(axis=1)
        small = lhs < rhs
        near = np.flatnonzero(np.abs(lhs - rhs) <= 1e-9 * rhs)
        small[near] = [16 * int(z[i, 0]) ** 2 < sum(int(v) ** 2 for v in z[i]) for i in near]
        smalls.append(small)
        lows.append((c0 & 0xFF).astype(np.int64))  # Python's & on negative ints: two's complement low bits
    return _stats(np.concatenate(lows), np.concatenate(smalls))


def _float_stats(y: np.ndarray) -> dict[str, np.ndarray]:
    low = (np.ascontiguousarray(y[:, 0]).view(np.uint64) & np.uint64(0xFF)).astype(np.int64)
    return _stats(low, np.abs(y[:, 0]) < 0.25)


def _stats(low: np.ndarray, small: np.ndarray) -> dict[str, np.ndarray]:
    return {"low bit": low & 1, "low 4 bits": low & 0xF, "low 8 bits": low,
            "low bit | small": np.where(small, low & 1, 2), "low 4 bits | small": np.where(small, low & 0xF, 16)}


def _violations(stats_a: dict, stats_b: dict, eps0: float, eta: float, n: int) -> list[str]:
    bad = []
    ee = math.exp(eps0)
    for name in stats_a:
        a, b = stats_a[name], stats_b[name]
        size = int(max(a.max(), b.max())) + 1
        ca, cb = np.bincount(a, minlength=size), np.bincount(b, minlength=size)
        keys = np.flatnonzero((ca > 0) | (cb > 0))
        pa, pb = ca[keys] / n, cb[keys] / n
        for x, y, side in ((pa, pb, "e1 over e2"), (pb, pa, "e2 over e1")):
            se = np.sqrt(np.maximum(x * (1 - x), 1 / n) / n + ee**2 * np.maximum(y * (1 - y), 1 / n) / n)
            excess = x - ee * y - Z * se - (1 + ee) * eta
            if np.any(excess > 0):
                k = int(np.argmax(excess))
                bad.append(f"{name}: bin {keys[k]} {side}: {x[k]:.4f} > e^eps0 {y[k]:.4f} beyond MC")
            porous = (y == 0) & (x > Z * np.sqrt(np.maximum(x * (1 - x), 1 / n) / n))
            if np.any(porous):
                bad.append(f"{name}: porosity, {int(porous.sum())} bins seen {side} only")
        adv = float(np.max(np.abs(pa - pb)))
        mc = Z * math.sqrt(2 * 0.25 / n)
        if adv > ee - 1 + (1 + ee) * eta + mc:
            bad.append(f"{name}: advantage {adv:.3g}")
    return bad


def test_lattice_messages_pass_the_bit_attacks():
    r = LatticePrivUnit(P, THETA, D)
    assert r.local_epsilon < 1.3
    sa, sb = _int_stats(r, E1, 101), _int_stats(r, E2, 102)
    assert len(sa["low bit"]) == len(sb["low bit"]) == N
    assert _violations(sa, sb, r.local_epsilon, r.sampler_tv, N) == []
    # stronger: each side's low 8 bits are uniform (nu at sigma = 2^96 is flat on 256 consecutive
    # integers; the cone changes a cell's mass by far less than the Monte Carlo error)
    for s in (sa, sb):
        freq = np.bincount(s["low 8 bits"], minlength=256) / N
        assert np.all(np.abs(freq - 1 / 256) <= Z * math.sqrt((1 / 256) * (255 / 256) / N))


def test_the_attacks_catch_the_float_privunit():
    pu = PrivUnit(P, THETA, D)
    ya = pu.sample(np.tile(E1, (N_FLOAT, 1)), rng=101, allow_unsafe_float=True)
    yb = pu.sample(np.tile(E2, (N_FLOAT, 1)), rng=102, allow_unsafe_float=True)
    bad = _violations(_float_stats(ya), _float_stats(yb), pu.local_epsilon, 0.0, N_FLOAT)
    assert any(b.startswith("low bit | small: porosity") for b in bad), bad
    assert any(b.startswith("low 4 bits | small: porosity") for b in bad), bad


def test_no_lattice_message_is_impossible_under_a_neighbour():
    # porosity at a scale where the law is enumerable (sigma = 2, dim 2): the likelihood ratio of each
    # message between inputs x and x' is finite and at most the mechanism's own local ratio, computed
    # exactly from the cone masses nu(A_x), nu(A_x') (Fractions-free: 50-digit sums over the box)
    p, theta = 0.7, 0.3
    r = LatticePrivUnit(p, theta, 2, scale_bits=1)
    xa, xb = np.array([0.6, 0.8]), np.array([-0.8, 0.6])
    reach = 24
    with mpmath.workdps(50):
        w = {k: mpmath.exp(-mpmath.mpf(k * k) / 8) for k in range(-reach, reach + 1)}
        cells = [(a, b) for a in range(-reach, reach + 1) for b in range(-reach, reach + 1)]
        mass = {}
        for name, x in (("a", xa), ("b", xb)):
            inside = sum(w[a] * w[b] for a, b in cells if r.in_cone([a, b], x))
            outside = sum(w[a] * w[b] for a, b in cells if not r.in_cone([a, b], x))
            mass[name] = (p / inside, (1 - p) / outside)
        worst = max(mass["a"][i] / mass["b"][j] for i in (0, 1) for j in (0, 1))
        z = r.sample(np.tile(xa, (500, 1)), rng=9)
        for row in z:
            za = [int(v) for v in row]
            assert abs(za[0]) <= reach and abs(za[1]) <= reach  # (else the box would be too small)
            la = mass["a"][0 if r.in_cone(za, xa) else 1]
            lb = mass["b"][0 if r.in_cone(za, xb) else 1]
            assert 0 < lb and la / lb <= worst * (1 + mpmath.mpf(10) ** -40)
