"""Heavy-tailed privacy-amplification laws: the far-tail (single big jump) treatment against the
plain engine (docs/accountant_tail.md). CPU time (time.process_time: the machine is shared) and
the achieved (upper - lower)/lower are printed per case. Run:

    python -m pytest bench/bench_heavy_tail.py --benchmark-only -s

``bigjump`` is ShuffleAccountant.get_delta_bounds (moderate clamp plus the jump term for heavy-tailed
laws); ``plain`` the same with that dispatch switched off (clamp at a T with E[(L - T)_+] negligible).
"""

from __future__ import annotations

import time

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, _bigjump

CASES = {
    # (randomizer, n, epsilon): calibrate_bmg's picks at eps = 1 and 0.1 (n = 327 346, the flights
    # table), and the Gaussian randomizer at n = 1e6 where delta ~ 1e-6 and ~ 1e-7
    "bmg_0.056_0.52_eps1": (BlanketMixedGaussian(0.056, 0.52, 1), 327_346, 1.0),
    "bmg_0.089_0.65_eps0.1": (BlanketMixedGaussian(0.089, 0.65, 1), 327_346, 0.1),
    "gauss_1.0_n1e6_eps0.05": (GaussianRandomizer(1.0, 1), 10**6, 0.05),
    "gauss_1.0_n1e6_eps0.15": (GaussianRandomizer(1.0, 1), 10**6, 0.15),
}


def _run(fn):
    t = time.process_time()
    lo, up = fn()
    return lo, up, time.process_time() - t


@pytest.mark.parametrize("method", ["bigjump", "plain"])
@pytest.mark.parametrize("case", list(CASES))
def test_heavy_tail_delta_bounds(benchmark, case, method, monkeypatch):
    rz, n, eps = CASES[case]
    if method == "plain":
        monkeypatch.setattr(_bigjump, "try_certify", lambda *a, **k: None)

    def fn():
        return ShuffleAccountant(rz, n).get_delta_bounds(eps)
    benchmark.group = f"heavy tail {case}"
    lo, up, cpu = benchmark.pedantic(_run, args=(fn,), rounds=1, iterations=1)
    gap = (up - lo) / lo if lo > 0 else float("inf")
    print(f"\n{case} {method}: cpu {cpu:.3f} s, lower {lo:.6e}, upper {up:.6e}, gap {gap:.2%}")
    assert 0 <= lo <= up
