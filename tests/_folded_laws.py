"""Brute-force lattice laws for the tests of docs/accountant_tail.md §51: an nn-fold convolution power of a pmf and
its fold onto a circular FFT window."""

import numpy as np


def conv_pow(p: np.ndarray, nn: int) -> np.ndarray:
    """The pmf of the sum of nn independent copies of the lattice pmf p (linear convolution, length nn (len(p) - 1) + 1)."""
    out = p.copy()
    for _ in range(nn - 1):
        out = np.convolve(out, p)
    return out


def fold(lin: np.ndarray, lin0: int, sa: int, N: int) -> np.ndarray:
    """Linear pmf on the integers lin0 + i, folded onto the window nodes sa .. sa + N - 1 (mod N)."""
    return np.bincount((lin0 + np.arange(lin.size) - sa) % N, weights=lin, minlength=N)
