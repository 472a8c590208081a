"""Review rev44 (session 44): attack on docs/accountant_tail.md §65.1 (``limits.BODY43_SPECTRAL_SUM``) inside the
lattice engine (``lattice.engine``): its window sum E and round-off bound fp with the rule on against (a) an exact
reference and (b) the inverse-FFT path (the switch off) on the same call.

(a) With ``BODY43_SPECTRAL_MIN_N`` lowered to 16 the rule runs at moderate n (n >= ~2000: |z_k|^n must underflow at
every frequency above N / 8). The reference, independent of sharpdp: the exact circular n-fold sum of the engine's own
stored tilted pmf gt (its doubles taken as exact), by the DFT in mpmath at every one of the N frequencies (z_k = the
polynomial gt at e^{-2 pi i k / N}, z_k^n at 40 digits) and the weights' transform Phi_k in closed form (checked here
against node sums): E_exact = (1/N) sum_k z_k^n Phi_k. Claim: |E_exact - E| <= fp, the switch on and off, on
three-atom laws straddling 0 (the tilt solving Lambda'(theta) = 0) and wider discretised laws; the rule was taken.
(b) Real cells (n = 1e8, the default threshold 2^18): every engine run of one get_delta_bounds with N >= 2^18 redone
with the switch on and off: |E_on - E_off| <= fp_on + fp_off, and the engine's certified intervals
[E - wrap_high - fp - tv, E + wrap_low + fp + tv] meet.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import lattice

from _main_floats34 import switch
from _rev43_mp import digits_fixture
from _rev44_spy import spy

_digits = digits_fixture(40)


def _engine(monkeypatch, on: bool, g, k0, h, n, min_n=16):
    """lattice.engine on (g, k0, h, n) with the switch ``on``; (result, the last window sum's (gt, N, nk0, sa, h,
    theta), whether that sum took the spectral path)."""
    rec: dict = {}
    orig_run, orig_sums = lattice._run, lattice._sums

    def run(gt, n_, N, *a):
        rec["gt"] = np.array(gt, dtype=float)
        return orig_run(gt, n_, N, *a)

    def sums(spec, q, err_q, N, nk0, sa, h_, theta):
        out = orig_sums(spec, q, err_q, N, nk0, sa, h_, theta)
        rec["args"] = (N, nk0, sa, h_, theta)
        rec["spectral"] = out[1] is not None
        return out

    with monkeypatch.context() as mp:
        switch(mp, "BODY43_SPECTRAL_SUM", on)
        mp.setattr(lattice.limits, "BODY43_SPECTRAL_MIN_N", min_n)
        mp.setattr(lattice, "_run", run)
        mp.setattr(lattice, "_sums", sums)
        res = lattice.engine(np.asarray(g, dtype=float), np.zeros(len(g)), k0, h, n, 1e-2, 1, cheap_first=False)
    return res, rec


def _phi(k: int, N: int, nk0: int, sa: int, h: float, theta: float) -> mpmath.mpc:
    """Phi_k = sum_{s = s1}^{sa + N - 1} s h e^{-theta s h} e^{2 pi i k (s - n k0) / N}, s1 = max(sa, 1), closed form."""
    s1 = max(sa, 1)
    J = sa + N - s1
    if J <= 0:
        return mpmath.mpc(0)
    r = mpmath.exp(-mpmath.mpf(theta) * mpmath.mpf(h))
    rho = r * mpmath.expjpi(mpmath.mpf(2 * k) / N)
    P = rho ** J
    num = s1 * (1 - P) * (1 - rho) + rho - J * P + (J - 1) * rho * P
    return mpmath.mpf(h) * r ** s1 * mpmath.expjpi(mpmath.mpf(2 * ((k * (s1 - nk0)) % N)) / N) * num / (1 - rho) ** 2


def _exact_circular(gt: np.ndarray, n: int, N: int, nk0: int, sa: int, h: float, theta: float) -> mpmath.mpf:
    """The exact window sum of the circular n-fold convolution of gt (node j at position j), by the full DFT."""
    coef = [mpmath.mpf(float(v)) for v in gt]
    tot = mpmath.mpf(0)
    for k in range(N // 2 + 1):
        w = mpmath.expjpi(-mpmath.mpf(2 * k) / N)
        z = mpmath.mpc(0)
        for c in reversed(coef):
            z = z * w + c
        term = (z ** n * _phi(k, N, nk0, sa, h, theta)).real
        tot += term if (k == 0 or 2 * k == N) else 2 * term
    return tot / N


def test_phi_closed_form_is_the_node_sum():
    N, h, theta = 64, 0.3, 0.7
    for sa, nk0, k in ((-10, 7, 3), (1, -123456789, 8), (5, 0, 0), (2 - N, 11, 5)):
        s1 = max(sa, 1)
        direct = mpmath.fsum(s * mpmath.mpf(h) * mpmath.exp(-s * mpmath.mpf(theta) * mpmath.mpf(h))
                             * mpmath.expjpi(mpmath.mpf(2 * ((k * (s - nk0)) % N)) / N) for s in range(s1, sa + N))
        assert abs(direct - _phi(k, N, nk0, sa, h, theta)) <= mpmath.mpf(10) ** -30 * (1 + abs(direct))


def _three_atoms(a: float, c: float) -> np.ndarray:
    return np.array([a, 1.0 - a - c, c])


CASES = [  # (g, k0, h, n): laws straddling 0 or wider ones; the rule applies to each at MIN_N = 16
    (_three_atoms(0.3, 0.25), -1, 0.01, 20_000),
    (_three_atoms(0.2, 0.2), -1, 1.0, 6_000),
    (_three_atoms(0.35, 0.1), -1, 0.5, 50_000),
    (np.exp(-0.5 * ((np.arange(17) - 9.3) / 2.5) ** 2) / (2.5 * math.sqrt(2 * math.pi)), -8, 0.1, 2_000),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_engine_window_sum_encloses_the_exact_circular_sum(monkeypatch, i):
    g, k0, h, n = CASES[i]
    results = {}
    for on in (True, False):
        res, rec = _engine(monkeypatch, on, g, k0, h, n)
        assert rec["spectral"] is on  # (the rule ran with the switch on, not with it off)
        N, nk0, sa, hh, theta = rec["args"]
        exact = _exact_circular(rec["gt"], n, N, nk0, sa, hh, theta)
        assert abs(exact - res.E) <= res.fp, (on, float(exact), res.E, res.fp)
        assert res.E > 0 and res.fp < 1e-4 * res.E  # (a real sum, not a vacuous bound)
        results[on] = (res, rec["args"])
    (a, ka), (b, kb) = results[True], results[False]
    assert ka == kb  # (the same window: the same sums compared)
    assert abs(a.E - b.E) <= a.fp + b.fp


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(a=st.floats(0.05, 0.45), c=st.floats(0.05, 0.45), log_n=st.floats(3.7, 4.7), h=st.sampled_from([0.01, 1.0]))
def test_engine_three_atoms_property(monkeypatch, a, c, log_n, h):
    g = _three_atoms(a, c)
    n = int(10**log_n)
    res, rec = _engine(monkeypatch, True, g, -1, h, n)
    N, nk0, sa, hh, theta = rec["args"]
    if N > 4096 or not rec["spectral"] or not res.E > 0:
        return  # (outside the rule or too long a reference)
    exact = _exact_circular(rec["gt"], n, N, nk0, sa, hh, theta)
    assert abs(exact - res.E) <= res.fp, (float(exact), res.E, res.fp)


# ---------------------------------------------------------------------------------------------------------------
# (b) real cells at n = 1e8, the default threshold


def _interval(r) -> tuple[float, float]:
    s = math.exp(r.log_scale)
    return (r.E - r.wrap_high - r.fp - r.tv) * s, (r.E + r.wrap_low + r.fp + r.tv) * s


@pytest.mark.parametrize("make, n, eps", [("gauss1", 10**8, 0.001), ("bmg", 10**8, 0.01)])
def test_real_cell_engine_runs_on_meet_off(monkeypatch, make, n, eps):
    rand = {"gauss1": lambda: GaussianRandomizer(1.0, 1), "bmg": lambda: BlanketMixedGaussian(0.0389, 0.529, 1)}[make]
    calls: list = []
    orig = lattice.engine

    def engine_spy(g, eta_g, k0, h, n_, rel_tol, threads, cheap_first=None):
        out = orig(g, eta_g, k0, h, n_, rel_tol, threads, cheap_first)
        if isinstance(out, lattice.EngineResult) and out.N >= 2**18:
            calls.append((np.array(g), np.array(eta_g), k0, h, n_, rel_tol))
        return out

    with monkeypatch.context() as mp:
        switch(mp, "BODY43_SPECTRAL_SUM", True)
        mp.setattr(lattice, "engine", engine_spy)
        ShuffleAccountant(rand(), n).get_delta_bounds(eps)
    clear_caches()
    assert calls  # (engine runs at N >= 2^18: the rule's domain)
    calls.sort(key=lambda c: -c[0].size)
    taken = 0
    for g, eta, k0, h, n_, rel in calls[:3]:
        out = {}
        for on in (True, False):
            with monkeypatch.context() as mp:
                switch(mp, "BODY43_SPECTRAL_SUM", on)
                calls = spy(mp, "_sums", lattice)
                out[on] = orig(g, eta, k0, h, n_, rel, 1, False)
                if on:
                    taken += any(o[1] is not None for _, o in calls)
        a, b = out[True], out[False]
        if a.N == b.N:
            assert abs(a.E - b.E) <= a.fp + b.fp, (a.E, b.E, a.fp, b.fp)
        ia, ib = _interval(a), _interval(b)
        assert max(ia[0], ib[0]) <= min(ia[1], ib[1]) * (1 + 1e-12), (ia, ib)
    clear_caches()
    assert taken > 0


@pytest.mark.parametrize("make, n, eps", [("gauss1", 10**6, 0.01), ("gauss1", 10**5, 0.01), ("bmg", 10**5, 0.05)])
def test_low_threshold_accountant_on_meets_off(monkeypatch, make, n, eps):
    """The whole accountant with ``BODY43_SPECTRAL_MIN_N`` = 16 (the rule at every accurate engine run it applies to)
    against the switch off (main's certified bracket): the brackets meet; the rule ran."""
    rand = {"gauss1": lambda: GaussianRandomizer(1.0, 1), "bmg": lambda: BlanketMixedGaussian(0.0389, 0.529, 1)}[make]
    with monkeypatch.context() as mp:
        switch(mp, "BODY43_SPECTRAL_SUM", False)
        off = ShuffleAccountant(rand(), n).get_delta_bounds(eps)
    calls = spy(monkeypatch, "_sums", lattice)
    switch(monkeypatch, "BODY43_SPECTRAL_SUM", True)
    monkeypatch.setattr(lattice.limits, "BODY43_SPECTRAL_MIN_N", 16)
    on = ShuffleAccountant(rand(), n).get_delta_bounds(eps)
    clear_caches()
    assert any(out[1] is not None for _, out in calls)  # (a window sum by the rule)
    assert max(on[0], off[0]) <= min(on[1], off[1]), (on, off)
