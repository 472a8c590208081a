"""Certification driver of the shuffle accountant: one law's certified value (docs/accountant.md §6-§8).

:func:`certify` is the one pipeline behind every value of :class:`sharpdp.shuffle.ShuffleAccountant`,
for both of its modes: :class:`Bracket` (lower and upper, the grid refined until the relative
target is met: ``get_delta``, ``report``) and :class:`UpperOnly` (the upper value at a given
grid: get_epsilon's search). Order of the steps (module docstring of
:mod:`sharpdp.shuffle.accountant`):

1. closed forms: L <= 0 a.s. (0), n = 1 (E[L_+] exactly), E[L_+] already below the value floor
   or the caller's maximum;
2. exact blocks for atom laws (step J, :mod:`._blocks`), the far-tail treatment for heavy
   continuous laws (:mod:`._bigjump`, docs/accountant_tail.md), else the lattice engine
   (:mod:`._lattice`, steps A-H) behind the law-shape closed forms of :func:`_law_closed_form`
   (single atom, sd underflow, sd overflow);
3. the cap D_up <= E[L_+] ((sum x_i)_+ <= sum (x_i)_+) on the upper value.

Results are :class:`~sharpdp.shuffle._results.LawBracket`; a size cap binding is the
:class:`~sharpdp.shuffle._results.Coarsen` outcome of a pass, not an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from sharpdp.shuffle import _bigjump
from sharpdp.shuffle._blocks import _block, _unblock, one_block
from sharpdp.shuffle._laws import Law, LognormalLaw, SumLaw
from sharpdp.shuffle._lattice import _J_LO, _K_MAX, _TINY, _VALUE_FLOOR, PassResult, _choose_B, _choose_T, lattice_pass
from sharpdp.shuffle._results import Coarsen, Grid, LawBracket
from sharpdp.shuffle.contract import surcharge


@dataclass(frozen=True)
class Bracket:
    """Mode of :func:`certify`: lower and upper values, refined to the relative target.

    ``negligible``: refinement stops once the upper value is below it (the caller's maximum over
    laws is already larger); ``max_rounds`` bounds the refinements, ``h0`` caps the first grid step.
    """

    negligible: float = 0.0
    max_rounds: int = 6
    h0: float | None = None

    def scaled(self, f: float) -> Bracket:
        """The same mode for a problem whose values are 1/f times these (the blocks' units)."""
        return replace(self, negligible=self.negligible * f)


@dataclass(frozen=True)
class UpperOnly:
    """Mode of :func:`certify`: the upper value alone at grid step h = ``h_ratio`` sd(L), the
    clamps set for an absolute accuracy 0.05 rel_tol ``scale`` (get_epsilon's search, §8)."""

    scale: float
    h_ratio: float

    def scaled(self, f: float) -> UpperOnly:
        """The same mode for a problem whose values are 1/f times these (the blocks' units)."""
        return replace(self, scale=self.scale * f)


Mode = Bracket | UpperOnly


def _heavy(law: Law, gamma: float, n: int) -> LawBracket:
    """Bracket for a law whose spread leaves the double range (sd = inf: e.g. a BMG with sigma0 <
    ~0.0375, where L reaches e^{1/(2 sigma0^2)}): no lattice can hold it. Upper: the cap
    D_up <= E[L_+] ((sum x_i)_+ <= sum (x_i)_+), in closed form. Lower (docs/accountant_edges.md
    section 3): Jensen over the other n - 1 users, E[S_+] >= E[(B_1 L_1 + (n - 1) gamma mu)_+] with
    mu = E[L], so D_up >= E[(L - T0)_+] / n for any T0 >= max(-(n - 1) gamma mu, 0)."""
    up = max(_trivial_cap(law), _TINY)
    lower = _jensen_lower(law, gamma, n)
    return LawBracket(min(lower, up), up, terms={"note": "sd overflow: E[L_+] (upper), Jensen (lower)"})


def _trivial_cap(law: Law) -> float:
    """Certified E[L_+] (>= D_up at every n), in closed form."""
    up = _stop_loss(law, 0.0)[1]
    return min(up, 1.0) if getattr(law, "trivial_bound", False) else up


def _stop_loss(law: Law, T: float) -> tuple[float, float]:
    """Rigorous bracket of E[(L - T)_+] for the **exact** law, whose values are within
    err = ``law.value_error`` of the stored ones (docs/accountant.md §3.2.2):
    E[(L~ - (T + err))_+] <= E[(L - T)_+] <= E[(L~ - (T - err))_+], thresholds rounded outwards.
    With err = 0 this is ``law.tail_upper_bracket(T)`` (exact laws keep their values bit for bit)."""
    err = law.value_error
    if err == 0.0:
        return law.tail_upper_bracket(T)
    return (law.tail_upper_bracket(math.nextafter(T + err, math.inf))[0],
            law.tail_upper_bracket(math.nextafter(T - err, -math.inf))[1])


def _jensen_lower(law: Law, gamma: float, n: int) -> float:
    """Jensen lower value of D_up (docs/accountant_edges.md section 3): E[(L - T0)_+] / n with
    T0 >= max(-(n - 1) gamma E[L], 0) (rounded up); 0 when E[L] is not available."""
    if getattr(law, "trivial_bound", False):
        return 0.0
    try:
        mu = law.mean()
    except (OverflowError, ZeroDivisionError, FloatingPointError):
        return 0.0
    if not math.isfinite(mu):
        return 0.0
    err = law.value_error  # the true law: E[L] >= mu - err, E[(L - T0)_+] >= E[(L~ - T0)_+] - err
    T0 = (n - 1) * gamma * (max(-mu + err, 0.0) * (1.0 + 1e-6) + 1e-6)
    if not math.isfinite(T0):
        return 0.0
    return max(_stop_loss(law, T0)[0] / n * (1.0 - 1e-12), 0.0)


def certify(law: Law, gamma: float, n: int, rel_tol: float, threads: int, mode: Mode = Bracket()) -> LawBracket:
    """Certified value of D_up for one law (module steps A-L of :mod:`sharpdp.shuffle.accountant`).

    Parameters
    ----------
    law : Law
        Law of the privacy-amplification variable L (one pair and order).
    gamma : float
        Blanket mass, in (0, 1].
    n : int
        Number of users, >= 1.
    rel_tol : float
        Relative target (upper - lower)/lower of :class:`Bracket`; sets the clamps' accuracy.
    threads : int
        Threads of scipy.fft (-1: all cores); does not change the values.
    mode : Bracket or UpperOnly

    Returns
    -------
    LawBracket
        ``lower <= D_up <= upper`` (lower may be 0 under :class:`UpperOnly`); ``upper`` is at
        most ``cap`` = E[L_+] (unless 0). Not floored at 5e-324 (the callers floor).
    """
    neg = mode.negligible if isinstance(mode, Bracket) else 0.0
    top = law.top_bound()  # the stored top plus the law's rounding bound (docs/accountant.md §3.2.2)
    if top <= 0:
        return LawBracket(0.0, 0.0, cap=0.0, terms={"note": "L <= 0 almost surely"})
    if law.support()[1] <= 0:  # only rounding separates the law from L <= 0: D_up <= E[L_+]
        cap = max(_trivial_cap(law), _TINY)
        return LawBracket(0.0, cap, cap=cap, terms={"note": "L <= value_error almost surely"})
    cap = max(_trivial_cap(law), _TINY)  # D_up <= E[L_+]
    if n == 1:
        lo, up = _stop_loss(law, 0.0)  # D_up = E[(B L)_+] / gamma = E[L_+] exactly
        return LawBracket(lo, min(max(up, _TINY), cap), cap=cap, terms={"note": "n = 1: E[L_+] in closed form"})
    if cap < max(_VALUE_FLOOR, neg):
        # the trivial cap is already below the value floor (or the maximum so far)
        return LawBracket(0.0, cap, cap=cap, terms={"note": "E[L_+] below the value floor"})
    if isinstance(mode, Bracket):
        thr = max(_VALUE_FLOOR, neg)
        small = _clamped_chernoff_cap(law, gamma, n, thr)
        if small is not None and small.upper < thr:  # below the floor (or the maximum so far): nothing to refine
            return replace(small, upper=min(small.upper, cap), cap=cap)
    blk = _block(gamma, law, n)
    if blk is None:
        # heavy-tailed continuous laws: far-tail treatment (docs/accountant_tail.md); None: plain engine
        far = _bigjump.try_certify(law, gamma, n, rel_tol, threads, negligible=neg, lower=isinstance(mode, Bracket))
        r = _certify_law_mode(law, gamma, n, rel_tol, threads, mode) if far is None else _from_far_tail(far)
    elif blk.t == n:  # one block of all users: D_up in closed form from its exact law (§5.4)
        r = one_block(blk, gamma, n)
    else:
        r = _certify_law_mode(blk.law, 1.0, n // blk.t, rel_tol, threads, mode.scaled(blk.t * gamma))
        r = _unblock(r, gamma, n, blk.t, blk.value_err, blk.trunc, top=blk.law.support()[1])
    return replace(r, upper=min(r.upper, cap), cap=cap)


_U = 2.0**-53
_CAP_NODES = 1 << 12  # lattice nodes of the cap test's hat law (a few ms)


def _clamped_chernoff_cap(law: Law, gamma: float, n: int, thr: float) -> LawBracket | None:
    """The clamped Chernoff cap (docs/accountant.md §6.3): a certified upper value of D_up from one
    coarse hat lattice law (with lower value 0), its clamp T set for a term 1e-3 ``thr``; None where it
    is not tried (the one-jump estimate is not below ``thr``, or the law is not of the far-tail module).

    With clamps T, B (multiples of a power-of-two step h), A = sum_i clamp(G_i, -B, T) and
    J = sum_i (G_i - T)_+: S <= A + J, so E[S_+] <= E[A_+] + n gamma tau(T); E[A_+] <= E[Â_+]
    (the hat law, larger in the increasing convex order) <= e^{n M(lam)} / (e lam) for every
    lam > 0 (x_+ <= e^{lam x - 1} / lam), M the log-mgf of the hat law's upper pmf. The same
    bound as the far-tail body's Chernoff value (docs/accountant_tail.md §6) plus its jump mean.
    With a rounding bound err on the law's values (docs/accountant.md §3.2.2) and the lattice positions'
    c_pos (§3.2.1) the true sum is at most S~ + n (err + c_pos), so E[A_+] is taken there.
    Only for the continuous laws of the far-tail module; a speed shortcut: None sends the law to the
    usual path."""
    from sharpdp.shuffle import _lattice as A

    if n < 2 or not isinstance(law, (LognormalLaw, SumLaw)):
        return None
    err = law.value_error  # the true values are within err of the stored ones: S <= S~ + n err
    sd, mean = law.std(), law.mean()
    lo_s, hi_s = law.support()
    if not (0.0 < sd < math.inf and math.isfinite(mean)) or mean >= 0.0:
        return None
    # screen: the one-jump value tau(|m|), m = (n - 1) gamma E[L], estimates delta (it is ~ n x Jensen's
    # lower value, docs/accountant_edges.md section 3): no test where it is not below the threshold
    if _bigjump.stop_loss(law, [-(n - 1) * gamma * mean])[1][0] >= thr:
        return None
    T = _choose_T(law, 1e-3 * thr)  # (a clamp term well below the threshold: the value stays near the truth)
    B = max(-lo_s, 0.0) if math.isfinite(lo_s) else _choose_B(law, 0.01 * max(-mean, sd))
    if not (math.isfinite(T) and math.isfinite(B)) or T <= 0.0:
        return None
    h = 2.0 ** math.ceil(math.log2(max(sd / 4.0, (T + B) / _CAP_NODES, 1e-300)))
    T, B = math.ceil(T / h) * h, max(math.ceil(B / h), 1) * h  # exact multiples: every node k h is exact
    try:
        lat = _bigjump.lattice_laws(law, gamma, h, T, B, lower=False)
    except A._Coarsen:
        return None
    ch = _bigjump._Chernoff(lat["g"], lat["eta"], lat["k0"], h, n)
    # per-user shift: the value error and the lattice positions' c_pos (docs/accountant.md §3.2.1; 0 here, the
    # nodes being exact multiples of a power of two, but charged anyway)
    shift = math.nextafter(n * (err + 4.0 * _U * (T + B + h)) * (1 + 1e-12), math.inf)
    body = _bigjump._exp(ch.log_excess(-shift)) / (n * gamma) * (1 + 1e-9)
    jump = float(_bigjump.stop_loss(law, [T])[1][0]) if math.isinf(hi_s) or hi_s > T else 0.0
    up = (body + jump) * (1 + 1e-9)
    return LawBracket(0.0, max(up, _TINY), grid=Grid(h=h, N=0, T=T, B=B),
                      terms={"note": "clamped Chernoff cap", "chernoff_body": body,
                             "tail_T": jump})


def _from_far_tail(r: dict[str, Any]) -> LawBracket:
    """The far-tail module's result dict (:func:`sharpdp.shuffle._bigjump.try_certify`) as a LawBracket."""
    return LawBracket(r["lower"], r["upper"], grid=Grid(h=r["h"], N=r["N"], T=r["T"], B=r["B"]), terms=r["terms"])


def _law_closed_form(law: Law, gamma: float, n: int) -> LawBracket | None:
    """Closed forms for the law's shape (any n), or None when the lattice engine is needed."""
    lo_s, hi_s = law.support()
    if law.top_bound() <= 0:
        return LawBracket(0.0, 0.0, terms={"note": "L <= 0 almost surely"})
    if lo_s == hi_s:
        c = lo_s  # a single atom: D_up = E[(c M)_+]/(n gamma) = c_+ (= E[L_+]: with a rounding bound,
        # its bracket over the exact atom)
        lo, up = (max(c, 0.0), max(c, 0.0)) if law.value_error == 0.0 else _stop_loss(law, 0.0)
        return LawBracket(lo, up * (1 + 1e-12), terms={"note": "degenerate law"})
    sd = law.std()
    if not sd > 0.0:  # spread lost to cancellation against a huge |mean|: the trivial cap E[L_+]
        return LawBracket(0.0, max(_trivial_cap(law), _TINY), terms={"note": "sd underflow: E[L_+]"})
    if not math.isfinite(sd):
        return _heavy(law, gamma, n)
    return None


def _certify_law_mode(law: Law, gamma: float, n: int, rel_tol: float, threads: int, mode: Mode) -> LawBracket:
    """The lattice engine's value for one law (no blocks, no far tail, no cap): the law-shape
    closed forms, else a refined bracket (:class:`Bracket`) or one upper pass (:class:`UpperOnly`)."""
    closed = _law_closed_form(law, gamma, n)
    if closed is not None:
        return closed
    if isinstance(mode, UpperOnly):
        tgt = 0.05 * rel_tol * mode.scale
        sd = law.std()
        res = _pass_fit(law, gamma, n, sd * mode.h_ratio, _choose_T(law, tgt), _choose_B(law, tgt), rel_tol,
                        threads, False)
        return LawBracket(res.lower, res.upper, grid=res.grid, h_ratio=res.grid.h / sd, terms=res.terms)
    return _refine(law, gamma, n, rel_tol, threads, mode)


def _certify_law(law: Law, gamma: float, n: int, rel_tol: float, threads: int, max_rounds: int = 6,
                 h0: float | None = None, negligible: float = 0.0) -> LawBracket:
    """The lattice engine's refined bracket for one law (no blocks, no far tail, no cap)."""
    return _certify_law_mode(law, gamma, n, rel_tol, threads, Bracket(negligible, max_rounds, h0))


def _refine(law: Law, gamma: float, n: int, rel_tol: float, threads: int, mode: Bracket) -> LawBracket:
    """Refinement of the grid and clamps (module step I) until the bracket meets rel_tol; stops
    refining once upper <= mode.negligible (the caller's maximum over laws is already certified
    to be larger by a wide margin)."""
    sd = law.std()
    # a coarse first round (cheap) estimates the value; the clamp and h are then set from it
    h = sd / 4.0 if mode.h0 is None else min(mode.h0, sd / 4.0)
    # moderate first clamp, tightened below once the value is known; E[L_+] >= D_up bounds the value's
    # scale (a target near it would put T at 0 and make the first round's value the clamp term alone)
    tgt = 1e-4 * rel_tol * sd
    cap0 = law.tail_upper(0.0)
    if tgt > 1e-2 * cap0:
        tgt = 1e-4 * rel_tol * cap0
    T, B = _choose_T(law, tgt), _choose_B(law, tgt)
    best: PassResult | None = None
    best_lower = 0.0
    widened = False
    for _rnd in range(mode.max_rounds + 1):
        Tmax = 0.5 * _K_MAX * h / _J_LO
        T, B = min(T, Tmax), min(B, Tmax)
        res = lattice_pass(law, gamma, n, h, T, B, rel_tol, threads)
        if isinstance(res, Coarsen):
            if best is None:
                h = max(2.0 * h, res.h_fit)
                continue
            if res.h_fit >= 0.9 * best.grid.h:
                if widened or best.tail_T + best.tail_B <= 0.5 * best.upper:
                    break  # the size caps stop the refinement: keep the certified values so far
                # the best value is mostly its clamp terms and the wider clamp asked for does not fit at the
                # finer step: once, the wider clamp at the coarser step that fits (docs/accountant.md §6.1)
                widened = True
            h = res.h_fit  # the finest grid that fits
            continue
        # every pass is certified: the best upper value, and the largest lower value of any pass
        best_lower = res.lower if best is None else max(best_lower, res.lower)
        if best is None or res.upper < best.upper:
            best = res
        est = max(res.lower, 0.5 * res.main, _VALUE_FLOOR)
        tgt = 0.05 * rel_tol * est
        redo = False
        if res.tail_T > tgt and T < Tmax:
            T, redo = _choose_T(law, tgt), True
        if res.tail_B > tgt and B < Tmax:
            B, redo = _choose_B(law, tgt), True
        if best_lower > 0 and best.upper - best_lower <= rel_tol * best_lower:
            break
        if best.upper < max(_VALUE_FLOOR, mode.negligible):
            break  # far below any delta of interest: keep the certified value, skip refinement
        lo, up = res.lower, res.upper
        if lo > 0 and up - lo <= 0.8 * rel_tol * lo:
            if not redo:
                break
            # grid fine enough; only the clamp changes
        else:
            # both discretisation biases are second order in h (the clamp terms excluded)
            disc = up - res.tail_T - lo - res.tail_B
            ratio = disc / (0.7 * rel_tol * lo) if lo > 0 else 16.0
            h /= min(max(1.05 * math.sqrt(ratio), 1.3), 4.0)
    if best is None:
        raise RuntimeError("accountant: no grid fits the size limits")
    return LawBracket(best_lower, max(best.upper, _TINY), grid=best.grid, h_ratio=best.grid.h / sd, terms=best.terms)


def _pass_fit(law: Law, gamma: float, n: int, h: float, T: float, B: float, rel_tol: float, threads: int,
              lower: bool) -> PassResult:
    """lattice_pass at step h, or at the finest step that fits the size caps."""
    for _ in range(60):
        Tmax = 0.5 * _K_MAX * h / _J_LO
        out = lattice_pass(law, gamma, n, h, min(T, Tmax), min(B, Tmax), rel_tol, threads, lower)
        if not isinstance(out, Coarsen):
            return out
        h = max(2.0 * h, out.h_fit) if out.h_fit <= h else out.h_fit
    raise RuntimeError("accountant: no grid fits the size limits")


def _surcharge(randomizer: Any, epsilon: float, adjacency: str) -> float:
    """The randomizer's optional additive term of the upper value (step K; 0 without the capability)."""
    return surcharge(randomizer, epsilon, adjacency)


def _plus(up: float, s: float) -> float:
    """up + s rounded up (s >= 0)."""
    return up if s == 0.0 else math.nextafter(up + s, math.inf)


def _upper_value(law: Law, gamma: float, n: int, rel_tol: float, threads: int, scale: float, h_ratio: float) -> float:
    """Certified upper value only (:func:`certify` in :class:`UpperOnly` mode), floored at 5e-324."""
    return max(certify(law, gamma, n, rel_tol, threads, UpperOnly(scale, h_ratio)).upper, _TINY)
