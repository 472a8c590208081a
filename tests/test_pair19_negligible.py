"""get_delta_bounds(negligible=...) and the speed-only changes of docs/accountant_tail.md §16-§17.

A coarse value (refinement stopped below the level) must still be a certified upper value: at least the
lower value of a fresh bracket at the same eps, below the level; values above the level must be the usual
ones bit for bit; the privacy profile's cache must not hand a coarse value to a request without the level.
The in-place rewrites of the stop-loss grid and of the Chernoff steering must give the floats of the plain
formulas (written out here independently).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sharpdp.shuffle as sh
from sharpdp.shuffle import profile as P
from sharpdp.shuffle.accountant.chernoff import Chernoff
from sharpdp.shuffle.accountant.jump import stop_loss_grid
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.randomizers import BlanketMixedGaussian
from sharpdp.shuffle.round_cache import clear_caches, value_cache

U = 2.0**-53
BMG = (0.04089409561900239, 0.5960134902126553, 1)  # the heavy round of bench/bench_composition.py
N = 10**5


def _acc():
    return sh.ShuffleAccountant(BlanketMixedGaussian(*BMG), N)


def test_coarse_value_certified_and_below_level():
    """eps = 6 (delta ~ 1e-15): with the level 1e-13 the value is a cheap one below it, and not below the
    lower value of a fresh bracket (itself below the true blanket bound)."""
    e, level = 6.0, 1e-13
    lo_c, up_c = _acc().get_delta_bounds(e, lower=False, negligible=level)
    lo_f, up_f = _acc().get_delta_bounds(e)
    assert 0.0 < lo_f <= up_f < level
    assert up_c < level
    assert up_c >= lo_f  # certified: above a certified lower value of the same quantity
    assert lo_c <= up_c


def test_values_above_level_unchanged():
    """eps = 1 (delta ~ 1e-6) with the level 1e-12: the same float as without the level (both modes)."""
    for lower in (False, True):
        a = _acc().get_delta_bounds(1.0, lower=lower, negligible=1e-12)
        b = _acc().get_delta_bounds(1.0, lower=lower)
        assert a[1] == b[1]


@pytest.mark.parametrize("bad, exc", [(-1e-3, ValueError), (1.5, ValueError), (math.nan, ValueError),
                                      ("1e-3", TypeError), (True, TypeError)])
def test_negligible_validated(bad, exc):
    with pytest.raises(exc, match="negligible"):
        _acc().get_delta_bounds(1.0, negligible=bad)


def test_profile_cache_does_not_serve_coarse_values():
    """A coarse value kept by the profile's value cache is computed again for a request without the level,
    and the value then returned is the usual one."""
    clear_caches()
    acc = _acc()
    e = np.array([6.0])
    coarse = P._positive_bounds(acc, e, False, 1e-13)[1][0]
    kept = value_cache(acc)[6.0]
    assert math.isnan(kept[0]) and kept[1:] == (coarse, 1e-13)  # marked, its lower value dropped
    fine = float(P.privacy_profile(acc, 6.0))
    assert len(value_cache(acc)[6.0]) == 2  # replaced by the usual value
    ref = float(_acc().get_delta_bounds(6.0, lower=False)[1])
    assert coarse < 1e-13
    assert fine == ref
    clear_caches()


def test_sampler_passes_floor_to_doubling_points_only():
    """The adaptive sampler asks for coarse values (level = the floor) at its doubling and probe points only;
    the even points and the refinement stages get the usual values."""
    seen = []

    def evaluate(ks, need_lower=True, negligible=0.0):
        ks = np.asarray(ks)
        seen.append((ks.tolist(), negligible))
        d = np.exp(-2.0 * ks * 0.05)  # delta(eps) = e^{-2 eps}, eps = k dx
        return d * 0.99, d

    P._sample_profile(evaluate, 2000, 0.05, 1e-6, 60, 2e-3, progress=False, upper_first=True)
    levels = {lvl for _, lvl in seen}
    assert levels == {0.0, 1e-6}
    for ks, lvl in seen:
        if lvl > 0.0:
            assert len(ks) == 1  # one doubling or probe point per call
    # the first coarse call is k = 1, and the last coarse point is the one at or below the floor
    coarse = [ks[0] for ks, lvl in seen if lvl > 0.0]
    assert coarse[0] == 1 and math.exp(-2.0 * coarse[-1] * 0.05) <= 1e-6
    # (without upper-first values, no level is passed: a lower=True reference pair keeps its brackets)
    seen.clear()
    P._sample_profile(evaluate, 2000, 0.05, 1e-6, 60, 2e-3, progress=False, upper_first=False)
    assert {lvl for _, lvl in seen} == {0.0}


def _stop_loss_grid_plain(law, t0, dt, k, step):
    """The stop-loss grid's broadcast formula (docs/accountant_tail.md §4, evaluation) with fresh temporaries."""
    j = np.arange(k, dtype=float)
    t = t0 + j * dt
    idx = np.arange(0, k, step)
    if idx[-1] != k - 1:
        idx = np.append(idx, k - 1)
    tc = t[idx]
    lo_c, up_c = law.stop_loss(tc)
    ta = tc - (np.abs(tc) * 1e-12 + 1e-300)
    pa = law.prob_above_up(ta)
    nfull = idx.size - 2
    F = nfull * step
    fr = np.clip(np.arange(step, dtype=float) / step, 0.0, 1.0)[None, :]
    ua, ub = up_c[:nfull, None], up_c[1:nfull + 1, None]
    up = (((1.0 - fr) * ua + fr * ub + 8 * U * np.maximum(ua, ub)) * (1 + 1e-12)).ravel()
    la, pa_, ta_ = lo_c[:nfull, None], pa[:nfull, None], ta[:nfull, None]
    lo = (np.maximum(la - pa_ * (t[:F].reshape(nfull, step) - ta_) * (1 + 1e-12) - 8 * U * la, 0.0)
          * (1 - 1e-12)).ravel()
    return lo, up, F


def test_stop_loss_grid_in_place_same_floats():
    """The in-place stop-loss grid equals the broadcast formula bit for bit on its full segments."""
    law = laws_for(BlanketMixedGaussian(*BMG), 5.0, "zero_out")[0][1]
    t0, dt, k = 20000.0, 0.3125, 40000
    step = int(min(64, t0 / (1024.0 * dt)))
    assert step == 62  # (the grid's interpolation interval at these arguments: full segments exist)
    lo, up = stop_loss_grid(law, t0, dt, k)
    lo_r, up_r, F = _stop_loss_grid_plain(law, t0, dt, k, step)
    assert F > 0.9 * k
    idx = np.arange(0, F, step)
    keep = np.ones(F, bool)
    keep[idx] = False  # (the evaluated nodes take the closed form's own values, in both)
    assert np.array_equal(up[:F][keep], up_r[keep]) and np.array_equal(lo[:F][keep], lo_r[keep])
    # and the bracket holds the closed form at a few interior points
    for i in (1, 777, 12345, F - 3):
        lo_x, up_x = law.stop_loss([t0 + i * dt])
        assert lo[i] <= up_x[0] and up[i] >= lo_x[0]


def test_chernoff_steering_same_floats():
    """Chernoff._approx (in place, memoised) equals the plain formula lg + lam x, exp(max(z - m, -700)), ...
    bit for bit, also on a repeated lam."""
    rng = np.random.default_rng(19)
    g = rng.random(3000) * 1e-3
    g[rng.random(3000) < 0.1] = 0.0
    eta = g * 1e-12
    ch = Chernoff(g, eta, -1000, 0.25, 500)
    k = np.nonzero(ch.gp > 0)[0]
    lg, x = np.log(ch.gp[k]), (-1000 + k).astype(float) * 0.25
    for lam in (1e-3, -2e-2, 0.3, 1e-3):
        z = lg + lam * x
        m = float(z.max())
        e = np.exp(np.maximum(z - m, -700.0))
        s0 = float(e.sum())
        ex = e * x
        m1 = float(ex.sum()) / s0
        ref = (m + math.log(s0), m1, max(float((ex * x).sum()) / s0 - m1 * m1, 0.0))
        assert ch._approx(lam) == ref
