"""Review rev39 (session 39) of eps39's one-user-jump upper form for laws not bounded below (§8.17 of docs/accountant.md:
(c), ``limits.FEW_OPEN_JUMP``, ``closed_forms._open_depths`` / ``_jump_uppers``) and the pairs' form (§8.17 (a)) on the
BlanketMixedGaussian's replace law, L = a + b e^(rZ - r^2/2) + b' e^(-rZ - r^2/2) (a = g (1 - e^eps), b = 1 - g,
b' = -(1 - g) e^eps, r = 1 / sigma0), unbounded on both sides.

Reference (independent of the accountant's laws): each few-user term E[(S_k)_+] / k, k = 2 .. 8, by the Asmussen-Kroese
conditional Monte Carlo written here from the formula above (k - 1 users sampled, the last user's part
E[(L + s)_+; L > max(m, -s)] = s P(Z > z_t) + a Q(z_t) + b Q(z_t - r) + b' Q(z_t + r), z_t the root of L(z) = t by
bisection: L is increasing in z); D_up at n = 3 .. 8 from those terms with the binomial weights. Checked: every term
bracket of ``_term_brackets`` (j = 1 .. 7) holds its term (6 standard errors), and ``small_n_bracket`` (no rel_tol and
rel_tol 1e-2) holds D_up, at six laws from eps = 1 to 20 (the case of §8.17's why among them).
Measured (rev39, eps39 2d366fb5): every upper value 1.5 - 5e4 times its term (the form is loose, never below it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import closed_forms as cf
from sharpdp.shuffle.laws import laws_for

CASES = [(0.0222, 0.582, 15.11), (0.3, 1.0, 1.0), (0.1, 0.8, 3.0), (0.05, 0.5, 8.0), (0.2, 1.0, 2.0), (0.01, 0.4, 20.0)]


def _terms(g, s0, eps, kmax, N=60_000):
    """[(E[(S_k)_+] / k, standard error) for k = 2 .. kmax] by conditional Monte Carlo; k = 1 in closed form."""
    E, r = math.exp(eps), 1.0 / s0
    a, b, bm = g * (1 - E), 1 - g, -(1 - g) * E

    def L(z):
        return a + b * np.exp(r * z - r * r / 2) + bm * np.exp(-r * z - r * r / 2)

    def part(t, s):  # s P(L > t) + E[L; L > t]
        lo, hi = np.full(t.shape, -60.0), np.full(t.shape, 60.0)
        for _ in range(90):
            mid = 0.5 * (lo + hi)
            big = L(mid) > t
            hi, lo = np.where(big, mid, hi), np.where(big, lo, mid)
        z = 0.5 * (lo + hi)
        p = special.ndtr(-z)
        return s * p + a * p + b * special.ndtr(-(z - r)) + bm * special.ndtr(-(z + r))

    out = [(float(part(np.array([0.0]), np.array([0.0]))[0]), 0.0)]
    rng = np.random.default_rng(39)
    for k in range(2, kmax + 1):
        Ls = L(rng.standard_normal((N, k - 1)))
        s, m = Ls.sum(axis=1), Ls.max(axis=1)
        x = part(np.maximum(m, -s), s)
        out.append((float(x.mean()), float(x.std(ddof=1) / math.sqrt(N))))
    return out


@pytest.mark.parametrize("case", CASES, ids=str)
def test_term_brackets_and_bracket_hold_the_reference(case):
    g, s0, eps = case
    gam, law = laws_for(BlanketMixedGaussian(g, s0, 1), eps, "replace")[0]
    assert abs(gam - g) <= 1e-15
    ref = _terms(g, s0, eps, 8)
    e0 = cf.stop_loss_bracket(law, 0.0)
    assert e0[0] <= ref[0][0] * (1 + 1e-9) and e0[1] >= ref[0][0] * (1 - 1e-9), (e0, ref[0])
    j = np.arange(1, 8)
    lo_j, up_j = cf._term_brackets(law, j, e0[1])
    for jj, lo, up in zip(j, lo_j, up_j):
        v, se = ref[jj]
        assert lo <= v + 6 * se and up >= v - 6 * se, (case, jj, lo, up, v, se)
    for n in range(3, 9):
        w = [math.comb(n - 1, k) * g ** k * (1 - g) ** (n - 1 - k) for k in range(n)]
        d = sum(wk * t[0] for wk, t in zip(w, ref))
        sd = math.sqrt(sum((wk * t[1]) ** 2 for wk, t in zip(w, ref)))
        tol = 6 * sd + 1e-9 * d
        for rt in (None, 1e-2):
            clear_caches()
            br = cf.small_n_bracket(law, gam, n, rt)
            assert br is not None and br[0] <= d + tol and br[1] >= d - tol, (case, n, rt, br, d, sd)


def test_replace_report_at_n5_holds_the_reference():
    """rev38's case (a): BMG(0.0222, 0.582), n = 5, replace, eps = 15.11 at rel_tol 3e-2 ... 1e-3 (eps39's bracket
    [9.855387e-10, 9.856852e-10]; D_up = 9.855758e-10 by the terms above: the exact m <= 2 terms 9.8557535e-10 plus
    w_2 E[(S_3)_+] / 3 = 4.3e-16)."""
    g, s0, eps = CASES[0]
    ref = _terms(g, s0, eps, 5)
    w = [math.comb(4, k) * g ** k * (1 - g) ** (4 - k) for k in range(5)]
    d = sum(wk * t[0] for wk, t in zip(w, ref))
    tol = 6 * math.sqrt(sum((wk * t[1]) ** 2 for wk, t in zip(w, ref))) + 1e-9 * d
    for rt in (3e-2, 1e-2, 3e-3, 1e-3):
        clear_caches()
        lo, up = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), 5, "replace", rel_tol=rt).get_delta_bounds(eps)
        assert lo <= d + tol and up >= d - tol, (rt, lo, up, d, tol)


@pytest.mark.parametrize("g, s0, n, delta", [(0.0511, 0.567, 10, 1e-6), (0.0222, 0.582, 5, 1e-9)])
def test_get_epsilon_answer_within_delta_by_the_reference(g, s0, n, delta):
    """get_epsilon (replace, the few-user cells eps39's §8.17 speeds up): D_up at the answer by the AK terms is at most
    delta (measured on eps39 8ac59805: 9.8256e-7 at eps 12.19475; 9.8626e-10 at eps 15.10980)."""
    clear_caches()
    a = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n, "replace").get_epsilon(delta)
    ref = _terms(g, s0, a, n)
    w = [math.comb(n - 1, k) * g ** k * (1 - g) ** (n - 1 - k) for k in range(n)]
    d = sum(wk * t[0] for wk, t in zip(w, ref))
    sd = math.sqrt(sum((wk * t[1]) ** 2 for wk, t in zip(w, ref)))
    assert d - 6 * sd <= delta, (a, d, sd)


def test_closed_form_bracket_at_bmg_n10_eps5_holds_the_reference():
    """BMG(0.3739, 1.6818), n = 10, replace, eps = 5 (the cell whose closed-form bracket eps39's §8.17 narrows below
    1e-15; tests/test_viabot_speed.py's premise): the closed-form bracket and the report hold D_up by the AK terms
    (measured: 1.374542e-16 +- 4e-24 in eps39's [1.374537e-16, 1.375673e-16])."""
    g, s0, eps, n = 0.3739, 1.6818, 5.0, 10
    ref = _terms(g, s0, eps, n)
    w = [math.comb(n - 1, k) * g ** k * (1 - g) ** (n - 1 - k) for k in range(n)]
    d = sum(wk * t[0] for wk, t in zip(w, ref))
    tol = 6 * math.sqrt(sum((wk * t[1]) ** 2 for wk, t in zip(w, ref))) + 1e-9 * d
    clear_caches()
    acc = ShuffleAccountant(BlanketMixedGaussian(g, s0, 1), n, "replace")
    for lo, up in (acc.closed_form_bounds(eps), acc.get_delta_bounds(eps)):
        assert lo <= d + tol and up >= d - tol, (lo, up, d, tol)
