"""Offline reference generator for tests/test_review_decide.py (rev-decide review; not collected by pytest). Independent y-space reference (scipy quad) for D_up of the 1-D Gaussian randomizer N(x, s^2), |x| <= 1,
zero-out, n = 2 and 3 (n = 3 by nested quadrature of E[(L1+L2+L3)_+] = E[psi2(L1)] with psi2 the pair term).
Only order="x_bot" at n = 2 is used (it agrees with Monte Carlo and an independent mpmath form to ~4e-7); the bot_x
branch was found 0.4 % low against Monte Carlo at (s, eps) = (1, 1) and is not used."""
import math
from scipy import integrate, stats, optimize

def model(s, eps, x=1.0, order="x_bot"):
    E = math.exp(eps)
    g = 2 * stats.norm.sf(1 / s)
    def rbg(y):
        return stats.norm.pdf(abs(y) + 1, 0, s) / g
    def ratio(y):  # R_x(y) / R_BG(y) = g exp(-(y-x)^2/2s^2 + (|y|+1)^2/2s^2)
        return g * math.exp(((abs(y) + 1) ** 2 - (y - x) ** 2) / (2 * s * s))
    if order == "x_bot":
        l = lambda y: ratio(y) - E
    else:
        l = lambda y: 1 - E * ratio(y)
    return E, g, rbg, l

def Q(f, a, b, pts=()):
    pts = sorted(p for p in set(pts) if a < p < b)
    edges = [a] + pts + [b]
    tot = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        v, _ = integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-11, limit=400)
        tot += v
    return tot

def span(s):
    return -1 - 40 * s, 1 + 40 * s

def root_pos(l, target, s):
    """y in (0, 1+40s) where l(y) = target (l monotone on y > 0 for x = 1)"""
    a, b = 1e-300, span(s)[1]
    fa, fb = l(a) - target, l(b) - target
    if fa * fb > 0:
        return None
    return optimize.brentq(lambda y: l(y) - target, a, b, xtol=1e-15, rtol=1e-15)

def d_up(s, eps, n, x=1.0, order="x_bot"):
    E, g, rbg, l = model(s, eps, x, order)
    A, B = span(s)
    def stop(a):  # E[(a + L)_+]
        yc = root_pos(l, -a, s)
        return Q(lambda y: rbg(y) * max(a + l(y), 0.0), A, B, [0.0] + ([yc] if yc else []))
    y0 = root_pos(l, 0.0, s)
    e1 = stop(0.0)
    e2 = Q(lambda y: rbg(y) * stop(l(y)), A, B, [0.0] + ([y0] if y0 else []))
    if n == 2:
        return (1 - g) * e1 + g / 2 * e2
    assert n == 3
    def pair(a):  # E[(a + L1 + L2)_+]
        return Q(lambda y: rbg(y) * stop(a + l(y)), A, B, [0.0])
    e3 = Q(lambda y: rbg(y) * pair(l(y)), A, B, [0.0] + ([y0] if y0 else []))
    return (1 - g) ** 2 * e1 + 2 * g * (1 - g) * e2 / 2 + g * g * e3 / 3
