"""THE certified FFT convolution of the shuffle accountant (docs/accountant.md §3.5-§3.6).

One implementation of fold -> forward FFT -> power step -> (product over parts) -> inverse FFT,
with the error bound of every step, used by the lattice engine (:mod:`.lattice`), the far-tail
treatment's jump term (:mod:`.far_tail`) and the composition of rounds
(:mod:`sharpdp.shuffle.composition`). The callers choose the window (N, its start) and the
weights they sum over it; this module certifies the circular pmf of the sum on the window.

Error bounds (docs/accountant.md §3.6): the forward FFT of the folded pmf y is within
e_fwd = FFT_C log2(N) u sqrt(N) ||y||_2 (assumption F1, §3.6.2) componentwise; the kernel ``power``
bounds the error of Q = z^n per frequency (§3.6.3-§3.6.4) and returns its l2 norm over the full
(Hermitian) spectrum; a product of several parts' spectra propagates those bounds
(||A B - A~ B~||_2 <= ||A - A~||_2 sup|B| + sup|A~| ||B - B~||_2, sup|Q_j| <= (mass + tau)^n_j + err_j)
plus 4u ||Q||_2 per product; the inverse FFT adds FFT_C log2(N) u ||Q||_2, and Parseval divides by
sqrt(N) (§3.6.5). Folding sums at most ceil(size/N) values per bin: :func:`fold_rounding` is the
charge on the pmf's error sum tau that every caller adds (§3.6.1).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sharpdp.shuffle.accountant.limits import FFT_C, U
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.freq_cut import pruned_spectrum
from sharpdp.shuffle.accountant import cells_rule  # noqa: F401  (registers the cells' rule, §62.2 of accountant_tail.md)


def kernels() -> Any:
    """The compiled kernels of the accountant (``sharpdp._core.accountant``)."""
    from sharpdp._core_loader import core

    return core.accountant


@dataclass(frozen=True)
class Part:
    """One summand family of the convolution: ``count`` independent copies of the lattice pmf
    ``pmf`` (float64, shape (K + 1,)), whose node k sits at circular position (k + shift) mod N.
    ``bound`` >= sup_w |FFT(pmf)(w)| (the pmf's l1 mass plus its error sum) is only needed when
    several parts are multiplied."""

    pmf: np.ndarray
    count: int
    shift: int = 0
    bound: float = 1.0


@dataclass(frozen=True)
class Convolution:
    """The computed circular pmf ``q`` (float64, shape (N,)) of the sum of all parts' copies, and
    ``err_q``, a bound on the l2 distance of ``q`` to the exact circular convolution of the parts'
    stored pmfs (docs/accountant.md §3.6.5)."""

    q: np.ndarray
    err_q: float
    N: int


def fold(pmf: np.ndarray, N: int, shift: int = 0) -> np.ndarray:
    """The pmf folded onto the circle of N points (node k at (k + shift) mod N). Where the pmf has at most N nodes
    each bin receives at most one value and is copied (as 0.0 + value: bincount's float, a -0.0 made +0.0; the same
    doubles, docs/accountant_tail.md §65.2); otherwise the bins' sums by bincount."""
    size = pmf.size
    if size > N:
        idx = np.arange(size) if shift == 0 else np.arange(size) + shift
        return np.bincount(idx % N, weights=pmf, minlength=N)
    out = np.zeros(N)
    st = shift % N
    first = min(size, N - st)
    np.add(pmf[:first], 0.0, out=out[st:st + first])
    if first < size:
        np.add(pmf[first:], 0.0, out=out[:size - first])
    return out


def fold_rounding(size: int, N: int, mass: float) -> float:
    """Bound on the l1 rounding of :func:`fold` for a pmf of ``size`` nodes and computed mass
    ``mass``: each bin sums at most ceil(size/N) values (docs/accountant.md §3.6.1), charged to the
    pmf's error sum tau by every caller."""
    return (math.ceil(size / N) + 2) * U * mass


@functools.lru_cache(maxsize=256)
def next_fast_len_real(target: int) -> int:
    """The smallest 5-smooth integer (2^a 3^b 5^c) >= ``target`` (>= 1): what
    ``scipy.fft.next_fast_len(target, real=True)`` returns (pocketfft's good size for real
    transforms), without importing scipy.fft."""
    m = int(target)
    if m <= 1:
        return 1
    best = 1 << (m - 1).bit_length()
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            q = -(-m // p35)
            best = min(best, (1 << (q - 1).bit_length()) * p35)
            p35 *= 3
        p5 *= 5
    return best


def _rfft_pair() -> tuple[Any, Any]:
    """(rfft, irfft): numpy's, at every length. numpy >= 2 runs the same pocketfft as scipy.fft, with the same results
    bit for bit, and pocketfft parallelises over the axes not transformed only: one 1-D transform runs on one thread
    whatever scipy.fft's ``workers`` (the same floats and about the same CPU time as scipy.fft's with 2 workers, measured
    at N = 2e5 - 1.5e6), so scipy.fft (~18 ms of CPU to import on a process's first call) is not needed
    (docs/accountant_tail.md §33.3; tests/test_big29_numpy_fft.py)."""
    return np.fft.rfft, np.fft.irfft


def _spectrum(p: Part, N: int, rfft: Any, spectra: dict | None, i: int) -> tuple[np.ndarray, Any, float]:
    """(folded pmf, its forward FFT, the FFT's componentwise bound e_fwd) of part ``p`` (index ``i``) on N points;
    taken from / kept in ``spectra`` when given."""
    if spectra is not None and i in spectra:
        return spectra[i]
    folded = fold(p.pmf, N, p.shift)
    z = rfft(folded)
    e_fwd = FFT_C * math.log2(N) * U * math.sqrt(N) * math.sqrt(float(np.sum(folded * folded))) * (1 + 1e-10)
    if spectra is not None:
        spectra[i] = (folded, z, e_fwd)
    return folded, z, e_fwd


def cheap_err_floor(p: Part, N: int, threads: int, spectra: dict) -> float:
    """An estimate from below (not a bound used in any value) of the ``err_q`` that :func:`convolve` of the one part
    ``p`` on N points reports with ``work`` = 0 (no accurate DFT): the power step's mean-value terms
    n e (|z_k| + e)^(n-1) (the kernel ``power``'s expression, docs/accountant.md §3.6.3) re-evaluated in numpy over the
    frequencies where they are not negligible, their l2 norm over the Hermitian spectrum over sqrt(N), times
    (1 - 1e-6) for the re-evaluation's rounding (the kernel's other terms are non-negative and left out). Fills
    ``spectra`` (index 0) with the part's folded pmf and forward FFT exactly as :func:`convolve` computes them (the
    same floats, computed once). A caller uses it only to skip a run whose round-off bound is certain to be rejected
    (a choice of speed, docs/accountant_tail.md §31.1); 0.0 where n <= 1."""
    _, z, e = _spectrum(p, N, _rfft_pair()[0], spectra, 0)
    n = float(p.count)
    if n <= 1 or not e > 0:
        return 0.0
    lne = math.log(n * e)
    az = np.abs(z) * (1 + 4 * U)
    cut = math.exp((-350.0 - lne) / (n - 1.0)) - e  # terms below e^-350 are left out (their squares underflow)
    k = np.flatnonzero(az > cut) if cut > 0 else np.arange(az.size)
    if k.size == 0:
        return 0.0
    lb = np.minimum(lne + (n - 1.0) * np.log(az[k] + e), 350.0)
    wgt = np.where((k == 0) | ((N % 2 == 0) & (k == z.size - 1)), 1.0, 2.0)
    return (1 - 1e-6) * math.sqrt(float(np.sum(wgt * np.exp(2.0 * lb)))) / math.sqrt(N)


def cheap_err_cap(p: Part, N: int, spectra: dict) -> float:
    """An estimate from above of :func:`cheap_err_floor` (the same part, N and ``spectra``, filled as there): every
    term n e (|z_k| + e)^(n-1) it sums has |z_k| <= sum(folded pmf) + e (the pmf is non-negative; e the forward FFT's
    componentwise bound), and its l2 norm over the N frequencies over sqrt(N) is at most the largest term. A caller
    skips the floor where even this cap would not change its decision (speed only, the same floats;
    docs/accountant_tail.md §34.4)."""
    folded, _, e = _spectrum(p, N, _rfft_pair()[0], spectra, 0)
    n = float(p.count)
    if n <= 1 or not e > 0:
        return 0.0
    lb = math.log(n * e) + (n - 1.0) * math.log((float(np.sum(folded)) + e) * (1 + 8 * U) + e)
    return math.exp(min(lb, 350.0)) * (1 + 1e-6)


def convolve(parts: Sequence[Part], N: int, thr: float, work: float, threads: int = 1,
             spectra: dict | None = None) -> Convolution:
    """Certified circular convolution of ``count`` copies of each part's pmf on N points.

    Parameters
    ----------
    parts : sequence of Part
        At least one part; each ``count`` >= 1.
    N : int
        FFT length (>= 16; the callers take :func:`next_fast_len_real`).
    thr : float
        Frequencies whose power-step bound exceeds ``thr`` are recomputed by the accurate DFT
        (docs/accountant.md §3.6.4); any value gives a certified bound.
    work : float
        Multiply-adds allowed for that accurate DFT (0: none).
    threads : int
        Kept for the callers' signature: one 1-D FFT runs on one thread (:func:`_rfft_pair`); the values do not depend
        on it.
    spectra : dict, optional
        Keeps each part's folded pmf, forward FFT and its error bound by the part's index: a later call with the same
        parts and N given the same dict reuses them (the same floats; the caller keeps the parts unchanged).

    Returns
    -------
    Convolution
    """
    return invert(*spectrum(parts, N, thr, work, threads, spectra), N)


def invert(Q: Any, err_Q: float, norm_Q: float, N: int) -> Convolution:
    """The inverse FFT of :func:`spectrum`'s result and its error bound (docs/accountant.md §3.6.5): :func:`convolve`'s
    last step."""
    q = _rfft_pair()[1](Q, N)
    err_q = (err_Q + FFT_C * math.log2(N) * U * norm_Q) / math.sqrt(N)
    return Convolution(q=q, err_q=err_q, N=N)


def _norm_up(norm: float, N: int) -> float:
    """The power kernel's ``norm_Q`` (the square root of a blocked sum of squares, rounded to nearest) rounded up to
    at least the returned spectrum's l2 norm (docs/accountant_tail.md §74: the factor for the roundings, the absolute
    term for squares that underflow, at most 2^-1074 each over at most N of them); as returned where
    ``limits.LEAD47_NORM_Q_UP`` is off."""
    return norm * (1.0 + 1e-10) + math.sqrt(N) * 2.0 ** -537 if limits.LEAD47_NORM_Q_UP else norm


def _half_norm_up(Q: Any, N: int) -> float:
    """An upper bound on the full (Hermitian) l2 norm of the half spectrum ``Q`` (numpy's rfft layout): numpy's norm
    of the half, times sqrt 2 (the full norm's square is at most twice the half's), times 1 + (4 M + 32) u for numpy's
    dot products over the M = 2 len(Q) squares in any summation order (``limits.LEAD49_NORM_DOT``), plus the absolute
    term for squares that underflow (docs/accountant_tail.md §74, Lemma 74.1)."""
    norm = float(np.linalg.norm(Q)) * math.sqrt(2)
    if limits.LEAD49_NORM_DOT:  # M = 2 len(Q) squares, each rounded and each losing <= 2^-1075 where it underflows
        return norm * (1.0 + (8 * Q.size + 32) * U) + math.sqrt(2 * Q.size) * 2.0 ** -537
    return norm + (math.sqrt(N) * 2.0 ** -537 if limits.LEAD47_NORM_Q_UP else 0.0)


def spectrum(parts: Sequence[Part], N: int, thr: float, work: float, threads: int = 1,
             spectra: dict | None = None) -> tuple[Any, float, float]:
    """The half spectrum ``Q`` (numpy's rfft layout, N // 2 + 1 entries) of the circular convolution :func:`convolve`
    inverts, ``err_Q`` >= its l2 distance over the full (Hermitian) spectrum to the exact spectrum of the parts'
    stored pmfs, and ``norm_Q`` >= its full l2 norm (docs/accountant.md §3.6.2-§3.6.4); :func:`convolve`'s steps
    before its inverse FFT, the same floats. With ``limits.BODY46_PRUNED_FORWARD`` one part at N >=
    ``limits.BODY46_PRUNED_MIN_N`` runs without the forward FFT where it can (:func:`~.freq_cut.pruned_spectrum`,
    docs/accountant_tail.md §70.3: other floats, certified the same way; with ``limits.DFT47_TAYLOR_PRUNED`` its
    frequencies from the DFT by blocks of Lemma 72.1, docs/accountant_tail.md §72.3). Used alone by the engine's window sums in the frequency domain
    (docs/accountant_tail.md §65)."""
    if (limits.BODY46_PRUNED_FORWARD and len(parts) == 1 and N >= limits.BODY46_PRUNED_MIN_N and work > 0
            and not (spectra is not None and 0 in spectra)):  # (docs/accountant_tail.md §70.3)
        C = kernels()
        pruned = pruned_spectrum(fold(parts[0].pmf, N, parts[0].shift), parts[0].count, work, limits.BODY46_PRUNED_RATIO,
                                 C.power, C.dft_low if limits.DFT47_TAYLOR_PRUNED else None)
        if pruned is not None:
            return pruned[0], pruned[1], _norm_up(pruned[2], N)
    C = kernels()
    rfft = _rfft_pair()[0]
    Q: Any = None
    err_Q = norm_Q = bound = 0.0
    for i, p in enumerate(parts):
        folded, z, e_fwd = _spectrum(p, N, rfft, spectra, i)
        Qj, errj, normj, _ = C.power(z, float(p.count), e_fwd, N, folded, thr, work)
        if Q is None:
            Q, err_Q, norm_Q, bound = Qj, errj, _norm_up(normj, N), (p.bound ** p.count + errj)
            continue
        bound_j = p.bound ** p.count + errj  # sup |Q_j| and |Q~_j|
        err_Q = err_Q * bound_j + bound * errj
        Q = Q * Qj
        bound *= bound_j
        norm_Q = _half_norm_up(Q, N)
        err_Q += 4 * U * norm_Q
    return Q, err_Q, norm_Q


__all__ = ["Convolution", "Part", "cheap_err_cap", "cheap_err_floor", "convolve", "fold", "fold_rounding", "invert", "kernels",
           "next_fast_len_real", "spectrum"]
