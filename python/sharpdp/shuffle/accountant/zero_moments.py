"""get_epsilon's answer 0 certified by the second moment of the sum (docs/accountant.md §8.21).

At eps = 0, D_up(0) = E[S_+] / (n gamma) (docs/accountant.md §1.5) with S = B_1 L_1 + ... + B_n L_n, and
E[S_+] = (E|S| + E S) / 2 <= (sqrt(E S^2) + E S) / 2, E S = n gamma mu, E S^2 = n gamma m2 + n (n - 1) gamma^2 mu^2
(mu = E L, m2 = E L^2), so

    D_up(0) <= (sqrt(m2 / (n gamma) + mu^2) + mu) / 2.

mu and m2 come in closed form (atoms; the lognormal parts' partial moments ``interval_prob`` brackets), rounded
outwards. :func:`zero_upper` is that value's maximum over the laws plus the surcharge and the sampler's charge at 0:
a certified upper value of get_delta's quantity at eps = 0 (None where a law has no such closed form)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from sharpdp.shuffle.accountant.closed_forms import plus
from sharpdp.shuffle.contract import surcharge
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.lognormal import interval_prob

_U = float(np.finfo(float).eps)  # 2u: one rounding is within _U / 2 relative
_REL = 1e-12  # relative charge of each closed form below (a handful of operations, each within a few ulp)
#: the attributes of a lognormal part in its oriented form (``laws.lognormal.LognormalLaw``: a, G, S, r, weight, (v_lo,
#: v_hi)); the engine reads laws through their interface and attributes, never their class (tests/test_architecture.py)
LOGNORMAL_PARAMS = ("a", "_G", "_S", "r", "weight", "_vlo", "_vhi")


def _atom_moments(law: Any) -> tuple[float, float, float, float]:
    """(mass, mu_lo, mu_hi, m2_up) of an atom law's (sub-)measure: sums of K terms, each sum within (K + 2) u of the
    sum of |terms| (fsum is exact to 1/2 ulp; the products within u each)."""
    v, p = law.atoms()
    v, p = np.asarray(v, float), np.asarray(p, float)
    t1, t2 = p * v, p * v * v
    e1 = (len(v) + 4) * _U * float(np.sum(np.abs(t1))) + 1e-300
    return math.fsum(p.tolist()), math.fsum(t1.tolist()) - e1, math.fsum(t1.tolist()) + e1, \
        math.fsum(t2.tolist()) * (1.0 + (len(v) + 4) * _U) + 1e-300


def _p(lo: float, hi: float) -> tuple[float, float]:
    """[lower, upper] of P(lo < V < hi), V ~ N(0, 1) (``interval_prob`` and its error bound)."""
    p, e = interval_prob(lo, hi)
    return max(float(p) - float(e), 0.0), min(float(p) + float(e), 1.0)


def _lognormal_moments(law: Any) -> tuple[float, float, float, float] | None:
    """(mass, mu_lo, mu_hi, m2_up) of L = a + G e^{r V - r^2/2} - S e^{-r V - r^2/2} on v_lo < V < v_hi, weight w:
    E[e^{t V - t^2/2}; I] = P(I - t), so E[L - a] = w (G P(I - r) - S P(I + r)) and
    E[(L - a)^2] = w (G^2 e^{r^2} P(I - 2r) + S^2 e^{r^2} P(I + 2r) - 2 G S e^{-r^2} P(I))."""
    a, G, S, r, w = float(law.a), float(law._G), float(law._S), float(law.r), float(law.weight)
    lo, hi = float(law._vlo), float(law._vhi)
    if not (r * r < 700.0 and G >= 0.0 and S >= 0.0 and w > 0.0):
        return None
    p0, pg1, ps1 = _p(lo, hi), _p(lo - r, hi - r), _p(lo + r, hi + r)
    pg2, ps2 = _p(lo - 2 * r, hi - 2 * r), _p(lo + 2 * r, hi + 2 * r)
    e = math.exp(r * r)
    d_lo = w * (G * pg1[0] * (1 - _REL) - S * ps1[1] * (1 + _REL)) - _REL * w * (G + S)
    d_hi = w * (G * pg1[1] * (1 + _REL) - S * ps1[0] * (1 - _REL)) + _REL * w * (G + S)
    c2 = w * (G * G * e * pg2[1] + S * S * e * ps2[1]) * (1 + _REL) - 2 * w * G * S * p0[0] / e * (1 - _REL)
    c2 = max(c2, 0.0) * (1 + _REL) + 1e-300
    # E[L^2] = E[(L - a)^2] + 2 a E[L - a] + a^2 mass
    mass_hi = w * p0[1] * (1 + _REL) * (1 + _REL)
    m2 = c2 + 2 * a * (d_hi if a > 0 else d_lo) + a * a * mass_hi
    m2 = max(m2, 0.0) + _REL * (c2 + 2 * abs(a) * max(abs(d_lo), abs(d_hi)) + a * a * mass_hi) + 1e-300
    m_lo, m_hi = w * p0[0] * (1 - _REL), w * p0[1] * (1 + _REL)  # (the mass)
    am_lo, am_hi = (a * m_lo, a * m_hi) if a >= 0 else (a * m_hi, a * m_lo)
    mu_lo = (am_lo + d_lo) - _REL * (abs(am_lo) + abs(d_lo)) - 1e-300
    mu_hi = (am_hi + d_hi) + _REL * (abs(am_hi) + abs(d_hi)) + 1e-300
    return (m_lo + m_hi) / 2, mu_lo, mu_hi, m2


def _summed(law: Any, atom: Callable[[Any], Any], lognormal: Callable[[Any], Any]) -> tuple[float, ...] | None:
    """The part-wise closed forms summed over the law's parts (a sum law: each user's value from one part,
    ``laws.sum.SumLaw``; else the law itself), or None where a part has none."""
    tot: list[float] | None = None
    for p in getattr(law, "parts", None) or [law]:
        got = atom(p) if p.atoms() is not None else lognormal(p) if all(hasattr(p, k) for k in LOGNORMAL_PARAMS) else None
        if got is None:
            return None
        tot = list(got) if tot is None else [x + y for x, y in zip(tot, got)]
    return None if tot is None else tuple(tot)


def law_moments_up(law: Any) -> tuple[float, float, float] | None:
    """(mu_lo, mu_hi, m2_up): a bracket of E L and an upper value of E L^2 for the exact law (its stored values moved by
    at most ``value_error``: mu by that much, sqrt(m2) by that much, Minkowski), or None (no closed form here)."""
    parts = getattr(law, "parts", None) or [law]
    tot = _summed(law, _atom_moments, _lognormal_moments)
    if tot is None:
        return None
    mass, mu_lo, mu_hi, m2 = tot
    if not abs(mass - 1.0) <= 1e-9 or not all(math.isfinite(x) for x in (mu_lo, mu_hi, m2)):
        return None  # (a probability law only)
    ve = float(getattr(law, "value_error", 0.0))
    k = len(parts) + 2
    mu_lo, mu_hi = mu_lo * (1 + k * _U) - ve - 1e-300 if mu_lo < 0 else mu_lo * (1 - k * _U) - ve - 1e-300, \
        mu_hi * (1 + k * _U) + ve + 1e-300 if mu_hi > 0 else mu_hi * (1 - k * _U) + ve + 1e-300
    root = math.sqrt(m2 * (1 + k * _U)) * (1 + _U) + ve
    return mu_lo, mu_hi, root * root * (1 + 2 * _U)


def moment_upper(law: Any, gamma: float, n: int) -> float | None:
    """A certified upper value of D_up(0) = E[S_+] / (n gamma) for one law at eps = 0 (module docstring), or None."""
    got = law_moments_up(law)
    if got is None or not gamma > 0.0:
        return None
    mu_lo, mu_hi, m2 = got
    mu_sq = max(mu_lo * mu_lo, mu_hi * mu_hi) * (1 + 2 * _U)
    s = math.sqrt((m2 / (n * gamma) * (1 + 2 * _U) + mu_sq) * (1 + 2 * _U)) * (1 + _U)
    return max((s + mu_hi) / 2 * (1 + 4 * _U), 0.0)


def _atom_higher(law: Any) -> tuple[float, float]:
    """(m2_lo, m4_up): E[L^2; part] from below and E[L^4; part] from above for an atom (sub-)law (fsum'd sums of K
    non-negative terms, charged (K + 4) u relative)."""
    v, p = (np.asarray(x, float) for x in law.atoms())
    k = (len(v) + 4) * _U
    return math.fsum((p * v * v).tolist()) * (1 - k), math.fsum((p * v ** 4).tolist()) * (1 + k) + 1e-300


def _lognormal_higher(law: Any) -> tuple[float, float] | None:
    """(m2_lo, m4_up) of a lognormal part (the oriented form of :func:`_lognormal_moments`): E[(L - a)^2; I] from below
    (its cross term at its upper end), E[(L - a)^4; I] <= w (G^4 e^{6 r^2} P(I - 4r) + 6 G^2 S^2 e^{-2 r^2} P(I)
    + S^4 e^{6 r^2} P(I + 4r)) (the odd terms, <= 0, left out) and E[L^4; I]^(1/4) <= E[(L - a)^4; I]^(1/4) +
    |a| mass^(1/4) (Minkowski on the part's measure)."""
    a, G, S, r, w = float(law.a), float(law._G), float(law._S), float(law.r), float(law.weight)
    lo, hi = float(law._vlo), float(law._vhi)
    if not (6.0 * r * r < 700.0 and G >= 0.0 and S >= 0.0 and w > 0.0):
        return None
    p0, pg1, ps1 = _p(lo, hi), _p(lo - r, hi - r), _p(lo + r, hi + r)
    pg2, ps2, pg4, ps4 = _p(lo - 2 * r, hi - 2 * r), _p(lo + 2 * r, hi + 2 * r), _p(lo - 4 * r, hi - 4 * r), \
        _p(lo + 4 * r, hi + 4 * r)
    e, e6 = math.exp(r * r), math.exp(6 * r * r)
    d_lo = w * (G * pg1[0] * (1 - _REL) - S * ps1[1] * (1 + _REL)) - _REL * w * (G + S)
    d_hi = w * (G * pg1[1] * (1 + _REL) - S * ps1[0] * (1 - _REL)) + _REL * w * (G + S)
    c2 = w * (G * G * e * pg2[0] + S * S * e * ps2[0]) * (1 - _REL) - 2 * w * G * S * p0[1] / e * (1 + _REL)
    c2 = max(c2 * (1 - _REL), 0.0)
    m_lo, m_hi = w * p0[0] * (1 - _REL), w * p0[1] * (1 + _REL)
    t = (c2, 2 * a * (d_lo if a > 0 else d_hi), a * a * m_lo)
    m2 = max(sum(t) - _REL * sum(abs(x) for x in t), 0.0)
    c4 = w * (G ** 4 * e6 * pg4[1] + 6 * G * G * S * S * p0[1] / (e * e) + S ** 4 * e6 * ps4[1]) * (1 + _REL)
    m4 = ((c4 ** 0.25 + abs(a) * m_hi ** 0.25) * (1 + _REL)) ** 4 * (1 + _REL) + 1e-300
    return m2, m4


def law_higher(law: Any) -> tuple[float, float] | None:
    """(m2_lo, m4_up): E L^2 from below and E L^4 from above for the exact law (``value_error`` charged by
    Minkowski), or None (no closed form here)."""
    tot = _summed(law, _atom_higher, _lognormal_higher)
    if tot is None:
        return None
    m2, m4 = tot
    if not (math.isfinite(m2) and math.isfinite(m4)):
        return None
    ve = float(getattr(law, "value_error", 0.0))
    k = 8 * _U
    return max(math.sqrt(m2 * (1 - k)) * (1 - k) - ve, 0.0) ** 2 * (1 - k), \
        ((m4 * (1 + k)) ** 0.25 * (1 + k) + ve) ** 4 * (1 + k)


def moment_lower(law: Any, gamma: float, n: int) -> float:
    """A certified lower value of D_up(0) for one law (docs/accountant.md §8.21): E|S| >= (E S^2)^(3/2) / (E S^4)^(1/2)
    (Hoelder), E[S_+] = (E|S| + E S) / 2; 0.0 where no closed form is at hand."""
    one, two = law_moments_up(law), law_higher(law)
    if one is None or two is None or not gamma > 0.0:
        return 0.0
    mu_lo, mu_hi, m2_up = one
    m2_lo, m4 = two
    ng, mu = n * gamma, max(abs(mu_lo), abs(mu_hi))
    s2 = (ng * m2_lo * (1 - 4 * _U) - ng * gamma * mu * mu * (1 + 4 * _U)) * (1 - 4 * _U)  # <= n Var X <= E S^2
    a1, a2 = gamma * mu, gamma * m2_up
    a3, a4 = gamma * math.sqrt(m2_up * m4), gamma * m4
    s4 = (n * a4 + 4 * n * n * a3 * a1 + 3 * n * n * a2 * a2 + 6 * n ** 3 * a2 * a1 * a1 + n ** 4 * a1 ** 4) * (1 + 16 * _U)
    if not (s2 > 0.0 and math.isfinite(s4) and s4 > 0.0):
        return 0.0
    e_abs = s2 * math.sqrt(s2) / math.sqrt(s4) * (1 - 8 * _U)
    return max((e_abs + ng * mu_lo * (1 + 4 * _U)) / (2 * ng) * (1 - 8 * _U), 0.0)


def zero_lower(acc: Any) -> float:
    """A certified lower value of D_up(0) (max over the laws of :func:`moment_lower`; <= get_delta(0)), 0.0 where none."""
    try:
        return max((moment_lower(law, float(g), int(acc.n)) for g, law in laws_for(acc.randomizer, 0.0, acc.adjacency)),
                   default=0.0)
    except (NotImplementedError, ValueError, ArithmeticError):
        return 0.0


def zero_upper(acc: Any) -> float | None:
    """A certified upper value of get_delta's quantity at eps = 0: the maximum over the laws at 0 of
    :func:`moment_upper` plus the surcharge and the sampler's charge at 0; None where a law has no closed form."""
    m = 0.0
    try:
        for gamma, law in laws_for(acc.randomizer, 0.0, acc.adjacency):
            u = moment_upper(law, float(gamma), int(acc.n))
            if u is None:
                return None
            m = max(m, u)
    except (NotImplementedError, ValueError, ArithmeticError):
        return None  # (no closed form: the search decides, as before)
    return float(plus(plus(m, surcharge(acc.randomizer, 0.0, acc.adjacency)), acc.sampler_term(0.0)))


def zero_first(z: float, delta: float, rel_tol: float) -> bool:
    """Whether get_epsilon evaluates get_delta(0) before its search (docs/accountant.md §8.22.6): where the normal
    approximation of D_up(0), sqrt(2 / pi) times the second moment's ``z`` (E|N| sigma / 2 against sigma / 2, the
    mean 0), is at least (1 + rel_tol) below delta. An estimate choosing which certified value runs first, never
    a bound: the answer is 0 only where the certified get_delta(0) is <= delta."""
    return math.sqrt(2.0 / math.pi) * z * (1.0 + rel_tol) <= delta


__all__ = ["LOGNORMAL_PARAMS", "law_higher", "law_moments_up", "moment_lower", "moment_upper", "zero_first", "zero_lower",
           "zero_upper"]
