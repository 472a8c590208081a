"""The plain lattice path of the certified shuffle accountant: one law's bracket refined over grids
(mode :class:`Bracket`) or one upper pass (mode :class:`UpperOnly`), docs/accountant.md §6.1-§6.2.

No blocks, no far tail, no E[L_+] cap here (the driver, :mod:`.driver`, adds them).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from sharpdp.shuffle.accountant.closed_forms import law_closed_form
from sharpdp.shuffle.accountant.lattice import PassResult, PosMgf, choose_B, choose_T, exact_clamp_depth, lattice_pass
from sharpdp.shuffle.accountant import limits, plain_warm, settled_start
from sharpdp.shuffle.accountant.limits import ATOM_P_SLOW, ATOM_SLOW_RATIO, J_LO, K_MAX, TINY, VALUE_FLOOR
from sharpdp.shuffle.accountant.results import Coarsen, Grid, LawBracket
from sharpdp.shuffle.accountant.spacing import atom_spacing, snap
from sharpdp.shuffle.accountant.thread_flag import ThreadFlag
from sharpdp.shuffle.laws import Law


#: refine stops once a pass at the clamp's size cap has its clamp term above this share of its upper value
_CLAMP_BOUND = 0.9
#: refinement rounds allowed past ``max_rounds`` while the bracket is unmet and each pass is small (FFT length
#: and lattice nodes at most _CHEAP, about a millisecond): atom laws whose block values spread far below 0
#: start at a grid step sd/4 much coarser than the value needs (docs/accountant_atoms.md §2)
_EXTRA_ROUNDS = 4
_CHEAP = 1 << 16
#: atom laws: the power of h assumed for the relative gap before two refined passes measure it, and the
#: largest refinement factor per round (docs/accountant_atoms.md §11)
_P_ATOM = 1.25
_AIM_MAX = 16.0
#: ... for sums of at least this many terms (fewer: the gap was measured ~h^2, the rule of any law)
_MANY = 256
#: upper values first on atom laws of at least _MANY terms: the refinement stops once the upper value's estimated
#: distance to its limit in h (second order, from the last two passes' main parts) is at most this share of rel_tol
#: times the value (docs/accountant_atoms.md §14); its next passes would only tighten the lower value
_SETTLED = 0.1
#: ... the two passes' steps at least this far apart (a Richardson pair)
_SETTLED_RATIO = 2.0
#: consecutive lower-only passes once the upper value has settled, before a full pass checks it again
#: (docs/accountant_tail.md §46.1)
_LOWER_RUNS = 2


#: per thread: True inside :func:`no_lower_values`
_NO_LOWER = ThreadFlag()


@contextlib.contextmanager
def no_lower_values() -> Iterator[None]:
    """Within this context (per thread) upper-first refinements (:class:`Bracket` ``upper_first``) of atom laws also
    run a full pass's upper half alone where its upper value settles whatever its lower value
    (docs/accountant_atoms.md §14): the same upper values, no lower value reported there. For callers that read no
    lower value (a privacy profile's sweep); a dominating pair's sweep reads the lower values it gets (their gaps
    enter ``cover_upper``, docs/composition.md §2) and stays outside, except under docs/composition.md §2.26's rule
    (a pure-LDP round's pair reads no lower value and takes its upper values first inside)."""
    with _NO_LOWER.set():
        yield


@dataclass(frozen=True)
class Bracket:
    """Mode of :func:`certify`: lower and upper values, refined to the relative target.

    ``negligible``: refinement stops once the upper value is below it (the caller's maximum over
    laws is already larger); ``max_rounds`` bounds the refinements (up to ``_EXTRA_ROUNDS`` more
    while the bracket is unmet and the passes are small, docs/accountant_atoms.md §2), ``h0``
    caps the first grid step.
    """

    negligible: float = 0.0
    max_rounds: int = 6
    h0: float | None = None
    #: get_epsilon's decision mode (docs/accountant_atoms.md §8): refinement stops after the first
    #: certified pass whose bracket so far (the largest lower and the smallest upper value), seen in
    #: the caller's units through ``unit``, makes ``decide(lower, upper)`` true. The passes run are
    #: then a prefix of those run without it (the same grids and clamps, in the same order).
    decide: Callable[[float, float], bool] | None = None
    #: (lower, upper, grid) of this mode's problem -> (lower, upper) in the caller's units (None: the same)
    unit: Callable[[float, float, Grid | None], tuple[float, float]] | None = None
    #: upper values first (docs/composition.md §2.5): a refined pass that the step rule predicts to be the last
    #: runs without its lower lattice law and ends the refinement (lower value 0: none computed)
    upper_first: bool = False

    def scaled(self, f: float) -> Bracket:
        """The same mode for a problem whose values are 1/f times these (the blocks' units)."""
        return replace(self, negligible=self.negligible * f)

    def decided(self, lower: float, upper: float, grid: Grid | None) -> bool:
        """True when ``decide`` is set and holds for this bracket (in the caller's units)."""
        if self.decide is None:
            return False
        if self.unit is not None:
            lower, upper = self.unit(lower, upper, grid)
        return self.decide(lower, upper)


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


def _choose_B(law: Law, n: int, target: float) -> float:
    """The lower clamp: :func:`choose_B`, or the depth where clamping is exact when that is less
    (then the pass charges no tail_B, docs/accountant_atoms.md §1)."""
    return min(choose_B(law, target), exact_clamp_depth(law, n))


def _shrink_B(law: Law, n: int, B: float, h: float, pm: PosMgf, target: float) -> float:
    """The smallest B 2^-j (j <= 20, at least h) whose clamp charge, estimated with this pass's
    bounds ``pm``, is at most ``target`` (B itself when none): the next pass charges its own
    (docs/accountant_atoms.md §5). A lattice spanning (n - 1) sup L below 0 costs the engine's
    kernels time in proportion; a Chernoff charge far below the target needs much less."""
    out = B
    for j in range(1, 21):
        b = B * 2.0 ** -j
        if b < h:
            break
        p, e = law.prob_below(-b)
        if pm.clamp_charge(b, p + e, n) > target:
            break
        out = b
    return out


def certify_law_mode(law: Law, gamma: float, n: int, rel_tol: float, threads: int, mode: Mode) -> LawBracket:
    """The lattice engine's value for one law (no blocks, no far tail, no cap): the law-shape
    closed forms, else a refined bracket (:class:`Bracket`) or one upper pass (:class:`UpperOnly`)."""
    closed = law_closed_form(law, gamma, n)
    if closed is not None:
        return closed
    if isinstance(mode, UpperOnly):
        tgt = 0.05 * rel_tol * mode.scale
        sd = law.std()
        res = pass_fit(law, gamma, n, sd * mode.h_ratio, choose_T(law, tgt), _choose_B(law, n, tgt), rel_tol,
                        threads, False)
        return LawBracket(res.lower, res.upper, grid=res.grid, h_ratio=res.grid.h / sd, terms=res.terms)
    return refine(law, gamma, n, rel_tol, threads, mode)


def certify_law(law: Law, gamma: float, n: int, rel_tol: float, threads: int, max_rounds: int = 6,
                 h0: float | None = None, negligible: float = 0.0) -> LawBracket:
    """The lattice engine's refined bracket for one law (no blocks, no far tail, no cap)."""
    return certify_law_mode(law, gamma, n, rel_tol, threads, Bracket(negligible, max_rounds, h0))


def _aim(ratio: float, gap: float, h: float, gaps: list[tuple[float, float]]) -> float:
    """The factor refine divides an atom law's step h by: the step where a relative gap ~ C h^p,
    ``gap`` at h (``ratio`` = gap / target), meets the target, p measured between the last earlier
    pass of ``gaps`` (step, relative gap) and this one (clamped to [1, 2]), or _P_ATOM without one;
    times 1.05, within [1.3, _AIM_MAX] (docs/accountant_atoms.md §11)."""
    p = _P_ATOM
    if gaps:
        h1, g1 = gaps[-1]
        if h1 > h and g1 > 0.0 and gap > 0.0:
            p = math.log(g1 / gap) / math.log(h1 / h)
            if p < 1.0 and limits.ATOM_AIM_SLOW and ratio <= ATOM_SLOW_RATIO:
                # a gap near its target shrinking slower than h: aimed as if it shrank like h^ATOM_P_SLOW (farther
                # from the target the general rule's small steps below; docs/accountant_tail.md §44.3, a choice of steps)
                return min(max(1.05 * ratio ** (1.0 / ATOM_P_SLOW), 1.3), 4.0)
            if p < 1.0:  # the gap does not follow a power of h (a grid in resonance with the atoms): the
                return min(max(1.05 * math.sqrt(ratio), 1.3), 4.0)  # general rule's smaller steps
            p = min(p, 2.0)
    return min(max(1.05 * ratio ** (1.0 / p), 1.3), _AIM_MAX)


def refine(law: Law, gamma: float, n: int, rel_tol: float, threads: int, mode: Bracket) -> LawBracket:
    """Refinement of the grid and clamps (module step I) until the bracket meets rel_tol; stops
    refining once upper <= mode.negligible (the caller's maximum over laws is already certified
    to be larger by a wide margin), and once a pass's FFT round-off alone exceeds the rel_tol budget
    (docs/accountant.md §6.3: the best certified bracket so far, possibly wider than rel_tol). Within a sweep
    (:func:`.plain_warm.warm_sweep`) a refinement without an absolute target or a decision starts from the last
    one of its law family (docs/composition.md §2.18: only the passes run change)."""
    key = plain_warm.family(law, gamma, n, rel_tol) if mode.negligible <= 0.0 and mode.decide is None \
        and plain_warm.active() else None
    steps: dict = {}  # (the final lower step and the settled step, docs/composition.md §2.25, §2.27)
    out = _refine(law, gamma, n, rel_tol, threads, mode, None if key is None else plain_warm.get(key), steps,
                  settled_start.get(key))
    if key is not None and out.grid is not None:
        plain_warm.put(key, law.std(), out.grid.h, out.grid.T, out.grid.B, out.upper, out.lower,
                       out.terms.get(_WARM_GAP), steps)
        settled_start.record(key, law.std(), out.upper, steps)
    return out


def _refine(law: Law, gamma: float, n: int, rel_tol: float, threads: int, mode: Bracket,
            warm: plain_warm.Warm | None, steps: dict, settled: settled_start.Settled | None = None) -> LawBracket:
    """:func:`refine`'s passes; ``warm``: where main's refinement would need more than two passes to reach the state's
    step (:meth:`.plain_warm.Warm.step`, at most main's first step), the first pass at that step and at clamps for
    MARGIN times the target of its predicted value (docs/composition.md §2.18); else main's first pass. Where
    :func:`.plain_warm.settled_start` holds, the first pass at the family's settled step and the lower value alone after
    it (docs/composition.md §2.25). ``settled``: the family's last settled test, whose step starts a sweep's upper value
    first with one pass of the upper law alone (docs/composition.md §2.27). Fills ``steps`` with the final lower value's
    step ("lower") and the step at which the upper value was taken as settled ("settled"), for the sweep's state."""
    sd = law.std()
    # a coarse first round (cheap) estimates the value; the clamp and h are then set from it
    h = sd / 4.0 if mode.h0 is None else min(mode.h0, sd / 4.0)
    # an atom law whose values cluster just below the multiples of a spacing: steps dividing it (a choice of steps,
    # docs/accountant_tail.md §46.2)
    spacing = atom_spacing(law) if limits.ATOM_SPACING_SNAP and (law.atomic and n >= _MANY or not law.atomic) \
        else None
    h = snap(h, spacing)
    # moderate first clamp, tightened below once the value is known; E[L_+] >= D_up bounds the value's
    # scale (a target near it would put T at 0 and make the first round's value the clamp term alone)
    tgt = 1e-4 * rel_tol * sd
    cap0 = law.tail_upper(0.0)
    if tgt > 1e-2 * cap0:
        tgt = 1e-4 * rel_tol * cap0
    h_w = snap(min(h, warm.step(sd, rel_tol)), spacing) if warm is not None else h
    # a sweep reading no lower value, the family's last gap measured: upper values alone (docs/composition.md §2.19)
    sweep_up = plain_warm.upper_ready(warm, rel_tol, mode.upper_first and _NO_LOWER.on)
    if warm is not None and mode.upper_first and _NO_LOWER.on and law.atomic and n >= _MANY \
            and settled_start.ready(settled) and settled is not None:
        # the family's settled step: one pass of the upper law alone there (docs/composition.md §2.27)
        s_up = _upper_alone(law, gamma, n, rel_tol, threads, warm, sd, snap(settled_start.step(settled, sd, rel_tol),
                            spacing), lambda u: settled_start.accepts(settled, warm.upper, u))
        if s_up is not None:
            steps[settled_start.RULE] = True
            return _upper_only(s_up, sd, _START_NOTE)
    if sweep_up and warm is not None:
        got = _warm_upper(law, gamma, n, rel_tol, threads, warm, sd, spacing)
        if got is not None:
            return got
    # main's refinement reaches h_w in at most two passes (its first, then one step of at most 4, or _AIM_MAX for
    # atom-law sums, docs/accountant_atoms.md §11): warm only where it needs more (docs/composition.md §2.18), or
    # (§2.19) wherever the family's last gap was measured in a sweep reading no lower value
    # a pair's sweep, an atom-law sum whose family's upper value settled at a recorded step: the first pass there, the
    # lower value alone after it (docs/composition.md §2.25)
    w_settled = plain_warm.settled_start(warm, law.atomic and n >= _MANY and not mode.upper_first,
                                       not _NO_LOWER.on)
    if w_settled and warm is not None:
        h_w = snap(min(h, warm.settled_ratio * sd), spacing)
    if warm is not None and (h > (_AIM_MAX if law.atomic and n >= _MANY else 4.0) * h_w or sweep_up or w_settled):
        h = h_w  # (a choice of the first pass's step and clamps)
        tw = plain_warm.MARGIN * 0.05 * rel_tol * max(0.5 * warm.predicted(), VALUE_FLOOR)
        T_near = plain_warm.clamp_near(law, tw, warm.t_ratio * sd)
        T, B = choose_T(law, tw) if T_near is None else T_near, _choose_B(law, n, tw)
    else:
        T, B = choose_T(law, tgt), _choose_B(law, n, tgt)
    best: PassResult | None = None
    # a sweep reading no lower value, a refinement with an absolute target: its first pass's upper law alone first
    # (docs/composition.md §2.19 (f))
    neg_first = limits.PLAIN_NEG_UPPER and mode.negligible > 0.0 and mode.decide is None and mode.upper_first \
        and plain_warm.active() and _NO_LOWER.on
    best_lower = 0.0
    widened = False
    prev_upper: float | None = None  # the last certified pass's upper value
    prev_pass: PassResult | None = None  # the last certified pass (upper values first: docs/accountant_atoms.md §14)
    gaps: list[tuple[float, float]] = []  # atom laws: (h, relative discretisation gap) of the passes refined from
    cheap = False  # the last pass was certified and small (extra rounds past max_rounds, below)
    last = False  # upper values first: the step rule predicts the next pass to be the last (docs/composition.md §2.5)
    lower_only = False  # the upper value has settled: the next pass runs the lower law alone (accountant_tail.md §46.1)
    w_first = False  # §2.25: the last pass was its first pass and the lower value goes on alone
    # ... and the family's last lower value came from a finer step: the first pass runs its upper law alone
    up_start = w_settled and warm is not None and warm.lower_step(sd, rel_tol) < h and warm.upper_runs < UPPER_START_RUNS
    lower_runs = 0  # consecutive lower-only passes (at most _LOWER_RUNS, then a full pass checks the upper value)
    for _rnd in range(mode.max_rounds + 1 + _EXTRA_ROUNDS):
        if _rnd > mode.max_rounds and not cheap:
            break
        cheap = False
        Tmax = 0.5 * K_MAX * h / J_LO
        T_capped, B_capped = T > Tmax, B > Tmax
        T, B = min(T, Tmax), min(B, Tmax)
        if neg_first:
            neg_first = False
            first = lattice_pass(law, gamma, n, h, T, B, rel_tol, threads, lower=False)
            if not isinstance(first, Coarsen) and first.upper < max(VALUE_FLOOR, mode.negligible):
                # the full first pass would end the refinement with this upper value (below the target): the same
                # upper value, no lower value computed
                return _upper_only(first, sd, _NEG_NOTE)
        if last and best is not None:
            up_only = _upper_pass(law, gamma, n, h, T, B, Tmax, rel_tol, threads)
            if up_only is not None:  # the upper value of the pass the bracket runs here (docs/composition.md §2.5)
                if prev_pass is not None and _upper_settled(prev_pass, up_only, best.upper, rel_tol):  # (§2.27's state)
                    steps[settled_start.CHECKED] = _checked(prev_pass, up_only)
                best = up_only if up_only.upper < best.upper else best
                return _upper_only(best, sd, "upper value first (docs/composition.md §2.5)")
        last = False
        if mode.upper_first and prev_pass is not None and best is not None and law.atomic and n >= _MANY \
                and _NO_LOWER.on:
            s_pass = _settled_pass(law, gamma, n, h, T, B, Tmax, rel_tol, threads, prev_pass, best)
            if s_pass is not None:  # the upper value the full pass would end with (docs/accountant_atoms.md §14)
                steps[settled_start.CHECKED] = _checked(prev_pass, s_pass)
                best = s_pass if s_pass.upper < best.upper else best
                return _upper_only(best, sd, _SETTLED_NOTE)
        if up_start and warm is not None:
            up_start = False
            u_pass = _upper_pass(law, gamma, n, h, T, B, Tmax, rel_tol, threads)
            if u_pass is not None:  # §2.25: the upper value alone at the settled step, then the lower value alone
                best, prev_pass, prev_upper, lower_only = u_pass, u_pass, u_pass.upper, True
                steps["settled"] = u_pass.grid.h
                steps["upper_start"] = True
                h = snap(warm.lower_step(sd, rel_tol), spacing)
                continue
        res = None
        if lower_only and best is not None:
            res = _lower_pass(law, gamma, n, h, T, B, rel_tol, threads, best)
        was_lower = isinstance(res, PassResult)
        if res is None:
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
        cheap = res.grid.N <= _CHEAP and math.ceil((T + B) / h) <= _CHEAP
        if best is None or res.lower > best_lower:
            steps["lower"] = res.grid.h
        if w_settled and best is None:
            steps["settled"] = res.grid.h  # (§2.25: carried where this first pass ends the refinement)
        best_lower = res.lower if best is None else max(best_lower, res.lower)
        if best is None or res.upper < best.upper:
            best = res
        est = max(res.lower, 0.5 * res.main, VALUE_FLOOR)
        tgt = 0.05 * rel_tol * est
        redo = False
        if res.tail_T > tgt and T < Tmax:
            T, redo = choose_T(law, tgt), True
        shrink = None  # (B shrunk for the next pass only: computed once the loop goes on, the same floats)
        if res.tail_B > tgt and B < Tmax:
            B, redo = _choose_B(law, n, tgt), True
        elif res.pos_mgf is not None:
            shrink = (h, res.pos_mgf, 0.5 * tgt)
        if best_lower > 0 and best.upper - best_lower <= rel_tol * best_lower:
            break
        if mode.decided(best_lower, best.upper, best.grid):
            break  # the caller's comparison is decided (get_epsilon's probes, docs/accountant_atoms.md §8)
        if best.upper < max(VALUE_FLOOR, mode.negligible):
            break  # far below any delta of interest: keep the certified value, skip refinement
        if T_capped and res.tail_T > _CLAMP_BOUND * res.upper:
            # the upper clamp is at its size cap and its term is most of the upper value: a finer step
            # lowers the cap (Tmax is proportional to h) and tail_T = E[(L - T)_+] is non-increasing
            # in T, so no finer pass has an upper value below this tail_T > 0.9 of this pass's: stop
            # (every pass is certified; this costs at most 1/0.9 on the upper value). Heavy-tailed
            # laws at tiny delta otherwise spend every round at the size cap (tens of seconds each).
            break
        if B_capped and res.lower == 0.0 and res.tail_B > res.upper and prev_upper is not None \
                and res.upper >= (1.0 - rel_tol) * prev_upper:
            # the lower clamp is at its size cap and its term alone exceeds the upper value, so the
            # lower value is 0; a finer step lowers that cap (its term E[(-L - B)_+]-type bound is
            # non-increasing in B), and the last refinement moved the upper value by less than
            # rel_tol: stop with the certified upper value (the bracket stays open, see report())
            break
        if not redo and res.terms.get("fft_roundoff", 0.0) + res.terms.get("lower_fft_roundoff", 0.0) \
                > rel_tol * best.upper:
            # the clamps are set and this pass's round-off alone (upper plus lower) is already wider than
            # rel_tol allows for any value below the best upper value; it grows with the FFT length, which
            # a finer step or a wider clamp only increases: stop with the best certified bracket so far
            # (docs/accountant.md §6.3)
            break
        prev_upper = res.upper
        lo, up = res.lower, res.upper
        if mode.upper_first and not redo and not (lo > 0 and up - lo <= 0.8 * rel_tol * lo) and law.atomic \
                and n >= _MANY and res.tail_T <= tgt and _upper_settled(prev_pass, res, best.upper, rel_tol):
            # the refinement would go on for the lower value alone: the upper value has settled (its estimated
            # distance to its limit in h is within _SETTLED rel_tol); certified as every pass (docs/accountant_atoms.md
            # §14), lower 0 (none reported: the bracket's gap is still above rel_tol)
            steps[settled_start.CHECKED] = _checked(prev_pass, res)
            return _upper_only(best, sd, _SETTLED_NOTE)
        if was_lower:
            lower_runs += 1
            lower_only = lower_runs < _LOWER_RUNS
        else:
            # the upper value has settled (an estimate, docs/accountant_atoms.md §14): the next passes refine the
            # lower value alone, the best upper value kept (docs/accountant_tail.md §46.1)
            lower_runs = 0
            w_first = w_settled and prev_pass is None and lo > 0 and up - lo <= LOWER_AFTER_WARM * rel_tol * lo  # (§2.25)
            lower_only = limits.LOWER_ONLY_SETTLED and not mode.upper_first and law.atomic and n >= _MANY \
                and not redo and res.tail_T <= tgt and (_upper_settled(prev_pass, res, best.upper, rel_tol) or w_first)
            if lower_only:
                steps["settled"] = res.grid.h
            w_first = w_first and lower_only and prev_pass is None
            prev_pass = res
        if lo > 0 and up - lo <= 0.8 * rel_tol * lo:
            if not redo:
                break
            # grid fine enough; only the clamp changes
            last = mode.upper_first
        else:
            # both discretisation biases are second order in h for a smooth law (the clamp terms
            # excluded); an atom law's gap shrinks more slowly: the step aims at the target at once
            # (docs/accountant_atoms.md §11)
            disc = up - res.tail_T - lo - res.tail_B
            ratio = disc / (0.7 * rel_tol * lo) if lo > 0 else 16.0
            if law.atomic and n >= _MANY and lo > 0 and disc > 0:
                f = _aim(ratio, disc / lo, res.grid.h, gaps)
                gaps.append((res.grid.h, disc / lo))
                aimed = f < _AIM_MAX and f != 4.0  # (4.0: the cap of _aim's general rule)
            else:
                f = min(max(1.05 * math.sqrt(ratio), 1.3), 4.0)
                aimed = f < 4.0
            h = snap(h / f, spacing)
            if w_first and warm is not None and warm.lower_ratio > 0.0:
                # the lower value alone after §2.25's first pass: at most the family's last final lower step
                # (coarsened by its final gap as §2.18's warm step; a choice of steps)
                h = min(h, snap(warm.lower_step(sd, rel_tol), spacing))
            # the step aims at the target (not capped) and the last pass had a lower value: the next pass is
            # predicted to be the last (docs/composition.md §2.5)
            last = mode.upper_first and aimed and lo > 0
        if shrink is not None:
            B = _shrink_B(law, n, B, *shrink)
    if best is None:
        raise RuntimeError("accountant: no grid fits the size limits")
    return LawBracket(best_lower, max(best.upper, TINY), grid=best.grid, h_ratio=best.grid.h / sd, terms=best.terms)


_SETTLED_NOTE = "upper value settled (docs/accountant_atoms.md §14)"
_WARM_NOTE = "upper value at the sweep's aimed step (docs/composition.md §2.19)"
_START_NOTE = "upper value at the family's settled step (docs/composition.md §2.27)"
_NEG_NOTE = "upper value below the absolute target at the first pass (docs/composition.md §2.19 (f))"
_WARM_GAP = "warm_predicted_gap"  # (the terms' key of §2.19's predicted gap, read by refine's record)
#: §2.25: the first pass's relative gap up to which its upper value is taken as settled (an estimate)
LOWER_AFTER_WARM = 4.0
#: ... refinements in a row started with the upper lattice law alone (§2.25 (b)); then one full first pass measures the
#: gap at the settled step again (it may meet the bracket alone)
UPPER_START_RUNS = 3


def _checked(prev: PassResult | None, res: PassResult) -> tuple[float, float]:
    """(step, relative distance) of a settled test that held against ``prev`` (never None there: the test needs it;
    docs/composition.md §2.27's state)."""
    return res.grid.h, settled_start.settled_distance(prev.upper, prev.grid.h, res.upper, res.grid.h) / res.upper


def _warm_upper(law: Law, gamma: float, n: int, rel_tol: float, threads: int, warm: plain_warm.Warm, sd: float,
                spacing: float | None) -> LawBracket | None:
    """A sweep's value from one pass of the upper lattice law alone (docs/composition.md §2.19): at the step
    :meth:`~.plain_warm.Warm.upper_step` aims at WARM_UPPER_AIM rel_tol from the family's last measured gap and at the
    warm clamps (§2.18's, for MARGIN times refine's target of the predicted value); kept where it fits the size caps
    uncapped, its clamp terms would need no refinement (refine's target from this pass, 0.05 rel_tol max(0.5 main,
    VALUE_FLOOR), the lower clamp's only where not at its cap, as :func:`_upper_pass`), its FFT round-off is within
    that target too, and :func:`~.plain_warm.upper_accepts` holds; else None (the caller's refinement runs). The
    value is the certified upper value of that pass (docs/accountant.md §6.1-§6.2), lower 0 (none computed)."""
    h, gap = warm.upper_step(sd, rel_tol)
    res = _upper_alone(law, gamma, n, rel_tol, threads, warm, sd, snap(h, spacing),
                       lambda u: plain_warm.upper_accepts(warm, u))
    if res is None:
        return None
    out = _upper_only(res, sd, _WARM_NOTE)
    out.terms[_WARM_GAP] = gap
    return out


def _upper_alone(law: Law, gamma: float, n: int, rel_tol: float, threads: int, warm: plain_warm.Warm, sd: float,
                 h: float, accept: Callable[[float], bool]) -> PassResult | None:
    """One pass of the upper lattice law alone at step ``h`` and the warm clamps (docs/composition.md §2.18's, for
    MARGIN times refine's target of the predicted value), kept where it fits the size caps uncapped, its clamp terms
    would need no refinement (refine's target from this pass, 0.05 rel_tol max(0.5 main, VALUE_FLOOR), the lower
    clamp's only where not at its cap, as :func:`_upper_pass`), its FFT round-off is within that target too, and
    ``accept(upper)`` holds; else None. Its upper value is certified (docs/accountant.md §6.1-§6.2)."""
    tw = plain_warm.MARGIN * 0.05 * rel_tol * max(0.5 * warm.predicted(), VALUE_FLOOR)
    T_near = plain_warm.clamp_near(law, tw, warm.t_ratio * sd)
    T, B = choose_T(law, tw) if T_near is None else T_near, _choose_B(law, n, tw)
    Tmax = 0.5 * K_MAX * h / J_LO
    if T > Tmax:
        return None
    res = lattice_pass(law, gamma, n, h, T, min(B, Tmax), rel_tol, threads, lower=False)
    if isinstance(res, Coarsen):
        return None
    tgt = 0.05 * rel_tol * max(0.5 * res.main, VALUE_FLOOR)
    if res.tail_T > tgt or (res.tail_B > tgt and B < Tmax) or res.terms.get("fft_roundoff", 0.0) > tgt \
            or not accept(res.upper):
        return None
    return res


def _upper_only(best: PassResult, sd: float, note: str) -> LawBracket:
    """The refinement's value without a lower value: the best (smallest) certified upper value, lower 0 (none
    computed; ``lower_skipped`` marks it for the report and the profile's cache, docs/composition.md §2.5)."""
    return LawBracket(0.0, max(best.upper, TINY), grid=best.grid, h_ratio=best.grid.h / sd,
                      terms=dict(best.terms, note=note, lower_skipped=True))


def _upper_settled(prev: PassResult | None, res: PassResult, best_upper: float, rel_tol: float) -> bool:
    """True when the upper value of refine's pass ``res`` is estimated within _SETTLED rel_tol ``best_upper`` of its
    limit as h -> 0 (docs/accountant_atoms.md §14): the hat law's main part is a mean-preserving spread of each block
    value by at most h, whose effect on E[S_+] is second order in h where the sum's law is smooth at the scale h, so
    up(h) - up(0) ~ (up(h_prev) - up(h)) h^2 / (h_prev^2 - h^2) from the previous certified pass ``prev`` (a step at
    least _SETTLED_RATIO times coarser, an upper value not below this one; the caller requires this pass's clamp
    term settled). An estimate: it chooses which passes run, never what a pass certifies."""
    if prev is None or not (prev.grid.h >= _SETTLED_RATIO * res.grid.h) or not (prev.upper >= res.upper > 0.0):
        return False
    return settled_start.settled_distance(prev.upper, prev.grid.h, res.upper, res.grid.h) \
        <= _SETTLED * rel_tol * best_upper


def _settled_pass(law: Law, gamma: float, n: int, h: float, T: float, B: float, Tmax: float, rel_tol: float,
                  threads: int, prev: PassResult, best: PassResult) -> PassResult | None:
    """:func:`refine`'s next full pass without its lower lattice law, where its upper value settles whatever its lower
    value (docs/accountant_atoms.md §14): its clamps need no refinement at the target 0.05 rel_tol max(0.5 main,
    VALUE_FLOOR) (at most refine's, whose estimate also reads the lower value) and :func:`_upper_settled` holds
    against ``prev``; then every way the full pass could end the refinement returns the same upper value. None
    otherwise (the caller runs the full pass)."""
    res = lattice_pass(law, gamma, n, h, T, B, rel_tol, threads, lower=False)
    if isinstance(res, Coarsen):
        return None
    tgt = 0.05 * rel_tol * max(0.5 * res.main, VALUE_FLOOR)
    if res.tail_T > tgt or (res.tail_B > tgt and B < Tmax):
        return None
    return res if _upper_settled(prev, res, min(best.upper, res.upper), rel_tol) else None


def _lower_pass(law: Law, gamma: float, n: int, h: float, T: float, B: float, rel_tol: float, threads: int,
                best: PassResult) -> PassResult | Coarsen | None:
    """:func:`refine`'s next pass with its lower lattice law alone, once the upper value has settled
    (docs/accountant_tail.md §46.1): the pass's certified lower value with the best certified upper value so far (its
    ``upper`` and ``main``; the same clamp T, so the same ``tail_T``), or the :class:`Coarsen` outcome; None (the
    caller runs the full pass) where the lower law has no mass above 0."""
    res = lattice_pass(law, gamma, n, h, T, B, rel_tol, threads, upper=False)
    if isinstance(res, Coarsen):
        return res
    if res.lower <= 0.0 or res.terms.get("N_lower", 0) == 0:
        return None
    return replace(res, upper=best.upper, main=best.main,
                   terms=dict(best.terms, **{k: v for k, v in res.terms.items() if "lower" in k or k == "N_lower"}))


def _upper_pass(law: Law, gamma: float, n: int, h: float, T: float, B: float, Tmax: float, rel_tol: float,
                threads: int) -> PassResult | None:
    """:func:`refine`'s next pass without its lower lattice law, where it ends the refinement whatever its lower
    value (docs/composition.md §2.5): None (the caller runs the full pass) when it needs a coarser grid or a clamp
    could be refined after it (its clamp term above 0.05 rel_tol of the smallest estimate refine could form,
    max(0.5 main, VALUE_FLOOR), below its cap)."""
    res = lattice_pass(law, gamma, n, h, T, B, rel_tol, threads, lower=False)
    if isinstance(res, Coarsen):
        return None
    tgt = 0.05 * rel_tol * max(0.5 * res.main, VALUE_FLOOR)  # (refine's est = max(lower, 0.5 main, floor) >= it)
    if (res.tail_T > tgt and T < Tmax) or (res.tail_B > tgt and B < Tmax):
        return None
    return res


def pass_fit(law: Law, gamma: float, n: int, h: float, T: float, B: float, rel_tol: float, threads: int,
              lower: bool) -> PassResult:
    """lattice_pass at step h, or at the finest step that fits the size caps."""
    for _ in range(60):
        Tmax = 0.5 * K_MAX * h / J_LO
        out = lattice_pass(law, gamma, n, h, min(T, Tmax), min(B, Tmax), rel_tol, threads, lower)
        if not isinstance(out, Coarsen):
            return out
        h = max(2.0 * h, out.h_fit) if out.h_fit <= h else out.h_fit
    raise RuntimeError("accountant: no grid fits the size limits")


__all__ = ["Bracket", "Mode", "UpperOnly", "certify_law", "certify_law_mode", "no_lower_values"]
