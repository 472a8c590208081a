"""Review (rev-phi): the table tail probability of the histogram release's fast path.

Claim attacked (docs/histogram_release.md §4.6): for a = |b| <= 6 the chunked fast path computes
Phi(-a) from the table kPhiTable (Phi(-k/128), phi(k/128), nearest doubles) and an 8-term Hermite
series, with the proved bound |P - Phi(-a)| <= e_P = 2u T + 48u |C| + 2u P; classify() (§4.2 step 4)
decides a bin only when the bounds separate, so a bound too small could release a wrong bin.

Independent references: exact rationals (the Hermite recurrence), mpmath at 120-256 bits (Phi, the
exact series remainder, the exact bins F(j) = Phi(b(t_j)) of §3), a pure-Python re-implementation of
the documented algorithm (IEEE doubles, one rounding per operation), and the ChaCha20 keystream
re-read word by word. Expensive references (every table cell's truncation remainder, a 418 000-point
sweep) are in tests/data/review_rev_phi/ with the script that made them.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
from sharpdp._core_loader import core
from sharpdp._rng import core_key
from sharpdp.histogram import ShiftedLogGaussian

from tests.test_histogram_grid_release import ref_bin, ref_cdf

H = core.histogram
U = 2.0**-53
ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "cpp" / "kernels" / "histogram_phi_table.hpp"
REF = ROOT / "tests" / "data" / "review_rev_phi" / "reference.json"
ERROR_TERMS = ROOT / "tests" / "data" / "review_rev_phi" / "error_terms.json"
SHIFT = float.fromhex("0x1.8p52")
INV_FACT = [1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320]  # fl(1/(n+1)!)


def _table() -> list[tuple[float, float]]:
    body = TABLE.read_text().split("kPhiTable[kPhiTableLast + 1][2] = {", 1)[1]
    pairs = re.findall(r"\{(0x[0-9a-f.p+-]+), (0x[0-9a-f.p+-]+)\}", body)
    return [(float.fromhex(t), float.fromhex(p)) for t, p in pairs]


TAB = _table()


def phi_tail_doc(a: float):
    """§4.6 as written, in IEEE doubles: k = round-half-even(128 a) (by the 1.5*2^52 shift), s = a_k - a,
    He_n(a_k) by the recurrence, S by Horner's rule in s, C = (phi_k s) S, P = T_k + C, and e_P."""
    kd = a * 128.0 + SHIFT
    ak = (kd - SHIFT) * (1.0 / 128.0)
    k = int(kd - SHIFT)
    s = ak - a
    h = [1.0, ak]
    for n in range(1, 7):
        h.append(ak * h[n] - float(n) * h[n - 1])
    acc = h[7] * INV_FACT[6]
    for n in range(6, 0, -1):
        acc = h[n] * INV_FACT[n - 1] + s * acc
    S = 1.0 + s * acc
    t, ph = TAB[k]
    C = (ph * s) * S
    p = t + C
    return p, 2.0 * U * t + 48.0 * U * abs(C) + 2.0 * U * p, k, s, S, C, h


def _adversarial_points() -> np.ndarray:
    """Nodes, cell edges (ties of 128 a: round half to even), 1-2 ulp either side of both, quarter
    cells, just below 6, tiny and subnormal a, and a few random points."""
    rng = np.random.default_rng(7)
    nodes = np.arange(769) / 128.0
    mids = (np.arange(768) + 0.5) / 128.0
    pts = [nodes, mids, nodes + 2.0**-9, nodes - 2.0**-9, rng.uniform(0.0, 6.0, 600)]
    for base in (nodes, mids):
        lo, hi = base.copy(), base.copy()
        for _ in range(2):
            lo, hi = np.nextafter(lo, -1.0), np.nextafter(hi, 7.0)
            pts += [lo, hi]
    pts.append(
        np.array(
            [
                0.0,
                5e-324,
                2 * 5e-324,
                2.0**-1022,
                1e-300,
                2.0**-60,
                2.0**-9,
                2.0**-8,
                np.nextafter(2.0**-8, 1.0),
                6.0 - 2.0**-8,
                np.nextafter(6.0 - 2.0**-8, 0.0),
                6.0 - 2.0**-9,
                6.0 - 2.0**-40,
                np.nextafter(6.0, 0.0),
                6.0,
            ]
        )
    )
    a = np.concatenate(pts)
    return np.unique(a[(a >= 0.0) & (a <= 6.0)])


# ---------------------------------------------------------------- (1) the proof of §4.6, step by step
def test_hook_computes_exactly_the_documented_algorithm():
    """The test hook (the kernel's phi_tail) is bit for bit §4.6 as written, index and bound included,
    so the proof below is about the code. Catches: a changed Horner order, index rounding (e.g.
    floor instead of nearest: |s| up to 2^-7 breaks the truncation bound), a different e_P."""
    a = _adversarial_points()
    p, err = H._phi_tail(a)
    for ai, pi, ei in zip(a.tolist(), p.tolist(), err.tolist()):
        q, e = phi_tail_doc(ai)[:2]
        assert (q, e) == (pi, ei), ai
    # the reduction: k nearest (ties to even), s exact (Sterbenz), |s| <= 2^-8
    for ai in a.tolist():
        _, _, k, s, *_ = phi_tail_doc(ai)
        assert Fraction(k, 128) - Fraction(ai) == Fraction(s) and abs(s) <= 2.0**-8 and 0 <= k <= 768


def test_hermite_recurrence_rounding_and_majorants_every_cell():
    """Exact rationals, all 769 cells: |h~_n - He_n(a_k)| <= gamma_{3n} H_n(a_k) (the induction of
    §4.6 'Rounding'); (i) A = e^{a_k|s| + s^2/2} <= 1.0238 at |s| = 2^-8 and equals sum H_n|s|^n/n!;
    (ii) H_n(6) <= n! e^{6.5} (checked to n = 60). Catches a wrong recurrence (e.g. + n h_{n-1})."""
    worst = 0.0
    for k in range(769):
        ak = Fraction(k, 128)
        he, hh = [Fraction(1), ak], [Fraction(1), ak]
        for n in range(1, 7):
            he.append(ak * he[n] - n * he[n - 1])
            hh.append(ak * hh[n] + n * hh[n - 1])
        h = phi_tail_doc(k / 128.0)[6]
        for n in range(2, 8):
            if hh[n] == 0:  # a_k = 0, odd n: He_n(0) = 0 and the recurrence is exact
                assert h[n] == 0.0
                continue
            worst = max(worst, float(abs(Fraction(h[n]) - he[n]) / hh[n]) / (3 * n * U))
        s = Fraction(1, 256)
        a_sum = float(sum(hh[n] * s**n / math.factorial(n) for n in range(8)))  # a partial sum of A
        assert a_sum <= math.exp(float(ak * s) + float(s * s) / 2) * (1 + 1e-15) <= 1.0238
    assert worst <= 1.0
    print(f"Hermite recurrence: worst error {worst:.3f} of gamma_3n H_n")
    x, hh = Fraction(6), [Fraction(1), Fraction(6)]
    for n in range(1, 60):
        hh.append(x * hh[n] + n * hh[n - 1])
    assert all(float(hh[n]) / math.factorial(n) <= math.exp(6.5) for n in range(61))


def _hermite_mp(n: int, x):
    h0, h1 = mpmath.mpf(1), x
    for m in range(1, n):
        h0, h1 = h1, x * h1 - m * h0
    return h0 if n == 0 else h1


def test_truncation_remainder_at_the_worst_offsets():
    """The exact remainder S - S_7 (mpmath 256 bits) at |s| = 2^-8 (the worst offset) in the cells
    near 0, mid-table and at the end (a_k = 6, the largest He_n), against the doc's 0.04u; the stored
    reference has every cell and s in {+-2^-8, +-2^-9}. Catches a series cut after n = 6 (its
    remainder at a_k = 6 is He_7(6) 2^-56/8! ~ 0.43u, above the doc's 0.04u)."""
    worst = mpmath.mpf(0)
    with mpmath.workprec(256):
        for k in (0, 1, 2, 384, 700, 767, 768):
            ak = mpmath.mpf(k) / 128
            tk, pk = mpmath.ncdf(-ak), mpmath.npdf(ak)
            for s in (mpmath.mpf(2) ** -8, -(mpmath.mpf(2) ** -8)):
                if k == 0 and s > 0:
                    continue  # a = -s < 0 never occurs
                exact = (mpmath.ncdf(-ak + s) - tk) / (pk * s)
                terms = [_hermite_mp(n, ak) * s**n / mpmath.factorial(n + 1) for n in range(8)]
                worst = max(worst, abs(exact - mpmath.fsum(terms)))
                # the 7-term series (n <= 6) would not meet the bound: the test has teeth
                if k == 768:
                    assert abs(exact - mpmath.fsum(terms[:7])) > 0.04 * U
    assert worst <= 0.04 * U
    ref = json.loads(REF.read_text())["truncation"]
    assert ref["max_trunc_over_u"] <= 0.04 and ref["A_max"] <= 1.0238
    print(f"truncation: {float(worst / U):.2e} u here, {ref['max_trunc_over_u']:.2e} u over all cells (doc 0.04 u)")


def test_each_error_term_of_the_proof_against_mpmath():
    """On the adversarial points (mpmath 160 bits): |S~ - S| <= 38.9u|S~|, |C~ - phi_k s S| <= 41.9u|C~|,
    |C~| <= 0.03 P~ (Mills' ratio step), |P~ - Phi(-a)| <= e_P and e_P <= 8u P (the doc's 4-6u).
    Also that the bound is used at most ~half (table + final rounding, uT + uP, against 2uT + 2uP):
    catches e_P shrunk by a factor 2.2 or more."""
    a = _adversarial_points()[::3]
    # the exact series values S = (Phi(-a) - Phi(-a_k)) / (phi(a_k) s) (1400 bits where |s| < 2^-30: the
    # difference cancels ~-log2|s| bits) are stored (tests/data/review_rev_phi/make_error_terms.py, ~1.5 s
    # of mpmath) for the same points, cells and offsets; a spread of them is recomputed here
    stored = json.loads(ERROR_TERMS.read_text())
    assert stored["table_sha256"] == hashlib.sha256(TABLE.read_bytes()).hexdigest(), "rerun make_error_terms.py"
    rows = stored["points"]
    assert [r[0] for r in rows] == [x.hex() for x in a.tolist()], "rerun make_error_terms.py"
    deep = [i for i, r in enumerate(rows) if r[3] is not None and abs(float.fromhex(r[2])) < 2.0**-30]
    live = set(deep[:: max(1, len(deep) // 8)] + list(range(1, len(rows), len(rows) // 16)))
    w_s = w_c = w_cp = w_used = w_rel = w_ep = 0.0
    with mpmath.workprec(160):
        for i, ai in enumerate(a.tolist()):
            p, err, k, s, S, C, _ = phi_tail_doc(ai)
            assert (rows[i][1], rows[i][2]) == (k, s.hex()), "rerun make_error_terms.py"
            ref = mpmath.ncdf(-mpmath.mpf(ai))
            used = float(abs(mpmath.mpf(p) - ref) / err)
            assert used <= 1.0, ai
            w_used, w_rel = max(w_used, used), max(w_rel, float(abs(p - ref) / ref) / U)
            w_ep = max(w_ep, err / (U * p))
            if s == 0.0:
                continue
            ak = mpmath.mpf(k) / 128
            pk = mpmath.npdf(ak)
            s_exact = mpmath.mpf(rows[i][3])
            if i in live:
                with mpmath.workprec(1400 if abs(s) < 2.0**-30 else 160):
                    s_live = (mpmath.ncdf(-mpmath.mpf(ai)) - mpmath.ncdf(-ak)) / (pk * s)
                assert abs(s_live - s_exact) <= mpmath.mpf(10) ** (1 - stored["digits"]) * abs(s_exact), (ai, s_live)
            w_s = max(w_s, float(abs(S - s_exact) / abs(S)) / U)
            w_c = max(w_c, float(abs(mpmath.mpf(C) - pk * s * s_exact) / abs(C)) / U)
            w_cp = max(w_cp, abs(C) / p)
    assert w_s <= 38.9 and w_c <= 41.9 and w_cp <= 0.03 and w_ep <= 8.0
    assert w_used <= 0.55
    print(
        f"|S~-S| <= {w_s:.2f}u|S~| (doc 38.9), |C~-C| <= {w_c:.2f}u|C~| (doc 41.9), |C|/P <= {w_cp:.4f}, "
        f"error <= {w_rel:.2f}u P, e_P <= {w_ep:.2f}u P, error/e_P <= {w_used:.3f}"
    )


def test_stored_dense_sweep_is_current_and_within_the_bound():
    """tests/data/review_rev_phi/reference.json: the hook against mpmath on ~418 000 points (made by
    make_reference.py next to it). Fails if the table changed since (stale reference) or if the
    sweep found an error above e_P."""
    ref = json.loads(REF.read_text())
    assert ref["table_sha256"] == hashlib.sha256(TABLE.read_bytes()).hexdigest()
    sw = ref["sweep"]
    assert sw["n_points"] > 400_000
    assert sw["max_miss_over_err"] <= 0.55 and sw["max_miss_over_uP"] <= 2.0 and sw["max_err_over_uP"] <= 6.0


# ---------------------------------------------------------------- (3) decided bins against exact bins
SETTINGS = [  # (r, r0, c, grid_bits): plain fast path, and 'narrow' ones (§4.5) where e_P dominates e
    (0.2, None, 1.0, 10),
    (0.2, None, 1e12, 10),
    (0.2, None, 1.0, 40),
    (0.2, None, 1e9, 7),
    (0.9, 0.8, 1e6, 10),
]
COUNTS = [0.0, 1.0, 1e6, 2.0**52 + 1, 2.0**53 - 1]


def test_decided_bins_are_exact_next_to_boundaries_adversarial_c_and_counts():
    """w0 at 0..16 and +-2^e, +-3*2^e units of 2^-64 from exact boundaries F(j) (mpmath 200 bits) whose
    b lies at the median, at b = sigma (L = 0), at a table node (1), mid-cell (1 + 1.5/128), in the
    tails (-3, 5.99, -5.999: the last cell) and past the table (6.05). Every decided bin must be the
    exact bin of every U in [w0, w0 + 1) 2^-64. In the narrow settings the kernel decides down to
    ~12u P from a boundary, where e_P (4-6u P) is a large part of the margin, so an error in P of a
    few ulp beyond e_P would show here."""
    d_set = sorted(
        {
            sg * d
            for d in list(range(17)) + [2**e for e in range(5, 57)] + [3 * 2**e for e in range(5, 55)]
            for sg in (-1, 1)
        }
    )
    closest = {}
    with mpmath.workprec(200):
        for r, r0, c, k in SETTINGS:
            m = ShiftedLogGaussian(r, r0, c)
            for n in COUNTS:
                ns, ws, fs = [], [], []
                for z in (0.0, m.sigma, 1.0, 1.0 + 1.5 / 128, -3.0, 5.99, -5.999, 6.05):
                    j = max(1, ref_bin(mpmath.ncdf(mpmath.mpf(z)), n, m.c, m.sigma, k))  # F(0) = 0: no boundary
                    f = ref_cdf(j, n, m.c, m.sigma, k)
                    w = int(mpmath.floor(mpmath.ldexp(f, 64)))
                    for d in d_set:
                        if 0 <= w + d < 2**64:
                            ns.append(n)
                            ws.append(w + d)
                            fs.append(f)
                bins, decided = H.invert(np.array(ns), np.array(ws, dtype=np.uint64), m.c, m.sigma, k)
                assert 0.3 < decided.mean() < 0.95
                cache: dict[int, mpmath.mpf] = {}

                def cdf(b, n=n, m=m, k=k, cache=cache):
                    if b not in cache:
                        cache[b] = ref_cdf(b, n, m.c, m.sigma, k)
                    return cache[b]

                for w, b, dec, f in zip(ws, bins.tolist(), decided.tolist(), fs):
                    if not dec:
                        continue
                    lo, hi = mpmath.ldexp(w, -64), mpmath.ldexp(w + 1, -64)
                    assert cdf(b) <= lo and cdf(b + 1) >= hi, (r, c, k, n, w, b)
                    pb = min(f, 1 - f)
                    dist = float(min(abs(lo - f), abs(hi - f)) / (U * pb))
                    closest[(c, k)] = min(closest.get((c, k), math.inf), dist)
    print("closest decided word, in u*P from the boundary:", {key: round(v, 1) for key, v in closest.items()})
    # where the fast path's L bound has no floor (narrow), e_P is a large share of the decision margin
    assert closest[(1e12, 10)] < 20 and closest[(1.0, 40)] < 20


def test_seeded_release_is_the_exact_bin_of_its_own_words():
    """release() with fixed keys: the first 256 keystream words of block 0 are the counts' w0 (§7);
    each released (not deferred) value is the grid value of the exact bin of [w0, w0 + 1) 2^-64
    (mpmath), for counts 0, 1, 2, 1e6, 2^52 + 1, 2^53 - 1, 12345, 1e12 and c up to 1e12."""
    counts = np.array([0, 1, 2, 1e6, 2.0**52 + 1, 2.0**53 - 1, 12345, 1e12] * 32, dtype=float)
    with mpmath.workprec(200):
        for seed, (r, r0, c, k) in enumerate(SETTINGS):
            m = ShiftedLogGaussian(r, r0, c)
            key = core_key(100 + seed)
            out, index, _cand, words, _rw, _steps = H.release(counts, m.c, m.sigma, k, key, False, 1)
            w0 = core.samplers.keystream_words(key, 0, counts.size)
            deferred = index.tolist()
            assert len(deferred) <= 2
            j = H.grid_index(np.nan_to_num(out), k)
            for i in range(counts.size):
                if i in deferred:
                    assert words[deferred.index(i), 0] == w0[i]
                    continue
                lo, hi = mpmath.ldexp(int(w0[i]), -64), mpmath.ldexp(int(w0[i]) + 1, -64)
                jj = int(j[i])
                assert H.grid_values(np.array([jj], dtype=np.uint64), k)[0] == out[i]
                assert ref_cdf(jj, counts[i], m.c, m.sigma, k) <= lo, (c, k, i)
                assert ref_cdf(jj + 1, counts[i], m.c, m.sigma, k) >= hi, (c, k, i)


# ---------------------------------------------------------------- (4) the cache side-channel note (§7)
def test_side_channel_note_facts():
    """§7: 'one entry of the 12 KB table per count, at index round(128|b|)', '4 entries per 64-byte
    line', so |b| is visible to 1/32. The table is 64-byte aligned, 769 entries of two doubles, and the
    entry read is the nearest node to |b| (ties to even), hence its cache line is floor(k/4)."""
    text = TABLE.read_text()
    assert "alignas(64) constexpr double kPhiTable[kPhiTableLast + 1][2]" in text
    assert len(TAB) == 769 and len(TAB) * 16 == 12304  # '12 KB'
    for a in (0.0, 1.0 / 256, 3.0 / 256, 1.0, 2.5 + 1 / 256, 5.999, 6.0):
        k = phi_tail_doc(a)[2]
        assert k == round(128 * a)  # Python's round is half-to-even too
    # two |b| within one 4-entry line are indistinguishable; 1/32 apart (one line) they are not
    line = {phi_tail_doc(a)[2] // 4 for a in np.linspace(1.0 - 1 / 256, 1.0 + 3 / 128 + 1 / 256 - 2**-40, 50)}
    assert len(line) == 1


def test_subnormal_a_underflows_the_correction_but_not_the_bound():
    """§4.6's step |C~ - phi_k s S| <= 41.9u|C~| is relative only; at a < 2^-1020 (cell 0) C~ is
    subnormal and its error absolute (at a = 2^-1074, C~ = -0: 100 % relative error). The docs now
    charge 2^-1073 for it, inside the slack of e_P's first term; checked here with mpmath at 1400 bits.
    Catches a kernel that let such an a through with a bound relative to C alone (e.g. e_P = 48u|C~|)."""
    for a in (5e-324, 1e-323, 1e-320, 2.0**-1022, 2.0**-1000):
        p, err = (float(x[0]) for x in H._phi_tail(np.array([a])))
        _, _, k, s, _, C, _ = phi_tail_doc(a)
        assert k == 0 and s == -a
        with mpmath.workprec(1400):
            exact = mpmath.ncdf(-mpmath.mpf(a))
            c_exact = exact - mpmath.mpf(0.5)
            assert abs(mpmath.mpf(C) - c_exact) <= 41.9 * U * abs(C) + 2.0**-1073
            assert abs(mpmath.mpf(p) - exact) <= U * p + 2.0**-1072 < err  # the final rounding only
        if a < 2.0**-1040:
            assert abs(mpmath.mpf(C) - c_exact) > 41.9 * U * abs(C)  # the relative step alone fails here


def test_stored_dense_boundary_run_found_no_wrong_bin():
    """tests/data/review_rev_phi/dense_boundaries.json (dense_boundaries.py next to it): 120 values of
    b in [-6.2, 6.2] x 5 counts x 6 settings (c up to 1e12, grids 2^0..2^-40), ~790 000 words next to
    exact boundaries: no decided bin differs from the exact one."""
    out = json.loads((REF.parent / "dense_boundaries.json").read_text())
    assert out["words"] > 700_000 and out["decided"] > 400_000 and out["wrong"] == []
