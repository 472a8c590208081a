"""Adversarial review rev24c of big24's engine changes (docs/accountant_tail.md §24, §17; cpp/kernels/accountant.cpp).

References are independent of the code under review:
* small n: V = min(L, T0) rounded DOWN / UP to a lattice (stochastically smaller / larger; phi non-decreasing), the
  (n-1)-fold law of B V by a plain numpy FFT, phi in closed form at the nodes: a rigorous bracket of E phi(A') up to
  float round-off (checked with a 1e-9 relative slack);
* n = 1e8, 1e9: a mean-preserving two-point (hat) lattice law of B V at steps h and h/2 (per-cell Gauss-Legendre in
  the normal variable), numpy FFT power exp((n-1) Log psi) on a window, converged in h (constants below; the script
  is `_hat_reference`, re-run at a coarse step by the slow test);
* the accurate DFT: the same frequencies recomputed through every path of `power` (one or four per pass, direct or
  tabulated twiddles) must give the same floats; the previous build (e81037e) was compared offline (report).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial.legendre import leggauss
from scipy.integrate import quad
from scipy.special import ndtr

from sharpdp._core_loader import core
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail
from _main_floats34 import switch
from sharpdp.shuffle.laws.bmg import bmg_laws
from sharpdp.shuffle.laws import laws_for

U = 2.0**-53


def _gr(sigma0: float, eps: float):
    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]  # x vs bot
    run = law.shifted(up=True)
    atom, cont = run.parts
    prm = (float(atom.values[0]), float(atom.probs[0]), cont.a, cont.b, cont.r, cont.z_lo, cont.weight)
    return float(gamma), run, prm


def _bmg(g: float, s: float, eps: float):
    gamma, law = bmg_laws(g, s, eps, "zero_out")[0]
    run = law.shifted(up=True)
    return float(gamma), run, (run.a, 0.0, run.a, run.b, run.r, run.z_lo, run.weight)  # (no atom: weight 0)


def _tau(s, xa, pa, a, G, r, zl, w):
    """E (L - s)_+ of an atom (x_a, p_a) plus the lognormal part a + G e^{r Z - r^2/2} on Z > zl (weight w)."""
    s = np.asarray(s, float)
    v = np.where(s > a, (np.log(np.maximum(s - a, 1e-300) / G) + 0.5 * r * r) / r, -np.inf)
    z = np.maximum(zl, v)
    return np.maximum(xa - s, 0) * pa + w * (G * ndtr(-(z - r)) - (s - a) * ndtr(-z))


def _rounded_bracket(prm, gamma, n, T0, h):
    """[E phi(A'_down), E phi(A'_up)] with V rounded down / up to multiples of h: contains E phi(A')."""
    xa, pa, a, G, r, zl, w = prm
    Lz = a + G * math.exp(r * zl - r * r / 2) if math.isfinite(zl) else a
    k0, K = math.floor(min(xa, Lz) / h), math.ceil(T0 / h)
    s = np.minimum(np.arange(k0, K + 1) * h, T0)
    v = np.maximum(np.where(s > a, (np.log(np.maximum(s - a, 1e-300) / G) + 0.5 * r * r) / r, -np.inf), zl)
    cell = np.diff(w * (ndtr(v) - ndtr(zl)))
    top = w * ndtr(-(math.log((T0 - a) / G) + 0.5 * r * r) / r)
    out = []
    for side in (0, 1):
        p = np.zeros(K - k0 + 1)
        p[side:p.size - 1 + side] += cell
        rnd = math.ceil if side else math.floor
        p[int(rnd((T0 - k0 * h) / h))] += top
        p[int(rnd((xa - k0 * h) / h))] += pa
        pU = gamma * p
        pU[-k0] += 1 - gamma
        L = (n - 1) * (pU.size - 1) + 1
        N = 1 << int(math.ceil(math.log2(L)))
        q = np.maximum(np.fft.irfft(np.fft.rfft(pU, N) ** (n - 1), N)[:L], 0.0)
        x = ((n - 1) * k0 + np.arange(L)) * h
        out.append(float(np.sum(q * _tau(np.maximum(T0, -x), *prm))))
    return out[0], out[1]


# ------------------------------------------------------------------ §24: the fast bracket at any clamp (small n)
_SMALL = [("gr", (0.5, 1.0), 2, 0.25), ("gr", (0.5, 1.0), 3, 16.0), ("gr", (0.5, 1.0), 10, 2.0),
          ("gr", (1.0, 0.01), 3, 0.25), ("gr", (1.0, 0.01), 10, 2.0), ("gr", (1.0, 2.0), 10, 0.25),
          ("gr", (1.0, 2.0), 3, 1024.0), ("gr", (2.0, 0.5), 10, 2.0), ("gr", (2.0, 0.5), 3, 128.0),
          ("bmg", (0.04089409561900239, 0.5960134902126553, 2.0), 3, 4.0),
          ("bmg", (0.04089409561900239, 0.5960134902126553, 2.0), 10, 32.0)]


@pytest.mark.parametrize("kind,args,n,T0", _SMALL)
def test_fast_bracket_inside_rounded_lattice_bracket(kind, args, n, T0):
    # clamps inside the bulk (T0 = 0.25, 2) and far out, n = 2, 3, 10; margins seen: lower 2e-5 .. 0.99, upper >= 0
    gamma, run, prm = (_gr if kind == "gr" else _bmg)(*args)
    lo_r, up_r = _rounded_bracket(prm, gamma, n, T0, min(T0 / 4096, 1 / 64))
    assert lo_r <= up_r * (1 + 1e-12) and up_r <= lo_r * (1 + 1e-3)  # (the reference is sharp)
    lo, up = concentrated.jump_bracket(run, gamma, n, T0, fast=True)
    assert 0 <= lo <= up_r * (1 + 1e-9) and up >= lo_r * (1 - 1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("T0,h", [(8.0, 1 / 2048), (16.0, 1 / 2048), (0.25, 1 / 4096)])
def test_fast_lower_value_at_n100_tight(T0, h):
    # the tightest cells of the sweep (sigma0 = 1, eps = 2, n = 100): the fast lower value sits 9e-5 / 2.6e-4 / 2e-5
    # below the rounded-down lattice value; a lower value raised by 1e-3 relative fails
    gamma, run, prm = _gr(1.0, 2.0)
    lo_r, up_r = _rounded_bracket(prm, gamma, 100, T0, h)
    lo, up = concentrated.jump_bracket(run, gamma, 100, T0, fast=True)
    assert lo <= lo_r * (1 + 1e-9) and up >= up_r * (1 - 1e-9) and lo >= lo_r * (1 - 1e-3)


# ------------------------------------------------------------------ §24 where it fires: n = 1e8, 1e9 (round's T0)
def _hat_reference(prm, gamma, n, T0, h, mu, sd):
    """E phi(A') for the hat (mean-preserving two-point) lattice law of B V at step h (an upper estimate, converging
    as h^2), by a numpy FFT power on [mu - 16 sd, max(mu + 16 sd, -T0) + 3 T0]; mass above -T0 counted at tau(T0)."""
    xa, pa, a, G, r, zl, w = prm
    Lz = a + G * math.exp(r * zl - r * r / 2)
    k0, K = math.floor(min(xa, Lz) / h) - 1, int(round(T0 / h))
    p = np.zeros(K - k0 + 2)
    kx = math.floor(xa / h)
    p[kx - k0] += pa * (1 - (xa - kx * h) / h)
    p[kx + 1 - k0] += pa * (xa - kx * h) / h
    ks = np.arange(math.floor(Lz / h), K)
    lo_s, hi_s = np.maximum(ks * h, Lz), (ks + 1.0) * h
    vl = np.maximum(np.where(lo_s > a, (np.log(np.maximum(lo_s - a, 1e-300) / G) + 0.5 * r * r) / r, zl), zl)
    vh = (np.log((hi_s - a) / G) + 0.5 * r * r) / r
    xg, wg = leggauss(12)
    zz = 0.5 * (vh - vl)[:, None] * xg[None, :] + 0.5 * (vh + vl)[:, None]
    dens = w * np.exp(-0.5 * zz * zz) / math.sqrt(2 * math.pi) * 0.5 * (vh - vl)[:, None] * wg[None, :]
    m = dens.sum(1)
    M = (dens * (a + G * np.exp(r * zz - 0.5 * r * r) - (ks * h)[:, None])).sum(1)
    for i in np.flatnonzero(vh - vl > 2.0):  # (wide cells in z, the bulk of a law on the whole normal range: quad)
        c0 = float(ks[i] * h)
        m[i] = w * (ndtr(vh[i]) - ndtr(vl[i]))
        M[i] = w * quad(lambda t: (a + G * math.exp(r * t - 0.5 * r * r) - c0) * math.exp(-0.5 * t * t), vl[i], vh[i],
                        epsabs=0, epsrel=1e-13, limit=200)[0] / math.sqrt(2 * math.pi)
    p[ks - k0] += m - M / h
    p[ks + 1 - k0] += M / h
    p[K - k0] += w * ndtr(-(math.log((T0 - a) / G) + 0.5 * r * r) / r)
    pU = gamma * p
    pU[-k0] += 1 - gamma
    lo_x, hi_x = mu - 16 * sd, max(mu + 16 * sd, -T0) + 3 * T0
    N = 1 << int(math.ceil(math.log2((hi_x - lo_x) / h)))
    q = np.fft.irfft(np.exp((n - 1) * np.log(np.fft.rfft(pU, N))), N)
    klo = int(math.floor(lo_x / h))
    q = np.roll(q, -((klo - (n - 1) * k0) % N))
    x = (klo + np.arange(N)) * h
    inw = x <= -T0
    return float(np.sum(q[inw] * _tau(np.maximum(T0, -x[inw]), *prm)) + (1 - np.sum(q[inw])) * _tau(T0, *prm))


# (sigma0, n, eps, the round's T0, E phi(A') at that T0, its relative uncertainty). References by _hat_reference:
# (0.5, 1e8): h = 40 / 20 / 10: 1.7128440941e-3 / 1.7128394741e-3 / 1.7128372313e-3 (Richardson 1.7128365e-3);
# (1.0, 1e8): h = 2 / 1 / 0.5 / 0.25: 4.31618e-10 / 4.31116e-10 / 4.30983e-10 / 4.30949e-10 (-> 4.30938e-10);
# (0.5, 1e9): h = 256 / 128: 2.3711351e-4 / 2.3711304e-4 (-> 2.3711288e-4);
# (1.0, 1e9): h = 1 / 0.5: 1.7777852e-13 / 1.7779096e-13 (not monotone: FFT noise ~1e-13 per node against phi up to
# 4e-10 between the mean and -T0; taken as 1.7779e-13 +- 3e-4); (0.75, 1e9, eps 0.01; -T0 only 5.3 sd above the mean):
# h = 8 / 4 / 2: 4.380416e-7 / 4.378209e-7 / 4.377194e-7 (-> ~4.3763e-7; before §24 the bracket was [0, 8.70e-6]). The FFT treatment at rel_tol 1e-4 and n = 1e4
# (sigma0 = 0.75, eps = 0.5, T0 = 8400: [1.620638152e-3, 1.620641338e-3]) holds this reference's 1.6206399563e-3.
# (**) (1.0, 1e8, 0.01): since the compiled cells' exact empty intervals (docs/accountant_tail.md §29) §24 no longer
# fires at this clamp (the FFT jump term no longer carries the TV bound of the empty cells): strict xfail, a new
# cell is needed for it.
_AT_CLAMP = [(0.5, 10**8, 1.0, 3481600.0, 1.7128365e-3, 1e-5),
             pytest.param(1.0, 10**8, 0.01, 69440.0, 4.30938e-10, 1e-4, marks=pytest.mark.xfail(
                 strict=True, reason="(**) §24 does not fire here since docs/accountant_tail.md §29")),
             (0.5, 10**9, 1.0, 18939904.0, 2.3711288e-4, 1e-5), (0.75, 10**9, 0.01, 774144.0, 4.3763e-7, 3e-4),
             pytest.param(1.0, 10**9, 0.01, 322560.0, 1.7779e-13, 3e-4, marks=pytest.mark.slow)]


@pytest.mark.parametrize("s0,n,eps,T0,ref,tol", _AT_CLAMP)
def test_round_with_closed_form_bracket_holds_the_reference(s0, n, eps, T0, ref, tol, monkeypatch):
    # (**) session 35, lead: §24 firing at this clamp is pinned with §45's hat lower values off; with them on the
    # round's lower value may come from the hat law and §24 need not fire (at (0.5, 1e8, 1) it does not): the values
    # are checked against the same references by test_round_with_hat_lower_holds_the_reference below
    switch(monkeypatch, "HAT_LOWER", False)
    gamma, run, _ = _gr(s0, eps)
    # (**) session 31, conc31: the closed form of §18 now accepts (0.5, 1e9, 1) and (1, 1e9, 0.01) itself
    # (docs/accountant_tail.md §38.3; its bracket against this file's reference at its own clamp:
    # tests/test_conc31_one_jump.py): the FFT treatment's round is tested with it switched off
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)
    seen = []
    orig = far_tail.closed_at_clamp
    monkeypatch.setattr(far_tail, "closed_at_clamp", lambda jt, *a: seen.append((jt, a[-1])) or orig(jt, *a))
    r = far_tail.certify_bigjump(run, gamma, n, 1e-2)
    assert seen and r.T0 == T0 and any(t == T0 for _, t in seen)  # (§24 fired, at this clamp)
    # the jump term's bracket holds E phi(A'); the round's values hold D_up in [E phi(A'), + body + pair term]
    assert r.jump.lo <= ref * (1 + tol) and r.jump.up >= ref * (1 - tol)
    assert r.lower <= ref * (1 + tol) + r.body_up + r.multi and r.upper >= ref * (1 - tol)
    assert r.lower >= 0.98 * ref  # (not vacuous: the FFT treatment's own lower value is 0 or 0.3 % looser)



@pytest.mark.parametrize("s0,n,eps,T0,ref,tol", [c for c in _AT_CLAMP if not hasattr(c, "marks")])
def test_round_with_hat_lower_holds_the_reference(s0, n, eps, T0, ref, tol, monkeypatch):
    """The same rounds with docs/accountant_tail.md §45 on (session 35): at the same clamp the jump term's bracket and
    the round's values still hold the hat references above, and the lower value stays within 2 % of them."""
    switch(monkeypatch, "HAT_LOWER", True)
    gamma, run, _ = _gr(s0, eps)
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)
    r = far_tail.certify_bigjump(run, gamma, n, 1e-2)
    assert r.T0 == T0
    assert r.jump.lo <= ref * (1 + tol) and r.jump.up >= ref * (1 - tol)
    assert r.lower <= ref * (1 + tol) + r.body_up + r.multi and r.upper >= ref * (1 - tol)
    assert r.lower >= 0.98 * ref

def test_bmg_round_at_1e9_holds_the_reference(monkeypatch):
    # BMG(0.01424, 0.4049), n = 1e9, eps = 0.1 (the doc's BMG cell; T0 = 483072): the hat reference at h = 4 / 2 / 1 is
    # 9.981635e-7 / 9.981281e-7 / 9.981116e-7 (an upper estimate, decreasing in h: limit ~9.98098e-7)
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, lead: §24 at this clamp with §45 off (below: with it on)
    gamma, run, _ = _bmg(0.01424190084729267, 0.40485813171778634, 0.1)
    seen = []
    orig = far_tail.closed_at_clamp
    monkeypatch.setattr(far_tail, "closed_at_clamp", lambda jt, *a: seen.append(a[-1]) or orig(jt, *a))
    r = far_tail.certify_bigjump(run, gamma, 10**9, 1e-2)
    assert seen == [483072.0] and r.T0 == 483072.0
    assert 0.999 * 9.98098e-7 <= r.jump.lo <= 9.981116e-7 and r.jump.up >= 9.98098e-7 * (1 + 1e-5)
    assert r.lower <= 9.981116e-7 + r.body_up + r.multi and r.upper >= 9.98098e-7


def test_bmg_round_at_1e9_with_hat_lower_holds_the_reference(monkeypatch):
    """The same round with docs/accountant_tail.md §45 on (session 35): §24 need not fire, the jump term's bracket
    still holds the hat reference's limit, and the round's bracket meets rel_tol (its lower value 0.9 % below)."""
    switch(monkeypatch, "HAT_LOWER", True)
    gamma, run, _ = _bmg(0.01424190084729267, 0.40485813171778634, 0.1)
    r = far_tail.certify_bigjump(run, gamma, 10**9, 1e-2)
    assert r.T0 == 483072.0
    assert r.jump.lo <= 9.98098e-7 and r.jump.up >= 9.98098e-7 * (1 + 1e-5)
    assert r.lower <= 9.981116e-7 + r.body_up + r.multi and r.upper >= 9.98098e-7
    assert r.upper - r.lower <= 1e-2 * r.lower


@pytest.mark.slow
def test_hat_reference_reproduces_its_constant():
    # the reference of the first cell at h = 40 (2^20 nodes): its constant within the h^2 convergence seen
    gamma, run, prm = _gr(0.5, 1.0)
    n, T0 = 10**8, 3481600.0
    xa, pa, a, G, r, zl, w = prm
    vT = (math.log((T0 - a) / G) + 0.5 * r * r) / r
    PT = w * ndtr(-vT)
    EV = pa * xa + w * (a * (ndtr(vT) - ndtr(zl)) + G * (ndtr(vT - r) - ndtr(zl - r))) + T0 * PT
    EV2 = (pa * xa**2 + w * (a * a * (ndtr(vT) - ndtr(zl)) + 2 * a * G * (ndtr(vT - r) - ndtr(zl - r))
                             + G * G * math.exp(r * r) * (ndtr(vT - 2 * r) - ndtr(zl - 2 * r))) + T0**2 * PT)
    mu, sd = (n - 1) * gamma * EV, math.sqrt((n - 1) * (gamma * EV2 - (gamma * EV) ** 2))
    v = _hat_reference(prm, gamma, n, T0, 40.0, mu, sd)
    assert v == pytest.approx(1.7128440941e-3, rel=1e-8)
    lo, up = concentrated.jump_bracket(run, gamma, n, T0, fast=True)
    assert lo <= 1.7128365e-3 * (1 + 1e-5) <= up * (1 + 2e-5)


def test_accountant_bracket_holds_the_reference():
    # the whole chain (get_delta_bounds: raised law, §14's correction) at the first cell: delta = D_up of this law
    lo, up = (float(v) for v in ShuffleAccountant(GaussianRandomizer(0.5, 1), 10**8).get_delta_bounds(1.0))
    assert 1.70e-3 < lo <= 1.7128365e-3 * (1 + 1e-5) + 2.1e-6 and up >= 1.7128365e-3 * (1 - 1e-5)


# ------------------------------------------------------------------ the accurate DFT: the same floats on every path
def _sparse(seed: int, N: int, nnz: int, tiny: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.zeros(N)
    idx = np.unique(np.concatenate([np.arange(3, 3 + nnz // 2), rng.choice(N, nnz - nnz // 2, replace=False)]))
    y[idx] = rng.random(idx.size) * (10.0 ** rng.integers(-300, 0, idx.size) if tiny else 1.0) + (0 if tiny else 0.1)
    return y / y.sum()


@pytest.mark.parametrize("seed,N,nnz,n,tiny", [(0, 97, 30, 9.0, False), (1, 2025, 200, 40.0, False),
                                               (2, 6561, 900, 1e3, True), (3, 10001, 500, 7.0, False),
                                               pytest.param(4, 1 << 22, 40, 3.0, False, marks=pytest.mark.slow),
                                               pytest.param(5, (1 << 22) + 1, 40, 3.0, False, marks=pytest.mark.slow)])
def test_dft_paths_same_floats(seed, N, nnz, n, tiny):
    # one frequency per pass (budget 1 or 3 frequencies) against four per pass, with direct twiddles and with the table
    # (N = 2^22: tabulated; 2^22 + 1, odd: never); the top frequencies' powers must be equal bit for bit
    y = _sparse(seed, N, nnz, tiny)
    nz = int(np.count_nonzero(y))
    z = np.fft.rfft(y)
    e = 10 * math.log2(N) * U * math.sqrt(N) * float(np.sqrt(np.sum(y * y)))
    order = np.argsort(-np.abs(z), kind="stable")  # (the bound n e (|z| + e)^(n-1) grows with |z|)
    big = 1 << 18
    ref, _, _, nref = core.accountant.power(z, n, e, N, y, 1e-300, big * nz * 1.0)
    if N <= 1 << 22:
        assert 4 * (N // 2 + 1) <= nref * nz  # (the last call tabulates its twiddles)
    for f in (1, 3, 4, 5, 8, 16, 64):
        Q, _, _, nfix = core.accountant.power(z, n, e, N, y, 1e-300, f * nz * 1.0)
        assert nfix == min(f, N // 2 + 1)
        assert np.array_equal(Q[order[:nfix]], ref[order[:nfix]]), f


# ------------------------------------------------------------------ §17: the second FFT run reuses the first's window
@pytest.mark.parametrize("s0,n,eps", [(0.5, 10**6, 0.1), (1.0, 10**6, 0.1)])
def test_second_fft_run_reuse_same_floats(s0, n, eps, monkeypatch):
    # the round with the reuse against the same round where every _fft_law call gets a fresh dict (the window, fold and
    # forward FFT recomputed, as before 2e5592); the second, accurate-DFT run must happen and give the same floats
    from sharpdp.shuffle.accountant import jump

    gamma, run, _ = _gr(s0, eps)
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)  # the FFT treatment
    orig = jump._fft_law
    works = []

    def spy(*a):
        works.append(a[-1])
        return orig(*a)

    monkeypatch.setattr(jump, "_fft_law", spy)
    r1 = far_tail.certify_bigjump(run, gamma, n, 1e-2)
    assert any(w > 0 for w in works)  # (the second run happened)
    monkeypatch.setattr(jump, "_fft_law", lambda *a: orig(*a[:-2], {}, a[-1]))
    r2 = far_tail.certify_bigjump(run, gamma, n, 1e-2)
    assert (r1.lower, r1.upper, r1.jump.lo, r1.jump.up, r1.T0, r1.h) == (r2.lower, r2.upper, r2.jump.lo, r2.jump.up,
                                                                        r2.T0, r2.h)
