"""Certification driver of the shuffle accountant: one law's certified value (docs/accountant.md §6-§8).

:func:`certify` is the one pipeline behind every value of :class:`sharpdp.shuffle.ShuffleAccountant`,
for both of its modes: :class:`Bracket` (lower and upper, the grid refined until the relative
target is met: ``get_delta``, ``report``) and :class:`UpperOnly` (the upper value at a given
grid: get_epsilon's search). Order of the steps (module docstring of
:mod:`sharpdp.shuffle.accountant`):

1. closed forms: L <= 0 a.s. (0), n = 1 (E[L_+] exactly), E[L_+] already below the value floor
   or the caller's maximum, the single-active-user lower value within rel_tol of E[L_+];
2. two-atom laws (binary RR, k-RR zero-out): the exact O(sqrt n) sum of :mod:`.two_atom`
   (docs/accountant_atoms.md §12), unless :func:`lattice_for_two_atoms` is active or its bracket
   misses the target; then exact blocks for atom laws (step J, :mod:`.blocks`), the far-tail treatment for heavy
   continuous laws (:mod:`.far_tail`, docs/accountant_tail.md), else the plain lattice path
   (:mod:`.plain`, :mod:`.lattice`, steps A-H) behind the law-shape closed forms of
   :func:`~.closed_forms.law_closed_form` (single atom, sd underflow, sd overflow);
3. the cap D_up <= E[L_+] ((sum x_i)_+ <= sum (x_i)_+) on the upper value.

Results are :class:`~.results.LawBracket`; a size cap binding is the :class:`~.results.Coarsen`
outcome of a pass, not an exception. A law family plugs in through the
:class:`~sharpdp.shuffle.laws.base.Law` interface alone (``atomic``, ``continuous`` and the vectorised
members); the driver has no dispatch on law types.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from dataclasses import replace

from sharpdp.shuffle.accountant import far_tail, plain_warm, sweep_checks, two_atom
from sharpdp.shuffle.accountant.blocks import block, one_block, unblock
from sharpdp.shuffle.accountant.chernoff import clamped_chernoff_cap
from sharpdp.shuffle.accountant.closed_forms import (law_closed_form, single_user_lower, small_n_bracket,
                                                     stop_loss_bracket, trivial_cap)
from sharpdp.shuffle.accountant.limits import J_LO, K_MAX, TINY, VALUE_FLOOR
from sharpdp.shuffle.accountant.plain import Bracket, Mode, UpperOnly, certify_law_mode
from sharpdp.shuffle.accountant.results import Grid, LawBracket
from sharpdp.shuffle.laws import Law


#: the engine two-atom laws take: True, the exact sum of :mod:`.two_atom` (docs/accountant_atoms.md §12);
#: False inside :func:`lattice_for_two_atoms` (the lattice/blocks engine, as for every other atom law)
_TWO_ATOM = [True]


@contextlib.contextmanager
def lattice_for_two_atoms() -> Iterator[None]:
    """Within this context two-atom laws are certified by the lattice/blocks engine (docs/accountant_atoms.md
    §7-§11) instead of the exact sum of docs/accountant_atoms.md §12, and get_epsilon runs its lattice
    phases for them: the switch of the tests and benchmarks that pin that engine on binary RR. Both engines
    are certified; values differ within the lattice engine's bracket. Not thread-safe (a process-wide switch)."""
    old = _TWO_ATOM[0]
    _TWO_ATOM[0] = False
    try:
        yield
    finally:
        _TWO_ATOM[0] = old


#: per thread: True inside :func:`upper_first_sweep`
_SWEEP = threading.local()


@contextlib.contextmanager
def upper_first_sweep(on: bool = True) -> Iterator[None]:
    """Within this context (``on``), upper-first requests (``get_delta_bounds(lower=False)``) also skip the lower
    value on the plain and block lattice paths (docs/composition.md §2.5): the sweeps of upper values of
    :mod:`sharpdp.shuffle.profile` enter it. Outside it ``lower=False`` concerns far-tail laws only
    (docs/accountant_tail.md §15). Per thread."""
    old = getattr(_SWEEP, "on", False)
    _SWEEP.on = bool(on) or old
    try:
        yield
    finally:
        _SWEEP.on = old


def in_upper_first_sweep() -> bool:
    """True inside :func:`upper_first_sweep` (this thread)."""
    return getattr(_SWEEP, "on", False)


def exact_two_atoms() -> bool:
    """True when two-atom laws take the exact sum (outside :func:`lattice_for_two_atoms`)."""
    return _TWO_ATOM[0]


def certify(law: Law, gamma: float, n: int, rel_tol: float, threads: int, mode: Mode = Bracket(), *,
            closed_only: bool = False, upper_first: bool = False) -> LawBracket:
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
    closed_only : bool, default False
        Return after step 1 with the tightest closed-form bracket, whatever its width: the
        few-active-users and small-n brackets intersected with [0, E[L_+]] (docs/accountant.md §6.9);
        no lattice or far-tail work. Certified, possibly wide (lower 0 where no lower form applies).
    upper_first : bool, default False
        :class:`Bracket` without ``decide``, upper values first: a heavy-tailed law (far-tail path) gives the upper
        value alone (lower 0) where the far-tail bracket's first round would settle it without the body pass,
        else the bracket (docs/accountant_tail.md §15); inside :func:`upper_first_sweep` the plain and block lattice
        paths run the refinement's pass predicted to be the last without its lower lattice law and stop there
        (lower 0; docs/composition.md §2.5). The two-atom sum and the closed forms ignore it.

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
        cap = max(trivial_cap(law), TINY)
        return LawBracket(0.0, cap, cap=cap, terms={"note": "L <= value_error almost surely"})
    cap = max(trivial_cap(law), TINY)  # D_up <= E[L_+]
    if n == 1:
        lo, up = stop_loss_bracket(law, 0.0)  # D_up = E[(B L)_+] / gamma = E[L_+] exactly
        return LawBracket(lo, min(max(up, TINY), cap), cap=cap, terms={"note": "n = 1: E[L_+] in closed form"})
    if cap < max(VALUE_FLOOR, neg):
        # the trivial cap is already below the value floor (or the maximum so far)
        return LawBracket(0.0, cap, cap=cap, terms={"note": "E[L_+] below the value floor"})
    one = single_user_lower(law, gamma, n)
    if closed_only:  # the decision bracket (docs/accountant.md §6.9): both brackets hold, so their intersection
        jb = small_n_bracket(law, gamma, n, rel_tol) if law.continuous else None
        lo, up = max(one, jb[0]) if jb is not None else one, min(jb[1], cap) if jb is not None else cap
        return LawBracket(min(lo, up), up, cap=cap, terms={"note": "closed forms only (docs/accountant.md §6.9)"})
    if one > 0.0 and cap - one <= rel_tol * one:
        # few active users ((n - 1) gamma <~ rel_tol): (1 - gamma)^(n-1) E[L_+] <= D_up <= E[L_+] already
        # meets the target, whatever the law's tail (docs/accountant.md §6.7; the engine would only
        # tighten the upper value within rel_tol, at up to seconds per pass for a heavy-tailed law)
        return LawBracket(one, cap, cap=cap, terms={"note": "few active users: (1 - gamma)^(n-1) E[L_+] <= "
                                                            "D_up <= E[L_+]"})
    # in a privacy profile's sweep, the shortcuts the law family's last full check found idle are skipped
    # (docs/composition.md §2.20: each is a choice of which certified value is computed)
    sk = sweep_checks.key(plain_warm.family(law, gamma, n, rel_tol), neg) if upper_first and isinstance(mode, Bracket) \
        and mode.decide is None and getattr(_SWEEP, "on", False) else None
    skip = sweep_checks.skips(sk, max(VALUE_FLOOR, neg))
    jb = small_n_bracket(law, gamma, n, rel_tol) if law.continuous and sweep_checks.FEW not in skip else None
    if jb is not None and jb[0] > 0.0 and jb[1] - jb[0] <= rel_tol * jb[0]:
        # small n: the few-user terms (one user's jump for a law bounded below, the two-user quadrature for a
        # law bounded above) bracket D_up within rel_tol (docs/accountant.md §6.8), where the lattice needs a
        # grid spanning the whole bulk of a heavy-tailed law (seconds per pass)
        return LawBracket(jb[0], min(jb[1], cap), cap=cap, terms={"note": "small n: few-user terms "
                                                                            "(docs/accountant.md §6.8)"})
    if jb is not None and isinstance(mode, Bracket) and jb[1] < neg:
        # the few-user upper value is already below the caller's negligible level (the maximum so far, or a
        # profile's floor): nothing to refine (below VALUE_FLOOR alone the engines run: their values are tighter)
        return LawBracket(min(jb[0], jb[1]), jb[1], cap=cap, terms={"note": "small n: few-user terms below the "
                                                                            "negligible level (docs/accountant.md §6.8)"})
    if _TWO_ATOM[0]:
        r2 = _two_atom_value(law, gamma, n, rel_tol, mode, max(VALUE_FLOOR, neg))
        if r2 is not None:
            return replace(r2, upper=min(r2.upper, cap), cap=cap)
    if isinstance(mode, Bracket) and sweep_checks.CAP not in skip:
        thr = max(VALUE_FLOOR, neg)
        small = clamped_chernoff_cap(law, gamma, n, thr)
        if small is not None and small.upper < thr:  # below the floor (or the maximum so far): nothing to refine
            return replace(small, upper=min(small.upper, cap), cap=cap)
    idle = {sweep_checks.CAP} | ({sweep_checks.FEW} if jb is None else set())  # (what this full check found idle)
    if upper_first and getattr(_SWEEP, "on", False) and isinstance(mode, Bracket) and mode.decide is None:
        # the plain and block lattice paths: the refinement's predicted last pass without its lower law
        # (docs/composition.md §2.5); the far-tail treatment takes the flag itself (docs/accountant_tail.md §15)
        mode = replace(mode, upper_first=True)
    blk = block(gamma, law, n)
    if blk is None:
        # heavy-tailed continuous laws: far-tail treatment (docs/accountant_tail.md); None: plain engine
        far = None if sweep_checks.FAR in skip else far_tail.try_certify(
            law, gamma, n, rel_tol, threads, negligible=neg, lower=isinstance(mode, Bracket), upper_first=upper_first)
        if far is None and jb is not None and _plain_cannot_tighten(law, gamma, n, mode, jb[1]):
            # the plain engine's upper value cannot fall below the few-user upper value (its clamp term at the
            # widest clamp its steps allow already exceeds it): the few-user bracket without the engine's passes
            # (seconds each for a heavy-tailed law; docs/composition.md §2.8)
            return LawBracket(min(jb[0], jb[1], cap), min(jb[1], cap), cap=cap,
                              terms={"note": "small n: few-user terms; the plain engine's clamp term exceeds "
                                             "them (docs/composition.md §2.8)", "small_n": (jb[0], jb[1])})
        if far is None and isinstance(mode, Bracket) and mode.decide is not None:
            mode = replace(mode, unit=lambda lo, up, grid: (lo, min(up, cap)))
        r = certify_law_mode(law, gamma, n, rel_tol, threads, mode) if far is None else far
        idle |= {sweep_checks.FAR} if far is None else set()
    elif blk.t == n:  # one block of all users: D_up in closed form from its exact law (§5.4)
        r = one_block(blk, gamma, n)
    else:
        bmode = mode.scaled(blk.t * gamma)
        if isinstance(bmode, Bracket) and bmode.decide is not None:
            top_b = blk.law.support()[1]

            # the largest shift unblock adds at any grid (its Chernoff factor is at most 1): a decided
            # upper value then bounds every later pass's unblocked one (docs/accountant_atoms.md §8)
            shift_max = (n // blk.t) * blk.value_err / (n * gamma) + blk.trunc

            def unit(lo: float, up: float, grid: Grid | None) -> tuple[float, float]:
                """The block problem's bracket so far in D units: the lower value as unblock returns it,
                the upper value with the largest shift of any grid, capped by E[L_+]."""
                u = unblock(LawBracket(lo, up, grid=grid), gamma, n, blk.t, blk.value_err, blk.trunc, top=top_b)
                f = 1.0 / (blk.t * gamma)
                return u.lower, min(max(u.upper, up * f * (1 + 1e-12) + shift_max), cap)

            bmode = replace(bmode, unit=unit)
        r = certify_law_mode(blk.law, 1.0, n // blk.t, rel_tol, threads, bmode)
        r = unblock(r, gamma, n, blk.t, blk.value_err, blk.trunc, top=blk.law.support()[1])
    out = _with_small_n(replace(r, upper=min(r.upper, cap), cap=cap), jb, mode, rel_tol)
    sweep_checks.record(sk, frozenset(idle))
    sweep_checks.note_upper(sk, out.upper)
    return out


def _plain_cannot_tighten(law: Law, gamma: float, n: int, mode: Mode, j_up: float) -> bool:
    """True where the plain engine's refinement (:func:`~.plain.refine`, ``mode`` :class:`Bracket` without
    ``decide``) cannot return an upper value below ``j_up`` (docs/composition.md §2.8): every pass at a step
    h <= sd/4 clamps the law's top at T <= Tmax(h) = K_MAX h / (2 J_LO) (rounded up to the lattice: below
    Tmax(sd/4) + sd/4) and charges E[(L - T)_+] to its upper value, which is non-increasing in T; so where
    E[(L - T1)_+] > j_up at T1 = Tmax(sd/4) + sd/4, no such pass gets below ``j_up`` and the intersection with the
    few-user bracket (:func:`_with_small_n`) keeps ``j_up``. Not for the law-shape closed forms (no pass runs)."""
    if not isinstance(mode, Bracket) or mode.decide is not None or not law.continuous:
        return False
    if math.isfinite(law.support()[1]) or law_closed_form(law, gamma, n) is not None:
        return False
    h0 = law.std() / 4.0
    t1 = 0.5 * K_MAX * h0 / J_LO + h0
    return bool(law.tail_upper(t1) > j_up)


def _with_small_n(r: LawBracket, jb: tuple[float, float] | None, mode: Mode, rel_tol: float) -> LawBracket:
    """``r`` intersected with the few-user bracket ``jb`` of the same D_up (docs/composition.md §2.6): both are
    certified brackets of one quantity, so their intersection is; where the engine's bracket missed its target
    (the Gaussian randomizer's tail at small n: [0, 1.7e-10] against [3.3e-14, 4.0e-14]) the closed form's ends
    are the tighter ones. Only for :class:`Bracket` without ``decide`` (get_delta's values; a search's decisions
    keep their own values) and where the engine's gap exceeds ``rel_tol`` (a bracket that met its target keeps its
    floats)."""
    if jb is None or not isinstance(mode, Bracket) or mode.decide is not None:
        return r
    if r.lower > 0.0 and r.upper - r.lower <= rel_tol * r.lower:
        return r
    lo, up = max(r.lower, jb[0]), min(r.upper, jb[1])
    if lo == r.lower and up == r.upper:
        return r
    if lo > up:  # two certified brackets of one quantity cannot be disjoint: a defect, never a value
        raise RuntimeError(f"accountant: the few-user bracket [{jb[0]!r}, {jb[1]!r}] and the engine's "
                           f"[{r.lower!r}, {r.upper!r}] are disjoint (docs/composition.md §2.6); refusing to certify")
    lower = lo if not r.terms.get("lower_skipped") else r.lower  # (an upper-first value keeps its lower 0)
    return replace(r, lower=lower, upper=up, terms=dict(r.terms, small_n=(jb[0], jb[1])))


#: the largest n at which a two-atom law looks for the one-block closed form (blocks of all n users fit up to
#: n ~ 150 for binary RR: docs/accountant.md §5.2)
_ONE_BLOCK_N = 256


def _two_atom_value(law: Law, gamma: float, n: int, rel_tol: float, mode: Mode, floor: float) -> LawBracket | None:
    """The exact two-atom bracket (docs/accountant_atoms.md §12) where it settles the mode: the upper value
    alone in :class:`UpperOnly` mode and in a decision mode (get_delta's own upper value, final: §12.6);
    else the bracket. None: not a two-atom law, an upper run whose own width (rounding, truncation)
    exceeds rel_tol / 1000 while its value is above ``floor`` (the value floor, or the maximum so far), or
    the kernel declined: the lattice path follows."""
    if not two_atom.is_two_atom(law):
        return None
    first = two_atom.bracket(law, gamma, n, lower=False)
    if first is None:
        return None
    own = float(first.terms["upper_run_lower"])
    if not (first.upper < floor or first.upper - own <= 1e-3 * rel_tol * own):
        return None  # (the run's own width, rounding and truncation, is not negligible: the lattice refines)
    # (one block of all n users only fits at small n; building a block law costs ~0.2-1.5 ms at n = 1e6)
    blk = block(gamma, law, n) if n <= _ONE_BLOCK_N else None
    one = one_block(blk, gamma, n) if blk is not None and blk.t == n else None
    if one is not None:  # small n: the exact one-block closed form (§5.4 of docs/accountant.md) is narrower
        first = replace(first, upper=min(first.upper, one.upper))  # (both certified: their intersection is)
    if isinstance(mode, UpperOnly) or mode.decide is not None:
        # (a decision: this upper value is get_delta's own, final whatever the lower one; a probe that ends
        # above delta is a lower end of the search by it alone, docs/accountant_atoms.md §12.6)
        return first
    # the lower run (~1e-8 below the upper value: the same sum on the law shifted down). Once the upper run
    # passed, the bracket is returned whatever its width (lower 0 if the run declines), so the upper value
    # is the same in every mode: get_delta's is the probe's (§12.6)
    full = two_atom.bracket(law, gamma, n, upper=False)
    lower = max(full.lower if full is not None else 0.0, one.lower if one is not None else 0.0)
    return replace(first, lower=min(lower, first.upper))


def upper_value(law: Law, gamma: float, n: int, rel_tol: float, threads: int, scale: float, h_ratio: float) -> float:
    """Certified upper value only (:func:`certify` in :class:`UpperOnly` mode), floored at 5e-324."""
    return max(certify(law, gamma, n, rel_tol, threads, UpperOnly(scale, h_ratio)).upper, TINY)


__all__ = ["certify", "exact_two_atoms", "in_upper_first_sweep", "lattice_for_two_atoms", "upper_first_sweep",
           "upper_value"]
