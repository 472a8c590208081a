"""The numerical moment generating function and moments of V = min(L, T0) for the closed form's tilted values, bounds
on the density's log-derivative and chord slopes, and the mgf's tail bound (docs/accountant_tail.md §20 (a), (c),
§21 (c), §22, §23).

For the laws of :func:`.concentrated.eligible` (L = a + G e^{r N - r^2/2}, or an atom plus that law on N > z_lo with a
weight: docs/accountant_tail.md §23): upper and lower Riemann sums over cells of L's normal variable N (and the atom's
own cell), each cell's V-interval widened by the roundings and its probability bracketed by ``interval_prob`` and its
error bound. Every grid is valid (a choice of tightness only).
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp._core_loader import core as _core
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.accountant.memo import object_memo
from sharpdp.shuffle.laws import Law
from sharpdp.shuffle.laws.lognormal import interval_prob

MGF_CELLS = 4096  # cells of L's normal variable in the numerical mgf of V (§20)
MGF_Z0 = -9.0  # the first cell's upper end in L's normal variable (every choice is valid)
MOM_CELLS = 4096  # cells of the moments of V in the tilted lower value (§21)
RATE_GRID = 64  # points of the geometric grid bounding the density's log-derivative (§20)
# §22 (a): the chord slopes of log p are taken at the numbers of active users at these fractions of the range of m
# (0.25: about 6 sd below the mean, 0.5: the mean); each m takes the one at the largest such m at or below it
CHORD_EDGES = (0.0, 0.25, 0.375, 0.4375, 0.5)
TAIL_RATES = (1.5, 2.0, 2.5, 3.0)  # §22 (b): the rates t tried in P(X_m > -T0), multiples of kappa


def dn(x):
    """x - 4u |x| - 1e-300: a lower value of a result computed within 4 ulp (docs/accountant_tail.md §18 (h)).
    A float64 array is formed in one new array (the same operations on the same doubles in the same order:
    docs/accountant_tail.md §69.2), a C-contiguous one by the compiled core in one pass (§71.3)."""
    if type(x) is not np.ndarray or x.dtype != np.float64 or x.ndim == 0:
        return x - 4 * U * np.abs(x) - 1e-300
    if x.flags.c_contiguous:  # (one pass in C++, the same doubles: docs/accountant_tail.md §71.3)
        return _core.accountant.round_out(x, False)
    t = np.abs(x)
    t *= 4 * U
    np.subtract(x, t, out=t)
    t -= 1e-300
    return t


def up(x):
    """x + 4u |x| + 1e-300: an upper value (docs/accountant_tail.md §18 (h)); a float64 array in one new array as
    :func:`dn` (docs/accountant_tail.md §69.2)."""
    if type(x) is not np.ndarray or x.dtype != np.float64 or x.ndim == 0:
        return x + 4 * U * np.abs(x) + 1e-300
    if x.flags.c_contiguous:  # (docs/accountant_tail.md §71.3)
        return _core.accountant.round_out(x, True)
    t = np.abs(x)
    t *= 4 * U
    np.add(x, t, out=t)
    t += 1e-300
    return t


_dn, _up = dn, up  # (this module's names as before)


def h_exp(u):
    """e^u - 1 - u >= 0 (elementwise): a series where |u| <= 0.1, else expm1(u) - u (docs/accountant_tail.md §20
    (c): within 1e-11 relative; callers apply that factor)."""
    u = np.asarray(u, float)
    out = np.empty(u.shape)
    small = np.abs(u) <= 0.1
    us = u[small]
    term, acc = 0.5 * us * us, np.zeros(us.shape)
    for k in range(3, 13):  # (terms u^2/2 ... u^11/11!: the rest is below 1e-16 of u^2/2 for |u| <= 0.1)
        acc += term
        term = term * us / k
    out[small] = acc
    ub = u[~small]
    with np.errstate(over="ignore", invalid="ignore"):
        out[~small] = np.expm1(ub) - ub
    return out


def v_cells(law: Law, T0: float, cells: int = 0):
    """Cells of L's normal variable N: (-inf, z_0], [z_i, z_{i+1}] (uniform up to the computed v(T0)), [z_K, inf);
    (lo, hi, p_lo, p_up): V = min(L, T0) lies in [lo, hi] on each cell (L(z) = a + G e^{r z - r^2/2} widened by
    (72 + 4 (|r z| + r^2/2)) ulp of G e^{...} plus 4 ulp of |a|: exp assumed within 64 ulp, its argument's and the
    sum's roundings), and P(N in cell) in [p_lo, p_up] (``interval_prob`` and its error bound; docs/accountant_tail.md
    §20 (c)). Kept per law object by (T0, cells), read-only (the same floats: docs/accountant_tail.md §17)."""
    memo = object_memo(law, "_v_cells_memo", 16)
    key = (float(T0), int(cells))
    if memo is not None and (got := memo.get(key)) is not None:
        return got
    out = _cells(law, T0, cells)
    if memo is not None:
        memo[key] = out
    return out


def _cells(law: Law, T0: float, cells: int, z_start: float = MGF_Z0):
    """:func:`v_cells` without the memo (read-only arrays), the uniform cells from ``z_start`` (any start is
    valid: the first cell is (-inf, z_start])."""
    f = law.heavy_form()
    a, G, r = f.a, f.G, f.r
    z_lo = f.cont._vlo  # (-inf for the one-term law; the truncation of docs/accountant_tail.md §23 otherwise)
    z0 = max(z_start, z_lo)
    vT = (math.log((T0 - a) / G) + 0.5 * r * r) / r if T0 > a else z0  # (any grid end is valid)
    z = np.linspace(z0, max(vT, z0 + 1.0), (cells or MGF_CELLS) + 1)
    e = G * np.exp(r * z - 0.5 * r * r)
    # exp within 64 ulp (assumed), its argument's rounding 2 ulp of |r z| + r^2/2 (relative in e), the sum 2 ulp
    err = U * ((72.0 + 4.0 * (np.abs(r * z) + 0.5 * r * r)) * e + 4.0 * abs(a)) + 1e-300
    lo = np.clip(np.concatenate([[a], a + e - err]), a, T0)
    hi = np.clip(np.concatenate([a + e + err, [T0]]), a, T0)
    zz = np.concatenate([[z_lo], z, [np.inf]])
    p, pe = interval_prob(zz[:-1], zz[1:])
    p_lo, p_up = np.maximum(p - pe, 0.0), p + pe
    if f.atom_p > 0.0:  # the weighted part's cells and the atom's own cell (§23)
        w = f.cont.weight
        p_lo, p_up = w * p_lo * (1 - 4 * U), w * p_up * (1 + 4 * U)
        xa = min(f.atom, T0)
        lo, hi = np.concatenate([lo, [xa]]), np.concatenate([hi, [xa]])
        p_lo, p_up = np.concatenate([p_lo, [f.atom_p]]), np.concatenate([p_up, [f.atom_p]])
    out = (lo, hi, p_lo, p_up)
    for x in out:
        x.flags.writeable = False
    return out


def mgf_h_up(law: Law, T0: float, kap: float, c: float, cells: int = 0) -> float:
    """Upper value of E h(kap (V - c)), h(u) = e^u - 1 - u, V = min(L, T0), by an upper Riemann sum over cells of
    L's normal variable (h is convex: its max over a cell is at an end; docs/accountant_tail.md §20 (c))."""
    return float(mgf_h_ups(law, T0, [kap], c, cells)[0])


def mgf_h_ups(law: Law, T0: float, kaps, c: float, cells: int = 0) -> np.ndarray:
    """:func:`mgf_h_up` at each rate of ``kaps`` (one set of cells; float64 array, entries inf or nan where h
    overflows: not used by the callers)."""
    return _h_sums(v_cells(law, T0, cells), kaps, c)


def _h_sums(cells, kaps, c: float) -> np.ndarray:
    """The upper Riemann sums of :func:`mgf_h_ups` over the cells ``(lo, hi, p_lo, p_up)``."""
    lo, hi, _, p_up = cells
    k = np.asarray(kaps, float)[:, None]
    hm = np.maximum(h_exp(k * (lo - c)), h_exp(k * (hi - c))) * (1 + 1e-11) + 1e-300
    return np.sum(hm * p_up, axis=1) * (1 + 1e-10) + 1e-300


def mgf_h_los(law: Law, T0: float, kaps, c: float, cells: int = 0) -> np.ndarray:
    """Lower values of E h(kap (V - c)), h(u) = e^u - 1 - u, V = min(L, T0), at each rate of ``kaps``: lower Riemann
    sums over :func:`v_cells` (h is convex with its minimum 0 at u = 0: its min over a cell [lo, hi] is 0 where the
    cell holds c, else at the nearer end), each value's rounding 1e-11 relative and the sum's 1e-10, the cells' lower
    probabilities (docs/accountant_tail.md §41.1); any grid is valid; the rates positive. Entries are nan where h
    overflows (not used)."""
    lo, hi, p_lo, _ = v_cells(law, T0, cells)
    dl, dh = _dn(lo - c), _up(hi - c)  # (the cell's V - c within [dl, dh]: h's min over the wider interval)
    near = np.where(dl > 0, dl, np.where(dh < 0, dh, 0.0))  # (the cell's point nearest c: h's min there, k > 0)
    with np.errstate(over="ignore", invalid="ignore"):
        hmin = h_exp(np.asarray(kaps, float)[:, None] * near[None, :])
        return np.sum(hmin * (1 - 1e-11) * p_lo, axis=1) * (1 - 1e-10)


def v_moments(law: Law, T0: float, c: float, cells: int = 0):
    """(S2_lo, S2_up, S3_lo, S4_up): bounds on E (V - c)^k, V = min(L, T0), by lower and upper Riemann sums over
    :func:`v_cells` ((V - c)^2 and ^4 are convex in V, ^3 increasing; docs/accountant_tail.md §21 (c)), on
    ``cells`` cells (MOM_CELLS by default; any grid is valid)."""
    lo, hi, p_lo, p_up = v_cells(law, T0, cells or MOM_CELLS)
    dl, dh = _dn(lo - c), _up(hi - c)
    sq_min = np.where((dl <= 0) & (dh >= 0), 0.0, np.minimum(dl * dl, dh * dh)) * (1 - 4 * U)
    sq_max = np.maximum(dl * dl, dh * dh) * (1 + 4 * U)
    cube_lo = dl * dl * dl
    cube_lo = np.where(cube_lo >= 0, cube_lo * (1 - 8 * U) * p_lo, cube_lo * (1 + 8 * U) * p_up)
    s2_lo = float(np.sum(sq_min * p_lo)) * (1 - 1e-10)
    s2_up = float(np.sum(sq_max * p_up)) * (1 + 1e-10) + 1e-300
    pos, neg = float(np.sum(np.maximum(cube_lo, 0.0))), float(np.sum(np.minimum(cube_lo, 0.0)))
    s3_lo = pos * (1 - 1e-10) + neg * (1 + 1e-10) - 1e-300
    s4_up = float(np.sum(sq_max * sq_max * (1 + 4 * U) * p_up)) * (1 + 1e-10) + 1e-300
    return s2_lo, s2_up, s3_lo, s4_up


def log_convex_from(law: Law, s: float) -> bool:
    """True where log p is (certainly) convex on [s, inf), p the density of L: its slope -rho(s') decreases in s'
    where v(s') > 1/r - r (docs/accountant_tail.md §21 (a)), checked at s with margins of 4 ulp on s - a and 1e-9 of
    the terms' magnitudes on v (v increases in s'). (a, G, r) are the law's ``heavy_form``'s; for an atom plus a
    truncated part only s >= 0 is answered (there p is the part's density times its constant weight, which does not
    change log p's convexity: docs/accountant_tail.md §23 (S1)); False below."""
    f = law.heavy_form()
    a, G, r = f.a, f.G, f.r
    if not s > a or ((f.atom_p > 0.0 or math.isfinite(f.cont._vlo)) and not s >= 0.0):
        return False
    v = (math.log((s - a) * (1 - 4 * U) / G) + 0.5 * r * r) / r
    return v - 1e-9 * (abs(v) + r * r + 1.0) > 1.0 / r - r + 1e-9


def chord_rate_up(law: Law, s1: float, s2: float) -> float:
    """Upper value of the chord slope (log p(s1) - log p(s2)) / (s2 - s1) of log p, p the density of L, for
    s2 > s1 > a (docs/accountant_tail.md §22 (a): where log p is convex on [s1, s2] (:func:`log_convex_from`),
    p(s) <= p(s2) e^{k (s2 - s) } on [s1, s2] for every k at least this slope). p(s1) from ``density_up``, p(s2) from
    ``density_lo``, the logs' roundings 8 ulp of their magnitudes, the difference s2 - s1 rounded down, the quotient
    4 ulp; inf where not available (p(s2)'s lower value 0, a slope <= 0)."""
    if not s2 > s1:
        return math.inf
    p1, p2 = float(law.density_up([s1])[0]), float(law.density_lo([s2])[0])
    if not (0.0 < p2 and math.isfinite(p1) and p1 > 0.0):
        return math.inf
    l1, l2 = math.log(p1), math.log(p2)
    num = (l1 - l2) + 8 * U * (abs(l1) + abs(l2)) + 1e-300
    if not num > 0:
        return math.inf  # (a density not decreasing on [s1, s2]: no positive rate; the callers take kappa then)
    k = num / ((s2 - s1) * (1 - 4 * U)) * (1 + 4 * U)
    return k if math.isfinite(k) else math.inf


def chord_rate_lo(law: Law, s1: float, s2: float) -> float:
    """Lower value of the chord slope (log p(s1) - log p(s2)) / (s2 - s1) of log p, p the density of L, for
    s2 > s1 > a (docs/accountant_tail.md §40.2: where log p is convex on [s1, s2], p(s) <= p(s1) e^{-k (s - s1)} on
    [s1, s2] for every k at most this slope): p(s1) from ``density_lo``, p(s2) from ``density_up`` (the sup over
    [s2, inf)), the logs' roundings 8 ulp of their magnitudes, s2 - s1 rounded up, the quotient 4 ulp; 0.0 where not
    available (a lower value 0 of p(s1), a slope <= 0): the rate 0 is always valid there (p non-increasing)."""
    if not s2 > s1:
        return 0.0
    p1, p2 = float(law.density_lo([s1])[0]), float(law.density_up([s2])[0])
    if not (0.0 < p1 and math.isfinite(p2) and p2 > 0.0):
        return 0.0
    l1, l2 = math.log(p1), math.log(p2)
    num = (l1 - l2) - 8 * U * (abs(l1) + abs(l2)) - 1e-300
    k = num / ((s2 - s1) * (1 + 4 * U)) * (1 - 4 * U)
    return k if math.isfinite(k) and k > 0 else 0.0


def rate_up(law: Law, s1: float, s2: float) -> float:
    """Upper value of sup over s in [s1, s2] (T0 <= s1 < s2, v(s1) >= -r) of -d log p / ds = (v(s)/r + 1)/(s - a),
    p the density of L: on a geometric grid, v at each cell's upper end over s - a at its lower end (v increases
    in s); the margins cover the roundings of log and the quotients (§20 (a))."""
    f = law.heavy_form()  # (on s >= T0 > 0 the density is the lognormal part's, docs/accountant_tail.md §23)
    a, G, r = f.a, f.G, f.r
    s = s1 * np.exp(np.linspace(0.0, math.log(s2 / s1), RATE_GRID))
    s[0], s[-1] = s1, s2
    with np.errstate(divide="ignore", invalid="ignore"):
        v = (np.log((s[1:] - a) * (1 + 4 * U) / G) + 0.5 * r * r) / r
        v = v + 1e-9 * (np.abs(v) + r * r + 1.0)
        rate = (v / r + 1.0) / ((s[:-1] - a) * (1 - 4 * U)) * (1 + 1e-9)
    out = float(np.max(rate))
    return out if math.isfinite(out) and out > 0 else math.inf


def tilt_rates(law: Law, T0: float, mh, kap0: float):
    """The rate of §20 (a)'s tilt for each m (mh = its mean's upper value, mh < -T0): ``kap0`` (the sup of rho over
    [T0, max(-mh)]), or where log p is convex beyond T0 the chord slope of log p over [T0, S] at the largest edge S
    <= -mh of ``CHORD_EDGES`` (docs/accountant_tail.md §22 (a)), the smaller."""
    kap = np.full(mh.shape, kap0)
    if not (mh.size and log_convex_from(law, T0)):
        return kap
    s_m = -mh
    srt = np.sort(s_m)
    edges = np.unique(srt[[int(f * (srt.size - 1)) for f in CHORD_EDGES]])  # increasing
    k_e = np.array([chord_rate_up(law, T0, float(e)) for e in edges])
    j = np.searchsorted(edges, s_m, side="right") - 1  # the largest edge at or below -mh (edges[0] = min(-mh))
    return np.minimum(kap, k_e[np.clip(j, 0, edges.size - 1)])


def beyond_up(law: Law, T0: float, m, mh, ben, mu_hi: float, enough, cells: int = 0):
    """Upper bounds on P(X_m > -T0) (elementwise over m, mh < -T0): the smaller of Bennett's ``ben`` (§18 (b)) and
    :func:`mgf_tail_up`'s (docs/accountant_tail.md §22 (b)), the latter only where ``ben`` exceeds ``enough`` for
    some m (speed only)."""
    if not np.any(ben > enough):
        return ben
    return np.minimum(ben, mgf_tail_up(law, T0, m, mh, mu_hi, cells))


def mgf_tail_up(law: Law, T0: float, m, mh, mu_hi: float, cells: int = 0, excess: bool = False):
    """Upper bounds (elementwise over m, mh < -T0) on P(X_m > -T0), or with ``excess`` on E(X_m + T0)_+, by
    e^{-t w} (1 + H(t))^m, or that over e t, w = -T0 - mh, the smallest over the rates t of ``TAIL_RATES`` times
    §20's kappa (docs/accountant_tail.md §22 (b); H on ``cells`` cells: any grid is valid); inf where not
    available."""
    a = law.heavy_form().a
    best = np.full(np.shape(m), np.inf)
    kap = rate_up(law, T0, float(np.max(-mh)) * (1 + 1e-12)) if T0 > a and np.size(m) else math.inf
    if not (math.isfinite(kap) and kap > 0):
        return best
    w = np.maximum(_dn(-T0 - mh), 1e-300)
    ts = [c * kap for c in TAIL_RATES]
    with np.errstate(over="ignore", invalid="ignore"):
        for t, h in zip(ts, mgf_h_ups(law, T0, ts, mu_hi, cells)):
            if math.isfinite(h) and h >= 0:
                lg = _up(_up(m * math.log1p(h) * (1 + 4 * U)) - _dn(t * w))  # log1p within 4 ulp (assumed)
                if excess:  # x_+ <= e^{t x - 1} / t: the log of 1/(e t) rounded up (log within 4 ulp, assumed)
                    lt = math.log(t)
                    lg = _up(lg - 1.0 - (lt - 4 * U * abs(lt)))
                best = np.minimum(best, np.where(np.isfinite(lg), lg, np.inf))
        return np.where(np.isfinite(best), np.exp(np.minimum(best, 700.0)) * (1 + 1e-12), np.inf)


JUMP_LEVELS = (0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)  # §38: the levels l / T0 tried
JUMP_RATES = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 11.0, 15.0, 20.0)  # §38: the rates t l tried
JUMP_CELLS = 512  # §38: cells of L's normal variable between v(l) and v(T0) for E[e^{t V}; V > l]


def one_jump_tail_up(law: Law, T0: float, m, mean_up, cells: int = 0):
    """Upper bounds on P(X_m > -T0), elementwise over m (X_m the sum of m i.i.d. V = min(L, T0)), by the number K of
    terms above a level l: P(K >= 2) + e^{t T0} E[e^{t X_m}; K <= 1] with E[e^{t X_m}; K <= 1] = M^m + m J M^{m-1},
    M = E[e^{t V}; V <= l], J = E[e^{t V}; V > l] (docs/accountant_tail.md §38.1); the best of a few (l, t) of
    ``JUMP_LEVELS`` x ``JUMP_RATES`` chosen at the ends and the middle of m; inf where not available.
    ``mean_up(l)``: an upper value of E min(L, l)."""
    m = np.asarray(m, float)
    best = np.full(m.shape, np.inf)
    f = law.heavy_form()
    a, G, r = f.a, f.G, f.r
    if not (T0 > 0 and T0 > a and m.size):
        return best
    cand = []
    for fl in JUMP_LEVELS:
        lev = fl * T0
        if not lev > max(a, 0.0):
            continue
        cl = float(mean_up(lev))  # >= E min(L, l)
        pbar = float(law.prob_above_up([lev])[0])  # >= P(L > l) = P(V > l)
        ts = np.array(JUMP_RATES) / lev
        hs = _h_sums(_cells(law, lev, cells or MGF_CELLS), ts, cl)  # >= E h(t (min(L, l) - c_l))
        vl = (math.log((lev - a) / G) + 0.5 * r * r) / r
        lo, hi, _, p_up = _cells(law, T0, JUMP_CELLS, vl - 1e-6 * (1.0 + abs(vl)))
        big = hi > lev  # the cells where V may exceed l
        with np.errstate(over="ignore", invalid="ignore"):
            arg = _up(ts[:, None] * _up(hi[big] - cl)[None, :])
            js = np.sum(np.exp(arg) * (1 + 1e-12) * p_up[big], axis=1) * (1 + 1e-10) + 1e-300  # >= E[e^{t(V - c)}; V > l]
        for t, h, j in zip(ts, hs, js):
            if math.isfinite(h) and h >= 0 and math.isfinite(j):
                cand.append((float(t), float(h), float(j), float(cl), pbar))
    if not cand:
        return best

    def val(mm, t, h, j, cl, pbar):  # (elementwise, broadcasting)
        w = _dn(-T0 - _up(mm * cl))  # X_m > -T0 means X_m - m c_l > w
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            l1 = _up(_up((mm - 1.0) * _up(np.log1p(h))) + _up(np.log(_up(_up(1.0 + h) + _up(mm * j)))))
            lg = _up(l1 - _dn(t * w))
            v = np.exp(np.minimum(lg, 700.0)) * (1 + 1e-12) + _up(0.5 * _up(mm * pbar) ** 2)
        return np.where((w > 0) & np.isfinite(lg), v, np.inf)

    probe = np.unique(np.array([m.min(), np.median(m), m.max()]))
    cols = [np.array([c[k] for c in cand])[:, None] for k in range(5)]  # (t, h, j, c_l, pbar) by candidate
    picks = set(np.argmin(val(probe[None, :], *cols), axis=0).tolist())  # (the best candidate at each probe)
    for i in sorted(picks):
        best = np.minimum(best, val(m, *(np.float64(x) for x in cand[i])))
    return np.minimum(best, 1.0)


__all__ = ["CHORD_EDGES", "MGF_CELLS", "MGF_Z0", "MOM_CELLS", "RATE_GRID", "TAIL_RATES", "JUMP_CELLS", "JUMP_LEVELS", "JUMP_RATES", "beyond_up", "chord_rate_lo", "chord_rate_up",
           "dn", "h_exp", "log_convex_from", "mgf_h_los", "mgf_h_up", "mgf_h_ups", "mgf_tail_up", "one_jump_tail_up", "rate_up", "tilt_rates", "up", "v_cells",
           "v_moments"]
