"""A local randomizer with finitely many outputs and an exact dyadic probability table.

The floating-point-safe route for randomizers without an exact sampler of their own
(docs/sampling.md §10): the table *is* the mechanism, sampled exactly with 64-bit integer
thresholds and certified exactly as sampled. Source of the accountant: *Shuffling-Aware
Optimization for Private Vector Mean Estimation*, Definition 2.1 (blanket decomposition) and
Definition 2.5 (shuffle indices), through :class:`~sharpdp.shuffle.randomizers.TableRandomizer`.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import core_key, core_threads
from sharpdp.shuffle import tables as TB
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY, check_adjacency
from sharpdp.shuffle.laws import FiniteLaw
from sharpdp.shuffle.laws import U as _U
from sharpdp.shuffle.randomizers._base import memo_laws
from sharpdp.shuffle.randomizers._table import TableRandomizer

__all__ = ["FiniteRandomizer", "affine_mean_map"]

#: 2^64: every row of the table sums to it exactly (probabilities in units of 2^-64).
ONE = 1 << 64
#: Granularity of :meth:`FiniteRandomizer.from_probabilities`: entries are multiples of 2^-53 (of
#: 2^11 units), so every probability is an exact double.
ROUND_BITS = 53
#: Fixed point in which doubles are summed exactly (every double is a multiple of 2^-1074).
_FIX = 1100

_MAX_OUTPUTS = 2**22


def _fix(x: float) -> int:
    """The double x >= 0 as the exact integer x 2^_FIX."""
    num, den = float(x).as_integer_ratio()
    return num * ((1 << _FIX) // den)


def _round_down(num: int, den: int) -> float:
    """The largest double <= num / den (num >= 0, den > 0 integers)."""
    f = num / den  # correctly rounded (CPython int true division)
    a, b = f.as_integer_ratio()
    return math.nextafter(f, 0.0) if a * den > num * b else f


def _round_up(num: int, den: int) -> float:
    """The smallest double >= num / den (num >= 0, den > 0 integers)."""
    f = num / den
    a, b = f.as_integer_ratio()
    return math.nextafter(f, math.inf) if a * den < num * b else f


def _indices(name: str, value, k: int) -> np.ndarray:
    """A non-empty 1-D int64 array of indices in [0, k) (integer-valued floats accepted; booleans,
    text and complex refused with TypeError, the rest with ValueError naming ``name``)."""
    raw = np.asarray(value)
    if raw.dtype == bool or raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of integer indices, got dtype {raw.dtype}")
    arr = V.real_array(name, raw, ndim=1, lo=0.0, hi=float(k - 1))
    if np.any(arr != np.floor(arr)):
        raise ValueError(f"{name} must hold integer indices in [0, {k}), found a non-integer value")
    return arr.astype(np.int64)


def affine_mean_map(points: np.ndarray, mu: np.ndarray, var: np.ndarray, rel_tol: float,
                    subject: str) -> tuple[float, float]:
    """(alpha, beta) of the least-squares line through (points, mu), checked affine and non-constant.

    The residual must be <= rel_tol (1 + max |mu| + max sqrt(var)) and |beta| above it; otherwise
    ValueError naming ``subject`` (the parameter that defines E[Y | x]). Fewer than two points:
    ValueError naming ``inputs``.
    """
    if points.size < 2:
        raise ValueError("inputs: need at least two distinct inputs to identify E[Y | x] = alpha + beta x")
    beta, alpha = np.polyfit(points, mu, 1)
    resid = float(np.max(np.abs(alpha + beta * points - mu)))
    tol = rel_tol * (1 + float(np.max(np.abs(mu))) + math.sqrt(float(var.max())))
    if resid > tol:
        raise ValueError(f"{subject}: E[Y | x] is not affine in x over the given inputs (residual {resid:.3g}); "
                         "no unbiased linear estimator")
    if not abs(beta) > tol:
        raise ValueError(f"{subject}: E[Y | x] does not depend on x (beta = 0); the mean is not estimable")
    return float(alpha), float(beta)


def _table_ints(table) -> list[list[int]]:
    """Validate an integer table (rows summing to 2^64) and return it as lists of Python ints."""
    arr = np.asarray(table, dtype=object) if not isinstance(table, np.ndarray) else table
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"table must be 2-dimensional (inputs, outputs) and non-empty, got shape {arr.shape}")
    if arr.dtype != object and arr.dtype.kind not in "iu":
        raise TypeError(f"table must hold integers (probabilities in units of 2^-64), got dtype {arr.dtype}; "
                        "use FiniteRandomizer.from_probabilities for a float table")
    if arr.shape[1] > _MAX_OUTPUTS:
        raise ValueError(f"table: at most {_MAX_OUTPUTS} outputs, got {arr.shape[1]}")
    rows = []
    for i, row in enumerate(arr.tolist()):
        for v in row:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"table must hold integers (units of 2^-64), got {type(v).__name__} in row {i}")
            if v < 0:
                raise ValueError(f"table entries must be >= 0, found {v} in row {i}")
        row = [int(v) for v in row]  # Python ints (numpy integer scalars would wrap in the sum)
        s = sum(row)
        if s != ONE:
            raise ValueError(f"table: row {i} sums to {s}, not 2**64 (each row is a probability law in units "
                             "of 2^-64)")
        rows.append(row)
    return rows


class FiniteRandomizer(TableRandomizer):
    """A local randomizer with finitely many outputs, given by an exact dyadic probability table.

    Input x_i (i < r) releases output y_j (j < m) with probability ``table[i, j] / 2**64``, integers
    summing to exactly 2^64 per row: that table *is* the mechanism. :meth:`sample` draws it exactly
    (64-bit integer thresholds against ChaCha20 words, ``sampler_tv`` = 0) and the accountant
    certifies it exactly as sampled (docs/sampling.md §10). Blanket (*Shuffling-Aware Optimization
    for Private Vector Mean Estimation*, Definition 2.1): gamma R_BG(y) = min_x P[x, y], the
    pointwise infimum; under zero-out the absent user ⊥ releases R_BG.

    Parameters
    ----------
    table : array_like of int, shape (r, m)
        Non-negative integers, each row summing to exactly 2**64 (Python ints or an integer numpy
        array; an object array or nested lists when an entry is 2**64). Every column must be
        either all zero (an output never released) or all positive (else the randomizer is not
        eps-LDP and the blanket does not dominate every R_x). r >= 1, 1 <= m <= 2**22.
    inputs : array_like of float, shape (r,), optional, keyword-only
        Numeric input values x_1 < ... < x_r (strictly increasing). Then :meth:`sample` accepts any
        x in [x_1, x_r] and rounds it stochastically onto the two neighbouring rows (unbiased, a
        64-bit integer threshold; Notes). None (default): the inputs are the categories 0..r-1, and
        :meth:`sample` accepts those integers only.
    outputs : array_like of float, shape (m,), optional, keyword-only
        Numeric output values (e.g. cell representatives); :meth:`sample` returns ``outputs[j]``.
        None (default): it returns the output index j (int64).

    Raises
    ------
    ValueError
        A row not summing to 2**64, a negative entry, a column with both zero and positive
        entries, a bad shape, ``inputs`` not strictly increasing or not finite, ``outputs`` not
        finite or of the wrong length.
    TypeError
        ``table`` not integer.

    Attributes
    ----------
    gamma : float
        Blanket mass G 2^-64 (G = sum_y min_x table[x, y]), rounded down to a double (a smaller
        blanket mass with the same R_BG is still a valid decomposition).
    blanket_probs : numpy.ndarray of float64, shape (m,)
        R_BG(y) = min_x table[x, y] / G, each rounded down to a double (docs/sampling.md §10.3).
    probs : numpy.ndarray of float64, shape (r, m)
        table / 2^64 rounded to nearest (exact when every entry has at most 53 significant bits,
        ``exact_doubles``; always so for :meth:`from_probabilities`).

    Notes
    -----
    *Accountant* (docs/sampling.md §10.3). The laws handed to the accountant are the atoms of
    l_eps(Y) = (R_a(Y) - e^eps R_b(Y)) / R_BG(Y), Y ~ R_BG, computed from the stored doubles, with
    (i) ``value_error`` twice :func:`sharpdp.shuffle.tables.table_pav_value_error` (covers the
    arithmetic and the rounding of the stored R_a, R_b, R_BG), (ii) atom masses summed exactly and
    rounded down, and (iii) the missing mass (1 minus their sum, rounded up) added to the largest
    atom, so the law dominates the exact one stochastically (mass only moves up). When every exact
    atom is <= 0 (an exact integer test) the law is clipped to 0 with no value error.

    *Input rounding.* For x in (x_i, x_{i+1}) the row is x_{i+1} with probability
    p = ceil(f 2^64) 2^-64, f = (x - x_i) / (x_{i+1} - x_i) computed in floating point: the output
    law is the mixture (1 - p) P[x_i] + p P[x_{i+1}], covered by the accountant's worst case over
    the rows (joint convexity, docs/sampling.md §2.3 Step 3) whatever p is; E[row value] =
    x + b with |b| <= (3.01 u f + 2^-64)(x_{i+1} - x_i), u = 2^-53 (the only bias of
    :meth:`estimate`).
    """

    floating_point_safe = True
    """The release sampler draws the certified table exactly (docs/sampling.md §10)."""

    @property
    def sampler_tv(self) -> float:
        """Total-variation distance of the sampled law to the certified one: 0.0 (exact sampler)."""
        return 0.0

    def __init__(self, table, *, inputs=None, outputs=None) -> None:
        N = _table_ints(table)
        r, m = len(N), len(N[0])
        self._N = N
        self.n_inputs, self.n_outputs = r, m
        self.dim = 1
        if inputs is None:
            self.inputs = None
        else:
            self.inputs = V.real_array("inputs", inputs, shape=(r,))
            if r > 1 and not np.all(self.inputs[1:] > self.inputs[:-1]):  # no np.diff: it may overflow
                raise ValueError("inputs must be strictly increasing (one numeric value per table row)")
        self.outputs = None if outputs is None else V.real_array("outputs", outputs, shape=(m,))
        cols = list(zip(*N))
        for j, col in enumerate(cols):
            if min(col) == 0 < max(col):
                raise ValueError(f"table: output {j} has probability 0 under input {col.index(0)} but not under "
                                 f"input {col.index(max(col))}; such a randomizer is not eps-LDP and its blanket "
                                 "does not dominate every row (give every input some mass there, or none)")
        self._M = [min(col) for col in cols]
        self._G = sum(self._M)
        self.exact_doubles = all(int(float(v)) == v for row in N for v in row)
        self.probs = np.array([[math.ldexp(float(v), -64) for v in row] for row in N])
        gd = _round_down(self._G, 1)
        self.gamma = math.ldexp(gd, -64)
        self.blanket_probs = np.array([_round_down(mj, self._G) for mj in self._M])
        # stored blanket's deficit 1 - sum R_BG, exactly, in units of 2^-_FIX
        self._bg_deficit = (1 << _FIX) - sum(_fix(b) for b in self.blanket_probs)
        # sampler tables: cum[i, j] = N[i, 0] + ... + N[i, j] for j < last[i] (< 2^64), 0 beyond
        self._last = np.array([max(j for j, v in enumerate(row) if v > 0) for row in N], dtype=np.int64)
        cum = np.zeros((r, m), dtype=np.uint64)
        for i, row in enumerate(N):
            acc = 0
            for j in range(int(self._last[i])):
                acc += row[j]
                cum[i, j] = acc
        self._cum = cum

    @classmethod
    def from_probabilities(cls, probs, *, inputs=None, outputs=None, bits: int = ROUND_BITS) -> "FiniteRandomizer":
        """Round a float probability table to an exact one (granularity 2^-bits) and build the randomizer.

        Each row p (non-negative, positive sum S; normalised exactly) becomes the integers
        k_j = floor(2^b p_j / S) (b = ``bits``) plus one unit for the 2^b - sum_j k_j entries with the
        largest remainders (ties: the lower index), computed in exact rational arithmetic; then every
        entry with p_j > 0 and k_j = 0 gets one unit, taken from the row's largest entry at that
        moment. The table is k 2^(64 - b) (units of 2^-64): every probability is a multiple of
        2^-b, within (1 + d_j) 2^-b of p_j / S (d_j the units entry j gave to bumps, 0 for all but
        the largest entries; total variation below (m / 2 + bumps) 2^-b), and zero exactly where
        p_j = 0. With b <= 53 (the default) every probability is an exact double
        (``exact_doubles``). **The rounded table is the mechanism** that is sampled and certified
        (not the float table); ``table`` returns it.

        Parameters
        ----------
        probs : array_like of float, shape (r, m)
            Finite, >= 0, every row with a positive sum (rows need not sum to 1: normalised).
        inputs, outputs : array_like of float, optional, keyword-only
            As in the class constructor.
        bits : int, keyword-only
            Granularity 2^-bits of the probabilities, 1 <= bits <= 64 (default 53).

        Returns
        -------
        FiniteRandomizer

        Raises
        ------
        ValueError
            ``probs`` not 2-D, negative or not finite, a row of zero sum, or more outputs of
            positive mass in a row than 2^bits units; ``bits`` outside [1, 64]; the constructor's checks (e.g. a column with
            both zero and positive entries).
        """
        P = V.real_array("probs", probs, ndim=2, lo=0.0)
        bits = V.integer("bits", bits, lo=1, hi=64)
        unit = 1 << bits
        table = []
        for i, row in enumerate(P):
            fx = [_fix(v) for v in row]
            S = sum(fx)
            if S == 0:
                raise ValueError(f"probs: row {i} has zero sum")
            k = [(v << bits) // S for v in fx]
            rem = [(v << bits) % S for v in fx]
            short = unit - sum(k)
            for j in sorted(range(len(k)), key=lambda j: (-rem[j], j))[:short]:
                k[j] += 1
            for j in range(len(k)):
                if fx[j] > 0 and k[j] == 0:
                    big = max(range(len(k)), key=lambda t: (k[t], -t))
                    if k[big] < 2:
                        raise ValueError(f"probs: row {i} has more outputs of positive mass than 2^{bits} units")
                    k[big] -= 1
                    k[j] = 1
            table.append([v << (64 - bits) for v in k])
        return cls(np.array(table, dtype=object), inputs=inputs, outputs=outputs)

    # ------------------------------------------------------------------ the table
    @property
    def table(self) -> np.ndarray:
        """The mechanism: integers (units of 2^-64), object array of Python ints, shape (r, m)."""
        return np.array(self._N, dtype=object)

    def _params(self) -> dict:
        return {"n_inputs": self.n_inputs, "n_outputs": self.n_outputs, "gamma": self.gamma}

    def _table(self):
        R = np.vstack([self.probs, self.blanket_probs[None, :]])  # last row: ⊥ (the blanket)
        w = np.ones(self.n_outputs)
        r = self.n_inputs
        pairs = {"zero_out": TB.table_pairs(r, "zero_out", bottom=r)}
        if r >= 2:
            pairs["replace"] = TB.table_pairs(r, "replace", bottom=None)
        return R, w, self.blanket_probs.copy(), pairs

    def _pairs(self, adjacency: str):
        check_adjacency(adjacency)
        pairs = self._table()[3]
        if adjacency not in pairs:
            raise ValueError("replace adjacency needs at least two inputs (table rows)")
        return pairs[adjacency]

    def _rows(self, epsilon: float, adjacency: str, lower: bool):
        self._pairs(adjacency)  # clear error for replace with one row
        return super()._rows(epsilon, adjacency, lower)

    def _exact_prob(self, row: int, j: int) -> Fraction:
        """P_row(y_j) exactly (row r: the blanket M_j / G)."""
        if row == self.n_inputs:
            return Fraction(self._M[j], self._G)
        return Fraction(self._N[row][j], ONE)

    def _exact_nonpositive(self, a: int, b: int, vals: np.ndarray, err: float, epsilon: float) -> bool:
        """Every exact atom of positive mass is <= 0: P_a(y) <= e_lo P_b(y) in exact arithmetic, with
        e_lo = fl(e^eps)(1 - 512 u) <= e^eps (as :func:`sharpdp.shuffle.tables.table_pav_law`);
        atoms computed at or below -err need no check."""
        e_lo = Fraction(math.exp(epsilon) * (1.0 - 512.0 * _U))
        pos = np.flatnonzero(self.blanket_probs > 0)
        near = pos[vals > -err]
        return all(self._exact_prob(a, int(j)) <= e_lo * self._exact_prob(b, int(j)) for j in near)

    def _dominating_law(self, a: int, b: int, epsilon: float) -> FiniteLaw:
        """Law of l_eps for the pair (a, b) that dominates the exact one (class Notes, docs/sampling.md §10.3)."""
        R, w, bg, _ = self._table()
        pos = np.flatnonzero(bg > 0)
        ee = math.exp(epsilon)
        vals = (R[a, pos] - ee * R[b, pos]) / bg[pos]
        err = 2.0 * TB.table_pav_value_error(R[a], R[b], bg, w, epsilon)
        clip = bool(vals.size and vals.max() + err > 0.0 and self._exact_nonpositive(a, b, vals, err, epsilon))
        if clip:
            vals, err = np.minimum(vals, 0.0), 0.0
        # merge equal atoms with exact sums, rounded down; the deficit goes to the top atom
        uv, inv = np.unique(vals, return_inverse=True)
        sums = [0] * uv.size
        for t, p in zip(inv.tolist(), bg[pos].tolist()):
            sums[t] += _fix(p)
        probs = np.array([_round_down(s, 1 << _FIX) for s in sums])
        deficit = self._bg_deficit + sum(sums) - sum(_fix(p) for p in probs)
        probs[-1] = _round_up(_fix(probs[-1]) + deficit, 1 << _FIX)
        return FiniteLaw(uv, probs, value_error=err)

    def _pav_atoms(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """Not available: the table machinery's bare atoms would drop the dominating laws' ``value_error``
        (use :meth:`privacy_amplification_laws`)."""
        raise NotImplementedError("FiniteRandomizer: use privacy_amplification_laws (its laws carry value_error)")

    def privacy_amplification_laws(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """Laws of the privacy-amplification variable for the accountant, one per distinct law.

        Parameters
        ----------
        epsilon : float
            0 <= eps <= 700 in nats (e^eps must be a finite double; the accountant evaluates
            eps > 60 at 60).
        adjacency : {"zero_out", "replace"}
            Neighbouring relation (replace needs r >= 2 inputs).

        Returns
        -------
        list of (float, FiniteLaw)
            ``(gamma, law)``: for every ordered neighbouring pair of rows (⊥ = the blanket under
            zero-out), a law of l_eps(Y), Y ~ R_BG, that dominates the exact one, with its
            ``value_error`` (class Notes); identical laws are listed once.

        Raises
        ------
        ValueError
            Bad ``epsilon`` (negative, NaN, above 700) or ``adjacency``; replace with a single input.
        """
        eps = V.real("epsilon", epsilon, lo=0.0, hi=700.0)
        return memo_laws(self, ("laws", eps, adjacency), lambda: self._laws(eps, adjacency))  # (the table is fixed)

    def _laws(self, eps: float, adjacency: str):
        out = []
        for a, b in self._pairs(adjacency):
            law = self._dominating_law(a, b, eps)
            if not any(np.array_equal(law.values, l2.values) and np.array_equal(law.probs, l2.probs)
                       and law.value_error == l2.value_error for _, l2 in out):
                out.append((self.gamma, law))
        return out

    # ------------------------------------------------------------------ indices
    def chi_lo_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_lo (*Shuffling-Aware Optimization for Private Vector Mean Estimation*, Definition 2.5) from
        the stored doubles (not a certified figure; the accountant does not use it for delta)."""
        R, w, bg, _ = self._table()
        return TB.table_chi_lo(R, w, bg, self.gamma, self._pairs(adjacency))

    def chi_up_for(self, adjacency: str = DEFAULT_ADJACENCY) -> float:
        """chi_up (Definition 2.5), sup over the pairs and the r inputs as references (stored doubles)."""
        R, w, _, _ = self._table()
        return TB.table_chi_up(R, w, self._pairs(adjacency), refs=range(self.n_inputs))

    @property
    def chi_lo(self) -> float:
        """Lower shuffle index, zero-out."""
        return self.chi_lo_for("zero_out")

    @property
    def chi_up(self) -> float:
        """Upper shuffle index, zero-out."""
        return self.chi_up_for("zero_out")

    @functools.cached_property
    def local_epsilon(self) -> float:
        """Pure-LDP level eps0 = max over outputs and input pairs of ln(P[x, y] / P[x', y]), nats,
        rounded up (mpmath at 120 bits, then two ulps up); 0 for a single input."""
        import mpmath

        best = Fraction(1)
        for col in zip(*self._N):
            if col[0] > 0:
                best = max(best, Fraction(max(col), min(col)))
        if best == 1:
            return 0.0
        ctx = mpmath.mp.clone()
        ctx.prec = 120
        v = float(ctx.log(ctx.mpf(best.numerator)) - ctx.log(ctx.mpf(best.denominator)))
        return math.nextafter(math.nextafter(v, math.inf), math.inf)

    # ------------------------------------------------------------------ sampling
    def _rows_of(self, x) -> tuple[np.ndarray, np.ndarray, tuple]:
        """(lo, up, shape): row lo_i, moved to lo_i + 1 iff a 64-bit word < up_i."""
        if self.inputs is None:
            cat = _indices("x", x, self.n_inputs)
            return cat, np.zeros(cat.size, dtype=np.uint64), cat.shape
        arr = V.real_array("x", x)
        if not (arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1)):
            raise ValueError(f"x must have shape (n,) or (n, 1), got {arr.shape}")
        shape, xs = arr.shape, arr.reshape(-1)
        lo_x, hi_x = float(self.inputs[0]), float(self.inputs[-1])
        if xs.min() < lo_x or xs.max() > hi_x:
            raise ValueError(f"x must lie in [{lo_x}, {hi_x}] (the inputs of the table), found values in "
                             f"[{xs.min()}, {xs.max()}]")
        i = np.clip(np.searchsorted(self.inputs, xs, side="right") - 1, 0, self.n_inputs - 1)
        up = np.zeros(xs.size, dtype=np.uint64)
        between = xs > self.inputs[i]
        if np.any(between):
            ib = i[between]
            xb, x0, x1 = xs[between], self.inputs[ib], self.inputs[ib + 1]
            with np.errstate(over="ignore"):
                span = x1 - x0
            wide = ~np.isfinite(span)  # x1 - x0 above the double range: halve first (exact there)
            f = np.empty(xb.size)
            f[~wide] = (xb[~wide] - x0[~wide]) / span[~wide]
            f[wide] = (0.5 * xb[wide] - 0.5 * x0[wide]) / (0.5 * x1[wide] - 0.5 * x0[wide])
            t = np.ceil(np.ldexp(f, 64))
            full = t >= 2.0**64  # f rounded to 1: the upper row
            i[np.flatnonzero(between)[full]] += 1
            t[full] = 0.0
            up[between] = t.astype(np.uint64)
        return i.astype(np.int64), up, shape

    def sample(self, x, rng=None, *, threads: int | None = None) -> np.ndarray:
        """Randomize every input exactly by the table (C++ kernel, exact inverse CDF on 64-bit thresholds).

        Per input two ChaCha20 words: the first rounds x onto a row (numeric ``inputs`` only; class
        Notes), the second picks the output j = min{j : v < N[row, 0] + ... + N[row, j]}, so
        P(j | row) = table[row, j] / 2^64 exactly and outputs of mass 0 never occur
        (docs/sampling.md §10.2). Floating-point safe: the messages are the given ``outputs`` (or
        indices), nothing computed from x.

        Parameters
        ----------
        x : array_like
            Categorical table (``inputs`` None): int categories of shape (n,) in [0, r). Numeric:
            floats of shape (n,) or (n, 1) in [inputs[0], inputs[-1]]. n >= 1.
        rng : numpy.random.Generator, int, SeedSequence or None
            Source of the 256-bit stream key (None: fresh OS entropy).
        threads : int or None, keyword-only
            Worker threads >= 1 (None: all cores); the output does not depend on it.

        Returns
        -------
        numpy.ndarray
            int64 output indices of shape (n,) when ``outputs`` is None, else float64
            ``outputs[j]`` of the shape of ``x``.

        Raises
        ------
        ValueError
            ``x`` empty, of the wrong shape, not finite or outside the inputs; ``threads`` < 1.
        TypeError
            ``x``, ``rng`` or ``threads`` of the wrong type.
        """
        lo, up, shape = self._rows_of(x)
        nthreads = core_threads(threads)
        from sharpdp._core_loader import core

        idx = core.samplers.finite_sample(lo, up, self._cum, self._last, core_key(rng), nthreads)
        if self.outputs is None:
            return idx
        return self.outputs[idx].reshape(shape)

    # ------------------------------------------------------------------ estimation
    def _input_values(self) -> np.ndarray:
        return np.arange(self.n_inputs, dtype=float) if self.inputs is None else self.inputs

    def _row_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """(E[Y | x_i], Var[Y | x_i]) per row (numeric outputs)."""
        if self.outputs is None:
            raise ValueError("outputs: the mean estimator needs numeric outputs (use estimate_frequencies)")
        P, y = self.probs, self.outputs
        mu = P @ y
        var = np.maximum(P @ y**2 - mu**2, 0.0)
        return mu, var

    def affine_map(self) -> tuple[float, float]:
        """(alpha, beta) with E[Y | x_i] = alpha + beta x_i at every row (numeric outputs).

        Checked to 1e-9 (1 + max |E[Y|x]| + max sd[Y|x]); with two rows it always holds, and the
        stochastic rounding of inputs between rows keeps E[Y | x] affine (a mixture of two rows).

        Returns
        -------
        (float, float)
            alpha (output units), beta (output units per input unit), beta != 0.

        Raises
        ------
        ValueError
            ``outputs`` None, a single input, E[Y | x_i] not affine in x_i, or beta = 0.
        """
        mu, var = self._row_moments()
        return affine_mean_map(self._input_values(), mu, var, 1e-9, "table")

    def estimate(self, messages) -> np.ndarray:
        """Unbiased estimate of the users' mean input (numeric outputs), or of the input frequencies.

        Numeric ``outputs``: (mean(messages) - alpha) / beta (:meth:`affine_map`), float64 shape (1,);
        its expectation is the mean input up to the rounding bias of the class Notes and the
        affinity residual accepted by :meth:`affine_map` (divided by beta), its variance
        at most ``mse_single / n``. Index outputs: :meth:`estimate_frequencies`.

        Raises
        ------
        ValueError
            ``messages`` empty, not finite or of the wrong shape; E[Y | x] not affine.
        """
        if self.outputs is None:
            return self.estimate_frequencies(messages)
        arr = V.real_array("messages", messages)
        if not (arr.ndim == 1 or (arr.ndim == 2 and arr.shape[1] == 1)):
            raise ValueError(f"messages must have shape (n,) or (n, 1), got {arr.shape}")
        alpha, beta = self.affine_map()
        return np.array([(arr.mean() - alpha) / beta])

    @functools.cached_property
    def _freq_map(self) -> np.ndarray:
        """A (r, m) with A P^T = I (the pseudo-inverse of P^T), or ValueError if rank P < r."""
        P = self.probs
        if np.linalg.matrix_rank(P) < self.n_inputs:
            raise ValueError("table: its rows are linearly dependent; the input frequencies are not estimable")
        return np.linalg.pinv(P.T)

    def estimate_frequencies(self, messages) -> np.ndarray:
        """Unbiased estimate of the input frequencies (rows), float64 shape (r,), from output indices.

        f_hat = A c / n with c the output counts and A = pinv(P^T), so E[f_hat] = A P^T f = f when
        the rows of P are linearly independent (then A P^T = I). Entries may be negative; they sum
        to 1 up to rounding. For a k-RR table this is k-RR's own estimator.

        Parameters
        ----------
        messages : array_like of int, shape (n,)
            Output indices in [0, m) (as :meth:`sample` returns when ``outputs`` is None).

        Raises
        ------
        ValueError
            Bad ``messages``; linearly dependent rows.
        """
        msg = _indices("messages", messages, self.n_outputs)
        counts = np.bincount(msg, minlength=self.n_outputs)
        return self._freq_map @ (counts / msg.size)

    @property
    def mse_single(self) -> float:
        """Worst-case single-user squared error of :meth:`estimate` (from the stored doubles).

        Numeric outputs: max over the mixtures (1 - p) P[x_i] + p P[x_{i+1}] (every input the
        sampler accepts) of Var[Y] / beta^2 (a concave quadratic in p per segment). Index outputs:
        max over the rows x of E ||A e_Y - e_x||^2 = sum_j P[x, j] ||A[:, j]||^2 - 1 (summed over
        the r frequencies).
        """
        if self.outputs is None:
            A = self._freq_map
            return float(np.max(self.probs @ np.sum(A**2, axis=0)) - 1.0)
        _, beta = self.affine_map()
        mu, var = self._row_moments()
        worst = float(var.max())
        if self.inputs is not None:
            for i in range(self.n_inputs - 1):
                d2 = (mu[i + 1] - mu[i]) ** 2
                if d2 > 0:
                    p = min(1.0, max(0.0, (var[i + 1] - var[i] + d2) / (2 * d2)))
                    worst = max(worst, (1 - p) * var[i] + p * var[i + 1] + p * (1 - p) * d2)
        return worst / beta**2
