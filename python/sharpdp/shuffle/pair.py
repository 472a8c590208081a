"""The discrete dominating pair on the privacy-loss lattice Delta Z (docs/composition.md §2-§3):
:class:`DominatingPair`, the hockey-stick curves of the sampled certified profile (lower convex hull
in t = e^eps, the legs of a replace-one profile through bot) and the pessimistic connect-the-dots
masses (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, "Connect the Dots: Tighter Discrete
Approximations of Privacy Loss Distributions", Algorithm 1), rounded so that the stored pair still
dominates. :func:`sharpdp.shuffle.profile.dominating_pair` builds it from an accountant.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, fields
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from sharpdp import _validation as V

_U = 2.0**-53
_CURVE_MARGIN = 1e-12  # relative margin on curve values computed in floats (error <= ~300 u)
_AIM = 0.8  # refine_points splits a segment into parts aimed at this fraction of the target


def swap(x_lo, x_hi, lo, up):
    """Bounds of 1 - e^-x + e^-x d at eps = -x, x in [x_lo, x_hi] (x >= 0), d in [lo, up]: the
    expression increases in x and in d. exp/expm1 are taken within 2 ulp (8u margins)."""
    upper = np.minimum((-np.expm1(-x_hi) + np.exp(-x_hi) * up) * (1 + 8 * _U), 1.0)
    lower = np.maximum((-np.expm1(-x_lo) + np.exp(-x_lo) * lo) * (1 - 8 * _U), 0.0)
    return lower, upper


@dataclass(frozen=True, repr=False)
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
        ``lower=True``), which dominates nothing, and for a pair of a randomizer whose law is only
        estimated (``randomizer.certified`` False: a GeneralRandomizer without ``log_curvature``).
    """

    value_discretization_interval: float
    losses: np.ndarray
    probs: np.ndarray
    infinity_mass: float
    adjacency: str = "zero_out"
    sample_epsilons: np.ndarray = field(default_factory=lambda: np.empty(0))
    sample_deltas: np.ndarray = field(default_factory=lambda: np.empty(0))
    certified: bool = True

    def __repr__(self) -> str:
        """A one-line summary: the step, the number and range of the finite losses, the mass at +inf, the samples'
        eps range (:meth:`full_repr` has every array)."""
        dx, m = self.value_discretization_interval, int(self.losses.size)
        loss = f"{m} finite losses" + (f" in [{self.losses[0] * dx:.6g}, {self.losses[-1] * dx:.6g}] nats" if m else "")
        se = self.sample_epsilons
        smp = f"{se.size} samples" + (f" at eps in [{se.min():.6g}, {se.max():.6g}]" if se.size else "")
        return (f"DominatingPair(step={dx:.6g}, adjacency={self.adjacency!r}, {loss}, infinity_mass={self.infinity_mass:.6g}, "
                f"{smp}, certified={self.certified})")

    def full_repr(self) -> str:
        """The dataclass representation with every array in full (``repr`` is a summary)."""
        with np.printoptions(threshold=sys.maxsize, floatmode="unique"):
            args = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        return f"DominatingPair({args})"

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


class Curve:
    """Upper values at lattice points of a piecewise-linear curve in t = e^eps: vertices at the
    lattice indices ``k`` (increasing) with values ``h`` (upper values of a convex, non-increasing
    hockey-stick curve, so by Claim A of ``docs/composition.md`` §2 the interpolation in t lies
    above it), constant h[-1] beyond the last vertex, 1 below the first. Interpolation weights come
    from expm1 of lattice differences (relative error <= ~300 u, covered by a 1e-12 margin).
    ``index`` float with ``dx`` 1.0: vertices at real eps given as floats (``profile_bottom.FloatCurve``)."""

    index: type = np.int64

    def __init__(self, k: np.ndarray, h: np.ndarray, dx: float):
        self.k, self.h, self.dx = np.asarray(k, dtype=self.index), np.asarray(h, dtype=float), float(dx)

    def __call__(self, k: np.ndarray) -> np.ndarray:
        k = np.asarray(k, dtype=self.index)
        kv, hv, dx = self.k, self.h, self.dx
        out = np.ones(k.shape)
        out[k >= kv[-1]] = hv[-1]
        mid = (k >= kv[0]) & (k < kv[-1])
        km = k[mid]
        j = np.searchsorted(kv, km, side="right") - 1
        a, b = kv[j], kv[j + 1]
        out[mid] = chord(hv[j], hv[j + 1], (km - a) * dx, (b - km) * dx, (b - a) * dx)
        return np.minimum(out * (1 + _CURVE_MARGIN), 1.0)


def chord(h_a, h_b, d_a, d_b, d):
    """The chord in t = e^eps through (t_a, h_a), (t_b, h_b) at t = e^eps, from the differences d_a = eps - eps_a,
    d_b = eps_b - eps and d = eps_b - eps_a: h_a w_a + h_b w_b with w_b = expm1(d_a) / expm1(d) = (t - t_a) / (t_b - t_a)
    and w_a = e^{d_a} expm1(d_b) / expm1(d) = (t_b - t) / (t_b - t_a) (no cancellation: each weight within a few
    hundred u of its value when each difference is within a few u of its own, docs/composition.md §2.13)."""
    with np.errstate(over="ignore", invalid="ignore"):
        den = np.expm1(d)
        w_b = np.expm1(d_a) / den
        w_a = np.exp(d_a) * np.expm1(d_b) / den
    return h_a * w_a + h_b * w_b


def leg_curve(ks_pos, up_pos, lo_other, up_other, ks_other, dx):
    """The hull curve (Claim A) of one leg x -> bot through bot: certified upper values of its
    profile at eps = k dx >= 0 (``ks_pos``, ``up_pos``) and, at eps = -k dx < 0, the swap identity
    applied to the other leg's values (bot -> x at +k dx: ``ks_other``, ``up_other``)."""
    pos = ks_other > 0
    xk = ks_other[pos].astype(float) * dx
    _, su = swap(xk, np.nextafter(xk, np.inf), lo_other[pos], up_other[pos])
    k = np.concatenate([-ks_other[pos][::-1], ks_pos])
    h = np.minimum.accumulate(np.minimum(np.concatenate([su[::-1], up_pos]), 1.0))
    keep = hull(np.exp(k * dx), h)
    return Curve(k[keep], h[keep], dx)


def via_bottom_eval(curve_a: Curve, curve_b: Curve, scale: int = 1):
    """``evaluate(ks)`` for the replace-one bound through bot: upper values of
    min over splits k1 + k2 = k of A(k1 Delta) + e^{k1 Delta} B(k2 Delta) (A, B the legs' hull
    curves), as (lower, upper) with lower = upper. For fixed k the objective is piecewise linear
    in t1 = e^{k1 Delta} (A is piecewise linear in t1, and t1 B(t / t1) is linear in t1 on each
    piece of B), with breakpoints at A's vertices and at k minus B's vertices: the minimum over
    those splits is the minimum over every real split in the vertices' range. ``scale`` > 1: the
    curves live on the lattice Delta / scale (a leg's cliff resolved there, docs/composition.md
    §2.12) and ``ks`` are indices on Delta (the curves' index k scale)."""
    dx = curve_a.dx

    def evaluate(ks, need_lower=True, negligible=0.0):  # (exact values of the hull curves: nothing to coarsen)
        out = np.empty(len(ks))
        for i, k in enumerate((np.asarray(ks, dtype=np.int64) * scale).tolist()):
            k1 = np.unique(np.concatenate([curve_a.k, k - curve_b.k]))
            with np.errstate(over="ignore"):
                val = curve_a(k1) + np.exp(k1 * dx) * curve_b(k - k1)
            out[i] = np.min(val)
        out = np.minimum(out * (1 + _CURVE_MARGIN), 1.0)
        return out, out.copy()

    return evaluate




def chord_estimate(t, H, i: int) -> float:
    """The estimated relative overshoot of the chord in t between samples i and i + 1 (values ``H`` at ``t`` = e^eps,
    increasing): a quarter of the height, relative to the chord, of the triangle the chord forms with the supporting
    lines of the neighbouring segments (their chords extended; half the chord without neighbours), as
    :func:`refine_points` describes (``docs/composition.md`` §2.2). An estimate."""
    m = len(t)
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
    worst = 0.0
    for tc in cands:
        chord = h0 + (h1 - h0) * (tc - t0) / (t1 - t0)
        lb = max([0.0] + [s * (tc - a) + b for s, a, b in lines]) if lines else 0.5 * chord
        g = (chord - lb) / chord if chord > 0 else 0.0
        worst = max(worst, g)
    return 0.25 * worst


def refine_points(ks, H, dx, rel_tol, floor, per_segment: int = 64, loose_below: float = 0.0,
                   loose_factor: float = 1.0, targets=None):
    """Integer grid points to add, worst segment first, as a list of lists (one per segment).

    Between consecutive samples the convex curve lies above the supporting lines of the
    neighbouring segments (extended chords), so the chord in t = e^eps exceeds it by at most the
    height of the triangle they form. For a smooth curve sampled at roughly even steps the actual
    interpolation error is about a quarter of that height (exactly a quarter for a parabola), and
    it scales with the square of the step. A segment whose estimate e = height/4 (relative to the
    chord) exceeds ``rel_tol`` and whose chord is above ``floor`` is split into
    m = ceil(sqrt(e / (0.8 rel_tol))) even parts (m <= ``per_segment``), so one round usually
    suffices instead of repeated halving (which ends between rel_tol/4 and rel_tol and so spends
    up to twice the samples). Segments whose chord stays below ``loose_below`` use the target
    ``loose_factor * rel_tol``; ``targets`` (one per segment, or None) replaces ``rel_tol`` on the others
    (``pair_budget.segment_targets``, docs/composition.md §2.17). The choice of points only affects the accuracy of
    the pair, never its validity (Claim A of ``docs/composition.md`` §2 holds for any set of samples)."""
    t = np.exp(ks * dx)
    new = []
    m = len(ks)
    for i in range(m - 1):
        if ks[i + 1] - ks[i] < 2 or max(H[i], H[i + 1]) <= floor:
            continue
        h0, h1 = H[i], H[i + 1]
        est = chord_estimate(t, H, i)
        target = rel_tol * loose_factor if max(h0, h1) < loose_below else \
            rel_tol if targets is None else float(targets[i])
        if est > target:
            k_end, extra = float(ks[i + 1]), []
            if 0.0 < h1 < floor < h0:
                # the segment crosses the refinement floor: split only the part above it (where
                # log delta, interpolated linearly in eps, meets the floor; that point is added),
                # since samples far below the floor are costly and refine nothing
                k_end = ks[i] + (ks[i + 1] - ks[i]) * (math.log(h0) - math.log(floor)) / (math.log(h0) - math.log(h1))
                k_end = float(min(max(round(k_end), ks[i] + 1), ks[i + 1] - 1))
                est *= ((k_end - ks[i]) / (ks[i + 1] - ks[i])) ** 2
                extra = [int(k_end)]
            parts = min(per_segment, int(k_end - ks[i]), max(1, math.ceil(math.sqrt(est / (_AIM * target)))))
            pts = np.round(np.linspace(ks[i], k_end, parts + 1)[1:-1]).astype(np.int64)
            pts = np.unique(np.concatenate([pts, np.array(extra, dtype=np.int64)]))
            pts = pts[(pts > ks[i]) & (pts < ks[i + 1])]
            if pts.size:
                new.append((est, pts.tolist()))
    new.sort(key=lambda x: -x[0])
    return [p for _, p in new]


def seed_points(cache: dict, points, dx: float, k_lim: int, rel_tol: float, floor: float = 0.0) -> dict:
    """Lattice samples {k: (lower, upper)} on the step ``dx`` from certified values already computed at ``points``
    (eps >= 0, sorted; their entries of the round's value ``cache``): the value at e certifies delta at every
    eps >= e, so it stands for the first lattice point k with nextafter(k dx, 0) >= e (``docs/composition.md`` §2.4).
    Only a choice of samples: a point is taken where the shift costs at most rel_tol / 4 by the local slope of
    log delta between its neighbours (exp(s (k dx - e)) - 1), or where its value is at most ``floor`` (not refined),
    the larger e where two share a k."""
    pts = [(e, cache[e]) for e in points if e in cache]
    pts = [(e, v) for e, v in pts if v[1] > 0.0 and math.isfinite(v[1])]
    out: dict = {}
    for i, (e, (lo, up)) in enumerate((e, v[:2]) for e, v in pts):
        k = 0 if e == 0.0 else int(math.ceil(e / dx))
        while k > 0 and float(np.nextafter(float(k) * dx, 0.0)) < e:
            k += 1
        if k > k_lim:
            continue
        slope = 0.0
        for j in (i - 1, i + 1):  # |d log delta / d eps| on the neighbouring segments
            if 0 <= j < len(pts) and pts[j][0] != e:
                slope = max(slope, abs(math.log(pts[j][1][1] / up) / (pts[j][0] - e)))
        shift = 0.0 if k == 0 else float(np.nextafter(float(k) * dx, 0.0)) - e
        if math.expm1(slope * shift) <= 0.25 * rel_tol or up <= floor:
            out[k] = (lo, up)  # (points are sorted: a later e with the same k is the nearer one)
    return out


def cover(lo_v, up_v):
    """Upper values times 1 + g, g the largest bracket gap (upper - lower)/lower of the sample and
    its two neighbours (<= 0.05): ``cover_upper`` of :func:`dominating_pair`. A sample without a
    lower value (NaN: upper value first, docs/embedding.md §3.2) takes the larger gap of the nearest
    samples with one on either side."""
    lo_v = np.asarray(lo_v, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.where(lo_v > 0, (up_v - lo_v) / lo_v, 0.0)
    gap = np.clip(np.nan_to_num(gap), 0.0, 0.05)
    known = ~np.isnan(lo_v)
    if known.any() and not known.all():
        idx = np.flatnonzero(known)
        pos = np.searchsorted(idx, np.arange(lo_v.size))  # the first known sample at or after each one
        right = gap[idx[np.minimum(pos, idx.size - 1)]]
        left = gap[idx[np.maximum(pos - 1, 0)]]
        gap = np.where(known, gap, np.maximum(left, right))
    g = np.maximum(gap, np.maximum(np.concatenate([gap[1:], [0.0]]), np.concatenate([[0.0], gap[:-1]])))
    return np.minimum(up_v * (1.0 + g) * (1 + 2 * _U), 1.0)


def hull(t, H):
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


def masses(k, H, dx):
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


def build_pair(ks_full, H_full, dx, adjacency, certified, samples):
    """Hull, masses with certified lower values, and the cascade of ``docs/composition.md`` §3:
    each mass is rounded down and the rounding carried to the next (larger) loss, so every
    partial sum of (exact - stored) masses stays >= 0 (the stored pair then dominates)."""
    t = np.exp(ks_full * dx)
    keep = hull(t, H_full)
    for _ in range(len(keep) + 1):
        k = ks_full[keep]
        H = H_full[keep]
        lo = masses(k, H, dx)
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



_MIN_INTERVAL = 1e-12  # smallest lattice step (nats): 60 nats / 1e-12 indices still fit comfortably


def check_interval(value_discretization_interval) -> float:
    """The lattice step Delta as a float in [1e-12, 1] (nats), or ValueError naming
    ``value_discretization_interval``: a finer step makes the lattice indices of the privacy
    losses (up to 60 nats) exceed what the pair's int64 indices and the FFT lengths can hold."""
    dx = V.real("value_discretization_interval", value_discretization_interval, lo=0.0, hi=1.0, lo_open=True)
    if dx < _MIN_INTERVAL:
        raise ValueError(f"value_discretization_interval must be >= {_MIN_INTERVAL} nats (a finer lattice cannot "
                         f"index losses up to 60 nats), got {value_discretization_interval!r}")
    return dx


__all__ = ["Curve", "DominatingPair", "build_pair", "check_interval", "chord", "chord_estimate", "cover", "hull", "leg_curve", "masses",
           "refine_points", "swap", "via_bottom_eval"]
