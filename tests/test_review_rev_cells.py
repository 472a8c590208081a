"""Adversarial review of the compiled lognormal cells (cpp/kernels/lognormal_cells.hpp; docs/accountant.md §2.3).

Independent references only: mpmath (closed forms in ncdf at 100+ digits on the kernel's own V-edges, which is how
§2.3 defines a cell; the stop-loss at the exact root of L = t), glibc's long-double functions for the libm
allowances, and the accountant's values on main (the numpy cells; tests/data/review_rev_cells/, with the script
that made them). Each test names the mutation or bug it would catch.

Found by this review (fixed in the kernel, see §2.3 "Subnormal roundings"): a narrow cell's P = G e^{r v* - r^2/2}
formed as G times an exponential that is itself subnormal (G = 1e300, r = 40: the hat weight 2.7% off against a
claimed 1e-11 relative bound); subnormal roundings of products (tiny weights, grids near the subnormal range)
charged by no relative term (cells and stop_loss: up = 0 below a positive exact stop-loss); a NaN hat weight with a
NaN bound where |a - x_j| overflows; a stop-loss lower bound of inf where the exact value exceeds the double range.
Held (no change needed): 8000+ random adversarial laws/grids (r in [0.01, 40], G, S, a, weight up to 1e+-300, far
tails, z_lo inside the grid, narrow and wide cells) within their bounds (worst ratio ~0.33), 7000+ stop-losses,
ndtr within 0.38 of its allowance, libm within 3.1 ulp, the memo and blocking bit for bit, the accountant as on main.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp import _core
from _main_floats34 import switch  # noqa: E402

ACC = _core.accountant
DATA = Path(__file__).parent / "data" / "review_rev_cells"
EPS = 2.0 ** -52


def _orient(a, b, bm, z_lo):
    if b > 0 or bm < 0:
        return b, -bm, z_lo, math.inf
    return bm, -b, -math.inf, -z_lo


def _P(lo, hi):
    """P(lo < V < hi) without cancellation: erf differences near 0 (a cell [0, 1e-112] needs no 112 digits)."""
    if (lo >= 0 or hi <= 0) and max(abs(lo), abs(hi)) < 1:
        return (mp.erf(hi / mp.sqrt(2)) - mp.erf(lo / mp.sqrt(2))) / 2
    if lo > 0:
        return mp.ncdf(-lo) - mp.ncdf(-hi)
    return mp.ncdf(hi) - mp.ncdf(lo)


def _mpf(x):
    return mp.inf if x == math.inf else (mp.ninf if x == -math.inf else mp.mpf(x))


def _L(a, b, r, bm, v):
    """L at Z = v in the log domain (no intermediate underflow of e^{rv - r^2/2} before the coefficient)."""
    s = a
    if b:
        s += math.copysign(math.exp(math.log(abs(b)) + r * v - r * r / 2), b)
    if bm:
        s += math.copysign(math.exp(math.log(abs(bm)) - r * v - r * r / 2), bm)
    return s


def exact_cells(a, b, r, bm, z_lo, weight, x0, h, K, v, only=None):
    """[(mass, hat weight) exact] per cell j (or the cells ``only``) from mpmath on the V-edges v, as
    worst_cells defines them (None for a cell not asked for)."""
    G, S, vlo, vhi = _orient(a, b, bm, z_lo)
    x = x0 + h * np.arange(K + 1, dtype=float)
    big = max(abs(a), float(np.max(np.abs(x))), G, S, 1.0)
    out = []
    with mp.workdps(int(110 + math.log10(big))):
        R, W, H = mp.mpf(r), mp.mpf(weight), mp.mpf(h)
        for j in range(K):
            if only is not None and j not in only:
                out.append(None)
                continue
            lo = min(max(v[j], vlo), vhi)
            hi = min(max(v[j + 1], lo), vhi)
            me = we = mp.mpf(0)
            if hi > lo:
                lo_, hi_ = _mpf(lo), _mpf(hi)
                mm = _P(lo_, hi_)
                e = (mp.mpf(a) - mp.mpf(x[j])) * mm
                if G:
                    e += mp.mpf(G) * _P(lo_ - R, hi_ - R)
                if S:
                    e -= mp.mpf(S) * _P(lo_ + R, hi_ + R)
                me, we = W * mm, W * min(e / H, mm)
            out.append((me, we))
    return out


def kernel_cells(a, b, r, bm=0.0, z_lo=-math.inf, weight=1.0, x0=0.0, h=1.0, K=4):
    """(m, w, em, ew, v): the kernel's cells and its V-edges."""
    G, S, vlo, vhi = _orient(a, b, bm, z_lo)
    m, w, em, ew = ACC.lognormal_cells(a, G, S, r, vlo, vhi, weight, x0, h, K)
    x = x0 + h * np.arange(K + 1, dtype=float)
    return m, w, em, ew, ACC.lognormal_v(a, G, S, r, x)


def ratios(m, w, em, ew, exact):
    """Per cell (|m - exact| / em, |w - exact| / ew); inf where a bound is 0 below a nonzero difference, nan for
    NaN outputs."""
    out = []
    with mp.workdps(60):
        for j, ex_j in enumerate(exact):
            row = []
            for val, ex, err in ((m[j], ex_j[0], em[j]), (w[j], ex_j[1], ew[j])):
                if math.isnan(val) or math.isnan(err):
                    row.append(math.nan)
                    continue
                d = abs(mp.mpf(val) - ex)
                row.append((0.0 if d == 0 else math.inf) if err == 0 else float(d / err))
            out.append(row)
    return out


def _worst(rs):
    """(worst mass ratio, worst hat-weight ratio) over the cells; nan when any is nan."""
    return tuple(max((q[i] for q in rs), default=0.0) if not any(math.isnan(q[i]) for q in rs) else math.nan
                 for i in (0, 1))


def worst_cells(a, b, r, bm=0.0, z_lo=-math.inf, weight=1.0, x0=0.0, h=1.0, K=4):
    """max over the cells of |value - exact| / bound for (m, w); exact from mpmath on the kernel's V-edges
    (lo_j = clip(v(x_j), v_lo, v_hi), hi_j = clip(v(x_{j+1}), lo_j, v_hi)); the hat weight literally
    min(E[L - x_j; cell] / h, m). inf where a bound is 0 below a nonzero difference, nan for NaN outputs."""
    m, w, em, ew, v = kernel_cells(a, b, r, bm, z_lo, weight, x0, h, K)
    return _worst(ratios(m, w, em, ew, exact_cells(a, b, r, bm, z_lo, weight, x0, h, K, v)))


def _enclosed(wst):
    return all(q <= 1.0 for q in wst)  # (False for nan)


# --- 1. narrow cells whose exponential alone underflows while G or S is huge ------------------------------------
# Catches: P = G * exp(r v* - r^2/2) (product form) in the narrow branch: with G = 1e300, r = 40, v* = 1.5 the
# exponential is e^{-740} ~ 4e-322 (subnormal, 1% accurate) and the hat weight came out 2.7% off with ew ~ 1e-11
# relative (worst w ratio 6e9; v* = 1.0: exp = 0, ratio 4e12). Also a missing log-G term in rel_pm.
@pytest.mark.parametrize("v0", [1.0, 1.5, 2.0])
@pytest.mark.parametrize("kind", ["one+", "one-", "two"])
def test_narrow_cells_with_a_huge_coefficient_and_an_underflowing_exponential(kind, v0):
    """The exact cells (410-digit mpmath, ~0.07 s each) are stored per case with the kernel's V-edges they were
    computed on (tests/data/review_rev_cells/make_narrow_cells.py: exact_cells of this module); they are used when
    the kernel's edges are the stored ones (else computed live), and the cell of the largest ratio is recomputed
    live at v0 = 1.5 (one per kind) and must equal the store."""
    a, b, bm, r, x0, h = narrow_case(kind, v0)
    m, w, em, ew, v = kernel_cells(a, b, r, bm, x0=x0, h=h, K=4)
    st = NARROW.get(f"{kind} {v0!r}")
    if st is not None and [float.fromhex(e) for e in st["v"]] == [float(e) for e in v]:
        with mp.workdps(60):
            exact = [(mp.mpf(me), mp.mpf(we)) for me, we in st["cells"]]
        rs = ratios(m, w, em, ew, exact)
        if v0 == 1.5:
            j = max(range(4), key=lambda i: max(rs[i]))
            live = exact_cells(a, b, r, bm, -math.inf, 1.0, x0, h, 4, v, only={j})[j]
            with mp.workdps(60):
                assert all(abs(c - e) <= mp.mpf(10) ** -50 * abs(e) for c, e in zip(live, exact[j])), (j, live)
    else:
        rs = ratios(m, w, em, ew, exact_cells(a, b, r, bm, -math.inf, 1.0, x0, h, 4, v))
    wst = _worst(rs)
    assert _enclosed(wst), wst
    assert wst[1] > 1e-4  # the bound is tight enough to notice an error of its own size (not vacuous)


NARROW = json.loads((DATA / "narrow_cells.json").read_text())["cases"]


def narrow_case(kind, v0):
    """(a, b, bm, r, x0, h) of the narrow-cell test: D (|v*| + r + 1) ~ 0.21, narrow."""
    a, b, bm, v = {"one+": (0.0, 1e300, 0.0, v0), "one-": (0.0, 0.0, 1e300, -v0), "two": (0.0, 1e300, -1.0, v0)}[kind]
    r = 40.0
    x0, x1 = sorted((_L(a, b, r, bm, v), _L(a, b, r, bm, v + 0.005)))
    return a, b, bm, r, x0, x1 - x0


# --- 2. subnormal roundings --------------------------------------------------------------------------------------
# Catches: no absolute allowance for products that land subnormal. (a) r = 40, G = S = 1 narrow cells at v* = 2:
# L ~ 1e-313, the grid itself subnormal; P, P E, M E/(1 + E) are subnormal (w ratio 7e8 before). (b) weight
# 1e-300: m = weight * m' underflows (em = 0 with m off by ~2e-324; far-tail cells m = em = 0 below a positive
# exact mass).
@pytest.mark.parametrize("args", [
    dict(a=0.0, b=1.0, bm=-1.0, r=40.0, v0=2.0, dv=0.0046, weight=1.0),
    dict(a=0.0, b=1.0, bm=-1.0, r=40.0, v0=2.0, dv=0.0059, weight=1e300),
    dict(a=0.0, b=1e6, bm=-1e-6, r=3.0, v0=0.0, dv=1e-12, weight=1e-300),
    dict(a=1.0, b=-2.0, bm=1.5, r=2.0, v0=-36.0, dv=0.3, weight=1e-300),
    dict(a=-1.0, b=2.0, bm=-2.0 * (1 + 1e-15), r=0.5, v0=37.4, dv=1e-3, weight=1e-300),
])
def test_subnormal_roundings_are_charged(args):
    a, b, bm, r = args["a"], args["b"], args["bm"], args["r"]
    x0, x1 = sorted((_L(a, b, r, bm, args["v0"]), _L(a, b, r, bm, args["v0"] + args["dv"])))
    assert _enclosed(worst_cells(a, b, r, bm, weight=args["weight"], x0=x0, h=x1 - x0, K=3))


# Catches: a NaN hat weight and bound where a - x_j overflows (inf * 0 on an empty cell); now w = m, ew = inf.
def test_overflowing_location_gives_an_infinite_bound_not_nan():
    G, S, vlo, vhi = _orient(1e308, 1.0, 0.0, -math.inf)
    m, w, em, ew = ACC.lognormal_cells(1e308, G, S, 1.0, vlo, vhi, 1.0, -1e308, 1e307, 4)
    for arr in (m, w, em, ew):
        assert not np.any(np.isnan(arr))
    assert _enclosed(worst_cells(1e308, 1.0, 1.0, x0=-1e308, h=1e307, K=4))


# --- 3. adversarial laws and grids (all held before the fixes too; margins in the report) -------------------------
# Catches: any change of the cell definition (edges, clipping at the range ends/z_lo), of the narrow criterion, of
# the closed forms' signs/shifts, or a bound tightened below the true error (worst ratios 0.3 / 0.29).
CASES = [
    # r tiny, two terms with G ~ S (nearly linear), narrow around 0 and wide
    dict(a=0.0, b=1.0, bm=-1.0, r=0.01, x0=-1e-6, h=1e-7, K=6),
    dict(a=0.0, b=1.0 + 1e-13, bm=-1.0, r=0.01, x0=-1e-13, h=1e-14, K=6),
    dict(a=0.0, b=1.0, bm=-1.0, r=0.01, x0=-0.1, h=0.04, K=6),
    # r huge (kappa underflows), far-tail cells, huge weight
    dict(a=0.0, b=1.0, bm=-1.0, r=40.0, weight=1e300, x0=-1.0, h=0.3, K=8),
    dict(a=0.0, b=1.0, r=0.8, weight=1e243, v0=37.6, dv=1e-4, K=4),
    dict(a=0.0, b=1.0, r=0.8, weight=1e243, v0=38.3, dv=0.05, K=4),
    dict(a=-1.0, b=2.0, bm=-2.0, r=0.5, v0=-38.2, dv=1e-4, K=4),
    # one-term laws of both signs, grid straddling the range's end and the truncation point
    dict(a=0.5, b=1.0, r=1.0, x0=0.0, h=0.2, K=6),
    dict(a=2.0, b=-1.0, r=1.0, x0=1.0, h=0.3, K=6),
    dict(a=0.5, b=1.0, r=1.0, z_lo=0.3, x0=0.5, h=0.2, K=8),
    dict(a=0.5, b=1.0, r=1.0, z_lo=0.3, v0=0.29, dv=1e-4, K=6),
    dict(a=0.3, b=-1.0, bm=2.0, r=2.0, z_lo=-1.0, x0=-3.0, h=1.0, K=6),
    # narrow/wide boundary: D (|v*| + r + 1) = 0.99 / 1.01 times 1/4
    dict(a=1.0, b=-2.0, bm=1.5, r=2.0, v0=2.0, dv=0.25 / 5 * 0.99, K=4),
    dict(a=1.0, b=-2.0, bm=1.5, r=2.0, v0=2.0, dv=0.25 / 5 * 1.01, K=4),
    # h tiny relative to x0 (edges equal after rounding), K = 1, x0 at +-1e300
    dict(a=0.5, b=1.0, bm=-0.3, r=1.0, x0=0.7, h=0.7e-12, K=4),
    dict(a=0.5, b=1.0, bm=-0.3, r=1.0, x0=0.7, h=0.7e-17, K=3),
    dict(a=0.5, b=1.0, bm=-0.3, r=1.0, x0=0.7, h=0.1, K=1),
    dict(a=0.0, b=1e300, r=1.0, x0=1e300, h=1e288, K=3),
    dict(a=0.0, bm=1e300, b=0.0, r=1.0, x0=-1e300, h=1e288, K=3),
]


@pytest.mark.parametrize("case", CASES)
def test_adversarial_cells_enclose_the_exact_values(case):
    c = dict(case)
    a, b, bm, r = c.pop("a"), c.pop("b"), c.pop("bm", 0.0), c.pop("r")
    if "v0" in c:
        v0, dv = c.pop("v0"), c.pop("dv")
        x0, x1 = sorted((_L(a, b, r, bm, v0), _L(a, b, r, bm, v0 + dv)))
        c["x0"], c["h"] = x0, x1 - x0
    assert _enclosed(worst_cells(a, b, r, bm, **c))


# --- 4. stop_loss: [lo, up] contains E[(L - t)_+] at the EXACT root of L = t -----------------------------------
def _stop_loss_exact(a, G, S, r, vlo, vhi, weight, t):
    q = mp.mpf(t) - a
    if S == 0:
        vt = mp.ninf if q <= 0 else mp.log(q / G) / r + r / 2
    elif G == 0:
        vt = mp.inf if q >= 0 else -(mp.log(-q / S) / r) - r / 2
    else:
        k2 = G * S * mp.exp(-r * r)  # P M = k2, P - M = q: P from the cancellation-free root
        sq = mp.sqrt(q * q + 4 * k2)
        vt = mp.log(((q + sq) / 2 if q >= 0 else 2 * k2 / (sq - q)) / G) / r + r / 2
    lo, hi = max(vt, _mpf(vlo)), _mpf(vhi)
    if not hi > lo:
        return mp.mpf(0)
    e = (a - mp.mpf(t)) * _P(lo, hi)
    if G:
        e += G * _P(lo - r, hi - r)
    if S:
        e -= S * _P(lo + r, hi + r)
    return weight * e


# Catches: up = w (val + err)(1 + 1e-12) without an absolute subnormal term (tiny weight / tiny G: up = 0 below a
# positive exact value), lo = inf above an exact value beyond the double range, a stop-loss evaluated on the wrong
# side of v(t), sign errors of the shifted terms.
@pytest.mark.parametrize("law, vs", [
    ((0.0, 1e300, 40.0, 0.0, -math.inf, 1.0), [1.0, 1.5, 2.0, 3.0]),
    ((0.0, 1.0, 40.0, -1.0, -math.inf, 1.0), [1.0, 2.0, 2.5, -2.0]),
    ((0.0, 1.0, 0.01, -1.0, -math.inf, 1.0), [-3.0, 0.0, 1.0, 5.0]),
    ((1.0, -2.0, 1.5, 0.0, -math.inf, 1.0), [-5.0, 0.0, 2.0, 30.0]),
    ((0.3, -1.0, 2.0, 2.0, -1.0, 1.0), [-3.0, -0.5, 0.5, 3.0]),
    ((-1.0, 1.0, 2.0, 0.0, -math.inf, 1e243), [30.0, 37.0, 38.0, 39.0]),
    ((0.0, 1.0, 1.0, 0.0, -math.inf, 1e-300), [0.0, 10.0, 20.0, 35.0]),
    ((0.0, 1e-300, 1.0, 0.0, -math.inf, 1.0), [0.0, 10.0, 20.0, 35.0]),
    # the exact stop-loss beyond the double range (~1e340): lo was inf, now the largest double
    ((0.0, 1.0088412832875871e171, 4.134691173332211, -0.03582147959757716, -math.inf, 8.25e169), [0.0, 2.0]),
])
def test_stop_loss_brackets_the_exact_stop_loss(law, vs):
    a, b, r, bm, z_lo, wt = law
    G, S, vlo, vhi = _orient(a, b, bm, z_lo)
    ts = np.array([_L(a, b, r, bm, v) for v in vs])
    lo, up = ACC.lognormal_stop_loss(a, G, S, r, vlo, vhi, wt, ts)
    big = max(abs(a), float(np.max(np.abs(ts))), G, S, 1.0)
    with mp.workdps(int(110 + math.log10(big))):
        for i, t in enumerate(ts):
            ex = _stop_loss_exact(mp.mpf(a), mp.mpf(G), mp.mpf(S), mp.mpf(r), vlo, vhi, mp.mpf(wt), t)
            assert lo[i] <= ex <= up[i], (t, lo[i], float(ex), up[i])


# --- 5. ndtr in the far tail: the docs' proof bound (z^2 + 10) ulp, and the allowance (64 + 2 z^2) ulp ------------
# Catches: a different argument rounding (e.g. z / sqrt 2 computed with more roundings), erfc replaced by
# 1 - erf, the middle branch widened to |z| >= 1, the flush threshold moved (z in [-37.6, -37.4] sampled).
def test_ndtr_relative_error_within_the_proved_bound():
    rng = np.random.default_rng(16)
    zs = np.concatenate([rng.uniform(-37.5, -8.0, 120), rng.uniform(-8.0, -1.0, 60), rng.uniform(-1.5, 1.5, 30),
                         rng.uniform(-37.6, -37.4, 20), [-37.5, -1.0, -8.0]])
    worst_proof = worst_allow = 0.0
    with mp.workdps(40):
        for z in zs:
            p, err = ACC.lognormal_interval_prob1(-math.inf, float(z))
            ex = mp.ncdf(mp.mpf(z))
            assert abs(p - ex) <= err, (z, p, err)
            if z >= -37.5:
                rel = float(abs(p - ex) / ex) / EPS
                worst_proof = max(worst_proof, rel / (z * z + 10))
                worst_allow = max(worst_allow, rel / (64 + 2 * min(z * z, 1e4)))
    assert worst_proof <= 1.0 and worst_allow <= 0.5, (worst_proof, worst_allow)


# --- 6. libm against the assumption of §2.3 (8 ulp of the exact function of the argument) ---------------------------
def _libm():
    name = ctypes.util.find_library("m")
    if name is None or np.finfo(np.longdouble).nmant < 63:
        return None
    lib = ctypes.CDLL(name)
    for f in ("exp", "expm1", "log1p", "log", "asinh", "erf", "erfc"):
        getattr(lib, f).restype, getattr(lib, f).argtypes = ctypes.c_double, [ctypes.c_double]
        getattr(lib, f + "l").restype, getattr(lib, f + "l").argtypes = ctypes.c_longdouble, [ctypes.c_longdouble]
    return lib


# Catches: a libm (or a -ffast-math build) worse than the 8 ulp the proof assumes, in the kernel's argument
# ranges (measured on 2e6 arguments per range by tests/data/review_rev_cells/libm_scan.py: erfc <= 3.1 ulp, the
# others <= 1.1 ulp; the long-double reference is 2^11 times finer).
@pytest.mark.parametrize("f, lo, hi, logscale", [
    ("exp", -700.0, 700.0, False), ("expm1", 0.0, 0.7, False), ("log1p", -300.0, 0.0, True),
    ("log", -300.0, 300.0, True), ("asinh", -300.0, 0.0, True), ("erf", -0.7072, 0.7072, False),
    ("erfc", 0.7, 26.5, False),
])
def test_libm_within_the_assumed_8_ulp(f, lo, hi, logscale):
    lib = _libm()
    if lib is None:
        pytest.skip("no libm with an x87 long double")
    xs = np.random.default_rng(7).uniform(lo, hi, 3000)
    xs = 10.0 ** xs if logscale else xs
    fd, fl = getattr(lib, f), getattr(lib, f + "l")
    worst = 0.0
    for x in xs:
        t = fl(float(x))
        worst = max(worst, float(abs(np.longdouble(fd(float(x))) - np.longdouble(t)) / abs(np.longdouble(t))) / EPS)
    assert worst <= 8.0, (f, worst)


# --- 7. memo at shared edges and independence of the blocking --------------------------------------------------
# Catches: a memo that returns a stale term (e.g. keyed on the cell index, or a slot not overwritten), a memo
# shared across the three shifts, any dependence on k_start/K (a 4096 block or a running x += h).
def test_memo_and_blocking_give_the_same_floats_as_single_cells():
    a, G, S, r = 0.2, 1.3, 0.0, 2.5
    x0, h, K = -0.25, 2.0 ** -8, 5000  # x0 + h k exact: a one-cell grid at x0 + h k has the same edges
    full = ACC.lognormal_cells(a, G, S, r, -math.inf, math.inf, 3.0, x0, h, K)
    ks = sorted({0, 1, 2, 3, 40, 41, 4094, 4095, 4096, 4097, K - 1} | set(range(0, K, 97)))
    for k in ks:
        one = ACC.lognormal_cells(a, G, S, r, -math.inf, math.inf, 3.0, x0 + h * k, h, 1)
        for f, o in zip(full, one):
            assert f[k] == o[0] or (np.isnan(f[k]) and np.isnan(o[0])), k
    for Kp in (4095, 4096, 4097):
        part = ACC.lognormal_cells(a, G, S, r, -math.inf, math.inf, 3.0, x0, h, Kp)
        for f, p in zip(full, part):
            assert np.array_equal(f[:Kp], p)
    # the grid has wide cells (the memo's case) and narrow ones
    m = full[0]
    assert np.count_nonzero(m) > 1000


# --- 8. the accountant against main (the numpy cells) ---------------------------------------------------------
# Catches: any change of the certified values beyond the last bits (a bound or a cell computed differently).
# The brackets on main (tests/data/review_rev_cells/accountant_main_values.py run with main's build) and here
# must overlap and agree to 1e-11 relative (observed: 2e-14).
# (**) rows 5 and 6 (gauss 0.5, n = 100, eps = 1; gauss 1.0, n = 1000, eps = 0.5) re-pinned after the compiled cells'
# exact empty intervals (docs/accountant_tail.md §29): nested in the old bracket, moved <= 8.7e-9 relative
def main_rows() -> list:
    """The rows of accountant_main_values.json this file's accountant checks use (the BMG zero-out rows at n <= 100)."""
    rows = json.loads((DATA / "accountant_main_values.json").read_text())
    return [row for row in rows if row[0] != "bmg" or row[3] <= 100]


def cell_accountant(kind: str, p1: float, p2: float, n: int):
    """The accountant of one row: GaussianRandomizer(p1) or BMG(p1, p2), replace-one for kind "bmg_rep"."""
    if kind == "gauss":
        return sh.ShuffleAccountant(sh.GaussianRandomizer(p1, 1), n)
    return sh.ShuffleAccountant(sh.BlanketMixedGaussian(p1, p2, 1), n,
                                **({"adjacency": "replace"} if kind == "bmg_rep" else {}))


@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, pins session 33's floats on purpose; the new rules' values are checked against references in the session-34 files
def test_accountant_brackets_agree_with_main(monkeypatch):
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    for kind, p1, p2, n, eps, lo_m, up_m, _ in main_rows():
        lo, up = (float(x) for x in cell_accountant(kind, p1, p2, n).get_delta_bounds(eps))
        assert lo <= up_m and lo_m <= up, (kind, p1, p2, n, eps)
        assert abs(up - up_m) <= 1e-11 * up_m and abs(lo - lo_m) <= 1e-11 * max(lo_m, 1e-300) + 1e-300


# --- 9. the accountant at n = 2, 3 against an independent quadrature of D_up (§1.3) ----------------------------
# D_up = sum_m C(n, m) g^m (1 - g)^(n - m) E[(L_1 + ... + L_m)_+] / (n g), max over the two zero-out laws of the
# BMG (x vs bot: a = g - e^eps, b = 1 - g; bot vs x: a = 1 - e^eps g, b = -e^eps (1 - g); r = 1/sigma0). The
# innermost expectation is the closed-form stop-loss of one lognormal; the outer ones Gauss-Hermite (200 and 300
# nodes: their difference, times 10, is the quadrature's error allowance). Catches: a certified bracket that
# misses the true value (a wrong cell moment, a bound of the wrong sign), beyond the quadrature's accuracy.
def _sl_one_term(a, b, r, t):
    from scipy.special import ndtr
    c = (t - a) / b
    with np.errstate(divide="ignore", invalid="ignore"):
        zs = np.where(c > 0, (np.log(np.where(c > 0, c, 1.0)) + r * r / 2) / r, -np.inf)
    if b > 0:
        return (a - t) * ndtr(-zs) + b * ndtr(r - zs)
    return np.where(c > 0, (a - t) * ndtr(zs) + b * ndtr(zs - r), 0.0)


def _d_up(a, b, r, gam, n, N):
    x, w = np.polynomial.hermite_e.hermegauss(N)
    w = w / math.sqrt(2 * math.pi)
    L1 = a + b * np.exp(r * x - r * r / 2)
    E = {1: float(_sl_one_term(a, b, r, np.float64(0.0))), 2: float(np.sum(w * _sl_one_term(a, b, r, -L1)))}
    if n >= 3:
        E[3] = float(np.sum(w[:, None] * w[None, :] * _sl_one_term(a, b, r, -(L1[:, None] + L1[None, :]))))
    return sum(math.comb(n, m) * gam ** m * (1 - gam) ** (n - m) * E[m] for m in range(1, n + 1)) / (n * gam)


@pytest.mark.parametrize("gam, s0, n, eps", [(0.5, 1.0, 3, 0.5), (0.9, 2.0, 3, 0.2), (0.3, 1.5, 3, 0.1)])
def test_accountant_contains_a_quadrature_of_d_up_at_small_n(gam, s0, n, eps):
    r, ee = 1 / s0, math.exp(eps)
    laws = [(gam - ee, 1 - gam), (1 - ee * gam, -ee * (1 - gam))]
    refs = [max(_d_up(a, b, r, gam, n, N) for a, b in laws) for N in (200, 300)]
    tol = 10 * abs(refs[1] - refs[0]) + 1e-12
    lo, up = (float(x) for x in sh.ShuffleAccountant(sh.BlanketMixedGaussian(gam, s0, 1), n).get_delta_bounds(eps))
    assert lo - tol <= refs[1] <= up + tol, (lo, refs, up)
    assert tol < 0.5 * (up - lo)  # (the reference is sharper than the bracket: the test can fail)
