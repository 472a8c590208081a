"""Independent LOWER references for the k-fold composition of a shuffled BMG round (review rev-rounds).

For a round, the accountant certifies a bracket [L(eps), U(eps)] of the blanket divergence D(eps)
(maximised over both orders), convex and non-increasing in t = e^eps, with D(t) for t < 1 given by the
swap identity D(t) = 1 - t + t D(1/t).  From a dense grid of brackets we build a curve g <= D at EVERY t
using only convexity (no chord through upper values):
  on [t_a, t_b] (consecutive samples), D(t) >= the chord of (t_{a-1}, t_a) extended to the right, with
  its slope lower-bounded by (L_a - U_{a-1}) / (t_a - t_{a-1}); and >= the chord of (t_b, t_{b+1})
  extended to the left (slope upper-bounded by (U_{b+1} - L_b) / (t_{b+1} - t_b)); D >= 0; D(0) = 1.
g is piecewise linear; its lower convex hull (vertices: samples and pairwise line intersections)
is a convex curve <= D with G(0) = 1, i.e. (Claim B of docs/composition.md §2, Doroshenko et al.
"Connect the Dots", Algorithm 1) the curve of a pair (P, Q) that D's own pair dominates.  The k-fold
composition delta_k(eps) = E_{P^k}[(1 - e^{eps - S})_+] of that pair, with every loss rounded DOWN to a
fine lattice (monotone: only lowers the value), is then a lower bound on the k-fold composition of
ANY pair whose curve is >= D, in particular of every certified dominating pair of the round
(Blackwell order is preserved by products).  So a certified composed upper value below it is wrong.

Run:  python tests/data/review_rev_rounds/make_reference.py   (writes reference.json next to it; ~minutes)
"""
import json
import pathlib
import sys
import time

import numpy as np
from scipy.signal import fftconvolve

HERE = pathlib.Path(__file__).parent


def lower_curve_points(eps, lo, up):
    """Vertices (t, g) of the convex lower curve from brackets at eps >= 0 (eps[0] == 0, increasing)."""
    eps, lo, up = map(np.asarray, (eps, lo, up))
    lo = np.maximum(lo, 0.0)
    # both sides: t = e^{eps} (value bracket [lo, up]) and t = e^{-eps} via the swap identity
    tp = np.exp(eps)
    tn = np.exp(-eps[1:])[::-1]
    lon = (1 - tn) + tn * lo[1:][::-1]
    upn = (1 - tn) + tn * up[1:][::-1]
    t = np.concatenate([[0.0], tn, tp])
    L = np.concatenate([[1.0], lon, lo])
    U = np.concatenate([[1.0], upn, np.minimum(up, 1.0)])
    U = np.minimum.accumulate(U)
    # lines: (slope, intercept) valid to the right of t_b (from segment a=b-1,b) and to the left of t_a (from a,a+1)
    cand_t = list(t)
    segs = []
    m = len(t)
    for a in range(m - 1):
        b = a + 1
        lines = []
        if a >= 1:  # segment (a-1, a) extended to the right: slope >= (L_a - U_{a-1}) / (t_a - t_{a-1})
            s = (L[a] - U[a - 1]) / (t[a] - t[a - 1])
            lines.append((s, L[a] - s * t[a]))
        if b + 1 < m:  # segment (b, b+1) extended to the left: slope <= (U_{b+1} - L_b) / (t_{b+1} - t_b)
            s = (U[b + 1] - L[b]) / (t[b + 1] - t[b])
            lines.append((s, L[b] - s * t[b]))
        lines.append((0.0, L[b]))  # non-increasing: D(t) >= D(t_b) >= L_b on [t_a, t_b]
        lines.append((0.0, 0.0))
        segs.append((t[a], t[b], lines))
        for i in range(len(lines)):
            for j in range(i + 1, len(lines)):
                (s1, c1), (s2, c2) = lines[i], lines[j]
                if s1 != s2:
                    x = (c2 - c1) / (s1 - s2)
                    if t[a] < x < t[b]:
                        cand_t.append(x)
    # beyond the last sample: the last segment extended to the right, and 0
    s_last = (L[-1] - U[-2]) / (t[-1] - t[-2])
    tail_lines = [(s_last, L[-1] - s_last * t[-1]), (0.0, 0.0)]
    if s_last < 0:
        cand_t.append(t[-1] - L[-1] / s_last)
    cand_t = np.unique(np.array(cand_t))

    def g(x):
        best = 0.0
        if x >= t[-1]:
            return max(s * x + c for s, c in tail_lines)
        for ta, tb, lines in segs:
            if ta <= x <= tb:
                best = max(best, max(s * x + c for s, c in lines))
        return best

    gv = np.array([g(x) for x in cand_t])
    gv[0] = 1.0  # t = 0: D = 1 exactly
    # lower convex hull (monotone chain)
    hull = []
    for p in zip(cand_t.tolist(), gv.tolist()):
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return np.array(hull)


def pair_from_curve(hull):
    """P-masses at losses log t_v (Claim B), infinity mass G_m (here the last hull value, 0 when clamped)."""
    tv, Gv = hull[:, 0], hull[:, 1]
    slopes = np.diff(Gv) / np.diff(tv)
    slopes = np.concatenate([slopes, [0.0]])
    p = tv[1:] * (slopes[1:] - slopes[:-1])
    p = np.maximum(p, 0.0)
    return np.log(tv[1:]), p, Gv[-1]


def composed_lower(losses, probs, inf_mass, k, eps_list, h=2e-5):
    """delta_k(eps) of the pair, losses rounded down to the lattice h Z (a lower value)."""
    idx = np.floor(losses / h).astype(np.int64)
    off = idx.min()
    pmf = np.zeros(idx.max() - off + 1)
    np.add.at(pmf, idx - off, probs)
    acc = pmf.copy()
    for _ in range(k - 1):
        acc = np.maximum(fftconvolve(acc, pmf), 0.0)
    S = (np.arange(acc.size) + k * off) * h
    out = []
    for e in eps_list:
        w = -np.expm1(np.minimum(e - S, 0.0))
        finite = float(np.sum(acc * np.where(S > e, w, 0.0)))
        out.append(1.0 - (1.0 - inf_mass) ** k + finite)
    return out


def reference(gamma, sigma0, dim, n, adj, k, eps_list, rel_tol, e_max, points, e_fine):
    from sharpdp.shuffle import ShuffleAccountant
    from sharpdp.shuffle.randomizers import BlanketMixedGaussian

    acc = ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, dim), n, adjacency=adj, rel_tol=rel_tol)
    # dense where delta matters (the extension lines lose ~ the curvature times the step squared), coarse after
    eps = np.unique(np.concatenate([np.linspace(0.0, e_fine, points), np.linspace(e_fine, e_max, 41)]))
    lo, up = acc.get_delta_bounds(eps)
    hull = lower_curve_points(eps, np.asarray(lo), np.asarray(up))
    losses, probs, inf_mass = pair_from_curve(hull)
    return composed_lower(losses, probs, inf_mass, k, eps_list), float(up[-1])


CASES = [
    # (gamma, sigma0, dim, n, adjacency, k, eps list, accountant rel_tol, e_max, dense points, dense up to)
    (0.6912200971923376, 1.982156093119624, 1, 1000, "zero_out", 5, [0.05], 2e-3, 0.5, 351, 0.07),
    (0.28558245659361947, 1.2580405451225258, 1, 200, "zero_out", 2, [0.5], 2e-3, 3.0, 501, 1.5),
    (0.5858787073824577, 1.1620139417283186, 2, 500, "replace", 3, [0.3], 2e-3, 1.6, 401, 0.8),
]

if __name__ == "__main__":
    out = []
    for c in CASES:
        t0 = time.time()
        vals, last_up = reference(*c)
        print(c[:7], vals, "last sample upper", last_up, f"{time.time() - t0:.0f}s", file=sys.stderr, flush=True)
        out.append({"gamma": c[0], "sigma0": c[1], "dim": c[2], "n": c[3], "adjacency": c[4], "k": c[5],
                    "eps": c[6], "lower_reference": vals, "last_sample_upper": last_up})
        (HERE / "reference.json").write_text(json.dumps(out, indent=1))
