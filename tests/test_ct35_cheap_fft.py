"""docs/accountant_tail.md §47 (session 35, ct35): at n <= CLOSED_CHEAP_N and rel_tol >= CLOSED_CHEAP_TOL the far-tail
treatment does not try the closed form of §18 first (``concentrated.route``). The route's choice and its switch; the
FFT treatment's bracket there against an exact quadrature at n = 2 (mpmath, from the stored law's parts) and against
the closed form's bracket (an independent pipeline, §18-§43) at n = 1000; the leg of the finding meets its rel_tol."""

from __future__ import annotations

import mpmath as mp
import pytest

from _main_floats34 import switch
from test_gauss23_closed_tail import _parts, _tau_mp as _tau, _xb
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail, limits


def test_route_chooses_only_at_small_n_and_loose_requests(monkeypatch):
    gamma, law = _xb(2.0, 0.8)
    run = law.shifted(up=True)
    assert limits.CLOSED_CHEAP_FFT and limits.CLOSED_CHEAP_N == 1000 and limits.CLOSED_CHEAP_TOL == 0.05
    assert concentrated.route(run, gamma, 1000, 0.1, far_tail.choose_T0) is None
    for n, rt in ((1001, 0.1), (1000, 0.01), (10**5, 0.1)):  # elsewhere: the closed form's own answer
        assert concentrated.route(run, gamma, n, rt, far_tail.choose_T0) == \
            concentrated.certify(run, gamma, n, rt, far_tail.choose_T0)
    switch(monkeypatch, "CLOSED_CHEAP_FFT", False)  # off: the closed form first everywhere (the floats before)
    cb = concentrated.route(run, gamma, 1000, 0.1, far_tail.choose_T0)
    assert cb is not None and cb == concentrated.certify(run, gamma, 1000, 0.1, far_tail.choose_T0)


def _d_up_n2(gamma, law):
    """E[(B_1 L_1 + B_2 L_2)_+] / (2 gamma) by quadrature: E[(L_1 + L_2)_+] = E[tau(-L_1)]."""
    mp.mp.dps = 30
    xa, pa, a, G, r, zl, w = prm = _parts(law)
    g = mp.mpf(gamma)
    both = pa * _tau(-xa, *prm) + w * mp.quad(
        lambda v: mp.npdf(v) * _tau(-(a + G * mp.exp(r * v - r * r / 2)), *prm), [zl, 0, 4, 12, mp.inf])
    one = _tau(0, *prm)
    return float((g * g * both + 2 * g * (1 - g) * one) / (2 * g))


@pytest.mark.parametrize("sigma0,eps", [(2.0, 0.8), (2.0, 2.0), (1.0, 1.0)])
def test_fft_route_at_n2_against_quadrature(sigma0, eps):
    gamma, law = _xb(sigma0, eps)
    exact = _d_up_n2(gamma, law)
    r = far_tail.certify_bigjump(law, gamma, 2, 0.1)
    assert r.N > 0  # (the FFT treatment's round: §47's route)
    assert r.lower <= exact * (1 + 1e-9) and r.upper >= exact * (1 - 1e-9)
    assert r.upper - r.lower <= 0.1 * r.lower


def test_leg_of_the_finding_against_the_closed_form(monkeypatch):
    """GaussianRandomizer(2), n = 1000, replace, leg A at eps 0.8, rel_tol 0.1: the FFT treatment's bracket (now)
    meets rel_tol and overlaps the closed form's (the switch off), two certified brackets of one value."""
    a = ShuffleAccountant(GaussianRandomizer(2.0, 1), 1000, adjacency="replace")
    new = a._bottom.leg(0, 0.8, 0.1)
    assert new.N > 0 and 0 < new.lower <= new.upper <= new.lower * 1.1
    switch(monkeypatch, "CLOSED_CHEAP_FFT", False)
    b = ShuffleAccountant(GaussianRandomizer(2.0, 1), 1000, adjacency="replace")
    old = b._bottom.leg(0, 0.8, 0.1)
    assert old.N == 0 and 0 < old.lower <= old.upper <= old.lower * 1.1  # (the closed form's: no lattice)
    assert new.lower <= old.upper and old.lower <= new.upper
    assert abs(new.upper - old.upper) <= 0.02 * old.upper  # (measured: 0.3 % apart)
