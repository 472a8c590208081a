"""The experiments of Section 5 of "Privacy-Preserving Cramer-Rao Lower Bound", scaled to run in seconds.

Each function returns a dict of plain numpy arrays (the curves) and scalars;
plotting and CSV output live in the command-line layer (``sharpdp crlb``).

- :func:`mechanism_comparison` -- Section 5.1: MSE of several mechanisms that all
  satisfy ``I_z(y) <= s I`` against the privacy-preserving CRLB.
- :func:`recursive_identification` -- Section 5.2: Algorithm 3 on real data
  (scikit-learn's diabetes table), bound vs empirical MSE, and the Fig. 3
  comparison with ``Sbar_k = I``.
- :func:`laplacian_measurements` -- Section 5.3: the ML-based estimator (21)
  under Laplace measurement noise vs direct averaging.

MSE here is the trace of the MSE matrix, ``E ||theta_hat - theta||^2``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import log_ndtr, ndtr

from sharpdp import _validation as V
from sharpdp._rng import as_generator
from sharpdp.crlb.bounds import classical_crlb, ppcrlb
from sharpdp.crlb.estimators import efficient_estimator, gaussian_mechanism, ml_private_estimator
from sharpdp.crlb.recursive import PrivateRLS, RecursivePPCRLB

# Section 5.1's mechanisms and ML estimators live in _crlb_mechanisms (split by concern); re-exported here
from sharpdp.apps._crlb_mechanisms import (  # noqa: F401
    GH_LOGW as _GH_LOGW, GH_W as _GH_W, GH_X as _GH_X, log_gauss_laplace as _log_gauss_laplace,
    log_voigt as _log_voigt, ml_additive as _ml_additive, ml_bhhh as _ml_bhhh,
    mult_info_constant as _mult_info_constant, mult_loglik as _mult_loglik, MULT_TAU,
    multiplicative_mechanism as _multiplicative_mechanism, probabilistic_quantiser as _probabilistic_quantiser,
    quant_info_constant as _quant_info_constant, QUANT_RATIO, sample_raised_cosine as _sample_raised_cosine,
    score as _score)

__all__ = ["mechanism_comparison", "recursive_identification", "laplacian_measurements", "load_triglyceride_data"]

THETA_5_1 = np.array([0.63, 0.81, -0.75, 0.83, 0.26])


# ----------------------------------------------------------------- Section 5.1


MECHANISMS_5_1 = ("gaussian", "laplace_data", "laplace_output", "cauchy_data", "trigonometric_output",
                  "multiplicative_data", "quantization_output")


def _bar(desc: str, progress: bool | None, total: int, unit: str) -> Any:
    """A progress bar on stderr advanced by hand (``update(1)``) up to ``total`` steps named by ``unit``
    (its rate reads "values/s", not tqdm's "it/s"): shown after 1 s unless ``progress`` is False.

    Used as ``with _bar(...) as bar:`` around the loop, never iterated: a Ctrl-C in the loop then closes
    it in ``__exit__`` while the ``KeyboardInterrupt`` is handled, so it stays at its true count and says
    "interrupted" (an iterated bar is closed by its generator's ``GeneratorExit`` instead, as if done).
    """
    from sharpdp._progress import progress_bar
    from sharpdp.crlb import grid_release

    # the release's noise table is built (or loaded) once, before the bar: charged to the first run, it made the
    # bar's first estimate of the time left ten times too long
    grid_release(0)
    return progress_bar(None, total=total, desc=desc, unit=unit, delay=1.0, disable=progress is False)


def mechanism_comparison(*, s_grid: Any = None, trials: int = 200, sigma_w: float = 0.2, m: int = 10,
                         rng: Any = None, progress: bool | None = None,
                         mechanisms: Any = None) -> dict[str, Any]:
    """Section 5.1: MSE of mechanisms satisfying ``I_z(y) <= s I_m`` vs the PPCRLB.

    Setting of the paper: ``theta = (0.63, 0.81, -0.75, 0.83, 0.26)``, ``H``
    uniform on ``[-1, 1]^{m x 5}`` (drawn from ``rng``), ``w ~ N(0, sigma_w^2 I)``.
    Every mechanism is calibrated so that its pointwise Fisher information is at
    most ``s I``:

    - ``gaussian``: (18) with the efficient estimator (19) -- attains the bound.
    - ``laplace_data``: ``z = y + d``, ``d_i ~ Laplace(1/sqrt(s))`` (information
      ``s`` per coordinate), ML estimate of theta (Fisher scoring on the exact
      Gaussian-Laplace convolution density).
    - ``laplace_output``: ``z = theta_LS(y) + d``, ``d_i ~ Laplace(b)`` with
      ``1/b^2 = s lambda_min(H^T H)`` (then ``I_z(y) <= s I``); ``z`` is the estimate.
    - ``cauchy_data``: ``d_i ~ Cauchy(1/sqrt(2 s))`` (information ``s``), ML
      estimate on the Voigt density.

    ML estimates are computed by monotone (backtracking) Fisher scoring from the
    best of least squares and random exact subset fits; for the multimodal Cauchy
    likelihood this finds a good local maximum, not a certified global one.
    - ``trigonometric_output``: output perturbation with the raised-cosine
      density (27) of width ``W = 2 pi / sqrt(s lambda_min(H^T H))`` (information
      ``4 pi^2 / W^2``).

    - ``multiplicative_data``: stochastic truncation of Remark 34 (``|y_i| < eps``
      mapped to ``+-eps`` unbiasedly) then ``z_i = y'_i / V_i``, ``V_i ~ N(1, 1.3^2)``;
      ``eps`` chosen so that ``sup_y I_z(y) = s`` (bound derived in this module);
      ML estimate by BHHH on the exact likelihood (Gauss-Hermite over ``w``).
    - ``quantization_output``: ``z = Q(theta_LS + d)`` coordinate-wise, ``Q`` the
      unbiased probabilistic quantiser of step ``Delta``, ``d ~ N(0, (Delta/2)^2)``
      dither (the smoothing that bounds the information), ``Delta`` such that the
      information is ``<= s lambda_min(H^T H)``; ``z`` is the estimate.

    Parameters
    ----------
    s_grid : array_like of float > 0, optional
        Privacy levels ``s`` (default 10 values from 0.1 to 10).
    trials : int
        Monte Carlo repetitions per ``s`` (the paper uses 2000).
    sigma_w : float
        Measurement noise standard deviation (paper: 0.2).
    m : int
        Number of measurements (paper: 10).
    rng : numpy.random.Generator, int, SeedSequence or None
    progress : bool or None
        A progress bar on stderr once the run takes more than 1 s (None, True), or never (False).
    mechanisms : sequence of str, optional
        The mechanisms to run, names of :data:`MECHANISMS_5_1` (default: all, in that order). The
        mechanisms draw from one generator in that order, so a subset draws other noise than the full
        run does for the same ``rng`` (the full run is unchanged by this option).

    Returns
    -------
    dict
        ``s``, ``bound`` (trace of Sigma_PPCR), ``classical`` (trace of Sigma_CR),
        ``mse`` and ``stderr`` (dicts mechanism -> array over ``s``, the mechanisms run only).

    Raises
    ------
    ValueError
        A bad ``s_grid``, ``trials``, ``sigma_w`` or ``m``, or a name of ``mechanisms`` not in
        :data:`MECHANISMS_5_1`.
    """
    s_vals = np.geomspace(0.1, 10.0, 10) if s_grid is None else V.real_array("s_grid", s_grid, ndim=1)
    if np.any(s_vals <= 0):
        raise ValueError("s_grid must contain only values > 0")
    R = V.integer("trials", trials, lo=2)
    sig = V.real("sigma_w", sigma_w, lo=0.0, lo_open=True)
    m = V.integer("m", m, lo=5)
    g = as_generator(rng)
    n = THETA_5_1.size
    H = g.uniform(-1.0, 1.0, (m, n))
    Sw = sig**2 * np.eye(m)
    lam_min = float(np.linalg.eigvalsh(H.T @ H)[0])
    pinvH = np.linalg.pinv(H)
    quant_c = _quant_info_constant()
    run = MECHANISMS_5_1 if mechanisms is None else tuple(mechanisms)
    unknown = [k for k in run if k not in MECHANISMS_5_1]
    if unknown or not run:
        raise ValueError(f"mechanisms: {unknown or 'none'} not among {', '.join(MECHANISMS_5_1)}")
    run = tuple(k for k in MECHANISMS_5_1 if k in run)  # (the draws' order)
    mse = {k: np.empty(s_vals.size) for k in run}
    se = {k: np.empty(s_vals.size) for k in run}
    bound = np.empty(s_vals.size)
    with _bar("PPCRLB 5.1 (values of s)", progress, int(s_vals.size), " values") as bar:
        for j, s in enumerate(s_vals):
            S = s * np.eye(m)
            bound[j] = np.trace(ppcrlb(H, S, Sw))
            y = THETA_5_1 @ H.T + sig * g.standard_normal((R, m))
            est = {}
            if "gaussian" in run:
                est["gaussian"] = efficient_estimator(gaussian_mechanism(y, S, rng=g), H, S, Sw)
            if "laplace_data" in run:
                est["laplace_data"] = _ml_additive(y + g.laplace(0.0, 1 / math.sqrt(s), (R, m)), H,
                                                   _log_gauss_laplace(sig, 1 / math.sqrt(s)), sig + 1 / math.sqrt(s), g)
            if "laplace_output" in run:
                est["laplace_output"] = y @ pinvH.T + g.laplace(0.0, 1 / math.sqrt(s * lam_min), (R, n))
            if "cauchy_data" in run:
                est["cauchy_data"] = _ml_additive(y + g.standard_cauchy((R, m)) / math.sqrt(2 * s), H,
                                                  _log_voigt(sig, 1 / math.sqrt(2 * s)), sig + 1 / math.sqrt(s), g)
            if "trigonometric_output" in run:
                est["trigonometric_output"] = y @ pinvH.T + _sample_raised_cosine(
                    g, 2 * math.pi / math.sqrt(s * lam_min), (R, n))
            if "multiplicative_data" in run:
                z_mult, eps_mult = _multiplicative_mechanism(y, s, g)
                zc = np.clip(z_mult, -3 * eps_mult, 3 * eps_mult)
                starts = [np.zeros((R, n)), zc @ pinvH.T]
                for _ in range(12):
                    rows = g.choice(m, n, replace=False)
                    if abs(np.linalg.det(H[rows])) > 1e-8:
                        starts.append(zc[:, rows] @ np.linalg.inv(H[rows]).T)
                est["multiplicative_data"] = _ml_bhhh(
                    z_mult, H, lambda zz, mu: _mult_loglik(zz, mu, sig, eps_mult), np.stack(starts, axis=1),
                    sig + eps_mult)
            if "quantization_output" in run:
                est["quantization_output"] = _probabilistic_quantiser(
                    y @ pinvH.T, math.sqrt(quant_c / (s * lam_min)), g)
            for name, e in est.items():
                sq = np.sum((e - THETA_5_1) ** 2, axis=1)
                mse[name][j] = sq.mean()
                se[name][j] = sq.std(ddof=1) / math.sqrt(R)
            bar.update(1)
    return {
        "s": s_vals,
        "bound": bound,
        "classical": np.full(s_vals.size, np.trace(classical_crlb(H, Sw))),
        "mse": mse,
        "stderr": se,
        "trials": R,
    }


# ----------------------------------------------------------------- Section 5.2


def load_triglyceride_data() -> tuple[np.ndarray, np.ndarray]:
    """Real data for Section 5.2 from scikit-learn's bundled diabetes table (no download).

    ``y`` is column ``s5``, documented by scikit-learn as "ltg, possibly log of
    serum triglycerides level" (so already log-transformed, i.e. Box-Cox with
    lambda = 0, where the paper Box-Cox-transforms NHANES triglycerides). ``H``
    rows are ``[1, age, BMI, sex, bp]`` in raw units (years, kg/m^2, code 1/2,
    mm Hg). The paper's income-to-poverty ratio has no counterpart here; average
    blood pressure takes its place.

    Returns
    -------
    y : ndarray (442,)
    H : ndarray (442, 5)
    """
    col = {name: i for i, name in enumerate(DIABETES_COLUMNS)}
    X = _diabetes_raw()
    H = np.column_stack([np.ones(X.shape[0]), X[:, col["age"]], X[:, col["bmi"]], X[:, col["sex"]], X[:, col["bp"]]])
    return X[:, col["s5"]].astype(float), H


#: Columns of scikit-learn's diabetes table (its ``feature_names``, in the order of its data file).
DIABETES_COLUMNS = ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")


def _diabetes_raw() -> np.ndarray:
    """The raw-unit diabetes table (442 x 10, :data:`DIABETES_COLUMNS`) read from scikit-learn's own data
    file, as ``load_diabetes(scaled=False)`` reads it, without importing ``sklearn.datasets`` (~0.5 s of
    CPU of imports); that loader is used when the file is not where this expects it."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("sklearn")
    if spec is not None and spec.origin:
        path = os.path.join(os.path.dirname(spec.origin), "datasets", "data", "diabetes_data_raw.csv.gz")
        if os.path.isfile(path):
            X = np.loadtxt(path)
            if X.shape == (442, len(DIABETES_COLUMNS)):
                return X
    from sklearn.datasets import load_diabetes

    d = load_diabetes(scaled=False)
    if tuple(d.feature_names) != DIABETES_COLUMNS:
        raise ValueError(f"scikit-learn's diabetes table has columns {d.feature_names}, not {DIABETES_COLUMNS}")
    return np.asarray(d.data, dtype=float)


#: Reciprocal-condition threshold of an information matrix counted as invertible: the same rule as
#: :class:`sharpdp.crlb.PrivateRLS` (its ``rcond``), so every estimator of Section 5.2 starts at the
#: first step whose information is invertible.
RCOND = 1e-10


def _invertible(P: np.ndarray, rcond: float = RCOND) -> bool:
    """Smallest / largest eigenvalue of the symmetric PSD ``P`` above ``rcond``."""
    ev = np.linalg.eigvalsh(P)
    return bool(ev[-1] > 0.0 and ev[0] > rcond * ev[-1])


def _laplace_rls(y: np.ndarray, H: np.ndarray, b: float, g: np.random.Generator) -> tuple[np.ndarray, int | None]:
    """Laplace mechanism z_k = y_k + Laplace(b) followed by recursive least squares (batch LS per k).

    The estimate starts at ``k0``, the first step at which the information ``sum_{j<=k} H_j H_j^T``
    is invertible (:func:`_invertible`), as Algorithms 2-3 of the paper start at the first
    invertible ``PI_k0``: a block whose first rows are collinear (e.g. the first records all share
    the binary ``sex`` value, so the intercept and ``sex`` columns coincide) has no estimate until
    a record breaks the tie. Returns the estimates (NaN rows before ``k0``) and ``k0`` (1-based;
    None if never reached).
    """
    z = y + g.laplace(0.0, b, y.shape)
    out = np.full((y.size, H.shape[1]), np.nan)
    P = np.zeros((H.shape[1], H.shape[1]))
    q = np.zeros(H.shape[1])
    k0 = None
    for k in range(y.size):
        P += np.outer(H[k], H[k])
        q += H[k] * z[k]
        if k0 is None and _invertible(P):
            k0 = k + 1
        if k0 is not None:
            out[k] = np.linalg.solve(P, q)
    return out, k0


def _binary_probit(y: np.ndarray, H: np.ndarray, sig: float, tau: float, C: float, g: np.random.Generator,
                   theta0: np.ndarray, prior_info: float) -> np.ndarray:
    """Binary-valued quantisation z_k = 1{y_k + d_k <= C}, d_k ~ N(0, tau^2), identified at
    every k by the probit maximum a posteriori estimate (weak Gaussian prior at theta0,
    Fisher scoring warm-started at the previous estimate, backtracking line search)."""
    v = math.sqrt(sig**2 + tau**2)
    z = (y + tau * g.standard_normal(y.shape) <= C).astype(float)
    theta = theta0.astype(float).copy()
    out = np.empty((y.size, H.shape[1]))

    def logpost(th: np.ndarray, k: int) -> float:
        u = (C - H[: k + 1] @ th) / v
        ll = np.sum(z[: k + 1] * log_ndtr(u) + (1 - z[: k + 1]) * log_ndtr(-u))
        return float(ll - 0.5 * prior_info * np.sum((th - theta0) ** 2))

    for k in range(y.size):
        Hk, zk = H[: k + 1], z[: k + 1]
        cur = logpost(theta, k)
        for _ in range(50):
            u = (C - Hk @ theta) / v
            p = np.clip(ndtr(u), 1e-300, 1 - 1e-16)
            phi = np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)
            lam = phi / (p * (1 - p))
            grad = -Hk.T @ ((zk - p) * lam) / v - prior_info * (theta - theta0)
            info = (Hk.T * (phi * lam / v**2)) @ Hk + prior_info * np.eye(H.shape[1])
            d = np.linalg.solve(info, grad)
            t = 1.0
            while t > 1e-6:
                new = logpost(theta + t * d, k)
                if new >= cur:
                    break
                t *= 0.5
            if t <= 1e-6:
                break
            theta, gain, cur = theta + t * d, new - cur, new
            if gain < 1e-10:
                break
        out[k] = theta
    return out


#: Section 5.2's privacy setting (recursion (16) of the paper): record k's privacy level S_k, the bound on the
#: Fisher information its release holds about y_k (smaller: more private), is uniform on PRIVACY_LEVEL_RANGE_52;
#: the cross terms are U_k = PRIVACY_CROSS_SCALE_52 sqrt(S_k) xi_k, xi_k ~ N(0, I_{k-1}).
PRIVACY_LEVEL_RANGE_52 = (0.2, 2.0)
PRIVACY_CROSS_SCALE_52 = 0.1


#: Relative step of the central difference giving d(bound)/d(sigma2) in :func:`recursive_identification`.
SIGMA2_STEP_52 = 1e-4


def bound_sigma2_slope(H: Any, sigma2: float, S: Any, U: Any = None, step: float = SIGMA2_STEP_52) -> np.ndarray:
    """d/d(sigma2) of the trace of the privacy-preserving CRLB at each step of a sequence of scalar measurements
    ``y_k = H_k theta + w_k`` (``w_k ~ N(0, sigma2)``) released at privacy levels ``S_k`` with cross terms ``U_k``
    (:class:`sharpdp.crlb.recursive.RecursivePPCRLB`): the central difference of the bound's recursion at
    ``sigma2 (1 +- step)``. Used for the bound's standard error from sigma2's estimation error (docs/cli.md §3.2).

    Parameters
    ----------
    H : array_like, shape (L, n)
        The regressors, one row per step.
    sigma2 : float
        The measurement noise variance (> 0).
    S : array_like, shape (L,)
        The privacy levels.
    U : sequence of (array_like or None), optional
        The cross terms (``U[0]`` None; ``U[k]`` of length k), as in :func:`recursive_identification`; None: none.
    step : float
        Relative step of the central difference, in (0, 1).

    Returns
    -------
    numpy.ndarray, shape (L,)
        The slope at each step; NaN before the first step at which the bound is finite.
    """
    H = np.asarray(H, dtype=float)
    L, n = H.shape
    s2 = V.real("sigma2", sigma2, lo=0.0, lo_open=True)
    h = V.real("step", step, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    lo_b, hi_b = RecursivePPCRLB(n), RecursivePPCRLB(n)
    out = np.full(L, np.nan)
    for k in range(L):
        u = None if U is None else U[k]
        lo_b.update(H[k], s2 * (1.0 - h), S[k], u)
        hi_b.update(H[k], s2 * (1.0 + h), S[k], u)
        if lo_b.covariance is not None and hi_b.covariance is not None:
            out[k] = (np.trace(hi_b.covariance) - np.trace(lo_b.covariance)) / (2.0 * h * s2)
    return out


def recursive_identification(*, blocks: int = 3, block_size: int = 100, repetitions: int = 10,
                             rng: Any = None, progress: bool | None = None) -> dict[str, Any]:
    """Section 5.2: Algorithm 3 on the diabetes data, bound vs empirical MSE.

    The 442 records are split at random into ``blocks * block_size``
    experimental records and a reference set; least squares on the reference set
    gives the ground-truth ``theta`` and its residual variance the noise variance
    ``sigma^2``. On each block Algorithm 3 runs ``repetitions`` times with the
    privacy recursion (16) of the paper: ``S_k ~ U[0.2, 2]``,
    ``U_k = 0.1 sqrt(S_k) xi_k``, ``xi_k ~ N(0, I_{k-1})`` (drawn once per block).
    Fig. 3 comparison (``Sbar_k = I``): Algorithm 3 with ``S_k = 1, U_k = 0``; the
    Laplace mechanism ``z_k = y_k + Laplace(1)`` (information 1) with recursive
    least squares; binary quantisation ``1{y_k + d_k <= C}``, ``d_k ~ N(0, pi/2)``
    (information at most ``2/(pi tau^2) = 1``), ``C`` = reference median of ``y``,
    identified by the probit maximum a posteriori estimate at every ``k`` (prior
    ``N((C, 0, 0, 0, 0), 100 I)``; an offline stand-in for the paper's online
    quasi-Newton algorithm of Wang et al. 2024, with the same asymptotics; at small
    ``k`` it is biased towards the prior, so its MSE there is not comparable with
    the bound, which holds for unbiased estimators).

    Every estimator starts at the first step ``k0`` whose information matrix is invertible
    (Algorithms 2-3 of the paper initialise at an invertible ``PI_k0``; the Laplace + RLS
    comparison uses the same rule on ``sum H_k H_k^T``). ``k0`` varies by block: when the first
    records of a block are collinear (for instance, all share the binary ``sex`` value, so that
    column equals the intercept), the start is later. ``progress``: a bar on stderr once the run
    takes more than 1 s (None, True), or never (False). The curves average over blocks, so they
    start at the latest ``k0`` over the blocks (reported as ``k0``; before it some block has no
    estimate and an infinite bound).

    The data are fixed within a block and only the privacy noise is repeated, so
    the empirical MSE is conditional on the data and scatters around the bound:
    Algorithm 3 is unbiased and attains the bound in expectation over data and
    privacy noise, but with ``blocks`` = 3 data realisations the curve can sit
    below (or above) the bound at most steps k for one seed, whatever
    ``repetitions`` is (the steps share the same data); ``mse_stderr`` is its
    standard error across blocks;
    the reference ``theta`` has its own estimation error and the linear model is
    only approximate, which biases the empirical MSE upwards at large ``k``.

    Returns
    -------
    dict
        ``k`` (1..block_size), ``bound`` and ``mse`` (Algorithm 3 with the
        recursion of §5.2; NaN before ``k0``), ``mse_stderr`` (standard error of
        ``mse`` across the blocks), ``blocks``, ``bound_identity``,
        ``mse_identity`` (Algorithm 3 with ``Sbar_k = I``), ``mse_laplace``,
        ``mse_binary``, ``theta``, ``sigma2``, ``k0`` (the latest first invertible step over
        the blocks and estimators, 1-based), ``bound_sigma2_slope`` (d ``bound`` / d ``sigma2`` at
        each step, a central difference of the bound's recursion at ``sigma2 (1 +- SIGMA2_STEP_52)``
        with the same privacy levels; NaN before ``k0``) and ``sigma2_dof`` (the reference records
        minus n: ``sigma2``'s degrees of freedom), for the bound's standard error (docs/cli.md §3.2).

    Raises
    ------
    ValueError
        Bad ``blocks``, ``block_size`` or ``repetitions``; a block whose records never make the
        information matrix invertible.
    """
    B = V.integer("blocks", blocks, lo=1)
    L = V.integer("block_size", block_size, lo=6)
    Rp = V.integer("repetitions", repetitions, lo=1)
    g = as_generator(rng)
    y_all, H_all = load_triglyceride_data()
    N, n = H_all.shape
    if B * L > N - 2 * n:
        raise ValueError(f"blocks * block_size must leave at least {2 * n} reference records (have {N})")
    perm = g.permutation(N)
    exp_idx, ref_idx = perm[: B * L], perm[B * L:]
    theta, *_ = np.linalg.lstsq(H_all[ref_idx], y_all[ref_idx], rcond=None)
    resid = y_all[ref_idx] - H_all[ref_idx] @ theta
    sigma2 = float(resid @ resid / (ref_idx.size - n))
    C = float(np.median(y_all[ref_idx]))
    tau = math.sqrt(math.pi / 2)
    sum_b, sum_e = np.zeros(L), np.zeros((B, L))  # sum_e per block: blocks are the independent units
    sum_bi, sum_ei, sum_l, sum_q = np.zeros(L), np.zeros(L), np.zeros(L), np.zeros(L)
    sum_slope = np.zeros(L)  # d(bound)/d(sigma2) (bound_sigma2_slope)
    k0s: list[int] = []  # first invertible step of every estimator in every block
    with _bar("PPCRLB 5.2 (runs: blocks x repetitions)", progress, B * Rp, " runs") as bar:
        for blk in range(B):
            idx = exp_idx[blk * L:(blk + 1) * L]
            y, H = y_all[idx], H_all[idx]
            S = g.uniform(*PRIVACY_LEVEL_RANGE_52, L)
            U = [None] + [PRIVACY_CROSS_SCALE_52 * math.sqrt(S[k]) * g.standard_normal(k) for k in range(1, L)]
            sum_slope += np.nan_to_num(bound_sigma2_slope(H, sigma2, S, U))  # (no noise drawn: the same stream)
            for rep in range(Rp):
                alg, ident = PrivateRLS(n, rng=g), PrivateRLS(n, rng=g)
                for k in range(L):
                    alg.update(y[k], H[k], sigma2, S[k], U[k])
                    ident.update(y[k], H[k], sigma2, 1.0)
                    if alg.estimate is not None:
                        sum_e[blk, k] += np.sum((alg.estimate - theta) ** 2)
                        if rep == 0:
                            sum_b[k] += np.trace(alg.covariance)
                    if ident.estimate is not None:
                        sum_ei[k] += np.sum((ident.estimate - theta) ** 2)
                        if rep == 0:
                            sum_bi[k] += np.trace(ident.covariance)
                lap, lap_k0 = _laplace_rls(y, H, 1.0, g)
                k0s += [L + 1 if v is None else int(v) for v in (alg.k0, ident.k0, lap_k0)]
                sum_l += np.nansum((lap - theta) ** 2, axis=1)
                q = _binary_probit(y, H, math.sqrt(sigma2), tau, C, g, np.r_[C, np.zeros(n - 1)], 1e-2)
                sum_q += np.sum((q - theta) ** 2, axis=1)
                bar.update(1)
    # the curves average over blocks, so they start where every block has its estimates (the
    # latest first invertible step); before it the bound is infinite for some block
    k0 = max(k0s)
    if k0 > L:
        raise ValueError(f"block_size: {L} records never make the information matrix invertible in some block")
    nan_before = np.where(np.arange(1, L + 1) < k0, np.nan, 1.0)
    return {
        "k": np.arange(1, L + 1),
        "bound": nan_before * sum_b / B,
        "mse": nan_before * sum_e.sum(axis=0) / (B * Rp),
        # standard error of "mse" across the B blocks (NaN for B = 1): the data noise is drawn
        # once per block, so with few blocks the curve's error is dominated by the data, not
        # by the privacy noise that ``repetitions`` averages
        "mse_stderr": nan_before * (np.std(sum_e / Rp, axis=0, ddof=1) / math.sqrt(B) if B > 1 else np.nan),
        "blocks": B,
        "bound_identity": nan_before * sum_bi / B,
        "mse_identity": nan_before * sum_ei / (B * Rp),
        "mse_laplace": nan_before * sum_l / (B * Rp),
        "mse_binary": sum_q / (B * Rp),
        "theta": theta,
        "sigma2": sigma2,
        # the bound's sensitivity to sigma2 and sigma2's degrees of freedom (reference records - n): the bound's
        # standard error from sigma2's estimation error, by the delta method (docs/cli.md §3.2)
        "bound_sigma2_slope": nan_before * sum_slope / B,
        "sigma2_dof": int(ref_idx.size - n),
        "k0": k0,
        "records": {"experimental": int(B * L), "reference": int(ref_idx.size)},
    }


# ----------------------------------------------------------------- Section 5.3


def laplacian_measurements(*, K_grid: Any = (50, 100, 200, 500, 1000), trials: int = 300, theta: float = 0.53,
                           rng: Any = None, progress: bool | None = None) -> dict[str, Any]:
    """Section 5.3: mean estimation under Laplace noise (variance 1), ``trace I_z / K -> 1``.

    ``y_k = theta + w_k``, ``w_k ~ Laplace(0, 1/sqrt 2)``; trace budget
    ``s_K = K``. Curves: the ML-based estimator (21) (median + Gaussian noise of
    variance ``1/K^2``, see :func:`~sharpdp.crlb.ml_private_estimator`), direct
    averaging with Gaussian noise (variance ``1/K^2``, trace exactly ``K``) and
    with Laplace noise (scale ``1/K``, trace exactly ``K``), the classical CRLB
    ``1/(2K)`` and the privacy-preserving bound ``1/(2K) + 1/K^2`` (Corollary
    19's first inequality with ``trace I_z = K``). ``ml_trace_ratio`` reports the
    realised ``trace I_z / s_K`` of (21), which for the median is ``K`` (the
    trace constraint holds only in the paper's asymptotic sense). ``progress``: a bar on stderr once
    the run takes more than 1 s (None, True), or never (False).

    Returns
    -------
    dict of arrays over ``K``
    """
    Ks = V.real_array("K_grid", K_grid, ndim=1).astype(int)
    if np.any(Ks < 2):
        raise ValueError("K_grid must contain integers >= 2")
    R = V.integer("trials", trials, lo=2)
    th = V.real("theta", theta)
    g = as_generator(rng)
    b = 1 / math.sqrt(2)
    out = {name: np.empty(Ks.size) for name in ("ml", "avg_gaussian", "avg_laplace", "ml_trace_ratio")}
    with _bar("PPCRLB 5.3 (values of K)", progress, int(Ks.size), " values") as bar:
        for j, K in enumerate(Ks):
            H = np.ones((K, 1))
            sq = {"ml": [], "avg_gaussian": [], "avg_laplace": []}
            ratio = []
            for _ in range(R):
                y = th + g.laplace(0.0, b, K)
                res = ml_private_estimator(y, H, float(K), noise="laplace", rng=g)
                sq["ml"].append((res.estimate[0] - th) ** 2)
                ratio.append(res.fisher_trace / K)
                sq["avg_gaussian"].append((y.mean() + g.normal(0.0, 1 / K) - th) ** 2)
                sq["avg_laplace"].append((y.mean() + g.laplace(0.0, 1 / K) - th) ** 2)
            for name, v in sq.items():
                out[name][j] = np.mean(v)
            out["ml_trace_ratio"][j] = np.mean(ratio)
            bar.update(1)
    return {
        "K": Ks,
        "bound": 1 / (2 * Ks) + 1 / Ks.astype(float) ** 2,
        "classical": 1 / (2 * Ks.astype(float)),
        "mse_ml": out["ml"],
        "mse_avg_gaussian": out["avg_gaussian"],
        "mse_avg_laplace": out["avg_laplace"],
        "ml_trace_ratio": out["ml_trace_ratio"],
        "trials": R,
    }
