"""The steps of the far-tail treatment's passes (docs/accountant_tail.md §33.2, §48): the loose first step of a law
bounded above, and the body passes' steps snapped to an end atom's spacing with the clamp shift they cost.

The Gaussian randomizer's x vs bottom law has an atom of mass 1/2 at the bottom of its support, where the centroid
(lower) lattice law's sweep starts (docs/accountant.md §4.2): on a step unrelated to the atom the atom's group borrows
mass from about a step above it, a loss first order in the step (docs/accountant_tail.md §46.2). The body's engine
passes of the far-tail round (:func:`~.far_tail.certify_bigjump`) then run on steps s / m that put the atom just
before a node (:func:`~.spacing.snap`); such a step does not divide the round's clamp T0, so the pass's lattice
clamps at its own top node T'' >= T0, and :func:`clamp_shift` bounds what that moves the body's value.
"""

from __future__ import annotations

import math

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.far_tail_grid import pow2
from sharpdp.shuffle.accountant.jump import TailCoarsen
from sharpdp.shuffle.accountant.lattice import LatticeLaws, PassResult, lattice_laws
from sharpdp.shuffle.accountant.results import Coarsen
from sharpdp.shuffle.accountant.limits import J_LO, K_MAX, N_MAX, U
from sharpdp.shuffle.accountant.spacing import END_MARGIN, end_atom_spacing
from sharpdp.shuffle.laws import Law

LOOSE_STEP_MAX = 4.0  # the largest factor of loose_step (§33.2; speed) ...
# ... from this n on (below, the via-bot split search's loose legs of a few ms each refined more: 0.11 -> 0.18 s at
# GaussianRandomizer(2), n = 10, eps = 2, replace; §33.2)
LOOSE_STEP_N = 10**7


def loose_step(rel_tol: float, n: int) -> float:
    """The factor on a law bounded above's first step at a loose request: pow2(sqrt(rel_tol / 1e-2)), in [1, 4]
    (the step's divisor 16 was sized at rel_tol 1e-2 and a body's gap grows about as h^2), at n >= LOOSE_STEP_N only
    (docs/accountant_tail.md §33.2, speed only: 1 at rel_tol <= 1e-2 or smaller n, the same floats there)."""
    if n < LOOSE_STEP_N:
        return 1.0
    return min(pow2(math.sqrt(max(rel_tol / 1e-2, 1.0))), LOOSE_STEP_MAX)


def body_lower(body: PassResult) -> float:
    """Lower value of E[(A_B)_+]/(n gamma) from an engine pass, without the engine's tail_B term
    (module step H of :mod:`sharpdp.shuffle.accountant`: e^{n Lambda~}(E~ - wrap_high~ - fp~ - tv~)
    / (n gamma) - overshoot; the lower tail is paid by :func:`~.chernoff.lower_tail_penalty` instead; moved from
    :mod:`.far_tail`, which keeps the name ``_body_lower``)."""
    t = body.terms
    v = (t["E_lower"] - t["wrap_high"] - t["lower_fft_roundoff"] - t["lower_pmf_tv"]) * (1 - 1e-12)
    v = max(v - t["lower_overshoot"] * (1 + 1e-12), 0.0)
    # the lattice positions' charge where the final factor 1 - 1e-9 does not cover it, as the engine's own lower value
    # takes it (docs/accountant.md §3.2.1, docs/accountant_tail.md §57.4)
    pos = t.get("lattice_position", 0.0) if limits.BODY_LOWER_POSITION else 0.0
    return max(v - pos * (1 + 1e-12), 0.0) if pos > 0.99e-9 * v else v


def laws(law: Law, gamma: float, h: float, T: float, B: float, lower: bool = True) -> LatticeLaws:
    """:func:`~.lattice.lattice_laws`, raising :class:`~.jump.TailCoarsen` where a size cap binds (moved from
    :mod:`.far_tail`, which keeps the name ``_laws``)."""
    lat = lattice_laws(law, gamma, h, T, B, lower)
    if isinstance(lat, Coarsen):
        raise TailCoarsen(lat.h_fit)
    return lat


def first_factor(coarse: float, first: bool, h_fg: float, h_bulk: float, T0_max: float) -> float:
    """The factor on a far-tail run's first step where the centroid law's first group sets it (docs/accountant_tail.md
    §50): ``coarse`` where ``first`` (the run of :func:`~.far_tail._coarse_first`) and ``limits.FIRST_COARSE`` ask
    for it, the run is not §28's (``T0_max`` infinite) and the first group's step h_fg times it stays at or below the
    bulk rule's step ``h_bulk`` (the step the run would take without the first group's rule); 1.0 otherwise (the
    first group's step, main's). A choice of which certified run happens, never a value."""
    ok = first and limits.FIRST_COARSE and coarse > 1.0 and math.isinf(T0_max) and h_fg * coarse <= h_bulk
    return coarse if ok else 1.0


def first_step(h: float, fg: float, H: float, T0: float, B: float, k_max: int) -> tuple[float, bool]:
    """(step, True): a round's first step h times ``fg`` (at most H, which it then divides as h does: both are
    j_odd 2^e), where that is coarser than h, the lattice laws at h itself fit the size cap ``k_max`` (far_tail's
    K_MAX; where they do not, the caps set the step and §48.2's rule applies as before) and the coarse lattice keeps at least
    ``limits.FIRST_COARSE_K`` steps (an estimate that the sum's window keeps the KEEP_N points at which the hat
    window's body bracket is used); else (h, False) (docs/accountant_tail.md §50)."""
    K = math.ceil(T0 / h) + math.ceil(B / h)  # (the lattice's steps at h: lattice_laws's K)
    if fg > 1.0 and min(h * fg, H) > h and K * J_LO <= k_max and K / fg >= limits.FIRST_COARSE_K:
        return min(h * fg, H), True
    return h, False


def pair_keep(N: int, scaled: bool = False) -> float:
    """The share of rel_tol within which a far-tail round's bracket spares its redo for the pair term's clamp (§27 (a)):
    1/2 (main's), or ``limits.BODY_WHOLE_ACCEPT`` where ``limits.PAIR_REDO_ACCEPT`` is on and the round's jump term's
    window has at least ``limits.PAIR_REDO_N`` points (docs/accountant_tail.md §50.4), or where ``scaled`` (the round
    belongs to a run at a coarser step of §48.2 / §50, which is kept only within that share) and
    ``limits.SCALED_PAIR_KEEP`` is on (docs/accountant_tail.md §52; a choice of rounds), the latter at
    ``limits.COARSE_KEEP_ACCEPT`` with ``limits.COARSE_KEEP`` (the share such a run is kept within, §54)."""
    if scaled and limits.SCALED_PAIR_KEEP:
        return limits.COARSE_KEEP_ACCEPT if limits.COARSE_KEEP else limits.BODY_WHOLE_ACCEPT
    if limits.PAIR_REDO_ACCEPT and N >= limits.PAIR_REDO_N:
        return limits.BODY_WHOLE_ACCEPT
    return 0.5


def jump_decides(j_lo: float, j_up: float, multi: float, pen: float, body_lo: float, body_up: float,
                 rel_tol: float) -> bool:
    """Whether a far-tail round's body passes stop because the round's other terms decide its gap
    (docs/accountant_tail.md §52.3; a choice of passes, ``limits.BODY_JUMP_STOP``): G0 = (j_up - j_lo) + multi, the
    jump and pair terms' share of the round's gap with an exact body, exceeds BODY_WHOLE_ACCEPT rel_tol times the largest
    lower value any body pass could give (body_up + j_lo - pen: §44.1's test cannot be met), and the body's gap so far
    is at most ``limits.BODY_JUMP_SHARE`` times G0 (the passes could narrow the round's gap by at most that share). A
    law bounded above (no jump or pair term: G0 = 0) never stops here."""
    if not limits.BODY_JUMP_STOP:
        return False
    g0 = (j_up - j_lo) + multi
    return g0 > limits.BODY_WHOLE_ACCEPT * rel_tol * max(body_up + j_lo - pen, 0.0) and \
        body_up - body_lo <= limits.BODY_JUMP_SHARE * g0


def body_spacing(law: Law, bounded: bool, n: int) -> float | None:
    """The spacing s to which the far-tail round's body passes snap their steps (docs/accountant_tail.md §48.1): the
    end atom's (:func:`~.spacing.end_atom_spacing`) of a law unbounded above with a finite bottom, with
    ``limits.BODY_END_SNAP`` at n >= ``limits.BODY_END_SNAP_N``; None otherwise (the passes' steps as before)."""
    if not limits.BODY_END_SNAP or n < limits.BODY_END_SNAP_N or bounded or not math.isfinite(law.support()[0]):
        return None
    return end_atom_spacing(law)


def body_step(h: float, s: float | None, lo_s: float, T0: float, first: bool = False) -> float:
    """The step of a body pass aimed at ``h``: without a spacing s (or for the round's ``first`` pass, at the round's
    own step, with ``limits.BODY_END_SNAP_LATER``: docs/accountant_tail.md §53), h itself; else T0 / k for the
    integer k that puts the bottom atom lo_s < 0 just before node -m, m = ceil(|lo_s| (1 + END_MARGIN) / h): |lo_s| / step = m (1 + d),
    d in [END_MARGIN, END_MARGIN + |lo_s| / (m T0)], so that the step divides the clamp T0 up to rounding (the pass's
    lattice then clamps at T0 within a few ulp, :func:`clamp_shift`) and the atom's group closes with little
    borrowed mass (docs/accountant_tail.md §48.1). h itself where no such step is at most h or the offset d would
    exceed 100 END_MARGIN."""
    if s is None or (first and limits.BODY_END_SNAP_LATER) or not (h > 0 and lo_s < 0 and T0 > 0):
        return h
    a = -lo_s
    m = max(1, math.ceil(a * (1.0 + END_MARGIN) / h))
    k = math.ceil(m * T0 * (1.0 + END_MARGIN) / a)
    hp = T0 / k
    for _ in range(4):  # (the lattice's top node index ceil(T0 / step) must be k: the step rounded up to it)
        if math.ceil(T0 / hp) <= k:
            break
        hp = math.nextafter(hp, math.inf)
    d = a / (m * hp) - 1.0
    ok = math.ceil(T0 / hp) == k and hp <= h and END_MARGIN / 2 <= d <= 100.0 * END_MARGIN
    return hp if ok else h


def clamp_shift(law: Law, T0: float, kT: int, K: int, h: float) -> float:
    """Upper bound, in units of D_up, on |E[A_+] - E[A''_+]| / (n gamma), A = sum_i min(G_i, T0) and A'' the same sum
    clamped at the pass's top T'' (its lattice's clamp, the float x0 + K h with x0 = -kB h, K = kT + kB, within
    4u (K + 1) h of kT h): |T'' - T0| P(L > min(T0, T'')) (docs/accountant_tail.md §48.1; x_+ is 1-Lipschitz and each
    active user's clamped value moves by at most |T'' - T0|, only where L > min(T0, T''))."""
    d = (abs(kT * h - T0) + 4.0 * U * (K + 1) * h) * (1 + 4 * U)
    lo_edge = min(T0, kT * h) - d
    p, e = law.prob_above(lo_edge)
    return d * min((p + e) * (1 + 1e-12), 1.0) * (1 + 1e-9)



def lower_only_next(prev: PassResult | None, last: PassResult, value: float, rel_tol: float, n: int) -> bool:
    """Whether the far-tail round's next body pass runs its centroid (lower) lattice law alone (docs/accountant_tail.md
    §57; with ``limits.BODY_LOWER_ONLY``, at n >= ``limits.BODY_LOWER_N``): the body's upper value from the full passes ``prev`` (at a step at least
    BODY_LOWER_RATIO times coarser, an upper value not below) and ``last`` is estimated within BODY_LOWER_SHARE
    BODY_WHOLE_ACCEPT rel_tol ``value`` (the round's lower value) of its limit as h -> 0, second order in h as for
    docs/accountant_atoms.md §14: (up(h_prev) - up(h)) r^2 / (1 - r^2), r = h / h_prev. An estimate choosing which
    certified passes run; the round keeps the least upper value of its passes."""
    if not limits.BODY_LOWER_ONLY or n < limits.BODY_LOWER_N or prev is None or not (prev.grid.h >= limits.BODY_LOWER_RATIO * last.grid.h) or \
            not (math.inf > prev.main >= last.main > 0.0) or not value > 0.0:
        return False
    r2 = (last.grid.h / prev.grid.h) ** 2
    return (prev.main - last.main) * r2 / (1.0 - r2) <= limits.BODY_LOWER_SHARE * limits.BODY_WHOLE_ACCEPT * rel_tol * value


def divisor(body_lo: float, body_up: float, share: float, leap: float) -> float:
    """The divisor of the next body step after a pass with the body bracket (body_lo, body_up) and the target
    ``share`` (§8, §44.1): 2 (halving), 4 where the gap exceeds ``leap`` times the share (§31.2), 8 where it also
    exceeds BODY_LEAP_EIGHT_RATIO times the share with ``limits.BODY_LEAP_EIGHT`` (§59.2; off: main's 2 or 4)."""
    gap = body_up - body_lo
    if not (body_lo > 0 and gap > leap * share):
        return 2.0
    return 8.0 if limits.BODY_LEAP_EIGHT and gap > limits.BODY_LEAP_EIGHT_RATIO * share else 4.0


def first_aim(h: float, rd, body_lo: float, body_up: float, n: int, rel_tol: float, bracket: bool) -> float:
    """The step a far-tail round's first body pass aims at: the round's own step h (main's), or with
    ``limits.BODY44_FIRST_SKIP`` on a bracket's passes (``bracket``) at n >= ``limits.BODY44_FIRST_N`` its half where
    the pass at h is expected to be followed by one at h / 2 (docs/accountant_tail.md §66.1): the hat window's body
    bracket (body_lo, body_up) of §45.5 misses its share 0.3 rel_tol (body_lo + J_lo) by BODY44_FIRST_MIN to
    BODY44_FIRST_RATIO times (the engine's gap at h measured 20-80 times narrower: a miss by 1 to 4 times, which halves
    the step, §31.2), or
    its lower value is 0 and the quarter step's lattice exceeds K_MAX (a quarter refits to the half, §31.2); the half's
    lattice within K_MAX and 2.5 times the jump window's N within N_MAX. An estimate: it chooses which certified passes
    run. ``rd``: the round (T0, B, its jump term's window N)."""
    cells = lambda d: (math.ceil(rd.T0 * d / h) + math.ceil(rd.B * d / h)) * J_LO  # noqa: E731  (at step h / d)
    if not (limits.BODY44_FIRST_SKIP and bracket and n >= limits.BODY44_FIRST_N and 2.5 * rd.jt.N <= N_MAX
            and cells(2) <= K_MAX):
        return h  # (main's step; or the half's pass could be refused by the size caps)
    if body_lo > 0.0:
        share = 0.3 * rel_tol * (body_lo + rd.jt.lo)
        miss = body_up - body_lo
        return h / 2.0 if limits.BODY44_FIRST_MIN * share < miss <= limits.BODY44_FIRST_RATIO * share else h
    return h / 2.0 if cells(4) > K_MAX else h


def refits(hb: float, prev: float) -> bool:
    """Whether a step ``hb`` that does not fit the size caps is replaced by 2 hb (True) rather than ending the passes:
    where it is the quarter of the previous pass's step ``prev`` (§31.2) or, with ``limits.BODY_LEAP_EIGHT``, its
    eighth (§59.2). The steps are j 2^e, so the products are exact."""
    return 4.0 * hb == prev or (limits.BODY_LEAP_EIGHT and 8.0 * hb == prev)


__all__ = ["LOOSE_STEP_MAX", "LOOSE_STEP_N", "body_lower", "body_spacing", "body_step", "clamp_shift", "divisor",
           "first_aim", "first_factor", "first_step", "jump_decides", "laws", "loose_step", "lower_only_next",
           "pair_keep", "refits"]
