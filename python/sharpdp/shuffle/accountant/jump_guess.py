"""get_epsilon's first point where one big jump makes delta: the root of the single-big-jump model
(docs/accountant.md §8.11; a starting point of the search only, never a bound).

At large n or large eps the certified delta(eps) is almost all one user's far tail: the other n - 1 users shift
the sum by their mean, (n - 1) gamma E[L] < 0, and one user's L exceeds that shift (the single big jump,
docs/calibration.md §2's J). Its value J(eps) = max over the laws of E[(L - T)_+], T = -(n - 1) gamma E[L], is a
closed form of each law (:func:`.closed_forms.stop_loss_bracket`), while the Gaussian-limit guess of
docs/accountant.md §11 (the search's ``_guess_epsilon``) misses such a root by factors 6-13 (GaussianRandomizer
sigma0 = 0.5, n = 1e8: 1.25 for an answer of 7.94; the BMG of calibrate_bmg at n = 1e8, eps = 1: 0.075 for 0.9987).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scipy.special import erfcx

from sharpdp.shuffle.accountant.closed_forms import stop_loss_bracket

#: the model's root is taken only where J is at least this multiple of the Gaussian-limit template there (the jump
#: regime; elsewhere the search keeps its guess)
JUMP_DOMINATES = 10.0
#: ... and where the others' fluctuation is small against their mean shift there: sd(L) / (sqrt((n - 1) gamma)
#: |E[L]|) at most this for the law that makes J (the sd of the other users' sum over T; measured on the regime map's BMGs:
#: J within 1.1 % of phase 1's upper value at 0.045 (n = 1e6, eps = 0.5), 9 times below it at 0.23 (n = 1e9, eps = 0.01));
#: 0.05 until session 32, 0.2 since session 33: at spreads 0.05-0.16 the root still saved 1-4 passes in 12 cells
#: (docs/accountant.md §8.13.1), at 0.25 (n = 1e9, eps = 0.01) it cost three
SHIFT_SPREAD = 0.2
#: ... and where that law's mean number of other active users (n - 1) gamma is at least this (the BMG of calibrate_bmg at
#: n = 100, eps = 4: 7.5 active others, the model root cost phase 1 a pass; at n = 1000, eps = 8 (25) it saved two; at
#: n = 100, eps = 2 (15.4) one: 20 until session 32, 10 since session 33, docs/accountant.md §8.13.1)
MIN_ACTIVE = 10.0
#: phase 1 from the model's root stops after its first pass where the model's step from it (with the model's slope)
#: stays within the search's reach (docs/accountant.md §8.11.3); False: phase 1 runs on as from any first point
ONE_PASS = True
#: at n below 1e7, where phase 1 started from the model's root, the loose look at the phase-1 root (docs/accountant.md
#: §8.4) is skipped where the spread of :func:`jump_value` there is at most this: phase 1's upper value is then within
#: reach of get_delta's and the look was spent in vain (docs/accountant.md §8.13.2)
LOOK_SPREAD = 0.08
#: relative resolution (in eps) of the model's root, and the step of its slope's difference quotient
_ROOT_RTOL, _SLOPE_STEP = 1e-5, 1e-3


def jump_value(laws: list[Any], n: int) -> tuple[float, float]:
    """The single-big-jump model max over laws of E[(L - T)_+], T = -(n - 1) gamma E[L] (0 where no law has
    E[L] < 0 or a positive top; a model value, not a bound: the upper end of the stop-loss bracket), and the spread
    sd(L) / (sqrt((n - 1) gamma) |E[L]|) of the law that makes it (inf where none, or where that law's (n - 1) gamma
    is below ``MIN_ACTIVE``)."""
    m, q = 0.0, math.inf
    for gamma, law in laws:
        if not law.top_bound() > 0:
            continue
        try:
            mu = law.mean()
        except (ArithmeticError, ValueError, NotImplementedError):
            continue
        if not (math.isfinite(mu) and mu < 0.0):
            continue
        v = stop_loss_bracket(law, (n - 1) * float(gamma) * -mu)[1]
        if v > m:
            act = (n - 1) * float(gamma)
            m, q = v, (law.std() / (math.sqrt(act) * -mu) if act >= MIN_ACTIVE else math.inf)
    return m, q


def look_spared(laws: list[Any], n: int) -> bool:
    """Whether the loose look at the phase-1 root may be skipped (docs/accountant.md §8.13.2; a choice of points only):
    the spread of :func:`jump_value` at ``laws`` is at most ``LOOK_SPREAD``."""
    try:
        return jump_value(laws, n)[1] <= LOOK_SPREAD
    except (ValueError, ArithmeticError, NotImplementedError):
        return False


def template_value(eps: float, chi: float, n: int) -> float:
    """The Gaussian-limit template (phi(a) - a Phibar(a)) / (chi sqrt n), a = eps chi sqrt n (docs/calibration.md §2;
    a model)."""
    a = eps * chi * math.sqrt(n)
    mills = erfcx(a / math.sqrt(2.0)) * math.sqrt(math.pi / 2.0)  # Phibar(a) / phi(a)
    return max(math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi) * (1.0 - a * mills), 0.0) / (chi * math.sqrt(n))


def jump_guess(laws_at: Callable[[float], list[Any]], n: int, delta: float, chi: float, g0: float,
               hi: float) -> tuple[float, float] | None:
    """The root r of the model M = template + J (below ``hi``) with the model's slope -d log(-log M) / d log eps
    there (the search's convention, < 0), where J >= ``JUMP_DOMINATES`` times the template at r and the spread of
    :func:`jump_value` is at most ``SHIFT_SPREAD`` there; else None.

    Searched from the search's guess ``g0`` in factors of 2 (at most 40) to a bracket, then by regula falsi
    (Illinois) in log M against log eps to ``_ROOT_RTOL``. A starting point only (docs/accountant.md §8.11)."""
    if not (0.0 < delta < 1.0 and 0.0 < g0 < hi and chi > 0.0 and math.isfinite(chi)):
        return None

    def model(e: float) -> tuple[float, float, float]:
        j, q = jump_value(laws_at(e), n)
        return j + template_value(e, chi, n), j, q

    ld = math.log(delta)
    lo_z = hi_z = math.log(g0)
    m0 = model(g0)[0]
    if not m0 > 0.0:
        return None
    f_lo = f_hi = math.log(m0) - ld
    for _ in range(40):  # (a bracket f_lo > 0 >= f_hi in log eps)
        if f_lo > 0.0 and f_hi <= 0.0:
            break
        if f_hi > 0.0:
            lo_z, f_lo = hi_z, f_hi
            hi_z = min(hi_z + math.log(2.0), math.log(hi))
            if hi_z <= lo_z:
                return None
            m = model(math.exp(hi_z))[0]
            f_hi = math.log(m) - ld if m > 0.0 else -math.inf
        else:
            hi_z, f_hi = lo_z, f_lo
            lo_z -= math.log(2.0)
            m = model(math.exp(lo_z))[0]
            if not m > 0.0:
                return None
            f_lo = math.log(m) - ld
    else:
        return None
    if not math.isfinite(f_hi):
        return None
    side = 0
    for _ in range(60):
        if hi_z - lo_z <= _ROOT_RTOL:
            break
        z = hi_z - f_hi * (hi_z - lo_z) / (f_hi - f_lo) if f_lo != f_hi else 0.5 * (lo_z + hi_z)
        if not lo_z < z < hi_z:
            z = 0.5 * (lo_z + hi_z)
        m = model(math.exp(z))[0]
        f = math.log(m) - ld if m > 0.0 else -math.inf
        if f > 0.0:
            lo_z, f_lo = z, f
            f_hi = 0.5 * f_hi if side == -1 else f_hi
            side = -1
        else:
            hi_z, f_hi = z, (f if math.isfinite(f) else 0.5 * f_hi - 1.0)
            f_lo = 0.5 * f_lo if side == 1 else f_lo
            side = 1
    r = math.exp(hi_z)
    m_r, j_r, q_r = model(r)
    if not (0.0 < m_r < 1.0 and j_r >= JUMP_DOMINATES * (m_r - j_r) and q_r <= SHIFT_SPREAD):
        return None
    r2 = r * (1.0 + _SLOPE_STEP)
    m_2 = model(r2)[0]
    if not 0.0 < m_2 < m_r:
        return None
    k = -(math.log(-math.log(m_2)) - math.log(-math.log(m_r))) / math.log1p(_SLOPE_STEP)
    return (r, k) if math.isfinite(k) and k < 0.0 else None


def first_point(laws_at: Callable[[float], list[Any]], n: int, delta: float, g0: float,
                hi: float) -> tuple[float, float | None]:
    """The search's first point and slope (docs/accountant.md §8.11): :func:`jump_guess`'s root and slope where the
    laws are not all atom laws and one big jump makes the model's value there, else (``g0``, None) (the search's
    Gaussian-limit guess, its slope taken from that guess's model)."""
    try:
        pairs = laws_at(0.0)
        if all(law.atoms() is not None for _, law in pairs):
            return g0, None
        chi = min(math.sqrt(float(g)) / law.std() for g, law in pairs)
        out = jump_guess(laws_at, n, delta, chi, g0, hi)
    except (ValueError, ArithmeticError, NotImplementedError):  # (a law without a mean or sd: no model)
        return g0, None
    return out if out is not None else (g0, None)
