"""Every tolerance and size cap of the certified shuffle accountant, in one place.

None of these changes what is certified: each value is a certified bound whatever the setting;
they trade speed, memory and the tightness of the bracket (docs/accountant.md §6.2 for the size
caps, docs/accountant_tail.md §8 and §11 for the far-tail treatment's choices).
"""

from __future__ import annotations

U = 2.0**-53  # unit roundoff of float64

# --- the FFT (docs/accountant.md §3.5, §3.6) ---
FFT_C = 10.0  # constant of the FFT round-off bound C log2(N) u sqrt(N) ||x||_2 (assumption F1, §3.6.2)
N_MAX = 1 << 24  # longest FFT of the plain engine (Coarsen beyond, §6.2)
DFT_WORK = 2e7  # multiply-adds allowed for the accurate low-frequency DFT per FFT (§3.6.4)
# the far-tail body pass's engine runs its power step without that DFT first and keeps the result where its round-off
# bound is at most this times rel_tol times the window sum (1 % of the accuracy target; docs/accountant_tail.md §25)
CHEAP_POWER = 1e-2

# --- the lattice (docs/accountant.md §3, §4) ---
K_MAX = 1 << 21  # fine cells J_LO K of one lattice law (Coarsen beyond, §6.2)
J_LO = 4  # fine cells per lattice step for the lower law (a power of 2, §4.2)
TINY = 5e-324  # floor of every reported upper value (the smallest subnormal)
# Below this, values are certified upper bounds without the rel_tol target: the clamps are not
# chased to T in the hundreds (FFTs of 4e6 points, seconds) for a delta no one uses (§6.3).
VALUE_FLOOR = 1e-24
CAP_NODES = 1 << 12  # lattice nodes of the clamped Chernoff cap's hat law (a few ms, §6.3)

# --- the public class and get_epsilon (docs/accountant.md §7, §8) ---
EPS_CAP = 60.0  # largest epsilon certified with the lattice engine (beyond: step L)
EPS_MAX = 700.0  # largest epsilon at which the laws are built for the E[L_+] cap (e^eps finite)
XTOL_RANGE = (1e-6, 0.5)  # accepted relative tolerance of get_epsilon
SHRINK_ITERS = 200  # bound on the root-search steps (the safe end is returned when reached)
MEMO_MAX = 4096  # entries of the monotone memos (§7.2)

# --- exact blocks of atom laws (docs/accountant.md §5.2) ---
BLOCK_ATOMS_MIN = 60_000  # count vectors per block at n <= 9e6 ...
BLOCK_ATOMS_MAX = 300_000  # ... growing like 20 sqrt(n) up to this
MS_MAX = 1000  # Pascal's row ms stays below 2.7e299, running products below 2^1000
LOG_PW_MIN = -650.0  # p_min^ms >= e^-650: the products of the block weights stay normal doubles
TRUNC = 1e-40  # truncation of the number of active users per block: its largest cost in D units ...
TRUNC_REL = 1e-6  # ... and at most this fraction of an estimate of D_up
EST_FLOOR = 1e-300  # (estimates below this count as this: no value is certified finer)
ONE_BLOCK_ATOMS = 300_000  # count vectors of one block of all n users (atom laws of >= 3 atoms: a closed form)
BLOCK_MU = 48.0  # small blocks (values below 1e-34): at most this many active users per block on average

# --- the far-tail treatment (docs/accountant_tail.md §8, §11) ---
# Longest FFT of the jump term: a window holds about 15 arrays of N doubles at once (the pmf, its
# transform, the nodes, the weights and their products), so 2^22 points keep it near 0.5 GB (§11.1)
N_MAX_TAIL = 1 << 22
GRID_STEP = 64  # nodes per interpolation interval of the stop-loss grid (§4, evaluation)
GRID_BLOCK = 1 << 18  # points per block of the closed forms (bounds their temporaries)
# The plain engine's first grid (step sd/4) holding more nodes than this between its first clamps
# sends the law to the far-tail treatment (§8, dispatch): its later rounds only widen the clamps
PLAIN_NODES_MAX = 1 << 11
# the first step is at least sqrt((n - 1) gamma) sd / H_BULK (16 times coarser where the jump term
# makes the value), and the pair term is sized to PAIR_FRAC rel_tol of the value (§8)
H_BULK = 4096.0
PAIR_FRAC = 0.1
# the deep tail in closed form (§18): its bracket is returned when its gap is at most CLOSED_ACCEPT rel_tol, and its
# clamp T0 makes the pair term at most CLOSED_T0_FRAC rel_tol times the one-jump estimate
CLOSED_ACCEPT = 0.25
# ... and at most CLOSED_ACCEPT_TILTED rel_tol where its lower value needs the tilted term of §21 (near the boundary
# of the closed form's range: there its values stay within about 0.1 rel_tol of the FFT treatment's)
CLOSED_ACCEPT_TILTED = 0.12
CLOSED_T0_FRAC = 0.02
# certify's pre-check (speed only): the closed form is not computed where the Jensen gap at the mean number of active
# users, p(-mu) m sigma^2 / 2 relative to tau(-mu), exceeds CLOSED_PRECHECK rel_tol (with §22's values the bracket's
# width is 0.2-0.22 times that gap on the heavy round at n = 1e5, about 0.3 at n = 1e4; §18 (j), §22 (d))
CLOSED_PRECHECK = 0.53
# §40.3 (session 32): the closed form's stage 4 (a tail deduction by the mgf, a rate below the mean) where the
# earlier stages refuse; False: the stages of §38.3 alone (main's brackets wherever stage 4 would accept)
CLOSED_LOCAL_STAGE = True
# §41 (session 33): the closed form's stage 5 where stage 4 refuses: the lower value also with the whole exponential
# of the tangent of log p (§41.1), the upper value also with the density's bound split at a few sd above the mean
# (§41.4); False: the stages of §40.3 alone (session 32's brackets wherever stage 5 would accept)
CLOSED_EXP_STAGE = True
# docs/composition.md §2.16 (session 34): the dominating pair of a round through bot resolves leg B's steep lattice
# steps at its optimal splits (V >= 1e-12) on a finer lattice; False: session 33's legs (main's pairs, bit for bit)
PAIR_STEEP_STEPS = True

# docs/calibration.md §12 (session 34): on the calibration's loose search (n >= 1e7, eps <= 0.01, docs/calibration.md
# §6) its certifying evaluations ask rel_tol CAL_CERT_REL_TOL_LOOSE (the report's bracket is that accountant's); 1e-2
# restores session 33's answers
CAL_CERT_REL_TOL_LOOSE = 0.02
# ... and calibrate_bmg skips stage 2's two gamma probes there (the base model's gamma is kept); False restores them
CAL_LOOSE_SKIP_PROBES = True

# §43 (session 34): the closed form's stage 6 where stage 5 refuses: the upper value's part below the mean by chords
# of log p over several pieces and the numerical mgf of -V (§43.1); False: the stages of §41.5 alone (session 33's
# brackets wherever stage 6 would accept)
CLOSED_PIECES_STAGE = True

# §44.1 (session 34): the far-tail round's body passes stop where the round's whole bracket already meets
# BODY_WHOLE_ACCEPT rel_tol (another certified bracket, not nested in main's); False: main's passes and floats
BODY_WHOLE_STOP = True
BODY_WHOLE_ACCEPT = 0.8
# docs/accountant_tail.md §44.3 (session 34): an atom law's step where the gap measured between two passes shrinks
# slower than h is aimed as if it shrank like h^ATOM_P_SLOW (fewer, longer passes; another certified bracket);
# False: main's rule there (1.05 sqrt(gap / target)) and main's floats
ATOM_AIM_SLOW = True
ATOM_P_SLOW = 0.8
ATOM_SLOW_RATIO = 2.0  # ... only where the gap is at most this times its target 0.7 rel_tol (farther: main's rule)
# docs/accountant_tail.md §44.4 (session 34): the far-tail jump term's next step is not run where the estimated TV part
# of its gap (`jump.tv_floor_estimate`) already exceeds 0.7 times the gap so far (its own stop test would end there)
JUMP_TV_STOP = True

# docs/accountant.md §9.11 (session 34): the split search through bot on legs at max(rel_tol, 0.1), the least split
# alone certified at rel_tol; False: the candidates of SPLITS and their refinements on legs at rel_tol (main's floats)
VIA_BOTTOM_LOOSE_SEARCH = True

# the switches of sessions 35 on (read them as limits.<NAME>: a pinned value reaches every reader)
from sharpdp.shuffle.accountant.limits_rules import *  # noqa: E402, F403
from sharpdp.shuffle.accountant.limits_rules2 import *  # noqa: E402, F403
