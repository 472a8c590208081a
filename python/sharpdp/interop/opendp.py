"""Shuffled rounds as OpenDP measurements (``pip install "sharpdp[interop]"``; OpenDP >= 0.16).

:func:`make_shuffled_round` turns a :class:`sharpdp.shuffle.ShuffleAccountant` (randomizer, n,
adjacency) into an OpenDP ``Measurement`` whose output measure is
``dp.smoothed_max_divergence()``: its privacy map returns an OpenDP ``PrivacyProfile``, so it
works with OpenDP's combinators (``dp.c.make_fix_delta``, then ``dp.c.make_composition`` with
OpenDP's own approximate-DP measurements; ``docs/embedding.md`` §2).

Neighbouring relation (OpenDP's "input metric"), n users, n fixed and public:

- ``adjacency="replace"``: ``dp.change_one_distance()`` (OpenDP's metric for sized data: d_in is
  the number of records changed; one user's record replaced by any other record of the domain).
- ``adjacency="zero_out"``: ``dp.user_distance("ZeroOutDistance()")``: d_in is the number of
  users whose record is replaced by the special element bot, whose report follows the blanket
  law (dp_accounting's ``REPLACE_SPECIAL``). OpenDP has no native metric for it, hence a user
  metric; such a round composes in OpenDP only with measurements on the same metric.

Privacy map: d_in = 0 gives the zero profile, d_in = 1 the round's certified profile
(``sharpdp.shuffle.privacy_profile``: the accountant's own certified upper value of delta(eps),
>= the true profile, ``docs/composition.md`` §1); d_in >= 2 is refused (the shuffle accountant
bounds one differing user; group privacy is not certified by it). OpenDP's
``PrivacyProfile.epsilon(delta)`` bisects on that curve and returns the end whose delta is <=
the target, so its epsilon is certified too (``docs/embedding.md`` §2). Each curve value is one
certified accountant evaluation (cached per epsilon): ``epsilon(delta)`` costs about 60 of them.

Errors: OpenDP reports an exception raised inside a user callback as an ``OpenDPException`` whose
message is an FFI trace with the callback's own message at its end. The measurement returned here checks
what it can before OpenDP runs (the number of records at ``invoke``, ``d_in`` at ``map`` and ``check``,
epsilon at the profile's ``delta``) and raises sharpdp's own exception (e.g. the sampler's ValueError for a
record outside its input domain) in place of OpenDP's wrapper: its type (a subclass of it that is also an
``OpenDPException``, which OpenDP documents for these calls, so either ``except`` catches it) and its message
alone. Inside OpenDP's combinators (``make_composition``, ``make_fix_delta``, chains) the call is
OpenDP's and the ``OpenDPException`` stays, sharpdp's message at the end of its trace.

OpenDP marks measurements built from user callbacks with its ``honest-but-curious`` feature:
OpenDP does not vouch for the map; sharpdp's certificate does. The feature (and ``contrib``) is
enabled only while the measurement and each profile are built, then restored; the caller's
OpenDP feature set is left as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
from collections.abc import Iterator
from typing import Any

try:
    import opendp.prelude as dp
    from opendp import mod as _odp_mod
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("sharpdp.interop.opendp needs OpenDP (>= 0.16): pip install 'sharpdp[interop]' "
                      "(in a clone: pip install '.[interop]') "
                      "(or pip install opendp)") from exc

import numpy as np

from sharpdp import _validation as V
from sharpdp._rng import as_generator, core_threads
from sharpdp.shuffle import FiniteRandomizer, PrivUnit, RandomizedResponse, ShuffleAccountant
from sharpdp.interop.curve_progress import SEARCH_VALUES, CurveProgress
from sharpdp.shuffle.profile import check_accountant, privacy_profile
from sharpdp.shuffle.round_cache import round_label

#: OpenDP features a user measurement and a user privacy profile need.
_FEATURES = ("contrib", "honest-but-curious")
#: The user metric of zero-out adjacency (see the module docstring).
ZERO_OUT_DISTANCE = "ZeroOutDistance()"
#: Tolerance on |x_i| = 1 of PrivUnit's input rows (the samplers' own check, ``PrivUnit.sample``).
UNIT_ROW_TOL = 1e-9


@dataclasses.dataclass(frozen=True)
class UnitRowsDescriptor:
    """Descriptor of the unit-row domain of :func:`default_input_domain` (PrivUnit, LatticePrivUnit): n x d
    float64 numpy arrays whose rows have L2 norm 1 within ``tol`` (the sphere S^{d-1})."""

    size: int
    num_columns: int
    tol: float = UNIT_ROW_TOL


def _unit_rows_domain(n: int, d: int):
    """OpenDP user domain of n x d float64 arrays with unit L2 rows (a pure, sound membership test)."""
    desc = UnitRowsDescriptor(n, d)

    def member(x: Any) -> bool:
        if not isinstance(x, np.ndarray) or x.dtype != np.float64 or x.shape != (n, d):
            return False
        return bool(np.all(np.isfinite(x)) and np.all(np.abs(np.linalg.norm(x, axis=1) - 1.0) <= desc.tol))

    with _features():
        return dp.user_domain(f"UnitRows(size={n}, num_columns={d}, p=2, tol={desc.tol:g}, T=f64)", member, desc)


def _check_domain(randomizer: Any, domain: Any, n: int) -> None:
    """ValueError naming ``input_domain`` when it is not a domain of datasets of n records (a single value, or
    a known size other than n), or when a PrivUnit-family randomizer (unit rows only) is given OpenDP's
    bounded-norm array domain: it admits rows inside the ball, which the sampler refuses only at invocation."""
    desc = getattr(domain, "descriptor", None)
    if isinstance(domain, _odp_mod.AtomDomain):
        raise ValueError(f"input_domain: {domain} is a domain of single values; the round takes a dataset of the "
                         f"n = {n} users' records (e.g. default_input_domain(accountant))")
    size = domain.size if isinstance(domain, _odp_mod.VectorDomain) else getattr(desc, "size", None)
    if size is not None and int(size) != n:
        raise ValueError(f"input_domain: {domain} holds datasets of {size} records, but the accountant is "
                         f"certified for n = {n} users")
    if isinstance(randomizer, PrivUnit) and type(desc).__name__ == "NPArray2Domain" \
            and getattr(desc, "norm", None) is not None:
        raise ValueError(f"input_domain: {type(randomizer).__name__} needs unit rows (|x_i| = 1 within "
                         f"{UNIT_ROW_TOL:g}, the sphere S^(d-1)), but {domain} admits rows of norm below "
                         f"{desc.norm} (its sampler would refuse them only when the measurement is invoked); pass "
                         "input_domain=None for the unit-row domain (default_input_domain)")


@contextlib.contextmanager
def _features() -> Iterator[None]:
    """Enable OpenDP's ``contrib`` and ``honest-but-curious`` for the block, then restore."""
    added = [f for f in _FEATURES if f not in _odp_mod.GLOBAL_FEATURES]
    dp.enable_features(*added)
    try:
        yield
    finally:
        if added:
            dp.disable_features(*added)


def input_metric(adjacency: str):
    """OpenDP metric of a round's neighbouring relation (module docstring).

    Parameters
    ----------
    adjacency : {"zero_out", "replace"}

    Returns
    -------
    opendp.mod.Metric
        ``dp.change_one_distance()`` for "replace", ``dp.user_distance("ZeroOutDistance()")`` for
        "zero_out".

    Raises
    ------
    ValueError
        Another adjacency.
    """
    if adjacency == "replace":
        return dp.change_one_distance()
    if adjacency == "zero_out":
        with _features():
            return dp.user_distance(ZERO_OUT_DISTANCE)
    raise ValueError(f"adjacency must be 'zero_out' or 'replace', got {adjacency!r}")


def default_input_domain(accountant: ShuffleAccountant):
    """OpenDP domain of the n users' records of a round.

    ``RandomizedResponse(k)``: ``dp.vector_domain(dp.atom_domain(bounds=(0, k - 1), T="i64"),
    size=n)`` (one category per user); ``FiniteRandomizer``: the same with its r row indices, or
    ``dp.vector_domain(dp.atom_domain(bounds=(x_1, x_r), T=float), size=n)`` for numeric inputs;
    ``PrivUnit`` and ``LatticePrivUnit`` of dimension d: an OpenDP user domain ``UnitRows(size=n,
    num_columns=d, p=2, tol=1e-09, T=f64)`` of n x d float64 numpy arrays whose rows have L2 norm 1
    within 1e-9 (the sphere S^{d-1}, the samplers' own input check; descriptor
    :class:`UnitRowsDescriptor`); any other randomizer of dimension d: OpenDP's numpy domain of n x d
    float arrays whose rows lie in the unit L2 ball,
    ``dp.numpy.array2_domain(norm=1.0, p=2, size=n, num_columns=d, nan=False, T=float)`` (the input domain of
    the blanket-mixed Gaussian and Gaussian randomizers; a GeneralRandomizer has its own input range:
    pass ``input_domain`` for it).

    Raises
    ------
    TypeError
        ``accountant`` is not a ShuffleAccountant.
    """
    check_accountant(accountant)
    randomizer, n = accountant.randomizer, int(accountant.n)
    if isinstance(randomizer, RandomizedResponse):
        return dp.vector_domain(dp.atom_domain(bounds=(0, int(randomizer.k) - 1), T="i64"), size=n)
    if isinstance(randomizer, FiniteRandomizer):
        if randomizer.inputs is None:  # categorical rows 0..r-1
            return dp.vector_domain(dp.atom_domain(bounds=(0, int(randomizer.n_inputs) - 1), T="i64"), size=n)
        lo, hi = float(randomizer.inputs[0]), float(randomizer.inputs[-1])
        return dp.vector_domain(dp.atom_domain(bounds=(lo, hi), T=float), size=n)
    if isinstance(randomizer, PrivUnit):  # (LatticePrivUnit too): unit rows, not the ball
        return _unit_rows_domain(n, int(randomizer.dim))
    with _features():
        return dp.numpy.array2_domain(norm=1.0, p=2, size=n, num_columns=int(randomizer.dim), nan=False,
                                         T=float)


class _RoundCurve:
    """delta(eps) of one round for OpenDP: certified upper values, eps >= 0 only (OpenDP's contract); each value
    counted on ``bars`` (one bar per search of OpenDP, docs/embedding.md §2.3, in place of a bar per value)."""

    def __init__(self, accountant: ShuffleAccountant, bars: CurveProgress):
        self.accountant, self.bars = accountant, bars

    def __call__(self, epsilon: float) -> float:
        eps = _check_epsilon(epsilon)
        return self.bars.value(eps, lambda: min(max(float(privacy_profile(self.accountant, eps, progress=False)),
                                                    0.0), 1.0))


def _zero_curve(epsilon: float) -> float:
    """The profile of d_in = 0 (the same dataset): delta(eps) = 0 for every eps >= 0."""
    _check_epsilon(epsilon)
    return 0.0


def _check_epsilon(epsilon: Any) -> float:
    """The profile's epsilon as a float, ValueError unless it is a number >= 0 (OpenDP's contract for a
    privacy profile: no negative or NaN epsilon)."""
    try:
        if isinstance(epsilon, (str, bytes, bool, np.bool_)):
            raise TypeError
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}") from None
    if math.isnan(eps):
        raise ValueError("epsilon is NaN; a privacy profile takes a number >= 0")
    if eps < 0.0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    return eps


def _check_d_in(d_in: Any) -> int:
    """d_in of the privacy map: an integer 0 or 1 (ValueError naming ``d_in`` otherwise)."""
    d = V.integer("d_in", d_in, lo=0)
    if d > 1:
        raise ValueError(f"d_in: the shuffle accountant bounds one differing user (d_in <= 1), got {d}; "
                         "group privacy is not certified by it")
    return d


class _Raised(threading.local):
    """The exception a callback of one measurement raised in this thread during a direct call (``active``);
    none is kept otherwise (a combinator's call: its traceback would hold the records)."""

    error: BaseException | None = None
    active: bool = False


#: (sharpdp's exception type) -> its subclass that is also an OpenDPException (:func:`_as_opendp`)
_DUAL: dict = {}


def _as_opendp(exc: Exception, variant: str) -> Exception:
    """``exc`` as an instance of a subclass of its own type that is also an ``OpenDPException`` (``variant``,
    ``message`` its text): ``except ValueError`` and OpenDP's documented ``except OpenDPException`` both catch
    it, and its text is sharpdp's message alone (same args, same traceback). ``exc`` itself where no such
    subclass can be made."""
    base = type(exc)
    if isinstance(exc, _odp_mod.OpenDPException):
        return exc
    cls = _DUAL.get(base)
    if cls is None:
        try:  # (named and printed as its base: "ValueError: <sharpdp's message>")
            cls = type(base.__name__, (base, _odp_mod.OpenDPException),
                       {"__str__": base.__str__, "__module__": base.__module__, "__qualname__": base.__qualname__})
        except TypeError:  # (a base whose layout OpenDPException cannot share)
            return exc
        _DUAL[base] = cls
    try:
        new = cls(*exc.args)
    except Exception:  # (a base with another constructor)
        return exc
    new.variant, new.message, new.raw_traceback = variant, str(exc), None
    return new.with_traceback(exc.__traceback__)


def _unwrapped(raised: _Raised, variant: str, check, call):
    """``check()`` then ``call()``, raising sharpdp's exceptions as themselves (:func:`_as_opendp`): one of
    ``check`` (before OpenDP runs), or one of our callbacks that OpenDP wrapped in an ``OpenDPException``
    (an FFI trace ending in sharpdp's message) during this ``call``."""
    try:
        check()
    except (TypeError, ValueError) as exc:
        raise _as_opendp(exc, variant) from None
    raised.error, raised.active = None, True
    try:
        return call()
    except _odp_mod.OpenDPException:
        inner, raised.error = raised.error, None
        if not isinstance(inner, Exception):
            raise
        raise _as_opendp(inner, variant) from None
    finally:
        raised.error, raised.active = None, False


def _nothing() -> None:
    """No check."""


class _RoundProfile(_odp_mod.PrivacyProfile):
    """OpenDP's PrivacyProfile of one round, with epsilon checked before OpenDP's call and the callback's
    own exception raised as itself (module docstring, Errors)."""

    _raised: _Raised
    _bars: CurveProgress | None  # (None: the zero profile of d_in = 0, nothing to compute)

    def _search(self, desc: str, total: int):
        return contextlib.nullcontext() if self._bars is None else self._bars.search(desc, total)

    def delta(self, epsilon):
        def call():
            with self._search(f"profile.delta(epsilon={float(epsilon):.4g})", 1):
                return super(_RoundProfile, self).delta(epsilon)
        return _unwrapped(self._raised, "FailedMap", lambda: _check_epsilon(epsilon), call)

    def epsilon(self, delta):
        def call():
            shown = f"{float(delta):.3g}" if isinstance(delta, (int, float)) else repr(delta)
            with self._search(f"profile.epsilon(delta={shown}) by OpenDP's bisection", SEARCH_VALUES):
                return super(_RoundProfile, self).epsilon(delta)
        return _unwrapped(self._raised, "FailedMap", _nothing, call)


class _RoundMeasurement(_odp_mod.Measurement):
    """The OpenDP Measurement of :func:`make_shuffled_round` (a ``Measurement``: every OpenDP combinator
    takes it) whose ``invoke``, ``map`` and ``check`` check their argument first and raise the callback's
    own exception as itself in place of OpenDP's wrapper (module docstring, Errors)."""

    _type_ = _odp_mod.Measurement._type_  # (the same ctypes pointer: OpenDP's functions take it unchanged)
    _n: int
    _raised: _Raised
    _bars: CurveProgress

    def _check_records(self, arg) -> None:
        if hasattr(arg, "__len__") and not isinstance(arg, (str, bytes)) and len(arg) != self._n:
            raise ValueError(f"x must hold the n = {self._n} users' records, got {len(arg)}")

    def invoke(self, arg):
        return _unwrapped(self._raised, "FailedFunction", lambda: self._check_records(arg),
                          lambda: super(_RoundMeasurement, self).invoke(arg))

    def __call__(self, arg):
        return self.invoke(arg)

    def map(self, d_in):
        out = _unwrapped(self._raised, "FailedMap", lambda: _check_d_in(d_in),
                         lambda: super(_RoundMeasurement, self).map(d_in))
        if type(out) is _odp_mod.PrivacyProfile:
            out.__class__ = _RoundProfile
            out._raised = self._raised
            out._bars = self._bars if int(d_in) == 1 else None
        return out

    def check(self, d_in, d_out, *, debug=False) -> bool:
        return _unwrapped(self._raised, "FailedMap", lambda: _check_d_in(d_in),
                          lambda: super(_RoundMeasurement, self).check(d_in, d_out, debug=debug))


def make_shuffled_round(accountant: ShuffleAccountant, input_domain=None, *, rng: Any = None,
                        threads: int | None = None, progress: bool | None = None):
    """An OpenDP measurement that releases one shuffled round, with its certified privacy profile.

    Parameters
    ----------
    accountant : ShuffleAccountant
        The round: randomizer, number of users n and adjacency ("zero_out" or "replace").
    input_domain : opendp.mod.Domain, optional
        Domain of the dataset of n records (default :func:`default_input_domain`; for PrivUnit's
        lattice release the unit-row domain). The function hands the records to
        ``randomizer.sample``, which refuses records outside its own input domain with a ValueError
        (OpenDP does not check membership at invocation); OpenDP's bounded-norm
        ``dp.numpy.array2_domain(norm=...)`` is refused at construction for a PrivUnit-family
        randomizer, which needs unit rows.
    rng : numpy.random.Generator, int, SeedSequence or None, keyword-only
        Source of the randomizer's noise and of the shuffle. None (default): fresh secure
        randomness for every invocation (``sharpdp._rng``). A seed gives a reproducible
        measurement for tests and research: it is NOT private unless the seed stays secret.
    threads : int or None, keyword-only
        Sampler threads (None: all cores); the output does not depend on it.
    progress : bool or None, keyword-only
        The progress bar on stderr of the profile's certified values (docs/embedding.md §2.3): one bar per search
        of OpenDP on the curve (``profile.epsilon(delta)``, ``dp.c.make_fix_delta``: about 60 values), named after
        the call (``make_shuffled_round: profile.epsilon(delta=1e-06) by OpenDP's bisection of ROUND``), and one per
        ``profile.delta(eps)``. None (default): shown after 1 s; True: at once; False: never.

    Returns
    -------
    opendp.mod.Measurement
        Input space ``(input_domain, input_metric(accountant.adjacency))``; output measure
        ``dp.smoothed_max_divergence()``; function: the n messages ``randomizer.sample(x)`` in a
        uniformly random order (the shuffler), a numpy array; privacy map: d_in = 0 -> the zero
        profile, d_in = 1 -> an OpenDP ``PrivacyProfile`` whose ``delta(eps)`` is the
        accountant's certified upper value ``privacy_profile(accountant, eps)`` and whose
        ``epsilon(delta)`` is OpenDP's bisection on it (certified: ``docs/embedding.md`` §2);
        d_in >= 2 raises. Called directly (``invoke`` or ``m(x)``, ``map``, ``check``, the
        profile's ``delta`` and ``epsilon``), it raises sharpdp's own exceptions (each also an
        ``OpenDPException``, its message sharpdp's alone: module docstring, Errors): a ValueError for
        x without n records (checked before OpenDP runs), for a record the sampler refuses, for a
        d_in that is not an integer 0 or 1 (checked first) or a profile epsilon < 0 or NaN
        (checked first); a TypeError for a non-numeric epsilon. Through OpenDP's combinators
        the same errors arrive as ``OpenDPException`` (module docstring, Errors).

    Raises
    ------
    TypeError
        ``accountant`` is not a ShuffleAccountant, ``input_domain`` not an OpenDP Domain; ``rng``,
        ``threads`` or ``progress`` of the wrong type.
    ValueError
        ``threads`` < 1, a bad seed; ``input_domain`` a domain of single values or of datasets of
        another size than ``accountant.n``, or a bounded-norm array domain (rows inside the
        ball) for a PrivUnit-family randomizer (unit rows only); a randomizer whose law is not certified (a GeneralRandomizer
        in estimate mode, without ``log_curvature``) or whose sampler is not floating-point safe
        (PrivUnit, GeneralRandomizer: docs/sampling.md §6; their safe routes are ``LatticePrivUnit``,
        docs/sampling.md §10.6, and ``GeneralRandomizer.discretize()``, §10).

    Notes
    -----
    Neighbouring relation: module docstring. Source of the certificate: the accountant of
    "Shuffling-Aware Optimization for Private Vector Mean Estimation" (Takagi et al.) as
    implemented by :class:`sharpdp.shuffle.ShuffleAccountant` (``docs/accountant.md``).
    """
    check_accountant(accountant)
    if not getattr(accountant.randomizer, "certified", True):
        raise ValueError("accountant: its randomizer's law is not certified (a GeneralRandomizer without "
                         "log_curvature: the accountant's values are estimates); an OpenDP measurement needs a "
                         "certified privacy profile")
    if not getattr(accountant.randomizer, "floating_point_safe", False):
        raise ValueError(f"accountant: the {type(accountant.randomizer).__name__} sampler is not floating-point "
                         "safe (its float messages are not what the accountant certifies, docs/sampling.md §6); "
                         "an OpenDP measurement releases the messages, so it needs a grid-exact sampler "
                         "(BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, FiniteRandomizer, e.g. "
                         "GeneralRandomizer.discretize(), LatticePrivUnit, e.g. LatticePrivUnit.from_privunit(...))")
    if input_domain is not None and not isinstance(input_domain, _odp_mod.Domain):
        raise TypeError(f"input_domain must be an OpenDP Domain (or None), got {type(input_domain).__name__}")
    if input_domain is not None:
        _check_domain(accountant.randomizer, input_domain, int(accountant.n))
    core_threads(threads)  # validate now, not at the first release
    seeded = None if rng is None else as_generator(rng)
    metric = input_metric(accountant.adjacency)
    domain = default_input_domain(accountant) if input_domain is None else input_domain
    randomizer, n = accountant.randomizer, int(accountant.n)
    raised = _Raised()
    bars = CurveProgress(round_label(accountant), progress)
    curve = _RoundCurve(accountant, bars)

    def recorded(fn):
        """``fn`` with its exception kept for :func:`_unwrapped` (OpenDP sees it raised as before)."""
        def call(arg):
            try:
                return fn(arg)
            except Exception as exc:
                if raised.active:
                    raised.error = exc
                raise
        return call

    def function(x: Any) -> np.ndarray:
        data = np.asarray(x)
        if data.ndim == 0 or data.shape[0] != n:
            raise ValueError(f"x must hold the n = {n} users' records, got {data.shape[0] if data.ndim else 0}")
        gen = as_generator(None) if seeded is None else seeded
        messages = randomizer.sample(data, rng=gen, threads=threads)
        return messages[gen.permutation(n)]  # the shuffler

    def privacy_map(d_in: Any):
        d = _check_d_in(d_in)
        with _features():  # (the raw object: OpenDP owns it)
            return dp.new_privacy_profile(recorded(curve if d == 1 else _zero_curve)).curve

    with _features():
        meas = dp.m.make_user_measurement(domain, metric, output_measure=dp.smoothed_max_divergence(),
                                          function=recorded(function), privacy_map=recorded(privacy_map))
    meas.__class__ = _RoundMeasurement  # (the same pointer; checks first, sharpdp's exceptions as themselves)
    meas._n, meas._raised, meas._bars = n, raised, bars
    return meas


# (UnitRowsDescriptor and UNIT_ROW_TOL describe default_input_domain's unit-row domain; not exported)
__all__ = ["ZERO_OUT_DISTANCE", "default_input_domain", "input_metric", "make_shuffled_round"]
