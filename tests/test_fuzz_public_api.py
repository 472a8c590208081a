"""Table-driven fuzz test of every public function of sharpdp.shuffle, .histogram, .crlb, .conversions.

Each entry gives a valid call and the kind of each parameter; the test replaces one parameter at a
time by bad values of its kind (NaN, +-inf, 0, negatives, wrong types, complex, wrong shapes, empty)
and expects a ValueError or TypeError whose message names that parameter, within a per-call time
limit (no hangs). ``HUGE`` cases (valid but extreme inputs) must finish within the limit, with a
result or such an error. The public callables are enumerated from the packages (``__all__`` and
the public methods of exported classes), so a new public function without an entry fails
``test_every_public_callable_has_an_entry``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import re
import threading

import numpy as np
import pytest

import sharpdp.conversions as CV
import sharpdp.crlb as CR
import sharpdp.histogram as HI
import sharpdp.histogram.lower_bounds as LB
import sharpdp.shuffle as SH
import sharpdp.shuffle.randomizers as RZ
import sharpdp.shuffle.randomizers.privunit_lattice as PL

NAN, INF = math.nan, math.inf
#: Per-call limit (seconds; CPU seconds for the forked extreme-input calls). Bad input must be refused at
#: once; the limit only catches hangs.
TIMEOUT = 20.0

MODULES = ("sharpdp.shuffle", "sharpdp.histogram", "sharpdp.histogram.lower_bounds", "sharpdp.crlb",
           "sharpdp.conversions", "sharpdp.interop.dp_accounting", "sharpdp.interop.opendp")

# ---------------------------------------------------------------- bad values by kind
BAD = {
    "pos": [NAN, INF, -INF, 0.0, -1.0, "a", 1j, None],
    "pos_inf_ok": [NAN, -INF, 0.0, -1.0, "a", 1j, None],
    "nonneg": [NAN, -INF, -1.0, "a", 1j, None],
    "nonneg_finite": [NAN, INF, -INF, -1.0, "a", 1j, None],
    "prob_open": [NAN, INF, -INF, 0.0, 1.0, -0.5, 1.5, "a", 1j, None],
    "unit_co": [NAN, INF, 1.0, -0.5, 1.5, "a", 1j, None],  # [0, 1)
    "unit_cc": [NAN, INF, -0.5, 1.5, "a", 1j, None],  # [0, 1]
    "unit_oc": [NAN, INF, 0.0, -0.5, 1.5, "a", 1j, None],  # (0, 1]
    "open_pm1": [NAN, INF, -INF, 1.0, -1.0, 1.5, "a", 1j, None],  # (-1, 1)
    "real": [NAN, INF, -INF, "a", 1j, None],
    "real_inf_ok": [NAN, "a", 1j, None, True],  # privacy losses: +-inf are valid
    "int_pos": [0, -1, 1.5, NAN, "a", 1j, None, True],
    "int_nonneg": [-1, 1.5, NAN, "a", 1j, None, True],
    "rng": [2**70, -1, "a", 1.5, True, 1j],
    "threads": [-1, 1.5, "a", 1j],
    "choice": ["bogus", 1, None],
    "flag": ["a", 2, None],
    "object": ["a", 1.0, None],  # an object of a given class (an accountant, a pair, an OpenDP domain)
    "counts": [np.array([-1.0]), np.array([1.5]), np.array([NAN]), np.array([INF]), ["a"], np.array([1j]),
               np.array([True])],
}


def _bad_arrays(base):
    """Bad variants of a valid real array: NaN, inf, complex, text, extra dimension, empty."""
    a = np.asarray(base, dtype=float)
    out = [np.full(a.shape, NAN), np.full(a.shape, INF), a + 1j, "a", a[None, None]]
    if a.ndim >= 1:
        out.append(np.zeros((0,) + a.shape[1:]))
    return out


def _ids(v):
    if isinstance(v, np.ndarray):
        return f"array{v.shape}{v.dtype}" + ("nan" if v.dtype.kind == "f" and v.size and np.isnan(v).all() else "")
    return repr(v)[:20]


# ---------------------------------------------------------------- valid calls
def _bmg():
    return SH.BlanketMixedGaussian(0.5, 1.0, 2)


def _rr():
    return SH.RandomizedResponse(3, 1.0)


def _pu():
    return SH.PrivUnit(0.7, 0.2, 3)


@functools.lru_cache(maxsize=None)
def _lpu():
    return SH.LatticePrivUnit(0.7, 0.2, 3)


def _general_funcs():
    from numba import njit

    @njit
    def dens(y, x):
        return 0.5 + 0.25 * x * y

    @njit
    def blank(y):
        return 0.5

    return dens, blank


@functools.lru_cache(maxsize=None)
def _general():
    dens, blank = _general_funcs()
    return SH.GeneralRandomizer(dens, [-1.0, 1.0], (-1.0, 1.0), blanket=blank, gamma=0.5, cells=32)

@functools.lru_cache(maxsize=None)
def _fin():
    return SH.FiniteRandomizer.from_probabilities([[0.6, 0.4], [0.3, 0.7]], inputs=[-1.0, 1.0], outputs=[-1.0, 1.0])


@functools.lru_cache(maxsize=None)
def _fin_cat():
    return SH.FiniteRandomizer.from_probabilities([[0.6, 0.4], [0.3, 0.7]])


@functools.lru_cache(maxsize=None)
def _acc():
    return SH.ShuffleAccountant(_rr(), 100)


@functools.lru_cache(maxsize=None)
def _sharp():
    return SH.ExactShuffleAccountant(SH.RandomizedResponse(2, 1.0), 50)


@functools.lru_cache(maxsize=None)
def _pair():
    return SH.dominating_pair(_acc())


@functools.lru_cache(maxsize=None)
def _composed():
    return SH.ComposedAccountant([(_acc(), 2)])


def _slg():
    return HI.ShiftedLogGaussian(0.2)


H2 = np.array([[1.0, 0.5], [0.2, 1.0]])


class E:
    """One table entry: ``make()`` -> (callable, kwargs of a valid call); params: name -> kind."""

    def __init__(self, key, make, params, huge=(), xfail=(), none_ok=()):
        self.key, self.make, self.params, self.huge = key, make, params, tuple(huge)
        self.xfail = dict(xfail)  # param (or "huge") -> ids of the bad values that fail until edgesacc merges
        self.none_ok = set(none_ok)  # optional parameters: None is their default


def _m(obj_factory, method):
    return lambda **kw: getattr(obj_factory(), method)


ENTRIES = [
    # ------------------------------------------------ sharpdp.shuffle
    E("sharpdp.shuffle:BlanketMixedGaussian", lambda: (SH.BlanketMixedGaussian, dict(gamma=0.5, sigma0=1.0, dim=2)),
      dict(gamma="unit_co", sigma0="pos", dim="int_pos"), huge=[dict(dim=10**9), dict(sigma0=1e300)]),
    E("sharpdp.shuffle:BlanketMixedGaussian.sample", lambda: (_bmg().sample, dict(x=np.zeros((3, 2)), rng=0)),
      dict(x="array", rng="rng", threads="threads")),
    E("sharpdp.shuffle:BlanketMixedGaussian.estimate", lambda: (_bmg().estimate, dict(messages=np.zeros((3, 2)))),
      dict(messages="array")),
    E("sharpdp.shuffle:BlanketMixedGaussian.chi_lo_for", lambda: (_bmg().chi_lo_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:BlanketMixedGaussian.chi_up_for", lambda: (_bmg().chi_up_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:BlanketMixedGaussian.shuffle_indices",
      lambda: (_bmg().shuffle_indices, dict(adjacency="zero_out")), dict(adjacency="choice")),
    E("sharpdp.shuffle:BlanketMixedGaussian.privacy_amplification_laws",
      lambda: (_bmg().privacy_amplification_laws, dict(epsilon=0.5)), dict(epsilon="nonneg", adjacency="choice")),
    E("sharpdp.shuffle:BlanketMixedGaussian.zero_out_legs", lambda: (_bmg().zero_out_legs, {}), {}),
    E("sharpdp.shuffle:GaussianRandomizer", lambda: (SH.GaussianRandomizer, dict(sigma0=1.0, dim=1)),
      dict(sigma0="pos", dim="int_pos")),
    E("sharpdp.shuffle:RandomizedResponse", lambda: (SH.RandomizedResponse, dict(k=3, epsilon0=1.0)),
      dict(k="int_pos", epsilon0="pos"), huge=[dict(k=10**18), dict(epsilon0=1e6)]),
    E("sharpdp.shuffle:RandomizedResponse.chi_lo_for", lambda: (_rr().chi_lo_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:RandomizedResponse.chi_up_for", lambda: (_rr().chi_up_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:RandomizedResponse.shuffle_indices",
      lambda: (_rr().shuffle_indices, dict(adjacency="zero_out")), dict(adjacency="choice")),
    E("sharpdp.shuffle:RandomizedResponse.sample", lambda: (_rr().sample, dict(x=np.array([0, 1, 2]), rng=0)),
      dict(x="counts", rng="rng", threads="threads")),
    E("sharpdp.shuffle:RandomizedResponse.estimate", lambda: (_rr().estimate, dict(messages=np.array([0, 1, 2]))),
      dict(messages="counts")),
    E("sharpdp.shuffle:RandomizedResponse.estimate_mean",
      lambda: (_rr().estimate_mean, dict(messages=np.array([0, 1, 2]))), dict(messages="counts")),
    E("sharpdp.shuffle:PrivUnit", lambda: (SH.PrivUnit, dict(p=0.7, theta=0.2, dim=3)),
      dict(p="prob_open", theta="open_pm1", dim="int_pos"),
      huge=[dict(theta=0.9999999999, dim=1000), dict(dim=10**7)]),
    E("sharpdp.shuffle:PrivUnit.chi_lo_for", lambda: (_pu().chi_lo_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:PrivUnit.chi_up_for", lambda: (_pu().chi_up_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:PrivUnit.replace_up_variance",
      lambda: (_pu().replace_up_variance, dict(alpha=0.3, beta=0.3, psi=0.5)),
      dict(alpha="real", beta="real", psi="real", nodes="int_pos"), none_ok=["nodes"]),
    E("sharpdp.shuffle:PrivUnit.replace_up_configuration", lambda: (_pu().replace_up_configuration, {}), {}),
    E("sharpdp.shuffle:PrivUnit.replace_chi_up_bounds", lambda: (_pu().replace_chi_up_bounds, {}), {}),
    E("sharpdp.shuffle:PrivUnit.sample", lambda: (_pu().sample, dict(x=np.eye(3), rng=0)),
      dict(x="array", rng="rng", threads="threads")),
    E("sharpdp.shuffle:PrivUnit.estimate", lambda: (_pu().estimate, dict(messages=np.eye(3))),
      dict(messages="array")),
    E("sharpdp.shuffle:LatticePrivUnit", lambda: (SH.LatticePrivUnit, dict(p=0.7, theta=0.2, dim=3)),
      dict(p="prob_open", theta="open_pm1", dim="int_pos", scale_bits="int_nonneg"),
      huge=[dict(theta=0.9999999999, dim=1000), dict(scale_bits=480), dict(theta=0.9, dim=100),
            dict(theta=0.01, dim=4096), dict(dim=10**7)]),
    E("sharpdp.shuffle:LatticePrivUnit.sample", lambda: (_lpu().sample, dict(x=np.eye(3), rng=0)),
      dict(x="array", rng="rng", threads="threads")),
    E("sharpdp.shuffle:LatticePrivUnit.estimate",
      lambda: (_lpu().estimate, dict(messages=np.array([[3, 4, 0], [1, -2, 2]]))), dict(messages="array")),
    E("sharpdp.shuffle:LatticePrivUnit.in_cone", lambda: (_lpu().in_cone, dict(z=[3, 4, 0], x=np.eye(3)[0])),
      dict(z="array", x="array")),
    E("sharpdp.shuffle:LatticePrivUnit.delta_lower_bound",
      lambda: (_lpu().delta_lower_bound, dict(privunit_lower=0.1, epsilon=0.5, n=10)),
      dict(privunit_lower="unit_cc", epsilon="nonneg", n="int_pos")),
    E("sharpdp.shuffle:LatticePrivUnit.lower_form", lambda: (_lpu().lower_form, {}),
      {}),  # always refused (NotImplementedError): tests/test_review_rev-lattice.py
    E("sharpdp.shuffle:LatticePrivUnit.lower_form_laws", lambda: (_lpu().lower_form_laws, dict(epsilon=0.5)),
      {}),  # always refused, as lower_form
    E("sharpdp.shuffle:LatticePrivUnit.from_privunit",
      lambda: (SH.LatticePrivUnit.from_privunit, dict(privunit=_pu())),
      dict(privunit="object", scale_bits="int_nonneg")),
    E("sharpdp.shuffle.randomizers:lattice_sampler_tv",
      lambda: (RZ.lattice_sampler_tv, dict(p=0.7, theta=0.2, dim=3, scale_bits=96)),
      dict(p="prob_open", theta="open_pm1", dim="int_pos", scale_bits="int_nonneg"),
      huge=[dict(dim=10**6), dict(dim=4096), dict(scale_bits=480)]),
    E("sharpdp.shuffle.randomizers.privunit_lattice:rounding_tv_bound",
      lambda: (PL.rounding_tv_bound, dict(scale_bits=96)), dict(scale_bits="int_nonneg")),
    E("sharpdp.shuffle.randomizers.privunit_lattice:cone_layer_bound",
      lambda: (PL.cone_layer_bound, dict(dim=3, scale_bits=96)), dict(dim="int_pos", scale_bits="int_nonneg"),
      huge=[dict(dim=10**12)]),
    E("sharpdp.shuffle:GeneralRandomizer",
      lambda: (SH.GeneralRandomizer, dict(density=_general_funcs()[0], inputs=[-1.0, 1.0], support=(-1.0, 1.0),
                                          blanket=_general_funcs()[1], gamma=0.5, cells=32)),
      dict(inputs="array", support="array", gamma="unit_cc", cells="int_pos", order="int_pos",
           log_curvature="nonneg_finite"), huge=[dict(cells=10**12)], none_ok=["log_curvature"]),
    E("sharpdp.shuffle:GeneralRandomizer.chi_lo_for", lambda: (_general().chi_lo_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:GeneralRandomizer.chi_up_for", lambda: (_general().chi_up_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:GeneralRandomizer.index_enclosure",
      lambda: (_general().index_enclosure, dict(adjacency="zero_out")), dict(adjacency="choice")),
    E("sharpdp.shuffle:GeneralRandomizer.privacy_amplification_surcharge",
      lambda: (_general().privacy_amplification_surcharge, dict(epsilon=0.5)),
      dict(epsilon="nonneg", adjacency="choice")),
    E("sharpdp.shuffle:GeneralRandomizer.privacy_amplification_laws",
      lambda: (_general().privacy_amplification_laws, dict(epsilon=0.5)), dict(epsilon="nonneg", adjacency="choice")),
    E("sharpdp.shuffle:GeneralRandomizer.sample", lambda: (_general().sample, dict(x=np.array([-1.0, 1.0]), rng=0)),
      dict(x="array", rng="rng")),
    E("sharpdp.shuffle:GeneralRandomizer.affine_map", lambda: (_general().affine_map, {}), {}),
    E("sharpdp.shuffle:GeneralRandomizer.estimate",
      lambda: (_general().estimate, dict(messages=np.array([0.1, -0.2]))), dict(messages="array")),
    E("sharpdp.shuffle:GeneralRandomizer.discretize",
      lambda: (_general().discretize, dict(edges=np.linspace(-1.0, 1.0, 5), inputs=np.array([-1.0, 1.0]))),
      dict(edges="array", inputs="array", bits="int_pos"), none_ok=["edges", "inputs"], huge=[dict(bits=10**18)]),
    E("sharpdp.shuffle:FiniteRandomizer",
      lambda: (SH.FiniteRandomizer, dict(table=np.array([[2**63, 2**63], [2**62, 3 * 2**62]], dtype=np.uint64),
                                         inputs=np.array([-1.0, 1.0]), outputs=np.array([-1.0, 1.0]))),
      dict(table="array", inputs="array", outputs="array"), none_ok=["inputs", "outputs"]),
    E("sharpdp.shuffle:FiniteRandomizer.from_probabilities",
      lambda: (SH.FiniteRandomizer.from_probabilities, dict(probs=np.array([[0.6, 0.4], [0.3, 0.7]]))),
      dict(probs="array", inputs="array", outputs="array", bits="int_pos"), none_ok=["inputs", "outputs"],
      huge=[dict(bits=10**18), dict(probs=np.full((1, 4096), 1e-300))]),
    E("sharpdp.shuffle:FiniteRandomizer.privacy_amplification_laws",
      lambda: (_fin().privacy_amplification_laws, dict(epsilon=0.5)), dict(epsilon="nonneg", adjacency="choice"),
      huge=[dict(epsilon=1e6)]),
    E("sharpdp.shuffle:FiniteRandomizer.chi_lo_for", lambda: (_fin().chi_lo_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:FiniteRandomizer.chi_up_for", lambda: (_fin().chi_up_for, dict(adjacency="zero_out")),
      dict(adjacency="choice")),
    E("sharpdp.shuffle:FiniteRandomizer.sample", lambda: (_fin().sample, dict(x=np.array([-1.0, 0.5]), rng=0)),
      dict(x="array", rng="rng", threads="threads")),
    E("sharpdp.shuffle:FiniteRandomizer.affine_map", lambda: (_fin().affine_map, {}), {}),
    E("sharpdp.shuffle:FiniteRandomizer.estimate", lambda: (_fin().estimate, dict(messages=np.array([0.1, -0.2]))),
      dict(messages="array")),
    E("sharpdp.shuffle:FiniteRandomizer.estimate_frequencies",
      lambda: (_fin_cat().estimate_frequencies, dict(messages=np.array([0, 1, 1]))), dict(messages="counts")),
    E("sharpdp.shuffle:ShuffleAccountant", lambda: (SH.ShuffleAccountant, dict(randomizer=_rr(), n=100)),
      dict(randomizer="choice", n="int_pos", adjacency="choice", rel_tol="prob_open", threads="int_pos"),
      huge=[dict(n=10**18)], none_ok=["threads"]),
    E("sharpdp.shuffle:ShuffleAccountant.report", lambda: (_acc().report, dict(epsilon=0.5)),
      dict(epsilon="nonneg")),
    E("sharpdp.shuffle:ShuffleAccountant.get_delta_bounds", lambda: (_acc().get_delta_bounds, dict(epsilon=0.5)),
      dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ShuffleAccountant.closed_form_bounds", lambda: (_acc().closed_form_bounds, dict(epsilon=0.5)),
      dict(epsilon="nonneg")),
    E("sharpdp.shuffle:ShuffleAccountant.get_delta_lower_form",
      lambda: (_acc().get_delta_lower_form, dict(epsilon=0.5)), dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ShuffleAccountant.sampler_term", lambda: (_acc().sampler_term, dict(epsilon=0.5)),
      dict(epsilon="nonneg")),
    E("sharpdp.shuffle:ShuffleAccountant.get_delta", lambda: (_acc().get_delta, dict(epsilon=0.5)),
      dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ShuffleAccountant.get_epsilon", lambda: (_acc().get_epsilon, dict(delta=1e-6)),
      dict(delta="prob_open", xtol="prob_open")),
    E("sharpdp.shuffle:ExactShuffleAccountant",
      lambda: (SH.ExactShuffleAccountant, dict(randomizer=SH.RandomizedResponse(2, 1.0), n=50)),
      dict(randomizer="choice", n="int_pos", adjacency="choice", rel_tol="prob_open"), huge=[dict(n=10**18)]),
    E("sharpdp.shuffle:ExactShuffleAccountant.report", lambda: (_sharp().report, dict(epsilon=0.5)),
      dict(epsilon="nonneg")),
    E("sharpdp.shuffle:ExactShuffleAccountant.get_delta_bounds",
      lambda: (_sharp().get_delta_bounds, dict(epsilon=0.5)), dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ExactShuffleAccountant.get_delta", lambda: (_sharp().get_delta, dict(epsilon=0.5)),
      dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ExactShuffleAccountant.get_epsilon", lambda: (_sharp().get_epsilon, dict(delta=1e-6)),
      dict(delta="prob_open", xtol="prob_open")),
    E("sharpdp.shuffle:ExactShuffleAccountant.delta_at_class",
      lambda: (_sharp().delta_at_class, dict(epsilon=0.5, j=3)), dict(epsilon="nonneg_finite", j="int_nonneg")),
    E("sharpdp.shuffle:ExactShuffleAccountant.privacy_profile",
      lambda: (_sharp().privacy_profile, dict(epsilons=np.array([0.1, 0.5]))), dict(epsilons="eps_array")),
    E("sharpdp.shuffle:FiniteLaw", lambda: (SH.FiniteLaw, dict(values=[-1.0, 1.0], probs=[0.5, 0.5])),
      dict(values="array", probs="array")),
    E("sharpdp.shuffle:LognormalLaw", lambda: (SH.LognormalLaw, dict(a=1.0, b=0.5, r=1.0)),
      dict(a="real", b="real", r="pos", weight="pos")),
    E("sharpdp.shuffle:asymptotic_delta", lambda: (SH.asymptotic_delta, dict(n=100, epsilon=0.5, chi=1.0)),
      dict(n="pos", epsilon="nonneg_finite", chi="pos")),
    E("sharpdp.shuffle:calibrate_bmg", lambda: (SH.calibrate_bmg, dict(n=100, epsilon=1.0, delta=1e-6, dim=1)),
      dict(n="int_pos", epsilon="nonneg_finite", delta="prob_open", dim="int_pos", adjacency="choice")),
    E("sharpdp.shuffle:calibrate_gaussian", lambda: (SH.calibrate_gaussian, dict(n=100, epsilon=1.0, delta=1e-6)),
      dict(n="int_pos", epsilon="nonneg_finite", delta="prob_open", adjacency="choice")),
    E("sharpdp.shuffle:gaussian_chi_chua", lambda: (SH.gaussian_chi_chua, dict(sigma0=2.0)), dict(sigma0="pos"),
      huge=[dict(sigma0=1e-3), dict(sigma0=1e300)]),
    E("sharpdp.shuffle:mse_lower_bound", lambda: (SH.mse_lower_bound, dict(chi_up=1.0, dim=2)),
      dict(chi_up="nonneg", dim="int_pos")),
    E("sharpdp.shuffle:privunit_constant", lambda: (SH.privunit_constant, dict(theta=0.2, dim=3)),
      dict(theta="open_pm1", dim="int_pos")),
    E("sharpdp.shuffle:optimal_bmg", lambda: (SH.optimal_bmg, dict(chi=2.0, dim=1)),
      dict(chi="pos", dim="int_pos"), huge=[dict(chi=1e-308), dict(chi=1e308)]),
    E("sharpdp.shuffle:template_delta_estimate", lambda: (SH.template_delta_estimate, dict(chi=2.0, n=100, epsilon=0.5)),
      dict(chi="pos", n="int_pos", epsilon="nonneg_finite")),
    E("sharpdp.shuffle:clones_delta", lambda: (SH.clones_delta, dict(epsilon0=1.0, n=100, epsilon=0.1)),
      dict(epsilon0="pos", n="int_pos", epsilon="nonneg_finite"), huge=[dict(n=10**18)]),
    E("sharpdp.shuffle:clones_epsilon", lambda: (SH.clones_epsilon, dict(epsilon0=1.0, n=100, delta=1e-6)),
      dict(epsilon0="pos", n="int_pos", delta="prob_open"), huge=[dict(n=10**18)]),
    E("sharpdp.shuffle:smallest_certified_delta",
      lambda: (SH.smallest_certified_delta, dict(randomizer=_rr(), n=100, epsilon=0.5)),
      dict(randomizer="choice", n="int_pos", epsilon="nonneg_finite", adjacency="choice")),
    E("sharpdp.shuffle:calibrate_bmg_report",
      lambda: (SH.calibrate_bmg_report, dict(n=100, epsilon=1.0, delta=1e-6, dim=1)),
      dict(n="int_pos", epsilon="nonneg_finite", delta="prob_open", dim="int_pos", adjacency="choice")),
    E("sharpdp.shuffle:calibrate_gaussian_report",
      lambda: (SH.calibrate_gaussian_report, dict(n=100, epsilon=1.0, delta=1e-6)),
      dict(n="int_pos", epsilon="nonneg_finite", delta="prob_open", adjacency="choice")),
    # ------------------------------------------------ engine edges (accountant, calibration, laws)
    E("sharpdp.shuffle:calibrate_bmg", lambda: (SH.calibrate_bmg, dict(n=100, epsilon=1.0, delta=1e-6, dim=1)),
      dict(progress="flag", rounds="int_pos"), none_ok=["progress"],
      huge=[dict(epsilon=1e6), dict(n=1000, epsilon=1e6), dict(delta=5e-324), dict(rounds=10**9)]),
    E("sharpdp.shuffle:calibrate_gaussian", lambda: (SH.calibrate_gaussian, dict(n=100, epsilon=1.0, delta=1e-6)),
      dict(progress="flag"), none_ok=["progress"], huge=[dict(epsilon=1e6), dict(delta=5e-324)]),
    E("sharpdp.shuffle:calibrate_bmg_report",
      lambda: (SH.calibrate_bmg_report, dict(n=100, epsilon=1.0, delta=1e-6, dim=1)),
      dict(progress="flag", rounds="int_pos"), none_ok=["progress"]),
    E("sharpdp.shuffle:calibrate_gaussian_report",
      lambda: (SH.calibrate_gaussian_report, dict(n=100, epsilon=1.0, delta=1e-6)),
      dict(progress="flag"), none_ok=["progress"]),
    # ------------------------------------------------ privacy profile, dominating pairs, composition
    E("sharpdp.shuffle:ShuffleAccountant.privacy_profile",
      lambda: (_acc().privacy_profile, dict(epsilons=np.array([0.1, 0.5]))), dict(epsilons="eps_array")),
    E("sharpdp.shuffle:privacy_profile", lambda: (SH.privacy_profile, dict(accountant=_acc(), epsilons=[0.1, 0.5])),
      dict(accountant="choice", epsilons="eps_array")),
    E("sharpdp.shuffle:privacy_profile_bounds",
      lambda: (SH.privacy_profile_bounds, dict(accountant=_acc(), epsilons=[0.1, 0.5])),
      dict(accountant="choice", epsilons="eps_array")),
    # (**) session 33, lat33: None is dominating_pair's default step (the export step), docs/composition.md §4.6
    E("sharpdp.shuffle:dominating_pair", lambda: (SH.dominating_pair, dict(accountant=_acc())),
      dict(accountant="choice", value_discretization_interval="pos"), none_ok=["value_discretization_interval"]),
    E("sharpdp.shuffle:DominatingPair.get_delta", lambda: (_pair().get_delta, dict(epsilon=0.5)),
      dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ComposedAccountant", lambda: (SH.ComposedAccountant, dict(parts=[(_acc(), 2)])),
      dict(parts="choice", value_discretization_interval="pos"), none_ok=["value_discretization_interval"]),
    E("sharpdp.shuffle:ComposedAccountant.get_delta", lambda: (_composed().get_delta, dict(epsilon=0.5)),
      dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ComposedAccountant.get_delta_bounds",
      lambda: (_composed().get_delta_bounds, dict(epsilon=0.5)), dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ComposedAccountant.get_epsilon", lambda: (_composed().get_epsilon, dict(delta=1e-6)),
      dict(delta="prob_open", xtol="prob_open")),
    E("sharpdp.shuffle:ComposedAccountant.pairs", lambda: (_composed().pairs, {}), dict(lower="flag")),
    E("sharpdp.shuffle:ComposedAccountant.delta_route", lambda: (_composed().delta_route, dict(epsilon=0.5)),
      dict(epsilon="real_inf_ok")),
    E("sharpdp.shuffle:ComposedAccountant.smallest_certified_delta", lambda: (_composed().smallest_certified_delta, {}),
      {}),
    # the pair's flags, a lattice step too fine to index (ValueError, not OverflowError), a
    # bisection width below float resolution (no hang), the counts of a composition; the caches
    E("sharpdp.shuffle:dominating_pair#options",
      lambda: (SH.dominating_pair, dict(accountant=_acc(), value_discretization_interval=1e-2, max_evaluations=30,
                                        progress=False)),
      dict(progress="flag", lower="flag", cover_upper="flag"), none_ok=("progress",),
      huge=[dict(value_discretization_interval=1e-300)]),
    E("sharpdp.shuffle:ComposedAccountant#interval",
      lambda: (SH.ComposedAccountant, dict(parts=[(_acc(), 2)], value_discretization_interval=1e-2)), {},
      huge=[dict(value_discretization_interval=1e-300)]),
    E("sharpdp.shuffle:ComposedAccountant#count",
      lambda: (lambda count: SH.ComposedAccountant([(_acc(), count)], 1e-2), dict(count=2)), dict(count="int_pos")),
    E("sharpdp.shuffle:ComposedAccountant.get_epsilon#xtol", lambda: (_composed().get_epsilon, dict(delta=1e-6)),
      {}, huge=[dict(xtol=1e-300)]),
    E("sharpdp.shuffle:clear_caches", lambda: (SH.clear_caches, {}), {}),
    # the BMG indices at tiny and huge sigma0 (0.0 / the leading term, no
    # ZeroDivisionError), calibrate_gaussian at n = 2 and epsilon 50 (a minute before: the closed-form
    # bracket of few active users, docs/accountant.md §6.7)
    E("sharpdp.shuffle.randomizers.bmg:bmg_chi_up",
      lambda: (SH.randomizers.bmg.bmg_chi_up, dict(gamma=0.5, sigma0=1.0)),
      dict(gamma="unit_co", sigma0="pos"),
      huge=[dict(sigma0=1e-300), dict(sigma0=5e-324), dict(sigma0=0.03), dict(gamma=0.0, sigma0=0.03),
            dict(gamma=1e-300, sigma0=0.04), dict(gamma=0.999999, sigma0=0.05), dict(sigma0=1e300)]),
    E("sharpdp.shuffle:BlanketMixedGaussian#indices",
      lambda: (lambda gamma, sigma0: np.array([(b := SH.BlanketMixedGaussian(gamma, sigma0, 1)).chi_lo, b.chi_up]),
               dict(gamma=0.5, sigma0=1.0)),
      dict(gamma="unit_co", sigma0="pos"), huge=[dict(sigma0=1e-300), dict(sigma0=0.03), dict(sigma0=1e300)]),
    E("sharpdp.shuffle:calibrate_gaussian#few_users",
      lambda: (SH.calibrate_gaussian, dict(n=100, epsilon=1.0, delta=1e-6)), {},
      huge=[dict(n=2, epsilon=50.0)]),
    # heavy-tailed laws at small n (minutes before; now the few-user terms of
    # docs/accountant.md §6.8, well under a second CPU for zero-out, a few seconds through bot)
    E("sharpdp.shuffle:calibrate_gaussian#small_n",
      lambda: (SH.calibrate_gaussian, dict(n=100, epsilon=1.0, delta=1e-6)), {},
      huge=[dict(n=10, epsilon=50.0), dict(n=2, epsilon=20.0), dict(n=2, epsilon=5.0, delta=1e-12),
            dict(n=3, epsilon=50.0, delta=1e-15),
            # decided by the closed-form brackets (docs/accountant.md §6.9; > 100 s CPU before)
            dict(n=10, epsilon=5.0, delta=1e-15), dict(n=5, epsilon=1.0, delta=1e-15)]),
    E("sharpdp.shuffle:calibrate_gaussian#small_n_replace",
      lambda: (SH.calibrate_gaussian, dict(n=100, epsilon=1.0, delta=1e-6, adjacency="replace")), {},
      huge=[dict(n=10, epsilon=50.0), dict(n=2, epsilon=20.0), dict(n=2, epsilon=5.0, delta=1e-12),
            dict(n=3, epsilon=5.0, delta=1e-15), dict(n=5, epsilon=1.0, delta=1e-15)]),
    # replace-one through bot at small n: the split search that decides (docs/accountant.md §9.2) and the
    # calibration's learned gain (§6.10); 3-10 s CPU on an idle machine (12.5 s to > 400 s before).
    # get_epsilon at n = 30 (1e-16) and n = 100 (sigma0 = 1.5) calls every sharpdp function that n = 100 and
    # n = 1000 call (a call-event trace of both, compared as sets; sigma0 = 1.5 misses only the multi-worker FFT
    # wrapper, which n = 30 calls), at 1.2 s and 1.2 s of CPU instead of 3 s and 6.5 s
    E("sharpdp.shuffle:ShuffleAccountant.get_epsilon#gauss_replace",
      lambda: (lambda sigma0, n, delta: SH.ShuffleAccountant(SH.GaussianRandomizer(sigma0, 1), n,
                                                             adjacency="replace").get_epsilon(delta),
               dict(sigma0=4.0, n=2, delta=1e-3)), {},
      huge=[dict(n=30, delta=1e-16), dict(sigma0=1.5, n=100, delta=1e-6)]),
    # calibrate_bmg at n = 5 calls every sharpdp function that n = 10 calls except the multi-threaded FFT's
    # wrapper (bench/fuzz_call_sets.py), at ~0.9 s of CPU instead of ~9 s
    E("sharpdp.shuffle:calibrate_bmg#small_n_replace",
      lambda: (SH.calibrate_bmg, dict(n=100, epsilon=1.0, delta=1e-6, dim=1, adjacency="replace")), {},
      huge=[dict(n=5, epsilon=5.0, delta=1e-15)]),
    E("sharpdp.shuffle:ShuffleAccountant.get_delta#gauss_small_n",
      lambda: (lambda n, epsilon: SH.ShuffleAccountant(SH.GaussianRandomizer(0.5, 1), n).get_delta(epsilon),
               dict(n=2, epsilon=20.0)), {},
      huge=[dict(n=10, epsilon=50.0), dict(n=100, epsilon=30.0)]),
    # ------------------------------------------------ conversions (also re-exported by sharpdp.shuffle)
    E("sharpdp.conversions:gaussian_mechanism_delta", lambda: (CV.gaussian_mechanism_delta, dict(epsilon=1.0, sigma=1.0)),
      dict(epsilon="nonneg", sigma="pos", sensitivity="pos"), huge=[dict(epsilon=10000.0, sigma=1e4)]),
    E("sharpdp.conversions:gaussian_mechanism_epsilon",
      lambda: (CV.gaussian_mechanism_epsilon, dict(delta=1e-6, sigma=1.0)),
      dict(delta="prob_open", sigma="pos", sensitivity="pos")),
    E("sharpdp.conversions:gaussian_mechanism_sigma",
      lambda: (CV.gaussian_mechanism_sigma, dict(epsilon=1.0, delta=1e-6)),
      dict(epsilon="nonneg_finite", delta="prob_open", sensitivity="pos"),
      huge=[dict(epsilon=0.0, delta=1e-15)]),
    E("sharpdp.conversions:zcdp_to_epsilon", lambda: (CV.zcdp_to_epsilon, dict(rho=0.5, delta=1e-6)),
      dict(rho="nonneg_finite", delta="prob_open")),
    E("sharpdp.conversions:zcdp_to_epsilon_bun_steinke",
      lambda: (CV.zcdp_to_epsilon_bun_steinke, dict(rho=0.5, delta=1e-6)), dict(rho="nonneg_finite", delta="prob_open")),
    # ------------------------------------------------ sharpdp.histogram
    E("sharpdp.histogram:ShiftedLogGaussian", lambda: (HI.ShiftedLogGaussian, dict(r=0.2)),
      dict(r="unit_oc", r0="pos", c="pos"), none_ok=["r0"]),
    E("sharpdp.histogram:ShiftedLogGaussian.budget", lambda: (_slg().budget, dict(n=[1, 2])), dict(n="counts"),
      huge=[dict(n=2**52)]),
    E("sharpdp.histogram:ShiftedLogGaussian.edge_mu", lambda: (_slg().edge_mu, dict(n=[1, 2])), dict(n="counts")),
    E("sharpdp.histogram:ShiftedLogGaussian.expected_abs_error", lambda: (_slg().expected_abs_error, dict(n=[1, 2])),
      dict(n="counts")),
    E("sharpdp.histogram:ShiftedLogGaussian.epsilon", lambda: (_slg().epsilon, dict(n=[1, 2], delta=1e-6)),
      dict(n="counts", delta="prob_open", method="choice"), huge=[dict(n=2**40), dict(n=2**52, delta=1e-300)]),
    E("sharpdp.histogram:ShiftedLogGaussian.release", lambda: (_slg().release, dict(counts=[1, 2], rng=0)),
      dict(counts="counts", rng="rng", integer="flag", threads="threads")),
    E("sharpdp.histogram:ComposedRelease.budget", lambda: (HI.compose(_slg(), _slg()).budget, dict(n=[1, 2])),
      dict(n="counts")),
    E("sharpdp.histogram:ComposedRelease.epsilon",
      lambda: (HI.compose(_slg(), _slg()).epsilon, dict(n=[1, 2], delta=1e-6)),
      dict(n="counts", delta="prob_open", method="choice")),
    E("sharpdp.histogram.lower_bounds:two_count", lambda: (LB.two_count, dict(n=[1, 2], r=0.2)),
      dict(n="counts", r="prob_open"), huge=[dict(n=2**53 - 1)]),
    E("sharpdp.histogram.lower_bounds:two_count_limit", lambda: (LB.two_count_limit, dict(r=0.2)), dict(r="prob_open")),
    E("sharpdp.histogram.lower_bounds:many_count",
      lambda: (LB.many_count, dict(n=[1, 2], r=0.2, pmf=[0.5, 0.0, 0.5], j_star=0)),
      dict(n="counts", r="prob_open", pmf="array", j_star="int_nonneg")),
    E("sharpdp.histogram.lower_bounds:uniform_prior", lambda: (LB.uniform_prior, dict(n=[1, 2], r=0.2)),
      dict(n="counts", r="prob_open", K="int_pos"), huge=[dict(n=2**52)], none_ok=["K"]),
    E("sharpdp.histogram.lower_bounds:uniform_prior_best_K", lambda: (LB.uniform_prior_best_K, dict(n=3, r=0.2)),
      dict(n="int_pos", r="prob_open")),
    E("sharpdp.histogram.lower_bounds:truncated_gaussian_prior",
      lambda: (LB.truncated_gaussian_prior, dict(n=[3], r=0.2, L=1.0, x=1.0)),
      dict(n="counts", r="prob_open", L="pos", x="pos"), huge=[dict(n=[10**15], L=1e3, x=1e3)],
      none_ok=["L", "x"]),
    E("sharpdp.histogram.lower_bounds:truncnorm_entropy_var", lambda: (LB.truncnorm_entropy_var, dict(L=1.0)),
      dict(L="pos"), huge=[dict(L=1e300)]),
    E("sharpdp.histogram.lower_bounds:small_error_constants", lambda: (LB.small_error_constants, {}), {}),
    E("sharpdp.histogram.lower_bounds:gaussian_renyi",
      lambda: (LB.gaussian_renyi, dict(alpha=2.0, mu_p=0.0, s_p=1.0, mu_q=1.0, s_q=1.0)),
      dict(alpha="pos", mu_p="real", s_p="pos", mu_q="real", s_q="pos")),
    E("sharpdp.histogram.lower_bounds:renyi_finite", lambda: (LB.renyi_finite, dict(alpha=2.0, s_p=1.0, s_q=1.0)),
      dict(alpha="pos", s_p="pos", s_q="pos")),
    E("sharpdp.histogram.lower_bounds:released_renyi",
      lambda: (LB.released_renyi, dict(mechanism=_slg(), n=3, alpha=2.0)),
      dict(mechanism="choice", n="int_pos", alpha="pos", reverse="flag", integer="flag", kmax="int_pos"),
      none_ok=["kmax"]),
    # ------------------------------------------------ sharpdp.crlb
    E("sharpdp.crlb:ppcrlb", lambda: (CR.ppcrlb, dict(H=H2, S=np.eye(2), Sigma_w=np.eye(2))),
      dict(H="array", S="array", Sigma_w="array")),
    E("sharpdp.crlb:pp_fisher_information", lambda: (CR.pp_fisher_information, dict(H=H2, S=np.eye(2), Sigma_w=np.eye(2))),
      dict(H="array", S="array", Sigma_w="array")),
    E("sharpdp.crlb:is_identifiable", lambda: (CR.is_identifiable, dict(H=H2, S=np.eye(2))), dict(H="array", S="array")),
    E("sharpdp.crlb:classical_crlb", lambda: (CR.classical_crlb, dict(H=H2, Sigma_w=np.eye(2))),
      dict(H="array", Sigma_w="array")),
    E("sharpdp.crlb:crlb_gap_lower_bound",
      lambda: (CR.crlb_gap_lower_bound, dict(H=H2, S=np.eye(2), Sigma_w=np.eye(2))),
      dict(H="array", S="array", Sigma_w="array")),
    E("sharpdp.crlb:dp_lower_bound", lambda: (CR.dp_lower_bound, dict(H_list=[H2], Sigma_cr=np.eye(2), epsilon=1.0)),
      dict(H_list="array", Sigma_cr="array", epsilon="pos")),
    E("sharpdp.crlb:bayesian_ppcrlb",
      lambda: (CR.bayesian_ppcrlb, dict(H=H2, S=np.eye(2), Sigma_w=np.eye(2), prior_cov=np.eye(2))),
      dict(H="array", S="array", Sigma_w="array", prior_cov="array")),
    E("sharpdp.crlb:consensus_lower_bound", lambda: (CR.consensus_lower_bound, dict(S=[1.0, 2.0])),
      dict(S="array", sigma_w="pos_inf_ok")),
    E("sharpdp.crlb:RecursivePPFisher", lambda: (CR.RecursivePPFisher, dict(n=2)), dict(n="int_pos", rcond="pos"),
      none_ok=["n"]),
    E("sharpdp.crlb:RecursivePPFisher.update",
      lambda: (CR.RecursivePPFisher(2).update, dict(H_k=[[1.0, 0.5]], Sigma_w_k=[[1.0]], S_k=[[1.0]])),
      dict(H_k="array", Sigma_w_k="array", S_k="array")),
    E("sharpdp.crlb:RecursivePPFisher.update_many",
      lambda: (CR.RecursivePPFisher(2).update_many, dict(H=H2, Sigma_w=[1.0, 1.0], S=[1.0, 1.0])),
      dict(H="array", Sigma_w="array", S="array")),
    E("sharpdp.crlb:RecursivePPCRLB", lambda: (CR.RecursivePPCRLB, dict(n=2)), dict(n="int_pos", rcond="pos"),
      none_ok=["n"]),
    E("sharpdp.crlb:PrivateRLS", lambda: (CR.PrivateRLS, dict(n=2, rng=0)),
      dict(n="int_pos", rng="rng", rcond="pos", threads="threads", grid_bits="int_nonneg"),
      none_ok=["n", "threads", "grid_bits"]),
    E("sharpdp.crlb:PrivateRLS.update",
      lambda: (CR.PrivateRLS(2, rng=0).update, dict(y_k=[1.0], H_k=[[1.0, 0.5]], Sigma_w_k=[[1.0]], S_k=[[1.0]])),
      dict(y_k="array", H_k="array", Sigma_w_k="array", S_k="array")),
    E("sharpdp.crlb:PrivateRLS.update_many",
      lambda: (CR.PrivateRLS(2, rng=0).update_many, dict(y=[1.0, 2.0], H=H2, Sigma_w=[1.0, 1.0], S=[1.0, 1.0])),
      {}),  # always refused (measurements one at a time): test_private_rls_update_many_refused
    E("sharpdp.crlb:gaussian_mechanism", lambda: (CR.gaussian_mechanism, dict(y=[1.0, 2.0], S=np.eye(2), rng=0)),
      dict(y="array", S="array", mu_w="array", rng="rng", threads="threads", grid_bits="int_nonneg"),
      none_ok=["threads", "grid_bits"]),
    E("sharpdp.crlb:efficient_estimator",
      lambda: (CR.efficient_estimator, dict(z=[1.0, 2.0], H=H2, S=np.eye(2), Sigma_w=np.eye(2))),
      dict(z="array", H="array", S="array", Sigma_w="array")),
    E("sharpdp.crlb:ml_private_estimator",
      lambda: (CR.ml_private_estimator, dict(y=[1.0, 2.0, 3.0], H=np.ones((3, 1)), s_K=1.0, rng=0)),
      dict(y="array", H="array", s_K="pos", noise="choice", rng="rng", threads="threads", grid_bits="int_nonneg"),
      none_ok=["threads", "grid_bits"]),
    E("sharpdp.crlb:distributed_identification",
      lambda: (CR.distributed_identification,
               dict(y=[np.array([1.0]), np.array([2.0]), np.array([3.0])], H=[np.ones((1, 1))] * 3,
                    Sigma_w=[np.ones((1, 1))] * 3, S=[np.ones((1, 1))] * 3,
                    weights=np.full((3, 3), 1 / 3), iterations=5, rng=0)),
      dict(y="array", H="array", Sigma_w="array", S="array", weights="array", iterations="int_nonneg", rng="rng",
           threads="threads", grid_bits="int_nonneg"), none_ok=["threads", "grid_bits"]),
    E("sharpdp.crlb:grid_release", lambda: (CR.grid_release, dict(dim=2)),
      dict(dim="int_nonneg", grid_bits="int_nonneg"), none_ok=["grid_bits"]),
    E("sharpdp.crlb:GridRelease.rho", lambda: (CR.grid_release(2).rho, dict(sensitivity=1.0)),
      dict(sensitivity="nonneg_finite")),
    E("sharpdp.crlb:GridRelease.delta", lambda: (CR.grid_release(2).delta, dict(epsilon=1.0, sensitivity=1.0)),
      dict(epsilon="nonneg", sensitivity="pos")),
]

# ------------------------------------------------ sharpdp.interop (dp_accounting, OpenDP)
def _interop():
    pytest.importorskip("dp_accounting")  # the [interop] extra
    pytest.importorskip("opendp")
    import sharpdp.interop.dp_accounting as IA
    import sharpdp.interop.opendp as IO

    return IA, IO


def _pld_acc():
    return _interop()[0].ShufflePLDAccountant(value_discretization_interval=1e-2, max_evaluations=30)


def _round_event():
    return _interop()[0].ShuffledRoundEvent(_rr(), 100)


ENTRIES += [
    E("sharpdp.interop.dp_accounting:ShufflePLDAccountant",
      lambda: (_interop()[0].ShufflePLDAccountant, dict(value_discretization_interval=1e-2)),
      dict(neighboring_relation="choice", value_discretization_interval="unit_oc", rel_tol="prob_open"),
      none_ok=()),
    E("sharpdp.interop.dp_accounting:ShufflePLDAccountant.compose",
      lambda: (_pld_acc().compose, dict(event=_round_event(), count=1)), dict(count="int_pos")),
    E("sharpdp.interop.dp_accounting:ShufflePLDAccountant.get_epsilon",
      lambda: (_pld_acc().compose(_round_event()).get_epsilon, dict(target_delta=1e-6)),
      dict(target_delta="prob_open"), huge=[dict(target_delta=5e-324)]),
    E("sharpdp.interop.dp_accounting:ShufflePLDAccountant.get_delta",
      lambda: (_pld_acc().compose(_round_event()).get_delta, dict(target_epsilon=0.5)),
      dict(target_epsilon="real_inf_ok"), huge=[dict(target_epsilon=1e300)]),
    E("sharpdp.interop.dp_accounting:ShuffledRoundEvent",
      lambda: (_interop()[0].ShuffledRoundEvent, dict(randomizer=_rr(), n=100)),
      dict(n="int_pos", adjacency="choice"), huge=[dict(n=10**9)]),
    E("sharpdp.interop.dp_accounting:to_pld", lambda: (_interop()[0].to_pld, dict(accountant=_acc())),
      dict(accountant="object", value_discretization_interval="unit_oc"), none_ok=("value_discretization_interval",)),
    E("sharpdp.interop.dp_accounting:export_interval",
      lambda: (_interop()[0].export_interval, dict(accountant=_acc())), dict(accountant="object")),
    E("sharpdp.interop.dp_accounting:pld_from_pair", lambda: (_interop()[0].pld_from_pair, dict(pair=_pair())),
      dict(pair="object")),
    E("sharpdp.interop.opendp:make_shuffled_round",
      lambda: (_interop()[1].make_shuffled_round, dict(accountant=_acc(), rng=0)),
      dict(accountant="object", input_domain="object", rng="rng", threads="threads"), none_ok=("input_domain",)),
    E("sharpdp.interop.opendp:default_input_domain",
      lambda: (_interop()[1].default_input_domain, dict(accountant=_acc())), dict(accountant="object")),
    E("sharpdp.interop.opendp:input_metric", lambda: (_interop()[1].input_metric, dict(adjacency="replace")),
      dict(adjacency="choice")),
]

#: Public names that are data containers or abstract bases: no argument checks to fuzz.
EXEMPT = {
    "sharpdp.shuffle:AccountantReport": "dataclass returned by ShuffleAccountant.report",
    "sharpdp.shuffle:CalibrationReport": "dataclass returned by calibrate_bmg_report / calibrate_gaussian_report",
    "sharpdp.shuffle:DominatingPair": "built by dominating_pair (fuzzed above)",
    "sharpdp.shuffle:DominatingPair.full_repr": "no argument (the pair's arrays as text; tests/test_legs33_profile_budget.py)",
    "sharpdp.shuffle:LocalRandomizer": "abstract base class",
    "sharpdp.crlb:MLPrivateEstimate": "dataclass returned by ml_private_estimator",
    "sharpdp.crlb:DistributedResult": "dataclass returned by distributed_identification",
    "sharpdp.crlb:GridRelease": "dataclass returned by grid_release (its methods are fuzzed above)",
    "sharpdp.histogram:EPSILON_METHODS": "constant",
    "sharpdp.shuffle:ADJACENCIES": "constant",
    "sharpdp.shuffle:DEFAULT_ADJACENCY": "constant",
    "sharpdp.histogram:ComposedRelease": "built from ShiftedLogGaussian instances; fuzzed through compose",
    "sharpdp.histogram:compose": "fuzzed below (test_compose_rejects_non_mechanisms)",
    "sharpdp.interop.dp_accounting:AdjacencyMismatchError": "exception class",
    "sharpdp.interop.opendp:ZERO_OUT_DISTANCE": "constant",
}
#: Laws are internal objects of the accountant's protocol; their methods are exercised by its tests.
EXEMPT_PREFIX = ("sharpdp.shuffle:FiniteLaw.", "sharpdp.shuffle:LognormalLaw.",
                 "sharpdp.shuffle:LocalRandomizer.")  # the abstract contract: fuzzed through each randomizer


def _public_callables() -> set[str]:
    keys: set[str] = set()
    for mn in MODULES:
        try:
            mod = importlib.import_module(mn)
        except ImportError:  # an optional extra (interop) that is not installed: nothing to enumerate
            continue
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [n for n in dir(mod) if not n.startswith("_")
                     and getattr(getattr(mod, n), "__module__", None) == mn]
        for n in names:
            obj = getattr(mod, n)
            if inspect.ismodule(obj):
                continue
            owner = getattr(obj, "__module__", "")
            if mn == "sharpdp.shuffle" and owner == "sharpdp.conversions":
                continue  # re-export: fuzzed under sharpdp.conversions
            keys.add(f"{mn}:{n}")
            if inspect.isclass(obj):
                for k, v in vars(obj).items():
                    if not k.startswith("_") and (inspect.isfunction(v) or isinstance(v, (staticmethod, classmethod))):
                        keys.add(f"{mn}:{n}.{k}")
    return keys


def test_every_public_callable_has_an_entry():
    have = {e.key for e in ENTRIES} | set(EXEMPT)
    missing = sorted(k for k in _public_callables() - have if not k.startswith(EXEMPT_PREFIX))
    assert not missing, f"public callables without a fuzz entry: {missing}"


def test_new_exports():
    """calibrate_gaussian, clones_epsilon and smallest_certified_delta are exported from sharpdp.shuffle."""
    for name in ("calibrate_gaussian", "clones_epsilon", "smallest_certified_delta", "clones_delta"):
        assert name in SH.__all__ and callable(getattr(SH, name))


# ---------------------------------------------------------------- the runner
def _call_with_timeout(fn, kwargs, timeout=TIMEOUT):
    box: dict = {}

    def target():
        try:
            box["value"] = fn(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            box["exc"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(timeout)
    if th.is_alive():
        pytest.fail(f"call did not finish within {timeout} s (hang)")
    return box


def _names_param(msg: str, param: str) -> bool:
    return re.search(rf"(^|[^A-Za-z0-9_]){re.escape(param)}([^A-Za-z0-9_]|$)", msg) is not None


def _cases():
    """One case per (entry, parameter): every bad value of the parameter's kind is tried in it (a case
    per value cost ~4 ms of pytest and xdist bookkeeping each, 1,709 cases, more than the calls)."""
    for e in ENTRIES:
        for param, kind in e.params.items():
            yield pytest.param(e, param, kind, id=f"{e.key}-{param}")


def _isolated(e, param, bad_id) -> bool:
    """Known failures (xfail) run in a forked child: one that hangs is killed at the limit."""
    return bad_id in e.xfail.get(param, ())


def _marks(e, param, bad_id="arrays"):
    if bad_id in e.xfail.get(param, ()):
        return [pytest.mark.xfail(strict=True, reason="fixed on branch edgesacc")]
    return []


def _bad_call_failure(entry, fn, kwargs, param, b, isolated):
    """None if the call with ``param = b`` raises a ValueError or TypeError whose message names
    ``param`` (within the time limit), else what went wrong."""
    what = f"{entry.key}({param}={_ids(b)})"
    try:
        if isolated:
            status, exc_type, msg, _ = _run_forked(entry.key, {param: b}, timeout=5.0)
            if status != "exc":
                return f"{what} was accepted"
            if exc_type not in ("ValueError", "TypeError"):
                return f"{what} raised {exc_type}: {msg}"
        else:
            box = _call_with_timeout(fn, dict(kwargs, **{param: b}))
            exc = box.get("exc")
            if exc is None:
                return f"{what} was accepted (returned {box.get('value')!r:.80})"
            msg = str(exc)
            if not isinstance(exc, (ValueError, TypeError)):
                return f"{what} raised {type(exc).__name__}: {exc}"
    except pytest.fail.Exception as hang:  # (a hang: the time limit)
        return f"{what}: {hang}"
    if not _names_param(msg, param):
        return f"{what}: message does not name {param!r}: {msg}"
    return None


@pytest.mark.parametrize("entry,param,kind", list(_cases()))
def test_bad_input_named_error(entry, param, kind):
    """Each bad value of the kind (a fresh valid call per value; the bad arrays share one): a named
    ValueError or TypeError. Every value is tried and the failures are reported together; a known
    failure (``xfail`` of the entry: the value's id, or "arrays") must still fail (strict)."""
    known = entry.xfail.get(param, ())
    outcomes = []  # (bad id, failures)
    if kind in ("array", "eps_array"):
        fn, kwargs = entry.make()
        base = kwargs.get(param)
        if base is None:
            base = np.ones(2)
        bads = _bad_arrays(base)
        if kind == "eps_array":  # an epsilon grid of any shape (empty too): +-inf and extra dimensions are valid
            bads = [b for b in bads if not (isinstance(b, np.ndarray) and b.dtype.kind == "f"
                                            and (b.size == 0 or np.isinf(b).any() or b.ndim > np.ndim(base)))]
        iso = _isolated(entry, param, "arrays")
        outcomes.append(("arrays", [f for b in bads if (f := _bad_call_failure(entry, fn, kwargs, param, b, iso))]))
    else:
        for bad in BAD[kind]:
            if bad is None and param in entry.none_ok:
                continue
            fn, kwargs = entry.make()
            f = _bad_call_failure(entry, fn, kwargs, param, bad, _isolated(entry, param, _ids(bad)))
            outcomes.append((_ids(bad), [f] if f else []))
    failures = []
    for bad_id, fails in outcomes:
        if bad_id in known:
            if not fails:
                failures.append(f"{entry.key}({param}={bad_id}): a known failure (xfail: fixed on branch edgesacc) "
                                "passed; remove it from the entry's xfail")
        else:
            failures.extend(fails)
    assert not failures, "\n".join(failures)


def _huge_cases():
    for e in ENTRIES:
        for k, over in enumerate(e.huge):
            marks = _marks(e, "huge", str(k))
            yield pytest.param(e, over, id=f"{e.key}-huge{k}", marks=marks)


def _huge_child(conn, key, override, cpu_limit):
    import resource

    # the limit is on CPU time (the kernel stops the child with SIGXCPU), so a loaded machine does not
    # turn a slow-but-finite call into a failure; the parent's wall limit only catches a sleeping hang
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_limit), int(cpu_limit) + 5))
    entry = next(e for e in ENTRIES if e.key == key)
    fn, kwargs = entry.make()
    try:
        v = fn(**dict(kwargs, **override))
        isnan = bool(np.any(np.isnan(v))) if isinstance(v, (float, np.ndarray)) else False
        conn.send(("ok", None, None, isnan))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        conn.send(("exc", type(exc).__name__, str(exc), False))


def _run_forked(key, override, timeout=TIMEOUT):
    """(status, exception type name, message, returned NaN) of the call in a forked child,
    which is killed at the time limit (a hang must not keep a core busy)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_huge_child, args=(send, key, override, timeout))
    proc.start()
    send.close()  # (the child's copy stays open: EOF below means the child ended without an answer)
    try:
        ready = recv.poll(10 * timeout)
        out = recv.recv() if ready else None
    except EOFError:
        out = None
    if out is None:
        proc.kill()
        proc.join()
        pytest.fail(f"{key}{override} did not finish within {timeout} s of CPU time (hang; exit code "
                    f"{proc.exitcode})")
    proc.join()
    return out


@pytest.mark.parametrize("entry,override", list(_huge_cases()))
def test_huge_input_finishes_or_named_error(entry, override):
    """Valid but extreme inputs: a result (not NaN) or a named error, within the time limit."""
    status, exc_type, msg, isnan = _run_forked(entry.key, override)
    if status == "exc":
        assert exc_type in ("ValueError", "TypeError"), f"{entry.key}{override} raised {exc_type}: {msg}"
        assert any(_names_param(msg, p) for p in override), f"{entry.key}{override}: unclear message: {msg}"
    else:
        assert not isnan, f"{entry.key}{override} returned NaN"


def test_private_rls_update_many_refused():
    with pytest.raises(TypeError, match="one at a time"):
        CR.PrivateRLS(2, rng=0).update_many([1.0], [[1.0, 0.5]], [1.0], [1.0])


def test_compose_rejects_non_mechanisms():
    with pytest.raises(ValueError, match="mechanisms"):
        HI.compose()
    for bad in ("a", 1.0, None, SH.RandomizedResponse(2, 1.0)):
        with pytest.raises(TypeError, match="mechanisms"):
            HI.compose(bad)


def test_dominating_pair_refuses_a_composition():
    """dominating_pair(ComposedAccountant(...)) is refused with a clear message."""
    with pytest.raises(TypeError, match="ONE shuffled round"):
        SH.dominating_pair(_composed())
