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

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail

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
        monkeypatch.setattr(far_tail, "try_certify", lambda *a, **k: None)

    def fn():
        return ShuffleAccountant(rz, n).get_delta_bounds(eps)
    benchmark.group = f"heavy tail {case}"
    lo, up, cpu = benchmark.pedantic(_run, args=(fn,), rounds=1, iterations=1)
    gap = (up - lo) / lo if lo > 0 else float("inf")
    print(f"\n{case} {method}: cpu {cpu:.3f} s, lower {lo:.6e}, upper {up:.6e}, gap {gap:.2%}")
    assert 0 <= lo <= up


# ----------------------------------------------------------------------------- n = 1e8 / 1e9
# Each call runs in a child process under an address-space limit of 4 GB (the machine is shared) and reports
# its CPU seconds and peak RSS (docs/accountant_tail.md §11). BMG: the optimal BMG at the asymptotic template's
# chi for (n, eps, delta = 1e-6) (what calibrate_bmg starts from, as bench/bench_regimes.py); Gaussian: zero-out.
# Run: python bench/bench_heavy_tail.py --large   (or the pytest-benchmark entry below)
LARGE_N = (10**8, 10**9)
LARGE_EPS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
_LARGE_CHILD = """
import json, resource, sys, time
spec = json.loads(sys.argv[1])
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
rz = (BlanketMixedGaussian(spec["gamma"], spec["sigma0"], 1) if spec["kind"] == "bmg"
      else GaussianRandomizer(spec["sigma0"], 1))
acc = ShuffleAccountant(rz, spec["n"])
t = time.process_time()
lo, up = acc.get_delta_bounds(spec["eps"])
print(json.dumps(dict(lo=lo, up=up, cpu=time.process_time() - t,
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def large_cells() -> list[dict]:
    from sharpdp.shuffle import optimal_bmg
    from sharpdp.shuffle.calibration import template_chi

    out = [dict(kind="bmg", gamma=0.005, sigma0=0.3, n=10**8, eps=1.0)]
    for n in LARGE_N:
        for eps in LARGE_EPS:
            b = optimal_bmg(template_chi(n, eps, 1e-6), 1)
            out.append(dict(kind="bmg", gamma=b.gamma, sigma0=b.sigma0, n=n, eps=eps))
    for s in (0.5, 1.0, 2.0):
        for n in LARGE_N:
            for eps in LARGE_EPS:
                out.append(dict(kind="gaussian", sigma0=s, n=n, eps=eps))
    return out


def run_large(spec: dict, cpu_limit: int = 60) -> dict:
    import json
    import resource
    import subprocess
    import sys

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (4000000 * 1024,) * 2)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit))

    p = subprocess.run([sys.executable, "-c", _LARGE_CHILD, json.dumps(spec)], capture_output=True, text=True,
                       preexec_fn=limits)
    if p.returncode != 0:
        return dict(spec, error=((p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1])[:160])
    r = dict(spec, **json.loads(p.stdout.strip().splitlines()[-1]))
    r["gap"] = (r["up"] - r["lo"]) / r["lo"] if r["lo"] > 0 else float("inf")
    return r


def _large_id(s: dict) -> str:
    return f"{s['kind']}_{s['sigma0']:.3g}_n{s['n']:.0e}_eps{s['eps']}"


@pytest.mark.parametrize("spec", large_cells(), ids=_large_id)
def test_heavy_tail_large_n(benchmark, spec):
    benchmark.group = "heavy tail n = 1e8 / 1e9"
    r = benchmark.pedantic(run_large, args=(spec,), rounds=1, iterations=1)
    print(f"\n{r}")
    assert "error" not in r and 0 <= r["lo"] <= r["up"]


if __name__ == "__main__":
    import sys

    if "--large" in sys.argv:
        print("| randomizer | n | eps | CPU s | peak RSS MB | lower | upper | gap |")
        print("|---|---|---|---|---|---|---|---|")
        for spec in large_cells():
            r = run_large(spec)
            name = (f"BMG({spec['gamma']:.4g}, {spec['sigma0']:.3g})" if spec["kind"] == "bmg"
                    else f"Gaussian s0={spec['sigma0']}")
            if "error" in r:
                print(f"| {name} | {spec['n']:.0e} | {spec['eps']} | - | - | - | - | {r['error']} |", flush=True)
            else:
                print(f"| {name} | {spec['n']:.0e} | {spec['eps']} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | "
                      f"{r['lo']:.4e} | {r['up']:.4e} | {r['gap']:.2%} |", flush=True)
