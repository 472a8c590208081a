"""Benchmarks of certified multi-round composition (pytest-benchmark), dp_accounting side by side.
Run: python -m pytest bench/bench_composition.py --benchmark-only -s

One shuffled BMG(0.95, 4.6) round at n = 1e6 (zero-out), its dominating pair built once from the
certified profile (cost reported in extra_info; the accountant's per-epsilon work dominates it),
then k rounds composed by sharpdp.shuffle.ComposedAccountant (certified) and by dp_accounting's
PLD self-composition of the same pair (uncertified floats).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, ShuffleAccountant, clear_caches, dominating_pair

dpa = pytest.importorskip("dp_accounting")
from sharpdp.interop.dp_accounting import pld_from_pair  # noqa: E402

DX = 1e-6  # lattice step (nats): the round's delta falls from 4.5e-6 to 1e-18 within ~1e-4 nats
_STATE: dict = {}


def state():
    if not _STATE:
        acc = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**6)
        t = time.perf_counter()
        pair = dominating_pair(acc, DX, max_evaluations=80)
        _STATE.update(acc=acc, pair=pair, pair_seconds=time.perf_counter() - t,
                      pld=pld_from_pair(pair))
    return _STATE


def eps_for(k: int) -> float:
    return 3e-5 * math.sqrt(k)


@pytest.mark.parametrize("k", [2, 10, 100])
def test_sharpdp_composed(benchmark, k):
    s = state()
    ca = ComposedAccountant([(s["acc"], k)], DX)
    ca._pairs = [s["pair"]]  # the pair built once (the same object dominating_pair returns)
    eps = eps_for(k)
    benchmark.group = f"compose k={k} BMG n=1e6"
    up = benchmark.pedantic(ca.get_delta, args=(eps,), rounds=3, iterations=1)
    ref = float(s["pld"].self_compose(k).get_delta_for_epsilon(eps))
    benchmark.extra_info.update(eps=eps, delta=up, dp_accounting=ref, rel_diff=up / ref - 1,
                                pair_seconds=s["pair_seconds"], samples=int(s["pair"].sample_epsilons.size))
    assert abs(up / ref - 1) <= 0.01


@pytest.mark.parametrize("k", [2, 10, 100])
def test_dp_accounting_composed(benchmark, k):
    s = state()
    eps = eps_for(k)
    benchmark.group = f"compose k={k} BMG n=1e6"

    def run():
        return float(s["pld"].self_compose(k).get_delta_for_epsilon(eps))

    d = benchmark.pedantic(run, rounds=3, iterations=1)
    benchmark.extra_info.update(eps=eps, delta=d)


def test_dp_accounting_gaussian_reference(benchmark):
    """dp_accounting's own 100-fold Gaussian composition at the same lattice, for scale."""
    benchmark.group = "compose k=100 BMG n=1e6"

    def run():
        acc = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_SPECIAL, 1e-4)
        acc.compose(dpa.GaussianDpEvent(30.0), 100)
        return acc.get_delta(0.3)

    benchmark.pedantic(run, rounds=3, iterations=1)


def test_pair_of_a_heavy_tailed_round(benchmark):
    """Building one dominating pair for a heavy-tailed BMG round: the BMG calibrate_bmg picks at
    n = 1e4, eps = 1, delta = 1e-6 (gamma = 0.0463, sigma0 = 0.758), zero-out, Delta = 1e-4,
    accountant rel_tol 1e-2. Records the number of certified profile values and the CPU time."""
    benchmark.group = "dominating pair, heavy-tailed BMG n=1e4"

    def run():
        clear_caches()  # measure a build, not the process-wide cache (docs/composition.md §2.3)
        acc = ShuffleAccountant(BlanketMixedGaussian(0.0462579752243591, 0.7578495751181393, 1), 10**4)
        calls = [0]
        inner = acc.get_delta_bounds

        def counted(eps):
            calls[0] += int(np.size(eps))
            return inner(eps)

        acc.get_delta_bounds = counted
        t = time.process_time()
        pair = dominating_pair(acc, 1e-4, progress=False)
        return acc, pair, calls[0], time.process_time() - t

    acc, pair, calls, cpu = benchmark.pedantic(run, rounds=1, iterations=1)
    eps = np.linspace(-0.5, 3.6, 42)
    up = acc.privacy_profile(eps)
    ratio = pair.get_delta(eps) / up
    sel = up >= 1e-12
    benchmark.extra_info.update(profile_values=calls, cpu_seconds=cpu, max_ratio_to_get_delta=float(ratio[sel].max()))
    assert np.all(ratio >= 1.0) and calls <= 400


def test_pair_of_a_second_accountant_is_cached(benchmark):
    """One build per round per process: a new accountant of the same round (as dp_accounting's
    calibration loops create) gets the pair from the shared cache (docs/composition.md §2.3)."""
    s = state()  # the first build (pair_seconds)
    benchmark.group = "pair of a second accountant, same round"

    def again():
        return dominating_pair(ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**6), DX, max_evaluations=80)

    pair = benchmark.pedantic(again, rounds=3, iterations=1)
    benchmark.extra_info.update(first_build_seconds=s["pair_seconds"])
    assert pair is s["pair"]
