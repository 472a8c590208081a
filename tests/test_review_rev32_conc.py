"""Review rev32 of session 32's closed-form stage 4 (the far-tail document's §40, cited by number only so that this file
also passes tests/test_architecture.py on a main without it): §40.1's tail deduction by the numerical mgf and the
moments on finer cells (``concentrated_tilted.tail_ded_up``), §40.2's rate below the mean from the chord beyond it
(``minus_rates``, ``neg_side_up``), §40.3's stage of ``concentrated._certify`` (a choice among certified brackets,
switched by ``limits.CLOSED_LOCAL_STAGE``), and the claim "brackets accepted before are bit-identical".

References, independent of the rules reviewed:
* a lattice bracket of E phi(X_m) (X_m the sum of m copies of V = min(L, T0), phi(x) = tau(max(T0, -x))): V's law
  on K cells from the mechanism's own tail functions (tests/_review28_ak_reference.py, not the package's laws), each
  cell's mass at its lower end (a sum <= X_m) or its upper end (>= X_m); phi is non-decreasing, so the two FFT sums
  bracket E phi(X_m) (up to float round-off); Gaussian randomizer laws sigma0 0.5, 1, 2 and BMG laws, m = 2 ... 40
  (where X_m is far from normal), -T0 - m E V = 0.5 ... 6 T0;
* the same lattice bracket of the whole jump term E phi(A'), A' = the sum of Bin(n - 1, gamma) copies of V, at the
  cell where stage 4 accepts (GaussianRandomizer(0.5, 1), n = 1e3, eps = 6.85, the clamp the stage chose);
* main 15710f7 (none of §40) at rel_tol 1e-5 (REF): certified brackets of the same value, at every cell of this
  review's scan where stage 4 accepts (the scan: GaussianRandomizer sigma0 0.5, 0.6, 0.75, 1, 1.3, 2, 3, 4.6, n = 1e2
  ... 1e7 (3e2 and 3e3 too), eps 0.05 ... 8 on a step of 0.05, and family a's BMG parameters, zero-out and
  replace, rel_tol 1e-2: ``certify`` with the stage off and on); at n = 1e7 (main stalls at a 1e-3 wide bracket) an
  uncertified FFT estimate (tests/_rev29_fft_reference.py, Richardson of h = 4 and 8, agreement 5.5e-7);
* main 15710f7's floats at rel_tol 1e-2 (BASE): with the stage switched off the branch must give them bit for bit,
  and with it on wherever the earlier stages accept (the stage is not reached there).
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
import pytest

from _review28_ak_reference import GaussXBot, OneTerm
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import concentrated, far_tail, limits
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.bmg import bmg_laws
from _main_floats34 import session34_floats  # noqa: E402
from _main_floats34 import switch  # noqa: E402

try:  # (session 32's module: absent on a main without §40)
    from sharpdp.shuffle.accountant import concentrated_tilted as CT
except ImportError:  # pragma: no cover
    CT = None

HAS_40 = CT is not None and hasattr(limits, "CLOSED_LOCAL_STAGE") and hasattr(CT, "neg_side_up")
needs_40 = pytest.mark.skipif(not HAS_40, reason="§40's closed-form stage is not in this build")


# ----------------------------------------------------------------------------------------------- per m, a lattice
def _lattice_phi(ref, a: float, T0: float, m: int, K: int) -> tuple[float, float]:
    """(lower, upper) values of E phi(X_m): V's law on K cells of [a, T0] (the cell (e_j, e_j+1] at e_j or at e_j+1,
    the atom L > T0 at T0), the m-fold law by an FFT, phi = tau(max(T0, -x)) from ``ref.tail``."""
    h = (T0 - a) / K
    e = a + h * np.arange(K + 1)
    e[-1] = T0
    S = np.asarray(ref.tail(e)[0], float)  # P(L > e)
    cell = np.empty(K + 1)
    cell[0] = 1.0 - S[1]
    cell[1:K] = S[1:K] - S[2:K + 1]
    cell[K] = S[K]
    cell = np.maximum(cell, 0.0)
    size = 1 << int(math.ceil(math.log2(m * K + 1)))
    pm = np.clip(np.fft.irfft(np.fft.rfft(cell, size) ** m, size)[: m * K + 1], 0.0, None)
    j = np.arange(pm.size)
    out = []
    for shift in (0, m):  # (the lower ends: node j at m a + j h; the upper ends: every term one cell higher)
        t = np.maximum(T0, -(m * a + h * (j + shift)))
        P, E = ref.tail(t)
        out.append(float(np.dot(pm, E - t * P)))
    return out[0], out[1]


def _per_m(law, T0: float, m: int) -> tuple[float, float, float, float]:
    """(upper without / with §40.2, lower without / with §40.1) of E phi(X_m) for one m, composed as
    ``concentrated._jump_upper``'s sharp stage and ``_lower_m`` compose them."""
    C = concentrated
    mu_lo, mu_hi, sig2, b = C._moments(law, T0)
    mm = np.array([float(m)])
    mh = C._up(mm * mu_hi)
    Q = C._up(mm * sig2 + (mm * (mu_hi - mu_lo)) ** 2)
    f_up = law.stop_loss(-mh)[1]
    tails_T = np.exp(-C._bennett_exp(Q, b, np.maximum(C._dn(-T0 - mh), 1e-300))) * (1 + 1e-12)
    tT = law.tail_upper_bracket(T0)[1]
    ups = [float((f_up + CT.tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi, True, local=loc) + tT * tails_T)[0])
           for loc in (False, True)]
    los = [float(C._lower_m(law, T0, mm, mu_lo, mu_hi, mh, Q, b, curvature=False, tilted=True, local=loc)[0])
           for loc in (False, True)]
    return ups[0], ups[1], los[0], los[1]


def _gauss(s0, eps):
    law = laws_for(GaussianRandomizer(s0, 1), eps, "zero_out")[0][1]
    ref = GaussXBot(s0, eps)
    return law, ref, ref.g - ref.E


def _bmg(g0, s0, eps):
    law = bmg_laws(g0, s0, eps, "zero_out")[0][1]
    a, G, r = law.one_term()
    return law, OneTerm(a, G, r), a


LAWS = [("G", 0.5, 6.85), ("G", 1.0, 2.2), ("G", 2.0, 1.7), ("G", 0.5, 4.0),
        ("B", (0.3, 0.7), 1.5), ("B", (0.04089409561900239, 0.5960134902126553), 1.0)]


@needs_40
@pytest.mark.parametrize("spec", LAWS, ids=[f"{k}{p}-e{e}" for k, p, e in LAWS])
def test_per_m_values_bracket_a_lattice_reference(spec):
    """For m = 2, 3, 10, 40 and three clamps each: §40's upper value >= the lattice's lower value, §40's lower value
    <= the lattice's upper value; and §40 never loosens a value (the smaller upper, the larger lower). Measured
    (this review, K = 20000): the lower values within the lattice's own resolution at sigma0 = 0.5, eps = 6.85 (e.g.
    m = 10, -T0 - m E V = 2 T0: 9.705297e-2 against [9.705188e-2, 9.706017e-2]; at K = 2e5 [9.7053119e-2,
    9.7053947e-2] and 9.7052967e-2); the upper values 0.1-40 % above."""
    kind, p, eps = spec
    law, ref, a = _gauss(p, eps) if kind == "G" else _bmg(*p, eps)
    mu = law.mean()
    checked = 0
    for m in (2, 3, 10, 40):
        for frac in (0.5, 2.0, 6.0):  # -T0 - m E V = frac T0
            T0 = -mu * m / (1.0 + frac)
            if T0 <= max(a, 0.0) + 1.0:
                continue
            up0, up1, lo0, lo1 = _per_m(law, T0, m)
            r_lo, r_up = _lattice_phi(ref, a, T0, m, max(500, min(20000, int(2e5 / m))))
            assert up1 <= up0 and lo1 >= lo0, (spec, m, frac)
            assert up1 >= r_lo * (1 - 1e-9), (spec, m, frac, T0, up1, r_lo)
            assert lo1 <= r_up * (1 + 1e-9), (spec, m, frac, T0, lo1, r_up)
            checked += 1
    assert checked >= 6


# ----------------------------------------------------------------------------------------------- the stage's cell
def _j_lattice(ref, a: float, T0: float, gamma: float, n: int, K: int, sds: float = 7.0) -> tuple[float, float]:
    """(lower, upper) values of E phi(A'), A' = the sum of M' ~ Bin(n - 1, gamma) copies of V: the lattice bracket of
    each E phi(X_m) for m within ``sds`` sd of the mean (scipy's binomial pmf), the rest in [0, tau(T0)]."""
    from scipy import stats
    h = (T0 - a) / K
    e = a + h * np.arange(K + 1)
    e[-1] = T0
    S = np.asarray(ref.tail(e)[0], float)
    cell = np.empty(K + 1)
    cell[0] = 1.0 - S[1]
    cell[1:K] = S[1:K] - S[2:K + 1]
    cell[K] = S[K]
    cell = np.maximum(cell, 0.0)
    N = n - 1
    mean, sd = N * gamma, math.sqrt(N * gamma * (1 - gamma))
    m0, m1 = max(1, int(mean - sds * sd)), int(mean + sds * sd) + 1
    pmf = stats.binom.pmf(np.arange(m0, m1 + 1), N, gamma)
    P, E = ref.tail(np.array([T0]))
    tauT = float(E[0] - T0 * P[0])
    p0 = float(stats.binom.pmf(0, N, gamma))
    lo = up = p0 * tauT
    size = 1 << int(math.ceil(math.log2(m1 * K + 1)))
    F = np.fft.rfft(cell, size)
    for m, p in zip(range(m0, m1 + 1), pmf):
        pm = np.clip(np.fft.irfft(F ** m, size)[: m * K + 1], 0.0, None)
        j = np.arange(pm.size)
        for shift in (0, m):
            t = np.maximum(T0, -(m * a + h * (j + shift)))
            Pt, Et = ref.tail(t)
            v = p * float(np.dot(pm, Et - t * Pt))
            if shift:
                up += v
            else:
                lo += v
    return lo, up + max(1.0 - p0 - float(pmf.sum()), 0.0) * tauT


@needs_40
def test_stage_jump_bracket_meets_a_lattice_reference(monkeypatch):
    """GaussianRandomizer(0.5, 1), n = 1e3, eps = 6.85 (zero-out): stage 4 accepts the raised x vs bot law; its jump
    term's bracket meets the lattice bracket of the true law's E phi(A') at the stage's clamp T0 (the raised law's
    value is above the true law's: the upper value is compared directly, the lower with 1e-9 room for the raise).
    Measured: stage 4 [4.9651794e-2, 4.9690953e-2], the lattice (K = 4000) [4.9649210e-2, 4.9677409e-2]."""
    g, law = laws_for(GaussianRandomizer(0.5, 1), 6.85, "zero_out")[0]
    g, run = float(g), law.shifted(up=True)
    concentrated._MEMO.clear()
    monkeypatch.setattr(limits, "CLOSED_LOCAL_STAGE", True)
    cb = concentrated.certify(run, g, 10**3, 1e-2, far_tail.choose_T0)
    concentrated._MEMO.clear()
    assert cb is not None
    ref = GaussXBot(0.5, 6.85)
    r_lo, r_up = _j_lattice(ref, ref.g - ref.E, cb.T0, g, 10**3, 2000)
    assert cb.jump_up >= r_lo and cb.jump_lo <= r_up * (1 + 1e-9), (cb.jump_lo, cb.jump_up, r_lo, r_up)
    assert cb.upper >= cb.jump_up and cb.lower <= cb.jump_lo


# ----------------------------------------------------------------------------------------------- the accountant
def _rand(spec):
    kind, a, b = spec
    return GaussianRandomizer(a, 1) if kind == "G" else BlanketMixedGaussian(a, b, 1)


def _bracket(spec, n, eps, rel_tol=1e-2, adjacency="zero_out"):
    clear_caches()
    concentrated._MEMO.clear()
    lo, up = ShuffleAccountant(_rand(spec), n, adjacency, rel_tol=rel_tol).get_delta_bounds(eps)
    concentrated._MEMO.clear()
    return float(lo), float(up)


# (randomizer, n, eps): the 25 cells of this review's scan where stage 4 accepts (main's closed form refuses them; the
# FFT treatment answers on main), zero-out. REF: main 15710f7's brackets at rel_tol 1e-5
REF = {
    (("G", 1.0, 0), 10**4, 1.1): (1.2261937004545678e-05, 1.2261990653390217e-05),
    (("G", 0.75, 0), 3000, 2.95): (0.0013320655687090093, 0.0013320702201531857),
    (("G", 1.0, 0), 3000, 1.65): (3.2499920940144127e-05, 3.250007781895736e-05),
    (("G", 0.5, 0), 10**3, 6.8): (0.05092604562051126, 0.050926329163988704),
    (("G", 1.0, 0), 10**2, 3.7): (0.0003066143927756643, 0.0003066157210889692),
    (("G", 1.3, 0), 10**2, 2.7): (1.1286716345678964e-05, 1.1286792370250844e-05),
    (("G", 0.5, 0), 10**4, 5.6): (0.028415558823852147, 0.028416938285479344),
    (("G", 1.3, 0), 300, 2.0): (4.393654411867848e-06, 4.393683702413129e-06),
    (("G", 1.0, 0), 300, 2.9): (0.00018729511585741408, 0.0001872958995083717),
    (("G", 0.5, 0), 3000, 6.2): (0.03945625972864961, 0.03945661029663283),
    (("G", 1.0, 0), 10**4, 1.15): (1.0433941882462254e-05, 1.0433991407381057e-05),
    (("G", 0.5, 0), 3000, 6.15): (0.040515595483668024, 0.04051599023840742),
    (("G", 0.6, 0), 300, 5.2): (0.03277672947464114, 0.03277686622748409),
    (("G", 0.6, 0), 10**3, 4.55): (0.022708827328581895, 0.02270893093492734),
    (("G", 0.6, 0), 10**4, 3.6): (0.008371026916653469, 0.008371204093089574),
    (("G", 0.5, 0), 10**3, 6.85): (0.04965415574626544, 0.04965457007725382),
    (("G", 0.6, 0), 300, 5.15): (0.03386858512246094, 0.033868737646869304),
    (("B", 0.02236494183043625, 0.4742232025365367), 10**5, 1.95): (9.132389656939835e-05, 9.132456544296913e-05),
    (("B", 0.04938902579442474, 0.6446764485548181), 10**4, 1.75): (2.454963713049701e-06, 2.4549783387334414e-06),
    (("B", 0.021719452960127065, 0.4694372301043296), 10**6, 1.05): (1.4185185341979014e-05, 1.4185615023077902e-05),
    (("B", 0.027018718327855053, 0.5082412099806768), 10**6, 0.75): (2.8186727524656446e-06, 2.818730093946858e-06),
    (("B", 0.6223225972663718, 1.6329276515341662), 10**4, 0.95): (0.0, 9.859150058515539e-28),
    (("B", 0.032030007469211905, 0.5424513135044533), 10**5, 1.35): (7.522726028149822e-06, 7.522787033118108e-06),
}
# (uncertified FFT estimates where main stalls at a 1e-3 wide bracket even at rel_tol 1e-4: d_up_fft of
# tests/_rev29_fft_reference.py with neg=True. GaussXBot(0.5, 2.45), n = 1e7: h = 4, lo = -6e6, N = 2^24 and h = 8
# agree to 5.5e-7 (Richardson 2.4961104e-3). BMG(0.00984, 0.357), eps = 0.35, n = 1e9: h = 16 / 32 / 64 on windows
# 2.7e8 / 5.4e8 / 1.1e9 give 1.0292899e-5, 1.0292720e-5, 1.0292273e-5 (6e-5 apart: the windows' wrap and the
# steps); main at rel_tol 1e-4: [2.4943218e-3, 2.4967691e-3] and [1.0283083e-5, 1.0297265e-5])
EST = {(("G", 0.5, 0), 10**7, 2.45): (0.002496110389310857, 1e-5),
       (("B", 0.00984165021750001, 0.3569944638873869), 10**9, 0.35): (1.02927e-05, 1e-4)}

# main 15710f7's brackets at rel_tol 1e-2 (the same cells)
BASE = {
    (("G", 1.0, 0), 10**4, 1.1): (1.2257266912335853e-05, 1.226827559761653e-05),
    (("G", 0.75, 0), 3000, 2.95): (0.0013314206733888664, 0.001332707767188293),
    (("G", 0.5, 0), 10**7, 2.45): (0.0024931984175972344, 0.002496769134476342),
    (("G", 1.0, 0), 3000, 1.65): (3.2488064097122986e-05, 3.2514552630829763e-05),
    (("G", 0.5, 0), 10**3, 6.8): (0.05092144526782206, 0.05096903578621459),
    (("G", 1.0, 0), 10**2, 3.7): (0.0003065346956371094, 0.00030680465144329773),
    (("G", 1.3, 0), 10**2, 2.7): (1.128439552657267e-05, 1.1293741881874947e-05),
    (("G", 0.5, 0), 10**4, 5.6): (0.028411742548956863, 0.028437769123711463),
    (("G", 1.3, 0), 300, 2.0): (4.392672101708084e-06, 4.396277149768926e-06),
    (("G", 1.0, 0), 300, 2.9): (0.00018722920763232666, 0.00018739158806333633),
    (("G", 0.5, 0), 3000, 6.2): (0.03945095604118134, 0.03948948656140548),
    (("G", 1.0, 0), 10**4, 1.15): (1.043029901151473e-05, 1.04402188384926e-05),
    (("G", 0.5, 0), 3000, 6.15): (0.04050998883232002, 0.04054899147731505),
    (("G", 0.6, 0), 300, 5.2): (0.032766714426225016, 0.032798080129683604),
    (("G", 0.6, 0), 10**3, 4.55): (0.022698142270444827, 0.02272107645749403),
    (("G", 0.6, 0), 10**4, 3.6): (0.008366928968259609, 0.008374772625044321),
    (("G", 0.5, 0), 10**3, 6.85): (0.04965004145370475, 0.04969518695346926),
    (("G", 0.6, 0), 300, 5.15): (0.033858023033631036, 0.03388909869546675),
    (("B", 0.02236494183043625, 0.4742232025365367), 10**5, 1.95): (9.128269811568269e-05, 9.136664603437367e-05),
    (("B", 0.00984165021750001, 0.3569944638873869), 10**9, 0.35): (1.0283082818053645e-05, 1.0297264758200875e-05),
    (("B", 0.04938902579442474, 0.6446764485548181), 10**4, 1.75): (2.454387162971415e-06, 2.4564190315789157e-06),
    (("B", 0.021719452960127065, 0.4694372301043296), 10**6, 1.05): (1.417818345909449e-05, 1.4193983376816784e-05),
    (("B", 0.027018718327855053, 0.5082412099806768), 10**6, 0.75): (2.817544883731338e-06, 2.8208978422186713e-06),
    (("B", 0.6223225972663718, 1.6329276515341662), 10**4, 0.95): (0.0, 9.859150058515539e-28),
    (("B", 0.032030007469211905, 0.5424513135044533), 10**5, 1.35): (7.519095966691242e-06, 7.527175370065322e-06),
}
# the cells where the branch's bracket is not nested in BASE's (the other five: nested, tighter)
LOOSER = [c for c in BASE if c not in {
    (("G", 1.0, 0), 10**4, 1.15), (("B", 0.021719452960127065, 0.4694372301043296), 10**6, 1.05),
    (("B", 0.027018718327855053, 0.5082412099806768), 10**6, 0.75),
    (("B", 0.6223225972663718, 1.6329276515341662), 10**4, 0.95),
    (("B", 0.032030007469211905, 0.5424513135044533), 10**5, 1.35)}]


def _ids(d):
    return [f"{c[0][0]}{c[0][1]}-n{c[1]:.0e}-e{c[2]}" for c in d]


@pytest.mark.parametrize("cell", list(REF), ids=_ids(REF))
def test_brackets_meet_main_at_rel_tol_1e5(cell):
    """The branch's rel_tol 1e-2 brackets (stage 4's where it accepts) meet main's rel_tol 1e-5 brackets."""
    rlo, rup = REF[cell]
    lo, up = _bracket(*cell)
    assert 0.0 <= lo <= up and up > 0.0
    assert up >= rlo and lo <= rup, (cell, lo, up, rlo, rup)


@pytest.mark.parametrize("cell", list(EST), ids=_ids(EST))
def test_bracket_contains_an_fft_estimate(cell):
    lo, up = _bracket(*cell)
    est, room = EST[cell]
    assert lo <= est * (1 - room) and up >= est * (1 + room), (lo, up, est)


@needs_40
@pytest.mark.parametrize("cell", list(BASE), ids=_ids(BASE))
def test_switch_off_gives_mains_floats(cell, monkeypatch):
    """With ``limits.CLOSED_LOCAL_STAGE`` False the branch gives main's floats bit for bit."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    session34_floats(monkeypatch)  # (**) session 35, lead: pins session 34's floats (or a mechanism of them) on purpose; the new rules' values: the session-35 test files
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37: pins the closed form's stages (§51.4 off)
    monkeypatch.setattr(limits, "CLOSED_LOCAL_STAGE", False)
    assert _bracket(*cell) == BASE[cell]


@needs_40
@pytest.mark.parametrize("cell", LOOSER, ids=_ids(LOOSER))
def test_stage_loosens_mains_bracket_by_at_most_the_stated_margin(cell, monkeypatch):
    """Stage 4 replaces main's FFT bracket by the closed form's where it newly accepts: not nested in it at 20 of the
    25 cells (found by this review), accepted by the lead for the speed (n = 1e7: 1.4 -> 0.06 s; BMG n = 1e9, eps 0.35:
    0.65 -> 0.17 s), both certified (docs/accountant_tail.md §40.3): the upper value at most 5e-4 relative above
    main's, the lower value at most 2e-4 below it."""
    # (**) session 32, lead: a strict xfail of "nested in main's" turned into the stated margin (§40.3)
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37: pins the closed form's stages (§51.4 off)
    blo, bup = BASE[cell]
    lo, up = _bracket(*cell)
    assert lo >= blo * (1 - 2e-4) and up <= bup * (1 + 5e-4), (cell, (lo, up), (blo, bup))
    assert not (blo <= lo and up <= bup), (cell, "nested now: move it out of LOOSER")


def test_get_epsilon_across_the_stage_cells():
    """GaussianRandomizer(0.5, 1), n = 1e3, zero-out, delta = 0.0509: the root lies in (6.8, 6.85) (main's rel_tol
    1e-5 brackets above: the true delta is 5.0926e-2 > delta at 6.8 and 4.9655e-2 < delta at 6.85), and the search
    runs over the cells where stage 4 now accepts. The answer is above 6.8 (an answer at or below it would not be
    certified), within xtol of 6.85 at worst, and its own upper value is <= delta. (Measured: main 6.8047036, the
    branch 6.8051087: the stage's looser upper values move the answer up by 6e-5 relative.)"""
    clear_caches()
    concentrated._MEMO.clear()
    acc = ShuffleAccountant(GaussianRandomizer(0.5, 1), 1000, "zero_out")
    e = acc.get_epsilon(0.0509)
    assert 6.8 < e <= 6.85 * (1 + 1e-3)
    clear_caches()
    concentrated._MEMO.clear()
    assert ShuffleAccountant(GaussianRandomizer(0.5, 1), 1000, "zero_out").get_delta_bounds(e)[1] <= 0.0509


def test_rel_tol_1e3_cell_meets_main():
    """The one cell of this review's rel_tol 1e-3 scan (sigma0 0.5, 0.75, 1, 2; n = 1e3 ... 1e6; eps 0.1 ... 8 on a
    step of 0.1; and n = 1e8 at rel_tol 1e-2, eps on a step of 0.25) where stage 4 accepts: GaussianRandomizer(1, 1),
    n = 1e3, eps = 3. Main 15710f7 at rel_tol 1e-6: [1.3599951e-5, 1.3599989e-5]; at rel_tol 1e-3 [1.35994163e-5,
    1.36006709e-5], which the branch's [1.35993947e-5, 1.36006755e-5] contains (measured)."""
    lo, up = _bracket(("G", 1.0, 0), 1000, 3.0, rel_tol=1e-3)
    assert lo <= 1.3599988890597567e-05 and up >= 1.3599951372180402e-05, (lo, up)
    assert up - lo <= 1e-3 * lo


# the three cells of this review's rel_tol 0.05 scan (sigma0 0.5, 1, 2; n = 1e2 ... 1e5; eps 0.1 ... 8 on a step of 0.1)
# where stage 4 accepts: (lower, upper) references. Main 15710f7 at rel_tol 1e-5, except sigma0 = 0.5, n = 1e5 (main
# stalls at [2.0249017e-2, 2.0269552e-2]): d_up_fft(GaussXBot(0.5, 3.9), ..., 1e5, h = 2, lo = -4e5, N = 2^24,
# neg=True) 2.0259430e-2 (h = 4: 2.0259432e-2; on the half window 2.0259662e-2), given 1e-4 room either side
REF_05 = {
    (("G", 0.5, 0), 10**4, 5.1): (0.03743613452013929, 0.03743858284280844),
    (("G", 0.5, 0), 10**5, 3.9): (0.020259430118208854 * (1 - 1e-4), 0.020259430118208854 * (1 + 1e-4)),
    (("G", 1.0, 0), 10**5, 0.3): (3.584241993047887e-06, 3.5842654733362544e-06),
}


@pytest.mark.parametrize("cell", list(REF_05), ids=_ids(REF_05))
def test_rel_tol_005_cells_meet_the_references(cell):
    rlo, rup = REF_05[cell]
    lo, up = _bracket(*cell, rel_tol=0.05)
    assert up >= rlo and lo <= rup, (cell, lo, up, rlo, rup)
