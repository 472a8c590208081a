"""Independent y-space reference for the Gaussian randomizer's bot-vs-x law (zero-out), for tests/test_far38_*.py (not
collected by pytest): L = 1 - e^eps R_x(y) / R_bg(y), y ~ R_bg, x = 1, sigma0 = s, R_bg(y) = phi_s(|y| + 1) / g,
g = 2 Phibar(1/s) (the blanket density; docs/accountant.md §2.4). R_x / R_bg = g for y <= 0 (an atom of mass 1/2 at the
top 1 - e^eps g) and g e^{2y/s^2} for y > 0, so tau(t) = E[(L - t)_+] is closed (R_bg R_x / R_bg = R_x = phi_s(y - 1)):

    tau(t) = (top - t)/2 + (1 - t) (Phi((r + 1)/s) - Phi(1/s)) / g - e^eps (Phi((r - 1)/s) - Phi(-1/s)),
    r = (s^2 / 2) log((1 - t) / (e^eps g)),  for t < top (0 beyond),

and D_up at n = 2 and 3 (M ~ Bin(n, g) active users) by scipy quadrature over y:
n = 2: (1 - g) tau(0) + g/2 E tau(-L1); n = 3: (1 - g)^2 tau(0) + g (1 - g) E tau(-L1) + g^2/3 E psi(L1),
psi(a) = E tau(-a - L2). None of the accountant's law objects, lattices or FFTs is used."""

from __future__ import annotations

import math

from scipy import integrate, special


def _consts(s: float, eps: float) -> tuple[float, float, float]:
    E = math.exp(eps)
    g = 2.0 * float(special.ndtr(-1.0 / s))
    return E, g, 1.0 - E * g


def tau(t: float, s: float, eps: float) -> float:
    """E[(L - t)_+] of the bot-vs-x law in closed form."""
    E, g, top = _consts(s, eps)
    if t >= top:
        return 0.0
    r = 0.5 * s * s * math.log((1.0 - t) / (E * g))
    pos = (1.0 - t) * (special.ndtr((r + 1) / s) - special.ndtr(1 / s)) / g \
        - E * (special.ndtr((r - 1) / s) - special.ndtr(-1 / s))
    return 0.5 * (top - t) + float(pos)


def _mean_over_law(f, s: float, eps: float) -> float:
    """E f(L) by quadrature: the atom (mass 1/2 at the top) plus y > 0 with density phi_s(y + 1) / g."""
    E, g, top = _consts(s, eps)
    dens = lambda y: math.exp(-0.5 * ((y + 1) / s) ** 2) / (s * math.sqrt(2 * math.pi)) / g  # noqa: E731
    ell = lambda y: 1.0 - E * g * math.exp(2 * y / (s * s))  # noqa: E731
    tot = 0.5 * f(top)
    edges = [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 1 + 40 * s]
    for a, b in zip(edges[:-1], edges[1:]):
        tot += integrate.quad(lambda y: dens(y) * f(ell(y)), a, b, epsabs=0, epsrel=1e-11, limit=400)[0]
    return tot


def d_up(s: float, eps: float, n: int) -> tuple[float, float]:
    """(D_up, g) of the bot-vs-x law at n = 2 or 3."""
    E, g, top = _consts(s, eps)
    e2 = _mean_over_law(lambda a: tau(-a, s, eps), s, eps)
    if n == 2:
        return (1 - g) * tau(0.0, s, eps) + g / 2 * e2, g
    assert n == 3
    e3 = _mean_over_law(lambda a: _mean_over_law(lambda b: tau(-a - b, s, eps), s, eps), s, eps)
    return (1 - g) ** 2 * tau(0.0, s, eps) + g * (1 - g) * e2 + g * g / 3 * e3, g
