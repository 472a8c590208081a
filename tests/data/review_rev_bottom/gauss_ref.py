"""Independent reference for the Gaussian randomizer's zero-out legs (dim 1, |x| = 1) at n = 2, 3, from the
definition of the blanket (docs/accountant.md §1.2-1.3), derived here without the package's laws:

R_x = N(x, s^2), blanket inf_x R_x = phi_s(|y| + 1) of mass g = 2 Phibar(1/s), R_BG = phi_s(|y| + 1) / g;
bot's report is drawn from R_BG. Leg A (x = 1 vs bot): L = g e^{2 y+/s^2} - e^eps; leg B (bot vs x):
L = 1 - e^eps g e^{2 y+/s^2} (y+ = max(y, 0); Y ~ R_BG, P(Y < 0) = 1/2).
D_up = E[(L_1 + ... + L_M)_+] / (n g), M ~ Bin(n, g). n = 2 exact:
(1 - g) E[L_+] + (g/2) E[(L1 + L2)_+]; n = 3 bracketed by 0 <= E[(S3)_+] <= E[(L1+L2)_+] + E[L_+].
phi(x) = E[(L + x)_+] in closed form (normal cdfs), E[(L1 + L2)_+] = E[phi(L)] by 1-d quadrature (mpmath)."""
import mpmath as mp


def leg_ref(sigma0: float, eps: float, j: int, n: int) -> tuple[float, float]:
    """(lower, upper) reference of D_up of leg j (0: x vs bot, 1: bot vs x) at n in (1, 2, 3)."""
    mp.mp.dps = 30
    s, E = mp.mpf(sigma0), mp.e ** mp.mpf(eps)
    g = 2 * mp.ncdf(-1 / s)
    Phibar = lambda z: mp.ncdf(-z)  # noqa: E731
    c0 = (g - E) if j == 0 else (1 - E * g)  # L on y < 0

    def Lc(y):
        return g * mp.e ** (2 * y / s**2) - E if j == 0 else 1 - E * g * mp.e ** (2 * y / s**2)

    def phi(x):  # E[(L + x)_+]
        v = mp.mpf(0.5) * max(c0 + x, 0)
        if j == 0:  # increasing in y: L + x > 0 iff y > y*
            ys = mp.mpf(0) if E - x <= g else max(mp.mpf(0), s**2 / 2 * mp.log((E - x) / g))
            v += Phibar((ys - 1) / s) - (E - x) / g * Phibar((ys + 1) / s)
        else:  # decreasing: L + x > 0 iff y < y*
            if 1 + x > E * g:
                ys = s**2 / 2 * mp.log((1 + x) / (E * g))
                v += (1 + x) / g * (mp.ncdf((ys + 1) / s) - mp.ncdf(1 / s)) - E * (mp.ncdf((ys - 1) / s) - mp.ncdf(-1 / s))
        return v

    EL = phi(0)
    if n == 1:
        return float(EL), float(EL)
    # E[phi(L)] : y < 0 half at c0, y > 0 density phi_s(y + 1) / g
    dens = lambda y: mp.npdf(y + 1, 0, s) / g  # noqa: E731
    # breakpoints: the kink of phi(Lc(y)) where Lc(y) = -c0 (both branches of phi switch there), then a
    # geometric cover of the tail (tanh-sinh loses accuracy across a kink)
    pts = [mp.mpf(0), s, 3 * s, 8 * s, 20 * s, 60 * s]
    yk = s**2 / 2 * (mp.log((2 * E - g) / g) if j == 0 else mp.log((2 - E * g) / (E * g)) if 2 > E * g else -1)
    if yk > 0:
        pts = sorted(set(pts + [yk, yk - s, yk + s]) - {x for x in pts if x < 0})
        pts = [x for x in pts if x >= 0]
    E2 = mp.mpf(0.5) * phi(c0) + mp.quad(lambda y: dens(y) * phi(Lc(y)), pts)
    if n == 2:
        v = (1 - g) * EL + g / 2 * E2
        return float(v), float(v)
    base = (1 - g) ** 2 * EL + g * (1 - g) * E2
    return float(base), float(base + g**2 / 3 * (E2 + EL))
