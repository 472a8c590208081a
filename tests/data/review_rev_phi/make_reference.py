"""Offline references for tests/test_review_rev_phi.py (docs/histogram_release.md §4.6).

Run from the repository root with the package installed:
    python tests/data/review_rev_phi/make_reference.py
Writes truncation.json (the exact remainder of the 8-term Hermite series at the worst offsets of
every table cell, mpmath 256 bits) and sweep.json (the kernel's Phi(-a) against mpmath on a dense
adversarial sweep: the largest |P - Phi(-a)| / err and |P - Phi(-a)| / (u P)).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import mpmath
import numpy as np
from sharpdp._core_loader import core

HERE = Path(__file__).resolve().parent
U = 2.0**-53


def hermite(n: int, x):
    h0, h1 = mpmath.mpf(1), x
    if n == 0:
        return h0
    for m in range(1, n):
        h0, h1 = h1, x * h1 - m * h0
    return h1


def truncation() -> dict:
    """max over cells k and s in {+-2^-8, +-2^-9} of |S - S_7| (S the exact series, S_7 its first
    8 terms), in units of u; also the largest A = sum_n H_n(a_k)|s|^n/n! (doc: <= 1.0238)."""
    worst, worst_at, a_max = mpmath.mpf(0), None, mpmath.mpf(0)
    with mpmath.workprec(256):
        for k in range(769):
            ak = mpmath.mpf(k) / 128
            tk, pk = mpmath.ncdf(-ak), mpmath.npdf(ak)
            for s in (mpmath.mpf(2) ** -8, -(mpmath.mpf(2) ** -8), mpmath.mpf(2) ** -9, -(mpmath.mpf(2) ** -9)):
                s_exact = (mpmath.ncdf(-ak + s) - tk) / (pk * s)
                s7 = mpmath.fsum(hermite(n, ak) * s**n / mpmath.factorial(n + 1) for n in range(8))
                if abs(s_exact - s7) > worst:
                    worst, worst_at = abs(s_exact - s7), (k, float(s))
            s = mpmath.mpf(2) ** -8
            a_max = max(a_max, mpmath.exp(ak * s + s * s / 2))
        return {"max_trunc_over_u": float(worst / mpmath.mpf(U)), "at": worst_at, "A_max": float(a_max)}


def sweep_points() -> np.ndarray:
    rng = np.random.default_rng(2026)
    k = np.arange(769) / 128.0
    mids = (np.arange(768) + 0.5) / 128.0
    pts = [rng.uniform(0.0, 6.0, 400000), k, mids]
    for base in (k, mids):
        lo, hi = base.copy(), base.copy()
        for _ in range(3):  # 1..3 ulp on either side
            lo, hi = np.nextafter(lo, -1.0), np.nextafter(hi, 7.0)
            pts += [lo, hi]
    # quarter-cell offsets, the region just below 6, tiny a
    pts += [
        k + 2.0**-9,
        k - 2.0**-9,
        6.0 - rng.uniform(0.0, 2.0**-8, 2000),
        2.0 ** -rng.uniform(9, 1074, 2000),
        rng.uniform(0.0, 2.0**-8, 2000),
    ]
    a = np.concatenate(pts)
    return np.unique(a[(a >= 0.0) & (a <= 6.0)])


def sweep() -> dict:
    a = sweep_points()
    p, err = core.histogram._phi_tail(a)
    worst_used, worst_ulp, worst_err_over_up, at = 0.0, 0.0, 0.0, None
    with mpmath.workprec(120):
        for ai, pi, ei in zip(a.tolist(), p.tolist(), err.tolist()):
            ref = mpmath.ncdf(-mpmath.mpf(ai))
            miss = abs(mpmath.mpf(pi) - ref)
            used = float(miss / ei)
            if used > worst_used:
                worst_used, at = used, ai
            worst_ulp = max(worst_ulp, float(miss / ref) / U)
            worst_err_over_up = max(worst_err_over_up, ei / (U * pi))
    return {
        "n_points": int(a.size),
        "max_miss_over_err": worst_used,
        "at": at,
        "max_miss_over_uP": worst_ulp,
        "max_err_over_uP": worst_err_over_up,
    }


if __name__ == "__main__":
    table = Path(__file__).resolve().parents[3] / "cpp" / "kernels" / "histogram_phi_table.hpp"
    out = {"table_sha256": hashlib.sha256(table.read_bytes()).hexdigest(), "truncation": truncation(), "sweep": sweep()}
    (HERE / "reference.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    assert out["sweep"]["max_miss_over_err"] <= 1.0
    assert math.isfinite(out["truncation"]["max_trunc_over_u"])
