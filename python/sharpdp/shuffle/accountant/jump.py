"""The jump term of the far-tail treatment: E[phi(A')] bracketed by FFTs of the clamped lattice laws,
the pair integral and the stop-loss grid (docs/accountant_tail.md §3-§4).

With A' the sum of n - 1 clamped per-user terms and phi(a) = tau(max(T0, -a)), tau(t) = E[(L - t)_+],
:func:`jump_term` brackets E[phi(A')] through the split phi = phi_c - c (a + T0)_+ (phi_c convex,
c >= P(L > T0)) with the hat and centroid lattice laws, each summed n - 1 times by the certified
convolution of :mod:`.fft`, and Chernoff bounds outside the window (:mod:`.chernoff`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sharpdp.shuffle.accountant.chernoff import Chernoff, capped_exp, saddle_excess_estimate
from sharpdp.shuffle.accountant.fft import Part, cheap_err_cap, cheap_err_floor, convolve, fold_rounding, kernels, next_fast_len_real
from sharpdp.shuffle.accountant.hat_density import density_cost, density_estimate
from sharpdp.shuffle.accountant.hat_lower import body_weights, coupling_cost, rounding_shift, spread_cost
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.lattice import LatticeLaws
from sharpdp.shuffle.accountant.limits import DFT_WORK, GRID_BLOCK, GRID_STEP, N_MAX_TAIL, U
from sharpdp.shuffle.accountant.heap_keep import kept_big
from sharpdp.shuffle.accountant.memo import object_memo
from sharpdp.shuffle.accountant.tv_weight import TvWeights, tv_out, tv_term, tv_weights
from sharpdp.shuffle.laws import Law


class TailCoarsen(Exception):
    """A size cap of the far-tail treatment binds; ``args[0]`` is (about) the smallest grid step that
    fits. Internal control flow of :mod:`.jump` and :mod:`.far_tail`: :func:`.far_tail.try_certify`
    turns it into None (the plain engine then runs)."""


@dataclass(frozen=True)
class FftWindow:
    """The untilted nn-fold lattice law on the window [a, b) (docs/accountant_tail.md §4): nodes ``x``
    (float64, shape (N,)), the computed pmf ``q`` on them, the l2 bound ``err_q`` of its error, the
    TV bound ``tv`` of the pmf errors and the FFT length N."""

    x: np.ndarray
    q: np.ndarray
    err_q: float
    tv: float
    N: int
    a: float
    b: float

@dataclass(frozen=True)
class JumpTerm:
    """Certified bracket lo <= E[phi(A'_B)] <= up of the jump term (units of D_up,
    docs/accountant_tail.md §4), the FFT length and the intermediate bounds (``parts``)."""

    up: float
    lo: float
    N: int
    parts: dict[str, Any] = field(default_factory=dict)

# --------------------------------------------------------------------------- closed forms
def _blocked(fn, t: np.ndarray):
    """fn(t) evaluated on blocks of t (the closed forms are elementwise: same values, bounded memory)."""
    if t.size <= GRID_BLOCK:
        return fn(t)
    outs = [fn(t[i:i + GRID_BLOCK]) for i in range(0, t.size, GRID_BLOCK)]
    if isinstance(outs[0], tuple):
        return tuple(np.concatenate([o[j] for o in outs]) for j in range(len(outs[0])))
    return np.concatenate(outs)


def stop_loss_grid(law: Law, t0: float, dt: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rigorous bracket (lo, up) of tau on the grid t_j = t0 + j dt, j = 0..k-1 (dt > 0), from the closed forms
    at every GRID_STEP-th node only (docs/accountant_tail.md §4, evaluation). tau is convex with slope
    -P(L >= t) at t, so between two evaluated nodes a < b the chord of the upper values lies above tau, and the
    tangent at a lies below it: tau(t) >= tau_lo(a) - P(L >= a) (t - a), with P(L >= a) <= P(L > a'), a' < a."""
    # the interpolation interval s dt is kept below t0 / 1024 (the bracket's width is at most s dt times the
    # drop of P(L > t) over it)
    s = int(min(GRID_STEP, max(t0, 0.0) / (1024.0 * dt))) if dt > 0 else 1
    fill = getattr(kernels(), "stop_loss_fill", None) if s >= 2 and k > 2 * s else None
    if fill is not None:  # (the core's loop: the same doubles as the array form below, docs/accountant_tail.md §80)
        idx = np.arange(0, k, s)
        if idx[-1] != k - 1:
            idx = np.append(idx, k - 1)
        tc = np.multiply(idx.astype(float), dt)
        tc += t0  # (t0 + j dt at the nodes: the same floats as t[idx] below)
        lo_c, up_c = _blocked(law.stop_loss, tc)
        ta = tc - (np.abs(tc) * 1e-12 + 1e-300)  # a' < a
        return fill(t0, dt, idx, lo_c, up_c, _blocked(law.prob_above_up, ta), ta)
    j = np.arange(k, dtype=float)
    t = np.multiply(j, dt)
    t += t0  # (t0 + j dt, in place)
    if s < 2 or k <= 2 * s:
        return _blocked(law.stop_loss, t)
    idx = np.arange(0, k, s)
    if idx[-1] != k - 1:
        idx = np.append(idx, k - 1)
    tc = t[idx]
    lo_c, up_c = _blocked(law.stop_loss, tc)
    ta = tc - (np.abs(tc) * 1e-12 + 1e-300)  # a' < a
    pa = _blocked(law.prob_above_up, ta)
    # the segment of node j: the last evaluated node <= j (idx holds the multiples of s, then k - 1). Segments
    # 0 .. nfull - 1 all have length s (j - ia = 0 .. s - 1 and ib - ia = s exactly, as integers): their values
    # are computed by broadcasting, the same floating-point operations as the gathered form of the last one
    nfull = idx.size - 2
    F = nfull * s
    up, lo = np.empty(k), np.empty(k)
    if nfull > 0:
        # in place on views of up and lo, the operations (and their order) of
        # up = ((1 - fr) ua + fr ub + 8u max(ua, ub)) (1 + 1e-12),
        # lo = max(la - pa (t - ta) (1 + 1e-12) - 8u la, 0) (1 - 1e-12): the same floats, no temporaries of size F
        fr = np.clip(np.arange(s, dtype=float) / s, 0.0, 1.0)[None, :]
        ua, ub = up_c[:nfull, None], up_c[1:nfull + 1, None]
        u2, l2 = up[:F].reshape(nfull, s), lo[:F].reshape(nfull, s)
        np.multiply(1.0 - fr, ua, out=u2)
        u2 += np.multiply(fr, ub, out=l2)
        u2 += 8 * U * np.maximum(ua, ub)
        u2 *= 1 + 1e-12
        la, pa_, ta_ = lo_c[:nfull, None], pa[:nfull, None], ta[:nfull, None]
        np.subtract(t[:F].reshape(nfull, s), ta_, out=l2)
        np.multiply(pa_, l2, out=l2)
        l2 *= 1 + 1e-12
        np.subtract(la, l2, out=l2)
        l2 -= 8 * U * la
        np.maximum(l2, 0.0, out=l2)
        l2 *= 1 - 1e-12
    seg = np.full(k - F, idx.size - 2)
    ia, ib = idx[seg], idx[seg + 1]
    fa = (j[F:] - ia) / (ib - ia)  # in [0, 1]; its rounding is covered by the margins below
    fa = np.clip(fa, 0.0, 1.0)
    # (t is exact: t0 and dt are integer multiples of the dyadic lattice step; the weights and the sums carry a
    # few ulp, covered by the absolute margin 8u of the larger end value)
    ua, ub = up_c[seg], up_c[seg + 1]
    up[F:] = ((1.0 - fa) * ua + fa * ub + 8 * U * np.maximum(ua, ub)) * (1 + 1e-12)
    # tangent at a: t - ta >= t - a, the slope bound pa >= P(L >= a)
    la = lo_c[seg]
    lo[F:] = np.maximum(la - pa[seg] * (t[F:] - ta[seg]) * (1 + 1e-12) - 8 * U * la, 0.0) * (1 - 1e-12)
    # the chord needs the computed t_j between its ends: exact at the nodes themselves
    up[idx] = up_c
    lo[idx] = lo_c
    return lo, up


def stop_loss_octaves(law: Law, t0: float, dt: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`stop_loss_grid`'s bracket of tau on t_j = t0 + j dt, j < k (t0 >= 0), computed on pieces where one grid
    would evaluate the closed forms at more than limits.STOP_LOSS_OCTAVE_MIN nodes: [t0, 2048 dt) (where t0 < 2048 dt),
    then one piece per octave [t, 2 t), each a :func:`stop_loss_grid` (its interpolation step bounded by its own first node,
    so it grows with t: the same bounds as a grid's, far fewer closed forms; docs/accountant_tail.md §49.2). One
    grid where limits.STOP_LOSS_OCTAVES is off or the grid is small (main's floats)."""
    one = int(min(GRID_STEP, max(t0, 0.0) / (1024.0 * dt))) if dt > 0 else 1
    if not limits.STOP_LOSS_OCTAVES or not dt > 0 or k <= limits.STOP_LOSS_OCTAVE_MIN * max(one, 1):
        return stop_loss_grid(law, t0, dt, k)
    pieces = []
    j = 0
    while j < k:
        # the piece's first node t and its end: nodes j .. jn - 1 (t0 + i dt exact: multiples of the lattice step)
        t = t0 + j * dt
        end = 2048.0 * dt if t < 2048.0 * dt else 2.0 * t
        jn = min(max(int(math.ceil((end - t0) / dt)), j + 1), k)
        pieces.append(stop_loss_grid(law, t, dt, jn - j))
        j = jn
    return np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces])


_PAIR_UNIT = np.expm1(np.linspace(0.0, math.log(4096.0), 769))  # (computed once: the same floats every call)
_PAIR_UNIT.setflags(write=False)


def _pair_grid(T0: float, k: int = 769) -> np.ndarray:
    """The first ``k`` points of the pair term's geometric grid from T0."""
    return T0 + max(T0, 1.0) * _PAIR_UNIT[:k]


def pair_first_term(law: Law, T0: float, scale: float) -> float:
    """A lower value of ``scale * pair_integral_up(law, T0)`` as computed in floats (scale >= 0): the same
    expression with the Riemann sum replaced by its first term (the same floats: elementwise operations on the
    first two grid points). The computed sum of non-negative terms is at least any one of them (rounding is
    monotone), and so is every later operation (products by non-negative factors)."""
    x = _pair_grid(T0, 2)
    p = law.prob_above_up(x)
    return scale * ((float((np.diff(x) * p[:-1] ** 2)[0])) * (1 + 1e-9))


def pair_first_terms(law: Law, T0s: np.ndarray, scale: float) -> np.ndarray:
    """:func:`pair_first_term` at each clamp of ``T0s`` (the same floats, elementwise; one call of the law)."""
    T0s = np.asarray(T0s, float)
    x = T0s[:, None] + np.maximum(T0s, 1.0)[:, None] * _PAIR_UNIT[None, :2]
    p = law.prob_above_up(x.ravel()).reshape(x.shape)
    return scale * (((x[:, 1] - x[:, 0]) * p[:, 0] ** 2) * (1 + 1e-9))


def pair_integral_up(law: Law, T0: float) -> float:
    """Upper bound on I2(T0) = int_0^inf P(L > T0 + t)^2 dt (docs/accountant_tail.md §3).

    The integrand is non-increasing: an upper Riemann sum on a geometric grid x_0 = T0 < x_1 <
    ... < x_M, plus int_{x_M}^inf P(L > x)^2 dx <= P(L > x_M) tau(x_M) for the rest."""
    # kept per law object by T0 (a function of the law's parameters and T0 alone: the same float): the clamp
    # searches of the closed form (§18) and of the FFT treatment, and the pair term at the chosen clamp, ask for
    # the same T0 of one law (about a third of the calls on the heavy round's profile; docs/accountant_tail.md §17)
    memo = object_memo(law, "_pair_memo")
    if memo is not None and (v := memo.get(T0)) is not None:
        return v
    x = _pair_grid(T0)
    p = law.prob_above_up(x)
    s = float(np.sum(np.diff(x) * p[:-1] ** 2))
    rest = float(p[-1] * law.stop_loss(x[-1:])[1][0])
    v = (s + rest) * (1 + 1e-9)
    if memo is not None:
        memo[float(T0)] = v
    return v

# --------------------------------------------------------------------------- the FFT windows
def _fft_law(g: np.ndarray, eta: np.ndarray, k0: int, h: float, nn: int, log_tgt: float, workers: int,
             thr_fn: Callable[[int], float], pre: dict, work: float) -> FftWindow:
    """Untilted nn-fold lattice law on a window [a, b) certified by Chernoff bounds (each side's
    probability <= e^{log_tgt} for the computed law; the exact law's bounds are recomputed by the
    caller). Returns the window values x, the computed circular pmf q on it, the componentwise
    error bound err_q, the TV bound of the pmf errors and N. ``work``: the power step's budget of
    multiply-adds for the accurate DFT of its largest frequencies (any budget gives a certified err_q;
    a larger one a smaller err_q at a cost of up to ~0.5 s CPU per 2e7). ``pre``: a dict, empty on the first call;
    a second call with the same arguments (another ``work``) and the dict the first filled reuses its window, nodes
    and forward FFT (the same floats, computed once)."""
    _fft_window(g, eta, k0, h, nn, log_tgt, pre)
    N, sa, x, tau, mass = pre["win"]
    conv = convolve([Part(g, nn)], N, thr_fn(N), work, workers, spectra=pre.setdefault("spectra", {}))
    qw = np.roll(conv.q, -((sa - nn * k0) % N))
    ltv = math.log(nn * tau) + (nn - 1) * math.log1p(mass - 1.0 + tau) if tau > 0 else -math.inf
    return FftWindow(x=x, q=qw, err_q=conv.err_q, tv=capped_exp(ltv), N=N, a=float(x[0]), b=float(x[-1] + h))


def _fft_window(g: np.ndarray, eta: np.ndarray, k0: int, h: float, nn: int, log_tgt: float, pre: dict) -> np.ndarray:
    """The window of :func:`_fft_law` (its nodes x; kept in ``pre["win"]`` with N, its start, the pmf's error sum and
    mass), computed once per ``pre``; raises :class:`TailCoarsen` where N exceeds the cap."""
    if "win" not in pre:
        C = kernels()
        _, Lam, mu, var, tau, mass = C.tilt(g, eta, k0, h, 0.0)
        sig = math.sqrt(max(nn * var, h * h))
        lam_scale = 1.0 / (sig + h)
        s_hi = C.chernoff_edge(g, k0, h, float(nn), log_tgt, +1, lam_scale) / h
        s_lo = C.chernoff_edge(g, k0, h, float(nn), log_tgt, -1, lam_scale) / h
        center = nn * mu / h
        s_hi, s_lo = max(s_hi, center + 1.0), min(s_lo, center - 1.0)
        sa = int(math.floor(s_lo)) - 1
        N = next_fast_len_real(max(int(math.ceil(s_hi)) - sa + 2, 16))  # (scipy.fft's, without its import)
        if N > N_MAX_TAIL:
            raise TailCoarsen(h * N / N_MAX_TAIL * 1.02)
        x = (sa + np.arange(N, dtype=float)) * h
        tau += fold_rounding(g.size, N, mass)
        pre["win"] = (N, sa, x, tau, mass)
    return pre["win"][2]


def _fft_sums(g: np.ndarray, eta: np.ndarray, k0: int, h: float, nn: int, log_tgt: float, workers: int,
              thr_fn: Callable[[int], float], weights: Callable[[np.ndarray], tuple[np.ndarray, ...]],
              small: Callable[[list[tuple[float, float]]], bool],
              doomed: Callable[..., bool] | None = None
              ) -> tuple[FftWindow, tuple[np.ndarray, ...], list[tuple[float, float]]]:
    """The window of :func:`_fft_law`, the weight vectors ``weights(x)`` on it and their sums (value, round-off
    bound). The power step first runs without its accurate DFT (cheap); it is run again with the engine's budget
    only when ``small(sums)`` says the round-off bounds are not negligible (a choice of speed: every err_q is
    certified, docs/accountant_tail.md §8); the second run reuses the first's window and forward FFT (§17).
    ``doomed(floors, f, ws, N, M)``, given for each weight vector w the floor ||w||_2 f of its round-off bound (f from
    :func:`~.fft.cheap_err_floor`), the weights, N and M >= the total mass of the exact circular pmf, says True only
    where ``small`` is then certain to reject the cheap run: that run is skipped, the accurate one computed at once
    (the same floats; docs/accountant_tail.md §31.1, §34.4). ``doomed`` must not decrease with f (it is first asked
    with :func:`~.fft.cheap_err_cap` >= f, and the floor computed only where that says True)."""
    pre: dict = {}
    ws = weights(_fft_window(g, eta, k0, h, nn, log_tgt, pre))
    work = 0.0
    wn: list[float | None] = [None] * len(ws)  # the weights' l2 norms, computed once (the same floats)
    if doomed is not None:
        wn = [_l2(w) for w in ws]
        # (the floor only where its cap could doom the run: doomed grows with the floors; §34.4, the same floats)
        sp = pre.setdefault("spectra", {})
        N, _, _, tau, mass = pre["win"]
        lm = nn * math.log1p(mass - 1.0 + tau)  # (the computed pmf's mass and error sum, as the engine's M of §31.3)
        M = math.exp(lm) * (1 + 1e-6) if lm < 700 else math.inf
        cap = cheap_err_cap(Part(g, nn), N, sp)
        if doomed([x * cap for x in wn if x is not None], cap, ws, N, M):
            f = cheap_err_floor(Part(g, nn), N, workers, sp)
            if doomed([x * f for x in wn if x is not None], f, ws, N, M):
                work = DFT_WORK
    F = _fft_law(g, eta, k0, h, nn, log_tgt, workers, thr_fn, pre, work)
    sums = [_wsum(w, F, wn, i) for i, w in enumerate(ws)]
    if work == 0.0 and not small(sums):
        del F  # (its pmf is replaced: the window and the spectrum stay in pre)
        F = _fft_law(g, eta, k0, h, nn, log_tgt, workers, thr_fn, pre, DFT_WORK)
        sums = [_wsum(w, F, wn, i) for i, w in enumerate(ws)]
    return F, ws, sums


def _sums(w: np.ndarray, q: np.ndarray, squares: bool) -> tuple[float, float, float]:
    """(sum w q, sum |w q|, sum w w) over float64 vectors of one length, each exactly as ``np.sum`` of numpy's products
    computes it (numpy's pairwise order), in one pass of the core's ``weighted_sums`` (the last 0.0 unless ``squares``;
    docs/accountant_tail.md §80); numpy's own where the core has no such kernel (an older build: the same floats)."""
    f = getattr(kernels(), "weighted_sums", None)
    if f is not None:
        return f(w, q, squares)
    wq = np.multiply(w, q)
    s = float(np.sum(wq))
    return s, float(np.sum(np.abs(wq, out=wq))), float(np.sum(np.multiply(w, w, out=wq))) if squares else 0.0


def _l2(w: np.ndarray) -> float:
    """||w||_2 as sqrt(sum(w * w)) (the same floats as numpy's)."""
    return math.sqrt(_sums(w, w, False)[0])


def _wsum(w: np.ndarray, F: FftWindow, norms: list[float | None] | None = None, i: int = 0) -> tuple[float, float]:
    """(sum_W w q, round-off bound) for non-negative weights w on the window of F; ``norms[i]``: ||w||_2 where known
    (else computed here and kept there). The three sums in one pass (:func:`_sums`: the same floats as numpy's)."""
    nw = norms[i] if norms is not None else None
    s, a, ss = _sums(w, F.q, nw is None)
    if nw is None:
        nw = math.sqrt(ss)
        if norms is not None:
            norms[i] = nw
    fp = nw * F.err_q + w.size * U * a
    return s, fp


@kept_big  # the C heap kept for reuse inside at n >= 1e7 (speed only, the same floats; docs/accountant_tail.md §68)
def jump_term(law: Law, gamma: float, n: int, lat: LatticeLaws, h: float, T0: float, rel_tol: float, est: float,
              workers: int, lower: bool = True, hat: bool = False) -> JumpTerm:
    """Certified bracket of E[phi(A'_B)] (A'_B the sum of n - 1 clamped per-user terms), in units
    of D_up (docs/accountant_tail.md §4).

    phi = phi_c - c (a + T0)_+ with c >= P(L > T0) and phi_c(a) = tau(-a) for a <= -T0,
    tau(T0) + c (a + T0) beyond (convex, non-decreasing, c-Lipschitz). With the hat law A_hat
    (convex-order upper) and the centroid law A_low (convex-order lower) of A'_B:
        E phi(A'_B) <= E phi_c(A_hat) - c E(A_low + T0)_+,
        E phi(A'_B) >= E phi_c(A_low) - c E(A_hat + T0)_+.

    ``hat`` (with ``lower``): also the lower value from the hat law alone, E phi_c(A_hat) less the rounding's
    second-order cost, and a bracket of the body E(A)_+ / (n gamma) from the same window (``parts["hat_body"]``;
    docs/accountant_tail.md §45).
    """
    nn = n - 1
    tau_T0_lo, tau_T0_up = (float(v[0]) for v in law.stop_loss([T0]))
    c = float(law.prob_above_up([T0])[0])
    if nn == 0:  # A' = 0: phi(0) = tau(T0) exactly
        return JumpTerm(up=tau_T0_up, lo=tau_T0_lo, N=0)
    k0 = lat.k0

    grids: dict = {}  # the hat and centroid windows are often the same: tau's bracket computed once

    def phic(x, which):
        # x: the window's nodes (increasing, step h); tau(-x) is needed on x <= -T0 only
        v = (tau_T0_up if which == "up" else tau_T0_lo) + c * (x + T0)
        k = int(np.searchsorted(x, -T0, side="right"))
        if k > 0:
            key = (float(x[k - 1]), k)
            if key in grids:
                lo_t, up_t = grids[key]
            else:
                lo_t, up_t = stop_loss_octaves(law, -x[k - 1], h, k)
                if k > 1:  # (one window kept: bounded memory)
                    grids.clear()
                    grids[key] = (lo_t, up_t)
            v[:k] = (up_t if which == "up" else lo_t)[::-1]
        return v

    log_tgt = math.log(max(1e-5 * rel_tol * est, 1e-300) / max(tau_T0_up, 1e-300)) - 2.0
    thr_fn = lambda N: 1e-4 * rel_tol * est / (max(tau_T0_up, 1e-300) * math.sqrt(N))  # noqa: E731

    # --- the hat law: upper bounds of E phi_c and of E (x + T0)_+ ---
    ch = Chernoff(lat.g, lat.eta, k0, h, nn)

    def small(sums):
        # the round-off of the sums below 1 % of the accuracy target (of the smaller of est and the value's
        # uncertified estimate from the same sums): the accurate DFT would not change the bracket noticeably
        (s_, fp_), (sr_, fpr_) = sums
        return fp_ + c * fpr_ <= 0.01 * rel_tol * max(min(est, s_ - c * sr_), 0.0)

    vmax: dict = {}  # max of w - c wr over a window (by the weights' identity)

    def doomed(floors, f, ws, N, M):
        # floors below the round-off bounds fp_, fpr_ of the cheap run: where they already exceed the largest value
        # small's right side can take (min(est, .) <= est), small rejects that run (docs/accountant_tail.md §31.1)
        W = floors[0] + c * floors[1]
        if W > 0.01 * rel_tol * max(est, 0.0):
            return True
        # ... or where they exceed it at the value's bound s - c sr <= V (M + sqrt(N) err_q) + (the sums' rounding),
        # V = max(w - c wr) (§34.4): both sides grow with err_q >= f, the left faster where W / f > r V sqrt(N)
        if (key := id(ws[0])) not in vmax:
            vmax[key] = max(float(np.max(ws[0] - c * ws[1])), 0.0) * (1 + 1e-6)
        rv = 0.01 * rel_tol * vmax[key] * (1 + 1e-6)
        return f > 0.0 and W > rv * math.sqrt(N) * f and W > rv * (M + math.sqrt(N) * f)

    F, (w, wr), ((s, fp), (sr, fpr)) = _fft_sums(
        lat.g, lat.eta, k0, h, nn, log_tgt, workers, thr_fn,
        lambda x: (phic(x, "up"), np.maximum(x + T0, 0.0)), small, doomed)
    a, b = F.a, F.b
    lpa, lpb = ch.log_p_above(b), ch.log_p_below(a)
    pa, pb = capped_exp(lpa), capped_exp(lpb)
    ex = capped_exp(ch.log_excess(max(b, -T0)))  # >= E[(S - max(b, -T0))_+]
    # E[(S + T0)_+ 1{S >= b}] <= (b + T0)_+ P(S >= b) + E[(S - max(b, -T0))_+]
    ramp_out_hi = max(b + T0, 0.0) * pa + ex
    # outside the window: below a, phi_c <= phi_c(a); above b, phi_c <= tau(T0) + c (x + T0)_+
    out = float(phic(np.array([a]), "up")[0]) * pb + tau_T0_up * pa + c * ramp_out_hi
    # the pmf errors' terms: max_W w tv, or §51's bound by the weights' majorants c (x + T0)_+ + C0 where smaller
    tw = tv_weights(ch, lat.g, lat.eta, F, nn, max(float(w.max()), c * float(wr.max())) * F.tv, rel_tol * est)
    tvr = tv_term(tw, wr, F.tv, 1.0, -T0)
    phi_hat_up = s + fp + tv_term(tw, w, F.tv, c, -T0) + out
    ramp_hat_up = sr + fpr + tvr + max(a + T0, 0.0) * pb + ramp_out_hi
    # Jensen: E(A' + T0)_+ >= (E A' + T0)_+, with E A' = (n - 1) gamma E clamp(L, -B, T0) and
    # clamp(l, -B, T0) = -B + (l + B)_+ - (l - T0)_+ (docs/accountant_tail.md §4)
    Bl = -k0 * h
    tl_lo = float(law.tail_upper_bracket(-Bl)[0])
    core = (-Bl + tl_lo) - tau_T0_up
    mean_lo = gamma * (core - 4 * U * (Bl + tl_lo + tau_T0_up)) - 4 * U * abs(gamma * core)
    ramp_jensen = max(nn * mean_lo - 4 * U * nn * abs(mean_lo) + T0, 0.0) * (1 - 1e-12)
    parts: dict[str, Any] = dict(window=(a, b), c=c, phi_hat_up=phi_hat_up, ramp_hat_up=ramp_hat_up,
                                 ramp_jensen=ramp_jensen)
    lo_hat = 0.0
    if hat and lower:  # (§45: the ramp's lower value from the hat law too, for the upper value below)
        lo_hat, ramp_hat_lo, parts["hat_body_fn"] = _hat_values(
            law, gamma, n, lat, h, T0, c, F, pa, pb, ch, phic(F.x, "lo"), ramp_hat_up,
            sr - fpr - tv_out(tw, wr, F.tv + pa + pb, pa + pb, 1.0, -T0), tw,
            limits.HAT_PIECES and rel_tol <= limits.HAT_PIECES_TOL, rel_tol)  # (§53: not a calibration's loose probes)
        ramp_jensen = max(ramp_jensen, ramp_hat_lo)
    up_hat = (phi_hat_up - c * ramp_jensen) * (1 + 1e-9)
    if not lower or lat.low is None:
        return JumpTerm(up=up_hat, lo=lo_hat, N=F.N, parts=parts)
    if hat and limits.JUMP_HAT_FIRST and _hat_enough(up_hat, lo_hat, rel_tol, lat, h, n, gamma, F.N):
        # the hat law's bracket alone is within JUMP_HAT_SHARE rel_tol (of its lower value, or of the body's estimate):
        # the centroid law's window is not computed (docs/accountant_tail.md §49.1; a choice of which certified
        # values run)
        parts["hat_first"] = True
        return JumpTerm(up=up_hat, lo=lo_hat, N=F.N, parts=parts)
    # --- the centroid law: lower bounds of E phi_c and of E (x + T0)_+ (outside dropped: w >= 0) ---
    g_lo, eta_lo, mom_err = lat.low.g, lat.low.eta, lat.low.mom_err * gamma
    F2, (w1, wr2), ((s1, fp1), (s2, fp2)) = _fft_sums(
        g_lo, eta_lo, k0, h, nn, log_tgt, workers, thr_fn,
        lambda x: (phic(x, "lo"), np.maximum(x + T0, 0.0)), small, doomed)
    ch2 = Chernoff(g_lo, eta_lo, k0, h, nn)
    p_out = capped_exp(ch2.log_p_above(F2.b)) + capped_exp(ch2.log_p_below(F2.a))
    # centroid errors: E|A_true - A_computed| <= nn h sum(mom_err); phi_c is c-Lipschitz, the ramp 1-Lipschitz
    dev = nn * h * float(np.sum(mom_err)) * (1 + 1e-9)
    tw2 = tv_weights(ch2, g_lo, eta_lo, F2, nn, max(float(w1.max()), c * float(wr2.max())) * F2.tv, rel_tol * est)
    phi_low_lo = s1 - fp1 - tv_out(tw2, w1, F2.tv + p_out, p_out, c, -T0) - c * dev
    ramp_low_lo = max(s2 - fp2 - tv_out(tw2, wr2, F2.tv + p_out, p_out, 1.0, -T0) - dev, ramp_jensen)
    up = phi_hat_up - c * ramp_low_lo
    lo = phi_low_lo - c * ramp_hat_up
    parts.update(N_lower=F2.N, phi_low_lo=phi_low_lo, ramp_low_lo=ramp_low_lo, dev=dev,
                 tv_w=(float(w.max()) + c * float(wr.max()), float(w1.max())))  # (§44.4's estimate)
    return JumpTerm(up=up * (1 + 1e-9), lo=max(lo * (1 - 1e-9), 0.0, lo_hat), N=F.N, parts=parts)


def _hat_enough(up: float, lo: float, rel_tol: float, lat: LatticeLaws, h: float, n: int, gamma: float,
                N: int) -> bool:
    """Whether the hat law's bracket [lo, up] of the jump term is within JUMP_HAT_SHARE rel_tol of its lower value,
    or (JUMP_HAT_BODY, on a window of N >= JUMP_HAT_BODY_N points) of the saddle-point ESTIMATE of the round's body
    E(A)_+/(n gamma) from the hat law ``lat`` (an estimate: it only chooses whether the centroid window runs;
    docs/accountant_tail.md §49.1)."""
    room = limits.JUMP_HAT_SHARE * rel_tol
    if 0.0 < lo and up - lo <= room * lo:
        return True
    if not limits.JUMP_HAT_BODY or N < limits.JUMP_HAT_BODY_N:
        return False
    v = saddle_excess_estimate(lat.g, lat.k0, h, n) / (n * gamma)
    return v > 0.0 and up - max(lo, 0.0) <= room * v


def _hat_values(law: Law, gamma: float, n: int, lat: LatticeLaws, h: float, T0: float, c: float, F: FftWindow,
                pa: float, pb: float, ch: Chernoff, w1: np.ndarray, ramp_hat_up: float, ramp_sum_lo: float,
                tw: TvWeights | None = None, pieces: bool = False, rel_tol: float = 0.0
                ) -> tuple[float, float, Callable[[], tuple[float, float]]]:
    """The hat window's lower value of the jump term, and a function computing the body's bracket from the same window
    where the round asks for it (docs/accountant_tail.md §45, §45.5; it holds the window until called): E w(A')
    >= E w(A_hat*) - Lip(w) (n - 1) h d - coupling_cost (d: :func:`~.hat_lower.rounding_shift`), E w(A_hat*) >=
    sum_W w q - round-off - max_W w (tv + P(outside)); E f(A') <= E f(A_hat*) (f convex, non-decreasing) for the
    body's upper value. ``w1``: phi_c's lower values on the window; ``ramp_sum_lo``: the window's lower value of
    E (A_hat* + T0)_+, which less the same two terms (Lipschitz 1, mu = the point -T0) is a lower value of
    E (A' + T0)_+ (returned second). ``tw``: the window's bounds of the pmf errors' terms (docs/accountant_tail.md
    §51; None: max_W w tv). ``pieces``: the spread parts' costs on pieces (docs/accountant_tail.md §53), and with them
    §55's cost from L's tail density where it applies (``rel_tol``: the request's, for its gate)."""
    nn = n - 1
    B = lat.kB * h
    d = rounding_shift(law, gamma, h, lat.kT, lat.kB)
    shift_mean = nn * h * d * (1 + 1e-9)
    p_out = pa + pb
    miss = F.tv + p_out + min(nn * d * (1 + 1e-9), 1.0)
    s1, fp1 = _wsum(w1, F)
    pre: dict = {}  # (the window's running sums, shared by the three costs)
    # (phi_c's mu: the law of L above T0, reflected, and the kink at -T0; on pieces down to the window's bottom, §53.1)
    cost = spread_cost(F.x, F.q, F.err_q, miss, h, nn, gamma, law, c, T0, -float(F.a), -math.inf, -T0, pre=pre,
                       pieces=pieces)
    rest = s1 - fp1 - tv_out(tw, w1, F.tv + p_out, p_out, c, -T0) - c * shift_mean
    # (§55: the cost from the density of L's tail where it is convex beyond T0, computed where §53's cost is above
    # HAT_DENSITY_SHARE rel_tol of the window's value, the lower value can be positive without a cost, and an estimate
    # of the new cost is below HAT_DENSITY_EST times §53's)
    if pieces and limits.HAT_DENSITY and cost > limits.HAT_DENSITY_SHARE * rel_tol * s1 and \
            rest - c * ramp_hat_up > 0.0 and \
            density_estimate(F.x, F.q, F.tv, h, nn, gamma, law, T0) < limits.HAT_DENSITY_EST * cost:
        cost = min(cost, density_cost(F.x, F.q, F.err_q, F.tv, miss, h, nn, gamma, law, c, T0, pa, pb,
                                      capped_exp(ch.log_excess(F.b)), F.b, lambda w: _wsum(w, F), pre))
    phi_lo = rest - cost
    lo = max((phi_lo - c * ramp_hat_up) * (1 - 1e-9), 0.0)
    ramp_lo = (ramp_sum_lo - shift_mean - coupling_cost(F.x, F.q, F.err_q, miss, h, nn, gamma, [(1.0, -T0, -T0)], pre)
               ) * (1 - 1e-12)
    return lo, max(ramp_lo, 0.0), lambda: _hat_body(law, gamma, n, h, T0, B, F, pa, pb, ch, miss, shift_mean, pre, tw,
                                                    pieces)


def _hat_body(law: Law, gamma: float, n: int, h: float, T0: float, B: float, F: FftWindow, pa: float, pb: float,
              ch: Chernoff, miss: float, shift_mean: float, pre: dict, tw: TvWeights | None = None,
              pieces: bool = False) -> tuple[float, float]:
    """The body's bracket of :func:`_hat_values` (docs/accountant_tail.md §45.4)."""
    nn = n - 1
    p_out = pa + pb
    f_lo, f_up, f0_up = body_weights(law, gamma, F.x, T0, B, h, stop_loss_grid)
    sb, fpb = _wsum(f_lo, F)
    # (f's mu: (1 - gamma) at 0 and gamma times the law of -clamp(L, -B, T0); the latter on pieces, §53.1)
    if pieces:
        cost_f = (coupling_cost(F.x, F.q, F.err_q, miss, h, nn, gamma, [(1.0 - gamma, 0.0, 0.0)], pre)
                  + spread_cost(F.x, F.q, F.err_q, miss, h, nn, gamma, law, gamma, 2.0 * h, T0, -T0, B, gamma, pre,
                                pieces=True)) * (1 + 1e-12)
    else:
        cost_f = coupling_cost(F.x, F.q, F.err_q, miss, h, nn, gamma, [(1.0 - gamma, 0.0, 0.0), (gamma, -T0, B)], pre)
    ng = n * gamma * (1 + 1e-12)
    tv_lo = tv_out(tw, f_lo, F.tv + p_out, p_out, 1.0, 0.0)  # (f <= f(0) + x_+: §51's majorant)
    body_lo = max((sb - fpb - tv_lo - shift_mean - cost_f) * (1 - 1e-9), 0.0) / ng
    su, fpu = _wsum(f_up, F)
    # outside the window: f <= f(a) below a; above b, f(x) <= x_+ + f(0) and E[S_+; S >= b] <= b_+ P + E(S - b_+)_+
    ex = capped_exp(ch.log_excess(max(F.b, 0.0)))
    out = float(f_up[0]) * pb + (max(F.b, 0.0) + f0_up) * pa + ex
    body_up = (su + fpu + tv_term(tw, f_up, F.tv, 1.0, 0.0) + out) * (1 + 1e-9) / (n * gamma * (1 - 1e-12))
    return body_lo, body_up


def tv_floor_estimate(jt: JumpTerm, lat: LatticeLaws, nn: int) -> float:
    """An estimate (not a bound) of the part of a jump term's gap Up - Lo that the pmf errors' TV bounds make at the
    lattice laws ``lat`` of the next step: the TV terms of :func:`jump_term` (w_max tv + c wr_max tv on the hat law,
    w1_max tv on the centroid law, tv ~ nn sum(eta)), with the weights' maxima of ``jt``'s step (its window; the
    lattice's error sums hardly shrink with h once they are the cells' rounding). 0 where ``jt`` has no lower law's
    parts (docs/accountant_tail.md §44.4; it chooses whether a step runs, never what a step certifies)."""
    if "tv_w" not in jt.parts or lat.low is None:
        return 0.0
    wh, wl = jt.parts["tv_w"]
    return nn * (wh * float(np.sum(lat.eta)) + wl * float(np.sum(lat.low.eta)))


__all__ = ["FftWindow", "JumpTerm", "TailCoarsen", "jump_term", "pair_first_term", "pair_first_terms",
           "pair_integral_up", "stop_loss_grid", "stop_loss_octaves",
           "tv_floor_estimate"]
