"""A privacy profile's own sweep with strides: certified values at some of its eps, chords in e^eps between them.

Inside ``privacy_profile``'s sweep (``profile_chords.chord_sweep``: a round not bounded through bot, upper values
first), with ``limits.PROFILE46_STRIDE`` on, :func:`stride_eval` certifies the requested eps in increasing order but
not every one: from the last two certified values it predicts the local decay of delta (log-linear in eps, its rate
grown by the last ratio of rates) and jumps ahead by the largest stride s <= ``PROFILE46_STRIDE_MAX`` whose chord in
t = e^eps over the skipped eps the prediction puts within ``PROFILE46_STRIDE_AIM`` times the accountant's rel_tol. Once
the far end is certified, each skipped eps takes the chord of the two certified upper values
(``profile_chords.chord_value``, rounded up) where the chord is within that aim of the geometric (log-linear)
interpolation of its ends; otherwise it is certified at once. The profile is convex in t (Claim A of
``docs/composition.md`` §2), so a chord of certified upper values is a certified upper value at every eps between
them (``docs/composition.md`` §2.29); the prediction and the check are estimates and only choose which eps are
certified by the accountant. Chord values are not cached (no later pair or profile takes them as samples).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.plain_warm import run_weight
from sharpdp.shuffle.profile_chords import chord_value, in_chord_sweep
from sharpdp.shuffle.profile_eval import explicit_eval

_GROW_CAP = 2.0  # the predicted rate grows by the last ratio of measured rates, at most this factor
_EXP_MAX = 700.0  # a model falling more than e^700 over a stride: no stride (no float overflow)


def predicted_overshoot(e_a: float, e_b: float, inner, rate: float) -> float:
    """An estimate: the largest relative excess of the chord in t over delta(e) = exp(-rate (e - e_a)) at the
    eps ``inner`` of (e_a, e_b) (delta log-linear in eps at the rate ``rate`` >= 0 per nat)."""
    if not rate * (e_b - e_a) <= _EXP_MAX:  # (a support end's rate, or NaN: no stride)
        return math.inf
    u_b = math.exp(-rate * (e_b - e_a))
    worst = 0.0
    for e in inner:
        w = math.exp(e - e_a) * math.expm1(e_b - e) / math.expm1(e_b - e_a)
        worst = max(worst, (u_b + (1.0 - u_b) * w) * math.exp(rate * (e - e_a)) - 1.0)
    return worst


def geometric_excess(e_a: float, u_a: float, e_b: float, u_b: float, e: float, chord: float) -> float:
    """An estimate of a chord value's relative overshoot: ``chord`` over the geometric interpolation
    u_a^(1 - l) u_b^l (l = (e - e_a) / (e_b - e_a)) minus 1; inf where u_b is 0."""
    if not (u_b > 0.0 and u_a > 0.0):
        return math.inf
    lam = (e - e_a) / (e_b - e_a)
    return chord / math.exp((1.0 - lam) * math.log(u_a) + lam * math.log(u_b)) - 1.0


def _rate(e_a: float, u_a: float, e_b: float, u_b: float) -> float | None:
    return (math.log(u_a) - math.log(u_b)) / (e_b - e_a) if u_a >= u_b > 0.0 and e_b > e_a else None


def stride_eval(evaluate, eps: np.ndarray, accountant, upper_first: bool, chords, desc: str,
                progress: bool | None = False):
    """(eps certified, their lower values, their upper values, a function (eps, upper values) -> the upper values
    with the skipped eps' chords). ``evaluate(x)``: (lower, upper) of the accountant at the sorted eps ``x``; where
    the rule does not apply (switch off, not inside ``privacy_profile``'s sweep, lower values needed, no rel_tol,
    fewer than 3 eps) every eps is certified as before: one call (``progress`` False) or :func:`explicit_eval`'s
    chunks under a bar titled ``desc``. ``chords``: the caller's chord function (``profile_chords.chord_fill``),
    applied first. Statistics of the last call with the rule: :data:`LAST`."""
    rel_tol = getattr(accountant, "rel_tol", None)
    if not (limits.PROFILE46_STRIDE and upper_first and in_chord_sweep() and rel_tol and eps.size >= 3):
        lo, up = evaluate(eps) if progress is False else explicit_eval(evaluate, eps, progress, desc=desc)
        return eps, lo, up, chords
    from sharpdp import _progress

    aim, s_max = limits.PROFILE46_STRIDE_AIM * rel_tol, int(limits.PROFILE46_STRIDE_MAX)
    bar = _progress.progress_bar(total=int(eps.size), desc=desc, unit=" values",
                                 file=sys.stderr, leave=True, disable=progress is False, delay=0.0 if progress else 1.0)
    e_list = eps.tolist()
    got: dict[int, tuple[float, float]] = {}
    filled: dict[float, float] = {}
    cert: list[int] = []  # certified indices, increasing (a redone skipped eps is not a stride end)
    run_min = math.inf  # running minimum of the certified upper values along cert

    def certify(ks: list[int], weight: int = 1) -> None:
        with run_weight(weight):  # (§2.19's runs counted in eps steps: docs/composition.md §2.29)
            lo, up = evaluate(np.array([e_list[k] for k in ks], dtype=float))
        for k, a, b in zip(ks, np.atleast_1d(lo).tolist(), np.atleast_1d(up).tolist()):
            got[k] = (a, b)
        bar.update(len(ks))

    last = 0
    certify([0])
    cert.append(0)
    run_min = got[0][1]
    ends: list[tuple[float, float]] = [(e_list[0], run_min)]  # (eps, running minimum) at the stride ends
    n_redo = 0
    while last < len(e_list) - 1:
        s = 1
        if len(ends) >= 2 and (r := _rate(*ends[-2], *ends[-1])) is not None:
            r0 = _rate(*ends[-3], *ends[-2]) if len(ends) >= 3 else None
            grow = min(max(r / r0, 1.0), _GROW_CAP) if r0 and r0 > 0.0 else _GROW_CAP
            for cand in range(min(s_max, len(e_list) - 1 - last), 1, -1):
                j = last + cand
                if predicted_overshoot(e_list[last], e_list[j], e_list[last + 1:j], r * grow) <= aim:
                    s = cand
                    break
        j = last + s
        certify([j], s)
        u_a, u_b = run_min, min(run_min, got[j][1])
        redo = []
        for k in range(last + 1, j):
            c = chord_value(e_list[last], u_a, e_list[j], u_b, e_list[k])
            if geometric_excess(e_list[last], u_a, e_list[j], u_b, e_list[k], c) <= aim:
                filled[e_list[k]] = c
                bar.update(1)
            else:
                redo.append(k)
        if redo:  # (the prediction missed: these eps certified, a step back in the sweep)
            certify(redo)
            n_redo += len(redo)
        run_min = u_b
        cert.append(j)
        ends.append((e_list[j], u_b))
        last = j
    bar.close()
    LAST.update(certified=len(got), filled=len(filled), redone=n_redo)
    ks = sorted(got)
    out_eps = np.array([e_list[k] for k in ks], dtype=float)
    lo = np.array([got[k][0] for k in ks], dtype=float)
    up = np.array([got[k][1] for k in ks], dtype=float)

    def with_chords(e_arr: np.ndarray, ups: np.ndarray) -> np.ndarray:
        out = np.array(chords(e_arr, ups), dtype=float)
        for i, e in enumerate(e_arr.tolist()):
            if e in filled:  # (not cached: ``ups`` there is the value of the next cached eps, above e)
                out[i] = filled[e]
        return out

    return out_eps, lo, up, with_chords


LAST: dict = {}  # statistics of the last :func:`stride_eval` with the rule applied (certified, filled, redone)

__all__ = ["LAST", "geometric_excess", "predicted_overshoot", "stride_eval"]
