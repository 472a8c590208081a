"""Pure-LDP local randomizers for the shuffle model: randomized response and PrivUnit (seed 001).

Both are described by a finite table of output classes (see :mod:`sharpdp.shuffle.indices`),
from which the shuffle indices and the law of the privacy-amplification variable
l_eps(Y) = (R_x1(Y) - e^eps R_x1'(Y)) / R_BG(Y), Y ~ R_BG, follow exactly. The accountant
(:class:`sharpdp.shuffle.ShuffleAccountant`) calls :meth:`privacy_amplification_laws`.

Adjacency names: ``"zero_out"`` (the seed's: x ≃ ⊥ with R_⊥ = R_BG, both orders) and
``"replace"`` (x1 replaced by x1' != x1).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import as_generator, core_seed
from sharpdp.shuffle import indices as I
from sharpdp.shuffle.mechanisms import LocalRandomizer

__all__ = ["RandomizedResponse", "PrivUnit", "privunit_constant"]


class _TableRandomizer(LocalRandomizer):
    """Common machinery of randomizers reduced to a finite table of output classes.

    Subclasses set ``gamma`` and implement ``_table()`` returning ``(R, w, bg, pairs_by_adj)``:
    rows of ``R`` are representative inputs, ``w`` the class measures, ``bg`` the blanket per
    symbol, ``pairs_by_adj`` the worst-case neighbouring row pairs for each adjacency (the
    blanket row is appended to ``R`` as the last row, standing for ⊥).
    """

    gamma: float

    def _table(self):
        raise NotImplementedError

    def _pav_atoms(self, epsilon: float, adjacency: str = "zero_out"):
        """Atoms of l_eps(Y), Y ~ R_BG, per worst-case pair and order: list of (gamma, values, probs)."""
        eps = V.real("epsilon", epsilon, lo=0.0)
        I.check_adjacency(adjacency)
        R, w, bg, pairs = self._table()
        return [(self.gamma, *I.table_pav_atoms(R[a], R[b], bg, w, eps)) for a, b in pairs[adjacency]]

    def _lower_form_atoms(self, epsilon: float, adjacency: str = "zero_out"):
        """Atoms of the lower form's l~_eps(V) = (R_x1 - e^eps R_x1')(V) / R_x0(V), V ~ R_x0 (spec Section 1).

        One (1.0, values, probs) triple per worst-case pair and representative x0 in X; the
        hockey-stick divergence of (x1, x0, ..., x0) vs (x1', x0, ..., x0) is the accountant's
        value of this law with gamma = 1, a lower bound on the true delta(eps).
        """
        eps = V.real("epsilon", epsilon, lo=0.0)
        I.check_adjacency(adjacency)
        R, w, _, pairs = self._table()
        n_inputs = R.shape[0] - 1
        return [(1.0, *I.table_pav_atoms(R[a], R[b], R[x0], w, eps))
                for a, b in pairs[adjacency] for x0 in range(n_inputs)]

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = "zero_out"):
        """Laws of the privacy-amplification variable for the accountant.

        Parameters
        ----------
        epsilon : float
            eps >= 0 in nats.
        adjacency : {"zero_out", "replace"}
            Neighbouring relation.

        Returns
        -------
        list of (float, FiniteLaw)
            ``(gamma, law)`` per worst-case neighbouring pair and order, law = atoms of
            L = l_eps(Y), Y ~ R_BG (spec fft_accountant.md Section 1); the accountant takes the max.
        """
        return I.finite_laws(self._pav_atoms(epsilon, adjacency))

    def lower_form_laws(self, epsilon: float, adjacency: str = "zero_out"):
        """``(1.0, FiniteLaw)`` pairs of the lower form D_lo (spec Section 1); see :meth:`_lower_form_atoms`."""
        return I.finite_laws(self._lower_form_atoms(epsilon, adjacency))


class RandomizedResponse(_TableRandomizer):
    """k-ary randomized response (binary for k = 2; seed 001, Appendix "privunit-constant-gap-d1").

    Input a category x in {0, ..., k-1}; output x with probability e^eps0 / Z and each other
    category with probability 1 / Z, Z = e^eps0 + k - 1. This is eps0-LDP. Blanket: the pointwise
    infimum over inputs, mass gamma = k / Z, with uniform blanket distribution R_BG = 1/k
    (for k = 2 this is the seed's gamma = 1 - t with t = 2p - 1, p = e^eps0 / (1 + e^eps0)).

    For k = 2 the categories 0, 1 encode the seed's inputs -1, +1 of RR(p).

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
        """Lower shuffle index, zero-out (seed 001, Section 2.3): chi_lo^2 = k Z / ((k - 1)(e^eps0 - 1)^2).

        For k = 2 this is the seed's chi_lo^2 = (1 - t)/t^2 (Proposition "RR", t = 2p - 1).
        """
        return self.chi_lo_for("zero_out")

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out (seed 001, Section 2.3), worst case over inputs and references::

            chi_up^2 = k^2 Z / ((e^eps0 - 1)^2 ((k - 1)^2 + k - 2 + e^-eps0)).

        For k = 2: chi_up^2 = 4 e^eps0 / (e^eps0 - 1)^2 = Err_1, so the HCR bound is attained.
        """
        return self.chi_up_for("zero_out")

    def chi_lo_for(self, adjacency: str = "zero_out") -> float:
        """chi_lo for the given adjacency; see :meth:`shuffle_indices`."""
        return self.shuffle_indices(adjacency)[0]

    def chi_up_for(self, adjacency: str = "zero_out") -> float:
        """chi_up for the given adjacency; see :meth:`shuffle_indices`."""
        return self.shuffle_indices(adjacency)[1]

    def shuffle_indices(self, adjacency: str = "zero_out") -> tuple[float, float]:
        """(chi_lo, chi_up) for the given adjacency (closed forms; both orders of the pair).

        zero_out: see :attr:`chi_lo`, :attr:`chi_up`. replace (spec Section 6):
        chi_lo^2 = Z / (2 (e^eps0 - 1)^2); chi_up^2 = chi_lo^2 for k >= 3 (a third symbol is a
        reference input) and e^eps0 / (e^eps0 - 1)^2 for k = 2.
        """
        I.check_adjacency(adjacency)
        k, Z, em1 = self.k, self._Z, self._em1
        if adjacency == "zero_out":
            lo2 = k * Z / ((k - 1) * em1**2)
            up2 = k * k * Z / (em1**2 * ((k - 1) ** 2 + k - 2 + math.exp(-self.epsilon0)))
        else:
            lo2 = Z / (2 * em1**2)
            up2 = lo2 if k >= 3 else math.exp(self.epsilon0) / em1**2
        return math.sqrt(lo2), math.sqrt(up2)

    @property
    def mse_single(self) -> float:
        """Worst-case single-user squared error Err_1 of the unbiased estimator.

        k = 2 (seed Proposition "RR", inputs +-1, estimator Y/t): Err_1 = 1/t^2 - 1
        = 4 e^eps0 / (e^eps0 - 1)^2 = chi_lo^2 (1 + 1/chi_lo + O(chi_lo^-2)).
        k >= 3 (one-hot frequency estimator, squared error summed over the k coordinates):
        Err_1 = ((Z - 1)^2 + k - 1) / (e^eps0 - 1)^2 - 1, the same for every input.
        """
        k, Z, em1 = self.k, self._Z, self._em1
        if k == 2:
            return 4 * math.exp(self.epsilon0) / em1**2
        return ((Z - 1) ** 2 + k - 1) / em1**2 - 1.0

    # -------------------------------------------------------------- sampling & estimation
    def sample(self, x, rng=None, *, threads: int = 0) -> np.ndarray:
        """Randomize categories ``x`` (int array of shape (n,), values in [0, k)) in C++.

        Returns int64 of shape (n,). Reproducible for a given seed, identical for any
        ``threads`` (0 = all cores); ``rng=None`` uses fresh OS entropy.
        """
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"x must be 1-dimensional (categories), got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError("x must not be empty")
        if not np.issubdtype(arr.dtype, np.integer):
            f = V.real_array("x", arr, ndim=1)
            if np.any(f != np.round(f)):
                raise ValueError("x must hold integer categories")
            arr = f.astype(np.int64)
        if arr.min() < 0 or arr.max() >= self.k:
            raise ValueError(f"x must hold categories in [0, {self.k}), found {arr.min()}..{arr.max()}")
        from sharpdp._core_loader import core

        threads = V.integer("threads", threads, lo=0)
        return core.samplers.krr_sample(np.ascontiguousarray(arr, dtype=np.int64), self.k, self.p_keep,
                                        core_seed(rng), threads)

    def estimate(self, messages) -> np.ndarray:
        """Unbiased estimate of the category frequencies, float64 shape (k,).

        f_hat_j = (count_j / n - 1/Z) * Z / (e^eps0 - 1); sums to 1, entries may be negative.
        """
        m = np.asarray(messages)
        if m.ndim != 1 or m.size == 0:
            raise ValueError("messages must be a non-empty 1-dimensional array of categories")
        counts = np.bincount(m.astype(np.int64), minlength=self.k)
        if counts.size != self.k or m.min() < 0:
            raise ValueError(f"messages must hold categories in [0, {self.k})")
        return (counts / m.size - self.p_other) * (self._Z / self._em1)

    def estimate_mean(self, messages) -> float:
        """k = 2 only: unbiased estimate of the mean of the +-1 inputs (category 1 = +1), f_hat_1 - f_hat_0."""
        if self.k != 2:
            raise ValueError("estimate_mean needs k = 2 (binary randomized response)")
        f = self.estimate(messages)
        return float(f[1] - f[0])


# ------------------------------------------------------------------------------ PrivUnit
def _cap_quantities(theta: float, d: int) -> tuple[float, float, float]:
    """(q, s = 1 - q, alpha) for T = <U, v>, U uniform on S^{d-1} (seed 001, Appendix "privunit-constant-gap").

    (T + 1)/2 ~ Beta((d-1)/2, (d-1)/2) for d >= 2; E[T; T >= theta] =
    (1 - theta^2)^{(d-1)/2} / ((d-1) B(1/2, (d-1)/2)). For d = 1 (S^0) T = +-1: q = 1/2, alpha = 1.
    """
    if d == 1:
        return 0.5, 0.5, 1.0
    from scipy.special import betainc, betaln

    a = 0.5 * (d - 1)
    q = float(betainc(a, a, 0.5 * (1.0 + theta)))
    s = float(betainc(a, a, 0.5 * (1.0 - theta)))
    log_num = a * math.log1p(-theta * theta) - math.log(d - 1) - float(betaln(0.5, a))
    return q, s, math.exp(log_num) / s


def privunit_constant(theta: float, dim: int) -> float:
    """Leading constant C(theta, d) = q / ((1 - q) d alpha^2) of PrivUnit (seed 001, Proposition "privunit-constant-gap").

    Err_1 = C(theta, d) d chi_lo^2 (1 + O(chi_lo^-1)) in the high-privacy regime. Following the
    errata (spec/errata.md, seed 001), inf_theta C(theta, d) is attained at theta = 0 and is
    below pi/2 for every finite d: pi^2/8 at d = 2, about 1.4943 at d = 10 and 1.5630 at
    d = 100; pi/2 is only the d -> infinity limit (the seed's "liminf >= pi/2").

    Parameters
    ----------
    theta : float
        Cap threshold in (-1, 1).
    dim : int
        Dimension d >= 1 (d = 1 gives C = 1, randomized response).

    Returns
    -------
    float
        C(theta, d), dimensionless.
    """
    th = V.real("theta", theta, lo=-1.0, hi=1.0, lo_open=True, hi_open=True)
    d = V.integer("dim", dim, lo=1)
    q, s, alpha = _cap_quantities(th, d)
    return q / (s * d * alpha**2)


class PrivUnit(_TableRandomizer):
    """PrivUnit(p, theta) on the unit sphere S^{d-1} (seed 001, Definition "privunit").

    Given a unit input v, output Y uniform on the cap C_theta(v) = {u : <u, v> >= theta} with
    probability p and uniform on its complement otherwise. Output density w.r.t. the uniform
    measure mu: h = p / (1 - q) on the cap, l = (1 - p) / q off it, q = P(<U, v> < theta).
    Blanket: R_BG = mu with mass gamma = min(h, l). E[Y] = m v, m = alpha (p + q - 1) / q
    (eq. privunit-m), unbiased estimator Y / m, Err_1 = 1/m^2 - 1.

    Parameters
    ----------
    p : float
        Cap probability in (0, 1), |p - (1 - q)| > 1e-12 (else m = 0 and no unbiased estimator exists).
    theta : float
        Cap threshold in (-1, 1).
    dim : int
        Dimension d >= 1 (d = 1 is randomized response RR(p), seed Proposition "RR").

    Raises
    ------
    ValueError
        If p is not in (0, 1) or p = 1 - q, theta not in (-1, 1), dim < 1, or NaN.
    """

    def __init__(self, p: float, theta: float, dim: int) -> None:
        self.p = V.real("p", p, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self.theta = V.real("theta", theta, lo=-1.0, hi=1.0, lo_open=True, hi_open=True)
        self.dim = V.integer("dim", dim, lo=1)
        self.q, self._s, self.alpha = _cap_quantities(self.theta, self.dim)
        if self.q <= 0.0 or self._s <= 0.0:
            raise ValueError(f"theta={self.theta} leaves a cap of measure 0 in dim={self.dim}")
        self.delta_pq = self.p - self._s  # Delta = p + q - 1
        if abs(self.delta_pq) <= 1e-12:  # m = 0 up to rounding: no unbiased estimator
            raise ValueError(f"p must differ from 1 - q = {self._s} (the output would not depend on the input)")
        self.h = self.p / self._s
        self.l = (1.0 - self.p) / self.q
        self.gamma = min(self.h, self.l)
        self.m = self.alpha * self.delta_pq / self.q

    def _params(self) -> dict:
        return {"p": self.p, "theta": self.theta, "dim": self.dim}

    def _table(self):
        # inputs v and -v (the worst-case pair by convex order); classes: A∩B, A\B, B\A, rest,
        # with A, B the caps of v and -v; antipodal caps meet in measure max(0, 2s - 1).
        s = self._s
        i0 = max(0.0, s - self.q)
        w = np.array([i0, s - i0, s - i0, 1.0 - 2 * s + i0])
        h, l = self.h, self.l
        R = np.array([[h, h, l, l], [h, l, h, l], [1.0, 1.0, 1.0, 1.0]])
        pairs = {"zero_out": [(0, 2), (2, 0)], "replace": [(0, 1)]}
        return R, w, R[2].copy(), pairs

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, zero-out: chi_lo^2 = gamma q (1 - q) / Delta^2 (seed eq. chilo-Delta)."""
        return self.chi_lo_for("zero_out")

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out (seed Section 2.3).

        sup over the reference input x of E_mu[(f_v - 1)^2 / f_x]; the functional is linear in
        mu(C(v) ∩ C(x)), so the sup is at x = v or x = -v (both evaluated exactly).
        """
        return self.chi_up_for("zero_out")

    def chi_lo_for(self, adjacency: str = "zero_out") -> float:
        """chi_lo for the given adjacency.

        zero_out: chi_lo^2 = gamma q (1 - q) / Delta^2. replace: chi_lo^2 = gamma / (2 (h - l)^2
        min(q, 1 - q)) (antipodal inputs maximise the symmetric difference of the caps).
        """
        I.check_adjacency(adjacency)
        R, w, bg, pairs = self._table()
        return I.table_chi_lo(R, w, bg, self.gamma, pairs[adjacency])

    def chi_up_for(self, adjacency: str = "zero_out") -> float:
        """chi_up for the given adjacency.

        Under replace-one the sup runs over three caps (pair and reference) and is implemented
        for dim = 1 only (NotImplementedError otherwise).
        """
        I.check_adjacency(adjacency)
        if adjacency == "replace" and self.dim > 1:
            raise NotImplementedError("PrivUnit chi_up under replace-one adjacency is implemented for dim = 1 only")
        R, w, _, pairs = self._table()
        return I.table_chi_up(R, w, pairs[adjacency], refs=(0, 1))

    @property
    def mse_single(self) -> float:
        """Err_1 = 1/m^2 - 1 of the unbiased estimator Y/m (seed Appendix, Step 3), squared units."""
        return 1.0 / self.m**2 - 1.0

    def sample(self, x, rng=None, *, threads: int = 0) -> np.ndarray:
        """Randomize unit vectors ``x`` (float64, shape (n, dim), |x_i| = 1 within 1e-9).

        The inner product T = <Y, v> is drawn by inverse CDF of the regularised incomplete beta
        (numpy/scipy, from ``rng``), the orthogonal direction in C++ (seeded from ``rng``;
        identical for any ``threads``). Returns float64 of shape (n, dim), unit rows.
        """
        from scipy.special import betaincinv

        from sharpdp._core_loader import core

        v = V.real_array("x", x, ndim=2, shape=(None, self.dim))
        norms = np.linalg.norm(v, axis=1)
        if np.any(np.abs(norms - 1.0) > 1e-9):
            raise ValueError("x must have unit-norm rows (PrivUnit's input domain is the sphere S^{d-1})")
        threads = V.integer("threads", threads, lo=0)
        gen = as_generator(rng)
        n = v.shape[0]
        in_cap = gen.random(n) < self.p
        u = gen.random(n)
        if self.dim == 1:
            t = np.where(in_cap, 1.0, -1.0)
        else:
            a = 0.5 * (self.dim - 1)
            # (1 - T)/2 and (1 + T)/2 are Beta(a, a): sample each side from its own small tail.
            t = np.where(in_cap, 1.0 - 2.0 * betaincinv(a, a, u * self._s),
                         2.0 * betaincinv(a, a, u * self.q) - 1.0)
        return core.samplers.sphere_complete(v, np.ascontiguousarray(t), core_seed(gen), threads)

    def estimate(self, messages) -> np.ndarray:
        """Unbiased mean estimate (1/m) * mean(messages), float64 shape (dim,)."""
        y = V.real_array("messages", messages, ndim=2, shape=(None, self.dim))
        return y.mean(axis=0) / self.m
