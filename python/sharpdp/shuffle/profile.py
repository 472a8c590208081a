"""Certified privacy profile of a shuffled round, and a discrete dominating pair built from it.

The privacy profile of a mechanism M is delta(eps) = sup over ordered neighbouring pairs
(D, D') of the hockey-stick divergence H_{e^eps}(M(D) || M(D')), for every real eps.
:class:`~sharpdp.shuffle.ShuffleAccountant` certifies upper values for eps >= 0 covering both
orders of every pair; for eps < 0 the swap identity (``docs/composition.md`` §1)

    H_{e^eps}(P || Q) = 1 - e^eps + e^eps H_{e^-eps}(Q || P)

turns them into upper values there too. :func:`dominating_pair` turns finitely many certified
values into a discrete pair of distributions (P, Q) on the privacy-loss lattice Delta Z whose
hockey-stick curve lies above the mechanism's at EVERY eps (a dominating pair in the sense of
Zhu, Dong & Wang, "Optimal Accounting of Differential Privacy via Characteristic Function",
Definition 7): the lower convex hull of the samples in t = e^eps, then the pessimistic
connect-the-dots distribution of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, "Connect the
Dots: Tighter Discrete Approximations of Privacy Loss Distributions" (Algorithm 1), with its
masses rounded so that the stored pair still dominates (``docs/composition.md`` §2-§3).
Dominating pairs compose (Zhu et al., Theorem 10), which :class:`ComposedAccountant` and
:mod:`sharpdp.interop.dp_accounting` use.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from sharpdp import _validation as V

_U = 2.0**-53
_REFINE_FLOOR = 1e-15  # below it the samples are not refined for relative accuracy
# (eps, lower, upper) values computed per accountant: repeated profiles, to_pld and
# ComposedAccountant share them (an accountant's values never change).
_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _check_accountant(accountant) -> None:
    """TypeError naming ``accountant`` unless it is a ShuffleAccountant (duck-typed: this module
    sits below the accountant, which delegates ``privacy_profile`` to it)."""
    if not callable(getattr(accountant, "get_delta_bounds", None)) or not hasattr(accountant, "adjacency"):
        raise TypeError(f"accountant must be a ShuffleAccountant, got {type(accountant).__name__}")


def _positive_bounds(accountant, eps: np.ndarray):
    """Certified (lower, upper) of delta at eps >= 0 (a sorted array of distinct values), one
    sweep: values already computed for this accountant are reused, the rest come from one
    ``get_delta_bounds`` call (sorted, so the accountant's grids and caches carry over), and the
    upper values are made non-increasing in eps (delta is: Up(e') certifies every e >= e')."""
    try:
        cache = _CACHE.setdefault(accountant, {})
    except TypeError:  # not weak-referenceable: no cache
        cache = {}
    missing = np.array([e for e in eps.tolist() if e not in cache], dtype=float)
    if missing.size:
        lo, up = accountant.get_delta_bounds(missing)
        for e, a, b in zip(missing.tolist(), np.atleast_1d(lo).tolist(), np.atleast_1d(up).tolist()):
            cache[e] = (a, b)
    keys = np.array(sorted(cache), dtype=float)
    ups = np.minimum.accumulate(np.array([cache[k][1] for k in keys.tolist()]))
    idx = np.searchsorted(keys, eps)
    lo = np.array([cache[e][0] for e in eps.tolist()])
    return lo, ups[idx]


def _swap(x_lo, x_hi, lo, up):
    """Bounds of 1 - e^-x + e^-x d at eps = -x, x in [x_lo, x_hi] (x >= 0), d in [lo, up]: the
    expression increases in x and in d. exp/expm1 are taken within 2 ulp (8u margins)."""
    upper = np.minimum((-np.expm1(-x_hi) + np.exp(-x_hi) * up) * (1 + 8 * _U), 1.0)
    lower = np.maximum((-np.expm1(-x_lo) + np.exp(-x_lo) * lo) * (1 - 8 * _U), 0.0)
    return lower, upper


def privacy_profile_bounds(accountant, epsilons):
    """Certified (lower, upper) values of the privacy profile delta(eps) at any real eps.

    Parameters
    ----------
    accountant : ShuffleAccountant
        The shuffled round (randomizer, n, adjacency).
    epsilons : float or array_like of float
        eps in nats, any sign, any shape; +-inf allowed (delta(-inf) = 1).

    Returns
    -------
    (lower, upper) : floats or float64 arrays of ``epsilons``' shape
        ``upper`` is the certified upper value of delta(eps), maximised over both orders of
        every neighbouring pair (``ShuffleAccountant.get_delta`` for eps >= 0, the swap identity
        of the module docstring for eps < 0, rounded up). ``lower`` is the accountant's
        certified lower value of the same blanket bound (a quality check, not a lower bound on
        the mechanism's delta).

    Raises
    ------
    ValueError
        NaN in ``epsilons``.
    """
    _check_accountant(accountant)
    arr = V.epsilon_values("epsilons", epsilons)
    flat = arr.ravel()
    a = np.abs(flat)
    uniq = np.unique(a)
    lo_u, up_u = _positive_bounds(accountant, uniq) if uniq.size else (np.empty(0), np.empty(0))
    i = np.searchsorted(uniq, a)
    lo, up = lo_u[i] if uniq.size else np.empty(0), up_u[i] if uniq.size else np.empty(0)
    neg = flat < 0
    if np.any(neg):
        with np.errstate(over="ignore", invalid="ignore"):
            sl, su = _swap(a[neg], a[neg], lo[neg], up[neg])
        lo, up = lo.copy(), up.copy()
        lo[neg], up[neg] = np.where(np.isinf(a[neg]), 1.0, sl), np.where(np.isinf(a[neg]), 1.0, su)
    if arr.ndim == 0:
        return float(lo[0]), float(up[0])
    return lo.reshape(arr.shape), up.reshape(arr.shape)


def privacy_profile(accountant, epsilons):
    """Certified upper values of the privacy profile delta(eps) for eps of any sign.

    Parameters
    ----------
    accountant : ShuffleAccountant
    epsilons : float or array_like of float
        eps in nats, any sign, any shape (+-inf allowed).

    Returns
    -------
    float or numpy.ndarray of float64
        Upper values of delta(eps) in [0, 1], shape of ``epsilons``; for eps < 0 through
        delta(eps) = 1 - e^eps + e^eps delta_swapped(-eps) (``docs/composition.md`` §1).
        All eps share one sweep (:func:`privacy_profile_bounds`).

    Raises
    ------
    ValueError
        NaN in ``epsilons``.
    """
    return privacy_profile_bounds(accountant, epsilons)[1]


# ----------------------------------------------------------------------------- sampling

def _grid_eval(accountant, ks: np.ndarray, dx: float):
    """(lower, upper) at eps = k dx for integer k >= 0, evaluated a hair below the real product
    k * dx (delta is non-increasing, so the value there certifies k * dx itself)."""
    e = np.nextafter(ks.astype(float) * dx, 0.0)
    e[ks == 0] = 0.0
    return _positive_bounds(accountant, e)


def _refine_points(ks, H, dx, rel_tol, floor):
    """Integer grid points to add, worst first: between consecutive samples, where the chord in
    t = e^eps exceeds the supporting lines of the neighbouring segments (a lower estimate of the
    convex curve) by more than 4 rel_tol relative (the interpolation error of a smooth convex
    curve is about a quarter of that gap) and the chord is above the floor."""
    t = np.exp(ks * dx)
    new = []
    m = len(ks)
    for i in range(m - 1):
        if ks[i + 1] - ks[i] < 2 or max(H[i], H[i + 1]) <= floor:
            continue
        t0, t1, h0, h1 = t[i], t[i + 1], H[i], H[i + 1]
        lines = []
        if i >= 1 and t[i] > t[i - 1]:
            lines.append(((H[i] - H[i - 1]) / (t[i] - t[i - 1]), t[i], H[i]))
        if i + 2 < m and t[i + 2] > t[i + 1]:
            lines.append(((H[i + 2] - H[i + 1]) / (t[i + 2] - t[i + 1]), t[i + 1], H[i + 1]))
        cands = [0.5 * (t0 + t1)]
        if len(lines) == 2 and lines[0][0] != lines[1][0]:
            (s1, a1, b1), (s2, a2, b2) = lines
            ts = (b2 - b1 + s1 * a1 - s2 * a2) / (s1 - s2)
            if t0 < ts < t1:
                cands.append(ts)
        worst, at = 0.0, None
        for tc in cands:
            chord = h0 + (h1 - h0) * (tc - t0) / (t1 - t0)
            lb = max([0.0] + [s * (tc - a) + b for s, a, b in lines]) if lines else 0.5 * chord
            g = (chord - lb) / chord if chord > 0 else 0.0
            if g > worst:
                worst, at = g, tc
        if worst > 4.0 * rel_tol and at is not None:
            k = int(round(math.log(at) / dx))
            k = min(max(k, ks[i] + 1), ks[i + 1] - 1)
            new.append((worst, k))
    new.sort(reverse=True)
    return [k for _, k in new]


def _sample_profile(accountant, dx: float, floor: float, max_evaluations: int, rel_tol: float,
                    progress: bool | None = None):
    """Adaptive grid k >= 0 (eps = k dx) and the certified (lower, upper) values there."""
    import sys

    from tqdm.auto import tqdm

    vals: dict = {}
    bar = tqdm(total=max_evaluations, desc="privacy profile (at most)", unit=" values", file=sys.stderr,
               leave=False, disable=progress is False, delay=0.0 if progress else 1.0)

    def ev(klist):
        ks = np.array(sorted(set(int(k) for k in klist) - set(vals)), dtype=np.int64)
        if ks.size:
            lo, up = _grid_eval(accountant, ks, dx)
            for k, a, b in zip(ks.tolist(), lo.tolist(), up.tolist()):
                vals[k] = (a, b)
            bar.update(int(ks.size))

    ev([0])
    k_lim = int(math.ceil(60.0 / dx))  # the accountant's values at eps >= 60 are constant
    cap = getattr(getattr(accountant, "randomizer", None), "local_epsilon", None)
    if cap is not None:
        k_lim = min(k_lim, int(math.ceil(float(cap) / dx)) + 1)
    k_hi = 0
    if vals[0][1] > floor:
        k = 1
        while True:
            ev([k])
            if vals[k][1] <= floor or k >= k_lim:
                break
            k = min(2 * k, k_lim)
        k_hi = k
    if k_hi > 0:
        ev(np.unique(np.round(np.linspace(0, k_hi, 33)).astype(np.int64)).tolist())
    for _ in range(60):
        if len(vals) >= max_evaluations:
            break
        ks = np.array(sorted(vals), dtype=np.int64)
        up = np.minimum.accumulate(np.array([vals[k][1] for k in ks.tolist()]))
        new = _refine_points(ks, up, dx, rel_tol, max(floor, _REFINE_FLOOR))
        if not new:
            break
        ev(new[: max(max_evaluations - len(vals), 0)])
    bar.close()
    ks = np.array(sorted(vals), dtype=np.int64)
    lo = np.array([vals[k][0] for k in ks.tolist()])
    up = np.minimum.accumulate(np.array([vals[k][1] for k in ks.tolist()]))
    return ks, lo, up


# ----------------------------------------------------------------------------- the pair

@dataclass(frozen=True)
class DominatingPair:
    """A discrete dominating pair (P, Q) on the privacy-loss lattice, stored by P's law.

    P puts mass ``probs[i]`` on the privacy loss ``losses[i] * value_discretization_interval``
    (nats) and the rest, at most ``infinity_mass``, on +inf; Q = e^{-loss} P on the finite losses
    plus the remaining mass on loss -inf. The stored floats ARE the pair (no rounding left): its
    hockey-stick curve is >= the mechanism's privacy profile at every eps
    (``docs/composition.md`` §3) when built from certified upper values.

    Attributes
    ----------
    value_discretization_interval : float
        Lattice step Delta > 0 (nats).
    losses : numpy.ndarray of int64, shape (m,)
        Strictly increasing lattice indices of the finite losses.
    probs : numpy.ndarray of float64, shape (m,)
        P-masses, >= 0, sum <= 1.
    infinity_mass : float
        Upper value of P(loss = +inf) = 1 - sum(probs) (rounded up; exact value 1 - fsum).
    adjacency : str
        Neighbouring relation of the round ("zero_out" or "replace").
    sample_epsilons, sample_deltas : numpy.ndarray of float64
        The certified profile samples used (eps >= 0 and their upper delta).
    certified : bool
        False for a reference pair built from lower values (:func:`dominating_pair` with
        ``lower=True``), which dominates nothing.
    """

    value_discretization_interval: float
    losses: np.ndarray
    probs: np.ndarray
    infinity_mass: float
    adjacency: str = "zero_out"
    sample_epsilons: np.ndarray = field(default_factory=lambda: np.empty(0))
    sample_deltas: np.ndarray = field(default_factory=lambda: np.empty(0))
    certified: bool = True

    def get_delta(self, epsilon):
        """Upper value of the pair's hockey-stick divergence H_{e^eps}(P || Q) (nats in, float out).

        Sum of non-negative terms p_i (1 - e^{eps - l_i}) over l_i > eps plus the infinity mass,
        rounded up (each loss l_i = losses[i] * Delta taken one ulp above its float product, then
        a (m + 8) u relative margin). Accepts a scalar or array of any shape.
        """
        arr = V.epsilon_values("epsilon", epsilon)
        # upper values of the real losses k * Delta (the float product is within half an ulp):
        # a loss rounded down would shrink 1 - e^{eps - loss} without bound as eps nears it
        loss = np.nextafter(self.losses.astype(float) * self.value_discretization_interval, np.inf)
        out = np.empty(arr.size)
        for j, e in enumerate(arr.ravel().tolist()):
            sel = loss > e
            terms = self.probs[sel] * -np.expm1(e - loss[sel])
            out[j] = (math.fsum(terms.tolist()) + self.infinity_mass) * (1 + (self.probs.size + 8) * _U)
        out = np.minimum(out, 1.0)
        return float(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)


def _hull(t, H):
    """Indices of the lower convex hull of (0, 1), (t_i, H_i) (t increasing), without (0, 1)."""
    pts = [(0.0, 1.0, -1)] + [(float(a), float(b), i) for i, (a, b) in enumerate(zip(t, H))]
    out: list = []
    for p in pts:
        while len(out) >= 2:
            (x1, y1, _), (x2, y2, _) = out[-2], out[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                out.pop()
            else:
                break
        out.append(p)
    return [p[2] for p in out if p[2] >= 0]


def _masses(k, H, dx):
    """Connect-the-dots P-masses of the piecewise-linear curve through (0, 1) and (e^{k_v dx}, H_v)
    (Doroshenko et al., Algorithm 1) with certified lower values, as exact Fractions.

    The masses p_v = y_{v-1} + z_v cancel heavily (each term is of the order of the slope, the
    sum of the order of the curvature), so they are computed in 60-digit decimal arithmetic
    (``decimal``: every operation, exp included, correctly rounded): H_v and dx convert exactly,
    each of the <= 6 operations per term adds a relative error <= 10^-59, so
    |p~ - p| <= 1e-55 (|y| + |z| + |p|) (``docs/composition.md`` §3)."""
    with localcontext() as ctx:
        ctx.prec = 60
        Dx = Decimal(float(dx))
        Hd = [Decimal(float(h)) for h in H]
        m = len(k)
        t_ratio_m1 = [None] * m  # expm1(d_v), d_v = (k_{v+1} - k_v) dx
        for v in range(m - 1):
            d = Decimal(int(k[v + 1] - k[v])) * Dx
            # e^d - 1 cancels about -log10(d) digits: evaluate it with that many more digits, then
            # round once to 60 (relative error <= 10^-59 whatever the step d)
            with localcontext() as wide:
                wide.prec = 70 + max(0, -d.adjusted())
                em1 = d.exp() - 1
            t_ratio_m1[v] = +em1
        out = []
        tol = Decimal("1e-55")
        for v in range(m):
            if v == 0:
                y = 1 - Hd[0]
            else:
                e = t_ratio_m1[v - 1]  # y = (H_{v-1} - H_v) / (1 - e^{-d}) = (H_{v-1} - H_v)(1 + 1/e)
                y = (Hd[v - 1] - Hd[v]) * (1 + 1 / e)
            z = (Hd[v + 1] - Hd[v]) / t_ratio_m1[v] if v < m - 1 else Decimal(0)
            p = y + z
            out.append(Fraction(p - tol * (abs(y) + abs(z) + abs(p))))
    return out


def _round_down(x: Fraction) -> float:
    f = float(x)
    return float(np.nextafter(f, -np.inf)) if Fraction(f) > x else f


def _build_pair(ks_full, H_full, dx, adjacency, certified, samples):
    """Hull, masses with certified lower values, and the cascade of ``docs/composition.md`` §3:
    each mass is rounded down and the rounding carried to the next (larger) loss, so every
    partial sum of (exact - stored) masses stays >= 0 (the stored pair then dominates)."""
    t = np.exp(ks_full * dx)
    keep = _hull(t, H_full)
    for _ in range(len(keep) + 1):
        k = ks_full[keep]
        H = H_full[keep]
        lo = _masses(k, H, dx)
        carry = Fraction(0)
        probs = np.empty(len(k))
        bad = None
        for v in range(len(k)):
            target = lo[v] + carry
            if target < 0:
                bad = v
                break
            probs[v] = _round_down(target)
            carry = target - Fraction(probs[v])
        if bad is None:
            break
        # the curve is not convex at vertex `bad` within rounding: drop that vertex (the
        # interpolation through the remaining certified points still lies above delta)
        drop = bad if bad < len(keep) - 1 else bad - 1
        if drop < 0:
            raise RuntimeError("dominating_pair: could not build a valid pair")
        keep = keep[:drop] + keep[drop + 1:]
    total = sum((Fraction(float(p)) for p in probs), Fraction(0))
    rest = Fraction(1) - total
    if rest < 0:
        raise RuntimeError("dominating_pair: masses exceed 1; refusing to certify")
    inf_mass = float(rest)
    if Fraction(inf_mass) < rest:
        inf_mass = float(np.nextafter(inf_mass, np.inf))
    nz = probs > 0
    return DominatingPair(float(dx), k[nz].astype(np.int64), probs[nz], inf_mass, adjacency,
                          samples[0], samples[1], certified)


def dominating_pair(accountant, value_discretization_interval: float = 1e-4, *, epsilons=None,
                    delta_floor: float = 1e-18, max_evaluations: int = 400, rel_tol: float = 2e-3,
                    cover_upper: bool = True, lower: bool = False,
                    progress: bool | None = None) -> DominatingPair:
    """Discrete dominating pair of a shuffled round from its certified privacy profile.

    Parameters
    ----------
    accountant : ShuffleAccountant
        The round (randomizer, n, adjacency); its certified upper values are sampled.
    value_discretization_interval : float, default 1e-4
        Lattice step Delta of the privacy loss (nats), > 0.
    epsilons : array_like of float, optional
        Explicit sample points eps >= 0 (each a multiple of Delta within 1e-9 relative). By
        default they are chosen adaptively: eps_max (delta <= ``delta_floor``, or the local
        epsilon of a pure-LDP randomizer) by doubling, 33 even points, then points where the
        chord in t = e^eps exceeds the supporting lines of the neighbouring segments by more than
        ``rel_tol`` (relative), up to ``max_evaluations``.
    delta_floor : float, default 1e-18
        Values of delta below it are not resolved (they land in the infinity mass: never an
        under-report).
    max_evaluations : int, default 400
        Budget of profile evaluations (each one certified accountant call).
    rel_tol : float, default 2e-3
        Interpolation target of the adaptive sampling (estimated relative error of the chord in
        t = e^eps between samples, where delta >= 1e-15).
    cover_upper : bool, default True
        Multiply each sampled value by 1 + g, g the largest bracket gap (upper - lower)/lower the
        accountant achieved at that sample and its two neighbours (g <= 0.05). The pair then lies
        above the accountant's own upper value ``get_delta(eps)`` at every eps where its bracket
        gap is <= the neighbouring samples' g, not only above the true delta
        (``docs/composition.md`` §2). False gives the tightest pair (still certified), about g
        below.
    lower : bool, default False
        Build the same construction from the accountant's LOWER values (a reference for tests
        and benchmarks; ``certified`` is then False and the pair dominates nothing).
    progress : bool or None
        None (default): a tqdm bar on stderr (values computed out of the budget, an upper
        estimate of the work) appears only after 1 s; True: at once; False: never.

    Returns
    -------
    DominatingPair
        Masses on multiples of Delta for both signs of the loss: eps samples on the negative side
        come from the swap identity. Certified construction: ``docs/composition.md`` §2-§3.

    Raises
    ------
    ValueError
        Delta not in (0, 1], ``epsilons`` negative, not finite, or not on the Delta grid,
        ``delta_floor`` not in (0, 1), ``max_evaluations`` < 2, ``rel_tol`` not in (0, 1).
    """
    _check_accountant(accountant)
    dx = V.real("value_discretization_interval", value_discretization_interval, lo=0.0, hi=1.0, lo_open=True)
    floor = V.real("delta_floor", delta_floor, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    max_ev = V.integer("max_evaluations", max_evaluations, lo=2)
    rtol = V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    adjacency = getattr(accountant, "adjacency", "zero_out")
    if epsilons is not None:
        e = V.real_array("epsilons", epsilons, ndim=1, lo=0.0)
        kf = e / dx
        ki = np.round(kf)
        if np.any(np.abs(kf - ki) > 1e-9 * np.maximum(1.0, np.abs(kf))):
            bad = e[np.argmax(np.abs(kf - ki))]
            raise ValueError(f"epsilons must lie on the discretisation grid (multiples of "
                             f"value_discretization_interval = {dx}); {bad} does not")
        ks = np.unique(np.concatenate([[0], ki.astype(np.int64)]))
        lo_v, up_v = _grid_eval(accountant, ks, dx)
        up_v = np.minimum.accumulate(up_v)
    else:
        ks, lo_v, up_v = _sample_profile(accountant, dx, floor, max_ev, rtol, progress)
    if cover_upper and not lower:
        # local gap: the largest of the sample's and its neighbours' (upper - lower)/lower
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.where(lo_v > 0, (up_v - lo_v) / lo_v, 0.0)
        gap = np.clip(np.nan_to_num(gap), 0.0, 0.05)
        g = np.maximum(gap, np.maximum(np.concatenate([gap[1:], [0.0]]), np.concatenate([[0.0], gap[:-1]])))
        up_v = np.minimum(up_v * (1.0 + g) * (1 + 2 * _U), 1.0)
    vals = lo_v if lower else up_v
    # negative side from the swap identity, at the same lattice points
    pos = ks > 0
    xk = ks[pos].astype(float) * dx
    x_hi = np.nextafter(xk, np.inf)
    sl, su = _swap(xk, x_hi, lo_v[pos], up_v[pos])
    neg_vals = sl if lower else su
    ks_full = np.concatenate([-ks[pos][::-1], ks])
    H_full = np.concatenate([neg_vals[::-1], vals])
    H_full = np.minimum.accumulate(np.minimum(H_full, 1.0))  # delta is non-increasing in eps
    samples = (ks.astype(float) * dx, up_v.copy())
    return _build_pair(ks_full, H_full, dx, adjacency, not lower, samples)


__all__ = ["DominatingPair", "dominating_pair", "privacy_profile", "privacy_profile_bounds"]
