"""Independent references for the blanket divergence of the blanket-mixed Gaussian (1-D).

Everything here is derived from the mechanism's output densities in the message space y (not
from the accountant's parametrisation of the law of L in ``sharpdp.shuffle.laws``) and
evaluated in mpmath at 60 digits, so nothing under- or overflows.

With R_BG the blanket distribution (gamma > 0: N(0, s^2); gamma = 0: phi_s(|y| + 1) / g,
g = 2 Phibar(1/s)), a neighbouring pair (P, Q) and r = dR_BG/dy, the amplification variable is
L(y) = (p(y) - e^eps q(y)) / r(y) with y ~ R_BG, and the blanket divergence of the privacy-blanket
bound (Balle et al. 2019, Lemma 5.3; "The Privacy Blanket of the Shuffle Model") is

    D_n(eps) = E[(B_1 L_1 + ... + B_n L_n)_+] / (n gamma),  B_i ~ Bern(gamma).

n = 1: D_1 = E[L_+] = int (p - e^eps q)_+ dy (a hockey-stick divergence, closed form here).
n = 2: D_2 = gamma/2 E[(L_1 + L_2)_+] + (1 - gamma) E[L_+]; the inner expectation
E[(L + c)_+] = int (p - e^eps q + c r)_+ dy is a closed form, the outer one an mpmath quadrature.

The outer quadrature's breakpoints include the kinks of the inner stop-loss (``Pair.kinks``: the y where L(y)
reaches a value of c at which ``stoploss`` switches case, e.g. xb: L(y_k) = e^eps - g,
y_k = 1/2 + s^2 log(2 (e^eps - g) / (1 - g))). Until session 27 (ref27) they were missing and the n = 2 values
were off where a kink falls inside a piece: 2.1e-5 relative low at BMG(0.1, 0.5), eps 8; 1.6e-6 low at
(0.3, 0.5), eps 2; 3.4e-5 high at (0.3, 1.0), eps 4 (zero-out); up to 1.5e-7 at gamma = 0. The stored data made
from this module (tests/data/n2_quadrature_reference.json, bmg_n2_reference.json,
review_rev_pair20/quad_reference.json) were regenerated then. Check: the value moves by < 1e-12 relative (at
25 digits; measured <= 7e-24) when every piece is cut in 16 (``Pair.d2(split=16)``; tests/test_ref27_kink.py).
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 60


def _Phibar(x):
    x = mp.mpf(x)
    if abs(x) > 10**8:  # mpmath's erfc fails for huge arguments: Mills ratio, relative error < 1e-16
        tail = mp.npdf(abs(x)) / abs(x) * (1 - 1 / x**2)
        return tail if x > 0 else 1 - tail
    return mp.ncdf(-x)


def _Phi(x):
    return _Phibar(-mp.mpf(x))


class Pair:
    """One ordered neighbouring pair of the BMG with its blanket: the terms of p - e^eps q + c r.

    Each density is a combination sum_k w_k phi_s(y - m_k) on pieces of the line; for the pairs
    used here p - e^eps q + c r changes sign once, at a point found in closed form.
    """

    def __init__(self, gamma, s, eps, kind):
        self.g = mp.mpf(gamma)
        self.s = mp.mpf(s)
        self.ee = mp.exp(mp.mpf(eps))
        self.kind = kind
        if kind in ("xb0", "bx0"):  # gamma = 0: blanket mass g0 = 2 Phibar(1/s)
            self.g0 = 2 * _Phibar(1 / self.s)

    def gamma_law(self):
        return self.g if self.kind not in ("xb0", "bx0") else self.g0

    def L(self, y):
        """L(y) = (p - e^eps q) / r at y."""
        g, s, ee = self.g, self.s, self.ee
        y = mp.mpf(y)
        if self.kind == "xb":  # P = g N(0) + (1-g) N(1), Q = N(0) = R
            return g - ee + (1 - g) * mp.exp((2 * y - 1) / (2 * s * s))
        if self.kind == "bx":
            return 1 - ee * g - ee * (1 - g) * mp.exp((2 * y - 1) / (2 * s * s))
        if self.kind == "rep":  # P = BMG(+1), Q = BMG(-1), R = N(0)
            return (g * (1 - ee) + (1 - g) * mp.exp((2 * y - 1) / (2 * s * s))
                    - ee * (1 - g) * mp.exp((-2 * y - 1) / (2 * s * s)))
        g0 = self.g0  # R = phi_s(|y| + 1)/g0; P = N(1) (xb0) or Q = N(1) (bx0)
        ratio = 1 if y <= 0 else mp.exp(2 * y / (s * s))  # phi_s(y - 1) / phi_s(|y| + 1)
        if self.kind == "xb0":
            return g0 * ratio - ee
        return 1 - ee * g0 * ratio

    def stoploss(self, c):
        """E[(L + c)_+] = int (p - e^eps q + c r)_+ dy, closed form."""
        g, s, ee, c = self.g, self.s, self.ee, mp.mpf(c)
        if self.kind == "xb":  # (g - ee + c) phi_s(y) + (1 - g) phi_s(y - 1)
            a0 = g - ee + c
            if a0 >= 0:
                return a0 + (1 - g)
            ys = mp.mpf(1) / 2 + s * s * mp.log(-a0 / (1 - g))
            return a0 * _Phibar(ys / s) + (1 - g) * _Phibar((ys - 1) / s)
        if self.kind == "bx":  # (1 - ee g + c) phi_s(y) - ee (1 - g) phi_s(y - 1)
            a0 = 1 - ee * g + c
            if a0 <= 0:
                return mp.mpf(0)
            ys = mp.mpf(1) / 2 + s * s * mp.log(a0 / (ee * (1 - g)))
            return a0 * _Phi(ys / s) - ee * (1 - g) * _Phi((ys - 1) / s)
        if self.kind == "rep":
            # a0 + (1-g) e^{-1/(2s^2)} (w - ee/w) = 0 with w = e^{y/s^2}: a quadratic in w
            a0 = g * (1 - ee) + c
            A = a0 * mp.exp(1 / (2 * s * s)) / (1 - g)
            D = mp.sqrt(A * A + 4 * ee)
            w = (D - A) / 2 if A <= 0 else 2 * ee / (A + D)
            ys = s * s * mp.log(w)
            return (a0 * _Phibar(ys / s) + (1 - g) * _Phibar((ys - 1) / s)
                    - ee * (1 - g) * _Phibar((ys + 1) / s))
        g0 = self.g0
        if self.kind == "xb0":  # y < 0: (1 - (ee - c)/g0) phi_s(y - 1); y > 0: phi_s(y-1) - (ee-c)/g0 phi_s(y+1)
            k = (ee - c) / g0
            neg = (1 - k) * _Phi(-1 / s) if k < 1 else mp.mpf(0)
            if k <= 0:
                pos = _Phibar(-1 / s) + (-k) * _Phibar(1 / s)
            else:
                ys = max(s * s * mp.log(k) / 2, mp.mpf(0))
                pos = _Phibar((ys - 1) / s) - k * _Phibar((ys + 1) / s)
            return neg + pos
        # bx0: y < 0: ((1 + c)/g0 - ee) phi_s(y + ... ) -- r = phi_s(1 - y)/g0 = phi_s(y - 1)/g0 there
        k = (1 + c) / g0  # p - ee q + c r = (1 + c) r - ee phi_s(y - 1) = k phi_s(|y|+1) - ee phi_s(y - 1)
        neg = (k - ee) * _Phi(-1 / s) if k > ee else mp.mpf(0)
        if k <= 0:
            return neg
        # y > 0: k phi_s(y + 1) - ee phi_s(y - 1) > 0  <=>  exp(2y/s^2) < k/ee
        if k <= ee:
            return neg
        y2 = s * s * mp.log(k / ee) / 2
        pos = k * (_Phi((y2 + 1) / s) - _Phi(1 / s)) - ee * (_Phi((y2 - 1) / s) - _Phi(-1 / s))
        return neg + pos

    def d1(self):
        return self.stoploss(0)

    def kinks(self):
        """The points y where the inner stop-loss E[(L(y) + c)_+] switches form (L(y) hits a branch end of
        ``stoploss``): the outer integrand is not analytic there, so each is a breakpoint of the quadrature.

        xb: a0 = g - ee + L(y) = 0, i.e. (1 - g) e^{(2y-1)/(2s^2)} = 2 (ee - g);
        bx: a0 = 1 - ee g + L(y) = 0, i.e. ee (1 - g) e^{(2y-1)/(2s^2)} = 2 (1 - ee g) (only if ee g < 1);
        rep: none (L is unbounded on both sides, the stop-loss one closed form in c);
        xb0: k = (ee - L(y))/g0 in {0, 1}, i.e. g0 e^{2y/s^2} in {2 ee, 2 ee - g0} (y > 0; L is constant for y <= 0);
        bx0: k = (1 + L(y))/g0 in {0, ee}, i.e. ee g0 e^{2y/s^2} in {2, 2 - ee g0} (y > 0).
        """
        g, ee = self.g, self.ee
        half, s2 = mp.mpf(1) / 2, self.s * self.s
        if self.kind == "xb":
            return [half + s2 * mp.log(2 * (ee - g) / (1 - g))] if ee > g else []
        if self.kind == "bx":
            return [half + s2 * mp.log(2 * (1 - ee * g) / (ee * (1 - g)))] if ee * g < 1 else []
        if self.kind == "rep":
            return []
        g0 = self.g0
        ratios = (2 * ee / g0, 2 * ee / g0 - 1) if self.kind == "xb0" else (2 / (ee * g0), 2 / (ee * g0) - 1)
        return [s2 * mp.log(r) / 2 for r in ratios if r > 1]

    def breakpoints(self):
        """The outer quadrature's pieces: the densities' centres and +-12 s around them, and ``kinks``."""
        s = self.s
        if self.kind in ("xb0", "bx0"):
            pts = {-mp.inf, -1 - 12 * s, -1, 0, 1 - 12 * s, 1, 1 + 12 * s, mp.inf}
        else:
            pts = {-mp.inf, -12 * s, 0, mp.mpf(1) / 2, 12 * s, 1 - 12 * s, 1, 1 + 12 * s, mp.inf}
        return sorted(pts | set(self.kinks()))

    def d2(self, split=1):
        """D_2 = gamma/2 E[(L_1 + L_2)_+] + (1 - gamma) E[L_+] (outer integral by quadrature).

        ``split`` > 1 cuts every finite piece of ``breakpoints`` into ``split`` equal ones and adds split - 1
        points s, 2 s, ... into each infinite one (a check of the quadrature: the value must not move).
        """
        gam = self.gamma_law()
        s = self.s
        if self.kind in ("xb0", "bx0"):
            g0 = self.g0
            dens = lambda y: mp.npdf(abs(y) + 1, 0, s) / g0  # noqa: E731
        else:
            dens = lambda y: mp.npdf(y, 0, s)  # noqa: E731
        pts = self.breakpoints()
        if split > 1:
            fine = set(pts)
            for a, b in zip(pts[:-1], pts[1:]):
                if a == -mp.inf:
                    fine |= {b - j * s for j in range(1, split)}
                elif b == mp.inf:
                    fine |= {a + j * s for j in range(1, split)}
                else:
                    fine |= {a + (b - a) * j / split for j in range(1, split)}
            pts = sorted(fine)
        inner = mp.quad(lambda y: dens(y) * self.stoploss(self.L(y)), pts)
        return gam / 2 * inner + (1 - gam) * self.d1()


def reference(gamma, sigma0, eps, adjacency, n):
    """Exact D_n(eps) (n = 1 closed form, n = 2 quadrature), max over the orders of the pair."""
    if adjacency == "replace":
        kinds = ("rep",)
    else:
        kinds = ("xb", "bx") if gamma > 0 else ("xb0", "bx0")
    vals = []
    for k in kinds:
        p = Pair(gamma, sigma0, eps, k)
        vals.append(p.d1() if n == 1 else p.d2())
    return max(vals)
