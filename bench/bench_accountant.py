"""Benchmarks of the certified shuffle accountant (pytest-benchmark). Run:
python -m pytest bench/bench_accountant.py --benchmark-only
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.fft import next_fast_len
from scipy.optimize import minimize_scalar
from scipy.special import ndtr

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
@pytest.mark.parametrize("n", [10**4, 10**5, 10**6, 10**8])
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
    """n = 1e9 (the default accuracy target holds up to n = 1e9, `docs/accountant.md` §6.2) at
    delta ~ 1e-6 / 1e-7 and ~ 1e-12."""
    acc = ShuffleAccountant(MECHS[name], 10**9)
    benchmark.group = f"accountant get_delta n=1e9 {name}"
    rep = benchmark.pedantic(acc.report, args=(eps,), rounds=1, iterations=1)
    benchmark.extra_info.update(eps=eps, lower=rep.lower, upper=rep.upper, rel_gap=rep.rel_gap, N=rep.N)


def numpy_blanket_delta(gamma, sigma0, n, eps, k=10.0, tail=1e-22, width=10.0):
    """Plain-numpy baseline: D_up(eps) of the BMG, zero-out, x vs bot order, by one FFT power.

    The textbook method, without sharpdp's tilt, error control or lower law:
    L = a + b X, a = gamma - e^eps, b = 1 - gamma, X = exp(rZ - r^2/2), r = 1/sigma0, is clamped
    at T (E[(L - T)_+] <= tail, added back) and rounded up to the grid hZ (ceil: an upper bound,
    bias <= h P(S > 0) in delta), h = sd(L) / (k sqrt(n gamma)); the per-user pmf
    (1 - gamma) delta_0 + gamma pmf is folded onto N points covering [E S - width sd(S),
    max(E S, 0) + width sd(S)] and q = irfft(rfft(p)^n). Returns (value, N, h, qmin): qmin < 0
    is visible FFT round-off.
    """
    r = 1.0 / sigma0
    a, b = gamma - math.exp(eps), 1.0 - gamma
    mean, sd = a + b, b * math.sqrt(math.expm1(r * r))

    def tail_mean(t):  # E[(L - t)_+], lognormal closed form
        d = (math.log((t - a) / b) + r * r / 2) / r
        return b * ndtr(r - d) - (t - a) * ndtr(-d)

    T = mean + sd
    while tail_mean(T) > tail:
        T += sd
    h = sd / (k * math.sqrt(n * gamma))
    kmin, kmax = math.ceil(a / h), math.ceil(T / h)
    x = np.arange(kmin, kmax + 1) * h
    cdf = np.where(x > a, ndtr((np.log(np.maximum(x - a, 1e-300) / b) + r * r / 2) / r), 0.0)
    pmf = gamma * np.diff(cdf, prepend=0.0)
    pmf[-1] += gamma * (1.0 - cdf[-1])
    mean_s = n * gamma * mean
    sd_s = math.sqrt(n * gamma * (sd**2 + mean**2) - n * gamma**2 * mean**2)
    lo = math.floor((mean_s - width * sd_s) / h)
    N = next_fast_len(math.ceil((max(mean_s, 0.0) + width * sd_s) / h) - lo + 1, real=True)
    assert lo < 0 < lo + N
    p = np.bincount(np.arange(kmin, kmax + 1) % N, weights=pmf, minlength=N)
    p[0] += 1.0 - gamma
    q = np.fft.irfft(np.fft.rfft(p) ** n, N)
    top = lo + N  # window [lo, lo + N): index j holds the sum j h for 0 < j < top
    value = float(q[1:top] @ (np.arange(1, top) * h)) / (n * gamma) + float(tail_mean(T))
    return value, N, h, float(q.min())


@pytest.mark.parametrize("n,delta,k", [(10**4, 1e-6, 10), (10**4, 1e-6, 100), (10**5, 1e-6, 10),
                                       (10**4, 1e-15, 30)])
def test_get_delta_numpy_baseline(benchmark, n, delta, k):
    """Plain-numpy baseline of the same quantity (x vs bot order) at sharpdp's eps for delta."""
    from sharpdp.shuffle.laws import laws_for
    from sharpdp.shuffle.accountant.driver import certify

    m = MECHS["bmg_0.95_4.6"]
    acc = ShuffleAccountant(m, n)
    eps = eps_for(acc, delta)
    benchmark.group = "accountant get_delta bmg_0.95_4.6"
    gamma, law = laws_for(m, eps, "zero_out")[0]  # x vs bot
    cert = certify(law, float(gamma), n, acc.rel_tol, acc.threads)
    t0 = time.perf_counter()
    acc.get_delta(eps)
    t_sharpdp = time.perf_counter() - t0
    out = benchmark.pedantic(numpy_blanket_delta, args=(m.gamma, m.sigma0, n, eps, k),
                             rounds=3 if n * k <= 10**5 else 1, iterations=1)
    value, N, h, qmin = out
    benchmark.extra_info.update(eps=eps, value=value, N=N, h=h, qmin=qmin, lower_xbot=cert.lower,
                                upper_xbot=cert.upper, ratio_to_upper=value / cert.upper,
                                sharpdp_get_delta_s=t_sharpdp)
