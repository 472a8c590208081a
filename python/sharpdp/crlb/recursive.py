"""Streaming privacy-preserving Fisher information, CRLB and private RLS (Algorithms 1-3).

Source: the paper "Privacy-Preserving Cramer-Rao Lower Bound", Section 3.3 (Algorithm 1, Theorem 22, Remark 23;
Algorithm 2, Corollary 24) and Section 3.4 (Algorithm 3, Theorem 25). The loops
run in the C++ core (``sharpdp._core.crlb``, Eigen); these thin classes validate
inputs and hide the core object.

The cumulative privacy level follows recursion (16)::

    Sbar_k = [[Sbar_{k-1} + U_k S_k^+ U_k^T, U_k], [U_k^T, S_k]]

with ``U_k`` of shape ``(M_{k-1}, m_k)`` (``M_{k-1}`` = rows measured so far).
It is a valid privacy level only if ``U_k = U_k S_k^+ S_k`` (shown inside the
proof of Theorem 25); this is checked and violations raise ``ValueError``.
Cost per step: ``O(k^2)`` for general ``U_k``, independent of ``k`` while every
``U_k`` is zero (Remark 23). Noise covariances must be non-singular (Algorithm
1's initialisation ``S_Delta,1 = (S_1 + Sigma_w,1^{-1})^{-1}`` needs it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import as_generator
from sharpdp.crlb import _checks as C
from sharpdp.crlb import _release as G

__all__ = ["RecursivePPFisher", "RecursivePPCRLB", "PrivateRLS"]


def _square(name: str, value: Any, m: int, check) -> np.ndarray:
    if np.ndim(value) == 0:  # a scalar is a 1 x 1 matrix
        value = [[value]]
    return check(name, value, m)


def _step_args(n: int, rows: int, H_k: Any, Sigma_w_k: Any, S_k: Any, U_k: Any):
    H = V.real_array("H_k", H_k)
    if H.ndim == 1:
        H = H[None, :]
    if H.ndim != 2 or H.shape[1] != n:
        raise ValueError(f"H_k must have shape (m, {n}) (or ({n},) for one row), got {H.shape}")
    m = H.shape[0]
    Sw = _square("Sigma_w_k", Sigma_w_k, m, C.pd)
    S = _square("S_k", S_k, m, C.psd)
    if U_k is not None:
        U = np.asarray(U_k, dtype=float)
        if U.ndim == 1 and m == 1:
            U = U[:, None]
        U = C.cross_term("U_k", U, rows, S)
    else:
        U = None
    return H, Sw, S, (np.zeros((0, m)) if U is None else U)


class RecursivePPFisher:
    """Recursive privacy-preserving Fisher information ``PI_k`` (Algorithm 1).

    ``PI_k = Hbar_k^T Sbar_k^{1/2} (Sbar_k^{1/2} Sigmabar_w,k Sbar_k^{1/2} + I)^{-1} Sbar_k^{1/2} Hbar_k``
    for the stacked system (14)-(15) with privacy level ``Sbar_k`` from (16)
    (Definition 21, Theorem 22), updated in place one measurement block at a time.

    Parameters
    ----------
    n : int, optional
        Dimension of ``theta`` (>= 1); taken from the first ``H_k`` if omitted.
    rcond : float, optional
        See :class:`RecursivePPCRLB`.

    Notes
    -----
    The initialisation of Algorithm 1 is the general step with an empty history
    (``B_1 = I - Lambda_1 Sigma_w,1``, ``S_Delta,1 = Sigma_w,1 - Sigma_w,1 Lambda_1 Sigma_w,1``,
    algebraically the paper's expressions by the push-through identity).
    """

    _track = False

    def __init__(self, n: int | None = None, *, rcond: float = 1e-10) -> None:
        self._rcond = V.real("rcond", rcond, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self._n = None if n is None else V.integer("n", n, lo=1)
        self._core = None if n is None else self._make_core()

    def _make_core(self) -> Any:
        from sharpdp._core_loader import core

        return core.crlb.PPState(self._n, self._track, self._rcond)

    def _ensure(self, H_k: Any) -> None:
        if self._core is None:  # n taken from the first measurement matrix
            shape = np.shape(H_k)
            if len(shape) not in (1, 2) or shape[-1] < 1:
                raise ValueError(f"H_k must have shape (m, n) or (n,), got {shape}")
            self._n = int(shape[-1])
            self._core = self._make_core()

    @property
    def n(self) -> int | None:
        """Dimension of theta (``None`` until known)."""
        return self._n

    @property
    def k(self) -> int:
        """Number of measurement blocks processed."""
        return 0 if self._core is None else int(self._core.k)

    @property
    def rows(self) -> int:
        """Total number of measured rows ``M_k`` (the row count ``U_{k+1}`` must have)."""
        return 0 if self._core is None else int(self._core.M)

    @property
    def fisher(self) -> np.ndarray | None:
        """``PI_k``, shape (n, n) (zeros before the first update; ``None`` if n is not known yet)."""
        return None if self._core is None else np.array(self._core.fisher())

    def update(self, H_k: Any, Sigma_w_k: Any, S_k: Any, U_k: Any = None) -> np.ndarray:
        """Process measurement block k.

        Parameters
        ----------
        H_k : array_like, shape (m, n) or (n,)
            Measurement matrix of block k (1-D means one row).
        Sigma_w_k : array_like, shape (m, m) or scalar
            Noise covariance of ``w_k``, symmetric positive definite.
        S_k : array_like, shape (m, m) or scalar
            Privacy level of ``y_k``, symmetric PSD (may be singular).
        U_k : array_like, shape (rows, m), optional
            Cross privacy term of (16); ``None`` (or all zeros) means ``U_k = 0``.
            Must satisfy ``U_k = U_k S_k^+ S_k``.

        Returns
        -------
        ndarray, shape (n, n)
            ``PI_k``.

        Raises
        ------
        ValueError
            Shape mismatch, NaN/inf, non-symmetric/indefinite ``S_k``,
            ``Sigma_w_k`` not positive definite, ``U_k`` violating the range condition.
        """
        self._ensure(H_k)
        H, Sw, S, U = _step_args(self._n, self.rows, H_k, Sigma_w_k, S_k, U_k)
        self._core.update(H, Sw, S, U)
        return self._result()

    def update_many(self, H: Any, Sigma_w: Any, S: Any) -> np.ndarray:
        """Process ``K`` blocks with ``U_k = 0`` in one call (the O(1)-per-step path of Remark 23).

        Parameters
        ----------
        H : array_like, shape (K, m, n) or (K, n)
        Sigma_w, S : array_like, shape (K, m, m) or (K,) for m = 1
            Per-step noise covariances (positive definite) and privacy levels (PSD).

        Returns
        -------
        ndarray, shape (n, n)
            The matrix returned by :meth:`update` after the last block.
        """
        Hb = V.real_array("H", H)
        if Hb.ndim == 2:
            Hb = Hb[:, None, :]
        self._ensure(Hb[0])
        if Hb.ndim != 3 or Hb.shape[2] != self._n:
            raise ValueError(f"H must have shape (K, m, {self._n}), got {Hb.shape}")
        K, m = Hb.shape[:2]
        out = []
        for name, val, strict in (("Sigma_w", Sigma_w, True), ("S", S, False)):
            a = V.real_array(name, val)
            if a.ndim == 1 and m == 1:
                a = a[:, None, None]
            if a.shape != (K, m, m):
                raise ValueError(f"{name} must have shape ({K}, {m}, {m}), got {a.shape}")
            if m > 1 and np.max(np.abs(a - np.swapaxes(a, 1, 2))) > C.SYM_RTOL * max(float(np.max(np.abs(a))), 1e-300):
                raise ValueError(f"{name} must be symmetric")
            if m == 1:
                bad = a[:, 0, 0] <= 0 if strict else a[:, 0, 0] < 0
            else:
                a = 0.5 * (a + np.swapaxes(a, 1, 2))
                ev = np.linalg.eigvalsh(a)
                top = np.maximum(np.abs(ev[:, -1]), 1e-300)
                bad = ev[:, 0] <= 1e-12 * top if strict else ev[:, 0] < -C.SYM_RTOL * top
            if np.any(bad):
                kind = "positive definite" if strict else "positive semidefinite"
                raise ValueError(f"{name}[{int(np.argmax(bad))}] must be {kind}")
            out.append(np.ascontiguousarray(a))
        self._core.update_zero_u_batch(np.ascontiguousarray(Hb), out[0], out[1])
        return self._result()

    def _result(self) -> Any:
        return self.fisher


class RecursivePPCRLB(RecursivePPFisher):
    """Recursive privacy-preserving CRLB ``Sigma_PPCR,k = PI_k^{-1}`` (Algorithms 1 + 2).

    Algorithm 2 starts at ``k0``, the first step at which ``PI_k`` is invertible
    (numerically: smallest/largest eigenvalue ``> rcond``); before that the bound
    is infinite and :attr:`covariance` is ``None``.

    Parameters
    ----------
    n : int, optional
        Dimension of theta; taken from the first ``H_k`` if omitted.
    rcond : float, optional
        Reciprocal-condition threshold deciding when ``PI_k`` counts as invertible
        (default 1e-10).
    """

    _track = True

    @property
    def k0(self) -> int | None:
        """First step with invertible ``PI_k`` (1-based), or ``None`` if not reached yet."""
        k0 = -1 if self._core is None else int(self._core.k0)
        return None if k0 < 0 else k0

    @property
    def covariance(self) -> np.ndarray | None:
        """``Sigma_PPCR,k``, shape (n, n), or ``None`` for ``k < k0``."""
        c = None if self._core is None else self._core.covariance()
        return None if c is None else np.array(c)

    def _result(self) -> Any:
        return self.covariance


class PrivateRLS(RecursivePPCRLB):
    """Privacy-preserving RLS with the sequential Gaussian mechanism (Algorithm 3).

    Step k releases ``z_k = U_k^T Ybar_{k-1} + S_k y_k + d_k`` with fresh
    ``d_k ~ N(0, S_k)`` (Phase 1), so that ``I_{Zbar_k}(Ybar_k) = Sbar_k`` of (16)
    (Theorem 25), and updates the estimate from the released outputs only (Phase 2).

    The release is floating-point safe (docs/sampling.md §9): with ``S_k = L L^T`` (rank r),
    ``z_k = L xi'``, ``xi'`` the whitened statistic ``L^+ (U_k^T Ybar_{k-1} + S_k y_k)``
    stochastically rounded onto ``h Z^r`` (h = 2^-grid_bits) plus rounded-Gaussian noise ``h D``;
    the estimate is computed from the released ``z_k`` exactly as given. The exact grid mechanism's
    Fisher information is at most ``fisher_factor`` (:func:`sharpdp.crlb.grid_release`, 1 + 3e-8 by
    default) times ``Sbar_k``, its noise covariance at most ``(1 + h^2 / 3) S_k``; the covariance
    and bound reported by this class are those of the continuous mechanism (Theorem 25).
    From ``k0`` on the estimate is unbiased with MSE matrix ``Sigma_PPCR,k`` under
    Gaussian measurement noise with covariances ``Sigma_w,k`` (Theorem 25). The
    algorithm's branch "k = k0 then" is read as "if k = k0 then ... else if k > k0";
    there is no estimate for ``k < k0``.

    Parameters
    ----------
    n : int, optional
        Dimension of theta; taken from the first ``H_k`` if omitted.
    rng : numpy.random.Generator, int, SeedSequence or None
        Source of the privacy noise; ``None`` (default) keys ChaCha20 with fresh OS entropy at every
        step. A seed is reproducible and **not private unless secret**.
    rcond : float, optional
        See :class:`RecursivePPCRLB`.
    threads : int, optional
        Worker threads of the sampler (default all cores); the output does not depend on it.
    grid_bits : int, optional
        k in [0, 14], grid step 2^-k in whitened units (default 12).
    """

    def __init__(
        self,
        n: int | None = None,
        rng: Any = None,
        *,
        rcond: float = 1e-10,
        threads: int | None = None,
        grid_bits: int | None = None,
    ) -> None:
        super().__init__(n, rcond=rcond)
        self._rng = None if rng is None else as_generator(rng)
        self._grid_bits = G.check_grid_bits(grid_bits)
        from sharpdp._rng import core_threads

        core_threads(threads)  # validated now, not at the first update
        self._threads = threads
        self._ybar: list[np.ndarray] = []  # the measurements so far (the core is given zeros, see update)

    @property
    def estimate(self) -> np.ndarray | None:
        """``theta_hat_k``, shape (n,), or ``None`` for ``k < k0``."""
        e = None if self._core is None else self._core.estimate()
        return None if e is None else np.array(e)

    def update(self, y_k: Any, H_k: Any, Sigma_w_k: Any, S_k: Any, U_k: Any = None) -> np.ndarray:  # type: ignore[override]
        """Release ``z_k`` for the sensitive measurement ``y_k`` and update the estimate.

        Parameters
        ----------
        y_k : array_like, shape (m,) or scalar
            Sensitive measurement of block k.
        H_k, Sigma_w_k, S_k, U_k
            As in :meth:`RecursivePPFisher.update`.

        Returns
        -------
        ndarray, shape (m,)
            The released output ``z_k`` (the only thing that leaves the data owner).
        """
        self._ensure(H_k)
        H, Sw, S, U = _step_args(self._n, self.rows, H_k, Sigma_w_k, S_k, U_k)
        y = np.atleast_1d(V.real_array("y_k", y_k, allow_empty=True))  # rejects complex, text, NaN, inf
        m = H.shape[0]
        if y.ndim != 1:  # (real_array's shape messages, without validating y a second time)
            raise ValueError(f"y_k must be 1-dimensional, got shape {y.shape}")
        if y.shape != (m,):
            raise ValueError(f"y_k must have shape ({m}), got {y.shape}")
        # Phase 1 (released): theta = U_k^T Ybar_{k-1} + S_k y_k, whitened and released on the grid.
        L = G.whitener("S_k", S)
        w = y @ L
        if U.size:
            w = w + np.linalg.lstsq(L, U.T @ np.concatenate(self._ybar), rcond=None)[0]
        z = G.release_gaussian(w, L, grid_bits=self._grid_bits, rng=self._rng, threads=self._threads)
        # Phase 2 in the core, from z exactly: it computes z_k = S_k y + d + U_k^T Ybar with y = 0 and a
        # history of zeros (its only use of y), d = z, which is z bit for bit (adding zeros is exact).
        zero = np.zeros(m)
        out = np.array(self._core.rls_update(zero, H, Sw, S, U, z))
        if not np.array_equal(out, z):  # pragma: no cover - guards the exactness argument above
            raise AssertionError("PrivateRLS: the core did not use the released z_k")
        self._ybar.append(y)
        return z

    def update_many(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError("PrivateRLS processes measurements one at a time; use update()")
