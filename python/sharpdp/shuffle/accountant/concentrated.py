"""The far-tail treatment's deep tail in closed form: the jump term given the number of active users
(proof: docs/accountant_tail.md §18; the lower value's curvature term: §19).

Deep in the tail of a heavy round (delta ~ 1e-10 ... 1e-21 for the heavy round of bench/bench_composition.py) the
far-tail treatment's FFTs hold the spread of the number of active users times e^eps (millions of lattice nodes),
while the value is one user's jump over a drift that, given that number m, is almost deterministic. With
V = min(L, T0), X_m the sum of m i.i.d. V and M' ~ Bin(n - 1, gamma),

    E phi(A') = sum_m P(M' = m) E phi(X_m),   phi(x) = tau(max(T0, -x)),

and on x <= -T0, phi(x) = tau(-x) is convex with second derivative the density of L at -x: a second-order
expansion of E phi(X_m) around (an upper value of) its mean, with the density's sup on a window, Bennett's
inequality outside it and phi <= tau(T0) beyond it, bounds it from above; Jensen's inequality from below. The body
E[A_+]/(n gamma) is bounded by Bennett's exponential moment, the pair term as in §3. Laws: those with a
``heavy_form``: the increasing one-term lognormal laws (the BMG's x vs bot order) with their whole range (E L = a + b
exactly), and the Gaussian randomizer's x vs bot law, an atom plus a truncated lognormal part (§23). A value is
returned only when its bracket is narrow; otherwise the FFT treatment computes it (:mod:`.far_tail`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from sharpdp.shuffle.accountant.closed_forms import tail_bracket
from sharpdp.shuffle.accountant.concentrated_moments import (  # (under the private names this module always used)
    BODY_CELLS as _BODY_CELLS, bennett_exp as _bennett_exp, bennett_up as _bennett_up,
    body_lam as _body_lam, body_mgf_up as _body_mgf_up, body_up as _body_up, density_sup_up as _density_sup_up,
    dn as _dn, m_range as _m_range, moments as _moments, remember, up as _up)
from sharpdp.shuffle.accountant.concentrated_moments import (  # noqa: F401 (the former private names, for the tests)
    M_MEMO as _M_MEMO, SDS as _SDS, law_moments as _law_moments, mean_v as _mean_v)
from sharpdp.shuffle.accountant.closed_forms import log_binom as _log_binom  # noqa: F401 (likewise)
from sharpdp.shuffle.accountant.heap_keep import kept_big
from sharpdp.shuffle.accountant.jump import JumpTerm, pair_integral_up
from sharpdp.shuffle.accountant import limits, memo, plain_warm
from sharpdp.shuffle.accountant.limits import U
from sharpdp.shuffle.laws import Law
from sharpdp.shuffle.accountant.concentrated_tilted import (exp_lo as _exp_lo, tilted_curv as _tilted_curv,
                                                            tilted_lo as _tilted_lo)
from sharpdp.shuffle.accountant.mgf import beyond_up, mgf_tail_up, one_jump_tail_up

# band edges below -T0: these fractions of the distance from the mean to -T0 (every cut is valid: §18 (b))
_FRACS = (0.01, 0.03, 0.07, 0.12, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.97)
_FRACS_QUICK = (0.05, 0.2, 0.5, 0.9)  # the first, cheaper pass (deep in the tail it is already within 1e-3)
_GRID = 2048  # points of the geometric grids of s (band edges) and of the truncation levels l
# widths (in sd of X_m) of the bands below nu where the lower value's curvature uses the density's lower values
_BANDS_LO = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
_TRUNC = (0.5, 1.0)  # truncation levels l = mu_hi + c w tried in the tail bounds (each is valid: §18 (g))
# the curvature term of §19 for more numbers m than this: by blocks of consecutive m sharing one set of bands, each
# block's values taken at its members' least favourable ends (docs/accountant_tail.md §35.1; fewer m: one m a block)
_CURV_M = 4096
# stage 6 (§43.2) only where stage 5's bracket is within this many times the acceptance (it narrowed the gaps measured
# by 5-36 %: a choice of speed only)
_PIECES_REACH = 1.6


@dataclass(frozen=True)
class ConcentratedBracket:
    """Certified bracket of D_up by §18: the values, the clamp T0 and the terms (D units)."""

    lower: float
    upper: float
    T0: float
    body: float
    jump_up: float
    jump_lo: float
    multi: float
    curved: bool = True  # the lower value carries the curvature term of §19


def eligible(law: Law, gamma: float, n: int) -> bool:
    """The law has a :meth:`~sharpdp.shuffle.laws.base.Law.heavy_form` (an increasing one-term lognormal law on
    its whole range, or the Gaussian randomizer's atom plus truncated lognormal part: docs/accountant_tail.md §23)
    with a negative mean, n >= 2 and 0 < gamma < 1 (the binomial's Chernoff tails divide by log(1 - gamma));
    r^2 < 700 (e^{r^2}, the second moment, stays finite)."""
    f = law.heavy_form()
    return (f is not None and n >= 2 and 0.0 < gamma < 1.0 and f.a + f.d_hi < 0.0
            and f.r * f.r < 700.0)


def at_clamp_eligible(law: Law, gamma: float, n: int) -> bool:
    """:func:`eligible`, or a two-term law (``two_term_form``: the BMG's replace-one law, unbounded below) with a
    negative mean, n >= 2 and 0 < gamma < 1: the laws whose jump term at a round's clamp :func:`closed_at_clamp`
    brackets (docs/accountant_tail.md §24, §32). Only :func:`eligible` laws get the whole closed form
    (:func:`certify`)."""
    if eligible(law, gamma, n):
        return True
    t = law.two_term_form()
    return t is not None and n >= 2 and 0.0 < gamma < 1.0 and t.mean_hi < 0.0


def _tails(law: Law, T0: float, mu_hi: float, m, Q, b: float, w, trunc: tuple[float, ...]):
    """Upper bounds (P(Z > w), E[Z^2; Z > w]) for Z = X_m - E X_m, elementwise over the rows w (bands) and columns
    (m, Q): Bennett's inequality on the clamped terms (each <= b), and on terms truncated at l = mu_hi + c w
    (l < T0) plus the event that some term exceeds l (docs/accountant_tail.md §18 (g)); the smallest is kept."""
    lam = np.log1p(b * 0.5 * w / Q) / b
    p_best = _bennett_up(Q, b, w)
    e_best = np.minimum(_up((4.0 / (math.e * lam)) ** 2 * _bennett_up(Q, b, 0.5 * w)), Q)
    if not trunc:  # (Bennett's alone: the only bound for a two-term law, §32)
        return np.minimum(p_best, 1.0), e_best
    f = law.heavy_form()
    a, G = f.a, f.d_lo  # (E min(L, l) >= a + d_lo - tau(l); d_lo = G for the one-term law)
    d_hi = T0 - mu_hi
    if not d_hi > 0:
        return p_best, e_best
    # the truncation levels' closed forms on one geometric grid of l - mu_hi in (0, T0 - mu_hi]: P(L > l),
    # tau(l) and E[(L - a)^2; L > l] are non-increasing in l, so the grid point at or below l bounds them
    dg = d_hi * np.exp(np.linspace(math.log(1e-9), 0.0, _GRID))
    lg = mu_hi + dg
    pg, tg, sg = law.prob_above_up(lg), law.stop_loss(lg)[1], law.second_moment_above_up(lg)
    sig2 = Q / np.maximum(m, 1.0)  # (Q >= m sig2: per term at most this)
    for c in trunc:
        lev = mu_hi + c * w
        inside = lev < T0
        gi = np.clip(np.searchsorted(lg, lev, side="right") - 1, 0, _GRID - 1)
        okg = inside & (lg[gi] <= lev)
        p_l, t_l, s_l = pg[gi], tg[gi], sg[gi]
        b_l = _up(lev - a - G + t_l)  # >= l - E min(L, l)
        lam_l = np.log1p(b_l * 0.5 * w / Q) / b_l
        p_c = m * p_l * (1 + 4 * U) + _bennett_up(Q, b_l, w)
        e_c = _up(m * (s_l + p_l * (m - 1) * sig2) * (1 + 1e-12)
                  + (4.0 / (math.e * lam_l)) ** 2 * _bennett_up(Q, b_l, 0.5 * w))
        p_best = np.where(okg & (b_l > 0), np.minimum(p_best, p_c), p_best)
        e_best = np.where(okg & (b_l > 0), np.minimum(e_best, e_c), e_best)
    return np.minimum(p_best, 1.0), e_best


def _jump(law: Law, gamma: float, n: int, T0: float, fine: bool = True, curvature: bool = True):
    """(upper, lower) of E phi(A') (D units): docs/accountant_tail.md §18 (a)-(d); ``curvature``: the lower value
    with the curvature term of §19."""
    return _jump_upper(law, gamma, n, T0, fine), _jump_lower(law, gamma, n, T0, curvature)


def _jump_upper(law: Law, gamma: float, n: int, T0: float, fine: bool = True, bands: bool = True,
                sharp: bool = False, stop_above: float = math.inf, keep: dict | None = None,
                tilted: bool = True, jumps: bool = False, local: bool = False, split: bool = False,
                pieces: bool = False) -> float:
    """Upper value of E phi(A') (D units): docs/accountant_tail.md §18 (a), (b), (d), the smaller of §18 (b)'s bands
    (with ``bands``; ``fine``: the finer edges and truncations) and §20's tilted expansion for each m (``sharp``: with
    §22's chord slopes and tail bound). ``stop_above`` (speed only): the bands are not computed where a lower
    estimate of the value with them exceeds it (the value is then §20's alone, also an upper value; §18 (j)).
    ``keep`` (speed only, the same floats): a dict that keeps §20's per-m values of a call without ``sharp`` for a
    later call with the same arguments but ``fine``, ``bands`` and ``stop_above``, which reuses them. ``tilted``
    False: without §20's value (a two-term law: §18 (b)'s bands and Bennett's tails alone, docs/accountant_tail.md
    §32). ``local`` (with ``sharp``, ``jumps`` and a ``keep`` of such a call): §40.2's rate below the mean; ``split``
    (with ``local``): also §41.4's split rate; ``pieces`` (with ``local``): also §43.1's part below the mean."""
    mu_lo, mu_hi, sig2, b = _moments(law, T0)
    m, p_up, p_lo, outside = _m_range(n - 1, gamma, sharp=True) if jumps else _m_range(n - 1, gamma)
    tT_lo, tT_up = tail_bracket(law, T0)
    # (b) upper: E phi(X_m) <= f(mh) + F(x_j) Q / 2 + sum_{k >= j} tau(-x_{k+1}) P(X_m > x_k) + tau(T0) P(X_m > -T0)
    # for each cut x_j of the bands x_0 < ... < x_K = -T0 (the smallest over j is taken); phi <= tau(T0) always
    mh = _up(m * mu_hi)  # >= E X_m
    Q = _up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)  # >= E (X_m - mh)^2
    best = np.full(m.shape, tT_up)
    room = -T0 - mh
    ok = room > 0
    if np.any(ok) and keep and not sharp:  # (§20's values of the same m, T0 and law: the same floats)
        mo, Qo, ro = mh[ok], Q[ok], room[ok]
        f_up, tails_T, best = keep["f_up"], keep["tails_T"], keep["best"].copy()
    elif np.any(ok) and sharp and jumps and keep and "s_curv" in keep:  # (a sharp call's terms: the same floats)
        mo, Qo, ro = mh[ok], Q[ok], room[ok]
        f_up = keep["s_f_up"]
        if "j_tails" not in keep:  # (§38.1's bound once for both calls: the same floats)
            keep["j_tails"] = np.minimum(keep["s_tails"], one_jump_tail_up(law, T0, m[ok],
                                                                           lambda lev: _mean_v(law, lev)[1]))
        tails_T, curv = keep["j_tails"], keep["s_curv"]
        if local:  # (§40.2: the smaller of the two upper values)
            curv = np.minimum(curv, _tilted_curv(law, T0, m[ok], mo, Qo, mu_lo, mu_hi, True, local=True, split=split,
                                                 pieces=pieces))
        tilt = f_up + curv + tT_up * tails_T
        best[ok] = np.minimum(best[ok], _up(np.where(np.isfinite(tilt), tilt, np.inf)))
    elif np.any(ok):
        mo, Qo, ro = mh[ok], Q[ok], room[ok]
        if sharp and keep and "f_up" in keep:  # (a first call's f(mh) and Bennett's tail: the same floats)
            f_up, tails_T = keep["f_up"], keep["tails_T"]
        else:
            f_up = law.stop_loss(-mo)[1]
            tails_T = _bennett_up(Qo, b, np.maximum(_dn(-T0 - mo), 1e-300))  # P(X > -T0)
        if sharp:  # (§22 (b), where Bennett's is not negligible)
            tails_T = beyond_up(law, T0, m[ok], mo, tails_T, mu_hi, 1e-6 * f_up / tT_up, _BODY_CELLS)
        if sharp and keep is not None:  # (for a later call with ``jumps``)
            keep.update(s_f_up=f_up, s_tails=tails_T)
        if jumps:  # (§38.1: at most one term above a level l)
            tails_T = np.minimum(tails_T, one_jump_tail_up(law, T0, m[ok], lambda lev: _mean_v(law, lev)[1]))
        if tilted:  # the same expansion with the density's growth bounded by a tilt, its mean by the numerical mgf (§20)
            tcurv = _tilted_curv(law, T0, m[ok], mo, Qo, mu_lo, mu_hi, sharp)
            if sharp and keep is not None:
                keep.update(s_curv=tcurv)
            tilt = f_up + tcurv + tT_up * tails_T
            best[ok] = np.minimum(best[ok], _up(np.where(np.isfinite(tilt), tilt, np.inf)))
        if keep is not None and not sharp:
            keep.update(f_up=f_up, tails_T=tails_T, best=best.copy())
    if np.any(ok) and bands:
        # tau and the density's sup at the band edges from one geometric grid of s >= T0: both are non-increasing in
        # s, so their values at the grid point at or below s = -x bound them at s (a looser bound, not a new one)
        grid = T0 * np.exp(np.linspace(0.0, math.log(max(float(np.max(-mo)), T0 * 1.001) / T0), _GRID))
        grid[0] = T0
        dens = _density_sup_up(law, grid)
        g0 = np.clip(np.searchsorted(grid, -mo, side="right") - 1, 0, _GRID - 1)
        g0 = np.where(grid[g0] <= -mo, g0, 0)
        if stop_above < math.inf:  # every band's value is >= f(mh) + F(mh) Q / 2 + tau(T0) P(X > -T0) (speed only)
            est = np.minimum(best[ok], f_up + 0.5 * dens[g0] * Qo + tT_up * tails_T)
            if float(np.sum(p_up[ok] * est)) * (1 - 1e-9) > stop_above:
                return float(np.sum(p_up * best)) * (1 + 1e-12) + tT_up * outside
        fr = np.array(_FRACS if fine else _FRACS_QUICK)[:, None]
        x = np.minimum(mo + fr * ro, -T0)  # band edges (rows), below -T0
        w = _dn(x - mo)
        good = w > 0
        tail, e2 = _tails(law, T0, mu_hi, m[ok], Qo, b, np.where(good, w, 1.0),
                          _TRUNC if fine and tilted else ())  # P(X > x_k), E[Z^2; Z > w_k]
        tail, e2 = np.where(good, tail, 1.0), np.where(good, e2, Qo)
        gi = np.clip(np.searchsorted(grid, -x.ravel(), side="right") - 1, 0, _GRID - 1)
        gi = np.where(grid[gi] <= -x.ravel(), gi, 0)
        tau_x = law.stop_loss(grid)[1][gi].reshape(x.shape)  # phi at the band edges
        tau_next = np.vstack([tau_x[1:], np.full((1, mo.size), tT_up)])
        band = np.minimum(tau_next * tail, tau_next)
        suffix = np.cumsum(band[::-1], axis=0)[::-1] * (1 + 1e-12)  # sum over k >= j
        # the density's sup beyond s = -y at y = mh, x_0, x_1, ... (non-decreasing in y: made so, upwards)
        F = np.maximum.accumulate(np.vstack([dens[g0][None, :], dens[gi].reshape(x.shape)]), axis=0)
        # curvature by bands: R(X) <= (X - mh)^2 / 2 [F(mh) + sum_i (F(y_i) - F(y_{i-1})) 1{X > y_{i-1}}], and
        # E[(X - mh)^2; X > x_k] <= E[Z^2; Z > w_k] <= (4 / (e lam))^2 e^{-Bennett(w_k / 2)} (Z = X - E X)
        wts = np.vstack([Qo[None, :], e2[:-1]])  # E[(X - mh)^2; X > y_{i-1}] for the increment at row i
        curv = 0.5 * F[0] * Qo + np.cumsum(0.5 * np.diff(F, axis=0) * wts, axis=0) * (1 + 1e-12)
        val = f_up + _up(curv) + suffix + tT_up * tails_T
        val = np.where(good & np.isfinite(val), val, np.inf)
        best[ok] = np.minimum(best[ok], _up(np.min(val, axis=0)))
    return float(np.sum(p_up * best)) * (1 + 1e-12) + tT_up * outside


@kept_big  # (the C heap kept for reuse at large n: speed only, the same floats; docs/accountant_tail.md §73.1)
def _jump_lower(law: Law, gamma: float, n: int, T0: float, curvature: bool = True,
                tilted: bool = False, sharp_pmf: bool = False, local: bool = False, exp: bool = False) -> float:
    """Lower value of E phi(A') (D units): §18 (c)-(d), with the larger of the curvature term of §19 (when
    ``curvature``) and the tilted term of §21 (when ``tilted``); ``sharp_pmf``: the binomial probabilities of
    docs/accountant_tail.md §38.2; ``local``: §21's term with §40.1's tail deduction and moments; ``exp`` (with
    ``local``): also §41.1's exponential term."""
    mu_lo, mu_hi, sig2, b = _moments(law, T0)
    m, _, p_lo, _ = _m_range(n - 1, gamma, sharp=True) if sharp_pmf else _m_range(n - 1, gamma)
    mh = _up(m * mu_hi)  # >= E X_m
    Q = _up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)  # >= E (X_m - mh)^2
    # (§18 (c)'s terms of the same law, gamma, n, T0 from an earlier call: the same floats, docs/accountant_tail.md
    # §35.2; kept on the law)
    keep = memo.object_memo(law, "_conc_lower_memo", 16)
    base = keep.get((gamma, n, T0, tilted)) if keep is not None else None
    if base is None:
        raw = None
        if keep is not None:  # (§18 (c)'s Jensen terms and Bennett's excess, shared by the two bases)
            raw = keep.setdefault((gamma, n, T0, "raw"), {})
        base = _lower_base(law, T0, m, mu_lo, mu_hi, mh, Q, b, tilted, raw)
        for x in base:
            x.flags.writeable = False
        if keep is not None:
            keep[(gamma, n, T0, tilted)] = base
    # (without the curvature term the per-m values do not depend on the probabilities: kept for a call with
    # ``sharp_pmf``, the same floats)
    mkey = (gamma, n, T0, tilted, "lo_m") + (("local",) if local else ()) + (("exp",) if local and exp else ())
    lo_m = keep.get(mkey) if keep is not None and not curvature else None
    if lo_m is None:
        lo_m = _lower_m(law, T0, m, mu_lo, mu_hi, mh, Q, b, curvature, p_lo, tilted, base, local, exp)
        if keep is not None and not curvature:
            lo_m.flags.writeable = False
            keep[mkey] = lo_m
    return float(np.sum(p_lo * lo_m)) * (1 - 1e-12)


def _lower_m(law: Law, T0: float, m, mu_lo: float, mu_hi: float, mh, Q, b: float, curvature: bool = True,
             weight=None, tilted: bool = False, base: tuple | None = None, local: bool = False, exp: bool = False):
    """Lower values of E phi(X_m), elementwise over the numbers m of active users (mh >= E X_m, Q >= E (X_m - mh)^2,
    V - E V <= b): (c) of docs/accountant_tail.md §18, phi >= phi_c - c (x + T0)_+ with Jensen's inequality at
    nu = m mu_lo (rounded down) <= E X_m, plus the curvature of phi_c below -T0 (§19) where ``curvature`` (for the m
    whose ``weight`` is at least 1e-20 of the largest, when given: the term is 0 or more, so any subset is valid), or
    the tilted term of §21 where ``tilted`` (both lower E R_nu(X_m): the larger is added). ``base``: the result of
    :func:`_lower_base` for the same arguments (speed only, the same floats)."""
    lo_m, c_exc = _lower_base(law, T0, m, mu_lo, mu_hi, mh, Q, b, tilted) if base is None else base
    ml = _dn(m * mu_lo)  # <= E X_m
    if curvature:
        sel = np.ones(m.shape, bool) if weight is None else weight >= 1e-20 * float(np.max(weight))
        add = np.zeros(m.shape)
        add[sel] = _curvature_lo(law, T0, m[sel], ml[sel], mh[sel], Q[sel], mu_hi)
    else:
        add = np.zeros(m.shape)
    if tilted:
        add = np.maximum(add, _tilted_lo(law, T0, m, ml, mh, mu_lo, mu_hi, local))
    if tilted and local and exp:  # (§41.1: the whole exponential of the tangent)
        add = np.maximum(add, _exp_lo(law, T0, m, ml, mh, mu_lo, mu_hi))
    lo_m = lo_m + add
    return np.maximum(_dn(lo_m - c_exc), 0.0)  # (the product c exc rounded up too)


def _lower_base(law: Law, T0: float, m, mu_lo: float, mu_hi: float, mh, Q, b: float, tilted: bool,
                raw: dict | None = None):
    """(phi_c(m mu_lo) from below, c E(X_m + T0)_+ from above), elementwise over m: the terms of §18 (c) that
    :func:`_lower_m` adds the curvature term to (with ``tilted``: the excess by the smaller with §22 (b)'s).
    ``raw`` (speed only, the same floats): a dict that keeps phi_c(m mu_lo) and Bennett's excess of a first call for
    a later one with the same arguments (but ``tilted``), which reuses them."""
    # (c) lower: E phi >= tau(max(-m mu_lo, T0)) - c E(X_m + T0)_+, c = P(L > T0)
    c = float(law.prob_above_up([T0])[0])
    w0 = _dn(-T0 - mh)
    if raw is not None and "lo_m" in raw:
        lo_m, exc = raw["lo_m"], raw["exc"]
    else:
        ml = _dn(m * mu_lo)  # <= E X_m
        lo_m = law.stop_loss(np.maximum(-ml, T0))[0] + c * _dn(np.maximum(ml + T0, 0.0))  # phi_c(m mu_lo)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            lam = np.log1p(b * w0 / Q) / b
            # E(X_m + T0)_+: by (g) where the mean is below -T0, else E Z_+ + (mh + T0)_+ <= sqrt(Q)/2 + (mh + T0)_+
            exc = np.where(w0 > 0, (np.exp(-_bennett_exp(Q, b, np.maximum(w0, 1e-300))) + limits.TINY)
                           / (math.e * lam), np.sqrt(Q) * 0.5 + np.maximum(mh + T0, 0.0))
        if raw is not None:
            lo_m.flags.writeable = False
            exc.flags.writeable = False
            raw.update(lo_m=lo_m, exc=exc)
    if tilted and np.any(w0 > 0):  # (with §21's term: the smaller with the numerical mgf's, §22 (b))
        exc = np.where(w0 > 0, np.minimum(exc, mgf_tail_up(law, T0, m, mh, mu_hi, _BODY_CELLS, excess=True)), exc)
    return lo_m, _up(c * _up(exc))


def _z2_tail(Q, b: float, w):
    """Upper bound on E[Z^2; Z > w] (w > 0) for a sum Z of centred terms each <= b with variances summing to at
    most Q: (4 / (e lam))^2 e^{-Bennett(w / 2)}, lam = log(1 + b w / (2 Q)) / b, and at most Q (§18 (g))."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        lam = np.log1p(b * 0.5 * w / Q) / b
        e = _up((4.0 / (math.e * lam)) ** 2 * _bennett_up(Q, b, 0.5 * w))
    return np.where((w > 0) & np.isfinite(e), np.minimum(e, Q), Q)


def _curvature_lo(law: Law, T0: float, m, nu, mh, Q, mu_hi: float):
    """Lower value of E R_nu(X_m), the second-order remainder of phi_c around nu <= E X_m (elementwise over m):
    1/2 sum_i Delta_i max(0, m Var_lo V - E[(X - nu)^2; X > -T0] - E[(X - nu)^2; X < nu - w_i]) with the density's
    lower values by bands below nu (docs/accountant_tail.md §19); 0 where not available."""
    out = np.zeros(m.shape)
    f = law.heavy_form()
    a = f.a
    if not (math.isfinite(float(law.density_up([T0])[0])) and T0 > a):  # (v(T0) >= -r: p non-increasing on s >= T0)
        return out
    # Var V >= Var L - 2 E[(L - a)^2; L > T0] (V = min(L, T0), §19 (b)); Var L = G^2 expm1(r^2) for one term (§23)
    var_lo = float(_dn(_dn(f.var_lo * (1 - 1e-12)) * (1 - 4 * U)
                       - 2.0 * float(law.second_moment_above_up([T0])[0]) * (1 + 4 * U)))
    ok = (nu < -T0) & (mh < -T0)
    if not var_lo > 0 or not np.any(ok):
        return out
    m, nu, mh, Q = m[ok], nu[ok], mh[ok], Q[ok]
    b_minus = float(_up(mu_hi - a))  # E V - V <= E V - a
    b_plus = float(_up(T0 - a))  # V - E V <= T0 - a
    d_max = _up(mh - nu)  # >= E X_m - nu
    w_T = _dn(-T0 - mh)  # X_m > -T0 implies Z > w_T
    size = m.size
    k = -(-size // _CURV_M)  # (blocks of k consecutive m: each input at the end that lowers the value, §35.1)
    if k > 1:
        at = np.arange(0, size, k)
        m, nu, Q = np.minimum.reduceat(m, at), np.minimum.reduceat(nu, at), np.maximum.reduceat(Q, at)
        d_max, w_T = np.maximum.reduceat(d_max, at), np.minimum.reduceat(w_T, at)
    sd = np.sqrt(Q)
    e2_T = _up(2.0 * _z2_tail(Q, b_plus, w_T) + 2.0 * d_max * d_max)  # (Z + d)^2 <= 2 Z^2 + 2 d^2
    e2_T = np.where(w_T > 0, e2_T, np.inf)
    w = _dn(np.array(_BANDS_LO)[:, None] * sd[None, :])  # band widths below nu (rows), w_0 = 0
    e2_lo = np.vstack([Q[None, :], _z2_tail(Q, b_minus, np.maximum(w[1:], 1e-300))])  # E[Z^2; -Z > w_i]
    s = _up(-nu[None, :] + w)  # the bands' far ends in s = -y
    dens = np.minimum.accumulate(law.density_lo(s.ravel()).reshape(s.shape), axis=0)  # <= inf of p on [-nu, s_i]
    delta = _dn(dens - np.vstack([dens[1:], np.zeros((1, m.size))]))  # telescoping increments, >= 0
    # <= E[(X - nu)^2; nu - w_i <= X <= -T0] (rounded down after each subtraction: its error is relative to its own
    # result, which may be far above the final one)
    mass = _dn(_dn(_dn(m * var_lo * (1 - 4 * U)) - e2_T)[None, :] - e2_lo)
    cur = 0.5 * np.sum(np.maximum(delta, 0.0) * np.maximum(mass, 0.0) * (1 - 4 * U), axis=0) * (1 - 1e-12)
    out[ok] = np.repeat(np.where(np.isfinite(cur), np.maximum(cur, 0.0), 0.0), k)[:size]
    return out


@kept_big  # (the C heap kept for reuse at large n: speed only, the same floats; docs/accountant_tail.md §73.1)
def jump_bracket(law: Law, gamma: float, n: int, T0: float, fast: bool = False) -> tuple[float, float]:
    """(lower, upper) of E phi(A') (D units) at the clamp T0 > 0 for an eligible law (else ValueError): §18 (a)-(d), (g),
    the finer pass; ``fast``: §21's tilted lower and §22's sharp upper value (tens of ms; docs/accountant_tail.md §24)."""
    if not at_clamp_eligible(law, gamma, n) or not T0 > 0:
        raise ValueError("jump_bracket needs an eligible law (Law.heavy_form or two_term_form, negative mean), n >= 2, "
                         "T0 > 0")
    if not eligible(law, gamma, n):  # a two-term law: Jensen's lower value and §18 (b)'s fine bands (§32)
        return (_jump_lower(law, gamma, n, T0, curvature=False, tilted=False),
                _jump_upper(law, gamma, n, T0, fine=True, bands=True, tilted=False))
    if fast:
        return _jump_lower(law, gamma, n, T0, False, True), _jump_upper(law, gamma, n, T0, False, False, True)
    return _jump(law, gamma, n, float(T0), True)[::-1]


@kept_big  # (the C heap kept for reuse at large n: speed only, the same floats; docs/accountant_tail.md §73.1)
def unclamped_lower(law: Law, gamma: float, n: int, T0: float) -> float:
    """A lower value of D_up for a two-term law (:func:`at_clamp_eligible` but not :func:`eligible`) at the clamp
    T0 > 0 with no lower clamp and hence no penalty: D_up >= E phi(A') for the unclamped A' (the left side of (2.1)
    with B = inf), bounded below by Jensen's inequality (§18 (c)-(d)); docs/accountant_tail.md §32 (e). 0.0 for other
    laws (one-term laws have no lower clamp to pay) or T0 not finite and positive."""
    if eligible(law, gamma, n) or not at_clamp_eligible(law, gamma, n) or not (0.0 < T0 < math.inf):
        return 0.0
    return max(_jump_lower(law, gamma, n, T0, curvature=False, tilted=False) * (1 - 1e-9), 0.0)


@kept_big  # (the C heap kept for reuse at large n: speed only, the same floats; docs/accountant_tail.md §73.1)
def positive_prob_up(law: Law, gamma: float, n: int, T0: float) -> float:
    """Upper bound on P(L_1 + S_{n-1} > 0) for the far-tail lemma of docs/accountant_tail.md §14 with the clamp T0
    of a §18 value: the same four terms, P(A' > -t - y) given the number of active users by Bennett (§18 (f));
    1.0 where not available."""
    if not eligible(law, gamma, n):
        return 1.0
    f = law.heavy_form()
    mean_l = f.a + f.d_lo  # (a choice of t and y: any value is valid)
    mm = (n - 1) * gamma * mean_l
    t, y = 0.5 * abs(mm), 0.25 * abs(mm)
    mu_lo, mu_hi, sig2, b = _moments(law, T0)
    m, p_up, _, outside = _m_range(n - 1, gamma)
    mh = _up(m * mu_hi)
    Q = _up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)
    w = _dn(-t - y - mh)  # P(X_m > -t - y) <= P(X_m - E X_m > w)
    pm = np.where(w > 0, _bennett_up(Q, b, np.maximum(w, 1e-300)), 1.0)
    p_body = min(float(np.sum(p_up * np.minimum(pm, 1.0))) * (1 + 1e-12) + outside, 1.0)
    p_one = float(law.prob_above_up([t])[0])
    pT, pTy = (float(v) for v in law.prob_above_up([T0, T0 + y]))
    p_jump = (n - 1) * gamma * pTy + ((n - 1) * gamma * pT) ** 2 / 2.0
    return min((p_one + p_body + p_jump) * (1 + 1e-9), 1.0)


def certify(law: Law, gamma: float, n: int, rel_tol: float, choose_T0) -> ConcentratedBracket | None:
    """The bracket of D_up of §18 for ``law``, or None where the law is not eligible or the bracket is wider than
    CLOSED_ACCEPT rel_tol (:mod:`.limits`). ``choose_T0(law, gamma, n, target)``: the far-tail treatment's choice of
    the clamp (any T0 > 0 is valid)."""
    if not eligible(law, gamma, n):
        return None
    f = law.heavy_form()
    key = (*f.key, gamma, n, rel_tol, limits.CLOSED_ACCEPT, limits.CLOSED_T0_FRAC, limits.CLOSED_PRECHECK,
           limits.CLOSED_LOCAL_STAGE, limits.CLOSED_EXP_STAGE, limits.CLOSED_PIECES_STAGE, limits.CLOSED_WHOLE_ACCEPT,
           limits.CLOSED_WHOLE_N, limits.CLOSED_WHOLE_TOL, limits.CLOSED44_REACH,
           limits.FT42_T0_WARM and plain_warm.active())  # (a sweep's warm clamp, §63: its own entries)
    if key in _MEMO:  # (the same floats: the value depends on these only)
        return _MEMO[key]
    # speed only: with the values of §20-§22 the bracket's width is 0.2-0.22 times the Jensen gap p(-mu) m sigma^2 / 2
    # (relative to tau(-mu), at the mean number of active users; measured on the heavy round at n = 1e5, eps 1.1-1.4):
    # where that gap exceeds CLOSED_PRECHECK rel_tol (about 4.4 CLOSED_ACCEPT_TILTED rel_tol) the bracket would be
    # refused, and is not computed
    if not _jensen_ratio(law, gamma, n) <= limits.CLOSED_PRECHECK * rel_tol:
        return _remember(key, None)
    return _remember(key, _certify(law, gamma, n, rel_tol, choose_T0))


def _jensen_ratio(law: Law, gamma: float, n: int) -> float:
    """The Jensen gap p(-mu) m sigma^2 / 2 relative to tau(-mu) at the mean number m of active users (an estimate of
    the closed form's width over 0.2-0.22, :func:`certify`'s precheck; 0 where m < 1 or mu >= 0)."""
    f = law.heavy_form()
    mbar = round((n - 1) * gamma)
    mu = mbar * (f.a + f.d_lo)
    if mbar >= 1 and mu < 0:
        return float(law.density_up([-mu])[0]) * mbar * f.m2_up / 2 / float(law.stop_loss([-mu])[1][0])
    return 0.0


def route(law: Law, gamma: float, n: int, rel_tol: float, choose_T0) -> ConcentratedBracket | None:
    """:func:`certify` where the far-tail treatment tries the closed form first; None at n <= CLOSED_CHEAP_N and
    rel_tol >= CLOSED_CHEAP_TOL (with CLOSED_CHEAP_FFT, :mod:`.limits`) where the Jensen ratio of the precheck exceeds
    CLOSED_CHEAP_RHO rel_tol (the closed form's early stages would refuse, its later ones cost more): there the FFT
    treatment's lattices are small and it is the cheaper certified route (docs/accountant_tail.md §47; an estimate
    choosing the route only, each route's bracket certified by its own sections)."""
    if limits.CLOSED_CHEAP_FFT and n <= limits.CLOSED_CHEAP_N and rel_tol >= limits.CLOSED_CHEAP_TOL and \
            eligible(law, gamma, n) and _jensen_ratio(law, gamma, n) > limits.CLOSED_CHEAP_RHO * rel_tol:
        return None
    return certify(law, gamma, n, rel_tol, choose_T0)


_MEMO: dict = memo.result_memo()  # (the last 256 results of certify, by law and arguments: §18 (j))

def _remember(key, value):
    return remember(key, value, _MEMO)


@kept_big  # (the C heap kept for reuse at large n: speed only, the same floats; docs/accountant_tail.md §73.1)
def _certify(law: Law, gamma: float, n: int, rel_tol: float, choose_T0) -> ConcentratedBracket | None:
    m_est = (n - 1) * gamma * law.mean()
    est = float(law.stop_loss([max(-m_est, 0.0)])[0][0])
    if not est > 0:
        return None
    T0 = choose_T0(law, gamma, n, limits.CLOSED_T0_FRAC * rel_tol * est)
    multi = 0.5 * (n - 1) * gamma * pair_integral_up(law, T0) * (1 + 1e-9)
    if multi > 0.1 * limits.CLOSED_ACCEPT * rel_tol * est:
        return None
    body = _body_up(law, gamma, n, T0)
    if body > 0.01 * limits.CLOSED_ACCEPT * rel_tol * est:  # Bennett's is loose there: the numerical mgf (§20 (e))
        body = min(body, _body_mgf_up(law, gamma, n, T0, _body_lam(law, gamma, n, T0),
                                      1e-4 * limits.CLOSED_ACCEPT * rel_tol * est))
    if not body <= 0.1 * limits.CLOSED_ACCEPT * rel_tol * est:
        return None
    # (the lower value of §18 (c) first, the same in both passes; the curvature term of §19 is added where the
    # bracket would be refused without it, and for a returned lower value: upper values never depend on it)
    jlo = _jump_lower(law, gamma, n, T0, curvature=False, tilted=False)
    curved = False
    # §20's tilted upper value alone first (the tighter on every value measured, docs/accountant_tail.md §20); the
    # bands of §18 (b) join it only where the bracket is refused without them (speed only: each value is valid)
    keep: dict = {}  # (the per-m terms of the first upper value, and of the sharp one, for the later stages)
    jup = _jump_upper(law, gamma, n, T0, fine=False, bands=False, keep=keep)
    for stage in range(8):
        up = (body + jup + multi) * (1 + 1e-9)
        lo = jlo * (1 - 1e-9)
        accept = limits.CLOSED_ACCEPT if stage == 0 else limits.CLOSED_ACCEPT_TILTED
        if n >= limits.CLOSED_WHOLE_N and rel_tol <= limits.CLOSED_WHOLE_TOL:  # (§51.4: a choice of stages)
            accept = max(accept, limits.CLOSED_WHOLE_ACCEPT)
        if lo > 0 and up - lo <= accept * rel_tol * lo:
            break
        if stage == 4 and limits.CLOSED44_REACH > 0.0 and not up - lo <= limits.CLOSED44_REACH * accept * rel_tol * lo:
            return None  # (stages 4-5 not tried: stage 3's gap beyond their reach, docs/accountant.md §8.24.3)
        if stage == 0:  # (the tilted term of §21 decides: the curvature term of §19 is added to returned values)
            jlo = max(jlo, _jump_lower(law, gamma, n, T0, curvature=False, tilted=True))
        elif stage == 1:  # §22's chords and tail (near the boundary of the closed form's range)
            jup = min(jup, _jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, keep=keep))
        elif stage == 2:  # §38's tail bound and binomial probabilities (where the bracket is refused without them)
            jlo = max(jlo, _jump_lower(law, gamma, n, T0, curvature=False, tilted=True, sharp_pmf=True))
            jup = min(jup, _jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, jumps=True,
                                       keep=keep))
        elif stage == 3:  # (not computed where it cannot be accepted: a lower estimate of it above the need)
            need = (lo * (1 + limits.CLOSED_ACCEPT_TILTED * rel_tol) / (1 + 1e-9) - body - multi) * (1 + 1e-6)
            jup = min(jup, _jump_upper(law, gamma, n, T0, fine=True, bands=True, stop_above=max(need, 0.0),
                                       keep=keep))
        elif stage == 4 and limits.CLOSED_LOCAL_STAGE:  # §40: the mgf's tail deduction, the rate below the mean
            jlo = max(jlo, _jump_lower(law, gamma, n, T0, curvature=False, tilted=True, sharp_pmf=True, local=True))
            jup = min(jup, _jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, jumps=True,
                                       keep=keep, local=True))
        elif stage == 5 and limits.CLOSED_LOCAL_STAGE and limits.CLOSED_EXP_STAGE:  # §41: the exponential, the split
            jlo = max(jlo, _jump_lower(law, gamma, n, T0, curvature=False, tilted=True, sharp_pmf=True, local=True,
                                       exp=True))
            jup = min(jup, _jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, jumps=True,
                                       keep=keep, local=True, split=True))
        elif (stage == 6 and limits.CLOSED_LOCAL_STAGE and limits.CLOSED_EXP_STAGE and limits.CLOSED_PIECES_STAGE
              and up - lo <= _PIECES_REACH * accept * rel_tol * lo):
            # §43: the upper value's part below the mean by chords over several pieces and the mgf of -V (not
            # computed where stage 5's gap exceeds _PIECES_REACH times the acceptance: speed only, §43.2)
            jup = min(jup, _jump_upper(law, gamma, n, T0, fine=False, bands=False, sharp=True, jumps=True,
                                       keep=keep, local=True, split=True, pieces=True))
        else:
            return None
    return ConcentratedBracket(lower=lo, upper=min(up, law.tail_upper(0.0)), T0=T0, body=body, jump_up=jup,
                               jump_lo=jlo, multi=multi, curved=curved)


def with_curvature(cb: ConcentratedBracket, law: Law, gamma: float, n: int) -> ConcentratedBracket:
    """``cb`` (a bracket of :func:`certify` for ``law``) with the curvature term of §19 in its lower value (the same
    upper value; a lower value with §21's tilted term, where ``certify`` needed it, stays when larger); kept in the
    memo."""
    if cb.curved:
        return cb
    jlo = max(cb.jump_lo, _jump_lower(law, gamma, n, cb.T0))
    out = replace(cb, lower=max(cb.lower, jlo * (1 - 1e-9)), jump_lo=jlo, curved=True)
    key = (*law.heavy_form().key, gamma, n)
    for k, v in list(_MEMO.items()):
        if k[:len(key)] == key and v is cb:
            _MEMO[k] = out
    return out


def closed_at_clamp(jt: JumpTerm, law: Law, gamma: float, n: int, T0: float) -> JumpTerm:
    """The jump term ``jt`` of a round at the clamp T0 on ``law`` (:func:`at_clamp_eligible`) intersected with
    the closed form's bracket of the same E phi(A') at the same T0 (docs/accountant_tail.md §24: no lower clamp for
    the laws of :func:`eligible`, so both bound one quantity; for a two-term law the closed form bounds E phi of the
    unclamped sum, and the round's values stay certified with either bracket's ends, §32 (d)). Used where
    the FFT treatment's lower value is 0 or its gap misses rel_tol (the centroid law over its size cap at n >= 1e8,
    §11.2), for tens of ms."""
    lo_c, up_c = jump_bracket(law, gamma, n, T0, fast=True)
    if getattr(law, "two_term_form", lambda: None)() is not None:
        # a two-term law (§32 (d)): lo_c <= E phi(A'_inf) <= E phi(A'_B) <= jt.up (A'_inf <= A'_B, phi non-decreasing),
        # so lo_c > jt.up is a defect (below); up_c bounds E phi(A'_inf), which may lie below jt.lo by the lower
        # clamp's share: any upper value at least up_c is one for the round's Up (§32 (d)), so it is not taken
        # below the lower value
        up_c = max(up_c, jt.lo)
    lo, up = max(jt.lo, lo_c), min(jt.up, up_c)
    if lo > up:  # two certified brackets of one quantity cannot be disjoint: a defect, never a value
        raise RuntimeError(f"accountant: the closed form's jump bracket [{lo_c!r}, {up_c!r}] and the FFT treatment's "
                           f"[{jt.lo!r}, {jt.up!r}] at T0 = {T0!r} are disjoint (docs/accountant_tail.md §24); "
                           "refusing to certify")
    return replace(jt, lo=lo, up=up)


__all__ = ["ConcentratedBracket", "at_clamp_eligible", "certify", "closed_at_clamp", "eligible", "jump_bracket", "positive_prob_up", "route", "unclamped_lower",
           "with_curvature"]
