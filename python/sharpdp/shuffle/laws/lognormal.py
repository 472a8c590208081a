"""Lognormal laws ``L = a + b exp(r Z - r^2/2) + b_minus exp(-r Z - r^2/2)`` of the Gaussian-type
randomizers, with certified cells, tails and moments (docs/accountant.md §2.3)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from sharpdp import _validation as V
from sharpdp._core_loader import core as _core
from sharpdp.shuffle.laws.base import U as _U
from sharpdp.shuffle.laws.base import Law, check_threshold

# Assumed relative accuracy of exp/log (a few ulp in practice; 64 ulp taken, as in
# sharpdp.conversions). ndtr(z) is relatively accurate to about z^2 u in the far lower tail (the rounding of
# its argument z/sqrt 2), so its terms get (64 + 2 z^2) ulp (ndtr_rel; proof for the compiled
# ndtr in docs/accountant.md §2.3).
_RHO = 64.0 * np.finfo(float).eps


def _two_node_default() -> bool:
    return False


# Which narrower cells take fewer Gauss-Legendre nodes (docs/accountant_tail.md §64): read at each cells call from the
# rule the accountant registers (accountant/cells_rule.py: limits.CELLS_TWO_NODE, limits.CELLS_FEW_NODES; this floor
# cannot read limits); 0 (False, the 8-point rule everywhere) where none is registered
_TWO_NODE = [_two_node_default]


def set_two_node_rule(rule) -> None:
    """Register the function (no arguments, a bool or int) saying whether the narrower cells take fewer nodes
    (docs/accountant_tail.md §64.1)."""
    _TWO_NODE[0] = rule


def _chords_default() -> int:
    return 0


# From which number of sorted thresholds :meth:`LognormalLaw.stop_loss` takes the chords of
# ``stop_loss_chords.chord_bracket`` (docs/accountant_tail.md §71.1): read at each call from the rule the accountant
# registers (accountant/cells_rule.py: limits.G46_STOP_LOSS_CHORDS); 0 (every threshold by the kernel) where none is
_CHORDS = [_chords_default]


def set_chords_rule(rule) -> None:
    """Register the function (no arguments, an int) giving the least number of sorted thresholds whose stop-loss
    bracket takes the chords between nodes (0: never; docs/accountant_tail.md §71.1)."""
    _CHORDS[0] = rule


def two_node() -> int:
    """The cells' rule bits now (0: the 8-point rule in every narrow cell and libm's exponentials; bit 1: the
    narrower cells by 2, 3 or 4 nodes, docs/accountant_tail.md §64.1; bit 2: the nodes' small-argument exp/expm1 by
    polynomials, §76.1); part of every kept cells' key."""
    return int(_TWO_NODE[0]())
_EPS = float(np.finfo(float).eps)  # (looked up once: np.finfo per call costs more than the arithmetic)


def ndtr_rel(z):
    """Assumed relative error bound of ndtr(z) (vectorised): (64 + 2 z^2) ulp in the lower tail
    (z^2 capped at 1e4: below z = -100 the value is 0 and the flush allowance covers it), 64 ulp
    for z >= 0 (there ndtr(z) = 1 - erfc(z/sqrt 2)/2 lies in [1/2, 1]: the erfc term's own
    relative error is scaled down by it). (The compiled kernel's interval_prob charges the same.)"""
    z = np.asarray(z, float)
    with np.errstate(invalid="ignore", over="ignore"):
        z2 = np.minimum(z * z, 1e4)
        return np.where(np.isfinite(z) & (z < 0), (64.0 + 2.0 * z2) * _EPS, _RHO)


# The cells (V-edges, closed forms of wide cells, the 8-point Gauss-Legendre rule of narrow cells and
# their bounds), the stop-loss brackets and interval_prob are computed by the compiled kernel
# cpp/kernels/lognormal_cells.hpp (docs/accountant.md §2.3); the V-edge formula is the same kernel's (_v).


def interval_prob(z1, z2):
    """P(z1 < Z < z2) for Z ~ N(0,1), vectorised, using the small side; with error bound (absolute:
    (64 + 2 z^2) ulp relative per ndtr term, u on the difference, and where ndtr flushes below z = -37.5
    the Mills bound phi(z)/|z| plus the smallest subnormals; the compiled kernel's)."""
    if np.ndim(z1) == 0 and np.ndim(z2) == 0:
        p, e = _core.accountant.lognormal_interval_prob1(float(z1), float(z2))
        return np.float64(p), np.float64(e)
    z1, z2 = np.broadcast_arrays(np.asarray(z1, float), np.asarray(z2, float))
    return _core.accountant.lognormal_interval_prob(z1, z2)


def _interval_prob_scaled(z1, z2, logc):
    """c P(z1 < Z < z2), c = e^logc (> 0; logc may be an array), evaluated in the log domain on
    the small side: c Phi(zA) = exp(logc + log_ndtr(zA)), so that neither a tiny probability nor
    a huge coefficient (e^eps, a weight 1/g) leaves the double range before the product. Error
    bound (absolute): log_ndtr(z) is assumed within (64 + 2 z^2) ulp absolute for z < 0 (as
    ndtr_rel, no cap: the asymptotic series loses ~z^2 u / 2) and 64 ulp for z >= 0; the
    exponential adds 2u |argument| + 4u relative; the difference u; and each exponential that
    flushes below the normal range an absolute 1e-323 (docs/accountant_edges.md section 1)."""
    if np.ndim(z1) == 0 and np.ndim(z2) == 0 and np.ndim(logc) == 0:
        return _interval_prob_scaled_scalar(float(z1), float(z2), float(logc))
    z1 = np.asarray(z1, float)
    z2 = np.asarray(z2, float)
    upper = z1 > 0
    zA, zB = np.where(upper, -z1, z2), np.where(upper, -z2, z1)
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        lA, lB = log_ndtr(zA) + logc, log_ndtr(zB) + logc
        A, B = np.exp(lA), np.exp(lB)

        def rel(z, l):
            e = np.where(np.isfinite(z) & (z < 0), (64.0 + 2.0 * z * z) * _EPS, _RHO)
            return np.expm1(e + 2.0 * _U * np.abs(l)) + 4.0 * _U

        tA = np.where(A > 0, rel(zA, lA) * A, 0.0)
        tB = np.where(B > 0, rel(zB, lB) * B, 0.0)
        p = np.maximum(A - B, 0.0)
        err = tA + tB + _U * p + 2e-323
    return p, err


def _interval_prob_scaled_scalar(z1, z2, logc):
    """_interval_prob_scaled at one triple of floats: the same operations on scalars."""
    zA, zB = (-z1, -z2) if z1 > 0 else (z2, z1)
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        lA, lB = log_ndtr(zA) + logc, log_ndtr(zB) + logc
        A, B = np.exp(lA), np.exp(lB)

        def rel(z, l):
            e = (64.0 + 2.0 * z * z) * _EPS if (math.isfinite(z) and z < 0) else _RHO
            return np.expm1(e + 2.0 * _U * abs(l)) + 4.0 * _U

        tA = rel(zA, lA) * A if A > 0 else 0.0
        tB = rel(zB, lB) * B if B > 0 else 0.0
        p = np.maximum(A - B, 0.0)
        err = tA + tB + _U * p + 2e-323
    return p, err


def _clip_scalar(x, lo, hi):
    """np.clip(x, lo, hi) for floats, by its rule min(max(x, lo), hi) with max(a, b) = a when a >= b
    or a is NaN, else b (and min alike): a NaN anywhere propagates, -0.0 within [0.0, 1.0] stays."""
    t = x if (x >= lo or x != x) else lo
    return t if (t <= hi or t != t) else hi


@dataclass(frozen=True)
class HeavyForm:
    """What the closed-form deep tail (docs/accountant_tail.md §18-§23) needs of a law L: L >= a on its whole
    range; on every s above its atoms (all of them below 0) L has the density of ``cont``, the increasing lognormal
    law a + G e^{r V - r^2/2} on V > cont's v_lo with cont's weight; E L - a in [d_lo, d_hi], E (L - a)^2 <= m2_up,
    Var L >= var_lo (closed forms, rounded outwards); ``key`` identifies the law for the closed form's memo."""

    a: float
    G: float
    r: float
    d_lo: float
    d_hi: float
    m2_up: float
    var_lo: float
    cont: "LognormalLaw"
    key: tuple
    atom: float = 0.0  # the location of the law's one atom (below 0), with probability atom_p
    atom_p: float = 0.0


@dataclass(frozen=True)
class TwoTermForm:
    """What the jump term's closed-form bracket at a clamp (docs/accountant_tail.md §32) needs of the increasing
    two-term law L = a + G e^{r V - r^2/2} - S e^{-r V - r^2/2} on the whole normal range (weight 1): E L in
    [mean_lo, mean_hi] (E L = a + G - S exactly), Var L <= var_up (closed forms, rounded outwards), and ``dominant``,
    the one-term law a + G e^{r V - r^2/2} whose ``density_up(s)`` bounds the sup of L's density over [s, inf)
    (§32 (b)); ``key`` identifies the law."""

    a: float
    G: float
    S: float
    r: float
    mean_lo: float
    mean_hi: float
    var_up: float
    dominant: "LognormalLaw"
    key: tuple


def _density_log_domain(weight: float, vb, r: float, q_lo):
    """:meth:`LognormalLaw.density_up`'s value where a product or quotient falls below the normal range: the
    log-domain value of w phi(vb) / (r q_lo), raised by 1e-9 of its terms' magnitudes, and at least 1e-300."""
    lt = math.log(weight) - 0.5 * vb * vb - math.log(math.sqrt(2 * math.pi) * r) - np.log(q_lo)
    lt = lt + 1e-9 * (abs(math.log(weight)) + 0.5 * vb * vb + abs(math.log(r)) + np.abs(np.log(q_lo)) + 1.0)
    return np.maximum(np.exp(np.minimum(lt, 700.0)), 1e-300)


class LognormalLaw(Law):
    """Sub-probability law of ``L = a + b X+ + b_minus X-`` on ``{Z > z_lo}``, weighted.

    ``X+ = exp(r Z - r^2/2)``, ``X- = exp(-r Z - r^2/2)``, ``Z ~ N(0, 1)``. The measure is
    ``weight * N(0,1)`` restricted to ``Z > z_lo``, pushed through ``z -> L(z)``; its total
    mass is ``weight * Phibar(z_lo)``. ``b_minus = 0`` is the lognormal law of the BMG with
    zero-out adjacency (the shuffle paper's appendix; ``b`` of either sign); ``b > 0 > b_minus`` is
    the replace-one law of the BMG (a difference of two perfectly anti-correlated
    lognormals, see :func:`~sharpdp.shuffle.laws.bmg.bmg_laws`). ``L`` must be monotone in ``Z``: ``b >= 0 >=
    b_minus`` (increasing) or ``b <= 0 <= b_minus`` (decreasing), not both zero. All
    probabilities are evaluated as ``ndtr`` differences on the small side, never as
    ``1 - Phi(x)``.

    Internally the law is written in the oriented variable ``V = sign * Z ~ N(0, 1)`` in
    which it increases: ``L = a + G exp(r V - r^2/2) - S exp(-r V - r^2/2)``, ``G, S >= 0``,
    ``V`` restricted to ``(v_lo, v_hi)``. Partial moments are closed forms:
    ``E[e^{+-r V - r^2/2}; lo < V < hi] = P(lo -+ r < V < hi -+ r)``.

    Parameters
    ----------
    a, b : float
        Location and coefficient of ``X+``. ``b`` is a signed coefficient, not a scale: ``b < 0``
        (with ``b_minus >= 0``) is the law decreasing in ``Z``, e.g. ``LognormalLaw(0, -1, 1)`` is
        the law of ``-exp(Z - 1/2)`` (the BMG's zero-out laws use both signs).
    r : float
        Log-scale, > 0 (the only scale parameter; r <= 0 is refused).
    z_lo : float, default -inf
        Truncation point in Z.
    weight : float, default 1.0
        Mass multiplier (> 0).
    b_minus : float, default 0.0
        Coefficient of ``X-`` (sign opposite to ``b``, or 0).

    Raises
    ------
    ValueError
        Non-finite a, b, b_minus; r <= 0; weight <= 0; b = b_minus = 0; L not monotone.
    """

    def __init__(self, a, b, r, z_lo=-math.inf, weight=1.0, b_minus=0.0):
        a, b, bm = V.real("a", a), V.real("b", b), V.real("b_minus", b_minus)
        r = V.real("r", r, lo=0.0, lo_open=True)
        z_lo = V.real("z_lo", z_lo, allow_inf=True)
        weight = V.real("weight", weight, lo=0.0, lo_open=True)
        if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(bm) and r > 0 and math.isfinite(r)
                and weight > 0 and not math.isnan(z_lo) and z_lo < math.inf):
            raise ValueError("LognormalLaw needs finite a, b, b_minus, finite r > 0, weight > 0, z_lo < inf")
        if b == 0 and bm == 0:
            raise ValueError("LognormalLaw needs b != 0 or b_minus != 0")
        if b * bm > 0:
            raise ValueError("LognormalLaw: b and b_minus must have opposite signs (L monotone in Z)")
        self.a, self.b, self.b_minus, self.r, self.z_lo, self.weight = a, b, bm, r, z_lo, weight
        self._sign = 1.0 if (b > 0 or bm < 0) else -1.0
        if self._sign > 0:
            self._G, self._S, self._vlo, self._vhi = b, -bm, z_lo, math.inf
        else:
            self._G, self._S, self._vlo, self._vhi = bm, -b, -math.inf, -z_lo
        # kappa^2 = G S e^{-r^2} = (G-term)(S-term) at every v
        # log kappa (kappa itself underflows for r > ~38.6, sigma0 < ~0.026: kept as a logarithm)
        self._logkappa = (0.5 * (math.log(self._G) + math.log(self._S)) - 0.5 * r * r
                          if self._G > 0 and self._S > 0 else -math.inf)

    def moved(self, c):
        a = math.nextafter(self.a + c, math.copysign(math.inf, c))  # beyond a + c
        law = LognormalLaw(a, self.b, self.r, self.z_lo, self.weight, self.b_minus)
        law.moved_by = math.nextafter(abs(a - self.a), math.inf)  # >= the exact difference
        return law

    # --- helpers -------------------------------------------------------------------
    def _v(self, x):
        """V value where L = x (-inf/+inf beyond the range), elementwise.

        With q = x - a, the terms P = G e^{r v - r^2/2} and M = S e^{-r v - r^2/2} satisfy
        P - M = q and P M = kappa^2, so w = e^{r v} is the positive root of a quadratic. Each
        term is taken from the cancellation-free root formula: the larger one as (|q| + D)/2,
        D = hypot(q, 2 kappa), the smaller one as kappa^2 divided by it; v comes from the larger
        one (P when q >= 0, M when q < 0). The larger root is taken in the log domain,
        log big = log|q| + log1p(2 x^2 / (1 + sqrt(1 + 4 x^2))) with x = kappa/|q| <= 1, else
        log kappa + asinh(|q| / (2 kappa)), so that neither kappa nor |q| need be representable
        as a ratio (kappa underflows for large r; |q| = inf gives inf). Evaluated by the compiled
        kernel (cpp/kernels/lognormal_cells.hpp, the cells' own edges: one place for the formula)."""
        if np.ndim(x) == 0:
            return np.asarray(self._v_scalar(float(x)), float)
        return _core.accountant.lognormal_v(self.a, self._G, self._S, self.r, np.asarray(x, float))

    def _v_scalar(self, x):
        """_v at one float x (a float): the same kernel, the same floats."""
        return float(_core.accountant.lognormal_v1(self.a, self._G, self._S, self.r, x))

    def _vint(self, x1, x2):
        """V-interval (lo, hi) of {x1 < L < x2}, intersected with (v_lo, v_hi)."""
        if np.ndim(x1) == 0 and np.ndim(x2) == 0:  # (np.clip's rule on floats: the same numpy scalars)
            lo = _clip_scalar(self._v_scalar(float(x1)), self._vlo, self._vhi)
            return np.float64(lo), np.float64(_clip_scalar(self._v_scalar(float(x2)), lo, self._vhi))
        lo = np.clip(self._v(x1), self._vlo, self._vhi)
        hi = np.clip(self._v(x2), lo, self._vhi)
        return lo, hi

    def _at(self, v):
        """L at V = v (v = -inf/+inf gives the end of the range)."""
        if math.isinf(v):
            c = self._S if v < 0 else self._G
            return self.a if c == 0 else v
        r = self.r
        return self.a + self._G * math.exp(r * v - 0.5 * r * r) - self._S * math.exp(-r * v - 0.5 * r * r)

    def support(self):
        return self._at(self._vlo), self._at(self._vhi)

    def total_mass(self):
        return self.weight * float(interval_prob(self._vlo, self._vhi)[0])

    def _shifted(self, t):
        """P(v_lo - t < V < v_hi - t) = E[e^{t V - t^2/2}; v_lo < V < v_hi]."""
        return float(interval_prob(self._vlo - t, self._vhi - t)[0])

    def _moments(self, c=None, second=True):
        """(mass, E[L - c], E[(L - c)^2]) of the weighted sub-law (c = a by default), without
        cancellation against a large location a (``second=False``: the last one is NaN; the
        second moment raises OverflowError where e^{r^2} overflows)."""
        r, G, S = self.r, self._G, self._S
        d = 0.0 if c is None else self.a - c
        m0 = self._shifted(0.0)
        mp, mm = (self._shifted(r) if G else 0.0), (self._shifted(-r) if S else 0.0)
        if not second:
            w = self.weight
            return w * m0, w * (d * m0 + G * mp - S * mm), math.nan
        e2 = math.exp(r * r)
        mpp = e2 * self._shifted(2 * r) if G else 0.0
        mmm = e2 * self._shifted(-2 * r) if S else 0.0
        s1 = d * m0 + G * mp - S * mm
        s2 = d * d * m0 + G * G * mpp + S * S * mmm + 2 * d * (G * mp - S * mm) - 2 * G * S * math.exp(-r * r) * m0
        w = self.weight
        return w * m0, w * s1, w * s2

    def mean(self):
        mass, s1, _ = self._moments(second=False)
        return self.a + s1 / mass

    def std(self):
        """Standard deviation of the (normalised) law; ``inf`` when it exceeds the double range
        (e^{r^2} overflows: r > ~26.6, e.g. sigma0 < ~0.0375 for the BMG)."""
        try:
            return self._std()
        except OverflowError:
            return math.inf

    def _std(self):
        r, G, S = self.r, self._G, self._S
        if math.isinf(self._vlo) and math.isinf(self._vhi):
            # Var = (G^2 + S^2)(e^{r^2} - 1) + 2 G S (1 - e^{-r^2}): no cancellation
            return math.sqrt((G * G + S * S) * math.expm1(r * r) - 2 * G * S * math.expm1(-r * r))
        mass, s1, s2 = self._moments()
        return math.sqrt(max(s2 / mass - (s1 / mass) ** 2, 0.0))

    def prob_below(self, x):
        lo, hi = self._vint(-math.inf, x)
        p, e = interval_prob(lo, hi)
        return float(self.weight * p), float(self.weight * e * (1 + 4 * _U) + 4 * _U * self.weight * p)

    def prob_above(self, x):
        lo, hi = self._vint(x, math.inf)
        p, e = interval_prob(lo, hi)
        return float(self.weight * p), float(self.weight * e * (1 + 4 * _U) + 4 * _U * self.weight * p)

    def _local_scaled(self, lo, hi, c):
        """weight E[L - c; V in (lo, hi)] = w ((a - c) p + G q+ - S q-) for scalar lo, hi, c, every
        product formed in the log domain (_interval_prob_scaled), with an absolute error bound
        (three terms and two sums: 4u on the absolute terms)."""
        lw, r = math.log(self.weight), self.r
        d = self.a - c
        tA = eA = tP = eP = tM = eM = 0.0
        with np.errstate(divide="ignore"):
            if d != 0.0:
                tA, eA = (float(x) for x in _interval_prob_scaled(lo, hi, lw + math.log(abs(d))))
                tA = math.copysign(tA, d)
            if self._G > 0:
                tP, eP = (float(x) for x in _interval_prob_scaled(lo - r, hi - r, lw + math.log(self._G)))
            if self._S > 0:
                tM, eM = (float(x) for x in _interval_prob_scaled(lo + r, hi + r, lw + math.log(self._S)))
        val = tA + tP - tM
        return val, eA + eP + eM + 4 * _U * (abs(tA) + tP + tM)

    def _tail(self, lo, hi, c, sign):
        """Upper bound on E[(sign (L - c))_+ ; V in (lo, hi)] given that the sign is >= 0 there."""
        val, err = self._local_scaled(lo, hi, c)
        return float((max(sign * val, 0.0) + err) * (1 + 1e-12))

    def tail_upper(self, T):
        lo, hi = self._vint(T, math.inf)
        if hi <= lo:
            return 0.0
        return self._tail(lo, hi, T, 1.0)

    def tail_upper_bracket(self, T):
        check_threshold(T)
        lo, hi = self._vint(T, math.inf)
        if hi <= lo:
            return 0.0, 0.0
        val, err = self._local_scaled(lo, hi, T)
        return float(max(val - err, 0.0) * (1 - 1e-12)), float((max(val, 0.0) + err) * (1 + 1e-12))

    def tail_lower(self, B):
        lo, hi = self._vint(-math.inf, -B)
        if hi <= lo:
            return 0.0
        return self._tail(lo, hi, -B, -1.0)

    def cells(self, x0, h, K):
        # The compiled kernel (cpp/kernels/lognormal_cells.hpp; docs/accountant.md §2.3): every cell from its
        # own two edges x0 + h k (the same floats whatever the grid's extent), GIL released.
        # The far-tail treatment asks for the same grid twice (its jump term and the body pass): the
        # last result is kept (read-only arrays, so that no caller can alter the kept copy).
        key = (float(x0), float(h), int(K), two_node())
        memo = getattr(self, "_cells_memo", None)
        if memo is not None and memo[0] == key:
            return memo[1]
        out = self.cells_fresh(*key[:3])
        for a in out:
            a.flags.writeable = False
        self._cells_memo = (key, out)
        return out

    def cells_fresh(self, x0, h, K):
        """:meth:`cells` as new writable arrays, computed and not kept (the same floats): for a caller that
        alters and keeps them itself (:meth:`~sharpdp.shuffle.laws.sum.SumLaw.cells`)."""
        return _core.accountant.lognormal_cells(self.a, self._G, self._S, self.r, self._vlo, self._vhi,
                                                self.weight, float(x0), float(h), int(K), two_node())

    continuous = True

    def stop_loss(self, t):
        # the closed form E[L - t; L > t] with its bound, per threshold, by the compiled kernel (§2.3)
        t = np.atleast_1d(np.asarray(t, dtype=float))
        least = int(_CHORDS[0]())
        if least > 0 and t.size >= least and t.ndim == 1:  # (sorted finite t: chords, docs/accountant_tail.md §71.1)
            return _core.accountant.lognormal_stop_loss_chords(self.a, self._G, self._S, self.r, self._vlo,
                                                               self._vhi, self.weight, t, least)
        return _core.accountant.lognormal_stop_loss(self.a, self._G, self._S, self.r, self._vlo, self._vhi,
                                                    self.weight, t)

    def prob_above_up(self, x):
        x = np.atleast_1d(np.asarray(x, dtype=float))
        lo_v, hi_v = self._vint(x, math.inf)
        p, e = interval_prob(lo_v, hi_v)
        return self.weight * (p + e) * (1 + 8 * _U)

    def heavy_form(self) -> "HeavyForm | None":
        """The closed-form deep tail's description (:class:`HeavyForm`) of the one-term law of :meth:`one_term`:
        E L - a = G and E (L - a)^2 = G^2 e^{r^2}, Var L = G^2 expm1(r^2) (the floats the closed form has always
        used); None for other lognormal laws."""
        one = self.one_term()
        if one is None or not one[2] * one[2] < 700.0:  # (e^{r^2} finite)
            return None
        a, G, r = one
        return HeavyForm(a=a, G=G, r=r, d_lo=G, d_hi=G, m2_up=G * G * math.exp(r * r), var_lo=G * G * math.expm1(r * r),
                         cont=self, key=(a, G, r))

    def two_term_form(self) -> "TwoTermForm | None":
        """The :class:`TwoTermForm` of an increasing two-term law (``b > 0 > b_minus``) on the whole normal range with
        weight 1 and r^2 < 700 (the BMG's replace-one law), else None: E L = a + G - S (E e^{+-r V - r^2/2} = 1) with
        each sum rounded outwards by 4u relative plus 1e-300, and Var L = (G^2 + S^2) expm1(r^2) - 2 G S expm1(-r^2)
        (both terms >= 0: no cancellation; exp, expm1 and the products within 64 ulp each, taken as 1e-12 relative).
        Computed once per law."""
        if "_two" not in self.__dict__:
            self._two = self._two_term_form()
        return self._two

    def _two_term_form(self):
        G, S, r = self._G, self._S, self.r
        if not (self._sign > 0 and G > 0 and S > 0 and self.weight == 1.0 and self._vlo == -math.inf
                and self._vhi == math.inf and r * r < 700.0):
            return None

        def dn(x):
            return x - 4 * _U * abs(x) - 1e-300

        def up(x):
            return x + 4 * _U * abs(x) + 1e-300

        mean_lo, mean_hi = dn(dn(self.a + G) - S), up(up(self.a + G) - S)
        var_up = ((G * G + S * S) * math.expm1(r * r) - 2.0 * G * S * math.expm1(-r * r)) * (1 + 1e-12) + 1e-300
        if not (math.isfinite(mean_lo) and math.isfinite(mean_hi) and math.isfinite(var_up)):
            return None
        return TwoTermForm(a=self.a, G=G, S=S, r=r, mean_lo=mean_lo, mean_hi=mean_hi, var_up=var_up,
                           dominant=LognormalLaw(self.a, G, r), key=("two", self.a, G, S, r))

    def one_term(self):
        """(a, G, r) when L = a + G exp(r V - r^2/2) with G > 0 on the whole normal range with weight 1 (then
        E L = a + G exactly and E (L - a)^2 = G^2 e^{r^2}), else None."""
        if (self._S == 0 and self._G > 0 and self._sign > 0 and self.weight == 1.0 and self._vlo == -math.inf
                and self._vhi == math.inf):
            return self.a, self._G, self.r
        return None

    def second_moment_above_up(self, x):
        """Upper bounds (elementwise, float64 array) on E[(L - a)^2; L > x] for the increasing law
        ``a + G exp(r V - r^2/2)`` on V > v_lo with weight w (the one-term law of :meth:`one_term`, or its truncated,
        weighted part of the Gaussian randomizer): w G^2 e^{r^2} P(V > max(v(x), v_lo) - 2r) (the shift by 2r turns
        e^{2 r V - r^2} into a probability), with the probability's error bound, 1e-12 relative for the products and
        4u for the weight's. ``inf`` for other laws."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        if not (self._S == 0 and self._G > 0 and self._sign > 0):
            return np.full(x.shape, np.inf)
        G, r = self._G, self.r
        lo_v, hi_v = self._vint(x, math.inf)  # (clipped to the law's range (v_lo, inf))
        p, e = interval_prob(lo_v - 2 * r, hi_v - 2 * r)
        out = G * G * math.exp(r * r) * (p + e) * (1 + 1e-12)
        return out if self.weight == 1.0 else self.weight * out * (1 + 4 * _U)

    def density_up(self, s):
        """Upper bounds (elementwise, float64 array) on the sup of the density of L over [s, inf), for the
        increasing one-term law (``b > 0 = b_minus``, any ``z_lo`` and ``weight``): there
        f(x) = weight phi(v(x)) / (r (x - a)) (0 below the range), non-increasing in x wherever v(x) >= -r
        (docs/accountant_tail.md §18), so f(s) with v computed at a smaller q = s - a bounds the sup; ``inf`` where
        that does not hold (s <= a, v(s) < -r after the margin, another law). Roundings covered: q (2u), v (64 ulp
        of the magnitudes, absolute), phi and the quotient (1e-12 relative)."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        out = np.full(s.shape, np.inf)
        if not (self._S == 0 and self._G > 0 and self._sign > 0):
            return out
        r = self.r
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            # (the operations of q_lo = (s - a)(1 - 2u), lq = log(q_lo / G), v = (lq + r^2/2) / r,
            # dv = 64u (2 + |lq| + |log G| + r^2 + |log q_lo|) / r + 64u |v|, vb = max(v - dv, 0), e^{-vb vb / 2} and
            # f = w e / (sqrt(2 pi) r q_lo) (1 + 1e-12), each on the same doubles in the same order, in fewer new
            # arrays: docs/accountant_tail.md §69.2)
            q_lo = s - self.a
            q_lo *= 1 - 2 * _U
            lq = q_lo / self._G
            np.log(lq, out=lq)
            v = lq + 0.5 * r * r
            v /= r
            dv = np.abs(lq)
            dv += 2.0
            dv += abs(math.log(self._G))
            dv += r * r
            t = np.log(q_lo)
            np.abs(t, out=t)
            dv += t
            dv *= 64 * _U
            dv /= r
            np.abs(v, out=t)
            t *= 64 * _U
            dv += t
            vd = v - dv
            slope_ok = vd >= -r
            vb = np.maximum(vd, 0.0, out=vd)  # phi is non-increasing on [0, inf)
            ex = -0.5 * vb
            ex *= vb
            np.exp(ex, out=ex)
            np.multiply(q_lo, math.sqrt(2 * math.pi) * r, out=t)
            f = self.weight * ex
            f /= t
            f *= 1 + 1e-12
            # below the normal range a product or quotient loses the relative accuracy the 1e-12 margin covers:
            # there the log-domain value, raised by 1e-9 of its terms' magnitudes, and at least 1e-300
            low = ~((ex >= 1e-300) & (f >= 1e-300))
            if np.any(low):
                f = np.where(low, _density_log_domain(self.weight, vb, r, q_lo), f)
        good = np.isfinite(s) & (q_lo > 0) & np.isfinite(v) & slope_ok
        out[good] = f[good]
        return out

    def density_lo(self, s):
        """Lower bounds (elementwise, float64 array) on the density of L at s for the increasing one-term law
        (``b > 0 = b_minus``, any ``z_lo`` and ``weight``, s inside the range): weight phi(v(s)) / (r (s - a)) with
        v computed at a larger q = s - a and raised by the margin of :meth:`density_up`; 0 where that does not
        hold (v(s) < 0 after the margin, s <= a, another law), a valid lower bound. Where v(s) >= 0 the density is
        non-increasing beyond s (docs/accountant_tail.md §18), so this also bounds its inf over [s', s] for
        every s' <= s with v(s') >= -r."""
        s = np.atleast_1d(np.asarray(s, dtype=float))
        out = np.zeros(s.shape)
        if not (self._S == 0 and self._G > 0 and self._sign > 0):
            return out
        r = self.r
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            q_hi = (s - self.a) * (1 + 2 * _U)
            lq = np.log(q_hi / self._G)
            v = (lq + 0.5 * r * r) / r
            dv = 64 * _U * (2.0 + np.abs(lq) + abs(math.log(self._G)) + r * r + np.abs(np.log(q_hi))) / r \
                + 64 * _U * np.abs(v)
            vb = v + dv  # phi is non-increasing on [0, inf)
            ex = np.exp(-0.5 * vb * vb)
            f = self.weight * ex / (math.sqrt(2 * math.pi) * r * q_hi) * (1 - 1e-12)
            # (subnormal intermediates or results lose the relative accuracy the 1e-12 margin covers: 0 there)
            good = np.isfinite(s) & (s > self.a) & np.isfinite(v) & (v - dv >= 0.0) & (v - dv > self._vlo) & \
                (v + dv < self._vhi) & np.isfinite(f) & (ex >= 1e-300) & (f >= 1e-300)
        out[good] = np.maximum(f[good], 0.0)
        return out

    def spread(self):
        sd = self.std()
        q = abs(self._at(0.6745 * self._sign) - self._at(-0.6745 * self._sign))
        if math.isfinite(q) and q > 0:
            return min(sd, q)
        return sd

    def raw_moments(self, c=0.0, second=True):
        return self._moments(c, second)


__all__ = ["HeavyForm", "LognormalLaw", "TwoTermForm", "interval_prob", "ndtr_rel"]
