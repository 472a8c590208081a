"""Exact TV(N_Z(0, s^2), law of round(N(0, s^2))) at s = 1, 2, 4, 16, 1000 with mpmath (40 digits).

Reference for tests/test_review_rev-lattice.py (Step T of docs/sampling.md §10.6). Independent of the
package: the discrete Gaussian's normaliser by mpmath.nsum (Jacobi theta by summation), the rounded
Gaussian's cell masses by erfc differences at 40 digits, symmetric sum over k with |k| <= 40 s.
Run: python make_rounding_tv.py  (writes rounding_tv.json; about 20 s).
"""
import json

import mpmath

mpmath.mp.dps = 40
out = {}
for s in (1, 2, 4, 16, 1000):
    S = mpmath.mpf(s)
    reach = 40 * s
    Z = 1 + 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(k * k) / (2 * S * S)) for k in range(1, reach + 1))

    def cell(k):  # P(round(N(0, s^2)) = k) = P(k - 1/2 <= G < k + 1/2), by erfc for the tails' accuracy
        a, b = (k - mpmath.mpf(1) / 2) / S, (k + mpmath.mpf(1) / 2) / S
        if a >= 0:
            return (mpmath.erfc(a / mpmath.sqrt(2)) - mpmath.erfc(b / mpmath.sqrt(2))) / 2
        return mpmath.erf(b / mpmath.sqrt(2)) / 2 - mpmath.erf(a / mpmath.sqrt(2)) / 2

    tv = abs(1 / Z - cell(0)) + 2 * mpmath.fsum(abs(mpmath.exp(-mpmath.mpf(k * k) / (2 * S * S)) / Z - cell(k))
                                                for k in range(1, reach + 1))
    # mass beyond reach: both laws put < 1e-300 there
    out[str(s)] = mpmath.nstr(tv / 2, 25)
    print(s, out[str(s)], flush=True)
with open("rounding_tv.json", "w") as fh:
    json.dump(out, fh, indent=1)
