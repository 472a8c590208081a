"""Certification driver of the shuffle accountant: one law's certified bracket (docs/accountant.md §6-§8).

Dispatches a law to the closed forms (edge cases), the exact blocks (:mod:`._blocks`, atom
laws), the far-tail treatment (:mod:`._bigjump`) or the lattice engine (:mod:`._lattice`), and
refines the grid until the bracket meets the relative target (module step I of
:mod:`sharpdp.shuffle.accountant`).
"""

from __future__ import annotations

import math

from sharpdp.shuffle import _bigjump
from sharpdp.shuffle._blocks import _block, _unblock
from sharpdp.shuffle._laws import Law
from sharpdp.shuffle.contract import surcharge
from sharpdp.shuffle._lattice import (
    _J_LO,
    _K_MAX,
    _TINY,
    _VALUE_FLOOR,
    _Coarsen,
    _choose_B,
    _choose_T,
    _one_pass,
)


def _heavy(law: Law, gamma: float, n: int) -> dict:
    """Bracket for a law whose spread leaves the double range (sd = inf: e.g. a BMG with sigma0 <
    ~0.0375, where L reaches e^{1/(2 sigma0^2)}): no lattice can hold it. Upper: the cap
    D_up <= E[L_+] ((sum x_i)_+ <= sum (x_i)_+), in closed form. Lower (docs/accountant_edges.md
    section 3): Jensen over the other n - 1 users, E[S_+] >= E[(B_1 L_1 + (n - 1) gamma mu)_+] with
    mu = E[L], so D_up >= E[(L - T0)_+] / n for any T0 >= max(-(n - 1) gamma mu, 0)."""
    up = max(_trivial_cap(law), _TINY)
    lower = _jensen_lower(law, gamma, n)
    return dict(lower=min(lower, up), upper=up, terms={"note": "sd overflow: E[L_+] (upper), Jensen (lower)"})


def _trivial_cap(law: Law) -> float:
    """Certified E[L_+] (>= D_up at every n), in closed form."""
    up = law.tail_upper_bracket(0.0)[1]
    return min(up, 1.0) if getattr(law, "trivial_bound", False) else up


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
    T0 = (n - 1) * gamma * (max(-mu, 0.0) * (1.0 + 1e-6) + 1e-6)
    if not math.isfinite(T0):
        return 0.0
    return max(law.tail_upper_bracket(T0)[0] / n * (1.0 - 1e-12), 0.0)


def _certify_law(law: Law, gamma: float, n: int, rel_tol: float, workers, max_rounds: int = 6,
                 h0: float | None = None, negligible: float = 0.0) -> dict:
    """Certified bracket for one law; stops refining once upper <= negligible (the caller's
    maximum over laws is already certified to be larger by a wide margin)."""
    lo_s, hi_s = law.support()
    if hi_s <= 0:
        return dict(lower=0.0, upper=0.0, terms={"note": "L <= 0 almost surely"})
    sd = law.std()
    if lo_s == hi_s:
        c = lo_s  # a single atom: D_up = E[(c M)_+]/(n gamma) = c_+
        return dict(lower=max(c, 0.0), upper=max(c, 0.0) * (1 + 1e-12), terms={"note": "degenerate law"})
    if not sd > 0.0:  # spread lost to cancellation against a huge |mean|: the trivial cap E[L_+]
        return dict(lower=0.0, upper=max(law.tail_upper(0.0), _TINY), terms={"note": "sd underflow: E[L_+]"})
    if not math.isfinite(sd):
        return _heavy(law, gamma, n)
    # a coarse first round (cheap) estimates the value; the clamp and h are then set from it
    h = sd / 4.0 if h0 is None else min(h0, sd / 4.0)
    tgt = 1e-4 * rel_tol * sd  # moderate first clamp; tightened below once the value is known
    T, B = _choose_T(law, tgt), _choose_B(law, tgt)
    best = None
    for rnd in range(max_rounds + 1):
        Tmax = 0.5 * _K_MAX * h / _J_LO
        T, B = min(T, Tmax), min(B, Tmax)
        try:
            res = _one_pass(law, gamma, n, h, T, B, rel_tol, workers)
        except _Coarsen as exc:
            h_fit = exc.args[0]
            if best is None:
                h = max(2.0 * h, h_fit)
                continue
            if h_fit >= 0.9 * best["h"]:
                break  # the size caps stop the refinement: keep the certified values so far
            h = h_fit  # the finest grid that fits
            continue
        if best is None:
            best = res
        else:
            lower = max(best["lower"], res["lower"])
            if res["upper"] < best["upper"]:
                best = res
            best = dict(best, lower=lower)
        est = max(res["lower"], 0.5 * res["main"], _VALUE_FLOOR)
        tgt = 0.05 * rel_tol * est
        redo = False
        if res["terms"]["tail_T"] > tgt and T < Tmax:
            T, redo = _choose_T(law, tgt), True
        if res["terms"]["tail_B"] > tgt and B < Tmax:
            B, redo = _choose_B(law, tgt), True
        if best["lower"] > 0 and best["upper"] - best["lower"] <= rel_tol * best["lower"]:
            break
        if best["upper"] < max(_VALUE_FLOOR, negligible):
            break  # far below any delta of interest: keep the certified value, skip refinement
        lo, up = res["lower"], res["upper"]
        if lo > 0 and up - lo <= 0.8 * rel_tol * lo:
            if not redo:
                break
            # grid fine enough; only the clamp changes
        else:
            # both discretisation biases are second order in h (the clamp terms excluded)
            disc = up - res["terms"]["tail_T"] - lo - res["terms"]["tail_B"]
            ratio = disc / (0.7 * rel_tol * lo) if lo > 0 else 16.0
            h /= min(max(1.05 * math.sqrt(ratio), 1.3), 4.0)
    if best is None:
        raise RuntimeError("accountant: no grid fits the size limits")
    best["upper"] = max(best["upper"], _TINY)
    best["h_ratio"] = best["h"] / sd
    return best


def _certify(law: Law, gamma: float, n: int, rel_tol: float, workers, negligible: float = 0.0) -> dict:
    """_certify_law, on blocks of t users when the law has few atoms (step J). The upper value
    is also capped by E[L_+] ((sum x_i)_+ <= sum (x_i)_+ gives D_up <= E[L_+])."""
    if n == 1 and law.support()[1] > 0:
        lo, up = law.tail_upper_bracket(0.0)  # D_up = E[(B L)_+] / gamma = E[L_+] exactly
        return dict(lower=lo, upper=max(up, _TINY), terms={"note": "n = 1: E[L_+] in closed form"})
    if law.support()[1] > 0 and (cap := law.tail_upper(0.0)) < max(_VALUE_FLOOR, negligible):
        # the trivial cap D_up <= E[L_+] is already below the value floor (or the maximum so far)
        return dict(lower=0.0, upper=max(cap, _TINY), terms={"note": "E[L_+] below the value floor"})
    blk = _block(gamma, law, n) if law.support()[1] > 0 else None
    if blk is None:
        # heavy-tailed continuous laws: far-tail treatment (docs/accountant_tail.md); None: plain engine
        r = _bigjump.try_certify(law, gamma, n, rel_tol, workers, negligible=negligible)
        if r is None:
            r = _certify_law(law, gamma, n, rel_tol, workers, negligible=negligible)
    else:
        bl, t, ev, trunc = blk
        r = _certify_law(bl, 1.0, n // t, rel_tol, workers, negligible=negligible * t * gamma)
        r = _unblock(dict(r, top=bl.support()[1]), gamma, n, t, ev, trunc)
    cap = max(law.tail_upper(0.0), _TINY) if law.support()[1] > 0 else 0.0
    if cap < r["upper"]:
        r = dict(r, upper=cap)
    return r


def _pass_fit(law: Law, gamma: float, n: int, h: float, T: float, B: float, rel_tol: float, workers,
              lower: bool) -> dict:
    """_one_pass at step h, or at the finest step that fits the size caps."""
    for _ in range(60):
        Tmax = 0.5 * _K_MAX * h / _J_LO
        try:
            return _one_pass(law, gamma, n, h, min(T, Tmax), min(B, Tmax), rel_tol, workers, lower)
        except _Coarsen as exc:
            h = max(2.0 * h, exc.args[0]) if exc.args[0] <= h else exc.args[0]
    raise RuntimeError("accountant: no grid fits the size limits")


def _certify_upper(law: Law, gamma: float, n: int, rel_tol: float, workers, scale: float, h_ratio: float) -> dict:
    """Certified upper value of one law at h = h_ratio sd(L), without the lower law (get_epsilon's
    search); the clamps are set for an absolute accuracy 0.05 rel_tol ``scale``."""
    if law.support()[1] <= 0:
        return dict(upper=0.0)
    sd = law.std()
    lo_s, hi_s = law.support()
    if lo_s == hi_s:
        return dict(upper=max(lo_s, 0.0) * (1 + 1e-12))
    if not sd > 0.0:
        return dict(upper=max(law.tail_upper(0.0), _TINY))
    if not math.isfinite(sd):
        return _heavy(law, gamma, n)
    tgt = 0.05 * rel_tol * scale
    return _pass_fit(law, gamma, n, sd * h_ratio, _choose_T(law, tgt), _choose_B(law, tgt), rel_tol, workers, False)


def _surcharge(randomizer, epsilon: float, adjacency: str) -> float:
    """The randomizer's optional additive term of the upper value (step K; 0 without the capability)."""
    return surcharge(randomizer, epsilon, adjacency)


def _plus(up: float, s: float) -> float:
    """up + s rounded up (s >= 0)."""
    return up if s == 0.0 else math.nextafter(up + s, math.inf)


def _upper_value(law: Law, gamma: float, n: int, rel_tol: float, workers, scale: float, h_ratio: float) -> float:
    """Certified upper value only (blocks for atom laws, step J; capped by E[L_+], exact at n = 1)."""
    if law.support()[1] <= 0:
        return _TINY
    cap = law.tail_upper(0.0)
    if n == 1:
        return max(cap, _TINY)
    blk = _block(gamma, law, n)
    if blk is None:
        r = _bigjump.try_certify(law, gamma, n, rel_tol, workers, lower=False)  # docs/accountant_tail.md
        if r is None:
            r = _certify_upper(law, gamma, n, rel_tol, workers, scale, h_ratio)
        return max(min(r["upper"], cap), _TINY)
    bl, t, ev, trunc = blk
    r = _certify_upper(bl, 1.0, n // t, rel_tol, workers, scale * t * gamma, h_ratio)
    r = _unblock(dict(r, lower=0.0, top=bl.support()[1]), gamma, n, t, ev, trunc)
    return max(min(r["upper"], cap), _TINY)
