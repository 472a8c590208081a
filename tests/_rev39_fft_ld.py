"""rev39's long-double version of tests/_rev29_fft_reference.d_up_fft (not collected by pytest): the same grid, cell
split and circular window, the transform and the n-th power in 80-bit long double (scipy.fft's pocketfft on
np.longdouble, numpy's complex256 log1p / exp), the law's cell masses in double (their relative errors only perturb
the law). At n gamma ~ 3e8 (GaussianRandomizer(1), n = 1e9) the double transform's round-off is ~1e-6 of the spread of
the sum while D_up is 1e-9: the double FFT drifts with h (6.7e-10, 9.0e-10, 1.25e-9 at h = 0.5, 0.25, 0.125), the
long-double one converges at second order (9.898e-10, 9.816e-10, 9.794e-10). Node values x > 0 only (``neg=False``);
the caller adds E[L; L > W] for the law's mass dropped beyond the window's top W = N h + lo (first order)."""

from __future__ import annotations

import math

import numpy as np
import scipy.fft as sf

from _rev29_fft_reference import _law_on_grid


def sum_pmf_ld(law, low: float, gamma: float, n: int, step: float, lo: float, size: int):
    """(node values, pmf) of the thinned n-user sum on the circular grid of ``size`` nodes at ``step`` (node i at
    i step below size + lo / step, else (i - size) step), in long double; arguments as ``d_up_fft``."""
    k1 = math.floor(low / step) - 1
    q = _law_on_grid(law, k1 * step, step, size + k1)
    c = np.zeros(size, dtype=np.longdouble)
    c[:size + k1] = q
    c = np.roll(c, k1)
    f = sf.rfft(c)
    del c
    f -= 1
    f *= np.longdouble(gamma)
    f = np.log1p(f)
    f *= np.longdouble(n)
    f = np.exp(f)
    pk = sf.irfft(f, size)
    del f
    i = np.arange(size)
    return np.where(i < size + lo / step, i, i - size).astype(np.longdouble) * np.longdouble(step), pk


def d_up_fft_ld(law, low: float, gamma: float, n: int, h: float, lo: float, N: int) -> tuple[float, float]:
    """(estimate at step h, estimate at step 2h) of D_up = E[S_+] / (n gamma); arguments as ``d_up_fft``."""
    out = []
    for step, size in ((h, N), (2 * h, N // 2)):
        xs, pk = sum_pmf_ld(law, low, gamma, n, step, lo, size)
        m = xs > 0
        out.append(float(np.sum(xs[m] * pk[m])) / (n * gamma))
    return out[0], out[1]
