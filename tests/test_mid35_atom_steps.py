"""Session 35 (mid35): refine's steps snapped to a divisor of an atom law's spacing and lower-only passes once the
upper value has settled (docs/accountant_tail.md §46).

References: the exact blanket divergence of a three-atom law by binomial sums (``_blanket_three_atoms`` of
tests/test_krr29_settled_upper.py: scipy's binomial distribution functions, no lattice, no FFT); main's floats with
the switches off (measured on main f69257b); a full lattice pass at the same step for the lower-only pass."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant import laws_for
from sharpdp.shuffle.accountant import plain as PL
from sharpdp.shuffle.accountant.blocks import block
from sharpdp.shuffle.accountant.lattice import lattice_pass
from sharpdp.shuffle.accountant.spacing import SPACING_REL, atom_spacing, snap, spacing_of
from sharpdp.shuffle.laws import FiniteLaw
from _main_floats34 import machine_same, switch
from tests.test_krr29_settled_upper import _blanket_three_atoms

#: main f69257b's bracket of GaussianRandomizer(4.6), n = 1e4, eps = 1e-3, zero-out
MAIN_G46_1E4 = (0.0008458295939851466, 0.0008471996268001504)
KRR4 = sh.RandomizedResponse(10, 4.0)
KRR1 = sh.RandomizedResponse(10, 1.0)
PU = sh.PrivUnit(0.75, 0.2, 10)


def _law(randomizer, eps: float):
    (gamma, law), = laws_for(randomizer, eps, "replace")
    return float(gamma), law


@pytest.mark.parametrize("randomizer", [KRR4, KRR1, sh.RandomizedResponse(10, 8.0), PU])
def test_spacing_of_three_atom_laws(randomizer):
    """The replace-one laws of k-RR and PrivUnit: s is the largest atom, every atom at most SPACING_REL s below a
    multiple of s; the block law carries its user law's spacing."""
    gamma, law = _law(randomizer, 0.001)
    v, p = law.atoms()
    s = spacing_of(np.asarray(v), np.asarray(p))
    assert s == float(np.max(v))
    r = np.asarray(v) - np.ceil(np.asarray(v) / s) * s
    assert np.all(r <= 0) and np.all(r >= -SPACING_REL * s)
    assert atom_spacing(law) == s
    blk = block(gamma, law, 10**6)
    assert blk is not None and atom_spacing(blk.law) == s
    # every block value lies at or below a multiple of s, within t max residual (the narrow clusters of §46.2)
    bv = blk.law.values[blk.law.probs > 0]
    rb = bv - np.ceil(bv / s * (1 - 1e-12)) * s
    assert np.all(rb <= 1e-9 * s) and np.all(rb >= -blk.t * SPACING_REL * s - 1e-9 * s)


def test_spacing_refused_and_snap(monkeypatch):
    """No spacing for atoms off the multiples of their largest one, above them, or a single atom; snap gives the
    largest s / m at most h."""
    switch(monkeypatch, "SNAP_COARSE", False)  # (**) session 36, lead: h = 2.5 > 2 s is left alone since §46.5
    assert spacing_of(np.array([-1.0, 0.0, 1.3]), np.array([0.3, 0.4, 0.3])) is None  # -1 is 1.0 below 0
    assert spacing_of(np.array([-0.5, 2.0]), np.array([0.5, 0.5])) is None
    assert spacing_of(np.array([-1.0, 1.0]), np.array([0.5, 0.5])) == 1.0
    assert spacing_of(np.array([-2.0, 1.0]), np.array([0.5, 0.5])) == 1.0
    assert spacing_of(np.array([-1.001, 1.0]), np.array([0.5, 0.5])) == 1.0  # 0.001 s below -s: within SPACING_REL
    assert spacing_of(np.array([-1.02, 1.0]), np.array([0.5, 0.5])) is None  # 0.02 s below -s
    assert spacing_of(np.array([1.0]), np.array([1.0])) is None
    assert atom_spacing(FiniteLaw([-3.1, 0.5], [0.5, 0.5])) is None
    assert atom_spacing(FiniteLaw([-3.0, 0.5], [0.5, 0.5])) == 0.5
    for h in (0.013, 0.1, 0.37, 0.5, 0.99, 1.0, 2.5):
        g = snap(h, 1.0)
        m = round(1.0 / g)
        assert abs(m * g - 1.0) < 1e-15 and g <= h * (1 + 1e-12)
        assert m == 1 or 1.0 / (m - 1) > h  # the largest such step
    assert snap(0.3, None) == 0.3


def _spy_steps(monkeypatch) -> list:
    calls: list = []
    orig = PL.lattice_pass

    def spy(law, gamma, n, h, *a, **k):
        calls.append((h, k.get("upper", True), law.std()))
        return orig(law, gamma, n, h, *a, **k)

    monkeypatch.setattr(PL, "lattice_pass", spy)
    return calls


@pytest.mark.parametrize("randomizer,n,eps,snapped", [(KRR4, 10**5, 1e-3, True), (KRR4, 10**5, 0.1, False),
                                                      (PU, 10**5, 1e-3, True), (PU, 10**5, 0.01, False),
                                                      (KRR1, 10**5, 1e-3, True), (KRR4, 3 * 10**5, 0.005, True)])
def test_snapped_brackets_hold_the_exact_value(monkeypatch, randomizer, n, eps, snapped):
    """The brackets with §46 on contain the exact blanket divergence (binomial sums) and meet rel_tol; the lattice
    passes ran at steps s / m where the law has a spacing (at larger eps the negative atom moves off -s: none)."""
    calls = _spy_steps(monkeypatch)
    switch(monkeypatch, "ATOM_SPACING_SNAP", True)
    lo, up = sh.ShuffleAccountant(randomizer, n, "replace").get_delta_bounds(eps)
    gamma, law = _law(randomizer, eps)
    v, p = law.atoms()
    ref = _blanket_three_atoms(gamma, v, p, n)
    assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (lo, ref, up)
    assert up - lo <= 1e-2 * lo
    s = float(np.max(v))
    assert calls, "no lattice pass ran"
    assert (atom_spacing(law) is not None) == snapped
    for h, _, _ in (calls if snapped else []):
        m = s / h
        assert abs(m - round(m)) < 1e-9 * m, (h, s)


def test_switches_off_restore_main_floats(monkeypatch):
    """Both switches off: main's floats bit for bit (measured on main f69257b)."""
    switch(monkeypatch, "ATOM_SPACING_SNAP", False)
    switch(monkeypatch, "LOWER_ONLY_SETTLED", False)
    cells = [(PU, 10**6, (0.0007524590487973161, 0.0007570245599668796)),
             (KRR4, 10**5, (0.011476306341118753, 0.011503357774074274)),
             (KRR1, 10**6, (2.5435755537718187e-05, 2.554891014517482e-05))]
    for r, n, want in cells:
        got = tuple(float(x) for x in sh.ShuffleAccountant(r, n, "replace").get_delta_bounds(1e-3))
        assert machine_same(got, want), (got, want)  # (**) session 42, lead: MACHINE_REL


def test_snap_moves_within_rel_tol(monkeypatch):
    """At a cell where the rule ends the refinement earlier, the new bracket overlaps main's (both certified) and
    meets rel_tol; main's bracket (switch off) holds the exact value too."""
    gamma, law = _law(KRR4, 1e-3)
    v, p = law.atoms()
    ref = _blanket_three_atoms(gamma, v, p, 10**5)
    switch(monkeypatch, "ATOM_SPACING_SNAP", False)
    lo0, up0 = sh.ShuffleAccountant(KRR4, 10**5, "replace").get_delta_bounds(1e-3)
    switch(monkeypatch, "ATOM_SPACING_SNAP", True)
    lo1, up1 = sh.ShuffleAccountant(KRR4, 10**5, "replace").get_delta_bounds(1e-3)
    assert (lo0, up0) != (lo1, up1)
    for lo, up in ((lo0, up0), (lo1, up1)):
        assert lo <= ref * (1 + 1e-9) <= up * (1 + 2e-9) and up - lo <= 1e-2 * lo


def test_lower_only_pass_matches_the_full_pass():
    """A lower-only pass on a block law: no upper value, the full pass's lower value up to the lattice positions'
    charge (Lemma 46.1: the lower law's own tilt), and below the exact value."""
    n, eps = 10**5, 1e-3
    gamma, law = _law(KRR4, eps)
    blk = block(gamma, law, n)
    assert blk is not None
    bl, nb = blk.law, n // blk.t
    sd = bl.std()
    h, T, B = sd / 40.0, 40.0 * sd, 40.0 * sd
    full = lattice_pass(bl, 1.0, nb, h, T, B, 1e-2, 1)
    low = lattice_pass(bl, 1.0, nb, h, T, B, 1e-2, 1, upper=False)
    assert math.isinf(low.upper) and low.lower > 0
    assert low.terms["E_lower"] == full.terms["E_lower"]
    assert abs(low.lower - full.lower) <= 1e-9 * full.lower
    # in the driver's units (the block's values over n gamma): below the exact value
    v, p = law.atoms()
    ref = _blanket_three_atoms(gamma, v, p, n)
    scale = nb / (n * gamma)
    assert low.lower * scale <= ref * (1 + 1e-9)


def test_lower_only_passes_run_and_hold(monkeypatch):
    """§46.1 alone (§46.2 off) at PrivUnit, n = 1e8: lower-only passes run after the upper value settled; the bracket
    keeps main's lower value up to the position charge and an upper value of an earlier full pass, within rel_tol."""
    calls = _spy_steps(monkeypatch)
    switch(monkeypatch, "ATOM_SPACING_SNAP", False)
    switch(monkeypatch, "LOWER_ONLY_SETTLED", True)
    lo, up = sh.ShuffleAccountant(PU, 10**8, "replace").get_delta_bounds(1e-3)
    assert [c[1] for c in calls].count(False) >= 1 and calls[0][1]
    main = (3.086817606479035e-08, 3.1035851801741794e-08)  # (main f69257b)
    assert abs(lo - main[0]) <= 1e-9 * main[0]
    assert main[1] <= up <= main[1] * (1 + 1e-3)
    assert up - lo <= 1e-2 * lo


@pytest.mark.parametrize("sigma,sign", [(4.6, -1), (1.0, -1)])
def test_end_atom_spacing_of_gaussian_laws(sigma, sign):
    """The Gaussian randomizer's x vs bottom laws (zero-out): one atom at the end of the support where the lower law's
    sweep starts; on a step s / m it lies END_MARGIN m lattice units before the node (above it for the downward
    sweep)."""
    from sharpdp.shuffle.accountant.spacing import END_MARGIN, end_atom_spacing

    for gamma, law in laws_for(sh.GaussianRandomizer(sigma, 1), 0.01, "zero_out"):
        s = end_atom_spacing(law)
        assert s is not None and atom_spacing(law) == s
        (a,), _ = next(p for p in law.parts if p.atomic).atoms()
        lo, hi = law.support()
        down = math.isfinite(hi) and not math.isfinite(lo)
        assert a == (hi if down else lo)
        for m in (1, 3, 40, 1000):
            c = a / snap(s / m * 1.0000001, s)  # the node's index is -m or m; the atom before it in the sweep
            node = round(c)
            assert abs(node) == m
            off = (c - node) if down else (node - c)
            assert 0.5 * END_MARGIN * m <= off <= 2 * END_MARGIN * m


@pytest.mark.parametrize("n,eps", [(10**3, 1e-3), (10**3, 1e-2), (10**4, 1e-3), (10**5, 1e-3), (100, 1e-2)])
def test_end_atom_brackets_hold_the_edgeworth_value(monkeypatch, n, eps):
    """GaussianRandomizer(4.6), zero-out, on the plain path: with §46.2's end-atom steps the bracket meets rel_tol and
    holds the second-order Edgeworth estimate of tests/_review28_gauss_reference.py (derived from the mechanism's
    densities alone; within three times its own error indicator, the first-order estimate's distance); the passes ran
    on steps s / m."""
    from tests._review28_gauss_reference import d_up_edgeworth

    calls = _spy_steps(monkeypatch)
    switch(monkeypatch, "END_ATOM_SNAP", True)
    lo, up = sh.ShuffleAccountant(sh.GaussianRandomizer(4.6, 1), n, "zero_out").get_delta_bounds(eps)
    e2, e1, _ = d_up_edgeworth(4.6, eps, n)
    ind = 3 * abs(e2 - e1)
    assert lo - ind <= e2 <= up + ind, (lo, e2, up, ind)
    assert up - lo <= 1e-2 * lo
    assert calls
    spacings = [atom_spacing(law) for _, law in laws_for(sh.GaussianRandomizer(4.6, 1), eps, "zero_out")]
    for h, _, _ in calls:
        assert any(abs(sp / h - round(sp / h)) < 1e-9 * sp / h for sp in spacings), (h, spacings)


def test_end_atom_switch_off_restores_main_floats(monkeypatch):
    """END_ATOM_SNAP off: main's floats (measured on main f69257b)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "END_ATOM_SNAP", False)
    got = tuple(float(x) for x in sh.ShuffleAccountant(sh.GaussianRandomizer(4.6, 1), 10**4, "zero_out")
                .get_delta_bounds(1e-3))
    assert got == MAIN_G46_1E4
