"""The switches of the accountant's speed rules of sessions 45 on, read as ``limits.<NAME>`` only.

The continuation of ``limits_rules.py`` (which reached the accountant's 600-line rule): ``limits`` re-exports every
name here the same way, so tests and users pin a rule with ``limits.<NAME> = value`` (never import a switch by name: a
pinned value would not reach you). Each switch cites the docs section that proves its rule; the value that reproduces
an earlier session's floats is in ``tests/_main_floats34.py``. New switches are appended at the end of this file under
``# session N, NAME``.
"""

# session 45, lead (rev45's finding)
# docs/accountant_tail.md §67.4 (session 45 addendum): the coplanar kink cut of sphere.three_cap_measure also where
# |sin psi| <= SPHERE45_KINK_BAND (np.roots loses the touching quadratic's near-double root up to ~1e-7 from pi);
# 1e-12: session 44's gate (only exact coplanar configurations)
SPHERE45_KINK_BAND = 1e-6

# session 45, pair45
#: docs/composition.md §2.28.4: §2.26's settled cover (samples upper first, U (1 + m), no bracket) also for a zero-out
#: round of BlanketMixedGaussian not bounded through bot; False: main's pairs (brackets where capped_cover asks)
PAIR45_SETTLED_BMG = False

# session 45, body45
BODY45_KEPT_HEAP = True  # the C heap kept for reuse inside the far-tail round's passes (heap_keep.kept_heap; speed only, the same floats): docs/accountant_tail.md §68
BODY45_KEPT_HEAP_N = 10**4  # from this n on (lattice_pass, jump_term, the closed form, whole calls): below, small arrays (speed only): docs/accountant_tail.md §68, §73.7; 10**7 before session 47's merge

# session 45, eps45
#: phase 1 skipped where get_epsilon starts at the single-big-jump root and that model's spread there is at most this;
#: phase 2 then probes the model's root first (docs/accountant.md §8.25; ``accountant/start_probe.py``). 0.0: off (main's
#: search); 0.02 measured, on since session 45's merge (a full suite run with it on)
EPS45_START_PROBE = 0.02

# session 46, eps46
#: calibrate_gaussian's start on the loose search at n >= CAL44_SHAPE_N: the larger sigma0 of §13.1's Jensen start and
#: §16.1's shape-model start (docs/calibration.md §17; ``calibration/gauss_shape.shape_x``). False: main's start (the
#: Jensen start alone, with CAL44_SHAPE_START off)
CAL46_START_MAX = False
#: get_epsilon's phase 1 skipped from this n on (below 1e9) where the search starts at the shape model's root and
#: §8.25's gate is shut: the look of §8.4 at that root instead (docs/accountant.md §8.26.3;
#: ``accountant/start_probe.start_look``). 0: off (session 45's search); 1e8 measured, on since session 46's merge (a full
#: suite run with it on)
EPS46_START_LOOK = 10**8
#: §8.26.3's gate: the single big jump's share of the shape model at the start at least this (measured: 1e-16 and below
#: at GaussianRandomizer(2), (4.6), n >= 1e8, where the look's bias misplaced the root; 7e-8 to 0.98 at the BMGs and
#: GaussianRandomizer(1), n >= 1e8)
EPS46_START_LOOK_SHARE = 1e-12
# session 46, g46
#: docs/accountant_tail.md §71.1: a lognormal law's stop-loss bracket at this many sorted thresholds or more (the
#: closed form's 111,707 at n = 1e8) from the kernel at every 32nd, the chords (upper) and the neighbouring secants
#: (lower) between them where within 1e-9 relative; 0: the kernel at every threshold (main's floats); on: every
#: pinned-float test file run with it on (§71.4)
G46_STOP_LOSS_CHORDS = 4096
# session 46, rep46
#: docs/accountant.md §9.23: the golden section's new split probed first (as VIA_BOTTOM_GOLDEN_PROBE, §9.22.2) only where
#: the legs cached beside it predict its chain at least this factor above the level that decides it worse
#: (via_bottom_gate.probe_first; a choice of which certified legs run; 2.0 measured: no float moved on the 96 cells of
#: family e; on since session 46's merge, a full suite run with it on). 0.0: off (session 45's section)
REP46_PROBE_GATE = 2.0
#: docs/accountant.md §9.23.7: where the loose model search's first splits are at the cap, the cap proved from SPLITS'
#: candidates on legs at the loose rel_tol first (via_bottom_loose_cap.loose_cap; the report (1, 1) as before, other legs
#: cached; on since session 46's merge, a full suite run with it on). False: off (session 45's: the candidates at
#: rel_tol at once)
REP46_LOOSE_CAP = True
# session 46, body46
#: docs/accountant_tail.md §70.3: the one-part spectrum without the forward FFT where Lemma 70.1's chain certifies
#: |z_k|^n <= e^-760 above a cut K and the power step's accurate DFT recomputes every k <= K (other floats); on since
#: session 46's merge (a full suite run with it on); False: session 45's
BODY46_PRUNED_FORWARD = True
BODY46_PRUNED_MIN_N = 2**20  # from this FFT length N on (below, the forward FFT is cheap): docs/accountant_tail.md §70.3
BODY46_PRUNED_RATIO = 1.1  # the chain's interval ratio (work and tightness of the cut only): docs/accountant_tail.md §70.2
# session 46, pair46
#: docs/composition.md §2.29: privacy_profile's own sweep certifies its eps with strides (predicted from the last two
#: certified values) and gives the skipped eps the chord in e^eps of their certified ends where it is within
#: PROFILE46_STRIDE_AIM rel_tol of the ends' geometric interpolation; False: every eps certified (main's floats)
PROFILE46_STRIDE = False
PROFILE46_STRIDE_AIM = 0.5  # docs/composition.md §2.29: a chord's estimated overshoot, in units of rel_tol
PROFILE46_STRIDE_MAX = 8  # docs/composition.md §2.29: at most this many eps per stride (the far end certified)
# session 47, rep47
#: docs/accountant.md §9.24: the early stops at the cap that read one split (§9 (a) and (c), §9.3's one-split proof, the
#: loose cap of §9.23.7's (a)) report (1, 1) only where the end splits f = 0 and f = 1 are certified at or above 1; an end
#: split below 1 joins the candidates and the split search goes on (via_bottom_ends.end_below, end_found; tighter
#: certified values at two cells of family e). False: off (session 46's stops, main's floats)
REP47_END_SPLITS = True  # on since session 48's merge (a full suite run with it on; one pin)
# session 47, eps47
#: docs/accountant.md §8.27.1: ShuffleAccountant.get_delta_bounds and get_epsilon run whole inside heap_keep.kept_heap
#: at n >= BODY45_KEPT_HEAP_N (call_heap.call_kept; speed only, the same floats); False: the passes' scopes alone
EPS47_CALL_HEAP = True
# session 47, dft47
#: docs/accountant_tail.md §72.3: the pruned one-part spectrum (§70.3) takes its frequencies k <= K from the DFT by
#: blocks of 64 nodes with a Taylor expansion of the phase (§72.2, cpp/kernels/dft_taylor.hpp) and its bound, instead
#: of the power step's accurate DFT within its budget (other floats: a larger per-frequency bound, and cells whose K
#: exceeded the budget now pruned); on since session 47's merge (a full suite run with it on, §72.8); False: session 46's
DFT47_TAYLOR_PRUNED = True
# session 47, lead
#: docs/accountant_tail.md §74: the power kernel's norm_Q rounded up by (1 + 1e-10) in fft.spectrum (the blocked sum of
#: squares and its square root round to nearest: the kernel's value can be 1 ulp below the spectrum's l2 norm that
#: fft.spectrum promises; rev47); False: the kernel's value as returned (session 46's floats)
LEAD47_NORM_Q_UP = True
# session 48, gauss48
#: docs/accountant_tail.md §76.1: the lognormal cells kernel's narrow cells take each node's exp and expm1 of an argument
#: |y| <= 2^-7 from Taylor polynomials within 4u (Lemma 76.1; libm's exp/expm1 elsewhere), inside the 64 ulp the cells
#: charge per exponential (the cell bounds unchanged; their values move in the last bits); False: libm's exp/expm1 at
#: every node (session 47's floats)
GAUSS48_SMALL_EXP = True  # on since session 48's merge (a full suite run with it on; one pin)
# session 48, eps48
#: docs/accountant.md §8.28: get_epsilon's phase 1 skipped where the search starts at the shape model's root, that model
#: is all body (the single big jump's share below EPS46_START_LOOK_SHARE: §8.26.3's look shut) and n >= EPS48_BODY_N;
#: phase 2 probes first this many xtol above the root, with the model's slope (``accountant/start_probe.body_start``).
#: 0.0: off (session 47's search and floats); 0.9 measured, on (the 88 test files that reach get_epsilon at n >= 1e8 run
#: with it on: §8.28.5)
EPS48_BODY_START = 0.9
EPS48_BODY_N = 10**8  # docs/accountant.md §8.28: §8.28's rule from this n on (the cells measured: n = 1e8, 1e9)
# session 48, rep48
#: docs/accountant.md §9.25: where §9.24's rule (REP47_END_SPLITS) finds an end split below 1 with SPLITS at the cap, the
#: split search slides from that end on loose legs (via_bottom_end_search.end_search) in place of SPLITS at rel_tol, the
#: window and the golden section (fewer engine legs; another certified split). Inert while REP47_END_SPLITS is off (no
#: end split is looked for: main's floats). False: §9.24's search from the end split (session 47's)
REP48_END_SEARCH = True
#: docs/accountant.md §9.25.7: §9.24's end check skips an end split whose chain's certified lower value (ViaBottom._worse:
#: leg A at the check's rel_tol, leg B at PROBE_TOL) is at or above 1 (it cannot be below 1) before certifying it (fewer
#: legs at the cap cells). Inert while REP47_END_SPLITS is off. False: every end split certified (session 47's)
REP48_END_PROBE = True
# session 48, tail48
#: docs/accountant_tail.md §77: an upper-first far-tail run (§15) on a law with an unbounded left tail computes the lower
#: clamp's penalty and redoes its round with B x 4 where the bracket's rule would (penalty > 0.05 rel_tol of the value),
#: keeping the least certified upper value of its rounds (the bracket's second round of §15, which lowers the jump
#: term's upper value: 0.6-0.9 % on the BMG replace-one pair's deep tail); False: the first round's B alone (session 47)
TAIL48_UPPER_B = True  # on since session 48's merge (a full suite run with it on)
#: docs/accountant_tail.md §77.6: a far-tail bracket's round on a law unbounded below and above is redone with B x 4
#: before its jump term where the lower clamp's penalty on its first lattice law exceeds BRACKET_SKIP times the
#: one-jump estimate (its lower value would be ~0, its redo certain; speed, other floats where the skipped round would
#: have raised §48.2's miss or been the least upper value); False: every round computed (session 47)
TAIL48_BRACKET_SKIP = False
# session 48, cal48
#: docs/calibration.md §20: on the loose search at n >= CAL44_SHAPE_N (calibrate_gaussian, zero-out), stage 3's first
#: certifying point after a single (loose) evaluation takes the model's step from that point lengthened towards the safe
#: side (larger sigma0) by 1 + CAL48_SAFE_STEP_K max(r - 1, 0), r the model's slope over the shape model's (the template's
#: slope was 1.4x too steep at (1e8, 0.001), §19, §20); False: the model's step (session 47's evaluations and floats)
CAL48_SAFE_STEP = False
CAL48_SAFE_STEP_K = 2.0  # docs/calibration.md §20: the step's excess over the model's that r implies, times this
# session 49, lead
#: docs/accountant_tail.md §74 (Lemma 74.1): the several-part spectrum's norm_Q (numpy's norm of the half spectrum times
#: sqrt 2) also times 1 + (4 M + 32) u, M = 2 len(Q): numpy's dot products round, and sqrt 2 alone leaves a margin of only
#: (|Q_0|^2 + |Q_{N/2}|^2) / |Q|^2 >= 1 / M for them; False: sqrt 2 alone (session 48's floats)
LEAD49_NORM_DOT = True
# session 49, eps49
#: docs/accountant.md §8.29: §8.13.2's rule (no loose look at the phase-1 root where phase 1 started from the single
#: big jump's root and the spread of jump_guess.jump_value there is at most LOOK_SPREAD) below this n; the rule before
#: stopped at n = 1e7 (search._WALK_N). 10**7 (off): session 48's searches; 10**10: the rule at every n (BMG of
#: calibrate_bmg at n = 1e8, 1e9, eps = 0.1: the look straddled delta and was spent in vain)
EPS49_LOOK_SPARED_N = 10**10  # on since session 49's merge (a full suite run with it on)
#: docs/accountant.md §8.29: at n >= EPS49_JUMP_PROBE_N, where get_epsilon starts from the single big jump's root
#: (docs/accountant.md §8.11), §8.25's rule (phase 1 skipped, phase 2 probes that root first with its slope) opens up to
#: this spread of jump_guess.jump_value at the root (the larger of it and EPS45_START_PROBE). 0.0 (off): EPS45_START_PROBE
#: alone (session 48's searches); 0.08 (§8.13.2's LOOK_SPREAD) measured
EPS49_JUMP_PROBE = 0.08  # on since session 49's merge (a full suite run with it on)
EPS49_JUMP_PROBE_N = 10**7  # docs/accountant.md §8.29: EPS49_JUMP_PROBE's least n (the cells measured: n = 1e7-1e9)
#: docs/accountant.md §8.29.6: at delta <= EPS49_BODY_DELTA, §8.28's first point is x0 (1 + EPS49_BODY_SMALL xtol) in
#: place of EPS48_BODY_START's (get_delta's root lay 0.19-0.31 xtol above the shape start there, against 0.16-0.69 at
#: delta = 1e-6). 0.0 (off): EPS48_BODY_START at every delta (session 48's floats); 0.5 measured
EPS49_BODY_SMALL = 0.5  # on since session 49's merge (a full suite run with it on)
EPS49_BODY_DELTA = 1e-8  # docs/accountant.md §8.29.6: EPS49_BODY_SMALL's largest delta
# session 49, cal49
CAL49_N = 10**9  # docs/calibration.md §21.1-§21.3: CAL49_FIRST_RHO, CAL49_ONE_LOOSE, CAL49_LOOSE_REL act from this n on
#: docs/calibration.md §21.1: on the loose search at n >= CAL49_N, stage 3's first certifying point aims at log delta -
#: 0.5 log(1 + CAL_CERT_REL_TOL_LOOSE) - mu (the margin of the rel_tol its evaluation asks) instead of 0.5 log(1 + 1e-2)
#: (calibration/few_evals.first_rho); False: 0.5 log(1 + 1e-2) (session 48's evaluations and floats). On: the 45 test
#: files that call a calibration and name n >= 1e8 run with it on (one mechanism assertion pinned), §21.7
CAL49_FIRST_RHO = True
#: docs/calibration.md §21.2: calibrate_gaussian's stage 1 stops after its first (loose) evaluation on the loose search
#: at n >= CAL49_N where that evaluation's estimate lies within this of the target in log delta, CAL48_SAFE_STEP is on
#: and a slope model is set (stage 3's first step is §20's from it; calibration/few_evals.one_loose); 0.0: off (session
#: 48's stage 1)
CAL49_ONE_LOOSE = 0.0
#: docs/calibration.md §21.3: the loose search's model points at n >= CAL49_N ask this rel_tol instead of
#: CAL_LOOSE_REL_TOL (0.3; calibration/few_evals.loose_rel) on calibrate_gaussian's search; 0.0: off (session 48's
#: evaluations and floats). On, as CAL49_FIRST_RHO (§21.7)
CAL49_LOOSE_REL = 0.5
#: docs/calibration.md §21.4: a certifying evaluation tried first at CAL43_CHEAP_REL (§15) whose bracket straddles delta
#: counts as a failed certification (the search steps to the safe side and tries the cheaper rel_tol again there) instead
#: of being evaluated again at the usual certifying rel_tol (calibration/cheap_cert.py); False: evaluated again (session
#: 48's evaluations and floats)
CAL49_CHEAP_STEP = False
# session 49, eng49
#: docs/composition.md §2.34.3: the lattice engine's window sum by Parseval from the power step's non-zero frequencies
#: (§65.1 of docs/accountant_tail.md, Lemma 65.1) from FFT length ENG49_SPECTRAL_MIN_N on instead of
#: BODY43_SPECTRAL_MIN_N (the light rounds' settled passes at n = 1e6: N ~ 5e3 - 9e4; other last bits of E and its
#: round-off term, certified the same way); False: BODY43_SPECTRAL_MIN_N alone (session 48's floats)
ENG49_SPECTRAL_SUM = False
ENG49_SPECTRAL_MIN_N = 2**12  # docs/composition.md §2.34.3: the least N of that rule
# session 49, rep49
#: docs/accountant.md §9.26: inside the golden section's window and the cliff searches (ViaBottom._refine), a split's leg B
#: that §9.12's looser rel_tols leave at the search's rel_tol (>= 0.1) is certified at rel_tol 1 first and kept where it
#: meets its absolute target, widens the chain's bracket by at most rel_tol A_lo(e1), or decides the split worse than the
#: comparison's bar; the reported split's leg B at the search's rel_tol where the loose one misses §9.12's budget
#: (via_bottom_loose_b.loose_b, tight_b; no bracket moved on the 96 cells of family e). False: leg B at the search's
#: rel_tol (session 48's)
REP49_LOOSE_B = False
#: docs/accountant.md §9.26: the bisection of a cliff search (§9.5 _shrink, also in get_epsilon's walk) stops after any
#: step where Lemma 9.26.1's lower value of every split between (leg A at its worse end, best's leg B) is within
#: SHRINK_GAIN of the best split's lower value (via_bottom_loose_b.shrink_done; moves floats on the paths before §9.14's
#: closed edge, by at most SHRINK_GAIN). False: the check of §9.5 before the first step only (session 48's)
REP49_SHRINK_STOP = False
# session 49, pair49
#: docs/accountant_tail.md §79 (docs/composition.md §2.35): §2.26's settled cover (every sample upper first, U (1 + m),
#: no bracket) also for a replace-one round of BlanketMixedGaussian not bounded through bot, where TAIL48_UPPER_B is on;
#: False: session 48's pairs (brackets for the even points, the first stage, ahead and in capped_cover)
PAIR49_SETTLED_REPLACE = False
# session 49, jgap49
#: docs/accountant_tail.md §81: far_tail stops refining the jump term's step where its gap is at most JGAP49_SHARE
#: rel_tol times the body's value (its normal estimate, then its Chernoff upper value; §27 (b) with 0.05), and a coarser
#: run's jump miss (§54.4) is also measured against that share (a choice of steps, every grid certified); False: the
#: share 0.05 and the jump term's own miss (session 48's steps and floats)
JGAP49 = False
JGAP49_SHARE = 0.5  # docs/accountant_tail.md §81: the share of that rule
