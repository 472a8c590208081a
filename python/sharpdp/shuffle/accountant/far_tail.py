"""Far-tail ("single big jump") treatment of the certified accountant (proof: docs/accountant_tail.md).

For a law L with a heavy right tail (the lognormal laws of the blanket-mixed Gaussian and of the
Gaussian randomizer), the plain accountant clamps L at a T with E[(L - T)_+] negligible, which
takes T at thousands of standard deviations: a huge lattice and FFT. Here the clamp T0 is
moderate and the far tail is added back in closed form. With G_i = B_i L_i, S = sum_i G_i,
A = sum_i min(G_i, T0), X_i = (G_i - T0)_+, J = sum_i X_i (docs/accountant_tail.md §2):

    S_+ = A_+ + (J - A_-)_+,
    sum_i (X_i - A_-)_+ <= (J - A_-)_+ <= sum_i (X_i - A_-)_+ + sum_{i<j} min(X_i, X_j),

and on {X_1 > 0}, A = T0 + A' with A' = sum_{j >= 2} min(G_j, T0) independent of X_1, so

    E[(X_1 - A_-)_+] = gamma E[phi(A')],   phi(a) = tau(max(T0, -a)),  tau(t) = E[(L - t)_+].

Hence (docs/accountant_tail.md §2-§7), with Body the engine's bracket of E[A_+]/(n gamma) at the clamp T0:

    D_up <= Body_up + E[phi(A')]_up + (n - 1) gamma / 2 * int_0^inf P(L > T0 + t)^2 dt,
    D_up >= Body_lo + E[phi(A')]_lo - tau_low(B) P(S^B_{n-1} > B)        (the lower clamp's penalty, §5),

where E[phi(A')] is bracketed through the split phi = phi_c - c (a + T0)_+ (phi_c convex, c >= P(L > T0)):
the hat (convex-order upper) and centroid (convex-order lower) lattice laws of clamp(L, -B, T0), summed n - 1
times by one untilted FFT each, with the same round-off bounds as the engine and Chernoff bounds on the exact
lattice laws outside the window (§4; :mod:`.jump`). Size caps and memory at n = 1e8 - 1e9: §11.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from sharpdp.shuffle.accountant import concentrated, limits
from sharpdp.shuffle.accountant.chernoff import Chernoff, body_chernoff, lower_tail_penalty, saddle_excess_estimate
from sharpdp.shuffle.accountant.concentrated import closed_at_clamp  # (docs/accountant_tail.md §24)
from sharpdp.shuffle.accountant.jump import JumpTerm, TailCoarsen, jump_term, pair_integral_up, tv_floor_estimate
from sharpdp.shuffle.accountant.far_tail_grid import choose_T0, count_clamp as _count_clamp, drift_clamp as _drift_clamp
from sharpdp.shuffle.accountant.far_tail_grid import h_first_group as _h_first_group, normal_value as _normal_value
from sharpdp.shuffle.accountant.far_tail_grid import pow2 as _pow2, whole_share
from sharpdp.shuffle.accountant.far_tail_applies import applicable
from sharpdp.shuffle.accountant.far_tail_floor import floor_bracket
from sharpdp.shuffle.accountant.far_tail_keep import miss_over, next_factor, scaled_accept, skip_round as _skip_round
from sharpdp.shuffle.accountant.far_tail_keep import far_factor
from sharpdp.shuffle.accountant.far_tail_result import FarTailBracket, law_bracket as _bracket, positive_prob_up
from sharpdp.shuffle.accountant.far_tail_top import clamp_redo, top_upper
from sharpdp.shuffle.accountant.far_tail_upper import UPPER_REDO, penalty as _penalty, skip_round as _skip_b  # (§77)
from sharpdp.shuffle.accountant.far_tail_upper import skip_bracket_round as _skip_br  # (§77.6)
from sharpdp.shuffle.accountant.far_tail_warm import closed_T0 as _closed_T0, sweep_T0  # (§63)
from sharpdp.shuffle.accountant.far_tail_steps import LOOSE_STEP_MAX, LOOSE_STEP_N, body_spacing, body_step, clamp_shift
from sharpdp.shuffle.accountant.far_tail_steps import body_lower as _body_lower, first_factor, first_step
from sharpdp.shuffle.accountant.far_tail_steps import jump_decides, laws as _laws, loose_step as _loose_step, pair_keep
from sharpdp.shuffle.accountant.far_tail_steps import divisor, first_aim as aim, lower_only_next, refits
from sharpdp.shuffle.accountant.lattice import LatticeLaws, PassResult, lattice_pass
from sharpdp.shuffle.accountant.limits import H_BULK, J_LO, K_MAX, PAIR_FRAC, VALUE_FLOOR
from sharpdp.shuffle.accountant.results import Coarsen, LawBracket
from sharpdp.shuffle.laws import Law


FIRST_GROUP_GAP = 5.0  # §28's run only where the bracket misses this many rel_tol (below it measured no gain; speed)
T0_FIT_MARGIN = 1.2  # §28's clamp: K_MAX / J_LO first-group steps over this (room for B and T0's rounding up)
KEEP_N = 2**15  # a round's FFT length from which §27's rules spare its redo / refinement (docs/accountant_tail.md §27)
BODY_LEAP = 4.0  # a body pass whose gap exceeds this many times its share divides the step by 4 (§31.2; speed)
HALVE_N = 2**19  # a refinement to an FFT this long or longer halves the step at a time (docs/accountant_tail.md §30)
# the body pass's accuracy target for keeping its cheap runs adds this times rel_tol times the jump term's lower value
# (docs/accountant_tail.md §34.3; speed: where the body is a tiny share of the value; 0: the test of §25)
CHEAP_SHARE = 1.0
COARSE_REL_TOL = 1e-2  # a finer request missing its rel_tol also runs at this one (§36; the default's)
SKIP_ROUNDS = True  # §33.4's skipped rounds of a law bounded above (False: the rounds of before; a choice of rounds)


# --------------------------------------------------------------------------- driver

# (the dispatch's PLAIN_NODES_MAX, the first step's H_BULK, the pair term's PAIR_FRAC: :mod:`.limits`, §8)


class _BracketNeeded(Exception):
    """An upper-first run (``as_bracket``) stops: the bracket would run the body's engine pass."""


class _CoarseMiss(Exception):
    """A run at a coarser cap step (``coarse``) stops: its round would run the body's engine passes (§48.2);
    ``args[0]``: its whole bracket's gap over its target (inf without a lower value); ``args[1]`` (§50): True where
    the run's coarser first-group step met a size cap (the run again without §50's step)."""


def _miss(lo: float, up: float, rel_tol: float) -> float:
    """(up - lo) / (BODY_WHOLE_ACCEPT rel_tol lo): at most 1 where a bracket meets §44.1's test (inf for lo <= 0)."""
    return miss_over(lo, up, rel_tol, limits.BODY_WHOLE_ACCEPT)


@dataclass(frozen=True)
class _Body:
    """A round's body passes so far (last pass, bracket, next step, passes left); ``cut``: stopped by §26's rule."""

    body: PassResult | None
    lo: float
    up: float
    hb: float
    left: int
    cut: bool = False


def _body_passes(law: Law, gamma: float, n: int, rel_tol: float, workers, lower: bool, negligible: float, rd: "_Round",
                 bounded: bool, st: _Body, cut) -> _Body:
    """The body's engine passes of the round ``rd`` from the state ``st``, halving the step (dividing it by 4 where
    the bracket misses its share by more than BODY_LEAP, §31.2), until the body is negligible, its bracket meets its
    share of rel_tol or the size caps bind (docs/accountant_tail.md §6, §8); ``cut(lo, up)`` True after a pass stops
    them there, the state kept (§26)."""
    body, body_lo, body_up, hb = st.body, st.lo, st.up, st.hb
    s, h_last = body_spacing(law, bounded, n), math.nan  # (§48.1: steps snapped to an end atom's spacing s)
    prev, lo_only = None, False  # (the last full pass before this one; the next pass without the hat law: §57)
    for i in range(st.left):
        # (at the jump term's step its lattice laws are the pass's own: the same floats, not recomputed)
        for hp in dict.fromkeys((body_step(hb, s, law.support()[0], rd.T0, hb >= rd.h), hb)):  # (hb: the snapped step misfits)
            body_n = lattice_pass(law, gamma, n, hp, rd.T0, rd.B, rel_tol, workers, lower,
                                  lat=rd.lat if hp == rd.h and not bounded else None,
                                  allow=CHEAP_SHARE * rel_tol * rd.jt.lo, upper=not lo_only)  # (§34.3, §57)
            if not isinstance(body_n, Coarsen):
                break
        if isinstance(body_n, Coarsen):
            if body is None and bounded:
                raise TailCoarsen(body_n.h_fit)
            if body is not None and refits(hb, h_last if s is not None else body.grid.h):
                hb *= 2.0  # a step divided by 4 (8) does not fit: the step it skipped (§31.2, §59.2)
                continue
            break  # the size caps bind: the finest grid that fitted, or the Chernoff value with Body_lo = 0
        body_p, body, h_last = body, body_n, hb  # (a lower-only pass: main = inf, the upper value unchanged; §57)
        g = body.grid
        dT = clamp_shift(law, rd.T0, round(g.T / hp), round((g.T + g.B) / hp), hp) if hp != hb else 0.0
        body_lo = max(body_lo, _body_lower(body) - dT if lower else 0.0)
        body_up = min(body_up, (body.main + dT) * (1 + 1e-9))
        body = replace(body, upper=body_p.upper, main=body_p.main) if lo_only and body_p is not None else body
        if body_up < max(negligible, VALUE_FLOOR) or body_up <= 0.05 * rel_tol * rd.jt.lo:
            break  # negligible: its lower value is not needed
        share = 0.3 * rel_tol * (body_lo + rd.jt.lo)
        if not lower or (body_lo > 0 and body_up - body_lo <= share):
            break
        whole = rd.result(None, body_lo, body_up)
        if (share := whole_share(whole.lower, whole.upper, body_up - body_lo, share, rel_tol)) < 0.0:
            break  # the round's whole bracket already meets 0.8 rel_tol (§44.1, a choice of brackets)
        if jump_decides(rd.jt.lo, rd.jt.up, rd.multi, rd.pen, body_lo, body_up, rel_tol):
            break  # no body pass can make the round meet §44.1's test, and its gap is the others' (§52.3)
        # (a bracket missing its share by more than BODY_LEAP: the step's half would miss it too where the gap
        # shrinks at most as h^2; docs/accountant_tail.md §31.2, a choice of speed)
        hb /= divisor(body_lo, body_up, share, BODY_LEAP)  # (by 8 where the quarter would miss too: §59.2)
        lo_only, prev = (not lo_only and lower_only_next(prev, body_n, body_lo + rd.jt.lo, rel_tol, n)), \
            (body_n if not lo_only else prev)  # (§57: the upper value settled, the next pass's lower law alone)
        if cut is not None and cut(body_lo, rd.result(None, body_lo, body_up, False).upper):
            return _Body(body, body_lo, body_up, hb, st.left - i - 1, True)
    return _Body(body, body_lo, body_up, hb, 0)


@dataclass(frozen=True)
class _Round:
    """A round of :func:`certify_bigjump` (its fixed parts); ``st``: its passes' state where §26's rule cut them."""

    st: _Body | None
    jt: JumpTerm
    multi: float
    pen: float
    T0: float
    h: float
    B: float
    lat: LatticeLaws
    cap: float

    def result(self, body: PassResult | None, body_lo: float, body_up: float, capped: bool = True) -> FarTailBracket:
        """The round's values (docs/accountant_tail.md §7) from a body bracket (``capped``: by E[L_+])."""
        up = (body_up + self.jt.up + self.multi) * (1 + 1e-9)
        return FarTailBracket(lower=max((body_lo + self.jt.lo - self.pen) * (1 - 1e-9), 0.0),
                              upper=min(up, self.cap) if capped else up, T0=self.T0, h=self.h, B=self.B, N=self.jt.N,
                              multi=self.multi, body_up=body_up, body_lo=body_lo, penalty_B=self.pen, jump=self.jt,
                              body=body, hat=self.lat)


def _settle(rounds: list[tuple[_Round, FarTailBracket]], law: Law, gamma: float, n: int, rel_tol: float, workers,
            lower: bool, negligible: float, bounded: bool) -> FarTailBracket:
    """:func:`certify_bigjump`'s result as with every round refined (docs/accountant_tail.md §26, Claim 26.2): the
    first round of least upper value, the largest lower value of all; a cut round is refined pass by pass until
    bounds from certified values of its body (a later round's lower, an earlier one's upper value too, for a law
    bounded above) show that its refined values could be neither."""
    rounds = list(rounds)
    while True:
        up_min, lo_max = min(r.upper for _, r in rounds), max(r.lower for _, r in rounds)
        todo = [i for i, (rd, r) in enumerate(rounds) if rd.st is not None and not (
            rd.result(None, b := max(x.body_lo for _, x in (rounds[i:] if bounded else [(rd, r)])), b).upper > up_min
            and rd.result(None, b := min(x.body_up for _, x in (rounds[:i + 1] if bounded else [(rd, r)])), b).lower
            <= lo_max)]
        if not todo:
            break
        rd, _ = rounds[todo[0]]
        assert rd.st is not None
        st = _body_passes(law, gamma, n, rel_tol, workers, lower, negligible, rd, bounded, rd.st, lambda lo_, up_: True)
        rounds[todo[0]] = (replace(rd, st=st if st.cut else None), rd.result(st.body, st.lo, st.up))
    best = min((r for _, r in rounds), key=lambda r: r.upper)  # (the first of least upper value, as before)
    return replace(best, lower=max(r.lower for _, r in rounds))


def certify_bigjump(law: Law, gamma: float, n: int, rel_tol: float = 1e-2, workers=-1, lower: bool = True,
                    max_rounds: int = 8, negligible: float = 0.0, as_bracket: bool = False,
                    doomed: bool = True, *, T0_max: float = math.inf, skip_rounds: bool = True,
                    coarse: float = 1.0, first: bool = False, top_coarse: float = 1.0) -> FarTailBracket:
    """Certified (lower, upper) of D_up for one law with the far-tail treatment.

    Laws with an unbounded right tail get the big-jump split at a moderate clamp T0; laws bounded
    above (T0 = their top: no jump term) and laws with an unbounded left tail get the lower-tail
    penalty instead of the full E[(-B - L)_+]. Stops at a certified upper value below
    ``negligible`` (the caller's maximum over laws). Raises :class:`~.jump.TailCoarsen` when a size cap binds
    (:func:`try_certify` then falls back to the plain engine). ``as_bracket`` (with ``lower`` False): the
    upper value of the bracket's first round, on its grid and with its choice of the body pass (the jump term's
    upper value standing in for its lower one; docs/accountant_tail.md §15; with ``limits.TAIL48_UPPER_B`` its rounds
    widen the lower clamp B as the bracket's do, §77). ``doomed`` (speed only, the same floats):
    a round certain to be redone with B x 4 stops its body passes, refined later only where it may matter (§26).
    ``T0_max``: a cap on the clamp T0 (a choice; the values stay certified for any T0, §7); where the rounds' grid
    is too coarse for the centroid law's first group and the bracket misses ``rel_tol``, one more run at the
    largest T0 whose lattice fits that group's step adds its values (docs/accountant_tail.md §28). ``skip_rounds``
    (with the module's SKIP_ROUNDS): a law bounded above skips a round whose redo with B x 4 is certain (§33.4).
    ``coarse`` > 1: the caps' step times it (§48.2), or with ``first`` the first group's step times it (§50); such a
    run raises :class:`_CoarseMiss` where its bracket would need a finer step or the body's engine passes.
    ``top_coarse``: a factor on a law bounded above's first step and clamp unit H (§52.2; 1: the rule of §8, §33.2)."""

    # the deep tail in closed form, given the number of active users, where its bracket is narrow
    # (docs/accountant_tail.md §18; no lattice: the hat law is None, positive_prob_up takes §18's bound)
    cb = concentrated.route(law, gamma, n, rel_tol, _closed_T0(choose_T0))  # (not tried where the FFT is cheaper: §47)
    if cb is not None:
        if lower:  # (the lower value with the curvature term of §19: computed only where it is returned)
            cb = concentrated.with_curvature(cb, law, gamma, n)
        return FarTailBracket(lower=cb.lower if lower else 0.0, upper=cb.upper, T0=cb.T0, h=math.nan, B=math.nan,
                              N=0, multi=cb.multi, body_up=cb.body, body_lo=0.0, penalty_B=0.0,
                              jump=JumpTerm(up=cb.jump_up, lo=cb.jump_lo if lower else 0.0, N=0))
    sd = law.std()
    mean = law.mean()
    lo_s, hi_s = law.support()
    bounded = math.isfinite(hi_s)
    m_est = (n - 1) * gamma * mean
    est = float(law.stop_loss([max(-m_est, 0.0)])[0][0])  # tau(|m|): the one-jump value
    tiny = est < VALUE_FLOOR  # (then no lower value is computed: no step for the centroid law)
    est = max(est, VALUE_FLOOR)
    # start coarse (the sd) and refine on the observed gap; the bulk's spread bounds the useful start
    h_start = _pow2(max(min(sd / 4.0, 4.0 * law.spread()), 1e-300))
    # at large n the sum's spread allows a coarser grid (the rounding noise n h^2/4 against it), the more so when the
    # jump term (estimated by est) makes the value: the body's own refinement is then not needed
    # (docs/accountant_tail.md §8; a choice of speed only)
    v_bulk = _normal_value(law, gamma, n)
    if as_bracket and not lower and v_bulk > 1e-3 * est:
        raise _BracketNeeded  # the bulk is a visible part of the value: the body pass will run (speed only: §15)
    h_bulk = H_BULK / 16.0 if est >= 0.5 * v_bulk else H_BULK
    h_start = max(h_start, _pow2(math.sqrt(max(n - 1, 1) * gamma) * sd / h_bulk))
    h_fg = None  # the step at which the centroid law closes its first group (None: not computed)
    fg, fg_on = 1.0, False  # §50's factor on the first group's step, and whether this round's step took it
    j_odd = 1  # every grid step is j_odd 2^e: T0 and B are multiples of U = j_odd H, so they stay nodes
    if (lower or as_bracket) and not bounded and not tiny and math.isfinite(lo_s) and lo_s < 0:
        h_fg, j_odd = _h_first_group(lo_s, mean)
        fg = first_factor(coarse, first, h_fg, h_start, T0_max)  # (§50: 1 where the first group's step stays)
        h_start = h_fg / 2.0 ** max(math.ceil(math.log2(h_fg / h_start)), 0)
    B, skipped, scaled = None, False, False
    # (§77: an upper-first run follows the bracket's redo with B x 4 on a law with an unbounded left tail)
    up_b = as_bracket and not lower and limits.TAIL48_UPPER_B and not bounded and not math.isfinite(lo_s)
    br_b = lower and limits.TAIL48_BRACKET_SKIP and not bounded and not math.isfinite(lo_s)  # (§77.6)
    rounds: list[tuple[_Round, FarTailBracket]] = []  # every round's values (and the state of one cut by §26)
    for _rnd in range(4):
        try:
            if bounded:  # no clamp above: T0 >= the top of the support, no jumps
                # the smaller of the count clamp and the drift rule's (§8: a light left tail keeps the latter)
                B_cnt = min(_count_clamp(law, gamma, n, hi_s, lo_s), _drift_clamp(law, mean, sd)) if B is None else B
                H = _pow2(max(abs(hi_s), min(sd, B_cnt), 1e-300) / 16.0) * _loose_step(rel_tol, n) * top_coarse
                T0 = max(math.ceil(hi_s / H), 1) * H
                multi, capped = 0.0, False
            else:
                T0r = min(sweep_T0(law, gamma, n, PAIR_FRAC * rel_tol * est, "pair", choose_T0), T0_max)  # (§63)
                capped = T0r >= T0_max  # (§28's run: its clamp is set by the first group's step, not the pair term)
                H = j_odd * _pow2(max(T0r / (16.0 * j_odd), 1e-300))  # (j_odd = 1 unless set above)
                T0 = math.ceil(T0r / H) * H
                multi = 0.5 * (n - 1) * gamma * pair_integral_up(law, T0) * (1 + 1e-9)
            if math.isfinite(lo_s) and capped and h_fg is not None:
                # (§28's run: every step is h_fg / 2^k, so B may be the first such node below the support, not H:
                # the lattice's cells below the support would each carry an interval probability's error bound)
                B = max(math.ceil(max(-lo_s, 0.0) / h_fg), 1) * h_fg
            elif math.isfinite(lo_s):
                B = max(math.ceil(max(-lo_s, 0.0) / H), 1) * H  # no clamp below: tau_low(B) = 0
            elif B is None and bounded:
                B = max(math.ceil(max(T0, B_cnt) / H), 1) * H
            elif B is None:
                # the clamp must leave most of the (negative) drift: tau_low(B) <= |E L| / 4
                B = max(math.ceil(max(T0, _drift_clamp(law, mean, sd)) / H), 1) * H
            else:
                B = math.ceil(B / H) * H
            # every grid step h = j_odd 2^e <= H (H = j_odd 2^p) divides T0 and B, so all lattices share the clamps
            h = min(h_start, H)
            h, fg_on = first_step(h, fg, H, T0, B, K_MAX)  # (§50; h where the caps would bind at h)
            scaled = scaled or fg_on
            jt: JumpTerm | None = None
            lat: LatticeLaws | None = None
            bc: float | None = None  # body_chernoff of lat, where already computed (the same value)
            h_used = h
            lo_best, gap_prev, shared = 0.0, math.inf, False
            pen_b, skip_b = None, False  # (§77: an upper-first round's penalty on its first lattice law, and its skip)
            for _ in range(max_rounds):
                try:
                    lat_n = _laws(law, gamma, h, T0, B, lower=lower and not bounded)
                    if (up_b or br_b) and jt is None and _rnd < 3 and (T0 + 4.0 * B) / h * J_LO <= K_MAX:
                        pen_b = (lat_n, _penalty(law, gamma, n, lat_n, h, T0, B))
                        if _skip_b(pen_b[1], rel_tol, est) if up_b else _skip_br(pen_b[1], est):
                            skip_b = True  # (the redo with B x 4 below is certain: no jump term at this B; §77)
                            break
                    if limits.JUMP_TV_STOP and jt is not None and 0.0 < lo_best and \
                            tv_floor_estimate(jt, lat_n, n - 1) > 0.7 * (jt.up - lo_best):
                        break  # the step's TV terms alone would stop it (below; §44.4, a choice of steps)
                    bc_n = body_chernoff(lat_n, h, n, gamma) if as_bracket and not lower and jt is None and \
                        not bounded else None
                    if bc_n is not None and bc_n > 0.8 * rel_tol * est:
                        raise _BracketNeeded  # the bracket's body pass will run (speed only: §15)
                    jt_n = (JumpTerm(up=0.0, lo=0.0, N=0) if bounded else
                            jump_term(law, gamma, n, lat_n, h, T0, rel_tol, est, workers, lower=lower,
                                      hat=lower and limits.HAT_LOWER))
                except TailCoarsen as exc:
                    if jt is None and fg_on:
                        raise _CoarseMiss(math.inf, True)  # (§50's step met a cap: the run without it)
                    if jt is None:
                        # nothing fitted yet: the coarsest step the caps allow (upper value certified; the centroid
                        # law may be empty there, Lo = 0), unless it would not divide the clamps
                        # (docs/accountant_tail.md §11.1)
                        h_fit = j_odd * 2.0 ** math.ceil(math.log2(max(exc.args[0], 2.0 * h) / j_odd))
                        if h_fit > H or (capped and h_fg is not None and h_fit > h_fg):
                            raise  # (§28's run: a grid coarser than the first group's step would give no lower value)
                        # (``coarse``: the cap's step times it, the round's values from the hat window; §48.2)
                        up_c = coarse > 1.0 and h_fit * coarse <= H and not capped
                        h, scaled = (h_fit * coarse, True) if up_c else (h_fit, scaled)
                        continue
                    break  # the size caps bind: keep the finest grid that fitted
                stale = jt is not None and jt_n.up > jt.up and jt_n.lo <= 0.0 and jt_n.N >= KEEP_N  # (§27 (c))
                if jt is None or jt_n.up <= jt.up:
                    lat, jt, h_used, bc = lat_n, jt_n, h, bc_n
                lo_best = max(lo_best, jt_n.lo)  # every round's values are certified
                if stale and lo_best <= 0.0 and concentrated.eligible(law, gamma, n):
                    break  # a finer step lost the upper value and gave no lower one: the closed form's turn (§24)
                if not lower or bounded or jt.up + multi < max(negligible, VALUE_FLOOR):
                    break  # (below the value floor only the upper value is certified, as in the engine)
                gap = (jt.up - lo_best) / lo_best if lo_best > 0 else math.inf
                if gap <= 0.5 * rel_tol or (gap > 0.7 * gap_prev and gap < math.inf):
                    break  # accurate enough, or the round-off bounds stop the refinement
                share = limits.JGAP49_SHARE if limits.JGAP49 else 0.05  # (§81: the jump term's share, a choice of steps)
                if jt.N >= KEEP_N and jt.up - lo_best <= share * rel_tol * v_bulk:
                    # a jump term far below the body's value: its gap is negligible (§27 (b), speed only), its lower value
                    # 0 included (its upper value is then the gap; §33.1)
                    assert lat is not None  # (set with jt)
                    bc = bc if bc is not None else body_chernoff(lat, h_used, n, gamma)
                    if jt.up - lo_best <= share * rel_tol * bc:
                        shared = limits.JGAP49 and scaled  # (§81: this run's body pass runs at its own steps)
                        break
                gap_prev = gap
                if scaled:
                    # (the jump term itself asks for a finer step: the caps' run, §48.2; its own miss, §54.4)
                    miss = gap / (0.5 * rel_tol) if limits.COARSE_KEEP else math.inf
                    if limits.JGAP49 and jt.N >= KEEP_N:  # (§81: or its miss against its share of the body's value)
                        miss = min(miss, (jt.up - lo_best) / (share * rel_tol * v_bulk))
                    raise _CoarseMiss(miss, False, True)
                if lo_best <= 0:  # the centroid law merged the bulk: the grid must resolve its spread
                    h = h / 4.0
                else:
                    d = 2.0 ** math.ceil(max(0.5 * math.log2(gap / (0.5 * rel_tol)), 1.0))
                    # (a large FFT halves at a time, so that the stop above sees a gap that no longer shrinks before
                    # a leap to a far finer grid; docs/accountant_tail.md §30, speed only)
                    h /= 2.0 if jt_n.N * d >= HALVE_N else d
            if skip_b:
                B = 4.0 * B
                continue
            if jt is None or lat is None:
                raise TailCoarsen(h)  # no grid fitted the caps: the caller falls back to the plain engine
            jt = replace(jt, lo=lo_best)
            if lower and not bounded and not (0.0 < jt.lo and jt.up - jt.lo <= rel_tol * jt.lo) \
                    and jt.up + multi >= max(negligible, VALUE_FLOOR) and concentrated.at_clamp_eligible(law, gamma, n):
                jt = closed_at_clamp(jt, law, gamma, n, T0)  # (before the body pass's decision, which reads jt.lo)
            h = h_used
            pen = 0.0
            # (an upper-first run computes the penalty too, only for the bracket's redo with B x 4 below: its lower
            # value stays 0; docs/accountant_tail.md §77)
            if pen_b is not None and pen_b[0] is lat:
                pen = pen_b[1]  # (the same value, computed before the jump term)
            elif (lower or up_b) and not math.isfinite(lo_s):
                pen = lower_tail_penalty(law, gamma, n, T0, B, Chernoff(lat.g, lat.eta, lat.k0, h, n - 1))
            # body E[A_+]/(n gamma): Chernoff (x_+ <= e^{lam x}/(e lam)) on the hat law, else the engine
            body_up = bc if bc is not None else body_chernoff(lat, h, n, gamma)
            if (skip_rounds and SKIP_ROUNDS and bounded and lower and _rnd < 3 and (T0 + 4.0 * B) / h * J_LO <= K_MAX
                    and pen > 0.05 * rel_tol * body_up * (1 + 1e-9)
                    and _skip_round(law, gamma, n, B, body_up, max(negligible, VALUE_FLOOR), rel_tol, lat, h,
                                    saddle_excess_estimate)):  # (the estimate read here: tests replace it)
                # the redo with B x 4 below is certain wherever the round's upper value exceeds the caller's maximum
                # (the penalty exceeds its threshold at the Chernoff upper value already): the round is skipped where
                # estimates say its values are neither the least upper nor the largest lower value
                # (docs/accountant_tail.md §33.4, a choice of rounds; every round computed is certified)
                skipped, B = True, 4.0 * B
                continue
            body_lo, body, st = 0.0, None, None
            hat_body, w = jt.parts.pop("hat_body_fn", None), None  # (the window it holds is released with it)
            jlo = jt.lo
            rnd = _Round(None, jt, multi, pen, T0, h, B, lat, law.tail_upper(0.0))
            # (the body pass's decision only) upper first: the lower value the bracket's first round would
            # have where it stops there (gap <= rel_tol / 2), so that the rule runs the body pass (and
            # try_certify falls back to the bracket) wherever the bracket's would (docs/accountant_tail.md §15)
            jref = jt.up / (1.0 + 0.5 * rel_tol) if as_bracket and not lower else jlo
            need = bounded or body_up > max(0.05 * rel_tol * max(jref, est * 1e-3),
                                            0.8 * rel_tol * jref - (jt.up - jref) - multi)
            if need and hat_body is not None and jt.N >= KEEP_N:  # the hat window's body bracket first (§45.5)
                hb = hat_body()
                body_lo, body_up = max(hb[0], 0.0), min(body_up, hb[1])
                w = rnd.result(None, body_lo, body_up)  # (the engine's passes only where the round still misses)
                acc = scaled_accept() if scaled else limits.BODY_WHOLE_ACCEPT  # (a coarser run's share: §54)
                need = not (0.0 < w.lower and w.upper - w.lower <= acc * rel_tol * w.lower)
            if need and scaled and not shared:  # (no engine pass at the coarser step: the caller's next run; §48.2)
                raise _CoarseMiss(_miss(w.lower, w.upper, rel_tol) if w is not None else math.inf, False)
            if bounded and body_up <= max(negligible, VALUE_FLOOR):
                pass  # below the caller's maximum (or the value floor): the Chernoff value suffices
            # the body's engine pass is skipped when the bracket already meets 0.8 rel_tol with Body_lo = 0
            # (docs/accountant_tail.md §8: a choice of speed; both values stay certified)
            elif need:
                if as_bracket and not lower:
                    raise _BracketNeeded  # the bracket's body pass will run: try_certify runs the bracket (§15)
                # a round redone with B x 4 whatever its later passes give stops them (accountant_tail.md §26)
                fits = (T0 + 4.0 * B) / h * J_LO <= K_MAX
                cut = (lambda lo_, up_: multi == 0.0 and _rnd < 3 and fits and lo_ >
                       max(negligible, VALUE_FLOOR) and pen > 0.05 * rel_tol * up_) if doomed else None
                st = _body_passes(law, gamma, n, rel_tol, workers, lower, negligible, rnd, bounded,
                                  _Body(None, body_lo, body_up, h / (2.0 * coarse) if shared else  # (§81)
                                        aim(h, rnd, body_lo, body_up, n, rel_tol, lower and not bounded), max_rounds), cut)
                body, body_lo, body_up = st.body, st.lo, st.up
            rnd = replace(rnd, st=st if st is not None and st.cut else None)
            res = rnd.result(body, body_lo, body_up)
            up, lo = (body_up + jt.up + multi) * (1 + 1e-9), res.lower
            rounds.append((rnd, res))
            # (the redo rules below read the FFT treatment's own lower value: a loose one of §24 would move T0 for nothing)
            lo_f = lo if jt.lo == lo_best else max((body_lo + lo_best - pen) * (1 - 1e-9), 0.0)
            val = lo_f if lo_f > 0 else up
            if up < max(negligible, VALUE_FLOOR):
                break
            # (met: the round meets rel_tol/2 on a lattice worth not redoing; docs/accountant_tail.md §27 (a), speed only)
            # (§50.4: BODY_WHOLE_ACCEPT rel_tol on a window of PAIR_REDO_N points or more)
            redo, met = False, 0.0 < lo and up - lo <= pair_keep(jt.N, scaled) * rel_tol * lo and jt.N >= KEEP_N
            if multi > 1.2 * PAIR_FRAC * rel_tol * val and val < est and not met and not capped:
                est, redo = val, True  # the pair term was sized for a larger value, unless the round meets rel_tol/2
            if (pen > 0.05 * rel_tol * val * (UPPER_REDO if up_b else 1.0) and up > max(negligible, VALUE_FLOOR)
                    and (T0 + 4.0 * B) / h * J_LO <= K_MAX):
                # (not when the wider clamp would not fit at this round's step: its centroid law would be lost to the
                # coarser grid the caps allow, and its values could not improve on this round's; §11.1)
                B, redo = 4.0 * B, True
            elif top_coarse > 1.0 and not lower and bounded and clamp_redo(body, up, negligible, (T0 + 4.0 * B) / h
                                                                           * J_LO <= K_MAX):
                B, redo = 4.0 * B, True  # (an upper-only run where the clamp's charge may keep it above; §56)
            if not redo:
                break
        except TailCoarsen:
            if not rounds and skipped:  # (the rounds as before §33.4: the skipped round's clamp first)
                return certify_bigjump(law, gamma, n, rel_tol, workers, lower, max_rounds, negligible, as_bracket,
                                       doomed, T0_max=T0_max, skip_rounds=False)
            if not rounds:
                raise
            break  # a later clamp (B x 4, or T0 for a smaller value) does not fit the caps: keep the best so far
    # (the first round either appends its values or raises)
    r = _settle(rounds, law, gamma, n, rel_tol, workers, lower, negligible, bounded)
    if scaled and miss_over(r.lower, r.upper, rel_tol, scaled_accept()) > 1.0:  # (kept within its share: §48.2, §54)
        raise _CoarseMiss(_miss(r.lower, r.upper, rel_tol), False)
    if (lower and h_fg is not None and r.h > h_fg and math.isinf(T0_max) and r.upper >= max(negligible, VALUE_FLOOR)
            and not (0.0 < r.lower and r.upper - r.lower <= FIRST_GROUP_GAP * rel_tol * r.lower)):
        # the caps forced a grid coarser than the centroid law's first group: its lower values are 0 or loose; the
        # lower value needs no pair term, so a run at the largest clamp whose lattice fits that step gives one
        # (its upper value, with a larger pair term, is one more candidate; docs/accountant_tail.md §28)
        T0_fit = K_MAX / J_LO * h_fg / T0_FIT_MARGIN
        if T0_fit < r.T0:
            try:
                r2 = _fit_run(law, gamma, n, rel_tol, workers, max_rounds, negligible, doomed, T0_fit)
            except TailCoarsen:
                return r  # (the sum's window does not fit the caps at that step, e.g. n = 1e9)
            best = r if r.upper <= r2.upper else r2
            r = replace(best, lower=max(r.lower, r2.lower), coarse_fit=r2.coarse_fit)
    return r


def _fit_run(law: Law, gamma: float, n: int, rel_tol: float, workers, max_rounds: int, negligible: float, doomed: bool,
             T0_fit: float) -> FarTailBracket:
    """§28's run at the clamp T0_fit; a finer request's whose sum's window does not fit the caps at that step runs
    at the default request's rel_tol instead (certified all the same; docs/accountant_tail.md §37.1)."""
    try:
        return certify_bigjump(law, gamma, n, rel_tol, workers, True, max_rounds, negligible, doomed=doomed,
                               T0_max=T0_fit)
    except TailCoarsen:
        if rel_tol >= COARSE_REL_TOL:
            raise
    return replace(certify_bigjump(law, gamma, n, COARSE_REL_TOL, workers, True, max_rounds, negligible,
                                   doomed=doomed, T0_max=T0_fit), coarse_fit=True)


def _coarse_first(law: Law, gamma: float, n: int, rel_tol: float, workers: int, lower: bool,
                  negligible: float) -> FarTailBracket:
    """:func:`certify_bigjump`'s bracket, first at CAP_COARSE times the step the size caps set (where they set it,
    with the hat lower values of §45), kept where it meets BODY_WHOLE_ACCEPT rel_tol without the body's engine
    passes; a miss by at most CAP_RETRY times the target halves the factor, a larger one runs at the caps' step
    (docs/accountant_tail.md §48.2; a choice of which certified run)."""
    c, first = (limits.CAP_COARSE * far_factor(law, gamma, n) if lower and limits.HAT_LOWER else 1.0), True  # (§54.4)
    while c > 1.0:
        try:
            return certify_bigjump(law, gamma, n, rel_tol, workers, lower=True, negligible=negligible, coarse=c,
                                   first=first)
        except _CoarseMiss as miss:  # (a near miss: half the factor; else the caps' step)
            if miss.args[1]:
                first = False  # (§50's coarser first-group step met a cap: the run as §48.2's)
                continue
            c = next_factor(c, miss.args[0], len(miss.args) > 2)  # (§48.2, §54; args[2]: the jump term's own miss)
        except TailCoarsen:
            break
    return certify_bigjump(law, gamma, n, rel_tol, workers, lower=lower, negligible=negligible)


def try_certify(law: Law, gamma: float, n: int, rel_tol: float, workers: int, negligible: float = 0.0,
                lower: bool = True, upper_first: bool = False) -> LawBracket | None:
    """The accountant's per-law bracket by the far-tail treatment, or None where the treatment does
    not apply or a size cap binds (the caller then runs the plain engine). ``upper_first`` (with ``lower``):
    the upper value alone (lower 0) where the bracket's first round would settle it without the body pass,
    else the bracket (docs/accountant_tail.md §15)."""
    if not applicable(law, n, rel_tol, gamma):
        return None
    if (fl := floor_bracket(law, gamma, n)) is not None:  # the accuracy floor (docs/accountant_tail.md §58)
        return fl
    if lower and upper_first:
        try:
            r = certify_bigjump(law.shifted(up=True), gamma, n, rel_tol, workers, lower=False, negligible=negligible,
                                as_bracket=True)
        except (TailCoarsen, _BracketNeeded):
            r = None
        if r is not None and r.body is None and r.multi <= 1.2 * PAIR_FRAC * rel_tol * r.upper:
            return _bracket(replace(r, lower=0.0))
        # the body pass (or a second round) would use the lower value: the bracket itself
    # the stored law's rounding (value_error c, docs/accountant.md §3.2.2, accountant_tail.md §12): the
    # treatment runs on the law raised by c, whose values dominate the true ones user by user (its
    # upper value is one of the true law's); the true values are at most d = moved_by + c below the
    # raised law's, so its lower value minus d is one of the true law's; where d is not negligible
    # against it, the lower value is that of the law lowered by c (a second run)
    run = law.shifted(up=True)
    try:
        # a law bounded above, below the caller's maximum so far: its upper value alone at TOP_COARSE times the step,
        # kept where it is below that maximum (the reported upper value is another law's; lower 0; §52.2, §54.3, §56)
        if lower and (rb := top_upper(certify_bigjump, run, gamma, n, rel_tol, workers, negligible)) is not None:
            return _bracket(replace(rb, lower=0.0))
        r = _coarse_first(run, gamma, n, rel_tol, workers, lower, negligible)
        finer = lower and rel_tol < COARSE_REL_TOL and r.upper >= max(negligible, VALUE_FLOOR) and not r.coarse_fit \
            and not (0.0 < r.lower and r.upper - r.lower <= rel_tol * r.lower)
        if finer and (r.lower <= 0.0 or not 2 * J_LO * (r.T0 + r.B) <= K_MAX * r.h):
            # a finer request's larger clamp may force a coarser grid under the size caps: the coarser request's
            # run too, the two certified brackets intersected (docs/accountant_tail.md §36), only where the caps
            # set the finer run's step or its lower value is 0, and its §28 run was not the default's (§37.1, §37.4)
            try:
                rc = certify_bigjump(run, gamma, n, COARSE_REL_TOL, workers, lower=True, negligible=negligible)
                r = replace(r if r.upper <= rc.upper else rc, lower=max(r.lower, rc.lower))
            except TailCoarsen:
                pass
        elif finer and limits.FINER_DEFAULT_RUN:  # (elsewhere: the default request's own run, intersected; §54.2)
            try:
                rc = _coarse_first(run, gamma, n, COARSE_REL_TOL, workers, True, negligible)
                r = replace(r if r.upper <= rc.upper else rc, lower=max(r.lower, rc.lower))
            except TailCoarsen:
                pass
        if lower:  # a two-term law's lower value without the lower clamp's penalty (docs/accountant_tail.md §32 (e))
            r = replace(r, lower=max(r.lower, concentrated.unclamped_lower(run, gamma, n, r.T0)))
        if run is not law and r.lower > 0.0:
            d = math.nextafter(run.moved_by + law.value_error, math.inf)
            if d <= 1e-6 * r.lower:
                r = replace(r, lower=r.lower - d)
            elif (dq := d * positive_prob_up(run, gamma, n, r, 1e-6 * r.lower / (d * (1 + 2e-9)))
                  * (1 + 1e-9)) <= 1e-6 * r.lower:
                # the shift costs at most d P(L_1 + S_{n-1} > 0), not d (docs/accountant_tail.md §14)
                r = replace(r, lower=max((r.lower - dq) * (1 - 1e-15), 0.0))
            elif min(d, dq) <= 1e-3 * rel_tol * r.lower:
                # the same two bounds, taken where they cost at most 1e-3 rel_tol of the lower value: the second
                # run on the lowered law (as costly as the first) is skipped (docs/composition.md §2.7)
                r = replace(r, lower=max((r.lower - min(d, dq)) * (1 - 1e-15), 0.0))
            else:
                r = replace(r, lower=certify_bigjump(law.shifted(up=False), gamma, n, rel_tol, workers, lower=True,
                                                     negligible=negligible).lower)
    except TailCoarsen:
        return None
    return _bracket(r)


__all__ = ["FarTailBracket", "LOOSE_STEP_MAX", "LOOSE_STEP_N", "applicable", "certify_bigjump", "choose_T0",
           "closed_at_clamp", "lower_tail_penalty",
           "positive_prob_up", "try_certify"]
