"""Certified composition of shuffled rounds (``docs/composition.md`` §4).

Each round contributes the discrete dominating pair of :func:`sharpdp.shuffle.profile.dominating_pair`
(built from its certified privacy profile, losses rounded up to the lattice Delta Z). Dominating
pairs compose (Zhu, Dong & Wang, "Optimal Accounting of Differential Privacy via Characteristic
Function", Theorem 10), so the composed mechanism's delta(eps) is at most the hockey-stick
divergence of the product pair:

    delta(eps) <= P(some loss = +inf) + E[(1 - e^{eps - S})_+ ; S finite],  S = sum of all losses,

S ~ the convolution of mu_j^{*n_j} (mu_j the finite part of round j's P, n_j its count). That
expectation is computed by the certified FFT engine of the single-round accountant (the kernels
``tilt`` and ``power`` of ``sharpdp._core.accountant``, with their error bounds): exponential tilt
by theta >= 0 with the tilted mean at eps (the weight e^{-theta s}(1 - e^{eps - s})_+ is then
bounded and FFT round-off is relative), spectra multiplied over the rounds, a window with
Chernoff-bounded wrap-around, and the round-off terms bounded as in
:mod:`sharpdp.shuffle.accountant` step F.
"""

from __future__ import annotations

import math
import numpy as np

from sharpdp import _validation as V
from sharpdp.shuffle.accountant.fft import Part, convolve, fold_rounding, kernels
from sharpdp.shuffle.accountant.limits import DFT_WORK, N_MAX
from sharpdp.shuffle.accountant.limits import U as _U
from sharpdp.shuffle.basic_composition import basic_epsilon, envelope, floor_point, smaller
from sharpdp.shuffle.composition_tails import RoundPart, PreparedWindow, lse, window_chernoff
from sharpdp.shuffle.export_step import composed_step
from sharpdp.shuffle.profile import check_accountant, check_interval, dominating_pair, doubling_epsilon

_MIN_XTOL = 1e-12  # get_epsilon's bisection: finer relative widths are below float resolution (no end)


def auto_interval(accountant, delta: float = 1e-10, points: int = 400) -> float:
    """A loss lattice step for one round: eps_d / points, eps_d the first eps of a doubling search from 1e-6 nats
    with certified delta(eps_d) <= delta (capped at the randomizer's local epsilon and at 60 nats). The default
    (1e-10, 400) is ComposedAccountant's default step before session 33, 1.25-2.5x coarser than the export step it
    uses now (``export_step.composed_step``, docs/composition.md §4.6). Only a resolution choice."""
    return doubling_epsilon(accountant, delta) / points


class ComposedAccountant:
    """Certified (eps, delta) of the adaptive composition of shuffled rounds.

    Parameters
    ----------
    parts : sequence of (ShuffleAccountant or ExactShuffleAccountant, int)
        Each round type and how many times it runs (count >= 1). An
        :class:`~sharpdp.shuffle.ExactShuffleAccountant` (shuffled binary RR, replace-one) enters
        through its certified upper values like any round (the contract checked by
        ``round_cache.check_accountant``): its pair dominates the mechanism itself, not its blanket. All rounds must use the same
        adjacency ("zero_out" or "replace"): a composition is over one neighbouring relation.
    value_discretization_interval : float or None, default None
        Lattice step Delta of the privacy loss (nats); every round's dominating pair is built on
        it (:func:`sharpdp.shuffle.profile.dominating_pair`, cached per round and process:
        ``docs/composition.md`` §2.3). None: the smallest of the round types' export steps (the
        default of ``dominating_pair`` and ``to_pld``: one pair per round serves all three, §4.6).
    rel_tol : float, default 1e-2
        Target relative size of the numerical error terms (window, round-off) against the value.
    **pair_options
        Passed to :func:`~sharpdp.shuffle.profile.dominating_pair` (``delta_floor``,
        ``max_evaluations``, ``rel_tol``, ``cover_upper``).

    Notes
    -----
    ``get_delta`` is a rigorous upper bound on the composed mechanism's delta(eps): the rounds'
    dominating pairs come from certified profile values (``docs/composition.md`` §2-§3) and the
    composition of their product pair is evaluated with every numerical error bounded
    (§4); for eps > 0 (+inf included) it is the smaller of that value and basic composition's (§4.3: far in the
    tails the pair's infinity mass and lattice can make it the looser one). The lower value of
    :meth:`get_delta_bounds` composes the pairs built in the same way
    from the accountants' certified LOWER values with the error terms subtracted: a reference
    that shows how much the construction costs, not a lower bound on the mechanism's delta.

    Building a pair costs a few hundred certified profile evaluations per round type (the
    accountant's own cost; cached); composing is one FFT per eps (milliseconds to a fraction of
    a second).

    Raises
    ------
    TypeError
        ``parts`` not a sequence of (ShuffleAccountant, int) pairs (names the bad entry).
    ValueError
        Empty ``parts``, a count < 1, mixed adjacencies, a discretisation interval outside
        [1e-12, 1] (names ``value_discretization_interval``).
    """

    def __init__(self, parts, value_discretization_interval: float | None = None, *, rel_tol: float = 1e-2,
                 **pair_options):

        if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
            raise TypeError(f"parts must be a sequence of (ShuffleAccountant, count) pairs, got {type(parts).__name__}")
        parts = list(parts)
        if not parts:
            raise ValueError("parts must not be empty")
        checked = []
        for i, entry in enumerate(parts):
            if not (isinstance(entry, (tuple, list)) and len(entry) == 2):
                raise TypeError(f"parts[{i}] must be a (ShuffleAccountant, count) pair, got {entry!r} (parts is a list of pairs: ComposedAccountant([(acc, 5)]))")  # noqa: E501
            acc, count = entry
            try:
                check_accountant(acc, f"parts[{i}][0]")
            except TypeError as exc:
                raise TypeError(f"{exc}; compose other mechanisms with "
                                f"sharpdp.interop.dp_accounting.ShufflePLDAccountant") from None
            checked.append((acc, V.integer(f"count (parts[{i}][1])", count, lo=1)))
        adj = {a.adjacency for a, _ in checked}
        if len(adj) > 1:
            raise ValueError(f"parts mixes adjacencies {sorted(adj)}: every round must use the same neighbouring "
                             f"relation")
        self.adjacency = adj.pop()
        self.parts = checked
        if value_discretization_interval is None:
            value_discretization_interval = composed_step((a for a, _ in checked), doubling_epsilon)
        self.value_discretization_interval = check_interval(value_discretization_interval)
        self.rel_tol = V.real("rel_tol", rel_tol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        self._pair_options = pair_options
        self._pairs: list | None = None
        self._lower_pairs: list | None = None
        self._parts_cache: dict = {}  # lower_pairs -> the rounds' RoundPart objects

    @property
    def rounds(self) -> int:
        """Total number of composed rounds."""
        return sum(c for _, c in self.parts)

    def pairs(self, lower: bool = False) -> list:
        """The rounds' dominating pairs (``lower=True``: the reference pairs from lower values).

        Raises
        ------
        TypeError
            ``lower`` is not a bool.
        """
        if not isinstance(lower, (bool, np.bool_)):
            raise TypeError(f"lower must be a bool, got {type(lower).__name__}")
        if lower:
            if self._lower_pairs is None:  # (reuses the cached values; its bar shows only if it still takes a while)
                self._lower_pairs = [dominating_pair(a, self.value_discretization_interval, lower=True,
                                                     **self._pair_options) for a, _ in self.parts]
            return self._lower_pairs
        if self._pairs is None:
            self._pairs = [dominating_pair(a, self.value_discretization_interval, **self._pair_options)
                           for a, _ in self.parts]
        return self._pairs

    # ------------------------------------------------------------------ the engine
    def _parts(self, lower_pairs: bool) -> list:
        """The rounds' :class:`RoundPart` objects (built once per kind of pair: they do not depend on eps)."""
        # (looked up in the instance dict: objects made without __init__, e.g. by copying or
        # ComposedAccountant.__new__ with pairs set by hand, get it here)
        cache = self.__dict__.setdefault("_parts_cache", {})
        if lower_pairs not in cache:
            cache[lower_pairs] = [RoundPart(p, c) for p, (_, c) in zip(self.pairs(lower_pairs), self.parts)]
        return cache[lower_pairs]

    def _bracket(self, eps: float, lower_pairs: bool = False):
        """(lower, upper) of the composed hockey-stick divergence of the product pair at eps."""
        prep = self._prepare(eps, lower_pairs)
        if not isinstance(prep, PreparedWindow):
            return prep  # (the infinity mass alone)
        return self._finish(eps, prep)

    def _tilt(self, eps: float, parts: list, h: float) -> float:
        """theta >= 0 with sum n_j m_j(theta) = eps (theta = 0 when the mean is already >= eps), capped
        at 40/h: safeguarded Newton (the derivative of the tilted mean is the tilted variance) within a
        bisection bracket, to 1e-10 relative in theta or 1e-12 in the mean. Any theta >= 0 gives the
        same exact identity (docs/accountant_atoms.md §4); this only sets the error terms' scale."""
        def moments(th):
            m = v = 0.0
            for p in parts:
                mj, vj = p.tilted_moments(th, h)
                m += p.count * mj
                v += p.count * vj
            return m, v

        cap = 40.0 / h  # past e^{-theta h} ~ e^{-40} per lattice step the tilt gains nothing
        m, v = moments(0.0)
        if m >= eps:
            return 0.0
        lo, hi, th = 0.0, math.inf, 0.0
        for _ in range(200):
            if m < eps:
                lo = th
            else:
                hi = th
            if abs(m - eps) <= 1e-12 * max(abs(eps), h) or (math.isfinite(hi) and hi - lo <= 1e-10 * hi):
                break
            nxt = th + (eps - m) / v if v > 0 else math.inf
            if not (lo < nxt < hi):
                nxt = 0.5 * (lo + hi) if math.isfinite(hi) else max(2.0 * lo, 1.0)
            if lo >= cap:
                return cap
            th = nxt
            m, v = moments(th)
        return min(th, cap)

    def _prepare(self, eps: float, lower_pairs: bool = False):
        """The eps-independent part of :meth:`_bracket` at the tilt of eps:
        the tilted parts, the window and its certified convolution (a :class:`PreparedWindow`), or the
        (lower, upper) of the infinity mass alone when no finite loss can exceed eps. The window is
        chosen for eps (its wrap-around at most 1e-3 rel_tol of the value there); :meth:`_finish`
        evaluates it at any eps' with every error term bounded (docs/composition.md §4)."""
        import scipy.fft as sfft

        C = kernels()
        h = self.value_discretization_interval
        parts = self._parts(lower_pairs)
        # P(some loss = +inf) = 1 - prod (1 - inf_j)^{n_j}
        s = math.fsum(c * math.log1p(-min(p.inf, 1.0)) if p.inf < 1 else -math.inf for p in parts for c in [p.count])
        p_inf_up = min(-math.expm1(s) * (1 + 8 * _U) + 1e-300 * (s != 0), 1.0)
        p_inf_lo = max(-math.expm1(s) * (1 - 8 * _U), 0.0)
        parts = [p for p in parts if np.any(p.g > 0)]
        if not parts:
            return p_inf_lo, p_inf_up
        kmin = sum(p.count * p.k0 for p in parts)
        kmax = sum(p.count * (p.k0 + p.g.size - 1) for p in parts)
        if eps >= kmax * h + 4 * _U * abs(kmax * h):
            return p_inf_lo, p_inf_up  # every finite composed loss is <= eps: weight 0
        theta = self._tilt(eps, parts, h)
        tilted = []
        log_scale = abs_scale = 0.0
        mu_t = var_t = 0.0
        for p in parts:
            gt, Lam, mu, var, tau, mass = C.tilt(p.g, np.zeros_like(p.g), p.k0, h, theta)
            tilted.append((p, gt, tau, mass))
            log_scale += p.count * Lam
            abs_scale += abs(p.count * Lam)
            mu_t += p.count * mu
            var_t += p.count * var
        sig = math.sqrt(max(var_t, h * h)) / h
        center = mu_t / h
        # weight e^{-theta x}(1 - e^{eps - x})_+ (x = s h) = e^{-theta eps} w(s) with
        # w(s) = e^{-theta (x - eps)}(1 - e^{eps - x})_+ <= supw <= 1; the factor e^{-theta eps} joins
        # the scale e^{sum n Lambda} in the log domain (sum n Lambda - theta eps <= 0 at the tilt:
        # it is the Chernoff exponent), so neither overflows nor underflows on its own
        if theta > 0:
            supw = (theta / (1 + theta)) ** theta / (1 + theta) * (1 + 1e-9)
        else:
            supw = 1.0
        full = kmax - kmin + 1
        c_sig = 12.0
        prep = None
        for _attempt in range(6):
            if full <= max(16, 2 * c_sig * sig + 4) or full <= 1 << 12:
                sa, N0 = kmin, full  # the whole support fits: no wrap-around at all
            else:
                sa = int(math.floor(center - c_sig * sig))
                sa = max(sa, kmin)
                N0 = int(math.ceil(center + c_sig * sig)) - sa + 1
                N0 = min(N0, kmax - sa + 1)
            N = sfft.next_fast_len(max(N0, 16), real=True)
            if N > N_MAX:
                raise RuntimeError(f"ComposedAccountant: FFT length {N} exceeds {N_MAX}; use a coarser "
                                   f"value_discretization_interval")
            # P(S >= a + N h): none beyond the support's top (no bound to compute then)
            lp_hi = -math.inf if sa + N > kmax else window_chernoff(tilted, h, (sa + N) * h, +1, sig * h)
            lp_lo = window_chernoff(tilted, h, sa * h, -1, sig * h) if sa > kmin else -math.inf  # P(S < a)
            # the tilted pmfs' spectra multiplied over the rounds: the one certified convolution
            # (accountant.fft); each round's folding sums are charged to its tau (docs/accountant.md §3.6.1)
            thr = 1e-4 * self.rel_tol * 1e-3 / math.sqrt(N)
            taus = [tau + fold_rounding(gt.size, N, mass) for p, gt, tau, mass in tilted]
            conv = convolve([Part(gt, p.count, p.k0, mass + t) for (p, gt, _, mass), t in zip(tilted, taus)],
                            N, thr, DFT_WORK)
            # values s = sa .. sa + N - 1; circular position of s is s mod N
            s_idx = np.arange(sa, sa + N)
            prep = PreparedWindow(theta=theta, supw=supw, tilted=tilted, taus=taus, log_scale=log_scale,
                             abs_scale=abs_scale, qv=conv.q[s_idx % N], err_q=conv.err_q, x=s_idx * h,
                             wrap=supw * (math.exp(lp_hi) + math.exp(lp_lo)), p_inf=(p_inf_lo, p_inf_up))
            E = float(np.sum(self._weights(eps, prep) * prep.qv))
            if prep.wrap <= 1e-3 * self.rel_tol * max(E, 1e-300) or (lp_hi == -math.inf and lp_lo == -math.inf):
                break
            c_sig *= 1.6
        return prep

    @staticmethod
    def _weights(eps: float, prep: PreparedWindow) -> np.ndarray:
        """w(s) = e^{-theta (x - eps)}(1 - e^{eps - x})_+ on the window's nodes x = s h."""
        x, theta = prep.x, prep.theta
        with np.errstate(over="ignore", under="ignore"):
            return np.where(x > eps, np.exp(-theta * (x - eps)) * -np.expm1(eps - x), 0.0)

    def _finish(self, eps: float, prep: PreparedWindow):
        """(lower, upper) at eps from a prepared window (:meth:`_prepare`, any tilt): the weights,
        their round-off, the window's wrap-around, the tilt's pmf errors and the scale."""
        theta, supw, qv, x = prep.theta, prep.supw, prep.qv, prep.x
        p_inf_lo, p_inf_up = prep.p_inf
        w = self._weights(eps, prep)
        E = float(np.sum(w * qv))
        Ea = float(np.sum(np.abs(w * qv)))
        fp = float(np.linalg.norm(w)) * prep.err_q + x.size * _U * Ea
        # the weights themselves: x = s h and the exponentials are rounded (a few ulp each);
        # |w~ - w| <= e^{-theta (x - eps)} 8u (1 + |x| + |eps|)(1 + theta (|x| + |eps|)) wherever the
        # true weight can be non-zero (x > eps up to the rounding of x). Both weights lie in [0, w~ + (s h - eps)_+]
        # (e^{-theta y}(1 - e^{-y}) <= y) and s h - eps <= (x - eps) + u |x|, which caps the bound
        # where theta is huge (eps at the edge of the support) or x <= eps (then w~ = 0)
        near = x > eps - 1e-9 * (1.0 + abs(eps))
        xn = x[near]
        with np.errstate(over="ignore", under="ignore"):
            ew = (np.exp(-theta * (xn - eps)) * 8 * _U * (1 + np.abs(xn) + abs(eps))
                  * (1 + theta * (np.abs(xn) + abs(eps))))
        ew = np.minimum(ew, w[near] + np.maximum(xn - eps, 0.0) * (1 + 4 * _U) + 2 * _U * np.abs(xn))
        fp += float(np.sum(ew * np.abs(qv[near])))
        wrap = prep.wrap
        # pmf errors of the tilt (tau: l1 distance of the computed tilted pmf to the exact one)
        log_tv = -math.inf
        lmass = 0.0
        for (p, gt, _, mass), tau in zip(prep.tilted, prep.taus):
            lmass += p.count * math.log(mass + tau)
        terms = [math.log(p.count * tau) - math.log(mass + tau)
                 for (p, gt, _, mass), tau in zip(prep.tilted, prep.taus) if tau > 0]
        if terms:
            log_tv = lmass + lse(np.array(terms))
        tv = supw * math.exp(log_tv) if log_tv < 700 else math.inf
        up_main = E + wrap + fp + tv
        lo_main = E - wrap - fp - tv
        # e^{log_scale_w}: the exponent's own rounding (the sum of the n_j Lambda_j, theta eps) is
        # charged as a margin 8u (J + 1)(sum |n_j Lambda_j| + |theta eps| + 1) on the exponent
        log_scale_w = prep.log_scale - theta * eps
        marg = 8 * _U * (len(prep.tilted) + 1) * (prep.abs_scale + abs(theta * eps) + 1.0)
        sc_up = math.exp(log_scale_w + marg) if log_scale_w + marg < 700 else math.inf
        sc_lo = math.exp(log_scale_w - marg) if log_scale_w - marg < 700 else math.inf
        if not math.isfinite(up_main) or (math.isinf(sc_up) and up_main >= 0):
            upper = 1.0  # no finite bound (never NaN, never below the truth)
        else:
            upper = min(p_inf_up + sc_up * up_main * (1 + 1e-9), 1.0)
        lower = max(p_inf_lo + sc_lo * lo_main * (1 - 1e-9), 0.0) if (lo_main > 0 and math.isfinite(sc_lo)) else p_inf_lo
        return lower, upper

    # ------------------------------------------------------------------ public API
    def _eps(self, epsilon):
        return V.epsilon_values("epsilon", epsilon)

    def get_delta_bounds(self, epsilon):
        """(lower, upper) of the composed delta at epsilon (nats, any sign; scalar or array).

        ``upper`` is the certified upper bound (see :meth:`get_delta`, also for eps < 0 and +-inf);
        ``lower`` the reference of the class Notes, at least 1 - e^eps; both are 1 at eps = -inf. Where basic
        composition gives the upper value (``docs/composition.md`` §4.3), ``lower`` is that route's reference:
        sum_j n_j times the rounds' lower values at eps / K; where the value is basic composition's certified at a
        smaller eps* (the envelope of §4.4: :meth:`delta_route`), its reference at eps*.
        Shapes follow ``epsilon``. Raises as :meth:`get_delta` (TypeError for a non-real epsilon, ValueError
        for NaN).
        """
        arr = self._eps(epsilon)
        flat = arr.ravel()
        lo, up = np.empty(flat.size), np.empty(flat.size)
        for j, e in enumerate(flat.tolist()):
            if e == -math.inf:
                lo[j], up[j] = 1.0, 1.0
                continue
            inf_lo, up[j] = self._bracket(1e300) if e == math.inf else (0.0, self._bracket(e)[1])
            basic = smaller(self.parts, e, up[j], lower=True)
            if took := basic is not None and basic[1] < up[j]:  # smaller: its own reference (§4.3); a tie: the pair
                lo[j], up[j] = basic
            env = self._envelope(e, up[j])  # (a value certified at a smaller eps*, §4.4)
            if env is not None:
                lo[j], up[j] = env[0], env[1]
            if took or env is not None:
                continue
            if e == math.inf:
                lo[j] = inf_lo
                continue
            trivial = math.nextafter(-math.expm1(e), 0.0) if e < 0 else 0.0  # H_t >= 1 - t (the whole space)
            lo[j] = min(max(self._bracket(e, lower_pairs=True)[0], trivial), up[j])
        return V.pair_like(arr, lo, up)

    def get_delta(self, epsilon):
        """Certified upper bound on the composed mechanism's delta(epsilon).

        Parameters
        ----------
        epsilon : float or array_like of float
            eps in nats, any sign (+-inf included), any shape.

        Returns
        -------
        float or numpy.ndarray of float64
            Upper value in [0, 1], never below the true delta of the composition (rounds'
            pairs: ``docs/composition.md`` §3; FFT error terms: §4); for eps > 0 (+inf included) the smaller of that
            value and basic composition's sum_j n_j ``get_delta_j(eps / K)`` (K = :attr:`rounds`, eps / K
            rounded down: §4.3), each certified. Every eps is a point of the
            composed privacy profile delta(eps) = sup H_{e^eps} over ordered neighbouring pairs
            (``docs/composition.md`` §1): for eps < 0 (t = e^eps < 1) the value is the product pair's
            divergence there, certified like the rest (the rounds' pairs dominate at every t >= 0,
            §2), and at least 1 - e^eps; eps = -inf gives 1 (H_0 = 1); eps = +inf the composed
            infinity mass 1 - prod (1 - P_j(+inf))^{n_j} rounded up (the limit), or basic composition's
            sum_j n_j ``get_delta_j(+inf)`` where smaller (§4.3: pure rounds give 0 there). A negative eps is
            what a composition of profiles needs (e.g. the mirrored samples of §1); a single round
            answers it by :func:`sharpdp.shuffle.privacy_profile`. Where a round's release-sampler charge makes
            at least half of the value (docs/sampling.md §4: it grows with eps), the value is the smaller of it
            and basic composition's smallest value found at an eps* <= eps (:meth:`smallest_certified_delta`):
            the released composition's delta is non-increasing in eps (§4.4), so it holds at eps.

        Raises
        ------
        TypeError
            epsilon None, a string, complex or boolean.
        ValueError
            NaN in epsilon.
        """
        arr = self._eps(epsilon)
        out = np.array([self._route_upper(e) for e in arr.ravel().tolist()])
        for j, e in enumerate(arr.ravel().tolist()):
            env = self._envelope(e, out[j])  # (certified at a smaller eps*: §4.4)
            out[j] = out[j] if env is None else env[1]
        return float(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)

    def _route_upper(self, e: float) -> float:
        """The smaller of the pair route's and basic composition's values at e itself (§4, §4.3), before §4.4's
        envelope: the value of this composition at e (the model placement's redo rule compares it with its estimate)."""
        basic = smaller(self.parts, e, up := self._pair_upper(e))  # (basic composition, where smaller: §4.3)
        return up if basic is None else basic[1]

    def _envelope(self, e: float, value: float) -> tuple[float, float, float] | None:
        """basic composition's floor (lower, upper, eps*) where it replaces ``value`` at ``e`` (§4.4), else None."""
        return envelope(self.parts, e, value, self._floor)

    def _floor(self) -> tuple[float, float, float] | None:  # (basic_composition.floor_point, memoised)
        memo = self.__dict__.setdefault("_parts_cache", {})
        return memo["floor"] if "floor" in memo else memo.setdefault("floor", floor_point(self.parts))

    def delta_route(self, epsilon: float) -> tuple[str, float]:
        """Which certified value :meth:`get_delta` reports at one epsilon, and where it is certified.

        Returns
        -------
        (route, at) : (str, float)
            ``"pair"`` (the dominating pair's composition, ``docs/composition.md`` §4) or ``"basic"`` (basic
            composition, §4.3), and the epsilon (nats) at which that value was computed: ``epsilon`` itself, or
            eps* < ``epsilon`` where the value is basic composition's smallest one found below it (§4.4; delta is
            non-increasing in eps, so it holds at ``epsilon``).
        Raises TypeError for an array epsilon, else as :meth:`get_delta`.
        """
        arr = self._eps(epsilon)
        if arr.ndim != 0:
            raise TypeError("delta_route: epsilon must be a scalar")
        e = float(arr)
        basic = smaller(self.parts, e, pair := self._pair_upper(e))
        env = self._envelope(e, pair if basic is None else basic[1])
        return ("basic", env[2]) if env is not None else ("pair" if basic is None else "basic", e)

    def smallest_certified_delta(self) -> tuple[float, float, str]:
        """The smallest certified composed delta found, where it is certified, and by which route.

        Returns
        -------
        (delta, epsilon, route) : (float, float, str)
            The smaller of the pair route's value beyond the composed support (its infinity mass, the limit of
            §4) and basic composition's smallest value of a golden-section search (rounds with a release-sampler
            charge only, ``basic_composition.floor_point``), with the epsilon (nats) at which it is certified and
            ``"pair"`` or ``"basic"``. The released composition's delta is non-increasing in eps, so it is a
            certified delta at every larger epsilon (``docs/composition.md`` §4.4); below it :meth:`get_epsilon`
            refuses. Memoised per instance (at most FLOOR_STEPS + 2 basic values and one pair value).
        """
        _, _, beyond, delta_beyond = self._edges()
        f = self._floor()
        if f is not None and f[1] < delta_beyond:
            return f[1], f[2], "basic"
        return delta_beyond, beyond, "pair"

    def _pair_upper(self, e: float) -> float:
        """The pair route's certified upper value at one eps (any sign, +-inf: §4)."""
        return self._bracket(e)[1] if math.isfinite(e) else (1.0 if e < 0 else self._bracket(1e300)[1])

    def get_epsilon(self, delta: float, *, xtol: float = 1e-3) -> float:
        """Smallest eps >= 0 (to a relative ``xtol``) with certified ``get_delta(eps) <= delta``.

        The smaller of two answers, each checked: the pair route's (below) and basic composition's
        (``basic_composition.basic_epsilon``, docs/composition.md §4.3: searched only where the basic value at
        the pair route's answer is <= delta, or where the pair route reaches no eps). The pair route: a
        model of the root first (:meth:`_model_root`: the window and convolution prepared at one
        tilt serve every eps, docs/accountant_atoms.md §4), whose bracket [a, b] of relative width
        0.9 xtol is then checked: ``get_delta(b) <= delta``, and at a a certified lower value of the
        same divergence above delta (so ``get_delta(a)`` > delta too), else ``get_delta(a)``;
        bisection on the certified upper value (non-increasing in eps) from what was checked when
        the model misses. Returns the safe end
        of the bracket (``get_delta`` <= delta there), 0.0 when the target holds at 0; the other end
        is 0 or a point where ``get_delta`` exceeds delta.

        Raises
        ------
        ValueError
            delta outside (0, 1), or not above the composed infinity mass and not reached by basic
            composition (no eps reaches it; the message names :meth:`smallest_certified_delta`);
            ``xtol`` outside [1e-12, 1).
        """
        delta = V.probability_open("delta", delta)
        xtol = V.real("xtol", xtol, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        if xtol < _MIN_XTOL:
            raise ValueError(f"xtol must be in [{_MIN_XTOL}, 1) (a relative width below float resolution never "
                             f"ends the bisection), got {xtol!r}")
        prep0, bracket0, beyond, delta_beyond = self._edges()
        # get_delta(0) exceeds delta when a lower value of the same divergence at 0 does
        if not bracket0[0] > delta and bracket0[1] <= delta:
            return 0.0
        found = self._pair_epsilon(delta, xtol, prep0, beyond) if delta_beyond <= delta else math.inf
        basic = basic_epsilon(self.parts, delta, xtol, found)  # (None unless it is the smaller: §4.3)
        if basic is not None and basic < found:
            return basic
        if math.isinf(found):
            v, at, route = self.smallest_certified_delta()
            if v <= delta:  # (basic composition's floor, §4.4: the smallest eps below it by bisection on V_basic)
                for r in (basic_epsilon(self.parts, delta, xtol, at) if route == "basic" else None, at):
                    if r is not None and self.get_delta(r) <= delta:
                        return r
            raise ValueError(f"delta: {delta!r} is below the smallest certified composed delta found, {v!r} at "
                             f"epsilon = {at!r} nats ({'basic composition' if route == 'basic' else 'the dominating pair'}"
                             f"; it holds at every larger epsilon: docs/composition.md §4.4): not above the "
                             f"composition's infinity mass {delta_beyond!r}, nor reached by basic composition "
                             f"(docs/composition.md §4.3); no epsilon reaches it")
        return found

    def _pair_epsilon(self, delta: float, xtol: float, prep0, beyond: float) -> float:
        """get_epsilon on the pair route's upper value alone (§4): the model root, its bracket, bisection."""
        lo, hi = 0.0, beyond
        model = self._model_root(delta, lo, hi, xtol, prep0) if isinstance(prep0, PreparedWindow) else None
        if model is not None:
            r, prep = model
            a, b = r * (1.0 - 0.5 * xtol), r * (1.0 + 0.4 * xtol)  # b - a = 0.9 xtol r <= xtol b
            if lo < a and b < hi:
                if self._pair_upper(b) <= delta:
                    hi = b
                    # the lower value is <= the divergence <= every certified upper value of the pair route
                    if self._finish(a, prep)[0] > delta or self._pair_upper(a) > delta:
                        lo = a
                else:
                    lo = b
        for _ in range(200):  # xtol >= 1e-12: about 40 halvings suffice
            if hi - lo <= xtol * hi:
                break
            mid = 0.5 * (lo + hi)
            if self._pair_upper(mid) <= delta:
                hi = mid
            else:
                lo = mid
        return hi

    def _edges(self) -> tuple:
        """get_epsilon's delta-independent start, memoised per instance (like the parts): the window
        prepared at eps = 0, its (lower, upper) value there (:meth:`_bracket` at 0, so the upper one
        is ``get_delta(0)``), a point beyond the top of the composed support and the pair route's value there."""
        memo = self.__dict__.setdefault("_parts_cache", {})
        if "edges" not in memo:
            prep0 = self._prepare(0.0)
            bracket0 = self._finish(0.0, prep0) if isinstance(prep0, PreparedWindow) else prep0
            h = self.value_discretization_interval
            # just beyond the top of the composed support only the infinity mass is left (the engine's
            # error terms of a window that still touches the support would be charged at the top itself)
            top = sum(part.count * part.kmax for part in self._parts(False)) * h
            beyond = max(top * (1.0 + 1e-12) + h, h)
            memo["edges"] = (prep0, bracket0, beyond, self._pair_upper(beyond))
        return memo["edges"]

    def _model_root(self, delta: float, lo: float, hi: float, xtol: float,
                    prep: PreparedWindow) -> tuple[float, PreparedWindow] | None:
        """A point near the smallest eps with upper value <= delta (a starting point only, not a bound):
        the root of the upper value of one prepared window (:meth:`_finish`, certified at every eps
        but sharp only near the eps it was prepared for) by bisection, to 1 % on [lo, hi]; then the
        window prepared again at the tilt of that root and its root found to 0.1 xtol within 5 %
        of it, until two roots agree to 2 % (at most 3 times). Returns the root and the window
        last prepared, None when no root is found."""
        def root(p: PreparedWindow, a: float, b: float, tol: float) -> float | None:
            if not self._finish(b, p)[1] <= delta:
                return None
            for _ in range(200):
                if b - a <= tol * b:
                    break
                mid = 0.5 * (a + b)
                if self._finish(mid, p)[1] <= delta:
                    b = mid
                else:
                    a = mid
            return b

        r = root(prep, lo, hi, 1e-2)
        for _ in range(3):
            if r is None:
                return None
            nxt = self._prepare(r)
            if not isinstance(nxt, PreparedWindow):
                return None
            prep = nxt
            a, b = max(lo, 0.95 * r), min(hi, 1.05 * r)
            if a > lo and not self._finish(a, prep)[1] > delta:
                a = lo  # (the root is not in the 5 % bracket: the whole one)
            r_new = root(prep, a, b, 0.1 * xtol) if b < hi else root(prep, a, hi, 0.1 * xtol)
            if r_new is None and b < hi:
                r_new = root(prep, a, hi, 0.1 * xtol)
            if r_new is not None and abs(r_new - r) <= 0.02 * r_new:
                return r_new, prep
            r = r_new
        return None


__all__ = ["ComposedAccountant", "auto_interval"]
