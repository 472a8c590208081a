from _main_floats34 import session43_floats
"""numpy.fft at every FFT length of the accountant (docs/accountant_tail.md §33.3).

fft._rfft_pair now takes numpy's rfft / irfft at every length, also from 2^16 points, where scipy.fft with the
accountant's threads was used before. The values must not move: numpy >= 2 runs the same pocketfft, and pocketfft runs
one 1-D transform on one thread whatever ``workers``. Checked here on 5-smooth lengths above 2^16 (the lengths
next_fast_len_real gives; tests/test_review_rev_decide6.py covers those below) against scipy.fft with 2 workers, on
data of wide dynamic range, bit for bit, and on an accountant value against its pinned float."""

import numpy as np
import pytest
import scipy.fft as sfft

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import fft
from _main_floats34 import switch  # noqa: E402


def _lengths() -> list[int]:
    sizes = sorted({2**a * 3**b * 5**c for a in range(23) for b in range(14) for c in range(10)
                    if (1 << 16) < 2**a * 3**b * 5**c <= 1 << 22})
    rng = np.random.default_rng(29)
    pick = rng.choice(len(sizes), 24, replace=False)
    return sorted({sizes[i] for i in pick} | {sizes[0], sizes[-1], 291_600, 1_474_560})


@pytest.mark.parametrize("N", _lengths())
def test_numpy_fft_equals_scipy_with_workers_above_2_16(N: int) -> None:
    rng = np.random.default_rng(N)
    x = np.exp(-700.0 * rng.random(N)) if N % 2 else rng.random(N)
    rfft, irfft = fft._rfft_pair()
    z = rfft(x)
    assert np.array_equal(z, sfft.rfft(x, workers=2))
    q = z * z * z
    assert np.array_equal(irfft(q, N), sfft.irfft(q, n=N, workers=2))


def test_jump_window_length_is_next_fast_len() -> None:
    """The jump term's window length (next_fast_len_real, no scipy.fft import) is scipy's on the lengths it asks."""
    for t in (65_537, 291_599, 364_501, 1_458_001, 4_000_000):
        assert fft.next_fast_len_real(t) == sfft.next_fast_len(t, real=True)


def test_an_accountant_value_with_large_ffts_unchanged(monkeypatch) -> None:
    """GaussianRandomizer(0.5), n = 1e6, eps = 0.1 (jump-term FFTs of 291,600 points, a body pass of 364,500): the
    regime map's floats of main f2cee38 (/tmp/map28f), bit for bit."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, lead: pins main's floats; §45's values: test_big35_hat_lower.py
    lo, up = ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**6, "zero_out").get_delta_bounds(0.1)
    assert (float(lo), float(up)) == (0.10322597301268595, 0.10337018073009843)
