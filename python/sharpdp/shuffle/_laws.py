"""Laws of the privacy-amplification variable L = l_eps(Y), Y ~ R_BG (spec §1-§2).

The certified accountant (:mod:`sharpdp.shuffle.accountant`) only needs the scalar law
of ``L`` through a few functionals, each returned together with a rigorous bound on
its floating-point error:

* ``cells(x0, h, K)``: for the cells ``[x0 + j h, x0 + (j+1) h]``, ``j = 0..K-1``, the
  mass ``m_j = P(L in cell)`` and the local first moment ``w_j = E[(L - x_j)/h; L in cell]``
  (so ``0 <= w_j <= m_j``), plus absolute error bounds ``eta_m``, ``eta_w``. The
  mean-preserving ("hat") rounding of spec §3 B puts ``m_j - w_j`` on ``x_j`` and ``w_j`` on
  ``x_{j+1}``.
* ``prob_below(x)`` / ``prob_above(x)`` (with error bounds), ``tail_upper(T) >=
  E[(L - T)_+]`` and ``tail_lower(B) >= E[(-B - L)_+]`` (rounded up), ``support()``,
  ``mean()``, ``std()``.

Two concrete families cover every randomizer implemented so far: :class:`FiniteLaw`
(atoms: k-RR, binary RR, any finite output space) and :class:`LognormalLaw`
(``L = a + b exp(r Z - r^2/2)``, Z ~ N(0, 1) possibly restricted to ``Z > z_lo``, with a
mass multiplier), combined by :class:`SumLaw`.

Plug-in protocol for new randomizers
------------------------------------
:func:`laws_for` dispatches :class:`~sharpdp.shuffle.mechanisms.BlanketMixedGaussian`
and :class:`~sharpdp.shuffle.mechanisms.GaussianRandomizer` itself. Any other randomizer
object must provide::

    randomizer.privacy_amplification_laws(epsilon: float, adjacency: str)
        -> list[tuple[float, Law]]

returning one ``(gamma, law)`` entry per neighbouring pair and order that must be
covered (``adjacency`` is ``"zero_out"`` or ``"replace"``); ``gamma`` in (0, 1] is the
blanket mass and ``law`` the law of ``l_eps(Y)``, ``Y ~ R_BG``, for that pair. The
accountant reports the maximum of its certified upper value over the list. It should
raise ``NotImplementedError`` for an adjacency it does not support.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

_U = float(np.finfo(float).eps) / 2.0  # unit roundoff 2^-53
# Assumed relative accuracy of scipy.special.ndtr/log_ndtr/exp/log (a few ulp in
# practice; 64 ulp taken, as in sharpdp.conversions).
_RHO = 64.0 * np.finfo(float).eps
_SQRT2PI = math.sqrt(2.0 * math.pi)
_BIG = 1e300

# 8-point Gauss-Legendre rule on [0, 1].
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
_GL_X = (_GL_X + 1.0) / 2.0
_GL_W = _GL_W / 2.0
# A cell is "narrow" in Z when its Z-length D satisfies D (|z*| + r + 1) <= _NARROW.
# Then the integrands below extend analytically to the Bernstein ellipse rho = 8 of the
# cell with |F| <= 2.6 max|F on cell| (exponent growth <= 0.9); Trefethen, Approximation
# Theory and Approximation Practice, Thm 19.3 gives a relative 8-point Gauss-Legendre error
# <= (64/15) e^0.9 8^-16 / 63 / 0.75 < 1e-14, which we use (plus rounding, 64 ulp).
_NARROW = 0.25
_GL_REL = 1e-14 + 64.0 * np.finfo(float).eps


def _interval_prob(z1, z2):
    """P(z1 < Z < z2) for Z ~ N(0,1), vectorised, using the small side; with error bound."""
    z1 = np.asarray(z1, float)
    z2 = np.asarray(z2, float)
    upper = z1 > 0  # both tails on the right: Phibar(z1) - Phibar(z2)
    A = np.where(upper, ndtr(-z1), ndtr(z2))
    B = np.where(upper, ndtr(-z2), ndtr(z1))
    p = np.maximum(A - B, 0.0)
    err = _RHO * (A + B) + _U * p
    return p, err


class Law:
    """Base class of the law of L (see module docstring for the interface)."""

    def support(self) -> tuple[float, float]:
        raise NotImplementedError

    def mean(self) -> float:
        raise NotImplementedError

    def std(self) -> float:
        raise NotImplementedError

    def cells(self, x0: float, h: float, K: int):
        raise NotImplementedError

    def prob_below(self, x: float) -> tuple[float, float]:
        """(P(L < x), error bound)."""
        raise NotImplementedError

    def prob_above(self, x: float) -> tuple[float, float]:
        """(P(L > x), error bound)."""
        raise NotImplementedError

    def tail_upper(self, T: float) -> float:
        """Upper bound on E[(L - T)_+] (rounded up)."""
        raise NotImplementedError

    def tail_lower(self, B: float) -> float:
        """Upper bound on E[(-B - L)_+] (rounded up)."""
        raise NotImplementedError


class FiniteLaw(Law):
    """Law with finitely many atoms: P(L = values[i]) = probs[i].

    Parameters
    ----------
    values, probs : array_like of float, shape (m,)
        Atom locations and probabilities (probs >= 0, summing to 1 within 1e-9; they are
        used as given).
    """

    def __init__(self, values, probs):
        v = np.ascontiguousarray(values, dtype=float).ravel()
        p = np.ascontiguousarray(probs, dtype=float).ravel()
        if v.shape != p.shape or v.size == 0:
            raise ValueError("values and probs must be non-empty arrays of equal length")
        if not (np.all(np.isfinite(v)) and np.all(np.isfinite(p))) or p.min() < 0:
            raise ValueError("probs must be finite and >= 0, values finite")
        if abs(p.sum() - 1.0) > 1e-9:
            raise ValueError(f"probs must sum to 1, got {p.sum()!r}")
        self.values, self.probs = v, p

    def support(self):
        nz = self.values[self.probs > 0]
        return float(nz.min()), float(nz.max())

    def mean(self):
        return float(np.dot(self.values, self.probs))

    def std(self):
        mu = self.mean()
        return float(math.sqrt(max(np.dot((self.values - mu) ** 2, self.probs), 0.0)))

    def cells(self, x0, h, K):
        m = np.zeros(K)
        w = np.zeros(K)
        # Same partition as prob_below(x0) / prob_above(x0 + K h): [x0, x0 + K h) is inside.
        t = (self.values - x0) / h
        inside = (self.values >= x0) & (self.values < x0 + K * h) & (self.probs > 0)
        ji = np.clip(np.floor(t[inside]), 0, K - 1).astype(np.int64)
        frac = np.clip(t[inside] - ji, 0.0, 1.0)
        np.add.at(m, ji, self.probs[inside])
        np.add.at(w, ji, self.probs[inside] * frac)
        # frac carries an absolute error <= 4u(|v - x0|/h + 1).
        fe = 4.0 * _U * (np.abs(self.values[inside] - x0) / h + 1.0)
        ew = np.zeros(K)
        np.add.at(ew, ji, self.probs[inside] * fe)
        return m, w, 4.0 * _U * m, ew + 4.0 * _U * w

    def prob_below(self, x):
        p = float(self.probs[self.values < x].sum())
        return p, 4.0 * _U * p

    def prob_above(self, x):
        # P(L >= x): an atom exactly at the top edge is clamped there, never dropped.
        p = float(self.probs[self.values >= x].sum())
        return p, 4.0 * _U * p

    def tail_upper(self, T):
        s = float(np.dot(np.maximum(self.values - T, 0.0), self.probs))
        return s * (1.0 + 1e-12)

    def tail_lower(self, B):
        s = float(np.dot(np.maximum(-B - self.values, 0.0), self.probs))
        return s * (1.0 + 1e-12)


class LognormalLaw(Law):
    """Sub-probability law of ``L = a + b exp(r Z - r^2/2)`` on ``{Z > z_lo}``, weighted.

    The measure is ``weight * N(0,1)`` restricted to ``Z > z_lo``, pushed through
    ``z -> a + b exp(r z - r^2/2)``; its total mass is ``weight * Phibar(z_lo)``. With
    ``z_lo = -inf`` and ``weight = 1`` it is a probability law (the BMG case, seed 001
    appendix). ``b`` may have either sign. All tail probabilities are evaluated as
    ``ndtr(-x)``/``log_ndtr`` on the small side, never as ``1 - Phi(x)``.

    Parameters
    ----------
    a, b : float
        Location and scale (b != 0).
    r : float
        Log-scale, > 0.
    z_lo : float, default -inf
        Truncation point in Z.
    weight : float, default 1.0
        Mass multiplier (> 0).
    """

    def __init__(self, a, b, r, z_lo=-math.inf, weight=1.0):
        if not (b != 0 and r > 0 and weight > 0):
            raise ValueError("LognormalLaw needs b != 0, r > 0, weight > 0")
        self.a, self.b, self.r, self.z_lo, self.weight = float(a), float(b), float(r), float(z_lo), float(weight)

    # --- helpers -------------------------------------------------------------------
    def _z(self, x):
        """Z value where L = x (nan outside the range); vectorised."""
        x = np.asarray(x, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (x - self.a) / self.b
            z = (np.log(q) + 0.5 * self.r**2) / self.r
        # q <= 0: x is beyond the a-end of the support, which is Z -> -inf for either sign of b.
        return np.where(q > 0, z, -np.inf)

    def _zint(self, x1, x2):
        """Z-interval (lo, hi) of {x1 < L < x2}, intersected with (z_lo, inf)."""
        z1, z2 = self._z(x1), self._z(x2)
        lo, hi = (z1, z2) if self.b > 0 else (z2, z1)
        lo = np.maximum(lo, self.z_lo)
        hi = np.maximum(hi, lo)
        return lo, hi

    def _edge(self):
        """L value at Z = z_lo (or a when z_lo = -inf)."""
        if math.isinf(self.z_lo):
            return self.a
        return self.a + self.b * math.exp(self.r * self.z_lo - 0.5 * self.r**2)

    def support(self):
        e = self._edge()
        return (e, math.inf) if self.b > 0 else (-math.inf, e)

    def total_mass(self):
        return self.weight * float(ndtr(-self.z_lo))

    def _moments(self, c=None):
        """(mass, E[L - c], E[(L - c)^2]) of the weighted sub-law (c = a by default), without
        cancellation against a large location a."""
        r, z0, w = self.r, self.z_lo, self.weight
        m0 = ndtr(-z0)
        m1 = ndtr(r - z0)  # E[X; Z > z0], X = exp(rZ - r^2/2)
        m2 = math.exp(r * r) * ndtr(2 * r - z0)  # E[X^2; Z > z0]
        d, b = (0.0 if c is None else self.a - c), self.b
        return (w * m0, w * (d * m0 + b * m1), w * (d * d * m0 + 2 * d * b * m1 + b * b * m2))

    def mean(self):
        mass, s1, _ = self._moments()
        return self.a + s1 / mass

    def std(self):
        mass, s1, s2 = self._moments()
        return math.sqrt(max(s2 / mass - (s1 / mass) ** 2, 0.0))

    def _mass_and_x(self, lo, hi):
        """(P(Z in (lo,hi)), E[X; Z in (lo,hi)]) with error bounds (unweighted)."""
        p, ep = _interval_prob(lo, hi)
        q, eq = _interval_prob(lo - self.r, hi - self.r)
        return p, ep, q, eq

    def prob_below(self, x):
        lo, hi = self._zint(-_BIG, x)
        p, e = _interval_prob(lo, hi)
        return float(self.weight * p), float(self.weight * e * (1 + 4 * _U) + 4 * _U * self.weight * p)

    def prob_above(self, x):
        lo, hi = self._zint(x, _BIG)
        p, e = _interval_prob(lo, hi)
        return float(self.weight * p), float(self.weight * e * (1 + 4 * _U) + 4 * _U * self.weight * p)

    def _tail(self, lo, hi, c, sign):
        """Upper bound on E[(sign (L - c))_+ ; Z in (lo, hi)] given that the sign is >= 0 there."""
        p, ep, q, eq = self._mass_and_x(lo, hi)
        A = sign * (self.a - c) * p
        Bv = sign * self.b * q
        val = A + Bv
        err = abs(self.a - c) * ep + abs(self.b) * eq + 4 * _U * (abs(A) + abs(Bv))
        return float(self.weight * (max(val, 0.0) + err) * (1 + 1e-12))

    def tail_upper(self, T):
        lo, hi = self._zint(T, _BIG)
        if hi <= lo:
            return 0.0
        return self._tail(lo, hi, T, 1.0)

    def tail_lower(self, B):
        lo, hi = self._zint(-_BIG, -B)
        if hi <= lo:
            return 0.0
        return self._tail(lo, hi, -B, -1.0)

    def cells(self, x0, h, K):
        x = x0 + h * np.arange(K + 1, dtype=float)
        lo, hi = self._zint(x[:-1], x[1:])
        m, em, q, eq = self._mass_and_x(lo, hi)
        # Local moment E[(L - x_j); cell] = (a - x_j) m + b E[X; cell]  (wide cells).
        A = (self.a - x[:-1]) * m
        Bv = self.b * q
        wh = np.maximum(A + Bv, 0.0)
        ew = np.abs(self.a - x[:-1]) * em + abs(self.b) * eq + 4 * _U * (np.abs(A) + np.abs(Bv))
        # Narrow cells: integrate in u = sigma (z - z*) from the anchor z* where L = x_j,
        # sigma = sign(b):  m = phi(z*) int e^{-sigma z* u - u^2/2} du,
        # E[L - x_j; cell] = |x_j - a| phi(z*) int |e^{sigma r u} - 1| e^{-sigma z* u - u^2/2} du.
        zs = self._z(x[:-1])
        s = 1.0 if self.b > 0 else -1.0
        with np.errstate(invalid="ignore", over="ignore"):
            u0 = s * (lo - zs) if s > 0 else s * (hi - zs)
            u1 = s * (hi - zs) if s > 0 else s * (lo - zs)
            nar = np.isfinite(zs) & (hi > lo) & (u1 * (np.abs(zs) + self.r + 1.0) <= _NARROW) & (u0 >= 0)
        if np.any(nar):
            z_, a0, a1 = zs[nar], u0[nar], u1[nar]
            span = a1 - a0
            U = a0[:, None] + span[:, None] * _GL_X[None, :]
            base = np.exp(-s * z_[:, None] * U - 0.5 * U * U)
            phi = np.exp(-0.5 * z_ * z_) / _SQRT2PI
            mm = phi * span * (base @ _GL_W)
            ww = np.abs(x[:-1][nar] - self.a) * phi * span * ((np.abs(np.expm1(s * self.r * U)) * base) @ _GL_W)
            m = m.copy()
            m[nar] = mm
            em = em.copy()
            em[nar] = _GL_REL * mm
            wh[nar] = ww
            ew[nar] = _GL_REL * ww
        wt = self.weight
        w = np.minimum(wh / h, m)
        return (wt * m, wt * w, wt * em * (1 + 4 * _U) + 4 * _U * wt * m,
                wt * (ew / h + 4 * _U * w) * (1 + 4 * _U) + 4 * _U * wt * w)


class SumLaw(Law):
    """Sum of sub-probability laws (e.g. an atom plus a truncated lognormal part)."""

    def __init__(self, parts):
        self.parts = list(parts)

    def _mass(self, p):
        return p.total_mass() if hasattr(p, "total_mass") else 1.0

    def support(self):
        s = [p.support() for p in self.parts]
        return min(x[0] for x in s), max(x[1] for x in s)

    def _raw(self, c=0.0):
        tot = s1 = s2 = 0.0
        for p in self.parts:
            if isinstance(p, LognormalLaw):
                a, b, d = p._moments(c)
            else:
                v = p.values - c
                a, b, d = float(p.probs.sum()), float(np.dot(v, p.probs)), float(np.dot(v * v, p.probs))
            tot, s1, s2 = tot + a, s1 + b, s2 + d
        return tot, s1, s2

    def mean(self):
        t, s1, _ = self._raw()
        return s1 / t

    def std(self):
        c = self.mean()
        t, s1, s2 = self._raw(c)
        return math.sqrt(max(s2 / t - (s1 / t) ** 2, 0.0))

    def cells(self, x0, h, K):
        outs = [p.cells(x0, h, K) for p in self.parts]
        return tuple(sum(o[i] for o in outs) for i in range(4))

    def prob_below(self, x):
        r = [p.prob_below(x) for p in self.parts]
        return sum(a for a, _ in r), sum(b for _, b in r)

    def prob_above(self, x):
        r = [p.prob_above(x) for p in self.parts]
        return sum(a for a, _ in r), sum(b for _, b in r)

    def tail_upper(self, T):
        return sum(p.tail_upper(T) for p in self.parts)

    def tail_lower(self, B):
        return sum(p.tail_lower(B) for p in self.parts)


class _SubFinite(FiniteLaw):
    """Atoms with total mass < 1 (a part of a SumLaw)."""

    def __init__(self, values, probs):
        self.values = np.ascontiguousarray(values, dtype=float).ravel()
        self.probs = np.ascontiguousarray(probs, dtype=float).ravel()


def _bmg_laws(gamma: float, sigma0: float, epsilon: float, adjacency: str):
    if adjacency != "zero_out":
        raise NotImplementedError(
            "adjacency='replace' is not implemented for BlanketMixedGaussian: its amplification "
            "variable is a difference of two correlated lognormals without a closed-form law; "
            "use adjacency='zero_out'")
    r = 1.0 / sigma0
    ee = math.exp(epsilon)
    if gamma > 0:
        # Seed 001 appendix: x vs bot, and (errata) bot vs x; |x| = 1 is the worst case.
        return [(gamma, LognormalLaw(gamma - ee, 1.0 - gamma, r)),
                (gamma, LognormalLaw(1.0 - ee * gamma, -ee * (1.0 - gamma), r))]
    # gamma = 0: blanket = pointwise infimum phi_s(|y| + 1) over the unit ball (dim 1),
    # mass g = 2 Phibar(1/s). For y < 0 the ratio R_1/inf = 1 (atom, mass 1/2); for y > 0 it
    # is exp(2y/s^2) = exp(rZ - r^2/2) with y = -1 + s Z, Z > 1/s, r = 2/s (weight 1/g).
    s = sigma0
    g = 2.0 * float(ndtr(-1.0 / s))
    r2, zl, wt = 2.0 / s, 1.0 / s, 1.0 / g
    xb = SumLaw([_SubFinite([g - ee], [0.5]), LognormalLaw(-ee, g, r2, zl, wt)])
    bx = SumLaw([_SubFinite([1.0 - ee * g], [0.5]), LognormalLaw(1.0, -ee * g, r2, zl, wt)])
    return [(g, xb), (g, bx)]


def laws_for(randomizer, epsilon: float, adjacency: str):
    """Laws of the amplification variable for every pair/order that must be covered.

    Parameters
    ----------
    randomizer : BlanketMixedGaussian, GaussianRandomizer, or any object with
        ``privacy_amplification_laws(epsilon, adjacency)`` (see module docstring).
    epsilon : float
        epsilon >= 0 (nats).
    adjacency : {"zero_out", "replace"}

    Returns
    -------
    list of (gamma, Law)

    Raises
    ------
    ValueError
        GaussianRandomizer with dim > 1.
    NotImplementedError
        BlanketMixedGaussian with adjacency "replace".
    TypeError
        Unknown randomizer type without the protocol method.
    """
    from sharpdp.shuffle.mechanisms import BlanketMixedGaussian

    if isinstance(randomizer, BlanketMixedGaussian):
        if randomizer.gamma == 0 and randomizer.dim != 1:
            raise ValueError("dim: GaussianRandomizer accounting supports dim=1 until general randomizers arrive "
                             f"(got dim={randomizer.dim})")
        return _bmg_laws(randomizer.gamma, randomizer.sigma0, epsilon, adjacency)
    fn = getattr(randomizer, "privacy_amplification_laws", None)
    if fn is None:
        raise TypeError(f"randomizer: {type(randomizer).__name__} has no privacy_amplification_laws(epsilon, adjacency)")
    return list(fn(epsilon, adjacency))


__all__ = ["Law", "FiniteLaw", "LognormalLaw", "SumLaw", "laws_for"]
