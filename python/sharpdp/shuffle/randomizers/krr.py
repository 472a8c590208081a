"""k-ary randomized response.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Proposition 3.8 and Appendix A.5.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import core_key, core_threads
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.randomizers._table import TableRandomizer

__all__ = ["RandomizedResponse"]


def _categories(name: str, value, k: int | None) -> np.ndarray:
    """A non-empty 1-D int64 array of categories (integers, in [0, k) when k is given).

    Integer-valued floats are accepted; booleans, complex numbers, text, NaN and non-integers
    are not (TypeError / ValueError naming ``name``).
    """
    arr = np.asarray(value)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of integer categories, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (categories), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite (found NaN or inf)")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integer categories, found a non-integer value")
    if arr.min() < 0 or (k is not None and arr.max() >= k):
        raise ValueError(f"{name} must hold categories in [0, {k if k is not None else 'k'}), "
                         f"found {arr.min() if arr.min() < 0 else arr.max()}")
    if arr.dtype.kind == "u" and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} must hold categories below 2**63")
    return np.ascontiguousarray(arr, dtype=np.int64)


class RandomizedResponse(TableRandomizer):
    """k-ary randomized response (binary for k = 2).

    Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Proposition 3.8 and Appendix A.5.

    Input a category x in {0, ..., k-1}; output x with probability e^eps0 / Z and each other
    category with probability 1 / Z, Z = e^eps0 + k - 1. This is eps0-LDP. Blanket: the pointwise
    infimum over inputs, mass gamma = k / Z, with uniform blanket distribution R_BG = 1/k
    (for k = 2 this is gamma = 1 - t of RR(p) in Proposition 3.8, with t = 2p - 1, p = e^eps0 / (1 + e^eps0)).

    For k = 2 the categories 0, 1 encode the inputs -1, +1 of RR(p) (Proposition 3.8).

    Parameters
    ----------
    k : int
        Number of categories, k >= 2.
    epsilon0 : float
        Local privacy parameter in nats, 0 < eps0 <= 300.

    Raises
    ------
    ValueError
        If k < 2, eps0 <= 0 or > 300, or any argument is NaN.
    """

    def __init__(self, k: int, epsilon0: float) -> None:
        self.k = V.integer("k", k, lo=2)
        self.epsilon0 = V.real("epsilon0", epsilon0, lo=0.0, hi=300.0, lo_open=True)
        self.dim = 1
        ez = math.exp(self.epsilon0)
        self._em1 = math.expm1(self.epsilon0)
        self._Z = ez + self.k - 1
        self.p_keep = ez / self._Z
        self.p_other = 1.0 / self._Z
        self.gamma = self.k / self._Z

    def _params(self) -> dict:
        return {"k": self.k, "epsilon0": self.epsilon0}

    @property
    def blanket_probs(self) -> np.ndarray:
        """Blanket distribution R_BG: uniform, float64 of shape (k,) (the mass is :attr:`gamma`)."""
        return np.full(self.k, 1.0 / self.k)

    # -------------------------------------------------------------- table & indices
    def _table(self):
        k = self.k
        reps = 2 if k == 2 else 3
        # classes: the representative symbols 0..reps-1, then the k - reps others (if any)
        w = np.array([1.0] * reps + [float(k - reps)])
        R = np.full((reps + 1, reps + 1), self.p_other)
        np.fill_diagonal(R[:reps, :reps], self.p_keep)
        R[reps] = 1.0 / k  # blanket row (⊥)
        bg = R[reps].copy()
        pairs = {"zero_out": [(0, reps), (reps, 0)], "replace": [(0, 1)]}
        return R, w, bg, pairs

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, zero-out: chi_lo^2 = k Z / ((k - 1)(e^eps0 - 1)^2).

        Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition 2.5 (Section 2.4).
        For k = 2 this is chi_lo^2 = (1 - t)/t^2 of its Proposition 3.8 (t = 2p - 1).
        """
        return self.chi_lo_for("zero_out")

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5 (Section 2.4)), worst case over inputs and references::

            chi_up^2 = k^2 Z / ((e^eps0 - 1)^2 ((k - 1)^2 + k - 2 + e^-eps0)).

        For k = 2: chi_up^2 = 4 e^eps0 / (e^eps0 - 1)^2 = Err_1, so the HCR bound is attained.
        """
        return self.chi_up_for("zero_out")

    def chi_lo_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_lo for the given adjacency; see :meth:`shuffle_indices`."""
        return self.shuffle_indices(adjacency)[0]

    def chi_up_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_up for the given adjacency; see :meth:`shuffle_indices`."""
        return self.shuffle_indices(adjacency)[1]

    def shuffle_indices(self, adjacency: str = DEFAULT_ADJACENCY) -> tuple[float, float]:
        """(chi_lo, chi_up) for the given adjacency (closed forms; both orders of the pair).

        zero_out: see :attr:`chi_lo`, :attr:`chi_up`.
        replace (`docs/papers.md` §1.2 item 9; `docs/accountant.md` §11):
        chi_lo^2 = Z / (2 (e^eps0 - 1)^2); chi_up^2 = chi_lo^2 for k >= 3 (a third symbol is a
        reference input) and e^eps0 / (e^eps0 - 1)^2 for k = 2.
        """
        check_adjacency(adjacency)
        k, Z, em1 = self.k, self._Z, self._em1
        if adjacency == "zero_out":
            lo2 = k * Z / ((k - 1) * em1**2)
            up2 = k * k * Z / (em1**2 * ((k - 1) ** 2 + k - 2 + math.exp(-self.epsilon0)))
        else:
            lo2 = Z / (2 * em1**2)
            up2 = lo2 if k >= 3 else math.exp(self.epsilon0) / em1**2
        return math.sqrt(lo2), math.sqrt(up2)

    @property
    def local_epsilon(self) -> float:
        """Pure-LDP level eps0 in nats (replace-one)."""
        return self.epsilon0

    @property
    def mse_single(self) -> float:
        """Worst-case single-user squared error Err_1 of the unbiased estimator.

        k = 2 (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Proposition 3.8, inputs +-1,
        estimator Y/t): Err_1 = 1/t^2 - 1
        = 4 e^eps0 / (e^eps0 - 1)^2 = chi_lo^2 (1 + 1/chi_lo + O(chi_lo^-2)).
        k >= 3 (one-hot frequency estimator, squared error summed over the k coordinates):
        Err_1 = ((Z - 1)^2 + k - 1) / (e^eps0 - 1)^2 - 1, the same for every input.
        """
        k, Z, em1 = self.k, self._Z, self._em1
        if k == 2:
            return 4 * math.exp(self.epsilon0) / em1**2
        return ((Z - 1) ** 2 + k - 1) / em1**2 - 1.0

    # -------------------------------------------------------------- sampling & estimation
    def sample(self, x, rng=None, *, threads: int | None = None) -> np.ndarray:
        """Randomize categories ``x`` (int array of shape (n,), values in [0, k)) in C++.

        Parameters
        ----------
        x : array_like of int, shape (n,)
            Categories in [0, k), n >= 1 (integral floats are accepted).
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the 64-bit seed (None: fresh OS entropy).
        threads : int or None, keyword-only
            Worker threads >= 1 (None: all cores); the output does not depend on it.

        Returns
        -------
        numpy.ndarray of int64, shape (n,)

        Raises
        ------
        ValueError
            ``x`` empty, not 1-D, not integral or outside [0, k); ``threads`` < 1.
        TypeError
            ``rng`` or ``threads`` of the wrong type.
        """
        arr = _categories("x", x, self.k)
        nthreads = core_threads(threads)
        from sharpdp._core_loader import core

        return core.samplers.krr_sample(np.ascontiguousarray(arr, dtype=np.int64), self.k, self.p_keep,
                                        core_key(rng), nthreads)

    def estimate(self, messages) -> np.ndarray:
        """Unbiased estimate of the category frequencies, float64 shape (k,).

        f_hat_j = (count_j / n - 1/Z) * Z / (e^eps0 - 1); sums to 1, entries may be negative.
        """
        m = _categories("messages", messages, self.k)
        counts = np.bincount(m, minlength=self.k)
        return (counts / m.size - self.p_other) * (self._Z / self._em1)

    def estimate_mean(self, messages) -> float:
        """k = 2 only: unbiased estimate of the mean of the +-1 inputs (category 1 = +1), f_hat_1 - f_hat_0."""
        f = self.estimate(messages)  # validates messages first (errors name it)
        if self.k != 2:
            raise ValueError("estimate_mean needs k = 2 (binary randomized response)")
        return float(f[1] - f[0])
