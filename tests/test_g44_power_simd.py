"""The power step's accurate DFT in AVX2 lanes (docs/accountant_tail.md §67.1): the same doubles as the plain path.

``core.accountant.set_dft_simd(False)`` forces the plain path (main's code, unchanged), ``True`` (the default) allows the
AVX2 lanes where the CPU has them. References: the plain path bit for bit (every output of ``power``: the spectrum,
both norms, the count of recomputed frequencies) on random pmfs, lattice sizes, powers and frequency sets (hypothesis),
with the twiddle table and without it; the 50-digit DFT (tests/_power_reference.py) for the error bound with the lanes
on; a whole ``get_delta_bounds`` whose far-tail run recomputes frequencies, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _power_reference import l2_distance, power_case
from sharpdp._core_loader import core

C = core.accountant


def _cpu_has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo") as fh:
            return any(line.startswith("flags") and " avx2" in line for line in fh)
    except OSError:
        return False


@pytest.fixture
def lanes():
    """Yields a function running ``power`` with the lanes on or off; restores the default (on) afterwards."""
    def run(on: bool, *args):
        C.set_dft_simd(on)
        return C.power(*args)
    yield run
    C.set_dft_simd(True)


def _bits(out) -> tuple:
    Q, err, norm, rec = out
    return (np.asarray(Q).view(np.float64).tobytes(), float(err).hex(), float(norm).hex(), int(rec))


def test_the_lanes_run_where_the_cpu_has_avx2():
    try:
        on = C.set_dft_simd(True)
        assert C.set_dft_simd(False) is False  # forced off: the plain path
    finally:
        C.set_dft_simd(True)
    import platform
    if platform.machine() in ("x86_64", "AMD64") and _cpu_has_avx2():
        assert on is True
    elif platform.machine() not in ("x86_64", "AMD64"):
        assert on is False


def _case(seed: int, N: int, nnz: int, n: float, spread: float):
    """A pmf y of nnz atoms (runs of consecutive positions and isolated ones) on N points, its rfft z, and an FFT
    error e large enough that many frequencies are recomputed (thr tiny)."""
    rng = np.random.default_rng(seed)
    y = np.zeros(N)
    pos = np.unique(np.concatenate([np.arange(min(nnz, N)) * max(1, int(spread)) % N, rng.integers(0, N, nnz // 3 + 1)]))
    y[pos] = rng.random(pos.size) ** 3 + 1e-300
    y /= y.sum()
    z = np.fft.rfft(y)
    e = 10 * math.log2(N) * 2.0**-53 * math.sqrt(N) * float(np.sqrt(np.sum(y * y)))
    return (z, float(n), e, N, y, 1e-300, 1e12)


@pytest.mark.parametrize("seed, N, nnz, n, spread", [
    (1, 4096, 300, 50.0, 1),  # a table, many frequencies (the table path)
    (2, 30000, 2000, 7.0, 3),  # even N, gaps in the support (indices formed anew)
    (3, 9001, 900, 1000.0, 1),  # odd N
    (4, 1 << 15, 25, 3.0, 1000),  # few atoms: the direct twiddles (no table) for the few frequencies
    (5, 64, 20, 2.0, 1),
])
def test_lanes_give_the_plain_paths_doubles(lanes, seed, N, nnz, n, spread):
    args = _case(seed, N, nnz, n, spread)
    off, on = lanes(False, *args), lanes(True, *args)
    assert off[3] > 0  # frequencies were recomputed by the accurate DFT
    assert _bits(on) == _bits(off)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), N=st.integers(2, 5000), nnz=st.integers(1, 400), n=st.floats(1.5, 1e4),
       spread=st.integers(1, 50), budget=st.sampled_from([1e12, 3e4, 1e3]))
def test_lanes_give_the_plain_paths_doubles_property(seed, N, nnz, n, spread, budget):
    z, nn, e, N_, y, thr, _ = _case(seed, N, nnz, n, spread)
    args = (z, nn, e, N_, y, thr, budget)  # (a budget: only the largest frequencies, any count mod 8)
    try:
        off = (C.set_dft_simd(False), C.power(*args))[1]
        on = (C.set_dft_simd(True), C.power(*args))[1]
    finally:
        C.set_dft_simd(True)
    assert _bits(on) == _bits(off)


@pytest.mark.parametrize("seed, n", [(11, 2), (12, 3), (13, 40)])
def test_bound_holds_against_the_50_digit_dft_with_the_lanes_on(seed, n):
    C.set_dft_simd(True)
    y, Q, err, nfix, zs = power_case(seed, n)
    assert nfix > 0
    d = l2_distance(Q, zs, n)
    assert d <= err
    # the recomputation took effect: the bound is far below the FFT's own (no accurate DFT: work 0)
    N = y.size
    e_fft = 10 * math.log2(N) * 2.0**-53 * math.sqrt(N) * float(np.sqrt(np.sum(y * y)))
    err_fft = C.power(np.fft.rfft(y), float(n), e_fft, N, y, 1e-300, 0.0)[1]
    assert err < err_fft


def test_a_far_tail_call_is_the_same_bit_for_bit(monkeypatch):
    """GaussianRandomizer(0.5), n = 1e8, eps = 0.5: one far-tail run whose power steps recompute their largest
    frequencies by the accurate DFT (docs/accountant_tail.md §58.5): the same bracket with the lanes off and on."""
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

    calls = []
    orig = C.power

    def spy(*a):
        out = orig(*a)
        calls.append(out[3])
        return out

    import sharpdp.shuffle.accountant.fft as fft

    class _K:
        def __getattr__(self, k):
            return spy if k == "power" else getattr(C, k)

    monkeypatch.setattr(fft, "kernels", lambda: _K())
    got = []
    try:
        for on in (False, True):
            C.set_dft_simd(on)
            clear_caches()
            got.append(tuple(float(v).hex() for v in
                             ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**8, "zero_out").get_delta_bounds(0.5)))
    finally:
        C.set_dft_simd(True)
        clear_caches()
    assert sum(calls) > 0  # the accurate DFT ran
    assert got[0] == got[1]
