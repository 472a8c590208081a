"""A floating-point-safe PrivUnit release on the integer lattice (docs/sampling.md §10.6).

The released message of user x is an integer vector z: an exact discrete-Gaussian vector
(Canonne, Kamath and Steinke, *The Discrete Gaussian for Differential Privacy*, Algorithms 1-3; the
proposal scale t = sigma)
conditioned, by exact rejection, on lying inside (cap coin 1) or outside (cap coin 0) the cone
K_x = {z : <z, x> >= theta |z| |x|}. Every step is decided with exact integers; the message is
within total variation ``sampler_tv`` of an x-independent post-processing of PrivUnit, so the
accountant's PrivUnit figures plus its sampler charge certify it (docs/sampling.md §10.6). The sampler runs
in the compiled core (``sharpdp._core.samplers.lattice_privunit_sample``); the pure-Python reference of the
same algorithm (``_lattice_reference``) draws the rows the core leaves undone.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import core_key, core_threads
from sharpdp.shuffle.adjacency import DEFAULT_ADJACENCY
from sharpdp.shuffle.randomizers._lattice_reference import ExactCone, reference_message
from sharpdp.shuffle.randomizers.privunit import PrivUnit

__all__ = ["LatticePrivUnit", "cone_layer_bound", "lattice_sampler_tv", "rounding_tv_bound"]

#: ChaCha20 stream of message i: this constant + i (domain separation from the block streams
#: 0, 1, ... and from the histogram's extension streams 2^63 + i).
LATTICE_STREAM = 0x4C41_5454_0000_0000
#: Default scale exponent: sigma = 2^96.
DEFAULT_SCALE_BITS = 96
#: Allowed scale exponents (small values are legal, with a large charge: tests and illustrations). Up to
#: 480 every number in eta's formula is a normal double, so its rounding errors are relative (the margins cover
#: them); the released integers themselves have no limit.
MIN_SCALE_BITS, MAX_SCALE_BITS = 0, 480
#: Largest dimension: the cap-mass cross-check (mpmath's hypergeometric series) and the sampler
#: (about 0.4 us per coordinate and proposal in the core, 8 us in the Python reference) are kept within reach.
MAX_DIM = 4096
#: Refusal threshold for the expected number of proposals per message, p / s + (1 - p) / q.
MAX_EXPECTED_PROPOSALS = 10_000.0
#: Refusal threshold for dim x max(1 / s, 1 / q): the expected discrete-Gaussian coordinates drawn for a
#: message whose cap coin is the rarer one (docs/sampling.md §10.6, "Running time").
MAX_WORST_COORDINATES = 100_000.0
#: Proposals per message after which a sampler WITHOUT a certificate (local_epsilon None: the lattice cone
#: masses are not bounded away from 0, e.g. a thin cone at a small scale holds no lattice point of moderate
#: norm) gives up and ``sample`` raises instead of running for ever: max(this, 1000 expected_proposals).
#: Certified parameters are never capped (their masses are at least s - e, q - e > 0).
UNCERTIFIED_MIN_PROPOSALS = 1_000_000
#: Relative margin on the cap masses s, q (double vs 40-digit mpmath, see lattice_sampler_tv).
_MASS_MARGIN = 1e-6


def rounding_tv_bound(scale_bits: int) -> float:
    """tau_1 >= TV(N_Z(0, sigma^2), law of round(N(0, sigma^2))), sigma = 2^scale_bits.

    docs/sampling.md §10.6, Step T: tau_1 = (0.97 / sigma^2 + 2.45 / sigma^3) / 48 + 1.5 exp(-2 pi^2 sigma^2)
    (Poisson summation for the discrete Gaussian's normaliser, a second-order Taylor bound for the
    rounded Gaussian's cell masses). Rounded up.

    Parameters
    ----------
    scale_bits : int
        In [0, 480].

    Returns
    -------
    float
        tau_1, dimensionless.

    Raises
    ------
    ValueError, TypeError
        ``scale_bits`` out of range or not an integer.
    """
    k = V.integer("scale_bits", scale_bits, lo=MIN_SCALE_BITS, hi=MAX_SCALE_BITS)
    inv = math.ldexp(1.0, -k)  # 1 / sigma; inv^3 >= 2^-1440 is subnormal or 0 only where it is 2^-480 of inv^2
    poisson = 1.5 * math.exp(-2.0 * math.pi**2 * 4.0**k) if k < 8 else 0.0  # exp(-2 pi^2 2^16) underflows anyway
    tau = (0.97 * inv * inv + 2.45 * inv * inv * inv) / 48.0 + poisson
    return math.nextafter(tau * (1.0 + 1e-12), math.inf)


def cone_layer_bound(dim: int, scale_bits: int) -> float:
    """L >= P(dist(G, boundary of K) <= sqrt(d) / 2), G ~ N(0, sigma^2 I_d), any cone K_x of PrivUnit.

    docs/sampling.md §10.6, Step L: L = sqrt(pi d / 8) / sigma, sigma = 2^scale_bits, for every theta in
    (-1, 1) and every direction x. Rounded up (may exceed 1 at tiny sigma: then it says nothing).

    Parameters
    ----------
    dim : int
        d >= 1.
    scale_bits : int
        In [0, 480].

    Returns
    -------
    float
        L, a probability bound.

    Raises
    ------
    ValueError, TypeError
        A parameter out of range or not an integer (named).
    """
    d = V.integer("dim", dim, lo=1)
    k = V.integer("scale_bits", scale_bits, lo=MIN_SCALE_BITS, hi=MAX_SCALE_BITS)
    return math.nextafter(math.sqrt(math.pi * d / 8.0) * math.ldexp(1.0, -k) * (1.0 + 1e-12), math.inf)


def lattice_sampler_tv(p: float, theta: float, dim: int, scale_bits: int = DEFAULT_SCALE_BITS) -> float:
    """Certified bound eta on TV(message law, post-processed PrivUnit) per message.

    eta = (2 d tau_1 + L) (p / s + (1 - p) / q), docs/sampling.md §10.6 (Steps T, L, C): tau_1 the
    per-coordinate TV of the discrete Gaussian to the rounded Gaussian (<= 0.0203 / sigma^2 +
    0.052 / sigma^3 + 1.5 exp(-2 pi^2 sigma^2)), L = sqrt(pi d / 8) / sigma the boundary layer,
    s = 1 - q the cap mass and q its complement, each taken as the smaller of the double value and
    a 40-digit mpmath value, times (1 - 1e-6). Rounded up, capped at 1.

    Parameters
    ----------
    p : float
        Cap probability in (0, 1).
    theta : float
        Cap threshold in (-1, 1).
    dim : int
        Dimension d in [1, 4096] (``MAX_DIM``).
    scale_bits : int
        sigma = 2^scale_bits, in [0, 480] (default 96).

    Returns
    -------
    float
        eta in (0, 1], dimensionless.

    Raises
    ------
    ValueError
        A parameter out of range or NaN (named), or the double cap mass disagreeing with mpmath's.
    """
    p = V.real("p", p, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    theta = V.real("theta", theta, lo=-1.0, hi=1.0, lo_open=True, hi_open=True)
    d = V.integer("dim", dim, lo=1, hi=MAX_DIM)
    k = V.integer("scale_bits", scale_bits, lo=MIN_SCALE_BITS, hi=MAX_SCALE_BITS)
    s_lo, q_lo = _cap_masses_lower(theta, d)
    eps = 2.0 * d * rounding_tv_bound(k) + cone_layer_bound(d, k)
    eta = eps * (p / s_lo + (1.0 - p) / q_lo) * (1.0 + 1e-9)
    return min(1.0, math.nextafter(eta, math.inf))


def _cap_masses_lower(theta: float, d: int) -> tuple[float, float]:
    """Lower bounds on (s, q) = (P(T >= theta), P(T < theta)), T = <U, v>, U uniform on S^{d-1}.

    (1 + T) / 2 ~ Beta(a, a), a = (d - 1) / 2, so q = I_{(1 + theta)/2}(a, a) and s = I_{(1 - theta)/2}(a, a)
    (regularised incomplete beta). The double values (scipy) are checked against mpmath at 40 digits
    (relative agreement 1e-9 required, else ValueError) and the smaller one, times 1 - 1e-6, is returned.
    """
    if d == 1:
        return 0.5, 0.5
    import mpmath
    from scipy.special import betainc

    a = 0.5 * (d - 1)
    out = []
    for sign in (-1, 1):
        f = float(betainc(a, a, 0.5 * (1.0 + sign * theta)))
        with mpmath.workdps(40):  # the argument (1 -+ theta) / 2 formed at 40 digits, not in double
            m = float(mpmath.betainc(mpmath.mpf(a), mpmath.mpf(a), 0, (1 + sign * mpmath.mpf(theta)) / 2,
                                     regularized=True))
        if not (f > 0.0 and m > 0.0) or abs(f - m) > 1e-9 * m:
            raise ValueError(f"theta={theta}: the cap mass in dim={d} is not resolved (double {f}, mpmath {m})")
        out.append(min(f, m) * (1.0 - _MASS_MARGIN))
    return out[0], out[1]


def _lattice_local_epsilon(p: float, theta: float, d: int, k: int) -> float | None:
    """Certified pure-LDP level of the lattice release (LatticePrivUnit.local_epsilon), exact rationals then
    one rounding up; None when the masses are not resolved (e >= min(s, q))."""
    s_lo, q_lo = (Fraction(v) for v in _cap_masses_lower(theta, d))
    e = Fraction(d * rounding_tv_bound(k)) + Fraction(cone_layer_bound(d, k))  # >= |nu(A_x) - s|, any x
    if e >= min(s_lo, q_lo):
        return None
    fp = Fraction(p)
    s_hi, q_hi = 1 - q_lo, 1 - s_lo  # s + q = 1
    top = max(fp / (s_lo - e), (1 - fp) / (q_lo - e))
    bottom = min(fp / (s_hi + e), (1 - fp) / (q_hi + e))
    eps = math.log1p(float(top / bottom - 1))  # top / bottom - 1 exact, one rounding, then log1p
    return math.nextafter(eps * (1.0 + 1e-12), math.inf)


def _signed_limbs_to_ints(limbs: np.ndarray, max_bits: int) -> np.ndarray:
    """Python ints (object array, shape limbs.shape[:-1]) of two's complement little-endian uint64 limbs
    whose magnitudes have at most ``max_bits`` bits (only the limbs those need are read)."""
    w = min(limbs.shape[-1], max(max_bits, 0) // 64 + 1)
    val = np.ascontiguousarray(limbs[..., w - 1]).view(np.int64).astype(object)
    for j in range(w - 2, -1, -1):
        val = (val << 64) | limbs[..., j].astype(object)
    return val


def _is_int(e: object) -> bool:
    return isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))


def _row_float(row) -> list[float]:
    """An integer row scaled by a power of two into the double range (direction kept to 2^-60)."""
    ints = [int(e) for e in row]
    shift = max(0, max(abs(e).bit_length() for e in ints) - 62)
    return [float(e >> shift) for e in ints]


class LatticePrivUnit(PrivUnit):
    """PrivUnit(p, theta) released as an integer vector, floating-point safe (docs/sampling.md §10.6).

    Same parameters, laws and accountant figures as :class:`PrivUnit` (a subclass); the sampler is
    exact on integers and within ``sampler_tv`` = eta of an x-independent post-processing of
    PrivUnit, so ``ShuffleAccountant`` adds its charge (1 + e^eps) n eta (docs/sampling.md §4).

    Mechanism, for an input x (a float64 unit row, read as its exact dyadic value; only its
    direction matters): an exact coin B ~ Bernoulli(p) (p's dyadic value); then z ~ nu, the
    product discrete Gaussian N_Z(0, sigma^2)^d with sigma = 2^scale_bits (Canonne, Kamath and
    Steinke, *The Discrete Gaussian for Differential Privacy*, Algorithm 3), redrawn until z lies
    in the cone K_x = {z : <z, x> >= theta |z| |x|} (B = 1) or outside it (B = 0), decided exactly
    with integers. The server normalises (:meth:`estimate`).

    Parameters
    ----------
    p, theta, dim
        As :class:`PrivUnit`, with dim <= 4096 (``MAX_DIM``).
    scale_bits : int, keyword-only
        sigma = 2^scale_bits, in [0, 480]; default 96 (eta about 8e-30 sqrt(d) (p/s + (1-p)/q)).
        Small values are legal and charged honestly (eta grows like 2^-scale_bits; tests use them).

    Attributes
    ----------
    sampler_tv : float
        eta, :func:`lattice_sampler_tv` (rounded up).
    expected_proposals : float
        p / s + (1 - p) / q, the expected number of discrete-Gaussian vectors drawn per message.

    Raises
    ------
    ValueError
        As :class:`PrivUnit`; dim > 4096; ``scale_bits`` out of range; ``expected_proposals`` above
        ``MAX_EXPECTED_PROPOSALS`` = 1e4, or dim x max(1 / s, 1 / q) above ``MAX_WORST_COORDINATES`` = 1e5
        (a cap or complement of small mass: the rejection sampler would take too long, and a message's
        running time would tell its cap coin; refused rather than left to hang, docs/sampling.md §10.6).
    TypeError
        ``scale_bits`` not an integer.

    Notes
    -----
    Speed: the compiled core's fixed-width exact integers (about 0.3 us per discrete-Gaussian coordinate
    on one core at scale_bits = 96), so a message costs about d x ``expected_proposals`` such draws;
    ``bench/bench_privunit_lattice.py``. Timing: a message's cost depends on its cap coin
    (docs/sampling.md §10.6, "Running time").
    """

    floating_point_safe = True
    """The release sampler is exact on integers, within eta of a post-processing (docs/sampling.md §10.6)."""

    def __init__(self, p: float, theta: float, dim: int, *, scale_bits: int = DEFAULT_SCALE_BITS) -> None:
        V.integer("dim", dim, lo=1, hi=MAX_DIM)
        super().__init__(p, theta, dim)
        self.scale_bits = V.integer("scale_bits", scale_bits, lo=MIN_SCALE_BITS, hi=MAX_SCALE_BITS)
        self.expected_proposals = self.p / self._s + (1.0 - self.p) / self.q
        if self.expected_proposals > MAX_EXPECTED_PROPOSALS:
            raise ValueError(f"theta={self.theta}, p={self.p}: {self.expected_proposals:.3g} expected proposals "
                             f"per message exceed {MAX_EXPECTED_PROPOSALS:g} (cap mass {self._s:.3g})")
        worst = self.dim * max(1.0 / self._s, 1.0 / self.q)
        if worst > MAX_WORST_COORDINATES:
            raise ValueError(f"theta={self.theta}, dim={self.dim}: dim x max(1/s, 1/q) = {worst:.3g} expected proposals "
                             f"(coordinates) for the rarer cap coin exceed {MAX_WORST_COORDINATES:g} (cap mass "
                             f"{self._s:.3g})")
        self._eta = lattice_sampler_tv(self.p, self.theta, self.dim, self.scale_bits)
        self._sigma = 1 << self.scale_bits
        self._eps0 = _lattice_local_epsilon(self.p, self.theta, self.dim, self.scale_bits)
        self._max_proposals = 0 if self._eps0 is not None else \
            max(UNCERTIFIED_MIN_PROPOSALS, math.ceil(1000 * self.expected_proposals))

    @classmethod
    def from_privunit(cls, privunit: PrivUnit, *, scale_bits: int = DEFAULT_SCALE_BITS) -> LatticePrivUnit:
        """The floating-point-safe release of ``privunit`` (same p, theta, dim; same laws).

        Parameters
        ----------
        privunit : PrivUnit
            The randomizer whose figures the release keeps.
        scale_bits : int, keyword-only
            As the constructor.

        Returns
        -------
        LatticePrivUnit

        Raises
        ------
        TypeError
            ``privunit`` is not a :class:`PrivUnit`.
        ValueError
            As the constructor.
        """
        if not isinstance(privunit, PrivUnit):
            raise TypeError(f"privunit must be a PrivUnit, got {type(privunit).__name__}")
        return cls(privunit.p, privunit.theta, privunit.dim, scale_bits=scale_bits)

    @property
    def local_epsilon(self) -> float | None:
        """Certified pure-LDP level of the released lattice mechanism (not PrivUnit's eps0), or None.

        The release is not eps0-LDP: its density ratios use the lattice masses nu(A_x), not s, q (e.g.
        d = 2, theta just above cos(pi/4), sigma = 4, x = e1 vs -e1: delta(eps0) = 0.079 > 0).
        With e = d tau_1 + L >= |nu(A_x) - s| (docs/sampling.md §10.6, "Local epsilon"), every ratio is at most
        max(p / (s - e), (1 - p) / (q - e)) / min(p / (s + e), (1 - p) / (q + e)); its log, rounded up, is
        returned (PrivUnit's eps0 plus about 2 e / min(s, q)); None when e >= min(s, q). The accountant reports
        delta(eps) = 0 at eps >= this value (replace), and ``smallest_certified_delta`` uses it for the clones bound.
        """
        return self._eps0

    @property
    def sampler_tv(self) -> float:
        """eta >= TV(message law, post-processed PrivUnit), per message (docs/sampling.md §10.6)."""
        return self._eta

    def _params(self) -> dict:
        return dict(super()._params(), scale_bits=self.scale_bits)

    def lower_form(self):
        """Refused: PrivUnit's lower form bounds the continuous mechanism's delta, not this release's.

        Rounding to the lattice is a post-processing and can lower delta (at scale_bits = 0, dim 1 the
        release's delta(0.3) is 0 where PrivUnit's D_lo is 0.295). A valid lower value is
        :meth:`delta_lower_bound` (docs/sampling.md §10.6, "Lower values").

        Raises
        ------
        NotImplementedError
            Always (so ``ShuffleAccountant.get_delta_lower_form`` refuses this randomizer).
        """
        raise NotImplementedError("LatticePrivUnit has no lower form: PrivUnit's D_lo bounds the continuous "
                                  "mechanism's delta, not the lattice release's; use "
                                  "LatticePrivUnit.delta_lower_bound (docs/sampling.md §10.6)")

    def lower_form_laws(self, epsilon: float, adjacency: str = DEFAULT_ADJACENCY):
        """Refused, as :meth:`lower_form`."""
        return self.lower_form()

    def delta_lower_bound(self, privunit_lower, epsilon, n: int):
        """Certified lower bound on the shuffled lattice release's delta(eps): D_lo - 3 (1 + e^eps) n eta.

        D_lo is PrivUnit's certified lower-form value, ``privunit_lower = ShuffleAccountant(PrivUnit(p, theta,
        dim), n, adjacency).get_delta_lower_form(epsilon)`` (passed in: the randomizers sit below the
        accountant); the messages' classes (z in C_v, z in C_-v), read exactly, are within total variation
        3 eta per message of PrivUnit's classes, which are sufficient for the lower form's datasets
        (docs/sampling.md §10.6, "Lower values"). Rounded down, floored at 0.

        Parameters
        ----------
        privunit_lower : float or array_like of float
            D_lo(epsilon) of the continuous PrivUnit with this one's (p, theta, dim), same n and adjacency;
            in [0, 1], same shape as ``epsilon``.
        epsilon : float or array_like of float
            eps >= 0 (nats).
        n : int
            Number of users, >= 1.

        Returns
        -------
        float or numpy.ndarray of float64
            Same shape as ``epsilon``.

        Raises
        ------
        ValueError
            ``privunit_lower`` outside [0, 1], NaN or of another shape; ``epsilon`` < 0 or NaN; ``n`` < 1.
        """
        shape, nn = np.shape(epsilon), V.integer("n", n, lo=1)
        eps, lo = V.real_array("epsilon", epsilon, lo=0.0), V.real_array("privunit_lower", privunit_lower, lo=0, hi=1)
        if np.shape(privunit_lower) != shape:
            raise ValueError(f"privunit_lower must have epsilon's shape {shape}, got {np.shape(privunit_lower)}")
        with np.errstate(over="ignore"):
            charge = 3.0 * (1.0 + np.exp(eps)) * nn * self._eta * (1.0 + 1e-12)
        out = np.maximum(0.0, np.nextafter(lo - charge, -np.inf)).reshape(shape)
        return float(out) if out.ndim == 0 else out

    def in_cone(self, z, x) -> bool:
        """Exact test z in K_x = {z : <z, x> >= theta |z| |x|} (the sampler's own decision).

        Decided on integers: x's doubles read as exact dyadic rationals, theta's double likewise;
        sign of <z, x>, then <z, x>^2 against theta^2 |z|^2 |x|^2. z = 0 is inside.

        Parameters
        ----------
        z : sequence of int, length dim
            An integer vector (Python or numpy integers).
        x : array_like of float64, shape (dim,)
            Any finite nonzero vector (only its direction matters).

        Returns
        -------
        bool

        Raises
        ------
        ValueError
            ``z`` not dim integers; ``x`` of another shape, not finite or zero.
        """
        zs = list(np.asarray(z, dtype=object).ravel()) if np.ndim(z) == 1 else None
        if zs is None or len(zs) != self.dim or not all(_is_int(e) for e in zs):
            raise ValueError(f"z must be a sequence of {self.dim} integers")
        v = V.real_array("x", x, ndim=1, shape=(self.dim,))
        if not np.any(v):
            raise ValueError("x must be nonzero (only its direction is used)")
        return ExactCone(v, self.theta).contains([int(e) for e in zs])

    def sample(self, x, rng=None, *, threads: int | None = None) -> np.ndarray:  # type: ignore[override]
        """Release integer messages for unit rows ``x`` (floating-point safe).

        Message i is drawn from ChaCha20 stream ``LATTICE_STREAM + i`` of one key, so the output
        depends on (key, i, x_i) only: identical for any ``threads`` and any split of the rows.
        Expected cost ``expected_proposals`` x dim discrete-Gaussian draws per message.

        Parameters
        ----------
        x : array_like of float64, shape (n, dim)
            Unit rows (|x_i| = 1 within 1e-9), n >= 1; the mechanism uses their exact direction.
        rng : numpy.random.Generator, int, SeedSequence or None
            None (default): a release, key from OS entropy (CSPRNG). A seed or Generator:
            reproducible research mode, not private unless the seed is secret.
        threads : int or None, keyword-only
            Worker threads >= 1 (None: all cores) of the compiled sampler, which releases the GIL; the
            output never depends on them (one stream per message).

        Returns
        -------
        numpy.ndarray of object (Python int), shape (n, dim)
            The integer vectors z (entries of magnitude about 2^scale_bits); normalise with
            :meth:`estimate` or z / |z|.

        Raises
        ------
        ValueError
            ``x`` empty, of another shape, not finite or not unit rows; ``threads`` < 1; bad seed.
        TypeError
            ``x`` not real; ``threads`` or ``rng`` of another type.
        RuntimeError
            Only for parameters without a certificate (``local_epsilon`` None, small scale_bits): a message
            found no lattice vector on its side of the cone within max(10^6, 1000 ``expected_proposals``)
            proposals (docs/sampling.md §10.6, "Running time"); nothing is released.
        """
        v = V.real_array("x", x, ndim=2, shape=(None, self.dim))
        if np.any(np.abs(np.linalg.norm(v, axis=1) - 1.0) > 1e-9):
            raise ValueError("x must have unit-norm rows (PrivUnit's input domain is the sphere S^{d-1})")
        from sharpdp._core_loader import core

        key = core_key(rng)
        num, den = self.p.as_integer_ratio()
        limbs, row_bits = core.samplers.lattice_privunit_sample(
            v, num, den.bit_length() - 1, self.theta, self.scale_bits, key, LATTICE_STREAM, core_threads(threads),
            self.scale_bits // 64 + 2, self._max_proposals)
        out = _signed_limbs_to_ints(limbs, int(row_bits.max()))
        for i in np.flatnonzero(row_bits == -1):  # an intermediate beyond the core's fixed width: the reference
            z = reference_message(key, LATTICE_STREAM + int(i), ExactCone(v[i], self.theta), self.p, self._sigma,
                                  self.dim, self._max_proposals)
            if z is None:
                row_bits[i] = -2
            else:
                out[i, :] = z
        if np.any(row_bits == -2):
            raise RuntimeError(
                f"LatticePrivUnit(p={self.p}, theta={self.theta}, dim={self.dim}, scale_bits={self.scale_bits}) has no "
                f"certificate (local_epsilon is None) and a message found no lattice vector on its side of the cone "
                f"within {self._max_proposals} proposals: at this scale the cone's lattice mass is about 0; use a "
                f"larger scale_bits (docs/sampling.md §10.6, 'Running time'); nothing was released")
        return out

    def estimate(self, messages) -> np.ndarray:
        """Mean estimate (1 / m) mean(z_i / |z_i|), float64 shape (dim,) (post-processing).

        Bias: |E[z / |z|] - m x| <= 2 eta + sqrt(d) E[1 / |G|] (TV, and the rounding moves G ~ N(0,
        sigma^2 I) by at most sqrt(d) / 2, which turns its direction by at most sqrt(d) / |G|), with
        E[1 / |G|] = Gamma((d - 1) / 2) / (sqrt(2) Gamma(d / 2) sigma) for d >= 2: of order 1 / sigma,
        negligible. A zero vector (probability <= (2 pi sigma^2)^(-d/2) x expected_proposals) counts 0.

        Parameters
        ----------
        messages : array_like of int (Python int objects or numpy integers), shape (m, dim)
            Released vectors, m >= 1.

        Returns
        -------
        numpy.ndarray of float64, shape (dim,)

        Raises
        ------
        ValueError
            ``messages`` empty, of another shape, or with a non-integer entry.
        """
        try:
            arr = np.asarray(messages, dtype=object)
        except (TypeError, ValueError) as exc:  # ragged input
            raise ValueError("messages must be an integer array of shape (m, dim)") from exc
        if arr.ndim != 2 or arr.shape[1] != self.dim or arr.shape[0] == 0:
            raise ValueError(f"messages must have shape (m >= 1, {self.dim}), got {arr.shape}")
        if not all(_is_int(e) for e in arr.flat):
            raise ValueError("messages must contain integers only (the released lattice vectors)")
        y = np.array([_row_float(row) for row in arr], dtype=np.float64)
        norms = np.linalg.norm(y, axis=1)
        dirs = np.divide(y, norms[:, None], out=np.zeros_like(y), where=norms[:, None] > 0)
        return dirs.mean(axis=0) / self.m
