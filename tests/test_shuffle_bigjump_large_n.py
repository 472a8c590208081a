"""The far-tail treatment at n = 1e8 (docs/accountant_tail.md §11): bounded memory and agreement with an
independent reference.

BMG(gamma = 0.005, sigma0 = 0.3), epsilon = 1, zero-out: the clamp T0 is about 6e5 while the bulk of L sits in
[-2.71, 0], so a lattice resolving the bulk over [-B, T0] has millions of cells; an earlier version asked for
80 million and was killed for lack of memory. The call runs here in a child process under an address-space
limit of 2 GB, and its certified bracket is compared with conditional Monte Carlo (the Asmussen-Kroese estimator
of tests/test_shuffle_bigjump.py, which simulates all n - 1 other users: about 5e5 active ones per draw).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from test_shuffle_bigjump import LN, ak_estimate, mc_store

from sharpdp.shuffle import BlanketMixedGaussian
from sharpdp.shuffle.accountant.far_tail import _h_first_group
from sharpdp.shuffle.accountant.jump import stop_loss_grid
from sharpdp.shuffle.laws import laws_for

resource = pytest.importorskip("resource")

GAMMA, SIGMA0, EPS, N = 0.005, 0.3, 1.0, 10**8
AS_LIMIT = 2 * 1024**3  # bytes of address space for the child (python, numpy, scipy, numba and the call)

_CHILD = f"""
import json, resource
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
lo, up = ShuffleAccountant(BlanketMixedGaussian({GAMMA}, {SIGMA0}, 1), {N}).get_delta_bounds({EPS})
print(json.dumps(dict(lo=lo, up=up, rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


@pytest.fixture(scope="module")
def child_bracket():
    if not sys.platform.startswith("linux"):
        pytest.skip("address-space limits (RLIMIT_AS) are checked on Linux only")
    p = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, preexec_fn=_limited,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_n1e8_heavy_tail_runs_in_bounded_memory(child_bracket):
    r = child_bracket
    assert r["rss_mb"] < 1024.0  # the memory goal: <= 1 GB for any call at n <= 1e9
    assert 0.0 < r["lo"] <= r["up"]
    assert (r["up"] - r["lo"]) / r["lo"] <= 1e-2


def n1e8_batches(count):
    """The first ``count`` batch means (8 draws each) of the conditional Monte Carlo reference: 160 draws in
    batches (memory), tests/data/make_bigjump_mc_cases_reference.py stores all 20."""
    ln = LN.bmg(GAMMA, SIGMA0, EPS, "x_bot")
    rng = np.random.default_rng(20261201)
    return [ak_estimate(ln, GAMMA, N, 8, rng)[0] for _ in range(count)]


def test_n1e8_heavy_tail_against_conditional_monte_carlo(child_bracket):
    """Up never below the reference's lower 4-sigma end, Lo never above its upper end. The reference is the
    x vs bot law (the bot vs x law is below 1e-100 here, so the maximum over the pair is this one)."""
    batch = mc_store()["n1e8_batches"]  # n1e8_batches(20), stored (~2 s of CPU)
    assert n1e8_batches(1) == batch[:1]  # the store is current (the first batch, live)
    mean, se = float(np.mean(batch)), float(np.std(batch, ddof=1) / math.sqrt(len(batch)))
    assert se < 0.03 * mean  # the reference is informative (relative standard error ~1 %)
    r = child_bracket
    assert r["up"] >= mean - 4 * se
    assert r["lo"] <= mean + 4 * se


def test_stop_loss_grid_brackets_the_closed_form():
    """The chord/tangent interpolation of tau on a grid (convexity) brackets the pointwise closed forms."""
    for adj in ("zero_out", "replace"):
        law = laws_for(BlanketMixedGaussian(GAMMA, SIGMA0, 1), EPS, adj)[0][1]
        t0, dt, k = 2.0**16, 2.0, 40_000
        lo, up = stop_loss_grid(law, t0, dt, k)
        lo_p, up_p = law.stop_loss(t0 + dt * np.arange(k))
        assert np.all(up >= up_p) and np.all(lo <= lo_p)
        assert float(np.max((up - lo) / up)) < 1e-4  # and stays tight


def test_first_group_step_puts_a_node_between_the_bottom_and_the_mean():
    """The lower (centroid) law's first group holds the fine cell [f, f + h/4) of the bottom lo_s; the sweep
    targets a node at most ceil(f/h + 1/2) h, which must lie at or below the mean. The step is a dyadic
    j 2^e (j odd) so that T0 and B stay nodes, and is never finer than the powers of two allow."""
    for lo_s, mean in ((-2.713, -1.718), (-1.089, -0.105), (-7.3829, -6.3891), (-54.59, -53.6), (-2981.0, -2980.0),
                       (-1.0, -1e-3)):
        h, j = _h_first_group(lo_s, mean)
        f = math.floor(4 * lo_s / h) * h / 4
        assert math.ceil(f / h + 0.5) * h <= mean
        assert j % 2 == 1 and j < 128
        e = math.log2(h / j)
        assert e == round(e)
        p2 = 2.0 ** math.floor(math.log2(-lo_s))  # the best power of two is not coarser
        while not math.ceil(math.floor(4 * lo_s / p2) * p2 / 4 / p2 + 0.5) * p2 <= mean - 0.05 * (mean - lo_s):
            p2 /= 2
        assert h >= p2


_F1_CHILD = """
import json
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
print(json.dumps(ShuffleAccountant(BlanketMixedGaussian(0.05, 0.3, 1), 1000).get_delta_bounds(25.0)))
"""


@pytest.mark.slow
def test_large_eps_lattice_is_capped_not_allocated():
    """At eps = 25 the x vs bot law's support starts at gamma - e^25: a lattice from there to T0 at the bulk's step
    once asked for 8 TiB (MemoryError). Under a 2 GB address-space limit the call now returns a certified
    bracket; D_up <= E[L_+] <= 1 and the value is within [0, 1]."""
    if not sys.platform.startswith("linux"):
        pytest.skip("address-space limits (RLIMIT_AS) are checked on Linux only")
    p = subprocess.run([sys.executable, "-c", _F1_CHILD], capture_output=True, text=True, preexec_fn=_limited,
                       timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    lo, up = json.loads(p.stdout.strip().splitlines()[-1])
    assert 0.0 <= lo <= up <= 1.0
