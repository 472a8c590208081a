"""The pmf errors' term of a weighted window sum, weighted by the weight's majorant instead of its maximum
(docs/accountant_tail.md §51).

A window sum of :mod:`.jump` is Σ_W w q for the computed circular pmf q of the nn-fold sum of the computed per-user
lattice pmf g; the exact lattice law b (|g - b| <= eta componentwise) differs from g, and the window sums of the two
nn-fold laws differ by at most max_W w · tv (docs/accountant.md §3.6.1). By the telescoping of Lemma 3.6.1 the
difference D = g^{*nn} - b^{*nn} is a sum of nn terms (g - b) * (nn - 1 other users), so where w is non-decreasing and
below C0 + c (x - s0)_+ on the window, Σ|D| w is at most C0 tv + c nn min_lam e^{-lam s0 - 1} / lam · E_eta(lam)
M(lam)^{nn - 1} plus the folded mass from below the window (2 max w P(S <= a)), E_eta and M the exponential moments
of eta and of the dominating pmf g + eta (:func:`tv_weighted`; §51.1). Where the weight's maximum sits far above the
sum's bulk (a window that reaches many standard deviations above it, e.g. the ramp (x + T0)_+ at n = 1e9) the
bound is orders of magnitude below max_W w · tv.
"""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.accountant.chernoff import Chernoff, capped_exp, log_mgf_up
from sharpdp.shuffle.accountant.fft import kernels
from sharpdp.shuffle.accountant.limits import U


class TvWeights:
    """:func:`tv_weighted`'s per-window state: the window's Chernoff object ``ch`` (of the computed pmf g with its
    error bounds ``eta``, nn summands), the window (nodes ``x``, its ``tv``, its lower edge ``a``) and the exponential
    terms already computed by s0 (the same floats for every weight sharing s0). ``F``: the window (a
    :class:`~.jump.FftWindow`: nodes x, tv, edges a, b)."""

    def __init__(self, ch: Chernoff, g: np.ndarray, eta: np.ndarray, F, nn: int) -> None:
        x = F.x
        self.ch, self.x, self.tv, self.nn = ch, x, F.tv, nn
        self.a, self.b = F.a, F.b
        # (the window's linear positions are the computed sum's own only where no user's pmf is folded: g fits the
        # window; g >= 0 makes the Chernoff object's upper pmf (g + eta)(1 + 4u) dominate |g| + eta)
        self.ok = g.size <= x.size and nn >= 2 and bool(np.all(g >= 0.0)) and bool(np.all(np.isfinite(eta)))
        self.eta_up = eta * (1 + 4 * U)
        self.margin = (eta.size + 8) * 4 * U
        self._exp: dict[float, float] = {}
        self._low: float | None = None

    def _slope_term(self, s0: float) -> float:
        """An upper bound on nn sum_{y'} eta(y') E_d[(y' + Z - s0)_+], Z the (nn - 1)-fold sum of the dominating
        pmf d = |g| + eta (an unnormalised measure): nn e^{-lam s0 - 1} / lam E_eta(lam) M_d(lam)^{nn - 1} at the
        lam the Chernoff steering picks (any lam > 0 is valid)."""
        v = self._exp.get(s0)
        if v is not None:
            return v
        ch, nn = self.ch, self.nn
        lam = ch.search_lam(s0, +1, True, float(nn - 1))
        if not (math.isfinite(lam) and lam > 0.0):
            v = math.inf
        else:
            le = log_mgf_up(self.eta_up, ch.k0, ch.h, lam, self.margin)
            lm = ch.log_mgf(lam)
            parts = (-lam * s0, -1.0, -math.log(lam), le, (nn - 1) * lm, math.log(nn))
            e = sum(parts)
            e += 1e-9 * sum(abs(p) for p in parts) + 1e-12  # (the exponent's own rounding, generously)
            v = capped_exp(e)
        self._exp[s0] = v
        return v

    def _below(self) -> float:
        """2 P_d(S <= a) >= the mass of |D| below the window (|D| <= |g|^{*nn} + b^{*nn} <= 2 d^{*nn})."""
        if self._low is None:
            lp = self.ch.log_p_below(self.a)
            self._low = 2.0 * capped_exp(lp) * (1 + 1e-9) if lp < -1e-3 else math.inf
        return self._low

    def bound(self, w: np.ndarray, c_w: float, s0: float) -> float:
        """An upper bound on |Σ_W w (fold(g^{*nn}) - fold(b^{*nn}))| for a weight w >= 0 on the window's nodes: the smaller of max_W w · tv (main's) and C0 tv + c_w (slope term at s0) + max_W w (mass
        below), with C0 = max_W (w - c_w (x - s0)_+) rounded up (docs/accountant_tail.md §51.1)."""
        x = self.x
        i0 = int(np.searchsorted(x, s0, side="right"))  # (nodes above s0: w - c_w (x - s0); below: w)
        # (the four maxima in one pass of the core where it has the kernel: numpy's values, docs/accountant_tail.md §80)
        f = getattr(kernels(), "window_maxima", None) if w.shape == x.shape else None
        mm = f(w, x, i0, s0, c_w) if f is not None else None
        w_max = float(w.max()) if mm is None else mm[0]
        old = w_max * self.tv
        if not (limits.TV_WEIGHTED and self.ok and c_w >= 0.0 and old > 0.0 and math.isfinite(old)):
            return old
        if (float(w.min()) if mm is None else mm[1]) < 0.0:
            return old  # (the bound needs w >= 0)
        below = self._below()
        if not below < 1.0:
            return old  # (a Chernoff value capped at 1 need not bound the unnormalised measure's mass)
        if mm is not None:
            C0 = mm[2] if i0 > 0 else 0.0
            if i0 < x.size:
                C0 = max(C0, mm[3])
        else:
            C0 = float(np.max(w[:i0])) if i0 > 0 else 0.0
            if i0 < x.size:
                r = np.subtract(x[i0:], s0)
                np.multiply(r, c_w, out=r)
                C0 = max(C0, float(np.max(np.subtract(w[i0:], r, out=r))))
        C0 = max(C0, 0.0)
        C0 += 4 * U * (w_max + c_w * max(abs(self.a - s0), abs(self.b - s0)))  # (the differences' rounding)
        new = (C0 * self.tv + c_w * self._slope_term(s0) + w_max * below) * (1 + 1e-9)
        return min(old, new)


def tv_weights(ch: Chernoff, g: np.ndarray, eta: np.ndarray, F, nn: int, term: float,
               scale: float) -> TvWeights | None:
    """A :class:`TvWeights` for a window whose largest main TV term ``term`` (max_W w · tv of its sums) exceeds
    TV_WEIGHTED_SHARE times ``scale`` (the caller's accuracy target), else None (main's terms there; a choice of
    which certified bound is computed)."""
    if not limits.TV_WEIGHTED or not term > limits.TV_WEIGHTED_SHARE * scale:
        return None
    return TvWeights(ch, g, eta, F, nn)


def tv_term(tw: TvWeights | None, w: np.ndarray, tv: float, c_w: float, s0: float) -> float:
    """``tw.bound(w, c_w, s0)``, or main's max(w) tv without ``tw``."""
    return float(w.max()) * tv if tw is None else tw.bound(w, c_w, s0)


def tv_out(tw: TvWeights | None, w: np.ndarray, tvp: float, p: float, c_w: float, s0: float) -> float:
    """The pmf errors' and the outside mass's term of a lower value: main's max(w) ``tvp`` (tvp = tv + p, as the
    caller sums them) without ``tw``, else ``tw.bound(w, c_w, s0)`` + max(w) p."""
    return float(w.max()) * tvp if tw is None else tw.bound(w, c_w, s0) + float(w.max()) * p


__all__ = ["TvWeights", "tv_out", "tv_term", "tv_weights"]
