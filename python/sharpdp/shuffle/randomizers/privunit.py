"""PrivUnit on the unit sphere.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition A.5.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import as_generator, core_key, core_threads, refuse_unsafe_release
from sharpdp.shuffle import sphere as S
from sharpdp.shuffle import tables as TB
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.randomizers._table import TableRandomizer
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.randomizers.privunit_coplanar import checked_replace_variance, coplanar_three_cap_measure
from sharpdp.shuffle.sphere import canonical_angles, cap_quantities

__all__ = ["PrivUnit", "privunit_constant"]


def privunit_constant(theta: float, dim: int) -> float:
    """Leading constant C(theta, d) = q / ((1 - q) d alpha^2) of PrivUnit.

    Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Proposition 3.7.

    Err_1 = C(theta, d) d chi_lo^2 (1 + O(chi_lo^-1)) in the high-privacy regime. Following the
    reading in `docs/papers.md` §1.2 item 7 (of Proposition 3.7), inf_theta C(theta, d) is attained at theta = 0 and is
    below pi/2 for every finite d: pi^2/8 at d = 2, about 1.4943 at d = 10 and 1.5630 at
    d = 100; pi/2 is only the d -> infinity limit (the "liminf >= pi/2" of Proposition 3.7).

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
    q, s, alpha = cap_quantities(th, d)
    return q / (s * d * alpha**2)


class PrivUnit(TableRandomizer):
    """PrivUnit(p, theta) on the unit sphere S^{d-1} (*Shuffling-Aware Optimization for Private Vector Mean
    Estimation*, Definition A.5).

    Given a unit input v, output Y uniform on the cap C_theta(v) = {u : <u, v> >= theta} with
    probability p and uniform on its complement otherwise. Output density w.r.t. the uniform
    measure mu: h = p / (1 - q) on the cap, l = (1 - p) / q off it, q = P(<U, v> < theta).
    Blanket: R_BG = mu with mass gamma = min(h, l). E[Y] = m v, m = alpha (p + q - 1) / q
    (Appendix A.4, eq. (privunit-m)), unbiased estimator Y / m, Err_1 = 1/m^2 - 1.

    Parameters
    ----------
    p : float
        Cap probability in (0, 1), |p - (1 - q)| > 1e-12 (else m = 0 and no unbiased estimator exists).
    theta : float
        Cap threshold in (-1, 1).
    dim : int
        Dimension d >= 1 (d = 1 is randomized response RR(p), Proposition 3.8 of *Shuffling-Aware Optimization for
        Private Vector Mean Estimation*).

    Raises
    ------
    ValueError
        If p is not in (0, 1) or p = 1 - q, theta not in (-1, 1), dim < 1, or NaN.

    Warnings
    --------
    :meth:`sample` is NOT floating-point safe (``floating_point_safe = False``, ``sampler_tv =
    None``): it draws the cap coin, the inner product (inverse incomplete beta) and the direction
    in floating point, and releases a float unit vector whose low-order bits are not shown to be
    independent of the input. The accountant's figures cover the mathematical PrivUnit only, not
    these messages (docs/sampling.md §6). Use it for utility studies only. A release
    (``rng=None``) is therefore refused unless ``allow_unsafe_float=True`` is passed (research
    only); a seeded call is not private either, even with a secret seed. The floating-point-safe
    release is :class:`~sharpdp.shuffle.LatticePrivUnit` (same laws, integer messages, exact sampler
    within a charged total variation eta, docs/sampling.md §10.6); build it with
    ``LatticePrivUnit(p, theta, dim)`` or ``LatticePrivUnit.from_privunit(pu)``.
    """

    floating_point_safe = False
    """The release sampler is a floating-point approximation (docs/sampling.md §6)."""

    def __init__(self, p: float, theta: float, dim: int) -> None:
        self.p = V.real("p", p, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self.theta = V.real("theta", theta, lo=-1.0, hi=1.0, lo_open=True, hi_open=True)
        self.dim = V.integer("dim", dim, lo=1)
        self.q, self._s, self.alpha = cap_quantities(self.theta, self.dim)
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
        """Lower shuffle index, zero-out: chi_lo^2 = gamma q (1 - q) / Delta^2 (Appendix A.4,
        eq. (chilo-Delta))."""
        return self.chi_lo_for("zero_out")

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5 (Section 2.4)).

        sup over the reference input x of E_mu[(f_v - 1)^2 / f_x]; the functional is linear in
        mu(C(v) ∩ C(x)), so the sup is at x = v or x = -v (both evaluated exactly).
        """
        return self.chi_up_for("zero_out")

    def chi_lo_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_lo for the given adjacency (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5; blanket R_BG = mu).

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
        check_adjacency(adjacency)
        R, w, bg, pairs = self._table()
        return TB.table_chi_lo(R, w, bg, self.gamma, pairs[adjacency])

    def chi_up_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_up for the given adjacency (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5).

        zero_out: see :attr:`chi_up`. replace, d = 1: the finite table (RR). replace, d >= 2:
        1 / sqrt(sup V), V = Var_{R_x}[l_0(Y; v1, v1', R_x)] over the pair (v1, v1') and the
        reference x; see :meth:`replace_up_configuration` for the reduction, the method and its
        accuracy.
        """
        check_adjacency(adjacency)
        if adjacency == "replace" and self.dim > 1:
            return 1.0 / math.sqrt(self.replace_up_configuration()[0])
        R, w, _, pairs = self._table()
        return TB.table_chi_up(R, w, pairs[adjacency], refs=(0, 1))

    # ---------------------------------------------------------- replace-one chi_up, d >= 2
    def replace_up_variance(self, alpha: float, beta: float, psi: float, nodes: int | None = None) -> float:
        r"""V = Var_{R_x}[l_0(Y; v1, v1', R_x)] at one configuration (dimension d >= 2).

        v1 = e1, v1' = (cos alpha, sin alpha, 0, ...), x = (cos beta, sin beta cos psi,
        sin beta sin psi, 0, ...), angles in radians in [0, pi] (for d = 2, psi in {0, pi}).
        With A, B, C the caps of v1, v1', x and D = A Δ B, f_v1 - f_v1' = (h - l)(1_A - 1_B), so

            V = integral (f_v1 - f_v1')^2 / f_x dmu = (h - l)^2 [mu(D \ C) / l + mu(D ∩ C) / h],
            mu(D) = 2 (s - mu(A∩B)),  mu(D ∩ C) = mu(A∩C) + mu(B∩C) - 2 mu(A∩B∩C):

        linear in the cap-intersection measures, computed by
        :func:`sharpdp.shuffle.sphere.two_cap_measure` / ``three_cap_measure`` (relative
        quadrature error below about 1e-7, an a-posteriori estimate: the tests compare
        with the doubled and tripled rules, the largest deviation seen being 1.2e-8). For d >= 3 and a
        coplanar configuration (psi = 0 or pi exactly) the three-cap measure comes from
        :func:`~sharpdp.shuffle.randomizers.privunit_coplanar.coplanar_three_cap_measure` (switch
        ``limits.PRIVUNIT_COPLANAR_CHECKED``): ``three_cap_measure``'s t-rule keeps a kink inside a piece there
        and is off by up to 2.4e-3 relative in that measure (docs/worst_case_pairs.md §6.1, §6.2). ``nodes``
        overrides their Gauss-Legendre nodes per piece. Returns float (dimensionless).
        """
        if self.dim < 2:
            raise ValueError("replace_up_variance needs dim >= 2 (dim = 1 is the finite table)")
        if nodes is not None:
            nodes = V.integer("nodes", nodes, lo=2, hi=4096)
        alpha, beta, psi = (V.real(n, v, lo=0.0, hi=math.pi) for n, v in
                            (("alpha", alpha), ("beta", beta), ("psi", psi)))
        if self.dim == 2 and abs(math.sin(psi)) > 1e-12:
            raise ValueError(f"psi must be 0 or pi for dim = 2 (x in the plane), got {psi}")
        d, th = self.dim, self.theta
        c_bc = math.cos(alpha) * math.cos(beta) + math.sin(alpha) * math.sin(beta) * math.cos(psi)

        def pair(c):
            return float(S.two_cap_measure(d, th, th, c, nodes))

        i_ab, i_ac, i_bc = pair(math.cos(alpha)), pair(math.cos(beta)), pair(c_bc)
        three = S.three_cap_measure
        if limits.PRIVUNIT_COPLANAR_CHECKED and d >= 3 and psi in (0.0, math.pi) and \
                min(abs(math.sin(alpha)), abs(math.sin(beta))) > 1e-12:  # docs/worst_case_pairs.md §6.2
            three = coplanar_three_cap_measure
        i_abc = three(d, th, alpha, beta, psi, nodes) if min(i_ab, i_ac, i_bc) > 0 else 0.0
        mu_d = max(0.0, 2.0 * (self._s - i_ab))
        mu_dc = min(mu_d, max(0.0, i_ac + i_bc - 2.0 * i_abc))
        return (self.h - self.l) ** 2 * ((mu_d - mu_dc) / self.l + mu_dc / self.h)

    def _replace_up_bound(self) -> float:
        r"""Analytic upper bound on sup V: mu(D) <= 2 min(s, q), mu(D \ C) <= q, mu(D ∩ C) <= s."""
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
        return [canonical_angles(*c) for c in raw]

    def replace_up_configuration(self):
        r"""sup V and a maximising configuration for chi_up under replace-one (d >= 2).

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
        observation, not a proof. The value returned is the largest V found (clipped to B): with
        ``limits.PRIVUNIT_COPLANAR_CHECKED`` (default) the search's final points (and their coplanar snaps)
        are re-evaluated with doubled nodes until two successive rules agree to 1e-8 relative (a point that
        does not settle within 4 doublings is skipped; RuntimeError if none settles), and the largest checked
        value is returned (docs/worst_case_pairs.md §6.3). So
        chi_up is exact up to that a-posteriori quadrature error (about 1e-8 relative) if the search found
        the global sup, and too large otherwise. The tests compare it with Monte Carlo over
        random configurations (d = 3), with mpmath quadrature at the reported configuration and with a
        brute force on the circle (d = 2).
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
        the cap quadrature's accuracy (for d >= 3 an a-posteriori check: two successive node doublings agree
        to 1e-8 relative at the reported configuration, docs/worst_case_pairs.md §6.3; 1e-6 taken).
        The two coincide (up to that margin) when the bound is attained, e.g. always for d = 2.

        Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5 (Section 2.4); the HCR bound is its Theorem 3.5.

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
        finals = [fam(float(res.x))]
        for v0, c0 in vals[:2]:
            res = minimize(lambda z: -var(*canonical_angles(*z)), np.array(c0), method="Nelder-Mead",
                           options={"xatol": 1e-7, "fatol": 1e-13 * v0, "maxiter": 300})
            c = canonical_angles(*res.x)
            best = max(best, (var(*c), c))
            finals.append(c)
        if limits.PRIVUNIT_COPLANAR_CHECKED:  # docs/worst_case_pairs.md §6.3: the reported value, checked
            best = self._checked_best(finals + [best[1]])
        v, c = best
        if v >= bound * (1.0 - 1e-7):
            return bound, c, "bound"
        return v, tuple(float(t) for t in c), "search"

    def _checked_best(self, configs):
        """(V, cfg) with the largest a-posteriori-checked V over ``configs`` and their coplanar snaps
        (psi within 1e-6 of 0 or pi set to 0 or pi: another configuration, evaluated in its own right);
        a configuration whose quadrature does not settle is not reported (RuntimeError if none settles);
        docs/worst_case_pairs.md §6.3."""
        cands = []
        for c in configs:
            a, b, p = (float(t) for t in c)
            cands.append((a, b, p))
            for snap in (0.0, math.pi):
                if 0.0 < abs(p - snap) <= 1e-6:
                    cands.append((a, b, snap))
        found, err = [], None
        for c in dict.fromkeys(cands):
            try:
                found.append((checked_replace_variance(self, c), c))
            except RuntimeError as e:
                err = e
        if not found:
            assert err is not None
            raise err
        return max(found)

    @property
    def local_epsilon(self) -> float | None:
        """Pure-LDP level eps0 = |log(h / l)| in nats (replace-one, density ratio on vs off the cap); a float here,
        None allowed for subclasses whose release has no certified level (`LatticePrivUnit`)."""
        return abs(math.log(self.h / self.l))

    @property
    def mse_single(self) -> float:
        """Err_1 = 1/m^2 - 1 of the unbiased estimator Y/m (Appendix A.4, Step 3), squared units."""
        return 1.0 / self.m**2 - 1.0

    def sample(self, x, rng=None, *, threads: int | None = None, allow_unsafe_float: bool = False) -> np.ndarray:
        """Randomize unit vectors ``x`` (float64, shape (n, dim), |x_i| = 1 within 1e-9).

        NOT FLOATING-POINT SAFE: the messages are float approximations of PrivUnit, not covered
        by the accountant's certificate (class docstring; docs/sampling.md §6). Their low-order
        bits depend on the input: e.g. for an input on a coordinate axis, that coordinate of the
        message is the inner product T itself, always a multiple of 2^-53, while under another
        axis it is a generic float product, so a message can be impossible under a neighbouring
        input (porosity: δ stays large at every ε; ``tests/test_release4_unsafe_float.py``).
        Hence:

        - ``rng=None`` (the secure generator, i.e. a release) is refused with a ``ValueError``
          unless ``allow_unsafe_float=True``. The floating-point-safe release is
          :class:`~sharpdp.shuffle.LatticePrivUnit` (integer messages, docs/sampling.md §10.6).
        - ``rng=`` a seed or Generator (research mode) is allowed; it is not private unless the
          seed is secret, and even a secret seed does not make these float messages private.

        The inner product T = <Y, v> is drawn by inverse CDF of the regularised incomplete beta
        (numpy/scipy, from ``rng``), the orthogonal direction in C++ (seeded from ``rng``;
        identical for any ``threads``).

        Parameters
        ----------
        x : array_like of float64, shape (n, dim)
            Unit rows (|x_i| = 1 within 1e-9), n >= 1.
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the uniforms and of the C++ seed (None: fresh OS entropy).
        threads : int or None, keyword-only
            Worker threads >= 1 (None: all cores); the output does not depend on it.
        allow_unsafe_float : bool, keyword-only
            Research only: let ``rng=None`` draw these float messages from the secure generator.
            The accountant's figures then cover the mathematical PrivUnit only, not the messages.
            Default False (refuse).

        Returns
        -------
        numpy.ndarray of float64, shape (n, dim)
            Unit rows.

        Raises
        ------
        ValueError
            ``x`` empty, of another shape, not finite or not unit rows; ``threads`` < 1;
            ``rng=None`` without ``allow_unsafe_float=True`` (a release of unsafe float messages).
        TypeError
            ``allow_unsafe_float`` not a bool; ``rng`` of another type.
        """
        from scipy.special import betaincinv

        from sharpdp._core_loader import core

        v = V.real_array("x", x, ndim=2, shape=(None, self.dim))
        norms = np.linalg.norm(v, axis=1)
        if np.any(np.abs(norms - 1.0) > 1e-9):
            raise ValueError("x must have unit-norm rows (PrivUnit's input domain is the sphere S^{d-1})")
        nthreads = core_threads(threads)
        refuse_unsafe_release(
            "PrivUnit.sample", rng, allow_unsafe_float,
            "its float messages leak the input through their low-order bits",
            "Release with LatticePrivUnit(p, theta, dim) or LatticePrivUnit.from_privunit(pu) instead (integer "
            "messages from an exact sampler, same accountant figures plus a charged total variation, "
            "docs/sampling.md §10.6).")
        gen = as_generator(rng)
        n = v.shape[0]
        in_cap = gen.random(n) < self.p
        u = gen.random(n)
        if self.dim == 1:
            t = np.where(in_cap, 1.0, -1.0)
        else:
            a = 0.5 * (self.dim - 1)
            # (1 - T)/2 and (1 + T)/2 are Beta(a, a): sample each side from its own small tail (each row's
            # side only: betaincinv is elementwise, so the same doubles as evaluating both sides everywhere)
            t = np.empty(n)
            t[in_cap] = 1.0 - 2.0 * betaincinv(a, a, u[in_cap] * self._s)
            t[~in_cap] = 2.0 * betaincinv(a, a, u[~in_cap] * self.q) - 1.0
        return core.samplers.sphere_complete(v, np.ascontiguousarray(t), core_key(gen), nthreads)

    def estimate(self, messages) -> np.ndarray:
        """Unbiased mean estimate (1/m) * mean(messages), float64 shape (dim,)."""
        y = V.real_array("messages", messages, ndim=2, shape=(None, self.dim))
        return y.mean(axis=0) / self.m
