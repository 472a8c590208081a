"""The jump term's window sums, stop-loss grid and TV maxima in the core (docs/accountant_tail.md §80): the core's
``weighted_sums`` gives numpy's np.sum of the products, of their absolute values and of the squares double for double
(numpy's pairwise order), ``stop_loss_fill`` the array form's bracket of ``stop_loss_grid``, ``window_maxima`` numpy's
maxima of ``TvWeights.bound``, and whole brackets are the same floats with and without them."""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import jump, tv_weight
from sharpdp.shuffle.accountant.fft import kernels


def _numpy(w: np.ndarray, q: np.ndarray) -> tuple[float, float, float]:
    with np.errstate(invalid="ignore", over="ignore"):  # (inf * 0 and overflow: the special values' test)
        wq = w * q
        return float(np.sum(wq)), float(np.sum(np.abs(wq))), float(np.sum(w * w))


def _hex(t) -> tuple[str, ...]:
    return tuple(float(v).hex() for v in t)


# lengths around every branch of numpy's pairwise sum (8, 128, the halving's multiples of 8) and window sizes
LENGTHS = [*range(0, 300), 1023, 1024, 1025, 8191, 8192, 8193, 65537, 349_920, 1_769_472]


@pytest.mark.parametrize("n", LENGTHS)
def test_weighted_sums_are_numpys_sums_bit_for_bit(n: int) -> None:
    rng = np.random.default_rng(n)
    # a wide dynamic range and both signs (the window's weights are >= 0, its pmf carries round-off of either sign)
    w = rng.random(n) * np.exp(rng.standard_normal(n) * 8.0)
    q = rng.standard_normal(n) * np.exp(rng.standard_normal(n) * 8.0)
    s, a, ss = kernels().weighted_sums(w, q, True)
    assert _hex((s, a, ss)) == _hex(_numpy(w, q))
    s2, a2, ss2 = kernels().weighted_sums(w, q, False)
    assert _hex((s2, a2)) == _hex((s, a)) and ss2 == 0.0


def test_weighted_sums_special_values() -> None:
    w = np.array([-0.0] * 9 + [0.0] * 3 + [np.inf, 1e-320, 5e-324, 1e308, 1e308])
    q = np.array([1.0] * 12 + [0.0, 1e-10, -1.0, 1.0, 1.0])
    got = kernels().weighted_sums(w, q, True)
    want = _numpy(w, q)
    assert all(g == v or (np.isnan(g) and np.isnan(v)) for g, v in zip(got, want))
    z = np.array([-0.0] * 8)
    assert _hex(kernels().weighted_sums(z, np.ones(8), True)) == _hex(_numpy(z, np.ones(8)))


def test_weighted_sums_strided_input_as_its_copy() -> None:
    rng = np.random.default_rng(7)
    w, q = rng.random(4001)[::3], rng.standard_normal(4001)[::3]
    assert _hex(kernels().weighted_sums(w, q, True)) == _hex(_numpy(np.ascontiguousarray(w), np.ascontiguousarray(q)))


def test_weighted_sums_rejects_unequal_lengths() -> None:
    with pytest.raises(ValueError, match="w and q"):
        kernels().weighted_sums(np.ones(5), np.ones(4), True)
    with pytest.raises(ValueError, match="w and q"):
        kernels().weighted_sums(np.ones((2, 2)), np.ones((2, 2)), False)


class _NoKernel:
    """The core's kernels without ``weighted_sums``, ``stop_loss_fill`` and ``window_maxima`` (numpy's arrays in
    jump.py and tv_weight.py: the reference)."""

    def __init__(self, k) -> None:
        self._k = k

    def __getattr__(self, name):
        if name in ("weighted_sums", "stop_loss_fill", "window_maxima"):
            raise AttributeError(name)
        return getattr(self._k, name)


def _laws():
    from sharpdp.shuffle.accountant import laws_for

    for rnd, eps in ((GaussianRandomizer(1.0, 1), 0.001), (GaussianRandomizer(0.5, 1), 0.5),
                     (BlanketMixedGaussian(0.05172706216084602, 0.5654166131186402, 1), 8.0)):
        for _, law in laws_for(rnd, eps, "zero_out"):
            yield law


@pytest.mark.parametrize(("t0", "dt", "k"), [
    (98560.0, 0.546875, 1_600_000), (98560.0, 2.1875, 3001), (4.59375, 0.21875, 345_000), (2048.0, 0.25, 20_000),
    (1.0, 1.0, 100), (1e6, 0.5, 12_345), (2.0**20, 1.0, 2**16 + 1), (700.0, 0.109375, 400_000),
])
@pytest.mark.parametrize("fn", ["stop_loss_grid", "stop_loss_octaves"])
def test_stop_loss_grid_is_the_array_forms(monkeypatch, t0: float, dt: float, k: int, fn: str) -> None:
    k_ = kernels()
    calls = []

    class _Counted:
        def __getattr__(self, name):
            if name == "stop_loss_fill":
                calls.append(1)
            return getattr(k_, name)

    for law in _laws():
        with monkeypatch.context() as m:
            m.setattr(jump, "kernels", _Counted)
            got = getattr(jump, fn)(law, t0, dt, k)
        with monkeypatch.context() as m:
            m.setattr(jump, "kernels", lambda: _NoKernel(k_))
            ref = getattr(jump, fn)(law, t0, dt, k)
        for g, r in zip(got, ref):
            assert g.shape == r.shape == (k,)
            assert g.tobytes() == r.tobytes()
        # (a certified bracket: lower <= upper everywhere)
        assert np.all(got[0] <= got[1])
    # the core's loop ran wherever the grid interpolates (one grid: s = min(64, t0 / (1024 dt)) >= 2 and k > 2 s;
    # octaves: every piece from 2048 dt on)
    s = int(min(64.0, t0 / (1024.0 * dt)))
    if fn == "stop_loss_grid":
        assert bool(calls) == (s >= 2 and k > 2 * s)
    elif k >= 345_000:
        assert calls


def test_stop_loss_fill_rejects_bad_nodes() -> None:
    one = np.ones(3)
    with pytest.raises(ValueError, match="idx"):
        kernels().stop_loss_fill(0.0, 1.0, np.array([0, 2, 1]), one, one, one, one)
    with pytest.raises(ValueError, match="idx"):
        kernels().stop_loss_fill(0.0, 1.0, np.array([1, 2, 3]), one, one, one, one)
    with pytest.raises(ValueError, match="equal length"):
        kernels().stop_loss_fill(0.0, 1.0, np.array([0, 2]), one, one, one, one)


@pytest.mark.parametrize(("rnd", "n", "eps"), [
    (GaussianRandomizer(1.0, 1), 10**8, 0.001),
    (GaussianRandomizer(0.5, 1), 10**6, 0.5),
    (BlanketMixedGaussian(0.05172706216084602, 0.5654166131186402, 1), 100, 8.0),
    (GaussianRandomizer(2.0, 1), 10**5, 0.01),
])
def test_brackets_are_the_numpy_sums_brackets(monkeypatch, rnd, n: int, eps: float) -> None:
    k = kernels()
    used = set()

    class _Counted:
        def __getattr__(self, name):
            used.add(name)
            return getattr(k, name)

    monkeypatch.setattr(jump, "kernels", _Counted)
    monkeypatch.setattr(tv_weight, "kernels", _Counted)
    got = ShuffleAccountant(rnd, n).get_delta_bounds(eps)
    assert {"weighted_sums", "stop_loss_fill"} <= used  # (the cell runs the jump term's window on the core's loops)
    monkeypatch.setattr(jump, "kernels", lambda: _NoKernel(k))
    monkeypatch.setattr(tv_weight, "kernels", lambda: _NoKernel(k))
    ref = ShuffleAccountant(rnd, n).get_delta_bounds(eps)
    assert _hex(got) == _hex(ref)
    assert got[0] > 0.0 and got[1] >= got[0]


@pytest.mark.parametrize("n", [1, 2, 7, 100, 4097, 1_769_472])
def test_window_maxima_are_numpys(n: int) -> None:
    rng = np.random.default_rng(n + 11)
    x = np.sort(rng.standard_normal(n)) * 1e4
    w = np.abs(rng.standard_normal(n)) * np.exp(rng.standard_normal(n) * 6.0)
    for i0 in sorted({0, n // 3, n - 1, n}):
        for s0, c in ((0.0, 0.37), (-123.5, 3e-13), (1e4, 0.0)):
            got = kernels().window_maxima(w, x, i0, s0, c)
            r = (x[i0:] - s0) * c
            want = (np.max(w), np.min(w), np.max(w[:i0]) if i0 > 0 else -np.inf,
                    np.max(w[i0:] - r) if i0 < n else -np.inf)
            assert _hex(got) == _hex(want)
    w[n // 2] = np.nan
    got = kernels().window_maxima(w, x, n // 2 + 1, 0.0, 1.0)
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isnan(got[2])
    with pytest.raises(ValueError, match="i0"):
        kernels().window_maxima(w, x, n + 1, 0.0, 1.0)
    with pytest.raises(ValueError, match="w and x"):
        kernels().window_maxima(w, x[:-1], 0, 0.0, 1.0)
