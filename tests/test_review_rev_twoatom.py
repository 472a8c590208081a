"""Adversarial review of the exact two-atom engine (docs/accountant_atoms.md §12; cpp/kernels/two_atom.hpp,
accountant/two_atom.py, driver.certify, search.search_epsilon) against independent references.

References (tests/data/review_rev_twoatom/, made by make_refs.py there): D_up by direct double sums in
mpmath at 40 digits (every M, every c above the threshold, no recurrence and no truncation), for the
kernel's double inputs taken exactly, and for the exact k-RR laws (atoms from e^eps0, e^eps at 40 digits)
for the accountant; get_epsilon's true roots by bisection on that exact profile. Live references here:
the same double sum at small n (mpmath, < 0.1 s each), E[L] for laws where S > 0 surely.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest

from sharpdp import _core
from sharpdp.shuffle import FiniteRandomizer, RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import two_atom
from sharpdp.shuffle.accountant.driver import certify, lattice_for_two_atoms
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.laws import FiniteLaw, laws_for

REFS = json.loads((Path(__file__).parent / "data" / "review_rev_twoatom" / "refs.json").read_text())
KERNEL = _core.accountant.two_atom_bracket


def mpf(s: str) -> mp.mpf:
    with mp.workdps(40):
        return mp.mpf(s)


def dup_direct(a1, a2, p2, gamma, n) -> mp.mpf:
    """D_up by the double sum (as make_refs.dup_direct), at 40 digits; small n only."""
    with mp.workdps(40):
        a1, a2, p, g = mp.mpf(a1), mp.mpf(a2), mp.mpf(p2), mp.mpf(gamma)
        q, beta, tot = 1 - p, -a1 / (a2 - a1), mp.mpf(0)
        for M in range(1, n + 1):
            pm = mp.binomial(n, M) * g**M * (1 - g) ** (n - M)
            t = M * beta
            for c in range(int(mp.floor(t)) + 1, M + 1):
                tot += pm * (c - t) * mp.binomial(M, c) * p**c * q ** (M - c)
        return (a2 - a1) * tot / (n * g)


# ---------------------------------------------------------------------------------------------- the kernel


@pytest.mark.parametrize("case", REFS["kernel"], ids=lambda c: "%g,%g,%.3g,%g,%d" % tuple(c[:5]))
def test_kernel_bracket_holds_the_exact_sum(case):
    """lower <= D_up <= upper on the corners of the brief (n = 1, 2, 3; beta = 1/3, 1/2, 3/4 with t_M on
    integers; E[L] >= 0 and < 0; p2 = 1e-6, 1 - 1e-6, 1 - 2^-40; gamma = 1e-6, 1; beta near 0 and 1;
    |a1| >> a2 and a2 >> |a1|; deep tails (fresh sums); D_up ~ 1e-307 .. 1e-317 (subnormal); n = 3000).
    Catches: a wrong recurrence coefficient (e.g. P' with (M + 1 - k) replaced by (M - k)), G - T taken at
    the wrong k, the start state's remainder dropped, a truncation charge dropped, rounding inwards."""
    a1, a2, p2, g, n, ref = case
    ref = mpf(ref)
    lo, up, charge, m_lo, m_hi, _, ok = KERNEL(a1, a2, p2, g, n)
    assert ok
    assert mp.mpf(lo) <= ref <= mp.mpf(up), (lo, float(ref), up)
    if ref > 1e-60:
        # claimed ~1e-10 relative. Exception: |a1| >> a2 (beta = 1 - 1e-6): M - M beta is formed from the
        # rounded beta, the relative error of 1 - beta is ~1e-13/1e-6 (2.4e-7 wide: looser, not wrong)
        tol = 1e-6 if max(-a1, a2) >= 1e5 * min(-a1, a2) else 1e-9
        assert up - lo <= tol * float(ref), (up - lo) / float(ref)
    if ref < 1e-300:
        assert up <= 1e-280  # (a useful upper value even where the exact sum underflows)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
@pytest.mark.parametrize("a1, a2, p2, g", [(-1.0, 1.0, 0.5, 0.3), (-2.0, 0.5, 0.9, 1.0), (-0.25, 3.0, 0.05, 0.7),
                                           (-1.0, 3.0, 0.25, 1e-9)])
def test_kernel_small_n_live(n, a1, a2, p2, g):
    """n <= 7 against the live double sum (every term), including n = 1: E[L_+] exactly."""
    lo, up, charge, *_ = KERNEL(a1, a2, p2, g, n)
    ref = dup_direct(a1, a2, p2, g, n)
    assert mp.mpf(lo) <= ref <= mp.mpf(up)
    # (E[L] = 0 at (-1, 3, 0.25): the charge t p2 a2 / gamma of §12.4, 1.3e-7 at gamma = 1e-9, is charged
    # even where N's window is all of [0, n] (n = 1): loose, not wrong)
    assert up - lo <= 1e-12 * float(ref) + 1.01 * charge
    if n == 1:
        assert abs(float(ref) - a2 * p2) <= 1e-15 * a2 * p2


def test_kernel_declines_or_holds_where_the_start_walk_is_long():
    """p2 = 0.9, beta = 1e-3 at n = 5000, gamma = 1: k ~ 100 lies ~4500 steps below the mode, the start walk
    declines (ok False); certify then falls back to the lattice path, whose bracket must still hold D_up =
    E[L] + E[S_-]/n (S_- ~ P(c <= 100) ~ e^-1e4: D_up = E[L] to 1e-300). Catches a declined run whose (0, 0)
    result were used as a bracket."""
    a1, a2, p2, n = -1e-3, 1.0, 0.9, 5_000
    r = KERNEL(a1, a2, p2, 1.0, n)
    law = FiniteLaw(np.array([a1, a2]), np.array([1 - p2, p2]))
    assert two_atom.bracket(law, 1.0, n) is None or r[6]
    b = certify(law, 1.0, n, 1e-2, 1, Bracket())
    mean = p2 * a2 + (1 - p2) * a1
    assert b.lower <= mean * (1 + 1e-15) and mean * (1 - 1e-15) <= b.upper  # (lattice: lower 0 here)


@pytest.mark.parametrize("n, g", [(10**4, 0.5), (10**6, 0.3), (10**8, 0.5), (10**9, 0.01), (10**9, 0.9)])
def test_kernel_large_n_rademacher(n, g):
    """L = +-1 with p2 = 1/2 (E[L] = 0, beta = 1/2, t_M on integers every other M) at n up to 1e9: D_up =
    sum_M P(N = M) E|S_M| / (2 n gamma), E|S_M| = M P(Bin(M - 1, 1/2) = floor((M - 1)/2)), by scipy's binom.pmf
    (uncertified, ~1e-14 relative per term; summed over N's window at 14 sd: left out < 1e-40). Checks the
    windows, the 2^-900 rescaling of N's pmf, the normalisation and the truncation charge at large n: the
    reference sits mid-bracket (margins 1e-8 at n = 1e9, where the bracket is 2e-8 wide)."""
    from scipy.stats import binom

    lo, up, *_ = KERNEL(-1.0, 1.0, 0.5, g, n)
    sd = math.sqrt(n * g * (1 - g))
    M = np.arange(max(1, int(n * g - 14 * sd)), min(n, int(n * g + 14 * sd)) + 1)
    ref = math.fsum(binom.pmf(M, n, g) * M * binom.pmf(np.floor((M - 1) / 2), M - 1, 0.5)) / (2 * n * g)
    assert lo * (1 - 1e-12) <= ref <= up * (1 + 1e-12)
    assert up - lo <= 5e-8 * ref


# ------------------------------------------------------------------------------------ the accountant's values


@pytest.mark.parametrize("case", REFS["accountant"], ids=lambda c: "%d,%g,%d,%g,%s" % tuple(c[:5]))
def test_get_delta_bounds_hold_the_exact_krr_profile(case):
    """get_delta_bounds(eps) of ShuffleAccountant(RandomizedResponse(k, eps0), n, adjacency) against the
    exact blanket divergence of the exact k-RR laws (40-digit atoms, not the stored doubles): the shifts by
    value_error and the p2 interval (k = 3: 2/3 + 1/3) must cover the stored laws' rounding. Includes the
    deep-tail cell of §12.2 (binary RR eps0 = 4, zero-out, n = 3000, eps = 1.21) and n = 2, 3.
    Catches: value_error not applied (or applied with the wrong sign), p2 read from the wrong atom."""
    k, e0, n, eps, adj, ref = case
    ref = mpf(ref)
    clear_caches()
    lo, up = ShuffleAccountant(RandomizedResponse(k, e0), n, adj).get_delta_bounds(eps)
    assert mp.mpf(lo) <= ref <= mp.mpf(up), (lo, float(ref), up)
    if ref > 1e-24:
        assert up - lo <= 1e-6 * float(ref)


@pytest.mark.parametrize("k, e0, n, adj, eps", [(2, 1.0, 200, "zero_out", 0.2), (2, 0.5, 1000, "replace", 0.05),
                                                (3, 2.0, 150, "zero_out", 0.5), (2, 4.0, 3000, "zero_out", 1.21)])
def test_new_values_inside_the_lattice_brackets(k, e0, n, adj, eps):
    """The values change only within the old engine's bracket (the switch lattice_for_two_atoms())."""
    rr = RandomizedResponse(k, e0)
    clear_caches()
    lo, up = ShuffleAccountant(rr, n, adj).get_delta_bounds(eps)
    clear_caches()
    with lattice_for_two_atoms():
        lo_o, up_o = ShuffleAccountant(rr, n, adj).get_delta_bounds(eps)
    clear_caches()
    assert lo_o <= lo <= up <= up_o


@pytest.mark.parametrize("k, e0, n, adj", [(2, 1.0, 200, "zero_out"), (2, 4.0, 1000, "replace"), (5, 1.0, 300, "zero_out")])
def test_uppers_consistent_along_eps(k, e0, n, adj):
    """D_up is non-increasing in eps: the lower value at eps_{i+1} never exceeds the upper value at eps_i, law
    by law, on a fine grid (the kernel called directly: no accountant memo in between). Catches a bracket
    that is shifted (e.g. a wrong beta, or p2 and 1 - p2 swapped in one end)."""
    rr = RandomizedResponse(k, e0)
    prev = None
    for eps in np.linspace(0.0, 0.95 * e0, 60):
        cur = []
        for g, law in laws_for(rr, float(eps), adj):
            b = two_atom.bracket(law, float(g), n)
            cur.append(None if b is None else (b.lower, b.upper))
        if prev is not None:
            for a, b in zip(prev, cur):
                if a is not None and b is not None:
                    assert b[0] <= a[1]
        prev = cur


# --------------------------------------------------------------------------------------------- get_epsilon


@pytest.mark.parametrize("case", REFS["roots"], ids=lambda c: "%d,%g,%d,%s,%g" % tuple(c[:5]))
def test_get_epsilon_within_xtol_of_the_exact_root(case):
    """get_epsilon(delta) = e: the certified get_delta(e) <= delta (fresh accountant, caches cleared: the
    search's probe and get_delta must agree) and r* <= e <= r* (1 + xtol) with r* the exact root. Cells
    at small n and deep tails (10-RR eps0 = 2, n = 100, delta = 1e-16; 3-RR, 1e-20), where a first version
    of the search answered 55 % and 14 % above the root (the decision mode took the exact sum's loose upper
    value, 1e-15 against 1e-65, while get_delta refined on the lattice)."""
    k, e0, n, adj, delta, root = case
    root = float(mpf(root))
    xtol = 1e-3
    clear_caches()
    e = ShuffleAccountant(RandomizedResponse(k, e0), n, adj).get_epsilon(delta, xtol=xtol)
    clear_caches()
    assert ShuffleAccountant(RandomizedResponse(k, e0), n, adj).get_delta(e) <= delta
    assert root * (1 - 1e-9) <= e <= root * (1 + 1.05 * xtol), (e, root, e / root - 1)


@pytest.mark.parametrize("k, e0, n, adj, delta", [(2, 1.0, 1000, "zero_out", 1e-11), (2, 1.0, 10**6, "replace", 1e-9),
                                                  (3, 2.0, 10**5, "zero_out", 1e-7), (2, 0.5, 10**9, "zero_out", 1e-8)])
def test_get_epsilon_answer_is_a_safe_end(k, e0, n, adj, delta):
    """No phase 1 and no cap frame: the answer must still be a point where a fresh accountant's
    get_delta is <= delta, at xtol = 1e-6 (the answer as close to the root as allowed)."""
    clear_caches()
    e = ShuffleAccountant(RandomizedResponse(k, e0), n, adj).get_epsilon(delta, xtol=1e-6)
    clear_caches()
    assert ShuffleAccountant(RandomizedResponse(k, e0), n, adj).get_delta(e) <= delta


@pytest.mark.parametrize("rel_tol", [1e-2, 1e-3])
@pytest.mark.parametrize("n, eps", [(2000, 0.2625), (3000, 0.2)])
def test_probe_decides_as_get_delta(rel_tol, n, eps):
    """search.probe (decision mode) against get_delta (Bracket mode) on fresh accountants, at delta just
    above and just below get_delta(eps): where the upper run's own width (7e-6 at n = 2000, 7e-7 at 3000 on the
    subtraction path) passes the gate at rel_tol = 1e-2 and fails it at 1e-3 (the lattice path in both modes).
    Catches a mode-dependent engine choice (a probe deciding below delta where get_delta is above: an answer
    that is not a safe end). Swept offline on 1050 cells (k-RR, n = 50..1e5, rel_tol 1e-2..1e-7): no mismatch."""
    from sharpdp.shuffle.accountant.search import probe

    rr = RandomizedResponse(2, 1.0)
    clear_caches()
    gd = ShuffleAccountant(rr, n, "replace", rel_tol=rel_tol).get_delta(eps)
    for delta in (gd * (1 + 1e-9), gd * (1 - 1e-9)):
        clear_caches()
        u = probe(ShuffleAccountant(rr, n, "replace", rel_tol=rel_tol), eps, delta, 1.0)
        assert (u <= delta) == (gd <= delta)


# ------------------------------------------------------------------------------------------------ routing


def test_two_atom_finite_randomizer_and_value_error():
    """A FiniteRandomizer whose zero-out laws have two atoms goes through the exact sum, and its bracket holds
    the exact D_up of the table's laws; a synthetic law with value_error > 0 is shifted outwards: its bracket
    holds D_up of the law moved up and down by value_error."""
    fr = FiniteRandomizer.from_probabilities(np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]))
    (g, law), *_ = fr.privacy_amplification_laws(0.2, "zero_out")  # (three outputs, two distinct atoms)
    assert two_atom.is_two_atom(law)
    r = certify(law, float(g), 40, 1e-2, 1, Bracket())
    assert "two-atom" in r.terms.get("note", "")
    v, p = law.values, law.probs
    ref = dup_direct(float(v[0]), float(v[1]), float(p[1]), float(g), 40)  # (the stored law: inside the
    assert mp.mpf(r.lower) <= ref <= mp.mpf(r.upper)  # bracket of the laws shifted by value_error)
    e = 1e-3
    syn = FiniteLaw(np.array([-1.0, 0.5]), np.array([0.6, 0.4]), value_error=e)
    b = certify(syn, 0.5, 30, 1e-1, 1, Bracket())
    assert mp.mpf(b.lower) <= dup_direct(-1.0 - e, 0.5 - e, 0.4, 0.5, 30)
    assert dup_direct(-1.0 + e, 0.5 + e, 0.4, 0.5, 30) <= mp.mpf(b.upper)
    assert b.upper - b.lower <= 0.1 * b.lower


def test_three_atom_laws_stay_on_the_lattice():
    """k-RR replace-one has three atoms: not a two-atom law (atoms_of None), the lattice path certifies it."""
    (g, law), *_ = laws_for(RandomizedResponse(3, 1.0), 0.2, "replace")
    assert law.values.size == 3 and not two_atom.is_two_atom(law)
    assert two_atom.atoms_of(FiniteLaw(np.array([0.5, 1.0]), np.array([0.5, 0.5]))) is None  # (both > 0)
    assert math.isfinite(certify(law, float(g), 100, 1e-2, 1, Bracket()).upper)


@pytest.mark.parametrize("a1, a2", [(-1e308, 1e308), (-1.0, 1e308)])
def test_kernel_lower_end_at_huge_atoms(a1, a2):
    """Kernel API at atoms near the double range's top: D_up <= E[L_+] = a2 p2 is finite (5e307 here), so a
    lower end of +inf is wrong (it was, before two_atom::bracket took a non-finite lower end as 0)."""
    lo, up, *_ = KERNEL(a1, a2, 0.5, 0.5, 10)
    assert lo <= 0.5 * a2


# binary RR(eps0 = 1) replace-one at eps = 0.2625: beta = 0.641 against p2 = 1/2, the pmf ratio at the
# threshold r ~ 0.56 > 1/2, so every k step takes the subtraction G - T (docs/accountant_atoms.md §12.2)
RR1_REPLACE = (-1.3631274788348837, 0.7627745424979014, 0.5, 0.5378828427399903)


@pytest.mark.parametrize("n", [1000, 2000])
def test_kernel_width_on_the_subtraction_path(n):
    """The claimed relative width ~1e-10 (and docs §12.3's measured 1e-12-1e-8 at values down to 1e-22) on a
    realistic cell: D_up = 1.8e-13 (n = 1000) and 2.8e-23 (n = 2000). It failed (2e-7 / 7e-6 wide, 13.5 at
    n = 1e4) before the k step of two_atom::bracket took fresh sums also where r <= 0.9 and G's interval has
    widened; now ~1.5e-11 (docs/accountant_atoms.md §12.2)."""
    lo, up, *_ = KERNEL(*RR1_REPLACE, n)
    assert up - lo <= 1e-9 * lo


def test_small_n_values_inside_the_old_bracket():
    """The claim 'values change only within the old engine's brackets' at n = 100 (binary RR eps0 = 1,
    replace-one, eps = 0.2625). It failed (the upper value 8e-11 relative above the old one-block closed form's)
    before driver._two_atom_value intersected the two-atom bracket with the one-block closed form where one
    block holds all n users (docs/accountant_atoms.md §12.6)."""
    rr = RandomizedResponse(2, 1.0)
    clear_caches()
    lo, up = ShuffleAccountant(rr, 100, "replace").get_delta_bounds(0.2625)
    clear_caches()
    with lattice_for_two_atoms():
        lo_o, up_o = ShuffleAccountant(rr, 100, "replace").get_delta_bounds(0.2625)
    clear_caches()
    assert lo_o <= lo <= up <= up_o
