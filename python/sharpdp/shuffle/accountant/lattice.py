"""The lattice engine of the certified shuffle accountant: clamps, hat rounding, tilt, FFT window,
floating-point bounds and the convex-order lower law (docs/accountant.md §3-§4).

:func:`lattice_laws` builds the per-user lattice pmfs (steps B, C, H), :func:`engine` sums n of
them through the certified convolution of :mod:`.fft` (steps D-F) and :func:`lattice_pass` is
one certified (lower, upper) at one grid (steps A-H). Used by the plain path (:mod:`.plain`),
the far-tail treatment (:mod:`.far_tail`) and the clamped Chernoff cap (:mod:`.chernoff`).
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.fft import Part, cheap_err_floor, convolve, fold_rounding, invert, kernels, next_fast_len_real, spectrum
from sharpdp.shuffle.accountant.spectral_sum import window_sum
from sharpdp.shuffle.accountant.limits import CHEAP_POWER, DFT_WORK, J_LO, K_MAX, N_MAX, U
from sharpdp.shuffle.accountant.heap_keep import kept_big
from sharpdp.shuffle.accountant.memo import object_memo
from sharpdp.shuffle.accountant.results import Coarsen, Grid
from sharpdp.shuffle.laws import Law


def choose_T(law: Law, target: float) -> float:
    """Smallest (about) T >= 0 with E[(L - T)_+] <= target (kept per law object by target: a function of the law's
    parameters and the target alone, the same float; docs/accountant_tail.md §17, §49.5)."""
    hi_s = law.support()[1]
    if math.isfinite(hi_s):
        return max(hi_s, 0.0)
    memo = object_memo(law, "_choose_T_memo")
    if memo is not None and (v := memo.get(float(target))) is not None:
        return v
    T = _choose_T(law, target)
    if memo is not None:
        memo[float(target)] = T
    return T


def _choose_T(law: Law, target: float) -> float:
    """:func:`choose_T`'s bisection for a law unbounded above."""
    sd = law.std()  # (once: a sum law recomputes it per call)
    T = max(law.mean(), 0.0) + sd
    for _ in range(2000):
        if law.tail_upper(T) <= target:
            break
        T = 2.0 * T + sd
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + T)
        if law.tail_upper(mid) <= target:
            T = mid
        else:
            lo = mid
        if T - lo <= 1e-3 * T:
            break
    return T


def choose_B(law: Law, target: float) -> float:
    lo_s = law.support()[0]
    if math.isfinite(lo_s):
        return max(-lo_s, 0.0)
    sd = law.std()
    B = max(-law.mean(), 0.0) + sd
    for _ in range(2000):
        if law.tail_lower(B) <= target:
            break
        B = 2.0 * B + sd
    return B


def _logsum(*terms: float) -> float:
    """log of a sum of non-negative terms (math.log(0) -> -inf)."""
    t = [x for x in terms if x > 0]
    return math.log(math.fsum(t)) if t else -math.inf


@dataclass(frozen=True)
class EngineResult:
    """Steps D-F for one lattice pmf: E[(S)_+]/n lies in e^{log_scale} [E - wrap_high - fp - tv,
    E + wrap_low + fp + tv] (log_scale = n Lambda - log n; the caller divides by gamma)."""

    E: float  # tilted positive-part sum over the window
    wrap_low: float  # window correction of the upper value (mass outside W, Chernoff)
    wrap_high: float  # window correction of the lower value
    fp: float  # FFT, power and summation round-off bound
    tv: float  # bound of the pmf errors eta_g (total variation of the n-fold sum)
    theta: float  # the tilt
    N: int  # FFT length
    n_log_mgf: float  # n Lambda(theta)
    log_scale: float  # n Lambda - log n
    lam: float  # Lambda(theta)
    tau: float  # sum of the tilted pmf error bounds (folding sums included)
    mass: float  # computed tilted mass
    cheap: bool = False  # the power step's result without the accurate DFT was kept (docs/accountant_tail.md §25)


@dataclass(frozen=True)
class PassResult:
    """Certified (lower, upper) of D_up for one law at one grid (module steps A-H).

    ``main`` is the engine's part of ``upper`` (without the clamp term tail_T); ``terms`` is the
    error budget shown by :attr:`AccountantReport.terms` (delta units)."""

    lower: float
    upper: float
    main: float
    tail_T: float  # E[(L - T)_+], charged to upper
    tail_B: float  # E[(-B - L)_+] or the clamp's Chernoff charge, charged to lower
    grid: Grid
    terms: dict[str, float]
    pos_mgf: PosMgf | None = None  # (laws with a finite top below T: the clamp's Chernoff charge)


#: the tilt's cap on theta x_K in nats (docs/accountant.md §3.4.1): e^600 ~ 1e260 leaves a subnormal pmf error
#: bound (>= 5e-324) at the top node a tilted weight <= 1e-63, far below double's overflow
TILT_EXP_MAX = 600.0

#: PosMgf's grid of lam x_max (fixed: one array for every pass)
_LAM_BASE = np.geomspace(1e-4, 700.0, 24)
_LAM_BASE.flags.writeable = False


@functools.lru_cache(maxsize=64)
def _groups(size: int) -> tuple[np.ndarray, np.ndarray]:
    """PosMgf's node groups for ``size`` nodes above 0: the first and last index of at most 256
    consecutive groups (they depend on the size alone: memoised, read-only)."""
    starts = np.linspace(0, size, min(256, size) + 1).astype(np.int64)
    starts = np.unique(starts[:-1])
    ends = np.append(starts[1:], size) - 1
    starts.flags.writeable = False
    ends.flags.writeable = False
    return starts, ends


@dataclass(frozen=True)
class PosMgf:
    """Upper bounds on log E[e^{lam X_+}] of one summand X = B L on a fixed grid of ``lams``
    (docs/accountant_atoms.md §5): from the pass's hat law (convex-order above the clamped law,
    and X_+ is unchanged by a lower clamp at x0 <= 0 when T >= sup L), its pmf error bounds and
    the lattice-position shift ``c`` of each analysed value."""

    lams: np.ndarray
    logm: np.ndarray

    @staticmethod
    def from_lattice(g: np.ndarray, eta: np.ndarray, k0: int, h: float, c: float) -> PosMgf | None:
        kz = -k0  # node of 0
        size = g.size - kz - 1  # the nodes above 0: x_i = (i + 1) h, i < size
        if size <= 0:
            return None
        w = g[kz + 1:] + eta[kz + 1:]
        w0 = float(np.sum(g[:kz + 1]) + np.sum(eta[:kz + 1]))
        # at most 256 consecutive groups of nodes, each group's mass at its largest node (e^{lam x}
        # is increasing: an upper bound)
        starts, ends = _groups(size)
        wg = np.add.reduceat(w, starts)
        xg = (ends + 1) * h  # (the same doubles as (arange + 1) h indexed at ends)
        lams = _LAM_BASE / (float(size) * h)
        with np.errstate(over="ignore"):
            m = w0 + np.exp(np.outer(lams, xg)) @ wg
        # sums of <= 2^21 terms (relative error < 3e-10) and exp within 2 ulp: the factor 1 + 1e-9;
        # the analysed values are within c of the true ones: e^{lam c}
        logm = np.log(m * (1.0 + 1e-9)) + lams * c
        return PosMgf(lams, logm)

    def clamp_charge(self, B: float, p_below: float, n: int) -> float:
        """Bound, in delta units, on E[(S_c)_+ - S_+] for the clamp of n summands at -B:
        P(L < -B) min_lam e^{-lam B} M(lam)^{n-1} / (e lam) (docs/accountant_atoms.md §5, Lemma 2);
        the exponent's rounding covered by a margin 1e-9 (|lam B| + (n - 1)|log M| + 2)."""
        if not (p_below > 0.0):
            return 0.0
        ex = -self.lams * B + (n - 1) * self.logm - 1.0 - np.log(self.lams)
        ex = ex + 1e-9 * (np.abs(self.lams * B) + (n - 1) * np.abs(self.logm) + 2.0)
        e = float(np.min(ex))
        return p_below * math.exp(min(e, 700.0)) * (1.0 + 1e-9) if np.isfinite(e) else math.inf


# (the far-tail body pass at the jump term's step, docs/accountant_tail.md §25: set by lattice_pass around its engine
# calls, per thread, so that engine's signature stays the one its callers and spies know)
_CHEAP_FIRST = threading.local()
#: the body pass's cheap run is tested for a certain rejection (§31.3) from this n on: below it the run was kept in
#: the cells measured, and the test's passes over the spectrum and the window cost 2-3 % of the call for nothing
CHEAP_SKIP_N = 10**7


def engine(g: np.ndarray, eta_g: np.ndarray, k0: int, h: float, n: int, rel_tol: float,
            threads: int, cheap_first: bool | None = None) -> EngineResult | Coarsen:
    """Steps D-F for one lattice pmf g (nodes (k0 + k) h): tilt, window, FFT power, sums. With ``cheap_first``
    (default: inside lattice_pass's far-tail body pass, ``lat`` given) the power step runs without its accurate DFT
    first and again with it where the round-off bound of that result exceeds CHEAP_POWER rel_tol times the window
    sum (docs/accountant_tail.md §25; a choice of speed only); otherwise with it at once, as before."""
    if cheap_first is None:
        cheap_first = getattr(_CHEAP_FIRST, "on", False)
    C = kernels()
    K = g.size - 1
    kT = k0 + K
    _, mu0, var0 = C.log_mgf(g, k0, h, 0.0)
    sig0 = math.sqrt(max(n * var0, 1e-300))
    # floor: keeps s_+ e^{-theta s} <= 1/(e theta) bounded, yet never lets e^{theta T} blow up
    theta = C.solve_theta(g, k0, h, min(0.5 / sig0, 1.0 / (max(kT, 1) * h + h)))
    # cap (docs/accountant.md §3.4.1): theta x_K <= TILT_EXP_MAX keeps e^{theta x_k} and the tilted error
    # bounds eta_k e^{theta x_k - Lambda} finite; any theta > 0 is valid (3.4), the cap is >= the floor
    theta = min(theta, TILT_EXP_MAX / (max(kT, 1) * h + h))
    gt, Lam, mu_t, var_t, tau, mass = C.tilt(g, eta_g, k0, h, theta)
    # the cheap run's absolute allowance (§34.3) in the window sum's units: E e^{n Lambda} / (n gamma) is the value
    allow = getattr(_CHEAP_FIRST, "allow", 0.0) if cheap_first else 0.0
    if allow > 0.0:
        allow = math.exp(la) if (la := math.log(allow * n) - n * Lam) < 709 else math.inf
    sig_t = math.sqrt(max(n * var_t, h * h))
    center = n * mu_t / h
    E_est = 0.4 * sig_t / (1.0 + theta * sig_t) ** 2
    # conservative start (e^-3 below the need): a second FFT is then rarely required
    log_tgt = math.log(1e-3 * rel_tol * E_est * math.e * theta) - 3.0
    lam_scale = 1.0 / (sig_t + h)
    supf = 1.0 / (math.e * theta)
    lg_u = None
    spec = q = None
    err_q = 0.0
    for _attempt in range(4):
        # Window edges certified by one Chernoff bound each: P(S >= s_hi h) <= e^{log_tgt + a_hi},
        # P(S <= s_lo h) <= e^{log_tgt + a_lo}, a the kernel's proven allowance for the rounding of
        # the exponent (docs/accountant.md §3.5.1); at least the historical margin 0.01
        b_hi, a_hi = C.chernoff_edge_bound(gt, k0, h, float(n), log_tgt, +1, lam_scale)
        b_lo, a_lo = C.chernoff_edge_bound(gt, k0, h, float(n), log_tgt, -1, lam_scale)
        s_hi = max(b_hi / h, center + 1.0)
        s_lo = min(b_lo / h, center - 1.0)
        sa = int(math.floor(s_lo)) - 1
        N = next_fast_len_real(max(int(math.ceil(s_hi)) - sa + 2, 16))
        if lg_u is not None and N <= lg_u[0]:
            N = lg_u[0]  # the previous FFT's window still covers [s_lo, s_hi]: reuse it
        if N > N_MAX:
            return Coarsen(h * N / N_MAX * 1.02)  # N grows like 1/h
        lp_hi, lp_lo = log_tgt + max(0.01, a_hi), log_tgt + max(0.01, a_lo)
        if lg_u is None or lg_u[0] != N:
            # frequencies whose power-step bound exceeds thr are recomputed accurately (cpp power), but only where
            # the power step without that recomputation leaves a round-off bound above 1 % of the accuracy
            # target (docs/accountant_tail.md §25; a choice of speed: every err_q is certified)
            thr = 1e-4 * rel_tol * E_est / (supf * math.sqrt(N))
            spectra: dict = {}
            # (the run without the accurate DFT is skipped where its rejection below is certain: §31.3, same floats)
            cheap = cheap_first and not (n >= CHEAP_SKIP_N and
                                         _cheap_rejected(gt, n, N, sa, h, theta, mass, tau, rel_tol, threads, spectra,
                                                         allow))
            q, err_q, spec = _run(gt, n, N, thr, 0.0 if cheap else DFT_WORK, threads, spectra)
            lg_u = (N, thr, spectra if cheap else None)
        E, fp_s, spec, q, err_q, fnorm, Ea = _sums(spec, q, err_q, N, n * k0, sa, h, theta)
        if lg_u[2] is not None and not (E > 0 and fnorm * err_q <= CHEAP_POWER * (rel_tol * E + allow)):
            # the same window with the accurate DFT, its forward FFT reused (the same floats as computing it afresh)
            q, err_q, spec = _run(gt, n, N, lg_u[1], DFT_WORK, threads, lg_u[2])
            lg_u = (N, lg_u[1], None)
            E, fp_s, spec, q, err_q, fnorm, Ea = _sums(spec, q, err_q, N, n * k0, sa, h, theta)
        a_val, b_val = sa * h, (sa + N) * h
        P_hi, P_lo = math.exp(lp_hi), math.exp(lp_lo)
        sup_up = b_val * math.exp(-theta * b_val) if b_val >= 1.0 / theta else supf
        sup_lo = supf if a_val > 0 else 0.0
        wrap_low = sup_up * P_hi + sup_lo * P_lo
        wrap_high = supf * (P_hi + P_lo)
        if (E > 0 and wrap_high <= 1e-3 * rel_tol * E) or not math.isfinite(wrap_high):
            break  # (a non-finite window bound makes Up infinite: useless but still safe)
        if E <= 0:
            log_tgt -= 10.0
        else:
            log_tgt += math.log(1e-4 * rel_tol) + math.log(E) - math.log(wrap_high)  # no underflow
    # tau also absorbs the folding sums (at most ceil((K+1)/N) terms per bin)
    tau += fold_rounding(K + 1, N, mass)
    fp = fp_s if fp_s is not None else fnorm * err_q + N * U * Ea
    log_tvfac = math.log(n * tau) + (n - 1) * math.log1p(mass - 1.0 + tau) if tau > 0 else -math.inf
    tv = supf * math.exp(log_tvfac) if log_tvfac < 700 else math.inf
    return EngineResult(E=E, wrap_low=wrap_low, wrap_high=wrap_high, fp=fp, tv=tv, theta=theta, N=N,
                        n_log_mgf=n * Lam, log_scale=n * Lam - math.log(n), lam=Lam, tau=tau, mass=mass,
                        cheap=lg_u[2] is not None)


def _run(gt: np.ndarray, n: int, N: int, thr: float, work: float, threads: int, spectra: dict
         ) -> tuple[np.ndarray | None, float, tuple | None]:
    """(q, err_q, None) of :func:`~.fft.convolve`, or (None, 0, the power step's (Q, err_Q, norm_Q)) where the window
    sums are taken in the frequency domain: ``limits.BODY43_SPECTRAL_SUM``, N >= ``limits.BODY43_SPECTRAL_MIN_N`` (or
    ``limits.ENG49_SPECTRAL_MIN_N`` with ``limits.ENG49_SPECTRAL_SUM``, docs/composition.md §2.34.3) and the accurate
    DFT run (``work`` > 0), docs/accountant_tail.md §65.1."""
    min_n = min(limits.BODY43_SPECTRAL_MIN_N, limits.ENG49_SPECTRAL_MIN_N) if limits.ENG49_SPECTRAL_SUM else \
        limits.BODY43_SPECTRAL_MIN_N
    if work > 0 and limits.BODY43_SPECTRAL_SUM and N >= min_n:
        return None, 0.0, spectrum([Part(gt, n)], N, thr, work, threads, spectra=spectra)
    conv = convolve([Part(gt, n)], N, thr, work, threads, spectra=spectra)
    return conv.q, conv.err_q, None


def _sums(spec: tuple | None, q: np.ndarray | None, err_q: float, N: int, nk0: int, sa: int, h: float, theta: float
          ) -> tuple[float, float | None, tuple | None, np.ndarray | None, float, float, float]:
    """(E, fp or None, spec, q, err_q, fnorm, Ea): the window sum by :func:`~.spectral_sum.window_sum` from the
    spectrum ``spec`` (its certified error as fp; docs/accountant_tail.md §65.1), else the inverse FFT of ``spec``
    (``convolve``'s floats; spec None afterwards) or the given q and the kernel's ``window_sums``."""
    ws = window_sum(spec[0], spec[1], N, nk0, sa, h, theta) if spec is not None else None
    if ws is not None:
        return ws[0], ws[1], spec, q, err_q, 0.0, 0.0
    if spec is not None:  # (it does not apply: the inverse FFT of the same spectrum)
        conv = invert(spec[0], spec[1], spec[2], N)
        q, err_q, spec = conv.q, conv.err_q, None
    E, fnorm, _, _, Ea, _ = kernels().window_sums(q, nk0, sa, h, theta, 0.0, 0.0)
    return E, None, spec, q, err_q, fnorm, Ea


def _cheap_rejected(gt: np.ndarray, n: int, N: int, sa: int, h: float, theta: float, mass: float, tau: float,
                    rel_tol: float, threads: int, spectra: dict, allow: float = 0.0) -> bool:
    """True only where the engine's run without the accurate DFT is certain to be rejected by its test
    fnorm err_q <= CHEAP_POWER (rel_tol E + allow) (docs/accountant_tail.md §31.3, §34.3): with f <= err_q
    (:func:`~.fft.cheap_err_floor`,
    which fills ``spectra`` with the forward FFT both runs use), a part of fnorm (the window's nodes up to 40 / theta,
    the weights s h e^{-theta s h} of the window sums) and E <= sup(weight) (M + sqrt(N) err_q), M = (mass + tau)^n
    (the computed circular pmf is within err_q of one with total mass M in l2 norm). A choice of speed only."""
    f = cheap_err_floor(Part(gt, n), N, threads, spectra)
    if not (f > 0 and theta > 0):
        return False
    s = np.arange(max(sa, 1), min(sa + N, int(40.0 / (theta * h)) + 2), dtype=float) * h
    fnorm = math.sqrt(float(np.sum((s * np.exp(-theta * s)) ** 2))) * (1 - 1e-6)
    supf = 1.0 / (math.e * theta) * (1 + 1e-6)
    lm = n * math.log1p(mass - 1.0 + tau)
    if lm > 700:
        return False
    rhs = CHEAP_POWER * rel_tol * supf
    # fnorm err - rhs (M + sqrt(N) err) grows with err where fnorm > rhs sqrt(N): its sign at err = f decides
    return fnorm > rhs * math.sqrt(N) and fnorm * f > rhs * (math.exp(lm) * (1 + 1e-6) + math.sqrt(N) * f) + \
        CHEAP_POWER * allow


def _shift_bound(mom_err: np.ndarray, k0: int, h: float, n: int, r: EngineResult) -> float:
    """Bound on the drop of E[(sum B_i Lt_i)_+]/(n gamma) caused by the lower law's moment errors.

    The group at node x_k has true centroid x_k + d_k with |psi_k d_k| <= e_k = mom_err[k] h. With
    (a + b)_+ >= a_+ - |b| 1{a > 0} the drop is at most E[sum_i B_i |d_{k(i)}| 1{S > 0}] / (n gamma);
    tilting by the engine's theta >= 0 (e^{-theta S} 1{S > 0} <= 1) bounds it by
    e^{(n-1) Lambda_X} sum_k e_k e^{theta x_k}, Lambda_X the exact log-MGF of the law with the true
    masses, e^{Lambda_X} <= e^{Lambda} (mass + tau) (the engine's tilted mass and error sum).
    """
    nz = np.flatnonzero(mom_err > 0)
    if nz.size == 0:
        return 0.0
    logs = np.log(mom_err[nz] * h) + r.theta * (k0 + nz) * h
    top = float(logs.max())
    lg = top + math.log(float(np.sum(np.exp(logs - top)))) + (n - 1) * (r.lam + math.log(r.mass + r.tau))
    return math.exp(lg) * (1 + 1e-9) if lg < 709 else math.inf


def check_mass(psi: np.ndarray, eta: np.ndarray) -> None:
    if not abs(float(psi.sum()) - 1.0) <= 1e-9 + float(eta.sum()):
        raise RuntimeError(f"accountant: lattice pmf lost mass (sum {psi.sum()!r}); refusing to certify")


def lower_pmf(law: Law, m: np.ndarray, w: np.ndarray, em: np.ndarray, ew: np.ndarray, plo: float, eplo: float,
               phi: float, ephi: float, kB: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Lower lattice law of step H, or None when it has no mass above node kB (value 0): then
    its positive part, hence its contribution to Lo, is 0."""
    lo_s, hi_s = law.support()
    down = math.isfinite(hi_s) and not math.isfinite(lo_s)
    psi_lo, eta_lo, mom_err = kernels().lower_lattice(m, w, em, ew, J_LO, plo, eplo, phi, ephi, down)
    check_mass(psi_lo, eta_lo)
    return (psi_lo, eta_lo, mom_err) if np.any(psi_lo[kB + 1:] > 0) else None


@dataclass(frozen=True)
class LowerLattice:
    """The centroid (convex-order lower) lattice law of step H: pmf ``g``, its error bounds ``eta``
    and the per-node moment-error bounds ``mom_err`` of the per-user law (docs/accountant.md §4.2-§4.3;
    units of h, before the Bern(gamma) mixture)."""

    g: np.ndarray
    eta: np.ndarray
    mom_err: np.ndarray


@dataclass(frozen=True)
class LatticeLaws:
    """Per-user lattice laws of G = B L clamped to [-B, T] on the nodes (k0 + k) h, k = 0..kT + kB
    (float64 arrays of kT + kB + 1 entries): the hat law ``g`` (upper in the convex and increasing
    convex orders, docs/accountant.md §3.2-§3.3) with error bounds ``eta``, and the centroid law
    ``low`` (None when not asked for, or without mass above node 0: its positive part is then 0)."""

    g: np.ndarray
    eta: np.ndarray
    k0: int
    kT: int
    kB: int
    low: LowerLattice | None


def lattice_laws(law: Law, gamma: float, h: float, T: float, B: float, lower: bool = True) -> LatticeLaws | Coarsen:
    """Steps A-C and H: the lattice laws of the clamped per-user terms at step h, or the
    :class:`Coarsen` outcome (the smallest step that fits) before any allocation when
    (kT + kB) J_LO exceeds K_MAX (docs/accountant.md §6.2, docs/accountant_tail.md §11.1)."""
    C = kernels()
    kT = int(math.ceil(T / h))
    kB = int(math.ceil(B / h))
    K = kT + kB
    if K * J_LO > K_MAX:
        return Coarsen((T + B) * J_LO / K_MAX * 1.01)
    x0 = -kB * h
    plo, eplo = law.prob_below(x0)
    # the top edge must be computed exactly as law.cells computes it (x0 + K h; the lower
    # law's finer cells give the same float, J_LO being a power of 2), so that no atom on
    # the edge is dropped or counted twice
    phi, ephi = law.prob_above(x0 + K * h)

    def mix(psi: np.ndarray, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = gamma * psi
        g[kB] += 1.0 - gamma
        return g, gamma * eta * (1 + 4 * U) + 4 * U * g

    # hat rounding (steps B-C); one set of fine cells (h / J_LO) serves both laws, the upper law
    # merges them exactly
    m, w, em, ew = law.cells(x0, h / J_LO, K * J_LO)
    psi, eta = C.assemble(m, w, em, ew, plo, eplo, phi, ephi, J_LO)
    check_mass(psi, eta)
    g, eta_g = mix(psi, eta)
    low = None
    # centroid-on-the-lattice law (step H): swept from the bounded end of the support, so the
    # unfinished last group (floored to the lattice: a first-order loss) is the far-tail clamp
    # atom, of negligible mass
    if lower and (lp := lower_pmf(law, m, w, em, ew, plo, eplo, phi, ephi, kB)) is not None:
        g_lo, eta_glo = mix(lp[0], lp[1])
        low = LowerLattice(g_lo, eta_glo, lp[2])
    return LatticeLaws(g=g, eta=eta_g, k0=-kB, kT=kT, kB=kB, low=low)


@kept_big  # the C heap kept for reuse inside at n >= 1e7 (speed only, the same floats; docs/accountant_tail.md §68)
def lattice_pass(law: Law, gamma: float, n: int, h: float, T: float, B: float, rel_tol: float, threads: int,
                 lower: bool = True, lat: LatticeLaws | None = None, allow: float = 0.0,
                 upper: bool = True) -> PassResult | Coarsen:
    """Certified (Lo, Up) for one law at one grid step (Lo = 0 when ``lower`` is False), or the
    :class:`Coarsen` outcome when the grid exceeds a size cap. ``lat``: ``lattice_laws(law, gamma, h, T, B, lower)``
    where the caller already has it (the same floats; not modified here). ``allow`` (with ``lat``): an absolute
    accuracy target, in units of D_up, added to each engine's relative one rel_tol E in the test that keeps its run
    without the accurate DFT (docs/accountant_tail.md §34.3; a choice of speed, every run certified). ``upper``
    False (with ``lower`` True): the lower value alone, the upper law's engine not run (Up = inf, ``main`` = inf,
    the grid fields the lower law's; docs/accountant_tail.md §46.1)."""
    # the far-tail treatment's body pass at its jump term's step (``lat`` given) runs its engines' power steps
    # without the accurate DFT first (docs/accountant_tail.md §25); the plain path's floats are unchanged
    cheap = lat is not None
    got = lattice_laws(law, gamma, h, T, B, lower) if lat is None else lat
    if isinstance(got, Coarsen):
        return got
    _CHEAP_FIRST.on, _CHEAP_FIRST.allow = cheap, max(allow, 0.0) * gamma
    try:
        return _pass(law, gamma, n, h, rel_tol, threads, got, upper or not lower)
    finally:
        _CHEAP_FIRST.on, _CHEAP_FIRST.allow = False, 0.0


def _pass(law: Law, gamma: float, n: int, h: float, rel_tol: float, threads: int,
          lat: LatticeLaws, upper: bool = True) -> PassResult | Coarsen:
    """The body of :func:`lattice_pass` on its lattice laws ``lat``."""
    kT, kB = lat.kT, lat.kB
    K = kT + kB
    x0 = -kB * h
    # --- upper value: hat rounding (steps B-G); not run in a lower-only pass (docs/accountant_tail.md §46.1) ---
    up_r = engine(lat.g, lat.eta, -kB, h, n, rel_tol, threads) if upper else None
    if isinstance(up_r, Coarsen):
        return up_r
    log_scale = up_main_log = math.inf
    if up_r is not None:
        log_scale = up_r.log_scale - math.log(gamma)
        up_main_log = log_scale + _logsum(up_r.E, up_r.wrap_low, up_r.fp, up_r.tv)
    # --- lower value: centroid-on-the-lattice law (step H) ---
    lo_main, overshoot, log_scale_lo = 0.0, 0.0, -math.inf
    lo_E = lo_wrap_high = lo_fp = lo_tv = 0.0
    lo_N = 0
    lo_r = None
    if lat.low is not None:
        lo_r = engine(lat.low.g, lat.low.eta, -kB, h, n, rel_tol, threads)
        if isinstance(lo_r, Coarsen):
            return lo_r
        lo_E, lo_wrap_high, lo_fp, lo_tv, lo_N = lo_r.E, lo_r.wrap_high, lo_r.fp, lo_r.tv, lo_r.N
        low_t = lo_r.E - lo_r.wrap_high - lo_r.fp - lo_r.tv
        log_scale_lo = lo_r.log_scale - math.log(gamma)
        lo_main = math.exp(log_scale_lo + math.log(low_t)) if low_t > 0 and log_scale_lo < 700 else 0.0
        overshoot = _shift_bound(lat.low.mom_err, -kB, h, n, lo_r)
    tail_T = law.tail_upper(min(kT * h, x0 + K * h))
    # lattice positions (docs/accountant.md §3.2.1): the law's cells are cut at float edges, the
    # engine's nodes sit at exact multiples of h; each user's analysed value is within c_pos of its
    # true one, which costs at most n c_pos P(S^ > -n c_pos) / (n gamma) on either value. Charged
    # when it exceeds 0.99e-9 of the value, else covered by the final factors 1 -+ 1e-9 (§3.7).
    # The law's own rounding bound (value_error, §3.2.2) is one more per-user shift of the same kind.
    c_pos = 4.0 * U * (kT * h + kB * h + h) * (1.0 + 1e-6) + law.value_error * (1.0 + 1e-6)
    # the lower clamp costs nothing when it is deep enough: one user at or below -kB h already makes
    # the clamped sum <= 0 (docs/accountant_atoms.md §1); else, for a finite top, at most its
    # Chernoff charge (§5) when that is below E[(-B - L)_+]
    top = law.support()[1]
    pos_mgf = PosMgf.from_lattice(lat.g, lat.eta, -kB, h, c_pos) \
        if n >= 2 and math.isfinite(top) and kT * h >= top else None
    if clamp_exact(law, n, kT * h, kB * h):
        tail_B = 0.0
    else:
        tail_B = law.tail_lower(kB * h)
        if pos_mgf is not None:
            p_lo, e_lo = law.prob_below(x0)
            tail_B = min(tail_B, pos_mgf.clamp_charge(kB * h, p_lo + e_lo, n))
    if up_r is None:
        # a lower-only pass: the lattice positions' charge with the lower law's own tilt (docs/accountant_tail.md §46.1;
        # without a lower law its value is 0 and the probability is bounded by 1)
        g_r = lo_r
        main = up = math.inf
    else:
        g_r = up_r
        if math.isnan(up_main_log) or math.isnan(tail_T) or math.isnan(up_r.E):
            raise RuntimeError("accountant: non-finite intermediate value; refusing to certify")
        if not up_r.mass - 1.0 + up_r.tau > -0.5:  # (the tilted mass is ~1 by construction)
            raise RuntimeError("accountant: tilted lattice law lost mass; refusing to certify")
    if g_r is None:
        grid = Grid(h=h, N=0, T=kT * h, B=kB * h)
    else:
        grid = Grid(h=h, N=g_r.N, T=kT * h, B=kB * h, theta=g_r.theta, n_log_mgf=g_r.n_log_mgf,
                    log_mgf_err=n * math.log1p(g_r.mass - 1.0 + g_r.tau))
    pos = perturbation_charge(n * c_pos, grid, n * gamma, n * c_pos)
    if up_r is not None:
        main = math.exp(up_main_log) if up_main_log < 709 else math.inf
        if pos > 0.99e-9 * main:
            main += pos
        up = (main + tail_T) * (1 + 1e-9)
    core_lo = lo_main - overshoot - tail_B
    if pos > 0.99e-9 * max(core_lo, 0.0):
        core_lo -= pos
    lo = max(core_lo * (1 - 1e-9), 0.0)
    sc = math.exp(log_scale) if log_scale < 709 else math.inf
    sc_lo = math.exp(log_scale_lo) if log_scale_lo < 709 else math.inf
    terms = dict(E_lower=lo_E * sc_lo, wrap_high=lo_wrap_high * sc_lo, lower_fft_roundoff=lo_fp * sc_lo,
                 lower_pmf_tv=lo_tv * sc_lo, tail_T=tail_T, tail_B=tail_B, lower_overshoot=overshoot, N_lower=lo_N,
                 lattice_position=pos)
    if up_r is not None:
        terms = dict(E_main=up_r.E * sc, wrap_low=up_r.wrap_low * sc, wrap_high=lo_wrap_high * sc_lo,
                     fft_roundoff=up_r.fp * sc, pmf_tv=up_r.tv * sc, tail_T=tail_T, tail_B=tail_B,
                     E_lower=lo_E * sc_lo, lower_fft_roundoff=lo_fp * sc_lo, lower_pmf_tv=lo_tv * sc_lo,
                     lower_overshoot=overshoot, N_lower=lo_N, lattice_position=pos)
    return PassResult(lower=lo, upper=up, main=main, tail_T=tail_T, tail_B=tail_B, grid=grid, terms=terms,
                      pos_mgf=pos_mgf)


def exact_clamp_depth(law: Law, n: int) -> float:
    """A depth B at which clamping the law from below changes no summand of E[S_+] (inf if none is
    known): (n - 1) times the law's finite top (a top <= 0 needs no clamp: 0), with a margin of
    1e-9 for the rounding of the product (docs/accountant_atoms.md §1)."""
    top = law.support()[1]
    if not math.isfinite(top):
        return math.inf
    return (n - 1) * max(top, 0.0) * (1.0 + 1e-9)


def clamp_exact(law: Law, n: int, T: float, B: float) -> bool:
    """True when the clamp of the law to [-B, T] leaves E[(sum of n users' B_i L_i)_+] unchanged:
    T at or above the law's finite top and B >= :func:`exact_clamp_depth` (docs/accountant_atoms.md §1)."""
    top = law.support()[1]
    return math.isfinite(top) and T >= top and B >= exact_clamp_depth(law, n)


def perturbation_charge(total: float, grid: Grid, n_gamma: float, reach: float) -> float:
    """Cost, in delta units, of perturbing the users' values by at most ``total`` in sum.

    If |S - S~| <= total, then |E[S_+] - E[S~_+]| <= total P(S~ > -reach) for any reach >= total,
    and the Chernoff bound with the lattice law's tilt theta gives P(S~ > -reach) <= exp(n Lambda~
    + log_mgf_err + theta reach), n Lambda~ the computed log-mgf and log_mgf_err = n log(mass + tau)
    the bound of its pmf errors (docs/accountant.md §5.3). The exponent's rounding and that of the
    product are covered by the allowance max(0.01, 8u (|n Lambda~| + 3 |log_mgf_err| + |theta
    reach|) + 4u), proved in docs/accountant.md §3.5.1. Returns total P / n_gamma; without a
    finite tilt (nan grid fields) the probability is bounded by 1.
    """
    lam = grid.n_log_mgf + max(grid.log_mgf_err, 0.0)
    th = grid.theta
    if not (math.isfinite(lam) and math.isfinite(th)):
        return total / n_gamma
    a = max(0.01, 8.0 * U * (abs(grid.n_log_mgf) + 3.0 * abs(grid.log_mgf_err) + abs(th * reach)) + 4.0 * U)
    return total * math.exp(min(lam + th * reach + a, 0.0)) / n_gamma


__all__ = ["EngineResult", "LatticeLaws", "LowerLattice", "PassResult", "PosMgf", "choose_B", "choose_T", "clamp_exact", "engine",
           "exact_clamp_depth",
           "lattice_laws", "lattice_pass", "lower_pmf", "perturbation_charge"]
