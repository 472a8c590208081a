"""The switches of the accountant's speed rules (sessions 35 on), read as ``limits.<NAME>`` only.

``limits`` re-exports every name here, so tests and users pin a rule with ``limits.<NAME> = value`` (never import a
switch by name: a pinned value would not reach you). Each switch cites the docs section that proves its rule; each is
a choice of which certified computation runs (or, where it says so, a certified bound of its own): the value that
reproduces an earlier session's floats is in ``tests/_main_floats34.py``. The switches of sessions 45 on are in
``limits_rules2.py``.
"""

# session 35, exp35
# docs/composition.md §4.7 (session 35): a ShufflePLDAccountant made without value_discretization_interval (dp_accounting's
# 1e-4 lattice) takes each shuffled round's PLD from the round's export pair moved onto 1e-4 (pair_relattice.relattice:
# no second build of the round); False: a pair built on 1e-4 from the round's certified profile (main's floats)
EXPORT_RELATTICE = True
# session 35, cal35
# docs/calibration.md §13 (session 35): the calibration's loose search evaluations (eps <= 0.01, docs/calibration.md
# §6) ask rel_tol CAL_LOOSE_REL_TOL at n >= CAL_LOOSE_REL_TOL_N (model points only; the certifying ones are unchanged);
# 0.1 restores session 34's evaluations and answers
CAL_LOOSE_REL_TOL = 0.3
CAL_LOOSE_REL_TOL_N = 10**8
# ... and calibrate_gaussian's start there aims on the big jump with its Jensen correction (docs/calibration.md §10's
# start, there at eps > 0.01 only); False restores session 34's start
CAL_LOOSE_JENSEN_GAUSS = True
# docs/calibration.md §13.2: stage 3's trust region in x doubles (up to 8x) after a certified step to its edge that the
# model predicted within 0.1 in log delta; False restores session 34's steps
CAL_TRUST_GROW = True
# docs/calibration.md §13.3: a search evaluation's upper value 0 enters the calibration's model as log TINY (a finite
# value: its steps keep a slope); False: -inf, session 34's model (the accountant's values are >= TINY: only stand-ins)
CAL_ZERO_AS_TINY = True
# session 35, big35
# docs/accountant_tail.md §45: the far-tail round's lower values (jump term and body) also from the hat lattice law alone,
# less the rounding's second-order cost, and the body's bracket from the jump term's window (another certified bracket,
# at steps coarser than the centroid law's first group); False: main's rounds and floats
HAT_LOWER = True
# session 35, mid35
# docs/accountant_tail.md §46.1: once an atom law's upper value has settled (its estimated distance to its limit in h
# within 0.1 rel_tol, docs/accountant_atoms.md §14), refine's further passes run the lower lattice law alone (the best
# upper value so far is kept; another certified bracket); False: main's full passes and floats
LOWER_ONLY_SETTLED = True
# docs/accountant_tail.md §46.2: refine's steps on an atom law whose atoms lie at or just below the multiples of a
# spacing s (k-RR, PrivUnit under replace-one, and their blocks) snapped to s / m (another certified bracket); False:
# main's steps and floats
ATOM_SPACING_SNAP = True
# ... and on a sum law whose one atom is the end of its support where the lower law's sweep starts (the Gaussian
# randomizer's x vs bottom laws), steps putting that atom just before a node (§46.2); False: main's steps there
END_ATOM_SNAP = True
# session 35, rep35
# docs/accountant.md §9.12 (session 35): the reported split of the loose split search through bot (§9.11) keeps the
# search's legs, or leg A at rel_tol with leg B at a looser rel_tol, where its bracket is within
# VIA_BOTTOM_BUDGET_SHARE rel_tol (another certified bracket at the same split); False: main's legs and floats
VIA_BOTTOM_BUDGET = True
VIA_BOTTOM_BUDGET_SHARE = 0.9
# ... and a split search's leg B (rel_tol >= 0.1) at rel_tol 0.3 or 1 where a cached leg B shows its share of the chain
# small (a choice of target only; another split may be found), with VIA_BOTTOM_LOOSE_SEARCH on; False: the search's legs
# B at its rel_tol
VIA_BOTTOM_SEARCH_B = True
# session 35, prof35
# docs/composition.md §2.17: the dominating pair's last sampling stage aims each segment at the export's budget left by
# cover's values near it, (PAIR_BUDGET_SHARE x 1 % - min((1 + g)^2 - 1, tau)) / 1.25 in [rel_tol, PAIR_BUDGET_MAX
# rel_tol], instead of rel_tol everywhere (main's worst case b = tau); False: main's samples and pairs
PAIR_GAP_BUDGET = True
PAIR_BUDGET_SHARE = 1.0
PAIR_BUDGET_MAX = 3.0
PAIR_BUDGET_LEVEL = 1e-10  # ... only on segments reaching this level (below it, down to 1e-12: rel_tol, main's)

# session 35, ct35
# docs/accountant_tail.md §47: the far-tail treatment does not try the closed form of §18 first (concentrated.route) at
# n <= CLOSED_CHEAP_N, rel_tol >= CLOSED_CHEAP_TOL (the loose legs of the split search through bot), where its
# lattices are small and cost less than the closed form's later stages (another certified bracket, the FFT
# treatment's); False: the closed form first everywhere (the floats before)
CLOSED_CHEAP_FFT = True
CLOSED_CHEAP_N = 1000
CLOSED_CHEAP_TOL = 0.05
CLOSED_CHEAP_RHO = 0.19  # ... where the Jensen ratio of the precheck exceeds this rel_tol (early stages refuse)
# session 36, lead
# docs/accountant_tail.md §46.5: §46.2's snapped steps only where the step is at most twice the spacing (a step far above
# it was refined to the spacing itself: GaussianRandomizer(0.5), n = 1e9's first pass at 1/170 of its step, 13 s and a
# 52 % bracket); False: session 35's steps and floats
SNAP_COARSE = True
# session 36, eps36
# docs/accountant.md §8.14.1: get_epsilon's loose look at the phase-1 root (§8.4) asks rel_tol EPS_LOOK_REL_LARGE at
# n >= EPS_LOOK_REL_N (a choice of model points only: its bracket is certified at any rel_tol); 0.1: main's look
EPS_LOOK_REL_LARGE = 0.3
EPS_LOOK_REL_N = 10**8
# docs/accountant.md §8.14.2: phase 1's model follows the larger of the laws alone once the largest two are within this
# relative distance at a model point (as it does beyond 10 %); 0.0: main's rule (every law until one leads by 10 %)
EPS_TIE_LEAD = 0.02

# session 36, exp36
# docs/composition.md §4.8: a ShufflePLDAccountant made without value_discretization_interval moves its composition,
# at its next query, from dp_accounting's 1e-4 onto the finest export step of its shuffled rounds (times the smallest
# power of two that keeps the composed PLD within EXPORT_PICK_POINTS lattice points) where that step is finer than
# 1e-4 (very private rounds); every lattice gives a dominating PLD; False: 1e-4 always, main's floats
EXPORT_PICKS_STEP = True
EXPORT_PICK_POINTS = 2**18
EXPORT_PICK_REL = 1e-3  # ... where its rounds' lattice shift (one step per round) exceeds this x the query's eps
# docs/composition.md §4.9: the export step eps_d / 1000 halved (at most EXPORT_STEP_MAX_HALVINGS times) where the
# round's brackets at k (eps_d / 1000), k = 0, 1, 2, 4, ..., 64, estimate one lattice step's chord above
# EXPORT_STEP_CHORD (large n: the privacy loss concentrated near 0, the curve's bend finer than eps_d / 1000), until
# the estimate is <= EXPORT_STEP_AIM; not for pure-LDP randomizers or rounds through bot; False: main's steps, pairs
# and floats
EXPORT_STEP_CURVATURE = True
EXPORT_STEP_CHORD = 6e-3  # (the largest segment target of the pair's last stage: PAIR_BUDGET_MAX x its rel_tol 2e-3)
EXPORT_STEP_AIM = 3e-3
EXPORT_STEP_MAX_HALVINGS = 4

# session 36, rep36
# docs/accountant.md §9.13: the loose split search through bot (§9.11) settled where the legs' model, confirmed by the
# value it predicted at its last step, predicts less than VIA_BOTTOM_SETTLE_GAIN (relative) from one more step, and a
# split search stopped at its first split certified below VALUE_FLOOR (no rel_tol targeted there, §6.3); 0.0 / False:
# main's searches and floats
VIA_BOTTOM_SETTLE_GAIN = 2e-4
VIA_BOTTOM_FLOOR_STOP = True
# session 36, prof36
# docs/composition.md §2.18: within a privacy profile's sweep, the plain engine's refinement of a law starts at the step
# (as a share of sd(L), coarsened by at most 2x) its family's last refinement ended with, where main's would need more
# than two passes to reach it, and at clamps for a predicted value (another certified bracket: other passes); False:
# main's first pass (sd(L) / 4, moderate clamps) and floats
PLAIN_WARM_START = True

# session 36, jump36
# docs/accountant_tail.md §49: the jump term's bracket from the hat law alone (§45's lower value, §4's upper value with
# §45's ramp) where it is within JUMP_HAT_SHARE rel_tol of its lower value, without the centroid law's window (another
# certified bracket of the same round); False: the centroid law's window always runs (main's floats)
JUMP_HAT_FIRST = True
JUMP_HAT_SHARE = 0.02
# ... or within JUMP_HAT_SHARE rel_tol of the saddle-point estimate of the round's body (a body-dominated round; the
# estimate only chooses whether the centroid window runs); False: of the jump term's lower value only
JUMP_HAT_BODY = True
# ... on windows of at least this many points (far_tail.KEEP_N's size: there §27 (b)'s test stops the jump term's
# refinement on a gap negligible against the body, as with main's centroid values)
JUMP_HAT_BODY_N = 2**15
# docs/accountant_tail.md §49.2: the jump term's stop-loss weights on octave pieces (each piece's interpolation step
# bounded by its own first node) where one grid would evaluate the closed forms at more than STOP_LOSS_OCTAVE_MIN nodes;
# False: one grid (main's floats)
STOP_LOSS_OCTAVES = True
STOP_LOSS_OCTAVE_MIN = 16384
# docs/accountant_tail.md §49.3: a Chernoff object keeps each bound by (kind, b) (a repeated question, the same float,
# no search); False: every call searches (main's evaluations; the floats are the same either way)
CHERNOFF_KEEP = True
# session 36, tail36
# docs/accountant_tail.md §48.1: the far-tail round's body passes on a law unbounded above whose bottom is an end atom
# (the Gaussian randomizer's x vs bottom law) run on steps s / m that put the atom just before a node (spacing.snap),
# the body's bracket widened by the clamp shift (far_tail_steps.clamp_shift); False: main's steps and floats. Off by
# default since the lead's map (§48.4): it costs calibrate_gaussian at n = 1e8 (sigma0 ~ 0.83, eps 0.01: 1.1 -> 1.9 s)
# about what it saves at sigma0 = 1, eps = 0.001 (1.3 -> 0.7 s); a cost-aware choice is owed
BODY_END_SNAP = True  # (session 38: on, with BODY_END_SNAP_LATER; False: main's floats before it)
BODY_END_SNAP_N = 10**8  # ... at n >= this (the cells measured; at n = 1e6 no gain: 0.11 -> 0.15 s, 0.19 -> 0.14 s; §48.1)
# docs/accountant_tail.md §48.2: a far-tail run whose round's step the size caps set runs first at CAP_COARSE times
# that step (the round's values from the hat window of §45), kept where its bracket meets BODY_WHOLE_ACCEPT rel_tol
# without the body's engine passes (else the run at the caps' step, as before); 1.0: main's runs and floats
CAP_COARSE = 4.0
CAP_RETRY = 1.5  # ... and a run that misses by at most this times its target runs again at half the factor (§48.2)
# session 37, eps37
# docs/accountant.md §8.15: at n <= 500 (closed_forms.JUMP_N_MAX) get_epsilon's phase 1 takes the few-user lower value
# (docs/accountant.md §6.8) as its model value where the few-user bracket is within EPS_FEW_WIDTH (relative), and where
# it does at the phase-1 root, phase 2 starts just above that root and settles expected lower ends on that certified
# lower value; False: main's search (its points and answers)
EPS_FEW_USERS = True
EPS_FEW_WIDTH = 0.25

# session 37, rep37
# docs/accountant.md §9.14: the split search through bot places a split at the edge of a cliff of leg B found from the
# laws' closed-form tops (the least e2 where every law of leg B has top_bound() <= 0: B certified 0 there) in place of
# the bisections of §9.5 toward that edge (_shrink, _edge), kept where the split BEYOND_TOL past it is not better
# (another certified split, another bracket); False: main's bisections and floats
VIA_BOTTOM_CLOSED_EDGE = True
# session 37, far37
# docs/accountant_tail.md §50: a far-tail run whose first step the centroid law's first group sets (below the bulk
# rule's step, the size caps not binding) runs first at CAP_COARSE times that step, kept where its bracket meets
# BODY_WHOLE_ACCEPT rel_tol from the hat window without the body's engine passes (else at half the factor or main's
# step, as §48.2's runs); False: main's runs and floats
FIRST_COARSE = True
# ... where the coarse step's lattice keeps at least this many steps (T0 + B) / h: the sum's window measured 3.5-5 times
# that many points, and the hat window's body bracket is used on windows of far_tail.KEEP_N = 2**15 points or more
FIRST_COARSE_K = 2**13
# docs/accountant_tail.md §50.4: a far-tail round whose bracket meets BODY_WHOLE_ACCEPT rel_tol (not only rel_tol / 2,
# §27 (a)) on a jump-term window of at least PAIR_REDO_N points is kept without the redo at a larger clamp T0 for its
# pair term (another certified bracket, within BODY_WHOLE_ACCEPT rel_tol); False: main's redo and floats
PAIR_REDO_ACCEPT = True
PAIR_REDO_N = 2**20
# session 37, hat37
# docs/accountant_tail.md §51: the jump term's window sums (and §45's hat values from the same window) charge the pmf
# errors' TV with the weight's majorant C0 + c (x - s0)_+ against the exponential moments of the errors and of the
# other users' sum (tv_weight.TvWeights), the smaller of that and max_W w · tv, on windows where the latter exceeds
# TV_WEIGHTED_SHARE rel_tol times the jump term's estimate; False: max_W w · tv everywhere (main's floats)
TV_WEIGHTED = True
TV_WEIGHTED_SHARE = 0.05
# docs/accountant_tail.md §51.4: at n >= CLOSED_WHOLE_N and rel_tol <= CLOSED_WHOLE_TOL the closed form's bracket
# (§18) is returned at the first stage whose gap is within CLOSED_WHOLE_ACCEPT rel_tol (§44.1's share for a far-tail
# round), not only within CLOSED_ACCEPT / CLOSED_ACCEPT_TILTED rel_tol (a choice of which certified bracket is
# returned; a calibration's loose probes, rel_tol 0.3, keep main's stages: their brackets decide its steps);
# CLOSED_WHOLE_ACCEPT = 0.0: main's stages and floats
CLOSED_WHOLE_ACCEPT = 0.8
CLOSED_WHOLE_N = 10**8
CLOSED_WHOLE_TOL = 0.01
# session 37, exp37
# docs/composition.md §4.10: a dominating pair's sample taken upper first gets its bracket also where its covered value
# exceeds (1 + tau) times the curve through its bracketed neighbours' lower values (pair_accuracy.upper_first_loose:
# an estimate choosing which samples get a bracket); False: only where its neighbours' gaps say so (main's floats)
EXPORT_UPPER_FIRST_CHECK = True
# ... where C_i > (1 + max(tau, EXPORT_UPPER_FIRST_SHARE x 1 % - 1.25 e_i)) exp(p_i), e_i its chords' estimate (§4.10)
EXPORT_UPPER_FIRST_SHARE = 0.9
# session 38, lead
# inside a privacy profile's sweep, a law whose certified upper value at a smaller eps of the sweep is <= the report's
# maximum so far is not certified again (docs/accountant.md §7.5; randomizers with ``stable_law_order``); False: main's
SWEEP_LAW_SETTLE = True
# session 38, rep38
# docs/accountant.md §9.15: where the reported split of replace-one through bot misses rel_tol for want of leg B's lower
# value, leg B's lower value from leg A's law at -e2 (D_up^B(e) = 1 - e^e (1 - D_up^A(-e)), the Gaussian randomizer's
# mirror pair): the lower value only rises, the upper value and the split stay; False: main's floats
VIA_BOTTOM_MIRROR = True
# ... tried only where e^{e1 + e2} VIA_BOTTOM_MIRROR_RESOLVE D_up^A(-e2) (estimated) is within half the gap: the relative
# accuracy of the mirror's lower value (measured 1e-5 - 1e-3 at rel_tol 1e-2) below which leg B is lost to the identity's
# cancellation (a choice of steps)
VIA_BOTTOM_MIRROR_RESOLVE = 1e-6
# session 38, far38
# docs/accountant_tail.md §52: in a far-tail run at a coarser step (§48.2's caps' step or §50's first-group step times
# CAP_COARSE / 2), a round whose bracket meets BODY_WHOLE_ACCEPT rel_tol on a window of far_tail.KEEP_N points or more
# is kept without the redo at a larger clamp T0 for its pair term (§27 (a)'s share read as §50.4's, whatever the
# window's size; such a run is kept only within that share anyway); False: main's redo and floats
SCALED_PAIR_KEEP = True
# docs/accountant_tail.md §52.2: a law bounded above whose far-tail run is asked for a bracket below a positive maximum
# so far (the caller's ``negligible``) runs first for its upper value alone at TOP_COARSE times its step H (§8, §33.2),
# returned (lower 0) where that upper value is below the maximum (the law cannot be the reported upper value); else the
# run as before. 1.0: main's runs and floats
TOP_COARSE = 4.0
# ... at n >= TOP_COARSE_N only (below, the law's own lower value may be the report's: n = 30-100 cells of
# tests/test_review_rev30_tail.py and rev33_tail, where the two zero-out laws nearly tie)
TOP_COARSE_N = 10**7
# docs/accountant_tail.md §52.3: a far-tail round's body passes stop where no body could make the round meet §44.1's
# test (its gap with an exact body over BODY_WHOLE_ACCEPT rel_tol times the largest lower value a pass could give) and
# the body's gap is at most BODY_JUMP_SHARE of that gap (a choice of passes); False: main's passes and floats
BODY_JUMP_STOP = True
BODY_JUMP_SHARE = 0.05
# session 38, lead (hat38's measurement)
# §48.1's snapped steps only for a round's passes after its first (the first at the round's own step, as before
# session 38): docs/accountant_tail.md §53; False: every pass snapped (§48.1 as written)
BODY_END_SNAP_LATER = True
# session 38, hat38
# docs/accountant_tail.md §53: §45.2's coupling cost of a convex weight's measure mu spread over a range (the jump term's
# phi_c: the law of L above T0, reflected; the body's f: one user's clamped term, reflected) bounded piece by piece, on
# pieces [-s_(j+1), -s_j] of s_j = s0 2^(j/4) with the masses P(L >= s_j) (hat_lower.reflected_pieces), and a range's
# window sum also bounded by the pmf summed over the nodes near the range; False: one part per range (main's floats)
HAT_PIECES = True
# ... at rel_tol <= HAT_PIECES_TOL (the default request and finer): a calibration's loose probes (rel_tol 0.3) keep
# main's costs (with them calibrate_gaussian(1e8, 0.01) took 3.5 s instead of 2.6 s: a coarse run's looser bracket
# kept at its first probe asked for a second certifying evaluation)
HAT_PIECES_TOL = 0.01
# session 38, exp38
# docs/composition.md §2.19: within a privacy profile's sweep (upper values first, no lower value read), a plain-engine
# refinement whose law family's last full bracket measured a gap within 0.8 rel_tol starts at the warm step at once,
# and its value is one pass of the upper lattice law alone at a step aimed at WARM_UPPER_AIM rel_tol from that gap
# where its clamp terms are settled (another certified upper value; at most WARM_UPPER_RUNS in a row, then a full
# bracket measures the gap again); False: session 36's warm start (main's passes and floats)
PLAIN_WARM_UPPER = True
WARM_UPPER_AIM = 0.5
WARM_UPPER_RUNS = 3
# docs/composition.md §2.19 (f): in the same sweeps, a refinement with an absolute target (a later law of a report,
# stopped at the maximum so far) runs its first pass's upper lattice law alone, and ends there where that upper value
# is below the target (main's first pass ends there with the same upper value); False: main's first pass
PLAIN_NEG_UPPER = True
# session 38, eps38
# docs/accountant.md §8.16: the few-user bracket of §6.8 also at JUMP_N_MAX < n <= FEW_WIDE_N_MAX, on the binomial
# terms within FEW_WIDE_SD standard deviations (plus FEW_WIDE_SD) of the mean, with log-gamma weights and their rounding
# bound (closed_forms.log_binom), where that window holds at most FEW_WIDE_TERMS terms (the cost gate); False: n <= 500
# only (main's floats)
FEW_WIDE = True
FEW_WIDE_N_MAX = 10**9
FEW_WIDE_SD = 40.0
FEW_WIDE_TERMS = 2**13  # (the lead, session 38: 2**15 cost 0.12 s on GaussianRandomizer(4.6), n = 1e6, eps = 4, for nothing)
# ... and, beyond JUMP_N_MAX at a given rel_tol, only where the bracket estimated from its terms at FEW_WIDE_SAMPLES
# quantiles of the weights is within FEW_WIDE_PRE rel_tol (an estimate choosing whether the bracket is computed)
FEW_WIDE_SAMPLES = 24
FEW_WIDE_PRE = 4.0
# ... and forms only the terms between the binomial's two tails of estimated mass <= FEW_WIDE_DROP rel_tol est / E[L_+]
# each (est: that estimate's lower value; the others stay at [0, E[L_+]])
FEW_WIDE_DROP = 1e-3
# session 39, exp39
# docs/composition.md §2.20: within a privacy profile's sweep (upper values first), a law family whose last full check
# found the driver's shortcuts idle (the few-user bracket None, the clamped Chernoff cap above its threshold, the
# far-tail treatment not taken) skips them for the next SWEEP_CHECKS_EVERY - 1 values of the family (the cap only while
# the family's last value is >= 1e3 times its threshold); the engines run as after an idle check (each shortcut a
# choice of which certified value is computed); False (or SWEEP_CHECKS_EVERY <= 1): every check (main's floats)
SWEEP_CHECKS = True
SWEEP_CHECKS_EVERY = 8
# session 39, rep39
# docs/accountant.md §9.16: before the cap cover of §9.3 certifies its engine legs on an interval of first legs, leg B
# at its e2 to the absolute target below which no lower value of it closes that interval (via_bottom_cover.beyond_reach);
# where its upper value is below, the cover fails there (as it would after its engine legs); False: main's cover
VIA_BOTTOM_COVER_TARGET = True
# docs/accountant.md §9.17: in the budget step of §9.12, where the reported split's leg B misses the budget for want of
# its lower value, that lower value from the mirror of §9.15 before leg B is certified at a tighter rel_tol (the
# split's upper value then from the search's leg B); False: main's budget step
VIA_BOTTOM_MIRROR_BUDGET = True
# session 39, eps39
# docs/accountant.md §8.17: the few-user bracket's terms j >= 2 (k = j + 1 users) also bounded above by the pairs' form
# (floor(k / 2) E[(L_1 + L_2)_+] + (k mod 2) E[L_+]) / k from the two-user term's upper value, and the two-user
# quadrature's gate reads the other terms' gap with that form at the two-user term's lower value; False: main's terms
# and gate (main's floats); with it on, the quadrature runs where that gap is within FEW_PAIR_GATE rel_tol of the lower
# estimate (main: 0.5)
FEW_PAIR_SPLIT = True
FEW_PAIR_GATE = 1.0
# docs/accountant.md §8.17 (c): §6.8 (b)'s upper form (one user jumps) also for a law not bounded below, at the
# FEW_OPEN_DEPTHS largest depths c of the grid (|E[L]| + sd) 2^(-i/2) with P(L > -c) <= 1/2; False: main's terms
FEW_OPEN_JUMP = True
FEW_OPEN_DEPTHS = 12
# session 39, far39
# docs/accountant_tail.md §54: a far-tail run at a coarser step (§48.2's caps' step or §50's first-group step times a
# factor) is kept where its bracket meets COARSE_KEEP_ACCEPT rel_tol (not only BODY_WHOLE_ACCEPT rel_tol), and one that
# misses BODY_WHOLE_ACCEPT rel_tol by at most COARSE_KEEP_RETRY times runs again at half the factor (not only within
# CAP_RETRY); another certified bracket within 0.951 rel_tol; False: main's runs and floats
COARSE_KEEP = True
COARSE_KEEP_ACCEPT = 0.95
COARSE_KEEP_RETRY = 2.8
COARSE_JUMP_RETRY = 3.6  # ... and a jump term's own miss (§54.4): halvings by this base
# docs/accountant_tail.md §54.2: a finer request's far-tail bracket that misses its rel_tol with a positive lower value
# where the caps do not set its step (§36's second run not made) is intersected with the default request's run
# (far_tail._coarse_first at rel_tol 1e-2), so that it is at least as tight as the default at both ends; False: main's
FINER_DEFAULT_RUN = True
# docs/accountant_tail.md §54.3: where §52.2's upper-only run of a law bounded above raises TailCoarsen (the size caps
# bind at its first step), it runs once more at TOP_FIT_FACTOR times TOP_COARSE (a power of 2), returned (lower 0)
# where its upper value is below the maximum so far; else the run as before. False: main's runs and floats
TOP_FIT = True
TOP_FIT_FACTOR = 16.0
# docs/accountant_tail.md §54.4: §48.2's ladder starts at COARSE_FAR_FACTOR times CAP_COARSE where the normal estimate
# of the body's value is at most COARSE_FAR_SHARE times the one-jump estimate (a choice of the first run); False: main's
COARSE_FAR = True
COARSE_FAR_FACTOR = 4.0
COARSE_FAR_SHARE = 1e-3
# session 39, hat39
# docs/accountant_tail.md §55: the jump term's hat lower value also with the rounding's cost from the density of L's
# tail (hat_density.density_cost, where that density is certified convex beyond T0; the smaller of it and §53's cost),
# in the rounds where §53's pieces run (HAT_PIECES_TOL); False: session 38's costs and floats
HAT_DENSITY = True
# ... computed only where §53's cost exceeds HAT_DENSITY_SHARE rel_tol times the window's value of E phi_c and the
# estimate hat_density.density_estimate is below HAT_DENSITY_EST times §53's cost (a choice of which bound runs)
HAT_DENSITY_SHARE = 0.05
HAT_DENSITY_EST = 0.5
# session 39, exp39b
# docs/composition.md §2.21: a profile's sweep (§2.19's upper values alone) runs up to SWEEP_UPPER_RUNS upper-only values
# in a row after a measured gap (instead of WARM_UPPER_RUNS), those past WARM_UPPER_RUNS only while the value stays
# >= SWEEP_UPPER_FALL times the measured bracket's upper value (else the refinement's full passes measure anew; every
# value the certified upper value of its pass: a choice of which passes run); False: WARM_UPPER_RUNS (main's floats)
SWEEP_UPPER_LONG = True
SWEEP_UPPER_RUNS = 15
SWEEP_UPPER_FALL = 0.1
# session 39, lead
# docs/accountant_tail.md §54.5: §54.4's coarser first run only where its one-jump estimate is at least COARSE_FAR_MIN
# (an estimate choosing the first run; merged with §55, the 16x run missed at GaussianRandomizer(1), n = 1e8, eps = 0.01
# and the BMG at n = 1e8, eps = 0.1); 0: §54.4 as far39 built it
COARSE_FAR_MIN = 1e-4
# session 40, rep40
# docs/accountant.md §9.18: at 0 < eps <= VIA_BOTTOM_END_FIRST the loose split search through bot starts from the end
# split e1 = 0 and f = 0.5 (not f = 0.5 and 0.65; a place to look only, the reported split certified as before); 0: main's
# start and floats
VIA_BOTTOM_END_FIRST = 0.1
# docs/accountant.md §9.18: the cap proofs of §9.3 after the first are skipped where the legs' closed-form upper values
# put one split's chain of D_up below 1 (none of them can report then); False: main's proofs (and floats)
VIA_BOTTOM_CAP_REFUTE = True
# docs/accountant.md §9.18: the model search of §9.11 ends at its first split where that split's upper value is below
# §9.13's floor level (rule 4 of §9.13 reports it; with VIA_BOTTOM_FLOOR_STOP); False: main's (its two start splits)
VIA_BOTTOM_FLOOR_FIRST = True
# session 40, eps40
# docs/accountant.md §8.18: small_n_bracket's two cost gates (§8.16 (c)'s estimate, §6.8 (d) / §8.17 (b)'s quadrature
# gate) read max(rel_tol, FEW_FINER_TOL), the default request's rel_tol: a finer request forms the few-user bracket (and
# its quadrature) wherever the default request would, and the driver intersects it with the engines' bracket (a choice
# of which certified values are computed); False: the gates read rel_tol (main's floats)
FEW_FINER = True
FEW_FINER_TOL = 1e-2
# docs/accountant.md §8.19: the few-user terms' upper values also from the multi-jump form (m >= 2 high users of the
# j + 1, each charged E[(L - (j + 1 - m) c / m)_+]) for m <= FEW_MULTI_M, at each term's best one-jump depth, where the
# terms' array holds at most FEW_MULTI_TERMS terms (a cost gate); False: §6.8 (b) / §8.17 (c)'s form alone (main's floats)
FEW_MULTI_JUMP = True
FEW_MULTI_M = 4
FEW_MULTI_TERMS = 1024
# session 40, exp40
# docs/composition.md §2.22: the pair's last sampling stage takes a point's bracket at once (not its upper value first)
# where its nearest bracketed samples' gaps say capped_cover would take that bracket afterwards (an estimate choosing
# which certified evaluation runs); False: main's upper values first and capped_cover's brackets (main's floats)
PAIR_BRACKET_AHEAD = True
# docs/composition.md §2.23: the pair's own sampling (default epsilons, not lower, not through bot) runs inside §2.18's
# warm sweep (plain_warm.warm_sweep: the refinements start at the family's last final step and clamps, every pass
# certified); False: main's passes and floats
PAIR_WARM_START = True
# session 40, body40
# docs/accountant_tail.md §56: §52.2's / §54.3's upper-only run of a law bounded above redoes its round with the lower
# clamp B x 4 where its upper value is at or above the maximum so far by less than its engine pass's charge of the
# clamp at -B (far_tail_top.clamp_redo; the least upper value of the rounds is returned, a choice of which certified
# rounds run); False: main's runs and floats
TOP_CLAMP_REDO = True
# docs/accountant_tail.md §57: a far-tail round's next body pass runs its centroid (lower) lattice law alone where the
# body's upper value from its last two full passes (steps BODY_LOWER_RATIO apart or more) is estimated within
# BODY_LOWER_SHARE BODY_WHOLE_ACCEPT rel_tol of its limit (far_tail_steps.lower_only_next, second order in h; one such
# pass in a row; the round keeps the least upper value so far: another certified bracket); False: main's passes and floats
BODY_LOWER_ONLY = True
BODY_LOWER_RATIO = 1.5
BODY_LOWER_SHARE = 0.25
BODY_LOWER_N = 10**9  # ... at n >= BODY_LOWER_N only (below it moved pinned floats and added passes, §57.2)
# session 40, far40
# docs/accountant_tail.md §58: a far-tail law with n >= FLOOR_N whose normal estimate is below FLOOR_TARGET and at least
# its one-jump estimate (body-dominated) ends with the clamped Chernoff cap at FLOOR_TARGET where that cap is below it
# (no rel_tol below FLOOR_TARGET; lower value in closed form); 0.0: the treatment's rounds (main's floats)
FLOOR_TARGET = 1e-15
FLOOR_N = 10**7
# ... its upper value the lesser of that cap and a finer one (far_tail_floor.fine_cap): at most FLOOR_NODES lattice nodes,
# its clamp term FLOOR_TAIL times the normal estimate of the value (choices of which certified value runs)
FLOOR_NODES = 1 << 15
FLOOR_TAIL = 1.0

# session 40, lead
# docs/accountant_tail.md §57.4: the far-tail body's lower value (far_tail_steps.body_lower) takes the engine pass's
# lattice-position charge where the final factor 1 - 1e-9 does not cover it, as the engine's own lower value does
# (docs/accountant.md §3.2.1); False: main's lower values (which left that charge out)
BODY_LOWER_POSITION = True

# session 41, eps41
# docs/accountant.md §8.20: get_epsilon's loose looks walk (§8.8) to the root of rho M = delta, M the normal body plus
# the single big jump and rho the looks' level over it (walk_model.shape_root; a choice of look points only); False: the
# secant on phase 1's slope (main's points and floats)
EPS41_WALK_SHAPE = True
# ... and stop walking once the shape model's root lies within EPS41_WALK_NEAR xtol of the last look (the secant's
# _LOOK_NEAR = 5 xtol otherwise); 5.0: main's stop (with EPS41_WALK_SHAPE on)
EPS41_WALK_NEAR = 15.0
# ... and where no walk runs after the look at the phase-1 root (n >= 1e7), phase 2 starts at the shape model's root from
# that look, with its slope (walk_model.shape_step); False: phase 1's slope or the refit (main's points and floats)
EPS41_SHAPE_STEP = True
# ... only where the model explains that look within this (|log rho| at it; a choice of points only)
EPS41_SHAPE_FIT = 0.02
# session 41, rep41
# docs/accountant.md §9.19: inside the cliff searches of §9.5 (_beyond, _shrink, _edge) leg A at e between two certified
# legs A is bracketed by their chord in e^eps (upper) and the secants beyond them (lower), used where that bracket meets
# the leg's rel_tol (a choice of which certified values are computed); False: every leg A certified (main's floats)
VIA_BOTTOM_CHORD = True
# docs/accountant.md §9.19: ... and inside the window of §9.10 (its golden section and model; not the model search of
# §9.11); False: there every leg A certified (main's floats)
VIA_BOTTOM_CHORD_SEARCH = True
# docs/accountant.md §9.19: ... leg B likewise (D_up of bot vs x is convex in e^eps too); False: every leg B certified
# (main's floats)
VIA_BOTTOM_CHORD_B = True
# ... a leg B from the chord only where its bracket is within min(its rel_tol, VIA_BOTTOM_CHORD_B_TOL) (a search's leg B
# at rel_tol 1 from a chord that wide moves the search's comparisons)
VIA_BOTTOM_CHORD_B_TOL = 0.1
# ... at n >= VIA_BOTTOM_CHORD_N only (below it the legs cost a few ms, and a chord's slack moved the bisection's
# decisions at the edge of leg B's cliff: GaussianRandomizer(2), n = 1, eps = 2 reported 2.7 % above the edge's split)
VIA_BOTTOM_CHORD_N = 1000
# session 41, exp41
# docs/composition.md §2.24: privacy_profile's eps strictly between two of the round's cached certified values (a pair's
# samples, an earlier profile's values) take the chord in t = e^eps of their upper values, rounded up, where the chord's
# estimated overshoot (pair.chord_estimate) is at most PROFILE_CHORD_AIM times the accountant's rel_tol (an estimate
# choosing which eps are certified by the accountant); False: every eps certified by the accountant (main's floats).
# Off by default (§2.24.1: to_pld no longer dominates the profile between the pair's samples; the NaN found with it
# on is fixed); opt in with limits.PROFILE_CHORDS = True
PROFILE_CHORDS = False
PROFILE_CHORD_AIM = 0.25

# session 41, eps41b
# docs/accountant.md §8.21: get_epsilon returns 0 at once where the second moment of the sum certifies D_up(0) <= delta
# (zero_moments.zero_upper: (sqrt(E S^2) + E S) / (2 n gamma) over the laws, plus the charges; that value also enters
# the accountant's monotone memo at eps = 0); False: the search and its get_delta(0) (main's floats)
EPS41B_ZERO_MOMENTS = True
# ... and the check that rules out the answer 0 (search_epsilon's above_at, and ZeroEnd's settled state) asks first
# whether the fourth-moment lower value of D_up(0) (zero_moments.zero_lower, Hoelder) exceeds delta; False: the loose
# pass and get_delta(0) as before (main's calls; the answer is the same float either way)
EPS41B_ZERO_LOWER = True
# session 41, body41
# docs/accountant_tail.md §59.2: a far-tail body pass whose gap exceeds BODY_LEAP_EIGHT_RATIO times its share divides the
# step by 8 (§31.2's quarter step would miss the share too where the gap shrinks at most as h^2; a step that does not
# fit the size caps is replaced by the next coarser one; a choice of which certified passes run); False: main's steps
# (by 2 or 4) and floats
BODY_LEAP_EIGHT = True
BODY_LEAP_EIGHT_RATIO = 16.0
# session 42 (each: an estimate choosing which certified values run; the other value gives main's floats)
# rep42, docs/accountant.md §9.20: a reported split through bot keeps its search's leg B where that leg's far-tail
# lower-tail penalty is >= RATIO x its upper value and its lower value < LOWER x its upper value
VIA_BOTTOM_PENALTY_KEEP = True
VIA_BOTTOM_PENALTY_RATIO = 1.0
VIA_BOTTOM_PENALTY_LOWER = 0.5
# pair42, docs/composition.md §2.25: in a pair's warm sweep an atom-law sum starts at its family's settled step and
# refines the lower value alone; OFF (§2.25.4: 10-RR n = 1e6 -17 % lattice work, PrivUnit n = 1e6 +24 %)
PAIR42_WARM_SETTLED = False
# g05, docs/accountant_tail.md §62.1: the Chernoff lambda search's Newton step on the logarithms of F''s two parts;
# off at session 42's merge, ON since session 44 after a full test run (§62.4: it moves last bits, <= 3.1e-12)
CHERNOFF_LOG_STEP = True
# g05, §62.2: the narrowest lognormal cells by the 2-point rule; OFF: its error is NOT proven within kGlRel (the
# moment's reaches 1.4e-11 at kNarrow2); do not switch it on before a threshold with a proven bound replaces kNarrow2
CELLS_TWO_NODE = False
# eps42, docs/accountant.md §8.22: a report's law that is the mirror image of one certified before it (eps = 0's two
# orders; mirror_law.mirrored, bit for bit) takes that bracket moved by the closed-form mean and both value errors
EPS42_MIRROR = True
# eps42, §8.22.6: get_epsilon evaluates get_delta(0) first where sqrt(2 / pi) zero_upper is (1 + rel_tol) below delta
EPS42_ZERO_FIRST = True
# ft42, docs/accountant_tail.md §63.1: along a sweep (plain_warm.warm_sweep) the far-tail clamp T0 is searched from the
# law family's clamp at the previous eps (far_tail_warm.sweep_T0); False: far_tail_grid.choose_T0 everywhere
FT42_T0_WARM = True
# session 43, eps43
# docs/accountant.md §8.23.1 (moved from mirror_law.py, values unchanged; §8.22.3 (iii)): the largest widening (the
# charges: value errors, the mean's bracket, rounding) of a mirrored bracket, in units of rel_tol times its lower value,
# with which it replaces the driver's run; and the least n at which a report takes a mirrored bracket (below it the
# driver's run of the image law costs little and keeps its own floats)
MIRROR_CHARGE = 1e-3
MIRROR_N = 10**6
# docs/calibration.md §15: on the loose search at CAL_LOOSE_REL_TOL_N <= n <= CAL43_CHEAP_N_MAX, calibrate_gaussian's certifying evaluation
# is tried first at rel_tol CAL43_CHEAP_REL where the last loose bracket is at most CAL43_CHEAP_WIDTH wide (relative),
# kept where it decides the point (calibration/cheap_cert.py); on since the lead's merge (calibration tests run with it
# on, one pinned); False: main's evaluations and answers
CAL43_CHEAP_CERT = True
CAL43_CHEAP_REL = 0.1
CAL43_CHEAP_WIDTH = 0.04
CAL43_CHEAP_N_MAX = 10**8
# session 43, g43
# docs/accountant_tail.md §64.1: the narrower lognormal cells by fewer Gauss-Legendre nodes, 2 at kappa <= 1e-4, 3 at
# kappa <= 1/128, 4 at kappa <= 1/16 (kappa = u1 (|v*| + r + 1)), each tier's truncation proven within kGlRel (Lemma
# 64.1); False: the 8-point rule (main's floats). CELLS_TWO_NODE (g05, above) now selects this same proven rule (§62.2's
# unproven one is gone); ON since session 44 after a full test run (it moves last bits)
CELLS_FEW_NODES = True
# session 43, pair43
# docs/composition.md §2.26: a dominating pair of a pure-LDP round (atom laws, not through bot) takes every sample upper
# first (no bracket: not for the even points, not ahead, not in capped_cover) and covers it by U (1 +
# PAIR43_SETTLED_MARGIN); ON since session 44 after a full test run (§2.26.6: it moves every pure-LDP pair)
PAIR43_SETTLED_COVER = True
PAIR43_SETTLED_MARGIN = 1e-3
# session 43, rep43
# docs/accountant.md §9.21: a leg through bot asked at one rel_tol is served by the same leg (order, epsilon) certified
# at another rel_tol where that report meets the request (asked tighter, within the request's rel_tol, or below its
# absolute target; via_bottom_serve.served); False: main's legs and floats
VIA_BOTTOM_LEG_SERVE = False
# session 43, fix43
# docs/worst_case_pairs.md §6.2-§6.3: PrivUnit's replace-one V (d >= 3) at a coplanar configuration takes the
# three-cap measure from privunit_coplanar (the kink the quadratic's dropped double root left inside a piece), and the
# search reports the largest a-posteriori-checked V of its final points (not a privacy figure: chi_up[replace], an
# index); False: main's floats
PRIVUNIT_COPLANAR_CHECKED = True
# session 43, body43
# docs/accountant_tail.md §65.1: the lattice engine's window sum by Parseval from the power step's few non-zero
# frequencies (spectral_sum.window_sum, Lemma 65.1) instead of the inverse FFT and the O(N) window loop, at FFT lengths
# N >= BODY43_SPECTRAL_MIN_N; it moves last bits of E and the round-off term; ON since session 44 after a full test
# run (§65.4); False gives session 43's floats
BODY43_SPECTRAL_SUM = True
BODY43_SPECTRAL_MIN_N = 2**18
# session 44, body44
# docs/accountant_tail.md §66.1: a far-tail round's first body pass (a bracket's, at n >= BODY44_FIRST_N) aims at
# half the round's step where the pass at the round's step is expected to be followed by one at its half (the hat
# window's body bracket misses its share by BODY44_FIRST_MIN to BODY44_FIRST_RATIO times, or its lower value is 0 and
# the quarter step's lattice exceeds K_MAX; far_tail_steps.first_aim): a choice of passes, every value certified; ON
# since the lead's full run (session 44); False: session 43's passes and floats
BODY44_FIRST_SKIP = True
BODY44_FIRST_N = 10**8
BODY44_FIRST_MIN = 20.0
BODY44_FIRST_RATIO = 150.0
# session 44, g44
# docs/accountant_tail.md §67.4: sphere.three_cap_measure at coplanar configurations (|sin psi| <= 1e-12, d >= 3) cuts
# its t-integral at the exact kink t* of the conditional caps (sphere.coplanar_kink; the touching quadratic's double
# root, lost by np.roots, docs/worst_case_pairs.md §6.1); ON since the lead's full run; False: session 43's floats
SPHERE44_KINK_CUT = True
# session 44, pair44
# docs/composition.md §2.27: in a sweep reading no lower value (a privacy profile's, a pure-LDP round's pair under
# §2.26) an atom-law sum's upper value first is one pass of the upper law alone at its family's last settled step
# (settled_start.py), coarsened by the factor the h^2 model of its estimated distance allows up to
# PAIR44_SETTLED_AIM rel_tol (at most PAIR44_SETTLED_GROW), at most PAIR44_SETTLED_RUNS values in a row, kept at
# least PAIR44_SETTLED_FALL times the checked value; ON since the lead's full run; False: session 43's floats
PAIR44_SETTLED_START = True
PAIR44_SETTLED_RUNS = 8
PAIR44_SETTLED_AIM = 0.05
PAIR44_SETTLED_GROW = 2.0
PAIR44_SETTLED_FALL = 0.1
# session 44, eps44
# docs/accountant.md §8.24.1: where get_epsilon's single-big-jump start is not formed (laws not all atom laws), phase 1
# starts at the root of the shape model "normal body plus one big jump" (shape_start.shape_start) with its slope (a
# choice of points only); ON since the lead's full run; False: the Gaussian-limit guess and its slope (session 43's)
EPS44_SHAPE_START = True
# ... only where the largest mean number of other active users (n - 1) gamma over the laws is at least this
EPS44_SHAPE_ACTIVE = 1000.0
# ... and phase 1 from that root stops after one upper-only pass where the model's step from it stays within the
# search's reach (as from the single-big-jump root, §8.11.3); False: phase 1 runs on from it as from any first point
EPS44_SHAPE_ONE = False
# docs/accountant.md §8.24.2: the refit of phase 2's first point on law b (search._refit, docs/accountant.md §8 step 6)
# stops once its model root moves by at most this many xtol (in log eps); 0.05: main's stop
EPS44_REFIT_STOP = 0.05
# docs/calibration.md §16.1: calibrate_gaussian's start on the loose search (zero-out, the base with the big jump) at
# n >= CAL44_SHAPE_N is where the shape model "normal body plus one big jump" on the accountant's laws meets the
# search's target (calibration/gauss_shape.py; a model only); False: the Jensen start of §13.1 (main's evaluations)
CAL44_SHAPE_START = False
CAL44_SHAPE_N = 10**8
# docs/accountant.md §8.24.3: the closed form (concentrated._certify) refuses without its stages 4-5 where stage 3's gap
# exceeds CLOSED44_REACH times the acceptance (a choice of route: the far-tail treatment answers); 0.0: off (main's)
CLOSED44_REACH = 0.0
# session 44, rep44
# docs/accountant.md §9.22.2: the golden section's new split (through bot, CliffSearch._golden) is probed first against
# the kept split (leg B at PROBE_TOL to the decision's target); where the probe's certified lower value decides it worse
# it is not certified at the search's rel_tol (the section's comparisons are main's); False: main's legs and floats
VIA_BOTTOM_GOLDEN_PROBE = False
# docs/accountant.md §9.22.3: where the loose model search (§9.11) finds no balanced split, the split at the closed-form
# edge of leg B's cliff (§9.14) is certified first and reported where the split BEYOND_TOL past it is not better
# (via_bottom_edge_first.edge_first; the chain is convex in e^{e1}, Lemma 9.22.1); ON since the lead's full run
VIA_BOTTOM_EDGE_FIRST = True
# docs/accountant.md §9.22.5: the cap proofs of §9.3 skipped before any closed form where the legs' E[L_+] (trivial caps) at
# the split 0.35 eps put the chain below 1 (via_bottom_cover.trivial_refuted, Lemma 9.18.1); ON since the lead's full
# run (bit for bit on the 96 family-e cells, §9.22.6); False: main's proofs
VIA_BOTTOM_TRIVIAL_REFUTE = True
