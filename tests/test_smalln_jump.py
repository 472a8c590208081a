"""The one-user-jump bracket of D_up at small n (docs/accountant.md §6.8), against independent references:
exact enumeration of D_up for finite laws (n = 2 ... 6) and mpmath quadrature of the n = 2 Gaussian
randomizer's blanket divergence, written from its definition (not from the library's laws)."""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant.closed_forms import small_n_bracket
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.finite import FiniteLaw


def exact_dup(values, probs, gamma, n):
    """D_up = E[(sum_i B_i L_i)_+] / (n gamma) by enumeration (B_i L_i: atom 0 w.p. 1 - gamma)."""
    vals = [0.0] + list(values)
    ps = [1.0 - gamma] + [gamma * p for p in probs]
    tot = mp.mpf(0)
    for idx in itertools.product(range(len(vals)), repeat=n):
        s = mp.fsum(mp.mpf(vals[i]) for i in idx)
        if s > 0:
            tot += s * mp.fprod(mp.mpf(ps[i]) for i in idx)
    return float(tot / (n * gamma))


@pytest.mark.parametrize("seed", range(6))
def test_bracket_contains_the_enumerated_value(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 5))
    # a bulk far below 0 and a few large positive atoms: the regime the bracket is built for, plus random laws
    if seed % 2 == 0:
        big = float(10.0 ** rng.uniform(1, 4))
        values = np.concatenate([[-big * rng.uniform(0.9, 1.0)], big * rng.uniform(0.5, 3.0, m - 1)])
        probs = np.concatenate([[1 - 1e-3], np.full(m - 1, 1e-3 / (m - 1))])
    else:
        values = rng.normal(0.0, 1.0, m)
        probs = rng.dirichlet(np.ones(m))
    law = FiniteLaw(values, probs / probs.sum())
    for n in (2, 3, 4 if m <= 3 else 3):
        gamma = float(rng.uniform(0.05, 1.0))
        lo, up = small_n_bracket(law, gamma, n)
        ref = exact_dup(law.values, law.probs, gamma, n)
        assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (seed, n, lo, ref, up)


def test_bracket_is_tight_when_one_jump_decides():
    """Bulk at -1000, rare jumps to 2000 or 3000: E[S_k+] comes from one jump; the bracket is within 1e-3."""
    values, probs = np.array([-1000.0, 2000.0, 3000.0]), np.array([1 - 2e-4, 1e-4, 1e-4])
    law = FiniteLaw(values, probs)
    for n, gamma in ((2, 0.5), (5, 0.3), (6, 0.1)):
        lo, up = small_n_bracket(law, gamma, n)
        ref = exact_dup(values, probs, gamma, n) if n <= 5 else None
        assert 0 < lo <= up <= lo * (1 + 1e-3)  # (both users jump with probability ~1e-4)
        if ref is not None:
            assert lo <= ref * (1 + 1e-12) and ref <= up * (1 + 1e-12)


def test_not_applicable():
    law = FiniteLaw(np.array([-1.0, 1.0]), np.array([0.5, 0.5]))
    assert small_n_bracket(law, 0.5, 1) is None  # n = 1: E[L_+] in closed form elsewhere
    assert small_n_bracket(law, 0.5, 10**6) is None  # large n: the lattice engine
    assert small_n_bracket(FiniteLaw(np.array([-2.0, -1.0]), np.array([0.5, 0.5])), 0.5, 3) is None  # L <= 0


@pytest.mark.parametrize("shift", [-1.0, 1.0])
def test_value_error_is_charged(shift):
    """A law stored within value_error of the exact one: the bracket covers the exact law moved by +-err."""
    values, probs, err = np.array([-5.0, -0.3, 0.2, 4.0]), np.array([0.6, 0.2, 0.15, 0.05]), 0.05
    law = FiniteLaw(values, probs, err)
    for n, gamma in ((2, 0.7), (3, 0.4)):
        lo, up = small_n_bracket(law, gamma, n)
        ref = exact_dup(law.values + shift * err, law.probs, gamma, n)
        assert lo <= ref <= up, (n, lo, ref, up)


def test_gaussian_bot_vs_x_n2_against_mpmath():
    """The law bot vs x (bounded above, heavy left tail) at n = 2: the two-user quadrature's bracket
    contains the value from the definition, and meets rel_tol."""
    from test_review_smalln import GAUSS_N2

    table = {(s, e): bx for s, e, _, bx in GAUSS_N2}
    for sigma0, eps in ((1.0, 0.5), (0.7, 1.5), (0.4, 4.0)):
        g, law = laws_for(sh.GaussianRandomizer(sigma0, 1), eps, "zero_out")[1]
        lo, up = small_n_bracket(law, float(g), 2)
        ref = gaussian_bot_vs_x_n2_reference(sigma0, eps)
        # the independent n = 2 quadrature of tests/test_review_smalln.py agrees where its table has the case
        assert (sigma0, eps) not in table or abs(ref - table[sigma0, eps]) <= 1e-12 * ref, (ref, table.get((sigma0, eps)))
        assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (lo, ref, up)
        assert up - lo <= 1e-2 * lo


def gaussian_n2_reference(sigma0, eps):
    """D_up at n = 2 of the Gaussian randomizer's zero-out pair x vs bot (|x| = 1, dim 1), from its definition.

    The blanket is the pointwise infimum phi_s(|y| + 1), of mass g = 2 Phibar(1/s); its normalised law w.
    With Y ~ w, l(Y) = g (phi_s(Y - 1) - e^eps phi_s(Y)) / phi_s(|Y| + 1) + ... reduces to: for Y < 0,
    L = g - e^eps (ratio 1 of x against the blanket, the removed user's blanket report against bot at 1);
    for Y > 0, L = g exp(2Y/s^2) - e^eps, Y = -1 + s Z with Z > 1/s. n = 2:
    D_up = (1 - g) E[L_+] + (g / 2) E[(L1 + L2)_+].
    """
    mp.mp.dps = 40
    s, E = mp.mpf(sigma0), mp.e ** mp.mpf(eps)
    g = 2 * mp.ncdf(-1 / s)
    r = 2 / s
    z0 = 1 / s
    c0 = g - E  # the atom (mass 1/2)

    def cont_stop_loss(t):
        """E[(g e^{rZ - r^2/2} - t)_+ ; Z > z0] / g_mass, Z ~ N(0, 1), g_mass = Phibar(z0) (conditional)."""
        if t <= 0:
            zs = z0
        else:
            zs = max(z0, (mp.log(t / g) + r * r / 2) / r)
        val = g * (1 - mp.ncdf(zs - r)) - t * (1 - mp.ncdf(zs))
        return val / (1 - mp.ncdf(z0))

    EL = mp.mpf(0.5) * cont_stop_loss(E) + mp.mpf(0.5) * max(c0, 0)  # E[L_+] (c0 < 0 here)
    # E[(L1 + L2)_+]: atom+atom is < 0; atom+cont twice; cont+cont by quadrature over Z1
    ac = cont_stop_loss(E - c0)
    dens = lambda z: mp.npdf(z) / (1 - mp.ncdf(z0))  # noqa: E731
    # the integrand's kinks: cont_stop_loss(t) at t = 0 and at t = g e^{r z0 - r^2/2} (where its z_s reaches z0),
    # with t = 2E - g e^{rz - r^2/2} (without them as breakpoints the quadrature was off by up to 7e-7 relative)
    pts = [z0, z0 + 2, z0 + 6, z0 + 12, z0 + 40]
    for t in (mp.mpf(0), g * mp.e ** (r * z0 - r * r / 2)):
        if 2 * E - t > 0:
            zk = (mp.log((2 * E - t) / g) + r * r / 2) / r
            if pts[0] < zk < pts[-1]:
                pts.append(zk)
    cc = mp.quad(lambda z: dens(z) * cont_stop_loss(2 * E - g * mp.e ** (r * z - r * r / 2)), sorted(pts))
    E2 = 2 * mp.mpf(0.25) * ac + mp.mpf(0.25) * cc
    return float((1 - g) * EL + g / 2 * E2)


def gaussian_bot_vs_x_n2_reference(sigma0, eps):
    """D_up at n = 2 for the pair bot vs x of the Gaussian randomizer (dim 1, |x| = 1), from its definition:
    with Y from the normalised blanket phi_s(|y| + 1) / g, L = 1 - e^eps g for Y < 0 (mass 1/2) and
    L = 1 - e^eps g exp(2Y/s^2) for Y = -1 + sZ, Z > 1/s (the blanket's report against x's density)."""
    mp.mp.dps = 40
    s, E = mp.mpf(sigma0), mp.e ** mp.mpf(eps)
    g = 2 * mp.ncdf(-1 / s)
    r, z0 = 2 / s, 1 / s
    tail = 1 - mp.ncdf(z0)
    c0 = 1 - E * g
    lc = lambda z: 1 - E * g * mp.e ** (r * z - r * r / 2)  # noqa: E731  (decreasing in z)
    dens = lambda z: mp.npdf(z) / tail  # noqa: E731

    def cont_stop_loss(t):  # E[(Lc - t)_+] for the continuous part (conditional on Z > z0)
        if 1 - t <= 0:
            return mp.mpf(0)
        zs = (mp.log((1 - t) / (E * g)) + r * r / 2) / r  # Lc > t iff z < zs
        if zs <= z0:
            return mp.mpf(0)
        return ((1 - t) * (mp.ncdf(zs) - mp.ncdf(z0)) - E * g * (mp.ncdf(zs - r) - mp.ncdf(z0 - r))) / tail

    def stop(t):  # E[(L - t)_+]
        return mp.mpf(0.5) * max(c0 - t, 0) + mp.mpf(0.5) * cont_stop_loss(t)

    EL = stop(0)
    zmax = (mp.log(2 / (E * g)) + r * r / 2) / r  # Lc > -1 needs z < zmax; beyond, phi(Lc) = 0 (L <= 1)
    pts = [z0] + ([zmax] if zmax > z0 else [])
    # the integrand's other kinks: stop(t) at the atom (t = c0) and where cont_stop_loss's z_s reaches z0
    # (t = 1 - E g e^{r z0 - r^2/2}), with t = -Lc(z) = E g e^{rz - r^2/2} - 1 (without them as breakpoints the
    # quadrature was off by up to 2e-8 relative)
    for v in (1 + c0, 2 - E * g * mp.e ** (r * z0 - r * r / 2)):
        if v > 0:
            zk = (mp.log(v / (E * g)) + r * r / 2) / r
            if z0 < zk < zmax:
                pts.append(zk)
    pts.sort()
    E2 = mp.mpf(0.5) * stop(-c0)
    if zmax > z0:
        E2 += mp.mpf(0.5) * mp.quad(lambda z: dens(z) * stop(-lc(z)), pts)
    return float((1 - g) * EL + g / 2 * E2)


GAUSSIAN_N2_CASES = [(0.5618552429224032, 20.0), (1.0, 8.0), (2.5827, 5.0)]


def stored_gaussian_n2_reference(sigma0, eps):
    """gaussian_n2_reference(sigma0, eps) as stored by tests/data/make_gaussian_n2_reference.py."""
    from conftest import load_reference

    rows = load_reference("gaussian_n2_reference.json")["rows"]
    return next(float.fromhex(r["d_up"]) for r in rows
                if (float.fromhex(r["sigma0"]), float.fromhex(r["epsilon"])) == (sigma0, eps))


@pytest.mark.parametrize("sigma0,eps", GAUSSIAN_N2_CASES)
def test_gaussian_n2_against_mpmath(sigma0, eps):
    ref = stored_gaussian_n2_reference(sigma0, eps)
    if (sigma0, eps) == GAUSSIAN_N2_CASES[-1]:  # the store (read by test_smalln2_decide too) is current: the
        assert gaussian_n2_reference(sigma0, eps) == ref  # cheapest case live (~0.3 s of CPU)
    # the independent n = 2 quadrature of tests/test_review_smalln.py (in y, its own breakpoints) agrees where
    # its table has the case
    from test_review_smalln import GAUSS_N2

    other = {(s, e): xb for s, e, xb, _ in GAUSS_N2}.get((sigma0, eps))
    assert other is None or abs(ref - other) <= 1e-12 * other, (ref, other)
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(sigma0, 1), 2, sampler_charge=False)
    lo, up = acc.get_delta_bounds(eps)
    assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (lo, ref, up)
    assert up - lo <= 1e-2 * lo


@pytest.mark.parametrize("n,eps,delta", [(2, 20.0, 1e-6), (10, 50.0, 1e-6), (2, 5.0, 1e-12)])
def test_calibrate_gaussian_small_n_certified(n, eps, delta):
    """The calls that took minutes: the answer is certified at its epsilon."""
    rz = sh.calibrate_gaussian(n, eps, delta)
    assert sh.ShuffleAccountant(rz, n).get_delta(eps) <= delta
    # and not far from the smallest sigma0: 1 % smaller fails (the zero-out value is tight here)
    assert sh.ShuffleAccountant(sh.GaussianRandomizer(rz.sigma0 * 0.97, 1), n).get_delta(eps) > delta


BMG_N2_CASES = [(1.0, 0.5, 1.0, "replace"), (0.5, 0.3, 2.0, "zero_out"), (0.7, 0.2, 3.0, "replace")]


def bmg_n2_reference(s, g, e, adj):
    """D_up at n = 2 of BMG(g, s), eps = e: the mpmath reference of tests/test_shuffle_accountant_edges.py (25 digits),
    rounded to a double."""
    from test_shuffle_accountant_edges import reference

    with mp.workdps(25):
        return float(reference(g, s, e, adj, 2))


@pytest.mark.parametrize("s,g,e,adj", BMG_N2_CASES)
def test_bmg_n2_two_user_quadrature_against_mpmath(s, g, e, adj):
    """Laws unbounded on both sides (the blanket-mixed Gaussian): the two-user quadrature (cut tails
    charged) against the mpmath reference of tests/test_shuffle_accountant_edges.py (stored by
    tests/data/make_bmg_n2_reference.py; the cheapest case, ~0.3 s of CPU, recomputed: the store is current)."""
    from conftest import load_reference

    ref = float.fromhex(load_reference("bmg_n2_reference.json")[repr((s, g, e, adj))])
    if (s, g, e, adj) == BMG_N2_CASES[1]:
        assert bmg_n2_reference(s, g, e, adj) == ref
    brackets = [small_n_bracket(law, float(gamma), 2) for gamma, law in laws_for(sh.BlanketMixedGaussian(g, s, 1),
                                                                                   e, adj)]
    brackets = [b for b in brackets if b is not None]  # (None: a law with L <= 0)
    assert brackets and all(b[0] <= b[1] for b in brackets)
    lo, up = max(brackets, key=lambda b: b[1])
    assert lo <= ref * (1 + 1e-9) and ref <= up * (1 + 1e-9), (lo, ref, up)
    assert up - lo <= 5e-2 * lo  # (the driver uses it only within rel_tol; else the engine)
