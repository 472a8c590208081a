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
BODY45_KEPT_HEAP_N = 10**7  # from this n on (lattice_pass, jump_term): below, small arrays (speed only): docs/accountant_tail.md §68

# session 45, eps45
#: phase 1 skipped where get_epsilon starts at the single-big-jump root and that model's spread there is at most this;
#: phase 2 then probes the model's root first (docs/accountant.md §8.25; ``accountant/start_probe.py``). 0.0: off (main's
#: search); 0.02 measured, on since session 45's merge (a full suite run with it on)
EPS45_START_PROBE = 0.02

# session 46, pair46
#: docs/composition.md §2.29: privacy_profile's own sweep certifies its eps with strides (predicted from the last two
#: certified values) and gives the skipped eps the chord in e^eps of their certified ends where it is within
#: PROFILE46_STRIDE_AIM rel_tol of the ends' geometric interpolation; False: every eps certified (main's floats)
PROFILE46_STRIDE = False
PROFILE46_STRIDE_AIM = 0.5  # docs/composition.md §2.29: a chord's estimated overshoot, in units of rel_tol
PROFILE46_STRIDE_MAX = 8  # docs/composition.md §2.29: at most this many eps per stride (the far end certified)
