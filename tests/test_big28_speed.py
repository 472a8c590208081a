"""docs/accountant_tail.md §31: two speed rules of the far-tail treatment.

§31.1: the jump term's cheap power step is skipped where ``fft.cheap_err_floor`` shows that its round-off bound is
certain to be rejected; the floor is checked against the rejected run's own err_q (it must lie below it, and close to
it where the low frequencies make the bound), and the jump term against the code with the rule off (the same floats).
§31.2: the body's passes divide the step by 4 where the bracket misses its share by more than BODY_LEAP; checked
against the halving (BODY_LEAP = inf): both certified, so they overlap; on the regime map's BMG cell at n = 1e8 the
finest pass gives both sides, so the brackets are equal, with fewer passes."""

from __future__ import annotations

import math

import numpy as np

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail, fft, jump
from sharpdp.shuffle.accountant.fft import Part, cheap_err_floor, convolve
from sharpdp.shuffle.accountant.lattice import lattice_laws
from sharpdp.shuffle.laws import laws_for
from _main_floats34 import switch


def _law(randomizer, eps: float):
    gamma, law = laws_for(randomizer, eps, "zero_out")[0]
    return float(gamma), law.shifted(up=True)


def test_floor_below_the_cheap_runs_bound():
    """The floor is below the err_q of the run without the accurate DFT (the bound it predicts), within 1 % of it at
    n = 1e6 (the low frequencies' mean-value terms make that bound), and far below it at n = 10 (its other terms do),
    on the hat lattice law of the Gaussian randomizer's x-vs-bot law (sigma0 = 2, eps = 0.001)."""
    gamma, law = _law(GaussianRandomizer(2.0, 1), 0.001)
    h = 0.076171875
    lat = lattice_laws(law, gamma, h, 273.0, 9.75, lower=False)
    for count, N, near in ((999_999, 122_880, True), (10, 4096, False)):
        p = Part(lat.g, count)
        spectra: dict = {}
        f = cheap_err_floor(p, N, 1, spectra)
        folded, z, _ = spectra[0]
        # the spectrum kept is the one convolve computes (the same floats)
        assert np.array_equal(z, np.fft.rfft(fft.fold(lat.g, N)))
        e = convolve([p], N, 1.0, 0.0, 1).err_q
        assert 0.0 < f <= e
        if near:
            assert f >= 0.99 * e
    assert cheap_err_floor(Part(lat.g, 1), 4096, 1, {}) == 0.0


def test_jump_term_skips_the_cheap_run_with_the_same_floats(monkeypatch):
    """BMG n = 1e6, eps = 0.01 (the regime map's cell, gamma = 0.19783, sigma0 = 0.83338): with the rule both laws'
    first runs are skipped (no convolve with work 0 in the jump term) and certify_bigjump returns the floats of the
    rule off (the floor forced to 0, which never skips); at n = 1e3 the cheap run is kept and must still be run.
    (A floor above the run's err_q, the mutation that could change floats, is caught by the test above.)"""
    gamma, law = _law(BlanketMixedGaussian(0.1978332514643355, 0.8333815446233817, 1), 0.01)
    works: list[float] = []
    orig = jump.convolve

    def spy(parts, N, thr, work, threads=1, spectra=None):
        works.append(work)
        return orig(parts, N, thr, work, threads, spectra)

    monkeypatch.setattr(jump, "convolve", spy)
    on = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1)
    assert works and 0.0 not in works
    works.clear()
    monkeypatch.setattr(jump, "cheap_err_floor", lambda *a: 0.0)
    off = far_tail.certify_bigjump(law, gamma, 10**6, 1e-2, 1)
    assert 0.0 in works
    assert (on.lower, on.upper, on.jump.lo, on.jump.up, on.body_lo, on.body_up) == \
        (off.lower, off.upper, off.jump.lo, off.jump.up, off.body_lo, off.body_up)
    # at n = 1e3 the cheap run is kept: the floor must not skip it
    monkeypatch.setattr(jump, "cheap_err_floor", cheap_err_floor)
    works.clear()
    far_tail.certify_bigjump(law, gamma, 10**3, 1e-2, 1)
    assert 0.0 in works


def _passes(monkeypatch):
    steps: list[float] = []
    orig = far_tail.lattice_pass

    def spy(law, gamma, n, hb, *a, **k):
        steps.append(hb)
        return orig(law, gamma, n, hb, *a, **k)

    monkeypatch.setattr(far_tail, "lattice_pass", spy)
    return steps


def test_body_leap_against_halving(monkeypatch):
    """BMG n = 1e8, eps = 0.001 (the regime map's cell): passes at h, h/4, h/16 against h ... h/16, the same bracket;
    both brackets certified, so they overlap, and the leap's meets rel_tol. Mutation caught: a division by 8 instead
    of 4 (passes at h, h/8, ...: no quarter step)."""
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    gamma, law = _law(BlanketMixedGaussian(0.17065402858238032, 0.7801917124578649, 1), 0.001)
    n = 10**8
    steps = _passes(monkeypatch)
    r = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    leap = list(steps)
    steps.clear()
    monkeypatch.setattr(far_tail, "BODY_LEAP", math.inf)
    off = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    half = list(steps)
    assert len(leap) < len(half) and min(leap) == min(half)
    assert all(b == a / 2 for a, b in zip(half, half[1:]))
    assert any(b == a / 4 for a, b in zip(leap, leap[1:]))
    assert r.lower <= off.upper and off.lower <= r.upper
    assert (r.lower, r.upper) == (off.lower, off.upper)
    assert 0 < r.upper - r.lower <= 1e-2 * r.lower


def test_body_leap_falls_back_to_the_half_step(monkeypatch):
    """A quarter step that does not fit the caps is replaced by the half step it skipped (then the halving goes on):
    the caps simulated by a lattice_pass refusing every step below h/2; the result is then that of the halving
    under the same caps (the finest grid that fitted)."""
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)  # (**) session 41, body41: docs/accountant_tail.md §59.2
    from sharpdp.shuffle.accountant.results import Coarsen

    gamma, law = _law(BlanketMixedGaussian(0.17065402858238032, 0.7801917124578649, 1), 0.001)
    n = 10**8
    steps: list[float] = []
    orig = far_tail.lattice_pass
    first: list[float] = []

    def capped(law_, gamma_, n_, hb, *a, **k):
        steps.append(hb)
        if not first:
            first.append(hb)
        if hb < first[0] / 2:
            return Coarsen(first[0] / 2)
        return orig(law_, gamma_, n_, hb, *a, **k)

    monkeypatch.setattr(far_tail, "lattice_pass", capped)
    r = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    h0 = first[0]
    assert steps[:3] == [h0, h0 / 4, h0 / 2]
    leap_steps = list(steps)
    steps.clear()
    first.clear()
    monkeypatch.setattr(far_tail, "BODY_LEAP", math.inf)
    off = far_tail.certify_bigjump(law, gamma, n, 1e-2, 1)
    assert (r.lower, r.upper) == (off.lower, off.upper)
    assert leap_steps[:3] != steps[:3]


def test_engine_skips_only_a_rejected_cheap_run(monkeypatch):
    """docs/accountant_tail.md §31.3: the body pass's engine skips its run without the accurate DFT only where that run
    is rejected, and returns the same floats. BMG n = 1e8, eps = 0.01 (the regime map's cell; the run rejected, the
    rule fires) and the Gaussian randomizer sigma0 = 0.5, n = 1e6, eps = 0.1 (the run kept, the rule must not fire);
    reference: the engine with the rule off (the floor forced to 0). Mutation caught: a floor x 10 fires on the second
    cell (the kept cheap run lost: other floats); x 3 does not (the test's margin)."""
    from sharpdp.shuffle.accountant import lattice

    cases = (
        (BlanketMixedGaussian(0.03889474223781417, 0.529154815911146, 1), 0.01, 10**8, 0.7734375, 21384.0, 792.0, True),
        (GaussianRandomizer(0.5, 1), 0.1, 10**6, 0.84375, 51840.0, 1728.0, False),
    )
    monkeypatch.setattr(lattice, "CHEAP_SKIP_N", 0)  # (the test itself at every n; the default tries it from 1e7)
    for rnd, eps, n, h, T, B, fires in cases:
        gamma, law = _law(rnd, eps)
        lat = lattice_laws(law, gamma, h, T, B, lower=False)
        said: list[bool] = []
        orig = lattice._cheap_rejected

        def spy(*a, **k):
            said.append(orig(*a, **k))
            return said[-1]

        monkeypatch.setattr(lattice, "_cheap_rejected", spy)
        on = lattice.engine(lat.g, lat.eta, lat.k0, h, n, 1e-2, 1, cheap_first=True)
        monkeypatch.setattr(lattice, "cheap_err_floor", lambda *a: 0.0)
        off = lattice.engine(lat.g, lat.eta, lat.k0, h, n, 1e-2, 1, cheap_first=True)
        monkeypatch.setattr(lattice, "cheap_err_floor", cheap_err_floor)
        monkeypatch.setattr(lattice, "_cheap_rejected", orig)
        assert on == off
        assert any(said[:1]) == fires
        assert off.cheap == (not fires)
