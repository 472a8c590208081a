"""A privacy profile's values between certified values the round already holds: chords in t = e^eps.

``privacy_profile`` (and only it: no lower value is read) runs inside :func:`chord_sweep`; there
:func:`chord_fill` gives each requested eps lying strictly between two of the round's cached, certified
values (a pair's samples, an earlier profile's values: ``round_cache``) the chord of their upper values in
t = e^eps, rounded up, where the chord's estimated overshoot (``pair.chord_estimate``, the triangle of the
neighbouring segments' supporting lines) is at most ``limits.PROFILE_CHORD_AIM`` times the accountant's
rel_tol. The true profile is convex in t (Claim A of ``docs/composition.md`` §2), so the chord of certified
upper values is a certified upper value at every t between them; the estimate only chooses which eps take a
chord and which are certified by the accountant (``docs/composition.md`` §2.24).
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.thread_flag import ThreadFlag
from sharpdp.shuffle.pair import chord_estimate

_STATE = ThreadFlag()  # (this thread's privacy_profile sweep)
_MARGIN = 1e-12  # relative margin on the chord's float evaluation (its rounding error is below 30 u: §2.24)


@contextmanager
def chord_sweep():
    """Marks this thread's ``privacy_profile`` sweep (nested calls keep the outer mark)."""
    with _STATE.set():
        yield


def in_chord_sweep() -> bool:
    """Whether this thread is inside ``privacy_profile``'s sweep (:func:`chord_sweep`)."""
    return bool(_STATE.on)


def chord_value(e_a: float, u_a: float, e_b: float, u_b: float, e: float) -> float:
    """An upper value of the chord in t = e^eps through (e^e_a, u_a) and (e^e_b, u_b) at t = e^e, e_a < e < e_b,
    u_a >= u_b >= 0: u_b + (u_a - u_b) w with w = (t_b - t) / (t_b - t_a) = e^(e - e_a) expm1(e_b - e) /
    expm1(e_b - e_a) (no cancellation of nearby t), times 1 + 1e-12 and one ulp up, at most u_a (delta is
    non-increasing: u_a certifies e too)."""
    w = math.exp(e - e_a) * math.expm1(e_b - e) / math.expm1(e_b - e_a)
    c = (u_b + (u_a - u_b) * min(max(w, 0.0), 1.0)) * (1.0 + _MARGIN)
    return min(float(np.nextafter(c, math.inf)), u_a)


def chord_fill(cache: dict, missing: np.ndarray, accountant):
    """(the eps of ``missing`` still to certify, a function (eps, upper values) -> the upper values lowered to the
    chords found). ``missing``: sorted eps >= 0 without a cached value; ``cache``: the round's {eps: (lower, upper[,
    level])} (an entry with a level, a coarse value, is no chord's end). Outside :func:`chord_sweep`, with the switch
    off or no ``rel_tol`` on the accountant: nothing filled."""
    rel_tol = getattr(accountant, "rel_tol", None)
    if not (limits.PROFILE_CHORDS and _STATE.on and missing.size and rel_tol):
        return missing, lambda eps, up: up
    # (finite ends only: a cached eps = inf, delta 0, would make the weight inf / inf)
    keys = np.array(sorted(e for e, v in cache.items() if math.isfinite(e) and (len(v) < 3 or not v[2] > 0.0)),
                    dtype=float)
    if keys.size < 2:
        return missing, lambda eps, up: up
    ups = np.minimum.accumulate(np.array([cache[k][1] for k in keys.tolist()], dtype=float))
    t = np.exp(keys)
    seg = np.searchsorted(keys, missing, side="right") - 1  # keys[seg] < e < keys[seg + 1] where inside
    est: dict[int, float] = {}
    filled: dict[float, float] = {}
    for e, i in zip(missing.tolist(), seg.tolist()):
        if i < 0 or i + 1 >= keys.size or not keys[i] < e < keys[i + 1] or not t[i] < t[i + 1]:
            continue  # (ends whose e^eps are equal floats: no estimate, the eps is certified)
        if i not in est:
            with np.errstate(all="ignore"):
                est[i] = chord_estimate(t, ups, i)
        if est[i] <= limits.PROFILE_CHORD_AIM * rel_tol:
            filled[e] = chord_value(float(keys[i]), float(ups[i]), float(keys[i + 1]), float(ups[i + 1]), e)
    if not filled:
        return missing, lambda eps, up: up

    def lower(eps: np.ndarray, up: np.ndarray) -> np.ndarray:
        out = np.array(up, dtype=float)
        for j, e in enumerate(eps.tolist()):
            if e in filled:  # (not cached: ``up`` there is the value of the next cached eps, which is above e)
                out[j] = filled[e]
        return out

    return np.array([e for e in missing.tolist() if e not in filled], dtype=float), lower


__all__ = ["chord_fill", "chord_sweep", "chord_value", "in_chord_sweep"]
