"""References for tests/test_review_rev-lattice.py (docs/sampling.md §10.6, Steps L and M).

layer.json: L_true = P(dist(G, boundary of C_x) <= sqrt(d)/2), G ~ N(0, sigma^2 I_d), by a 1-D quadrature over
R = |G| (chi density) of the exact conditional probability: for R <= r = sqrt(d)/2 the event is certain (the apex
is within r), else it is {|phi - phi0| <= arcsin(r / R)}, phi = angle(G, x) with CDF
P(phi <= t) = I_{(1 - cos t)/2}((d-1)/2, (d-1)/2); for d = 1, P(|G| <= 1/2) = erf(1 / (2 sqrt 2 sigma)).
caps.json: the cap mass s = P(<U, x> >= theta), U uniform on S^{d-1}, with theta the exact double: for odd d by
the exact binomial sum I_y(a, a) = sum_{j=a}^{2a-1} C(2a-1, j) y^j (1-y)^{2a-1-j}, y = (1 - theta)/2, a = (d-1)/2
(Fractions, exact); for even d by mpmath quadrature of (1 - t^2)^{(d-3)/2} at 40 digits (not the incomplete beta
that the package evaluates). Run: python make_references.py  (about 1 minute).
"""
import json
import math
from fractions import Fraction

import mpmath

LAYER_CASES = [(1, 0.0, 0), (1, 0.0, 6), (2, 0.0, 0), (2, 0.0, 6), (2, 0.999999, 3), (2, -(1 - 2**-52), 6),
               (3, 0.0, 1), (3, 0.0, 6), (3, 0.5, 3), (3, -0.999999, 2), (50, 0.0, 3), (50, 0.0, 6), (50, 0.5, 1)]
CAP_CASES = [(0.7, 0.2, 3), (0.7, 1 - 2**-53, 3), (0.5, -0.999, 5), (0.7, 5e-324, 101), (0.7, 0.3, 1001),
             (0.3, -0.05, 4095), (0.999, 0.05, 4095), (0.6, 0.5, 64), (0.6, -0.048, 4096), (0.4, 0.9, 2)]


def layer(d, theta, bits):
    mpmath.mp.dps = 25
    sigma = mpmath.mpf(2) ** bits
    r = mpmath.sqrt(d) / 2
    if d == 1:
        return mpmath.erf(r / (sigma * mpmath.sqrt(2)))
    a = mpmath.mpf(d - 1) / 2
    phi0 = mpmath.acos(theta)

    def cdf(t):
        return mpmath.betainc(a, a, 0, (1 - mpmath.cos(t)) / 2, regularized=True)

    def cond(R):
        if R <= r:
            return mpmath.mpf(1)
        b = mpmath.asin(r / R)
        return cdf(min(mpmath.pi, phi0 + b)) - cdf(max(mpmath.mpf(0), phi0 - b))

    def dens(R):  # sigma chi_d
        u = R / sigma
        return u ** (d - 1) * mpmath.exp(-u * u / 2) / (2 ** (mpmath.mpf(d) / 2 - 1) * mpmath.gamma(mpmath.mpf(d) / 2)) / sigma

    pts = sorted({0.0, float(r), float(sigma * math.sqrt(d)), float(sigma * (math.sqrt(d) + 14))})
    return mpmath.quad(lambda R: dens(R) * cond(R), pts)


def cap_mass(theta, d):
    if d == 1:
        return Fraction(1, 2)
    if d % 2 == 1:
        a = (d - 1) // 2
        y = (1 - Fraction(theta)) / 2
        n = 2 * a - 1
        num, den, comp = y.numerator, y.denominator, y.denominator - y.numerator
        return Fraction(sum(math.comb(n, j) * num**j * comp ** (n - j) for j in range(a, n + 1)), den**n)
    with mpmath.workdps(40):  # (s, q), each by its own quadrature (no cancellation in 1 - s)
        f = lambda t: (1 - t * t) ** (mpmath.mpf(d - 3) / 2)  # noqa: E731
        w = min(1.0, 10 / math.sqrt(d))
        pts = sorted({-1.0, -w, 0.0, w, 1.0, theta})
        up = [mpmath.mpf(p) for p in pts if p >= theta]
        lo = [mpmath.mpf(p) for p in pts if p <= theta]
        total = mpmath.quad(f, [mpmath.mpf(p) for p in pts])
        return mpmath.quad(f, up) / total, mpmath.quad(f, lo) / total

if __name__ == "__main__":
    out = {}
    for d, theta, bits in LAYER_CASES:
        v = layer(d, theta, bits)
        out[f"{d} {theta!r} {bits}"] = mpmath.nstr(v, 20)
        print("layer", d, theta, bits, out[f"{d} {theta!r} {bits}"], flush=True)
    with open("layer.json", "w") as fh:
        json.dump(out, fh, indent=1)
    caps = {}
    for p, theta, d in CAP_CASES:
        s = cap_mass(theta, d)
        with mpmath.workdps(40):
            if isinstance(s, Fraction):
                sv = mpmath.nstr(mpmath.mpf(s.numerator) / mpmath.mpf(s.denominator), 30)
                qv = mpmath.nstr(mpmath.mpf((1 - s).numerator) / mpmath.mpf((1 - s).denominator), 30)
            else:
                sv, qv = mpmath.nstr(s[0], 30), mpmath.nstr(s[1], 30)
        caps[f"{p!r} {theta!r} {d}"] = [sv, qv]
        print("cap", p, theta, d, sv, qv, flush=True)
    with open("caps.json", "w") as fh:
        json.dump(caps, fh, indent=1)
