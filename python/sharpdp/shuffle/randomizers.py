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

__all__ = ["GeneralRandomizer", "PrivUnit", "RandomizedResponse", "privunit_constant"]


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

    def lower_form(self) -> "LowerForm":
        """This randomizer's lower form as an accountant input: see :class:`LowerForm`."""
        return LowerForm(self)


class LowerForm:
    """Adapter presenting a randomizer's lower-form laws through the accountant protocol.

    ``ShuffleAccountant(r.lower_form(), n, adjacency).get_delta_bounds(eps)[0]`` is a certified
    lower value of max over the representative pairs and x0 of D_lo(eps), the exact hockey-stick
    divergence of the shuffled outputs on (x1, x0, ..., x0) vs (x1', x0, ..., x0) (spec
    fft_accountant.md Section 1), hence a lower bound on the true delta(eps); with the upper
    value of ``ShuffleAccountant(r, n, adjacency)`` it brackets delta(eps).
    """

    def __init__(self, randomizer: _TableRandomizer) -> None:
        self.randomizer = randomizer

    def chi_lo_for(self, adjacency: str = "zero_out") -> float:
        return self.randomizer.chi_lo_for(adjacency)

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = "zero_out"):
        return self.randomizer.lower_form_laws(epsilon, adjacency)


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
    def local_epsilon(self) -> float:
        """Pure-LDP level eps0 in nats (replace-one)."""
        return self.epsilon0

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


def _canonical_angles(alpha: float, beta: float, psi: float) -> tuple[float, float, float]:
    """Any angles -> the same configuration's (alpha, beta, psi) in [0, pi]^3 (same Gram matrix).

    Uses atan2 throughout, so angles near 0 and pi keep full precision (coplanar stays coplanar).
    """
    s2 = math.sin(alpha)
    x1, x2 = math.sin(beta) * math.cos(psi), math.sin(beta) * math.sin(psi)
    a = math.atan2(abs(s2), math.cos(alpha))
    b = math.atan2(math.hypot(x1, x2), math.cos(beta))
    y, z = s2 * x1, abs(s2 * x2)
    return a, b, (math.atan2(z, y) if (y or z) else 0.0)


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
        # inputs v and -v; classes: A∩B, A\B, B\A, rest, with A, B the caps of v and -v;
        # antipodal caps meet in measure max(0, 2s - 1). Why (v, -v) is the worst replace pair for
        # chi_lo and for the laws (any d): see chi_lo_for.
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
        """chi_lo for the given adjacency (seed 001, Definition "Shuffle index"; blanket R_BG = mu).

        zero_out: chi_lo^2 = gamma q (1 - q) / Delta^2. replace: chi_lo^2 = gamma / (2 (h - l)^2
        min(q, 1 - q)), attained by antipodal inputs (v, -v), for every d.

        Why (v, -v) is the worst replace pair. With A, B the caps of v1, v1',
        f_v1 - f_v1' = (h - l)(1_A - 1_B), so Var_mu[l_0] = (h - l)^2 mu(A Δ B) =
        2 (h - l)^2 (s - mu(A ∩ B)); mu(A ∩ B) decreases in the angle between v1 and v1', so the
        sup is at v1' = -v1, where mu(A ∩ B) = max(0, 2s - 1). The same holds for the laws of
        l_eps(Y), Y ~ mu, used by the accountant: they depend on the pair only through
        i = mu(A ∩ B) (masses i, s - i, s - i, 1 - 2s + i on the values c = h(1 - e^eps),
        a = h - e^eps l, b = l - e^eps h, e = l(1 - e^eps)). Lowering i by t moves mass t from each
        of c, e to each of a, b; a + b = c + e and |a - b| = |h - l|(1 + e^eps) >= |c - e| =
        |h - l|(e^eps - 1), so the two-point law on {a, b} is a mean-preserving spread of the one on
        {c, e}: smaller i gives a larger law in convex order, and the accountant's blanket bound is
        monotone in convex order. Hence (v, -v), smallest i, is the worst case.
        """
        I.check_adjacency(adjacency)
        R, w, bg, pairs = self._table()
        return I.table_chi_lo(R, w, bg, self.gamma, pairs[adjacency])

    def chi_up_for(self, adjacency: str = "zero_out") -> float:
        """chi_up for the given adjacency (seed 001, Definition "Shuffle index").

        zero_out: see :attr:`chi_up`. replace, d = 1: the finite table (RR). replace, d >= 2:
        1 / sqrt(sup V), V = Var_{R_x}[l_0(Y; v1, v1', R_x)] over the pair (v1, v1') and the
        reference x; see :meth:`replace_up_configuration` for the reduction, the method and its
        accuracy.
        """
        I.check_adjacency(adjacency)
        if adjacency == "replace" and self.dim > 1:
            return 1.0 / math.sqrt(self.replace_up_configuration()[0])
        R, w, _, pairs = self._table()
        return I.table_chi_up(R, w, pairs[adjacency], refs=(0, 1))

    # ---------------------------------------------------------- replace-one chi_up, d >= 2
    def replace_up_variance(self, alpha: float, beta: float, psi: float, nodes: int | None = None) -> float:
        """V = Var_{R_x}[l_0(Y; v1, v1', R_x)] at one configuration (dimension d >= 2).

        v1 = e1, v1' = (cos alpha, sin alpha, 0, ...), x = (cos beta, sin beta cos psi,
        sin beta sin psi, 0, ...), angles in radians in [0, pi] (for d = 2, psi in {0, pi}).
        With A, B, C the caps of v1, v1', x and D = A Δ B, f_v1 - f_v1' = (h - l)(1_A - 1_B), so

            V = integral (f_v1 - f_v1')^2 / f_x dmu = (h - l)^2 [mu(D \ C) / l + mu(D ∩ C) / h],
            mu(D) = 2 (s - mu(A∩B)),  mu(D ∩ C) = mu(A∩C) + mu(B∩C) - 2 mu(A∩B∩C):

        linear in the cap-intersection measures, computed by
        :func:`sharpdp.shuffle.indices.two_cap_measure` / ``three_cap_measure`` (relative
        quadrature error below about 1e-7, an a-posteriori estimate: the tests compare
        with the doubled and tripled rules, the largest deviation seen being 1.2e-8). ``nodes``
        overrides their Gauss-Legendre nodes per piece. Returns float (dimensionless).
        """
        if self.dim < 2:
            raise ValueError("replace_up_variance needs dim >= 2 (dim = 1 is the finite table)")
        alpha, beta, psi = (V.real(n, v, lo=0.0, hi=math.pi) for n, v in
                            (("alpha", alpha), ("beta", beta), ("psi", psi)))
        if self.dim == 2 and abs(math.sin(psi)) > 1e-12:
            raise ValueError(f"psi must be 0 or pi for dim = 2 (x in the plane), got {psi}")
        d, th = self.dim, self.theta
        c_bc = math.cos(alpha) * math.cos(beta) + math.sin(alpha) * math.sin(beta) * math.cos(psi)

        def pair(c):
            return float(I.two_cap_measure(d, th, th, c, nodes))

        i_ab, i_ac, i_bc = pair(math.cos(alpha)), pair(math.cos(beta)), pair(c_bc)
        i_abc = I.three_cap_measure(d, th, alpha, beta, psi, nodes) if min(i_ab, i_ac, i_bc) > 0 else 0.0
        mu_d = max(0.0, 2.0 * (self._s - i_ab))
        mu_dc = min(mu_d, max(0.0, i_ac + i_bc - 2.0 * i_abc))
        return (self.h - self.l) ** 2 * ((mu_d - mu_dc) / self.l + mu_dc / self.h)

    def _replace_up_bound(self) -> float:
        """Analytic upper bound on sup V: mu(D) <= 2 min(s, q), mu(D \ C) <= q, mu(D ∩ C) <= s."""
        h, l, s, q = self.h, self.l, self._s, self.q
        m = 2.0 * min(s, q)
        (w1, cap1), w2 = ((1.0 / l, q), 1.0 / h) if l <= h else ((1.0 / h, s), 1.0 / l)
        return (h - l) ** 2 * (min(m, cap1) * w1 + max(0.0, m - cap1) * w2)

    def _circle_configurations(self) -> list[tuple[float, float, float]]:
        """The four configurations of the d = 2 proof (see replace_up_configuration), for the cases
        (h >= l, theta >= 0), (h >= l, theta < 0), (h < l, theta >= 0), (h < l, theta < 0)."""
        r = math.acos(self.theta)
        a4 = 2 * math.pi - 2 * r
        raw = [(2 * r, math.pi - r, math.pi), (math.pi, math.pi, 0.0), (math.pi, 0.0, 0.0),
               (a4, math.pi - 0.5 * a4, math.pi)]
        return [_canonical_angles(*c) for c in raw]

    def replace_up_configuration(self):
        """sup V and a maximising configuration for chi_up under replace-one (d >= 2).

        Returns ``(V, (alpha, beta, psi), method)``: chi_up[replace] = 1 / sqrt(V); the
        configuration as in :meth:`replace_up_variance`; ``method`` is "bound" (V is the analytic bound B
        below, attained: exact; always so for d = 2) or "search" (numerical, d >= 3).

        Reduction (proved). V is linear in the cap-intersection measures (formula in
        :meth:`replace_up_variance`), and mu(D) <= 2 min(s, q) (antipodal pair),
        mu(D \ C) <= q, mu(D ∩ C) <= s give V <= the analytic bound B. When a candidate
        configuration attains B (to 1e-7 relative, the quadrature accuracy) the sup is B and B is
        returned (a slightly smaller chi_up: the safe side for the HCR bound).

        d = 2 (proved: chi_up = 1 / sqrt(B), closed form). Put v1, v1', x at angles 0, a, b;
        the caps are arcs of half-width r = arccos(theta), s = r / pi. If h >= l (weight 1/l off
        C is the larger) and theta >= 0: a = 2r makes A, B adjacent, mu(D) = 2s, and x = -m
        (m the bisector, b = pi + r) puts C = [pi, pi + 2r] outside A ∪ B = [-r, 3r] when r <= pi/3
        (D ∩ C empty) and C^c = [2r - pi, pi] inside it when r >= pi/3 (D \ C = C^c): B is
        attained. h >= l, theta < 0: a = pi gives A ∪ B = circle, mu(D) = 2q, D = A^c ∪ B^c, and
        x = v1' gives D \ C = B^c of measure q: attained. h < l, theta >= 0: a = pi, x = v1 gives
        D ∩ C = A of measure s, D \ C = B: attained. h < l, theta < 0: a = 2 pi - 2r gives
        A ∪ B = circle and D = A^c ∪ B^c one arc of length 4 pi - 4r centred at -m; x = -m puts
        C inside D (r <= 2 pi/3) or D inside C (r >= 2 pi/3): attained. The tests check this
        against a brute force on the discretised circle.

        d >= 3 (numerical, not certified). The configuration space is the Gram matrix of
        (v1, v1', x), i.e. (alpha, beta, psi) in [0, pi]^3. We evaluate V at the four d = 2
        configurations above, at (pi, pi/2, pi/2), on a 7 x 7 x 5 grid, and along the family
        x = -(v1 + v1')/|v1 + v1'| (1-D bounded search in alpha, xatol 1e-10), then refine the
        best two points by Nelder-Mead in all three angles (xatol 1e-7 rad, <= 300 steps). In every case we
        tried (d = 3 ... 1000, h > l and h < l) the maximiser is on that family (psi = pi,
        beta = pi - alpha/2) with alpha < pi, unless the bound B is attained; this is an
        observation, not a proof. The value returned is the largest V found (clipped to B), so
        chi_up is exact up to the quadrature error (about 1e-7 relative) if the search found
        the global sup, and too large otherwise. The tests compare it with Monte Carlo over
        random configurations (d = 3) and with a brute force on the circle (d = 2).
        """
        if getattr(self, "_rep_up", None) is None:
            self._rep_up = self._replace_up_search()
        return self._rep_up

    def replace_chi_up_bounds(self) -> tuple[float, float]:
        """Bracket (lower, upper) of chi_up under replace-one for dim >= 2.

        lower = 1 / sqrt(B) with B the proved analytic bound on sup V (see
        :meth:`replace_up_configuration`): a rigorous lower bound on chi_up, the safe value for the
        HCR lower bound :func:`~sharpdp.shuffle.mse_lower_bound`. upper = 1 / sqrt(V_found (1 - 1e-6)),
        V_found the largest variance found: sup V >= V_found, so it bounds chi_up from above up to
        the cap quadrature's accuracy (an a-posteriori estimate, about 1e-7 relative; 1e-6 taken).
        The two coincide (up to that margin) when the bound is attained, e.g. always for d = 2.

        Source: seed 001, Definition "Shuffle index" (Section 2.3); the HCR bound is its Theorem
        "hcr-chiup-lower-bound".

        Returns
        -------
        (float, float)
            Dimensionless, lower <= chi_up_for("replace") <= upper.

        Raises
        ------
        ValueError
            dim = 1 (use ``chi_up_for("replace")``: the finite table is exact there).
        """
        v, _, _ = self.replace_up_configuration()
        return 1.0 / math.sqrt(self._replace_up_bound()), 1.0 / math.sqrt(v * (1.0 - 1e-6))

    def _replace_up_search(self):
        if self.dim < 2:
            raise ValueError("replace_up_configuration needs dim >= 2 (dim = 1 is the finite table)")
        bound = self._replace_up_bound()
        var = self.replace_up_variance
        circle = self._circle_configurations()
        if self.dim == 2:
            return bound, circle[2 * (self.h < self.l) + (self.theta < 0)], "bound"
        vals = []
        for c in circle + [(math.pi, 0.5 * math.pi, 0.5 * math.pi)]:
            v = var(*c)
            if v >= bound * (1.0 - 1e-7):  # attained up to quadrature error: the bound is the sup
                return bound, c, "bound"
            vals.append((v, c))
        from scipy.optimize import minimize, minimize_scalar

        def fam(a):  # x = -(v1 + v1') / |v1 + v1'|, coplanar with the pair
            return (a, math.pi - 0.5 * a, math.pi)

        res = minimize_scalar(lambda a: -var(*fam(a)), bounds=(0.0, math.pi), method="bounded",
                              options={"xatol": 1e-10})
        vals.append((-res.fun, fam(float(res.x))))
        g, gp = np.linspace(0.0, math.pi, 7), np.linspace(0.0, math.pi, 5)
        vals += [(var(a, b, c), (a, b, c)) for a in g for b in g for c in gp]
        vals.sort(key=lambda t: -t[0])
        best = vals[0]
        for v0, c0 in vals[:2]:
            res = minimize(lambda z: -var(*_canonical_angles(*z)), np.array(c0), method="Nelder-Mead",
                           options={"xatol": 1e-7, "fatol": 1e-13 * v0, "maxiter": 300})
            c = _canonical_angles(*res.x)
            best = max(best, (var(*c), c))
        v, c = best
        if v >= bound * (1.0 - 1e-7):
            return bound, c, "bound"
        return v, tuple(float(t) for t in c), "search"

    @property
    def local_epsilon(self) -> float:
        """Pure-LDP level eps0 = |log(h / l)| in nats (replace-one, density ratio on vs off the cap)."""
        return abs(math.log(self.h / self.l))

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


# ------------------------------------------------------------------------------ general 1-D
class GeneralRandomizer(LocalRandomizer):
    """A 1-D local randomizer given by its output densities and a blanket (seed 001, Section 2).

    The output space is an interval ``support = (lo, hi)`` that should hold (nearly) all the
    output mass (truncate an unbounded mechanism and renormalise first, as the seed's Section
    "Regularity conditions" suggests; in certified mode mass left outside is charged to the
    accountant's value, see Notes). Indices and the privacy-amplification law are computed by quadrature on cells
    aligned with ``breakpoints`` (put every kink or jump of the densities there). A
    d-dimensional randomizer whose privacy-amplification variables depend on y only through one
    coordinate (e.g. rotation-invariant Gaussian-type ones) is handled by passing that
    coordinate's densities.

    Parameters
    ----------
    density : numba-compiled callable ``density(y, x) -> float``
        Density of R_x at y (w.r.t. Lebesgue measure on the support).
    inputs : array_like of float, shape (m,)
        The inputs over which the worst case is taken (e.g. the extreme points of the input
        domain); the sup in chi_lo / chi_up and the laws runs over these only. :meth:`sample`
        accepts inputs in [min(inputs), max(inputs)].
    support : (float, float)
        Finite interval lo < hi. Certified mode allows densities with mass outside it (each
        density's integral over the support must not exceed 1), at the cost of a surcharge on
        the accountant's value (Notes); :meth:`sample` and the moments, however, use the
        densities restricted to the support and renormalised.
    blanket : numba-compiled callable ``blanket(y) -> float``, optional
        Blanket density R_BG (also the output law of ⊥ under zero-out). Required if gamma > 0.
    gamma : float
        Blanket mass in [0, 1]; gamma R_BG <= R_x is checked at every quadrature node.
        gamma = 0 means no blanket: chi_lo = 0 and no laws (chi_up is still defined).
    breakpoints : sequence of float
        Points inside the support where a density is not smooth.
    cells : int
        Number of quadrature cells (>= 1). order : int, Gauss-Legendre points per cell (2..64).
    log_curvature : float, optional
        The user's declaration ``|d^2/dy^2 log R_x(y)| <= log_curvature`` for every given input
        x and for the blanket, on each piece between consecutive breakpoints (support ends
        included), with every density > 0 on the support. Examples: N(x, s^2) has curvature
        exactly 1/s^2; the blanket-mixed Gaussian with |x| <= 1 and s^2 >= 1/8 is bounded by
        1/s^2; densities constant on each piece (randomized response) have 0. When given, the
        law handed to the accountant and :meth:`index_enclosure` are rigorous (``certified`` is
        True) for the given ``inputs`` only; when None, they are quadrature estimates
        (``certified`` is False). The bound is checked by second differences at the grid points
        only: a violation between grid points goes undetected and **voids the certificate**
        (e.g. a narrow spike between two grid points). Must be small enough that a grid of at
        most 2^20 intervals reaches K h^2 / 8 <= 1e-6 (else ValueError).

    Attributes
    ----------
    certified : bool
        Whether the accountant's input law is a rigorous upper law (``log_curvature`` given).
        The certificate covers the worst case over the given ``inputs`` only: inputs passed to
        :meth:`sample` other than those (allowed within their range) are not covered.
    quad_error : dict
        A-posteriori **estimates** of the Gauss-Legendre errors: the differences between the
        ``order`` and ``2 * order`` rules for chi_lo / chi_up and (``sampler_tv``) for the
        cell masses summed over the cells, and the largest deviation of a computed total mass
        from 1. Not bounds.
    error_bounds : dict
        Certified mode only (else empty): ``kappa`` (largest relative half-width log-factor of
        the cell integrals, K h^2 / 8 + rounding margin + the end-point nudge term, see
        :func:`sharpdp.shuffle.indices.certified_log_error`), ``intervals`` (grid size),
        ``mass[i]`` (rigorous enclosure of the integral of each density over the support, on a
        finer grid aiming at K h^2 / 8 <= 1e-10 within the same 2^20 cap: its kappa is
        ``mass_kappa``) and ``missing_mass`` (max over the densities and the blanket of 1 - the lower end of
        ``mass[i]``, rounded up: a rigorous upper bound on the mass of each outside the
        support; ~ mass_kappa when the support holds all the mass). The accountant adds the
        surcharge :meth:`privacy_amplification_surcharge` (<= ``missing_mass``) to its upper
        value; see Notes.

    Raises
    ------
    ValueError
        Bad support, gamma, inputs, breakpoints, cells, order or log_curvature (the error names
        the parameter); a density or the blanket negative or not finite at a node; gamma R_BG >
        R_x at a node; with ``log_curvature``: a density or the blanket below the smallest
        normal float (np.finfo(float).tiny: zero or subnormal) at a grid point (the error names
        ``density`` or ``blanket``), a second divided difference of a log-density above the
        declared bound (the declaration is refuted), a declared bound too large for the grid
        cap, or a density whose certified integral over the support exceeds 1.
    TypeError
        ``density``/``blanket`` are not Numba-compiled callables of the stated signatures.

    Notes
    -----
    Estimate mode (no ``log_curvature``). Each integral is computed with ``order`` and
    ``2 * order`` Gauss-Legendre points per cell; the law returned to the accountant replaces
    l_eps on each cell by the two-point law on the cell's range [min l, max l] (from the nodes
    and the cell ends) with the cell's mass and mean. It is an upper law only if the quadrature
    were exact and l_eps monotone on each cell, so the accountant's figure is an **estimate**;
    :meth:`privacy_amplification_laws` warns once per instance.

    Certified mode. With ``g = log R`` and ``|g''| <= K`` on an interval of length h, g stays
    within K h^2 / 8 of its linear interpolant (interpolation error formula), so on a uniform
    grid (per piece, fine enough that K h^2 / 8 <= 1e-8 if 2^20 intervals allow it, and
    <= 1e-6 always, else ValueError; at piece ends kappa also covers the one-ulp inward nudge
    of the evaluation point, :func:`sharpdp.shuffle.indices.certified_log_error`) each cell
    integral of a density lies within the factor exp(±kappa) of the integral of the
    exponential of the interpolant (a logarithmic mean), and a ratio R_a / R_b lies between its
    end-point values times exp(±2 kappa). This gives per cell rigorous bounds on the blanket mass
    P_c, on the first moment of R_a - e^eps R_b and on the range of l_eps, from which
    :func:`sharpdp.shuffle.indices.certified_two_point_atoms` builds a law that dominates the
    true one in the increasing convex order; E[(sum of iid L)_+] is increasing in that order,
    so the accountant's upper value stays a rigorous upper bound on delta(eps).

    Mass outside the support S is not assumed away (the enclosure ``error_bounds["mass"]`` can
    only bound it: m_a := R_a(S^c) <= 1 - its lower end; an integral over S above 1 is refused).
    Split L = L_in + L_out, L_in = L 1{Y in S}. Since (x + y)_+ <= x_+ + y_+ and
    (sum B_i L_out,i)_+ <= sum B_i (L_out,i)_+, D_up(eps) <= E[(sum B_i L_in,i)_+] / (n gamma)
    + E[(L_out)_+], and E[(L_out)_+] = ∫_{S^c} (R_a - e^eps R_b)_+ <= m_a (for every eps). L_in
    has the cell masses P_c on S and an atom at 0 of mass 1 - R_BG(S) <= m_BG; the law handed to
    the accountant places the unassigned mass greedily on the cells' upper ends and on 0 (capacity
    m_BG), so it is a probability law dominating L_in in the increasing convex order. The second
    term, bounded by the max over the pairs of m_a, is :meth:`privacy_amplification_surcharge`,
    which the accountant adds to every upper value (get_delta, get_delta_bounds, report,
    get_epsilon). When S holds all the mass it is ~ ``mass_kappa`` (about 1e-10, from a finer
    grid used for the mass enclosures only: ~1e-4 of a delta of 1e-6). The accountant's lower
    value is that of the law handed to it (an upper law), not a bound on the true delta. The
    declared ``log_curvature`` is assumed between grid points (a violation there voids the
    certificate), gamma R_BG <= R_x is assumed outside S (unchecked there), as is R_BG > 0
    wherever some R_x > 0 outside S (the identity for E[(L_out)_+] needs R_a << R_BG there), and
    the certificate covers the given ``inputs`` only.
    The decomposition gamma R_BG <= R_x is checked at the nodes and grid points only (it holds
    by construction for a mixture gamma R_BG + (1 - gamma) Q_x).
    """

    _FP = 1e-12  # relative rounding tolerance of the node checks

    def __init__(self, density, inputs, support, *, blanket=None, gamma: float = 0.0, breakpoints=(),
                 cells: int = 2048, order: int = 8, log_curvature: float | None = None) -> None:
        from sharpdp._kernels import shuffle as K

        self.inputs = V.real_array("inputs", inputs, ndim=1)
        if not (isinstance(support, (tuple, list)) and len(support) == 2):
            raise ValueError("support must be a pair (lo, hi)")
        lo = V.real("support[0]", support[0])
        hi = V.real("support[1]", support[1])
        if not lo < hi:
            raise ValueError(f"support must satisfy lo < hi, got ({lo}, {hi})")
        self.support = (lo, hi)
        self.gamma = V.real("gamma", gamma, lo=0.0, hi=1.0)
        if self.gamma > 0 and blanket is None:
            raise ValueError("gamma > 0 needs a blanket density")
        cells = V.integer("cells", cells, lo=1)
        self.order = V.integer("order", order, lo=2, hi=64)
        self.log_curvature = None if log_curvature is None else V.real("log_curvature", log_curvature, lo=0.0)
        self.certified = self.log_curvature is not None
        bps = np.sort(V.real_array("breakpoints", breakpoints, ndim=1, lo=lo, hi=hi, allow_empty=True))
        self._knots = knots = np.unique(np.concatenate([[lo], bps, [hi]]))
        counts = np.maximum(1, np.round(cells * np.diff(knots) / (hi - lo)).astype(int))
        self.edges = np.unique(np.concatenate(
            [np.linspace(a, b, c + 1) for a, b, c in zip(knots[:-1], knots[1:], counts)]))
        self.dim = 1
        self._has_blanket = blanket is not None
        if blanket is None:
            from numba import njit

            blanket = njit(lambda y: 0.0)
        self._density, self._blanket = density, blanket
        try:
            tabs = {}
            for o in (self.order, 2 * self.order):
                y, w = K.gauss_legendre_nodes(self.edges, o)
                tabs[o] = (y, w, K.eval_densities(density, blanket, self.inputs, y))
            self._edge_table = K.eval_densities(density, blanket, self.inputs, self.edges)
        except Exception as exc:  # numba typing errors: the callables are not usable
            raise TypeError("density and blanket must be Numba-compiled callables "
                            "density(y: float, x: float) -> float and blanket(y: float) -> float") from exc
        self._tabs = tabs
        _, w, T = tabs[self.order]
        if not np.all(np.isfinite(T)) or np.any(T < 0):
            raise ValueError("density and blanket must be finite and >= 0 on the support")
        for _, _, Tt in tabs.values():
            self._check_blanket(Tt)
        rows = range(T.shape[0]) if self.gamma > 0 else range(T.shape[0] - 1)
        mass_err = max(abs(float(np.dot(tabs[o][1], tabs[o][2][i])) - 1.0) for o in tabs for i in rows)
        cell_mass = {o: (tabs[o][1] * tabs[o][2][:-1]).reshape(len(self.inputs), -1, o).sum(axis=2) for o in tabs}
        self.quad_error = {"mass": mass_err,
                           "sampler_tv": float(np.abs(cell_mass[self.order] - cell_mass[2 * self.order]).sum(1).max())}
        for adj in ("zero_out", "replace"):
            if (adj == "zero_out" and not self._has_blanket) or (adj == "replace" and self.inputs.size < 2):
                continue  # no such neighbouring pair
            lo1, up1 = self._indices(adj, self.order)
            lo2, up2 = self._indices(adj, 2 * self.order)
            self.quad_error[f"chi_lo[{adj}]"] = abs(lo2 - lo1) if lo2 != lo1 else 0.0
            self.quad_error[f"chi_up[{adj}]"] = abs(up2 - up1) if up2 != up1 else 0.0
        self.error_bounds = {}
        self._cert = self._certify(K, counts) if self.certified else None
        self._warned = False
        self._moments = None

    def _check_blanket(self, T) -> None:
        if self.gamma > 0:
            slack = T[:-1] - self.gamma * T[-1]
            if np.any(slack < -self._FP * np.maximum(T[:-1], 1e-300)):
                raise ValueError("gamma: gamma * blanket exceeds R_x somewhere; not a blanket decomposition")

    def _certify(self, K, counts) -> dict:
        """Tabulate the certified grids and check the declaration (see Notes)."""
        kappa_max, max_intervals = 1e-6, 2**20
        lens = np.diff(self._knots)

        def grid(kappa_target, floor, least):
            """Intervals per piece for K h^2 / 8 <= kappa_target, >= floor, scaled down to about
            max_intervals in all if more (but >= least)."""
            need = np.minimum(np.ceil(lens * math.sqrt(self.log_curvature / (8 * kappa_target))), max_intervals)
            n = np.maximum(floor, need.astype(np.int64))
            if n.sum() > max_intervals:
                n = np.maximum(least, np.floor(n * (max_intervals / n.sum())).astype(np.int64))
            return n

        n_int = grid(1e-8, counts, 1)
        if np.max(self.log_curvature * (lens / n_int) ** 2 / 8) > kappa_max:
            raise ValueError(f"log_curvature: {self.log_curvature} is too large for this support: the certified "
                             f"grid would need more than {max_intervals} intervals to keep K h^2 / 8 <= "
                             f"{kappa_max} (shrink the support or check the declared bound)")
        T, left, kap, Iv = self._certified_table(K, n_int)
        # the mass enclosures (hence the surcharge) come from a finer grid: only sums are needed there
        n_mass = grid(1e-10, n_int, n_int)
        kap_m, Iv_m = (kap, Iv) if np.array_equal(n_mass, n_int) else self._certified_table(K, n_mass, False)[2:]
        ek, ek_m = np.exp(kap), np.exp(kap_m)
        names = self._row_names()
        mass, missing = {}, np.empty(T.shape[0])
        for r in range(T.shape[0]):
            m_lo, m_hi = float(np.sum(Iv_m[r] / ek_m)) * (1 - 1e-12), float(np.sum(Iv_m[r] * ek_m)) * (1 + 1e-12)
            if m_lo > 1.0:
                raise ValueError(f"density: the integral of the density of {names[r]} over the support is within "
                                 f"[{m_lo!r}, {m_hi!r}], above 1 (not a probability density), or log_curvature "
                                 f"is too small")
            mass[names[r]] = (m_lo, m_hi)
            missing[r] = min(math.nextafter(1.0 - m_lo, 2.0), 1.0)  # rounded up
        self.error_bounds = {"kappa": float(kap.max()), "intervals": int(left.size), "mass": mass,
                             "mass_kappa": float(kap_m.max()), "missing_mass": float(missing.max())}
        return {"TL": T[:, left], "TR": T[:, left + 1], "I": Iv, "ek": ek, "e2k": np.exp(2 * kap),
                "missing": missing}

    def _row_names(self) -> list[str]:
        return [f"input x={float(x)!r}" for x in self.inputs] + ["the blanket"]

    def _certified_table(self, K, n_int, check: bool = True):
        """Densities on the certified grid with ``n_int`` intervals per piece, checked (finite and
        normal; if ``check`` also the blanket decomposition and log_curvature at the grid points):
        (T, left, kappa, I)."""
        pts, left, length, shift = I.certified_grid(self._knots, n_int)
        T = K.eval_densities(self._density, self._blanket, self.inputs, pts)
        if not self._has_blanket:
            T = T[:-1]
        names = self._row_names()
        bad = ~(np.isfinite(T) & (T >= np.finfo(float).tiny))
        if np.any(bad):
            r, c = np.argwhere(bad)[0]
            raise ValueError(f"{'blanket' if r == self.inputs.size else 'density'}: certified mode (log_curvature) "
                             f"needs every density and the blanket finite and >= {float(np.finfo(float).tiny)!r} (no "
                             f"zeros or subnormals) on the support; {names[r]} gives {float(T[r, c])!r} at "
                             f"y={float(pts[c])!r} (restrict the support)")
        if check and self._has_blanket:
            self._check_blanket(T)
        G = np.log(T)
        hit = I.log_curvature_violation(G, pts, left, self.log_curvature) if check else None
        if hit is not None:
            r, y, val = hit
            raise ValueError(f"log_curvature: the declared bound {self.log_curvature} on |d^2/dy^2 log R| is "
                             f"violated: the finite-difference d^2/dy^2 log R for {names[r]} is {val:.6g} "
                             f"near y={y:.6g}")
        kap = I.certified_log_error(G, pts, left, length, shift, self.log_curvature)
        return T, left, kap, I.certified_interval_integrals(T, G, left, length)

    def _params(self) -> dict:
        return {"inputs": self.inputs.tolist(), "gamma": self.gamma, "log_curvature": self.log_curvature}

    def _pairs(self, adjacency: str):
        m = self.inputs.size
        if adjacency == "zero_out" and not self._has_blanket:
            raise ValueError("zero_out adjacency needs a blanket (the law of ⊥)")
        if adjacency == "replace" and m < 2:
            raise ValueError("inputs: replace adjacency needs at least two inputs")
        return I.table_pairs(m, adjacency, bottom=m)

    def _indices(self, adjacency: str, order: int) -> tuple[float, float]:
        I.check_adjacency(adjacency)
        _, w, T = self._tabs[order]
        pairs = self._pairs(adjacency)
        lo = I.table_chi_lo(T, w, T[-1], self.gamma, pairs) if self.gamma > 0 else 0.0
        return lo, I.table_chi_up(T, w, pairs, refs=range(self.inputs.size))

    def chi_lo_for(self, adjacency: str = "zero_out") -> float:
        """chi_lo by quadrature: an estimate (error estimate in ``quad_error``; rigorous
        enclosure: :meth:`index_enclosure`); 0 when gamma = 0."""
        return self._indices(adjacency, 2 * self.order)[0]

    def chi_up_for(self, adjacency: str = "zero_out") -> float:
        """chi_up by quadrature (an estimate, see :meth:`chi_lo_for`), sup over the given inputs
        as pairs and references."""
        return self._indices(adjacency, 2 * self.order)[1]

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, zero-out (seed 001, Section 2.3), quadrature estimate."""
        return self.chi_lo_for("zero_out")

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out (seed 001, Section 2.3), quadrature estimate."""
        return self.chi_up_for("zero_out")

    # --- certified mode ------------------------------------------------------------------
    def _ratio_range(self, r: int, ref: int):
        """Per-interval rigorous range of R_r / R_ref (certified mode)."""
        C = self._cert
        x0, x1 = C["TL"][r] / C["TL"][ref], C["TR"][r] / C["TR"][ref]
        return np.minimum(x0, x1) / C["e2k"], np.maximum(x0, x1) * C["e2k"]

    def index_enclosure(self, adjacency: str = "zero_out") -> dict:
        """Rigorous enclosures of chi_lo and chi_up (seed 001, Section 2.3) under ``log_curvature``.

        Returns
        -------
        dict
            ``{"chi_lo": (lower, upper), "chi_up": (lower, upper)}`` (floats; chi_lo is (0, 0)
            when gamma = 0; an upper end may be inf). The sup runs over the given inputs.

        Raises
        ------
        ValueError
            Without the ``log_curvature`` declaration (the indices are then estimates only), or
            zero-out without a blanket.
        """
        I.check_adjacency(adjacency)
        if not self.certified:
            raise ValueError("log_curvature: index enclosures need the log_curvature declaration; "
                             "chi_lo / chi_up are quadrature estimates without it")
        C = self._cert
        pairs = self._pairs(adjacency)

        def var(a, b, ref):
            return I.certified_pair_variance(self._ratio_range(a, ref), self._ratio_range(b, ref),
                                             C["I"][ref] / C["ek"], C["I"][ref] * C["ek"])

        def chi(v_lo, v_hi, scale):
            return (math.sqrt(scale / v_hi) if v_hi > 0 else math.inf,
                    math.sqrt(scale / v_lo) if v_lo > 0 else math.inf)

        out = {"chi_lo": (0.0, 0.0)}
        if self.gamma > 0:
            vs = [var(a, b, self.inputs.size) for a, b in pairs]
            out["chi_lo"] = chi(max(v[0] for v in vs), max(v[1] for v in vs), self.gamma)
        vs = [var(a, b, x) for a, b in pairs for x in range(self.inputs.size)]
        out["chi_up"] = chi(max(v[0] for v in vs), max(v[1] for v in vs), 1.0)
        return out

    def _certified_atoms(self, epsilon: float, a: int, b: int):
        """Atoms of the certified upper law of l_eps = (R_a - e^eps R_b)/R_BG (see Notes)."""
        C, bg, ee = self._cert, self.inputs.size, math.exp(epsilon)
        ra, rb = self._ratio_range(a, bg), self._ratio_range(b, bg)
        Iv, ek = C["I"], C["ek"]
        return I.certified_two_point_atoms(ra[0] - ee * rb[1], ra[1] - ee * rb[0], Iv[bg] / ek, Iv[bg] * ek,
                                           Iv[a] * ek - ee * Iv[b] / ek, outside=C["missing"][bg])

    def privacy_amplification_surcharge(self, epsilon: float, adjacency: str = "zero_out") -> float:
        """Upper bound on the part of D_up(eps) due to outputs outside the support (see Notes).

        :class:`~sharpdp.shuffle.ShuffleAccountant` adds it to its upper value. Certified mode:
        max over the neighbouring pairs (a, b), both orders, of the bound
        ``1 - mass[a][0]`` (rounded up) on R_a(S^c) >= E[(l_eps)_+; Y outside S]; it does not
        depend on ``epsilon`` (>= 0, nats). Estimate mode: 0.0 (the whole figure is an estimate).

        Returns
        -------
        float
            In [0, 1], in units of delta (a probability).

        Raises
        ------
        ValueError
            Bad ``epsilon`` or ``adjacency``, or no such neighbouring pair (as
            :meth:`privacy_amplification_laws`).
        """
        V.real("epsilon", epsilon, lo=0.0, allow_inf=True)
        I.check_adjacency(adjacency)
        pairs = self._pairs(adjacency)
        if not self.certified:
            return 0.0
        return float(max(self._cert["missing"][a] for a, _ in pairs))

    # --- estimate mode -------------------------------------------------------------------
    def _cell_atoms(self, epsilon: float, a: int, b: int, spread: bool):
        """Per-cell atoms of l_eps = (R_a - e^eps R_b)/R_BG under R_BG (two-point spread or cell mean)."""
        _, w, T = self._tabs[2 * self.order]
        o, ee = 2 * self.order, math.exp(epsilon)
        bg, num = T[-1], T[a] - ee * T[b]
        if np.any((bg <= 0) & ((T[a] > 0) | (T[b] > 0))):
            raise ValueError("the blanket does not dominate the output densities (R_x not << R_BG)")
        P = (w * bg).reshape(-1, o).sum(axis=1)
        M = (w * num).reshape(-1, o).sum(axis=1)
        total = P.sum()
        P, M = P / total, M / total
        keep = P > 0
        mean = np.zeros_like(P)
        mean[keep] = M[keep] / P[keep]
        if not spread:
            return I.merge_atoms(mean, P)
        with np.errstate(divide="ignore", invalid="ignore"):
            lnode = np.where(bg > 0, num / bg, np.nan).reshape(-1, o)
            E = self._edge_table
            ledge = np.where(E[-1] > 0, (E[a] - ee * E[b]) / E[-1], np.nan)
        lo_c = np.fmin(np.nanmin(lnode, axis=1), np.fmin(ledge[:-1], ledge[1:]))
        hi_c = np.fmax(np.nanmax(lnode, axis=1), np.fmax(ledge[:-1], ledge[1:]))
        mean = np.clip(mean, lo_c, hi_c)
        width = hi_c - lo_c
        p_hi = np.where(width > 0, P * (mean - lo_c) / np.where(width > 0, width, 1.0), 0.0)
        p_lo = P - p_hi
        lo_c = np.where(width > 0, lo_c, mean)
        return I.merge_atoms(np.concatenate([lo_c[keep], hi_c[keep]]), np.concatenate([p_lo[keep], p_hi[keep]]))

    def _pav_atoms(self, epsilon: float, adjacency: str = "zero_out", *, spread: bool = True):
        """(gamma, values, probs) per neighbouring pair and order: the certified upper law when
        ``certified`` (and ``spread``), else the cell-wise two-point spread estimate;
        ``spread=False`` gives the mean-preserving contraction (cell means), whose accountant
        value is a lower estimate."""
        eps = V.real("epsilon", epsilon, lo=0.0)
        I.check_adjacency(adjacency)
        if self.gamma == 0.0:
            raise ValueError("gamma = 0: no blanket, the blanket accountant does not apply")
        if spread and self.certified:
            atoms = [self._certified_atoms(eps, a, b) for a, b in self._pairs(adjacency)]
        else:
            atoms = [self._cell_atoms(eps, a, b, spread) for a, b in self._pairs(adjacency)]
        return I.unique_laws([(self.gamma, *vp) for vp in atoms])

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = "zero_out"):
        """``(gamma, FiniteLaw)`` per pair and order for the accountant.

        Certified upper laws when ``log_curvature`` was declared; otherwise the cell-wise
        two-point spread estimate (see Notes), and a UserWarning (once per instance) says that
        the accountant's figure is then not certified.
        """
        if not self.certified and not self._warned:
            import warnings

            warnings.warn("GeneralRandomizer without log_curvature: the privacy-amplification law is a "
                          "quadrature estimate, so the accountant's delta is an estimate, not certified",
                          UserWarning, stacklevel=2)
            self._warned = True
        return I.finite_laws(self._pav_atoms(epsilon, adjacency))

    # --- sampler and estimator -----------------------------------------------------------
    def _inputs_column(self, name: str, x) -> tuple[np.ndarray, tuple]:
        arr = V.real_array(name, x)
        if not (arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1)):
            raise ValueError(f"{name} must have shape (n,) or (n, 1), got {arr.shape}")
        return arr.reshape(-1), arr.shape

    def sample(self, x, rng=None) -> np.ndarray:
        """Randomize every input by inverse-CDF sampling (Numba kernel, vectorised).

        For each distinct input the cell masses are tabulated with the ``order``-point
        Gauss-Legendre rule on the ``cells`` cells; a uniform picks the cell and, inside it, y
        solves Q[a, y] = u * Q[a, b] (the same rule on [a, y]) by safeguarded Newton steps (to
        1e-13 of the cell width; 1-2 steps for smooth densities). Accuracy: the total-variation
        distance to R_x is at most the quadrature error of the cell masses summed over the cells
        (an a-posteriori estimate, the order vs 2 * order difference, is
        ``quad_error["sampler_tv"]`` for the given inputs) plus that of the within-cell rule,
        of the same order for densities smooth on each cell. The cost is
        O(#distinct inputs * cells * order) for the tables plus O(order) density evaluations
        per Newton step per draw; round continuous inputs to a grid if they are many. A C++
        sampler cannot call the user's Numba densities, hence Numba here.

        Parameters
        ----------
        x : array_like of float64, shape (n,) or (n, 1)
            Inputs in [min(inputs), max(inputs)], n >= 1.
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the uniforms (None: fresh OS entropy); identical output for a given seed.

        Returns
        -------
        numpy.ndarray of float64, the shape of ``x``
            One message per input, in the support: a draw from R_x restricted to the support
            and renormalised, which is the certified mechanism only if the support holds all
            its mass (total-variation distance <= ``error_bounds["missing_mass"]`` otherwise).

        Raises
        ------
        ValueError
            ``x`` empty, not finite, of another shape, or outside the inputs' range; a density
            negative or without mass for some input.
        """
        from sharpdp._kernels import shuffle as K

        xs, shape = self._inputs_column("x", x)
        lo_x, hi_x = float(self.inputs.min()), float(self.inputs.max())
        if xs.min() < lo_x or xs.max() > hi_x:
            raise ValueError(f"x must lie in [{lo_x}, {hi_x}] (the range of inputs covered by the privacy "
                             f"analysis), found values in [{xs.min()}, {xs.max()}]")
        gen = as_generator(rng)
        u_cell, u_in = gen.random(xs.size), gen.random(xs.size)
        uniq, inv = np.unique(xs, return_inverse=True)
        perm = np.argsort(inv, kind="stable")
        starts = np.searchsorted(inv[perm], np.arange(uniq.size + 1))
        t, w = np.polynomial.legendre.leggauss(self.order)
        y = K.sample_general(self._density, uniq, starts.astype(np.int64), perm.astype(np.int64),
                             self.edges, t, w, u_cell, u_in)
        return y.reshape(shape)

    def _conditional_moments(self):
        """(points, E[Y | x], Var[Y | x]) at the inputs and the midpoints between sorted inputs."""
        if self._moments is None:
            from sharpdp._kernels import shuffle as K

            u = np.unique(self.inputs)
            pts = np.unique(np.concatenate([u, 0.5 * (u[1:] + u[:-1])]))
            y, w, _ = self._tabs[2 * self.order]
            T = K.eval_densities(self._density, self._blanket, pts, y)[:-1]
            mass = T @ w
            mu = (T @ (w * y)) / mass
            var = ((T * (y[None, :] - mu[:, None]) ** 2) @ w) / mass
            self._moments = (pts, mu, var)
        return self._moments

    def affine_map(self) -> tuple[float, float]:
        """(alpha, beta) with E[Y | x] = alpha + beta x, by quadrature (order 2 * ``order``).

        Affinity is checked at the given inputs and the midpoints between consecutive ones
        (residual <= 1e-8 (1 + max |E[Y|x]| + max sd[Y|x])).

        Returns
        -------
        (float, float)
            alpha (output units) and beta (output units per input unit), beta != 0.

        Raises
        ------
        ValueError
            Fewer than two distinct inputs, E[Y | x] not affine at those points, or beta = 0.
        """
        pts, mu, var = self._conditional_moments()
        if pts.size < 2:
            raise ValueError("inputs: need at least two distinct inputs to identify E[Y | x] = alpha + beta x")
        beta, alpha = np.polyfit(pts, mu, 1)
        resid = float(np.max(np.abs(alpha + beta * pts - mu)))
        tol = 1e-8 * (1 + float(np.max(np.abs(mu))) + math.sqrt(float(var.max())))
        if resid > tol:
            raise ValueError(f"density: E[Y | x] is not affine in x over the given inputs (residual {resid:.3g}); "
                             "no unbiased linear estimator")
        if not abs(beta) > tol:
            raise ValueError("density: E[Y | x] does not depend on x (beta = 0); the mean is not estimable")
        return float(alpha), float(beta)

    def estimate(self, messages) -> np.ndarray:
        """Unbiased estimate (mean(messages) - alpha) / beta of the mean input, float64 shape (1,).

        Valid when E[Y | x] = alpha + beta x (see :meth:`affine_map`, which raises otherwise);
        then E[estimate] is the mean of the users' inputs, and its variance is at most
        ``mse_single / n``.

        Parameters
        ----------
        messages : array_like of float64, shape (n,) or (n, 1), n >= 1
            One message per user, e.g. from :meth:`sample`.

        Returns
        -------
        numpy.ndarray of float64, shape (1,)

        Raises
        ------
        ValueError
            ``messages`` empty, not finite or of another shape; E[Y | x] not affine (see
            :meth:`affine_map`).
        """
        y, _ = self._inputs_column("messages", messages)
        alpha, beta = self.affine_map()
        return np.array([(y.mean() - alpha) / beta])

    @property
    def mse_single(self) -> float:
        """Worst-case single-user MSE Var[Y | x] / beta^2 of (Y - alpha) / beta, over the given inputs
        and the midpoints between them (quadrature; raises like :meth:`affine_map`)."""
        _, beta = self.affine_map()
        return float(self._conditional_moments()[2].max()) / beta**2
