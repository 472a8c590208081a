"""Benchmarks of the certified shuffle accountant (pytest-benchmark). Run:
python -m pytest bench/bench_accountant.py --benchmark-only
"""

from __future__ import annotations

import math

import pytest
from scipy.optimize import minimize_scalar

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant


def chi_optimal_bmg(chi=3.0, d=1):
    """gamma minimising Err_1 = d/((1-g)^2 log(1 + g/((1-g)^2 chi^2))) + g/(1-g) at chi_lo = chi."""
    def err(g):
        return d / ((1 - g) ** 2 * math.log1p(g / ((1 - g) ** 2 * chi**2))) + g / (1 - g)
    g = minimize_scalar(err, bounds=(1e-3, 0.999), method="bounded").x
    s2 = 1.0 / math.log1p(g / ((1 - g) ** 2 * chi**2))
    return BlanketMixedGaussian(g, math.sqrt(s2), d)


MECHS = {"bmg_0.95_4.6": BlanketMixedGaussian(0.95, 4.6, 1), "bmg_chi3_opt": chi_optimal_bmg()}


def eps_for(acc, delta=1e-6):
    return acc.get_epsilon(delta, xtol=2e-2)


@pytest.mark.parametrize("name", list(MECHS))
@pytest.mark.parametrize("n", [10**4, 10**6, 10**8])
def test_get_delta(benchmark, name, n):
    acc = ShuffleAccountant(MECHS[name], n)
    eps = eps_for(acc)
    benchmark.group = f"accountant get_delta {name}"
    lo, up = acc.get_delta_bounds(eps)
    benchmark.extra_info.update(eps=eps, lower=lo, upper=up)
    benchmark.pedantic(acc.get_delta, args=(eps,), rounds=3, iterations=1)


@pytest.mark.parametrize("name", list(MECHS))
def test_get_epsilon(benchmark, name):
    acc = ShuffleAccountant(MECHS[name], 10**6)
    benchmark.group = "accountant get_epsilon n=1e6"
    e = benchmark.pedantic(acc.get_epsilon, args=(1e-6,), rounds=1, iterations=1)
    benchmark.extra_info.update(eps=e)


@pytest.mark.parametrize("name,eps", [("bmg_0.95_4.6", 0.0), ("bmg_chi3_opt", 1.01e-5),
                                      ("bmg_0.95_4.6", 1.6e-6), ("bmg_chi3_opt", 5e-5)])
def test_get_delta_n_1e9(benchmark, name, eps):
    """n = 1e9 (issue 2: default accuracy up to n = 1e9) at delta ~ 1e-6 / 1e-7 and ~ 1e-12."""
    acc = ShuffleAccountant(MECHS[name], 10**9)
    benchmark.group = f"accountant get_delta n=1e9 {name}"
    rep = benchmark.pedantic(acc.report, args=(eps,), rounds=1, iterations=1)
    benchmark.extra_info.update(eps=eps, lower=rep.lower, upper=rep.upper, rel_gap=rep.rel_gap, N=rep.N)
