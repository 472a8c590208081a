"""Adversarial review of the far-tail (single big jump) treatment (docs/accountant_tail.md) with
references written independently of the library:

* the laws of L from the mechanisms' likelihood ratios (blanket-mixed Gaussian: x vs bot, bot vs x,
  the antipodal replace pair; Gaussian randomizer with its infimum blanket phi_s(|y| + 1)/g), their
  tails in closed form through the Gaussian shift identity, checked against mpmath;
* n = 2, 3: D_up = sum_k C(n, k) g^k (1 - g)^(n - k) E[(L_1 + ... + L_k)_+]/(n g) with the k-fold
  terms by composite Gauss-Legendre quadrature over the first k - 1 users and the closed-form
  stop-loss of the last one; small n with tiny gamma: the same for k <= 3 plus the rigorous bound
  0 <= E[(L_1 + ... + L_k)_+] <= E[(L_1 + L_2 + L_3)_+] + (k - 3) E[L_+] for k >= 4;
* large n: conditional Monte Carlo on the strict maximum (unbounded right tail) and exponential
  tilting with an exact likelihood ratio (laws bounded above), with confidence intervals;
* the proof's pieces at n = 2, where each is a one- or two-dimensional integral: the jump
  functional E phi(A') (Lemma 3, §4), the body E[A_+]/(n gamma) (§6), the lower-clamp price (§5)
  and the pair integral (§3).

The certified values must satisfy Lo <= truth <= Up; Monte Carlo checks use 4.5 standard errors.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr, ndtri
from scipy.stats import binom

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant.chernoff import Chernoff
from sharpdp.shuffle.accountant.far_tail import _body_lower, applicable, lower_tail_penalty
from sharpdp.shuffle.accountant.jump import jump_term, pair_integral_up
from sharpdp.shuffle.accountant.lattice import lattice_laws, lattice_pass
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.accountant.driver import certify, upper_value

Z_MC = 4.5


# ------------------------------------------------------------------------ independent laws
def _pint(lo, hi):
    """P(lo < Z < hi) for Z ~ N(0, 1), on the small side (vectorised)."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, float), np.asarray(hi, float))
    with np.errstate(invalid="ignore"):
        out = np.where(lo >= 0, ndtr(-lo) - ndtr(-hi),
                       np.where(hi <= 0, ndtr(hi) - ndtr(lo), 1.0 - ndtr(lo) - ndtr(-hi)))
    return np.where(hi > lo, np.maximum(out, 0.0), 0.0)


class Piece:
    """The measure w phi(z) dz on z > z0 pushed through L(z) = a + b e^{rz - r^2/2} + c e^{-rz - r^2/2}
    (b and c of opposite signs or zero, so L is monotone)."""

    def __init__(self, a, b, c, r, z0=-math.inf, w=1.0):
        self.a, self.b, self.c, self.r, self.z0, self.w = a, b, c, r, z0, w
        self.inc = b > 0 or c < 0

    def L(self, z):
        r = self.r
        return self.a + self.b * np.exp(r * z - r * r / 2) + self.c * np.exp(-r * z - r * r / 2)

    def level(self, u):
        """z with L(z) = u: a root of b' p^2 + (a - u) p + c' = 0 in p = e^{rz}."""
        r = self.r
        bp, cp = self.b * math.exp(-r * r / 2), self.c * math.exp(-r * r / 2)
        q = np.asarray(u, float) - self.a
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if cp == 0:
                p, miss = q / bp, -np.inf
            elif bp == 0:
                p, miss = cp / q, np.inf
            else:
                d = np.sqrt(q * q - 4 * bp * cp)
                p, miss = np.where(q >= 0, (q + d) / (2 * bp), -2 * cp / (d - q)), np.nan
            return np.where(p > 0, np.log(np.where(p > 0, p, 1.0)) / r, miss)

    def region(self, u):
        zu = self.level(u)
        if self.inc:
            return np.maximum(zu, self.z0), np.full(zu.shape, np.inf)
        return np.full(zu.shape, self.z0), zu

    def sf(self, u):
        return self.w * _pint(*self.region(u))

    def stop(self, u):
        lo, hi = self.region(u)
        r = self.r
        v = (self.a - np.asarray(u, float)) * _pint(lo, hi)
        if self.b:
            v = v + self.b * _pint(lo - r, hi - r)
        if self.c:
            v = v + self.c * _pint(lo + r, hi + r)
        return self.w * np.maximum(v, 0.0)

    def sample(self, rng, k):
        z = rng.standard_normal(k) if self.z0 == -math.inf else -ndtri(rng.random(k) * ndtr(-self.z0))
        return self.L(z)


class RefLaw:
    """Atoms plus monotone lognormal pieces, total mass 1."""

    def __init__(self, atoms=(), pieces=()):
        self.av = np.array([a[0] for a in atoms], float)
        self.ap = np.array([a[1] for a in atoms], float)
        self.pieces = list(pieces)
        self.pm = np.array([p.w * float(_pint(p.z0, math.inf)) for p in pieces])
        assert abs(self.ap.sum() + self.pm.sum() - 1.0) < 1e-12

    def sf(self, u):
        u = np.asarray(u, float)
        return sum((p.sf(u) for p in self.pieces), np.zeros(u.shape)) + sum(
            (q * (v > u) for v, q in zip(self.av, self.ap)), np.zeros(u.shape))

    def stop(self, u):
        """E[(L - u)_+]."""
        u = np.asarray(u, float)
        return sum((p.stop(u) for p in self.pieces), np.zeros(u.shape)) + sum(
            (q * np.maximum(v - u, 0.0) for v, q in zip(self.av, self.ap)), np.zeros(u.shape))

    def sample(self, rng, k):
        comp = rng.choice(self.av.size + len(self.pieces), size=k, p=np.concatenate([self.ap, self.pm]))
        out = np.empty(k)
        for i, v in enumerate(self.av):
            out[comp == i] = v
        for j, p in enumerate(self.pieces):
            m = comp == self.av.size + j
            out[m] = p.sample(rng, int(m.sum()))
        return out

    def nodes(self, m=24, panels=50, zmax=13.0, at=()):
        """(values, weights) of a quadrature of the law: atoms, composite Gauss-Legendre in z (panel
        edges also where L crosses the values ``at``)."""
        x, w = np.polynomial.legendre.leggauss(m)
        vals, wts = [self.av], [self.ap]
        for p in self.pieces:
            lo = max(p.z0, -zmax)
            cut = [float(z) for z in p.level(np.array(at, float))] if len(at) else []
            ed = np.unique(np.concatenate([np.linspace(lo, zmax, panels + 1), [z for z in cut if lo < z < zmax]]))
            half = 0.5 * (ed[1:] - ed[:-1])[:, None]
            z = (half * (x[None, :] + 1) + ed[:-1, None]).ravel()
            vals.append(p.L(z))
            wts.append(p.w * (half * w[None, :]).ravel() * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))
        return np.concatenate(vals), np.concatenate(wts)


def ref_bmg(gamma, sigma0, eps, which):
    """R_x = gamma N(0, s^2) + (1 - gamma) N(x, s^2), R_BG = N(0, s^2), |x| = 1 ("Shuffling-Aware
    Optimization for Private Vector Mean Estimation", Algorithm 1; worst pairs: docs/worst_case_pairs.md
    §2-3): with Z = <y, x>/s and r = 1/s, R_x/R_BG = gamma + (1 - gamma) e^{rZ - r^2/2}."""
    r, ee = 1.0 / sigma0, math.exp(eps)
    if which == "x_bot":
        return gamma, RefLaw(pieces=[Piece(gamma - ee, 1 - gamma, 0.0, r)])
    if which == "bot_x":
        return gamma, RefLaw(pieces=[Piece(1 - ee * gamma, -ee * (1 - gamma), 0.0, r)])
    return gamma, RefLaw(pieces=[Piece(gamma * (1 - ee), 1 - gamma, -ee * (1 - gamma), r)])


def ref_gauss(sigma0, eps, which):
    """R_x = N(x, s^2), blanket phi_s(|y| + 1)/g, g = 2 Phibar(1/s) (docs/worst_case_pairs.md §4): for y < 0 (mass 1/2)
    R_1/(g R_BG) = 1; for y = -1 + sZ > 0 it is e^{2y/s^2} = e^{r2 Z - r2^2/2}, r2 = 2/s, Z > 1/s."""
    s, ee = sigma0, math.exp(eps)
    g = 2 * float(ndtr(-1 / s))
    w = 0.5 / float(ndtr(-1 / s))
    if which == "x_bot":
        return g, RefLaw(atoms=[(g - ee, 0.5)], pieces=[Piece(-ee, g, 0.0, 2 / s, 1 / s, w)])
    return g, RefLaw(atoms=[(1 - ee * g, 0.5)], pieces=[Piece(1.0, -ee * g, 0.0, 2 / s, 1 / s, w)])


def lib(fam, gamma, sigma0, eps, which):
    if fam == "bmg":
        rz = BlanketMixedGaussian(gamma=gamma, sigma0=sigma0, dim=1)
        if which == "replace":
            return laws_for(rz, eps, "replace")[0]
        return laws_for(rz, eps, "zero_out")[0 if which == "x_bot" else 1]
    return laws_for(GaussianRandomizer(sigma0=sigma0, dim=1), eps, "zero_out")[0 if which == "x_bot" else 1]


def ref(fam, gamma, sigma0, eps, which):
    return ref_bmg(gamma, sigma0, eps, which) if fam == "bmg" else ref_gauss(sigma0, eps, which)


# ------------------------------------------------------------------------ references
def kfold_terms(law, m=20, panels=40, kmax=3):
    """E[(L_1 + ... + L_k)_+] for k = 1 ... kmax (<= 3), split by which component (atom or piece) each user
    falls in, so that every integrand is smooth (an atom puts a kink in the stop-loss): atoms add a
    constant c, the last piece is integrated in closed form, the others by Gauss-Legendre in z."""
    comps = [("atom", v, q) for v, q in zip(law.av, law.ap)] + [("piece", p, q) for p, q in zip(law.pieces, law.pm)]
    x, wl = np.polynomial.legendre.leggauss(m)

    def nodes(p):
        ed = np.linspace(max(p.z0, -13.0), 13.0, panels + 1)
        half = 0.5 * (ed[1:] - ed[:-1])[:, None]
        z = (half * (x[None, :] + 1) + ed[:-1, None]).ravel()
        w = (half * wl[None, :]).ravel() * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        return p.L(z), w / float(_pint(p.z0, math.inf))  # the piece's conditional law

    def term(tup):
        c = sum(obj for kind, obj, _ in tup if kind == "atom")
        ps = [obj for kind, obj, _ in tup if kind == "piece"]
        if not ps:
            return max(c, 0.0)
        last = ps[-1]
        stop = lambda u: last.stop(u) / (last.w * float(_pint(last.z0, math.inf)))  # noqa: E731
        if len(ps) == 1:
            return float(stop(np.array([-c]))[0])
        v1, w1 = nodes(ps[0])
        if len(ps) == 2:
            return float(np.sum(w1 * stop(-(c + v1))))
        v2, w2 = nodes(ps[1])
        tot = 0.0
        for i in range(0, v1.size, 1500):
            s2 = c + v1[i:i + 1500, None] + v2[None, :]
            tot += float(np.sum(w1[i:i + 1500, None] * w2[None, :] * stop(-s2.ravel()).reshape(s2.shape)))
        return tot

    import itertools

    out = {}
    for k in range(1, kmax + 1):
        out[k] = sum(math.prod(q for _, _, q in tup) * term(tup) for tup in itertools.product(comps, repeat=k))
    return out


_KFOLD: dict = {}


def _law_key(law):
    """The parameters that define a RefLaw (its atoms and pieces)."""
    return (tuple(law.av), tuple(law.ap), tuple((p.a, p.b, p.c, p.r, p.z0, p.w) for p in law.pieces))


def small_n_bracket(law, g, n):
    """Deterministic bracket of D_up: exact for n <= 3, else the k <= 3 terms and the k >= 4 bound (the terms
    up to k = min(n, 3) only, computed once per law: several tests here and in test_shuffle_bigjump_switch use
    the same laws)."""
    key, kmax = _law_key(law), min(n, 3)
    if len(_KFOLD.get(key, ())) < kmax:
        _KFOLD[key] = kfold_terms(law, kmax=kmax)
    e = _KFOLD[key]
    lo = sum(binom.pmf(k, n, g) * e[k] for k in range(1, min(n, 3) + 1))
    up = lo
    if n > 3:
        ks = np.arange(4, n + 1)
        up += float(np.sum(binom.pmf(ks, n, g) * (e[3] + (ks - 3) * e[1])))
    return lo / (n * g), up / (n * g)


def mc_max(law, g, n, samples, rng):
    """Conditional Monte Carlo on the strict maximum G_n: given the other users' sum s and maximum m
    (0 counts when one of them is inactive), E[S_+ 1{G_n > m}] = g [tau(u) + (s + u) P(L > u)],
    u = max(m, -s); ties at the maximum carry S <= 0 when the law has no atom above 0."""
    M = rng.binomial(n - 1, g, size=samples)
    Ls = law.sample(rng, int(M.sum()))
    s = np.zeros(samples)
    mx = np.full(samples, -np.inf)
    nz = M > 0
    if Ls.size:
        idx = np.concatenate([[0], np.cumsum(M)[:-1]])[nz]
        s[nz] = np.add.reduceat(Ls, idx)
        mx[nz] = np.maximum.reduceat(Ls, idx)
    mx = np.where(M < n - 1, np.maximum(mx, 0.0), mx)
    u = np.maximum(mx, -s)
    y = law.stop(u) + (s + u) * law.sf(u)
    return float(y.mean()), float(y.std(ddof=1) / math.sqrt(samples))


def mc_tilted(law, g, n, samples, rng, zlim=13.0, cells=20000):
    """Exponential tilting (law bounded above): theta solves Lambda'(theta) = 0 for G = B L; each
    active value is drawn from the tilted law discretised in z (uniform within a cell), and the
    estimator carries the exact likelihood ratio. Returns (mean, se)."""
    from scipy.optimize import brentq

    p = law.pieces[0]
    ed = np.linspace(max(p.z0, -zlim), zlim, cells + 1)
    zm = 0.5 * (ed[1:] + ed[:-1])
    vals = np.concatenate([law.av, p.L(zm)])
    probs = np.concatenate([law.ap, p.w * _pint(ed[:-1], ed[1:])])
    top = float(vals.max())

    def dlam(th):
        e = probs * np.exp(th * (vals - top))
        return float(np.sum(e * vals)) * g / ((1 - g) * math.exp(max(-th * top, -700)) + g * float(e.sum()))

    th = brentq(dlam, 1e-12, 1e3)
    e = probs * np.exp(th * (vals - top))
    ML = float(e.sum())
    g2 = g * ML / (g * ML + (1 - g) * math.exp(max(-th * top, -700)))
    q = e / ML
    M = rng.binomial(n, g2, size=samples)
    cell = rng.choice(q.size, size=int(M.sum()), p=q)
    na = law.av.size
    L = np.empty(cell.size)
    lr = np.empty(cell.size)
    at = cell < na
    L[at] = law.av[cell[at]]
    lr[at] = np.log(law.ap[cell[at]]) - np.log(q[cell[at]])
    j = cell[~at] - na
    d = ed[1:] - ed[:-1]
    z = ed[j] + d[j] * rng.random(j.size)
    L[~at] = p.L(z)
    lr[~at] = math.log(p.w) - 0.5 * z * z - 0.5 * math.log(2 * math.pi) - np.log(q[na + j] / d[j])
    lr += math.log(g / g2)
    lw = (n - M) * (math.log1p(-g) - math.log1p(-g2))
    s = np.zeros(samples)
    nz = M > 0
    idx = np.concatenate([[0], np.cumsum(M)[:-1]])[nz]
    if cell.size:
        s[nz] = np.add.reduceat(L, idx)
        lw[nz] += np.add.reduceat(lr, idx)
    y = np.maximum(s, 0.0) * np.exp(lw) / (n * g)
    return float(y.mean()), float(y.std(ddof=1) / math.sqrt(samples))


def certified(fam, gamma, sigma0, eps, which, n):
    """The accountant's per-law bracket through its dispatch (far-tail treatment where it applies)."""
    gl, law = lib(fam, gamma, sigma0, eps, which)
    r = certify(law, gl, n, 1e-2, 1)
    return r.lower, r.upper


# ------------------------------------------------------------------------ the reference itself
def test_reference_closed_forms_against_mpmath():
    """The reference's stop-loss against a 30-digit quadrature in z (heavy sigma0, both monotone
    directions, the replace law's two lognormals, the Gaussian randomizer's truncated piece)."""
    mp.mp.dps = 30
    laws = [ref_bmg(0.05, 0.3, 1.0, "x_bot")[1], ref_bmg(0.05, 0.3, 1.0, "bot_x")[1],
            ref_bmg(0.2, 0.5, 4.0, "replace")[1], ref_gauss(0.5, 1.0, "bot_x")[1]]
    for law in laws:
        p = law.pieces[0]
        for u in (-20.0, -1.0, 0.0, 1.0, 30.0):
            def f(z, p=p, u=u):
                lz = p.a + p.b * mp.exp(p.r * z - p.r**2 / 2) + p.c * mp.exp(-p.r * z - p.r**2 / 2)
                return max(lz - u, 0) * mp.npdf(z)

            zu = float(p.level(np.array([u]))[0])
            lo = max(p.z0, -40.0)
            pts = [lo] + ([zu] if math.isfinite(zu) and zu > lo else []) + [40.0]
            exact = float(p.w * mp.quad(f, pts)) + sum(q * max(v - u, 0.0) for v, q in zip(law.av, law.ap))
            assert math.isclose(float(law.stop(np.array([u]))[0]), exact, rel_tol=1e-12, abs_tol=1e-300)


# ------------------------------------------------------------------------ n = 2, 3: exact
EXACT = [
    ("bmg", 0.05, 0.3, 1.0, "x_bot", 2), ("bmg", 0.05, 0.3, 1.0, "x_bot", 3),
    ("bmg", 0.2, 0.3, 4.0, "x_bot", 3), ("bmg", 0.01, 0.4, 8.0, "x_bot", 2),
    ("bmg", 0.05, 0.3, 0.0, "x_bot", 3), ("bmg", 1e-6, 0.4, 1.0, "x_bot", 2),
    ("bmg", 0.05, 0.3, 1.0, "bot_x", 3), ("bmg", 0.2, 0.4, 0.1, "bot_x", 2),
    ("bmg", 0.05, 0.4, 0.5, "replace", 2), ("bmg", 0.2, 0.4, 2.0, "replace", 3),
    ("gauss", 0, 0.5, 0.5, "x_bot", 3), ("gauss", 0, 1.0, 2.0, "x_bot", 2), ("gauss", 0, 1.0, 1.0, "bot_x", 3),
]


@pytest.mark.parametrize("fam,gamma,sigma0,eps,which,n", EXACT)
def test_small_n_exact(fam, gamma, sigma0, eps, which, n):
    g, law = ref(fam, gamma, sigma0, eps, which)
    lo_r, up_r = small_n_bracket(law, g, n)
    lo, up = certified(fam, gamma, sigma0, eps, which, n)
    assert up >= lo_r * (1 - 1e-5), (lo, up, lo_r)
    assert lo <= up_r * (1 + 1e-5), (lo, up, up_r)


@pytest.mark.parametrize("which", ["x_bot", "bot_x", "replace"])
@pytest.mark.parametrize("n", [10, 40])
def test_small_n_tiny_gamma_bracket(which, n):
    """Tiny gamma: the k >= 4 terms are at most a 1e-4 part, so the bracket is a sharp reference."""
    gamma, sigma0, eps = 0.002, 0.35, 1.5
    g, law = ref_bmg(gamma, sigma0, eps, which)
    lo_r, up_r = small_n_bracket(law, g, n)
    assert up_r - lo_r <= 1e-3 * lo_r
    lo, up = certified("bmg", gamma, sigma0, eps, which, n)
    assert up >= lo_r * (1 - 1e-5) and lo <= up_r * (1 + 1e-5), (lo, up, lo_r, up_r)


def test_both_sides_of_the_switch():
    """`applicable` is a speed switch: just below and just above it (x vs bot, replace) both paths
    bracket the exact n = 2 value."""
    def edge(which):
        lo, hi = 0.6, 3.0
        for _ in range(40):
            mid = math.sqrt(lo * hi)
            if applicable(lib("bmg", 0.05, mid, 1.0, which)[1], 2):
                lo = mid
            else:
                hi = mid
        return lo, hi

    for which in ("x_bot", "replace"):
        s_in, s_out = edge(which)
        assert applicable(lib("bmg", 0.05, s_in, 1.0, which)[1], 2)
        assert not applicable(lib("bmg", 0.05, s_out, 1.0, which)[1], 2)
        for s0 in (s_in, s_out):
            g, law = ref_bmg(0.05, s0, 1.0, which)
            exact = small_n_bracket(law, g, 2)[0]
            lo, up = certified("bmg", 0.05, s0, 1.0, which, 2)
            assert lo <= exact * (1 + 1e-5) and up >= exact * (1 - 1e-5), (s0, lo, up, exact)


# ------------------------------------------------------------------------ large n: Monte Carlo
MC = [
    (0.3, 0.01, 1.0, "x_bot", 1000), (0.3, 0.2, 4.0, "x_bot", 1000), (0.4, 0.05, 0.5, "x_bot", 10000),
    (0.3, 0.05, 2.0, "replace", 1000), (0.4, 0.2, 1.0, "replace", 10000), (0.5, 0.01, 8.0, "x_bot", 10000),
]


@pytest.mark.parametrize("sigma0,gamma,eps,which,n", MC)
def test_large_n_conditional_monte_carlo(sigma0, gamma, eps, which, n):
    g, law = ref_bmg(gamma, sigma0, eps, which)
    rng = np.random.default_rng(int(1e4 * sigma0 + 1e3 * gamma + 10 * eps + n))
    samples = int(min(30000, 4e5 / max(n * g, 1)))
    mean, se = mc_max(law, g, n, samples, rng)
    lo, up = certified("bmg", gamma, sigma0, eps, which, n)
    assert up >= mean - Z_MC * se, (lo, up, mean, se)
    assert lo <= mean + Z_MC * se, (lo, up, mean, se)


@pytest.mark.parametrize("sigma0,gamma,eps,n", [(0.4, 0.05, 0.5, 1000), (0.4, 0.2, 0.1, 1000)])
def test_bounded_law_tilted_monte_carlo(sigma0, gamma, eps, n):
    g, law = ref_bmg(gamma, sigma0, eps, "bot_x")
    mean, se = mc_tilted(law, g, n, 6000, np.random.default_rng(11 + n))
    lo, up = certified("bmg", gamma, sigma0, eps, "bot_x", n)
    assert up >= mean - Z_MC * se and lo <= mean + Z_MC * se, (lo, up, mean, se)


def test_gaussian_randomizer_conditional_monte_carlo():
    """Gaussian randomizer x vs bot (atom below 0 plus a truncated lognormal): the strict-maximum
    estimator stays valid (ties only at values <= 0)."""
    g, law = ref_gauss(0.5, 1.0, "x_bot")
    mean, se = mc_max(law, g, 1000, 20000, np.random.default_rng(5))
    lo, up = certified("gauss", 0, 0.5, 1.0, "x_bot", 1000)
    assert up >= mean - Z_MC * se and lo <= mean + Z_MC * se, (lo, up, mean, se)


def test_upper_value_only_path():
    """get_epsilon's upper-only path (lower=False: one coarse round) is still above the truth."""
    for which, n in (("x_bot", 3), ("replace", 2)):
        g, law = ref_bmg(0.05, 0.3, 1.0, which)
        exact = small_n_bracket(law, g, n)[0]
        gl, ll = lib("bmg", 0.05, 0.3, 1.0, which)
        assert upper_value(ll, gl, n, 1e-2, 1, 1e-3, 0.25) >= exact * (1 - 1e-5)


# ------------------------------------------------------------------------ the proof's pieces at n = 2
@pytest.mark.parametrize("which", ["x_bot", "replace"])
def test_pieces_at_n2(which):
    """At n = 2, A' = G'_2 = clamp(B_2 L_2, -B, T0) is one user, so each term of (2.1) is an
    integral: the jump functional E phi(A') (Lemma 3, §4), the body E[A_+]/(2g) (§6) and the price
    of the lower clamp tau_low(B) P(max(G_2, -B) > B) (§5). Each certified bracket must contain it,
    and the sandwich (2.1) must hold with the pair term of §3."""
    gamma, sigma0, eps, n = 0.2, 0.4, 1.0, 2
    g, law = ref_bmg(gamma, sigma0, eps, which)
    gl, ll = lib("bmg", gamma, sigma0, eps, which)
    T0, B, h = 8.0, 8.0, 1.0 / 16
    lat = lattice_laws(ll, gl, h, T0, B)
    v, w = law.nodes(40, 80, at=(-B, T0))
    c = np.clip(v, -B, T0)
    tau = law.stop
    t0, p0, pb = float(tau(np.array([T0]))[0]), float(law.sf(np.array([T0]))[0]), 1.0 - float(law.sf(np.array([-B]))[0])
    # E phi(A'), phi(a) = tau(max(T0, -a)); A' = 0 with probability 1 - g
    ephi = (1 - g) * t0 + g * float(np.sum(w * tau(np.maximum(T0, -c))))
    jt = jump_term(ll, gl, n, lat, h, T0, 1e-2, ephi, 1)
    assert jt.lo <= ephi * (1 + 1e-7) and jt.up >= ephi * (1 - 1e-7), (jt.lo, ephi, jt.up)

    def plus_clamped(cc, top):
        """E[(cc + clamp(L, -B, top))_+] in closed form (top = inf: no upper clamp)."""
        mm = np.maximum(-cc, -B)  # E[(cc + L) 1{mm < L <= top}] + the clamp atoms
        above = p0 if top < math.inf else 0.0
        mid = tau(mm) - (t0 + (T0 - mm) * p0 if top < math.inf else 0.0) + (mm + cc) * (law.sf(mm) - above)
        mid = np.where(mm < top, mid, 0.0)
        return mid + np.maximum(cc - B, 0.0) * pb + np.maximum(cc + T0, 0.0) * above

    # body E[A_+]/(n g), A = G'_1 + G'_2 (the second user's expectation in closed form)
    body = (2 * g * (1 - g) * float(plus_clamped(np.array([0.0]), T0)[0])
            + g * g * float(np.sum(w * plus_clamped(c, T0)))) / (n * g)
    r = lattice_pass(ll, gl, n, h, T0, B, 1e-2, 1, True)
    assert _body_lower(r) <= body * (1 + 1e-7) and r.main >= body * (1 - 1e-7), (_body_lower(r), body, r.main)
    # lower-clamp price
    tl = float(np.sum(w * np.maximum(-B - v, 0.0)))
    true_pen = tl * g * float(law.sf(np.array([B]))[0])
    pen = lower_tail_penalty(ll, gl, n, T0, B, Chernoff(lat.g, lat.eta, lat.k0, h, n - 1))
    assert pen >= true_pen * (1 - 1e-7)
    # (2.1): E[(S^B)_+]/(n g) between body + E phi and body + E phi + (n - 1) g I2(T0)/2
    vb = np.maximum(v, -B)
    sb = (2 * g * (1 - g) * float(plus_clamped(np.array([0.0]), math.inf)[0])
          + g * g * float(np.sum(w * plus_clamped(vb, math.inf)))) / (n * g)
    i2 = pair_integral_up(ll, T0)
    assert body + ephi <= sb * (1 + 1e-7) and sb <= (body + ephi + (n - 1) * g * i2 / 2) * (1 + 1e-7), (body, ephi, sb)


def test_closed_forms_in_the_far_tail():
    """stop_loss, prob_above_up and pair_integral_up (the closed forms the far-tail terms rest on)
    against the reference far out in the tail (sigma0 = 0.3: thousands of sd; the Gaussian
    randomizer's sum of an atom and a truncated lognormal)."""
    for fam, which in (("bmg", "x_bot"), ("bmg", "replace"), ("gauss", "x_bot")):
        gl, ll = lib(fam, 0.05, 0.3 if fam == "bmg" else 0.5, 1.0, which)
        g, law = ref(fam, 0.05, 0.3 if fam == "bmg" else 0.5, 1.0, which)
        t = np.array([-3.0, 0.0, 10.0, 1e3, 1e5, 1e7, 1e9])
        lo, up = ll.stop_loss(t)
        ex = law.stop(t)
        assert np.all(lo <= ex * (1 + 1e-10)) and np.all(up >= ex * (1 - 1e-10))
        assert np.all(ll.prob_above_up(t) >= law.sf(t) * (1 - 1e-10))
        for T0 in (16.0, 1024.0):
            x = T0 + np.expm1(np.linspace(0.0, math.log(1e9), 400001))
            p = law.sf(x)
            below = float(np.sum(np.diff(x) * p[1:] ** 2))  # lower Riemann sum (P decreasing)
            assert pair_integral_up(ll, T0) >= below


def test_gaussian_randomizer_replace_through_bot():
    """Replace-one for the Gaussian randomizer goes through bot (docs/accountant.md §9): the report's
    upper value must lie above A(e1) + e^{e1} B(e2) at the split it reports, A the x-vs-bot and B the
    bot-vs-x blanket divergence (each leg by its own Monte Carlo estimator)."""
    from sharpdp.shuffle import ShuffleAccountant

    s0, n, eps = 1.0, 1000, 1.0
    rep = ShuffleAccountant(GaussianRandomizer(s0, 1), n, adjacency="replace").report(eps)
    e1 = rep.terms["epsilon_split"]  # (nats)
    e2 = eps - e1
    g, la = ref_gauss(s0, e1, "x_bot")
    _, lb = ref_gauss(s0, e2, "bot_x")
    rng = np.random.default_rng(3)
    a, sa = mc_max(la, g, n, 6000, rng)
    b, sb = mc_tilted(lb, g, n, 6000, rng)
    up_a, up_b = rep.terms["leg_upper"]
    assert up_a >= a - Z_MC * sa and up_b >= b - Z_MC * sb, (up_a, a, sa, up_b, b, sb)
    mean, se = a + math.exp(e1) * b, math.hypot(sa, math.exp(e1) * sb)
    assert rep.upper >= mean - Z_MC * se, (rep.upper, mean, se)
