"""rev41 (not collected by pytest): mpmath closed forms of the zero-out x-vs-bot laws written from the mechanisms (not the
library's laws), for lower bounds of D_up = E[S_+] / (n gamma), S = B_1 L_1 + ... + B_n L_n, B_i ~ Bern(gamma):

* GaussianRandomizer(s): gamma = g = 2 Phibar(1 / s); L = g - E (mass 1/2) or g e^{2y / s^2} - E, y > 0 of density
  phi_s(y + 1) / g (tests/_review28_ak_reference.GaussXBot); E[(L - t)_+] = Phibar(u - 2 / s) - (E + t) Phibar(u) / g,
  u = (y_t + 1) / s, y_t = (s^2 / 2) ln((t + E) / g) (t >= g - E); E[L] = 1 - E;
* BlanketMixedGaussian(gamma0, s0): gamma = gamma0, L = gamma0 - E + (1 - gamma0) e^{rZ - r^2/2}, r = 1 / s0;
  E[(L - t)_+] = (a - t) Phibar(z) + b Phibar(z - r), z = (ln((t - a) / b) + r^2 / 2) / r; E[L] = 1 - E.

Two certified lower bounds of D_up (proofs: the events "user j alone active" are disjoint; Jensen over the other n - 1
users given user 1, docs/accountant_edges.md section 3): (1 - gamma)^(n-1) E[L_+] and E[(L - (n - 1) gamma |E L|)_+] / n
(E[L] < 0). :func:`lower_ref` returns their maximum at 50 digits."""

from __future__ import annotations

from mpmath import mp, mpf


def _phibar(x):
    return mp.erfc(x / mp.sqrt(2)) / 2


def gauss(s, eps):
    """(gamma, stop_loss(t), mean) of GaussianRandomizer(s)'s x-vs-bot law."""
    s, E = mpf(s), mp.e ** mpf(eps)
    g = 2 * _phibar(1 / s)

    def stop(t):
        t = mpf(t)
        if t < g - E:
            return stop(g - E) + (g - E - t)
        u = (s * s / 2 * mp.log((t + E) / g) + 1) / s
        return _phibar(u - 2 / s) - (E + t) * _phibar(u) / g

    return g, stop, 1 - E


def bmg(gamma0, s0, eps):
    """(gamma, stop_loss(t), mean) of BlanketMixedGaussian(gamma0, s0)'s x-vs-bot law."""
    E, r = mp.e ** mpf(eps), 1 / mpf(s0)
    a, b = mpf(gamma0) - E, 1 - mpf(gamma0)

    def stop(t):
        t = mpf(t)
        if t <= a:
            return a + b - t
        z = (mp.log((t - a) / b) + r * r / 2) / r
        return (a - t) * _phibar(z) + b * _phibar(z - r)

    return mpf(gamma0), stop, 1 - E


def lower_ref(kind, params, n, eps):
    """max((1 - gamma)^(n-1) E[L_+], E[(L - (n - 1) gamma |E L|)_+] / n) in mpmath (50 digits), and gamma."""
    with mp.workdps(50):
        g, stop, mu = gauss(*params, eps) if kind == "g" else bmg(*params, eps)
        single = (1 - g) ** (n - 1) * stop(0)
        jensen = stop((n - 1) * g * max(-mu, 0)) / n
        return max(single, jensen), g
