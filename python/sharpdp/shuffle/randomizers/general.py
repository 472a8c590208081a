"""A 1-D local randomizer given by its output densities and a blanket.

Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Section 2 (Definition 2.1).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from sharpdp import _validation as V
from sharpdp._quadrature import composite_gauss_legendre, gauss_legendre
from sharpdp._rng import as_generator, core_threads, refuse_unsafe_release
from sharpdp.shuffle import quadrature as Q
from sharpdp.shuffle import tables as TB
from sharpdp.shuffle.adjacency import ADJACENCIES, DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.randomizers._base import RandomizerBase, memo_laws
from sharpdp.shuffle.randomizers.finite import FiniteRandomizer, affine_mean_map

__all__ = ["GeneralRandomizer"]


@functools.lru_cache(maxsize=1)
def _zero_blanket():
    """The blanket density 0 (no blanket), compiled once per process and shared (it was compiled again for
    every GeneralRandomizer without a blanket, ~0.07 s of CPU each)."""
    from numba import njit

    return njit(lambda y: 0.0)

#: Largest ``cells`` accepted (the tables hold cells x order x inputs doubles; beyond this the
#: memory runs to gigabytes before any check could fail).
MAX_CELLS = 2**20


class GeneralRandomizer(RandomizerBase):
    """A 1-D local randomizer given by its output densities and a blanket (*Shuffling-Aware Optimization for Private
    Vector Mean Estimation*, Section 2 (Definition 2.1)).

    The output space is an interval ``support = (lo, hi)`` that should hold (nearly) all the
    output mass (truncate an unbounded mechanism and renormalise first, as Appendix B (regularity
    conditions) of *Shuffling-Aware Optimization for Private Vector Mean Estimation* suggests; in
    certified mode mass left outside is charged to the accountant's value, see Notes). Indices and
    the privacy-amplification law are computed by quadrature on cells
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
        Number of quadrature cells, 1 <= cells <= 2**20 (``MAX_CELLS``). order : int,
        Gauss-Legendre points per cell (2..64).
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
        :func:`sharpdp.shuffle.quadrature.certified_log_error`), ``intervals`` (grid size),
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

    Warnings
    --------
    :meth:`sample` is NOT floating-point safe (``floating_point_safe = False``): its float messages
    are not what the accountant certifies (docs/sampling.md §6). It refuses ``rng=None`` (a
    release) unless ``allow_unsafe_float=True`` (research only); release with :meth:`discretize`
    (a :class:`FiniteRandomizer`, sampled exactly and certified as sampled, docs/sampling.md §10).

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
    of the evaluation point, :func:`sharpdp.shuffle.quadrature.certified_log_error`) each cell
    integral of a density lies within the factor exp(±kappa) of the integral of the
    exponential of the interpolant (a logarithmic mean), and a ratio R_a / R_b lies between its
    end-point values times exp(±2 kappa). This gives per cell rigorous bounds on the blanket mass
    P_c, on the first moment of R_a - e^eps R_b and on the range of l_eps, from which
    :func:`sharpdp.shuffle.quadrature.certified_two_point_atoms` builds a law that dominates the
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
        cells = V.integer("cells", cells, lo=1, hi=MAX_CELLS)
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
            blanket = _zero_blanket()
        self._density, self._blanket = density, blanket
        try:
            tabs = {}
            for o in (self.order, 2 * self.order):
                y, w = composite_gauss_legendre(self.edges, o)
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
        for adj in ADJACENCIES:
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
        pts, left, length, shift = Q.certified_grid(self._knots, n_int)
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
        bound = float(self.log_curvature)  # type: ignore[arg-type]  # certified mode only
        hit = Q.log_curvature_violation(G, pts, left, bound) if check else None
        if hit is not None:
            r, y, val = hit
            raise ValueError(f"log_curvature: the declared bound {self.log_curvature} on |d^2/dy^2 log R| is "
                             f"violated: the finite-difference d^2/dy^2 log R for {names[r]} is {val:.6g} "
                             f"near y={y:.6g}")
        kap = Q.certified_log_error(G, pts, left, length, shift, bound)
        return T, left, kap, Q.certified_interval_integrals(T, G, left, length)

    def _params(self) -> dict:
        return {"inputs": self.inputs.tolist(), "gamma": self.gamma, "log_curvature": self.log_curvature}

    def _pairs(self, adjacency: str):
        m = self.inputs.size
        if adjacency == "zero_out" and not self._has_blanket:
            raise ValueError("zero_out adjacency needs a blanket (the law of ⊥)")
        if adjacency == "replace" and m < 2:
            raise ValueError("inputs: replace adjacency needs at least two inputs")
        return TB.table_pairs(m, adjacency, bottom=m)

    def _indices(self, adjacency: str, order: int) -> tuple[float, float]:
        check_adjacency(adjacency)
        _, w, T = self._tabs[order]
        pairs = self._pairs(adjacency)
        lo = TB.table_chi_lo(T, w, T[-1], self.gamma, pairs) if self.gamma > 0 else 0.0
        return lo, TB.table_chi_up(T, w, pairs, refs=range(self.inputs.size))

    def chi_lo_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_lo by quadrature: an estimate (error estimate in ``quad_error``; rigorous
        enclosure: :meth:`index_enclosure`); 0 when gamma = 0."""
        return self._indices(adjacency, 2 * self.order)[0]

    def chi_up_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_up by quadrature (an estimate, see :meth:`chi_lo_for`), sup over the given inputs
        as pairs and references."""
        return self._indices(adjacency, 2 * self.order)[1]

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, zero-out (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5 (Section 2.4)), quadrature estimate."""
        return self.chi_lo_for("zero_out")

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out (*Shuffling-Aware Optimization for Private Vector Mean Estimation*,
        Definition 2.5 (Section 2.4)), quadrature estimate."""
        return self.chi_up_for("zero_out")

    # --- certified mode ------------------------------------------------------------------
    def _ratio_range(self, r: int, ref: int):
        """Per-interval rigorous range of R_r / R_ref (certified mode)."""
        C = self._cert
        x0, x1 = C["TL"][r] / C["TL"][ref], C["TR"][r] / C["TR"][ref]
        return np.minimum(x0, x1) / C["e2k"], np.maximum(x0, x1) * C["e2k"]

    def index_enclosure(self, adjacency: str = DEFAULT_ADJACENCY) -> dict:
        """Rigorous enclosures of chi_lo and chi_up under ``log_curvature``.

        Source: *Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition 2.5 (Section 2.4).

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
        check_adjacency(adjacency)
        if not self.certified:
            raise ValueError("log_curvature: index enclosures need the log_curvature declaration; "
                             "chi_lo / chi_up are quadrature estimates without it")
        C = self._cert
        pairs = self._pairs(adjacency)

        def var(a, b, ref):
            return Q.certified_pair_variance(self._ratio_range(a, ref), self._ratio_range(b, ref),
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
        return Q.certified_two_point_atoms(ra[0] - ee * rb[1], ra[1] - ee * rb[0], Iv[bg] / ek, Iv[bg] * ek,
                                           Iv[a] * ek - ee * Iv[b] / ek, outside=C["missing"][bg])

    def privacy_amplification_surcharge(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY) -> float:
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
        check_adjacency(adjacency)
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
            return TB.merge_atoms(mean, P)
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
        return TB.merge_atoms(np.concatenate([lo_c[keep], hi_c[keep]]), np.concatenate([p_lo[keep], p_hi[keep]]))

    def _pav_atoms(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY, *, spread: bool = True):
        """(gamma, values, probs) per neighbouring pair and order: the certified upper law when
        ``certified`` (and ``spread``), else the cell-wise two-point spread estimate;
        ``spread=False`` gives the mean-preserving contraction (cell means), whose accountant
        value is a lower estimate."""
        eps = V.real("epsilon", epsilon, lo=0.0)
        check_adjacency(adjacency)
        if self.gamma == 0.0:
            raise ValueError("gamma = 0: no blanket, the blanket accountant does not apply")
        if spread and self.certified:
            atoms = [self._certified_atoms(eps, a, b) for a, b in self._pairs(adjacency)]
        else:
            atoms = [self._cell_atoms(eps, a, b, spread) for a, b in self._pairs(adjacency)]
        return TB.unique_laws([(self.gamma, *vp) for vp in atoms])

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
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
        key = ("laws", V.real("epsilon", epsilon, lo=0.0), check_adjacency(adjacency))  # (built at construction)
        return memo_laws(self, key, lambda: TB.finite_laws(self._pav_atoms(epsilon, adjacency)))

    # --- sampler and estimator -----------------------------------------------------------
    def _inputs_column(self, name: str, x) -> tuple[np.ndarray, tuple]:
        arr = V.real_array(name, x)
        if not (arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1)):
            raise ValueError(f"{name} must have shape (n,) or (n, 1), got {arr.shape}")
        return arr.reshape(-1), arr.shape

    def sample(self, x, rng=None, *, threads: int | None = None, allow_unsafe_float: bool = False) -> np.ndarray:
        """Randomize every input by inverse-CDF sampling (Numba kernel, vectorised).

        NOT FLOATING-POINT SAFE (``floating_point_safe = False``): the messages are floats from a
        floating-point inverse CDF of the user's densities; their low-order bits may depend on the
        input, so the accountant's figures do not cover what this releases (docs/sampling.md §6).
        The safe route is :meth:`discretize`: a :class:`FiniteRandomizer` on cells of the support,
        sampled exactly and certified exactly as sampled (a different, finite mechanism;
        docs/sampling.md §10). Hence:

        - ``rng=None`` (the secure generator, i.e. a release) is refused with a ``ValueError``
          naming ``discretize()`` unless ``allow_unsafe_float=True`` (research only).
        - ``rng=`` a seed or Generator (research mode) is allowed; it is not private unless the
          seed is secret, and even a secret seed does not make these float messages private.

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
        threads : int or None, keyword-only
            The common sampler convention (>= 1, None: all cores); validated, but this Numba
            kernel runs on one thread, so it changes nothing.
        allow_unsafe_float : bool, keyword-only
            Research only: let ``rng=None`` draw these float messages from the secure generator.
            The accountant's figures then cover the mathematical (continuous) randomizer only,
            not the messages. Default False (refuse; use :meth:`discretize` for a release).

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
            negative or without mass for some input; ``rng=None`` without
            ``allow_unsafe_float=True`` (a release of unsafe float messages).
        TypeError
            ``allow_unsafe_float`` not a bool; ``rng`` of another type.
        """
        from sharpdp._kernels import shuffle as K

        core_threads(threads)
        xs, shape = self._inputs_column("x", x)
        lo_x, hi_x = float(self.inputs.min()), float(self.inputs.max())
        if xs.min() < lo_x or xs.max() > hi_x:
            raise ValueError(f"x must lie in [{lo_x}, {hi_x}] (the range of inputs covered by the privacy "
                             f"analysis), found values in [{xs.min()}, {xs.max()}]")
        refuse_unsafe_release(
            "GeneralRandomizer.sample", rng, allow_unsafe_float,
            "its float messages come from a floating-point inverse CDF",
            "Release with GeneralRandomizer.discretize() instead (a FiniteRandomizer sampled exactly and "
            "certified as sampled, docs/sampling.md §10).")
        gen = as_generator(rng)
        u_cell, u_in = gen.random(xs.size), gen.random(xs.size)
        uniq, inv = np.unique(xs, return_inverse=True)
        perm = np.argsort(inv, kind="stable")
        starts = np.searchsorted(inv[perm], np.arange(uniq.size + 1))
        t, w = gauss_legendre(self.order)
        y = K.sample_general(self._density, uniq, starts.astype(np.int64), perm.astype(np.int64),
                             self.edges, t, w, u_cell, u_in)
        return y.reshape(shape)

    def discretize(self, edges=None, inputs=None, *, bits: int = 53):
        """The floating-point-safe route: a :class:`FiniteRandomizer` on cells of the support.

        Returns the finite randomizer whose row for input x (one per distinct value of ``inputs``,
        sorted; by default this randomizer's ``inputs``) is the vector of cell masses of R_x restricted to the support and renormalised,
        computed by the ``2 * order``-point Gauss-Legendre rule per cell and rounded to an exact
        dyadic table (:meth:`FiniteRandomizer.from_probabilities`, granularity 2^-bits), and whose
        outputs are the cell midpoints. This is a **different mechanism** from the continuous one:
        the rounded table is what is sampled (exactly, ``sampler_tv`` = 0) and what the accountant
        certifies (exactly as sampled, its own blanket min_x P[x, y]; under zero-out ⊥ releases
        that blanket), so neither the quadrature error nor ``log_curvature`` enters its
        certificate. Its figures differ from the continuous randomizer's (docs/sampling.md §10.5:
        comparison table and utility loss). Inputs between the given ones are rounded
        stochastically onto the two neighbouring rows (unbiased).

        Parameters
        ----------
        edges : array_like of float, shape (m + 1,), optional
            Cell edges, strictly increasing, from ``support[0]`` to ``support[1]`` (m >= 1 cells);
            default: the quadrature cells ``self.edges``.
        inputs : array_like of float, shape (r,), optional
            The rows' input values (default: this randomizer's ``inputs``). The finite randomizer
            certifies every input in [min, max] of them (inputs between rows are mixtures of two
            rows), not only the rows; more rows lower the variance that the input rounding adds
            (docs/sampling.md §10.5) at the cost of more neighbouring pairs for the accountant.
        bits : int, keyword-only
            Granularity 2^-bits of the table, 1 <= bits <= 64 (default 53: exact doubles; 64 keeps
            far-tail cells finer, docs/sampling.md §10.1).

        Returns
        -------
        FiniteRandomizer
            With numeric ``inputs`` (the sorted distinct inputs) and ``outputs`` (the midpoints).

        Raises
        ------
        ValueError
            ``edges`` not strictly increasing, not spanning the support, or more than 2^22
            cells; ``bits`` outside [1, 64]; an input whose density has no mass on the support; a cell with mass under
            one input and none under another (the finite randomizer would not be eps-LDP).
        """
        from sharpdp._kernels import shuffle as K

        o = 2 * self.order
        if edges is None:
            e = self.edges
            y, w, T = self._tabs[o]
        else:
            e = V.real_array("edges", edges, ndim=1)
            if e.size - 1 > MAX_CELLS:
                raise ValueError(f"edges: at most {MAX_CELLS} cells, got {e.size - 1}")
            if e.size < 2 or not np.all(np.diff(e) > 0) or e[0] != self.support[0] or e[-1] != self.support[1]:
                raise ValueError(f"edges must be strictly increasing from support[0] = {self.support[0]} to "
                                 f"support[1] = {self.support[1]}, with at least one cell")
            y, w = composite_gauss_legendre(e, o)
            T = None
        xs = np.unique(self.inputs if inputs is None else V.real_array("inputs", inputs, ndim=1))
        if T is None or inputs is not None:
            T = K.eval_densities(self._density, self._blanket, xs, y)
            if not np.all(np.isfinite(T)) or np.any(T < 0):
                raise ValueError("density must be finite and >= 0 on the support at the given inputs")
        else:
            T = T[:-1][np.unique(self.inputs, return_index=True)[1]]
        mass = (w * T[:xs.size]).reshape(xs.size, -1, o).sum(axis=2)
        for x, row in zip(xs, mass):
            if not row.sum() > 0:
                raise ValueError(f"density: the density of input x={float(x)!r} has no mass on the support")
        return FiniteRandomizer.from_probabilities(mass, inputs=xs, outputs=0.5 * (e[1:] + e[:-1]), bits=bits)

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
        return affine_mean_map(pts, mu, var, 1e-8, "density")

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
