"""Claim B: ExactShuffleAccountant(RandomizedResponse(2, eps0), n, "replace").get_epsilon(delta, xtol)
against the exact max over classes j of delta_j(eps) (the differing user's output 1 w.p. p vs q, the
other j users 1 w.p. p, N - j w.p. q; both directions), by mpmath (dps) sums.
Checks: D(ans) <= delta and D(ans / (1 + xtol) * (1 - 1e-9)) > delta.  Usage: python krr_ref.py OUT.json"""
import json
import sys
import time

import mpmath as mp

from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse


def exact_D(n, eps0, eps, dps=40):
    with mp.workdps(dps):
        e0 = mp.mpf(eps0)
        p = 1 / (1 + mp.exp(-e0))
        q = 1 - p
        E = mp.exp(mp.mpf(eps))
        N = n - 1
        P = [[mp.binomial(m, k) * p**k * q**(m - k) for k in range(m + 1)] for m in range(N + 1)]
        best = mp.mpf(0)
        for j in range(N + 1):
            A, B = P[j], P[N - j][::-1]  # j users 1 w.p. p; N - j users 1 w.p. q
            U = [mp.fsum(A[i] * B[c - i] for i in range(max(0, c - (N - j)), min(j, c) + 1)) for c in range(N + 1)]
            for x, y in ((p, q), (q, p)):  # differing user: 1 w.p. x under D, y under D'
                d = mp.fsum(max(x * (U[c - 1] if c >= 1 else 0) + (1 - x) * (U[c] if c <= N else 0)
                                - E * (y * (U[c - 1] if c >= 1 else 0) + (1 - y) * (U[c] if c <= N else 0)), 0)
                            for c in range(N + 2))
                best = max(best, d)
        return best


if __name__ == "__main__":
    rows = []
    for n in (65, 100, 150):
        for eps0 in (0.5, 2.0):
            for d in (1e-2, 1e-6, 1e-12):
                for xtol in (1e-1, 1e-2, 1e-3, 1e-6):
                    t = time.process_time()
                    e = ExactShuffleAccountant(RandomizedResponse(2, eps0), n, adjacency="replace").get_epsilon(d, xtol=xtol)
                    t = time.process_time() - t
                    if not 0 < e < eps0:
                        rows.append(dict(n=n, eps0=eps0, d=d, xtol=xtol, e=e, t=t))
                        print(rows[-1], flush=True)
                        continue
                    Da = exact_D(n, eps0, e)
                    Db = exact_D(n, eps0, e / (1 + xtol) * (1 - 1e-9))
                    rows.append(dict(n=n, eps0=eps0, d=d, xtol=xtol, e=e, t=t, D_at=float(Da), D_below=float(Db)))
                    print(rows[-1], "OK" if Da <= d < Db else "FAIL", flush=True)
    json.dump(rows, open(sys.argv[1], "w"), indent=0)
