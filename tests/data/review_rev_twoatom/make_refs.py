"""References of tests/test_review_rev_twoatom.py (run from the repository root; ~2-4 minutes):

    python tests/data/review_rev_twoatom/make_refs.py

Independent of the library: D_up = E[(sum_{i<=n} B_i L_i)_+]/(n gamma) of a two-atom law by direct
summation in mpmath (40 digits): for every M = 1..n, P(N = M) = C(n, M) gamma^M (1 - gamma)^(n - M) and
E[(c - M beta)_+], c ~ Bin(M, p2), as the sum over c > M beta of (c - M beta) C(M, c) p2^c (1 - p2)^(M - c)
(every term positive; no recurrence in M or k, no truncation). The inputs are taken as exact binary
numbers (the doubles the kernel sees) or, for the accountant's laws, as the exact k-RR atoms
(k p_keep - e^eps, ... with p_keep = e^eps0 / (e^eps0 + k - 1)) evaluated at 40 digits.
Writes refs.json next to this file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import mpmath as mp

mp.mp.dps = 40


def dup_direct(a1, a2, p2, gamma, n, q2=None) -> mp.mpf:
    """Exact D_up (40 digits) by the double sum; a1, a2, p2, gamma as mpf (exact doubles or exact
    reals); q2 = 1 - p2 unless given."""
    a1, a2, p, g = mp.mpf(a1), mp.mpf(a2), mp.mpf(p2), mp.mpf(gamma)
    q = 1 - p if q2 is None else mp.mpf(q2)
    beta = -a1 / (a2 - a1)
    tot = mp.mpf(0)
    pm = (1 - g) ** n  # P(N = 0)
    for M in range(1, n + 1):
        pm = pm * (n - M + 1) / M * g / (1 - g) if g < 1 else (mp.mpf(1) if M == n else mp.mpf(0))
        if pm == 0:
            continue
        t = M * beta
        k = int(mp.floor(t))
        if k >= M:
            continue
        # pmf of Bin(M, p) at c = k + 1 .. M by the ratio recurrence from c = k + 1 (exact start)
        w = mp.binomial(M, k + 1) * p ** (k + 1) * q ** (M - k - 1)
        s = mp.mpf(0)
        for c in range(k + 1, M + 1):
            s += (c - t) * w
            if c < M:
                w = w * (M - c) / (c + 1) * p / q
        tot += pm * s
    return (a2 - a1) * tot / (n * g)


def rr_laws(k: int, e0: float, eps: float, adjacency: str):
    """Exact two-atom laws (a1, a2, p2) of k-RR(e0) at eps (the pairs of docs/sharp_krr.md; zero-out:
    x vs bot and bot vs x, replace (k = 2): 0 vs 1) and gamma = k / (e^e0 + k - 1), at 40 digits."""
    E0, E = mp.mpf(e0), mp.mpf(eps)
    Z = mp.e**E0 + k - 1
    pk, po, ee = mp.e**E0 / Z, 1 / Z, mp.e**E
    g = k / Z
    if adjacency == "zero_out":
        laws = [((k * po - ee, k * pk - ee), mp.mpf(1) / k), ((1 - ee * k * pk, 1 - ee * k * po), mp.mpf(k - 1) / k)]
    else:
        assert k == 2
        laws = [((2 * (po - ee * pk), 2 * (pk - ee * po)), mp.mpf(1) / 2)]
    return g, [(a1, a2, p2) for (a1, a2), p2 in laws]


def delta_ref(k, e0, n, eps, adjacency) -> mp.mpf:
    g, laws = rr_laws(k, e0, eps, adjacency)
    return max((dup_direct(a1, a2, p2, g, n) if a2 > 0 > a1 else mp.mpf(0)) for a1, a2, p2 in laws)


def root_ref(k, e0, n, delta, adjacency, lo, hi) -> mp.mpf:
    """eps with delta_ref(eps) = delta by bisection (delta_ref decreasing), to 1e-12 relative."""
    d = mp.mpf(delta)
    assert delta_ref(k, e0, n, lo, adjacency) > d > delta_ref(k, e0, n, hi, adjacency)
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2
        if delta_ref(k, e0, n, mid, adjacency) > d:
            lo = mid
        else:
            hi = mid
    return mp.mpf(hi)


# kernel cases: (a1, a2, p2, gamma, n) as doubles; the corners of the brief
KERNEL = [
    (-1.0, 1.0, 0.3, 0.5, 1), (-1.0, 1.0, 0.3, 0.5, 2), (-1.0, 1.0, 0.3, 0.5, 3),  # n = 1, 2, 3
    (-0.5, 2.0, 0.7, 1.0, 1), (-0.5, 2.0, 0.7, 1.0, 2), (-3.0, 1.0, 0.2, 1.0, 3),
    (-1.0, 2.0, 0.3, 1.0, 60), (-1.0, 2.0, 0.3, 0.4, 60),  # beta = 1/3: t_M integer every third M
    (-1.0, 1.0, 0.5, 0.5, 61), (-3.0, 1.0, 0.25, 0.7, 59),  # beta = 1/2, 3/4: E[L] = 0 exactly
    (-1.0, 1.0, 0.7, 0.5, 60),  # E[L] > 0: the else branch of the truncation
    (-1.0, 1.0, 1e-6, 0.5, 60), (-1.0, 1.0, 1 - 1e-6, 0.5, 60),  # p2 tiny / near 1
    (-2.0, 1.0, 1e-6, 1.0, 40), (-1.0, 5.0, 1 - 2**-40, 0.3, 50),
    (-1.0, 1.0, 0.3, 1e-6, 60), (-1.0, 1.0, 0.3, 1e-3, 200),  # gamma tiny: few active users
    (-1e-4, 10.0, 0.2, 0.5, 100), (-10.0, 1e-4, 0.9, 0.5, 100),  # beta near 0 / near 1
    (-1e3, 1e-3, 0.999, 0.8, 120), (-1e-3, 1e3, 1e-4, 0.8, 120),  # |a1| >> a2, a2 >> |a1|
    (-1.0, 0.01, 0.9, 0.3, 500),  # beta near 1, many k steps
    (-1.0, 1.0, 0.05, 0.9, 400), (-1.0, 1.0, 0.02, 0.9, 800),  # deep tails: fresh sums (r <= 1/2)
    (-1.0, 1.0, 1e-3, 1.0, 300),  # deep tail at gamma = 1 (no N window)
    (-1.0, 1.0, 10**-10.4, 1.0, 60),  # D_up near the subnormal range
    (-1.0, 1.0, 10**-10.55, 1.0, 60),  # D_up ~ 1e-310 (subnormal)
    (-1.0, 1.0, 10**-10.7, 1.0, 60),  # D_up ~ 1e-319
    (-0.6, 0.4, 0.35, 0.05, 3000), (-0.6, 0.4, 0.41, 0.6, 3000),  # n = 3000: windows of N and c
]

# binary RR zero-out, eps0 = 4, n = 3000, eps = 1.21: the deep-tail cell of docs/accountant_atoms.md §12.2
ACCOUNTANT = [
    (2, 4.0, 3000, 1.21, "zero_out"), (2, 1.0, 200, 0.2, "zero_out"), (2, 1.0, 200, 0.2, "replace"),
    (3, 2.0, 150, 0.5, "zero_out"), (5, 1.0, 100, 0.3, "zero_out"), (10, 2.0, 100, 0.97, "zero_out"),
    (2, 0.5, 1000, 0.05, "replace"), (2, 2.0, 60, 1.0, "zero_out"), (2, 1.0, 2, 0.3, "zero_out"),
    (2, 1.0, 3, 0.1, "replace"),
]

# get_epsilon: (k, eps0, n, adjacency, delta, bracket of the root)
ROOTS = [
    (2, 1.0, 200, "zero_out", 1e-6, 0.05, 0.6),
    (2, 1.0, 200, "replace", 1e-8, 0.05, 0.9),
    (10, 2.0, 100, "zero_out", 1e-16, 0.5, 1.5),
    (3, 1.0, 100, "zero_out", 1e-20, 0.3, 0.9),
]


def main() -> None:
    out = {"kernel": [], "accountant": [], "roots": []}
    for a1, a2, p2, g, n in KERNEL:
        v = dup_direct(a1, a2, p2, g, n)
        out["kernel"].append([a1, a2, p2, g, n, mp.nstr(v, 30)])
        print("kernel", a1, a2, p2, g, n, mp.nstr(v, 12), flush=True)
    for k, e0, n, eps, adj in ACCOUNTANT:
        v = delta_ref(k, e0, n, eps, adj)
        out["accountant"].append([k, e0, n, eps, adj, mp.nstr(v, 30)])
        print("accountant", k, e0, n, eps, adj, mp.nstr(v, 12), flush=True)
    for k, e0, n, adj, delta, lo, hi in ROOTS:
        r = root_ref(k, e0, n, delta, adj, mp.mpf(lo), mp.mpf(hi))
        out["roots"].append([k, e0, n, adj, delta, mp.nstr(r, 20)])
        print("root", k, e0, n, adj, delta, mp.nstr(r, 15), flush=True)
    Path(__file__).with_name("refs.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    assert math.isfinite(1.0)
    main()
