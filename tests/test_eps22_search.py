"""get_epsilon's phase 1 from the asymptotic model's slope with a straddling second point, and phase 2's report
lower values deciding get_delta(0) > delta (docs/accountant.md §8, steps 1 and 4)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.plain import Bracket


@pytest.mark.parametrize("sigma0, n, x", [(1.0, 100, 3.0), (4.6, 10**6, 8e-4), (2.0, 10**4, 0.04)])
def test_guess_slope_is_the_models_log_log_derivative(sigma0, n, x):
    """_guess_slope(x) against a central difference of the model log delta = -a^2/2 - log(2 pi)/2 - 2 log a -
    log(chi sqrt n), a = x chi sqrt(n), chi = min over the zero-out laws at eps = 0 of sqrt(gamma)/sd, in _root's
    coordinate -d log(-log delta) / d log x. Catches: a sign error, the slope of log delta instead of log(-log
    delta), a missing 2 (the a^-2 factor)."""
    acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n)
    pairs = S.laws_for(acc.randomizer, 0.0, acc.adjacency)
    chi = min(math.sqrt(g) / law.std() for g, law in pairs)

    def ll(z: float) -> float:  # log(-log delta_model) at x = e^z
        a = math.exp(z) * chi * math.sqrt(n)
        return math.log(0.5 * a * a + 0.5 * math.log(2 * math.pi) + 2 * math.log(a) + math.log(chi * math.sqrt(n)))

    h = 1e-5
    ref = -(ll(math.log(x) + h) - ll(math.log(x) - h)) / (2 * h)
    k = S._guess_slope(acc, x)
    assert k is not None and k < 0
    assert abs(k - ref) <= 1e-6 * abs(ref), (k, ref)


@pytest.mark.parametrize("slope_error", [0.75, 1.1, 1.25])
def test_straddle_ends_phase1_in_two_evaluations(slope_error):
    """_root in phase 1's mode (converge) on delta(x) = exp(-(x/x1)^2 c), whose log(-log delta) is exactly linear
    in log x (slope -2), started 5 % above the root with a first slope off by -25 % to +25 %: with the straddle the
    second point lies on the other side of the root and the pair's interpolation (exact for this model) ends the
    search after two evaluations, at the analytic root; without it, a too steep first slope (the model's step falls
    short) puts the second point on the first one's side and a third evaluation is needed. Catches: the straddle on
    the wrong side, or not applied to the first model point."""
    delta, root = 1e-6, 0.7
    c = -math.log(delta)

    def make():
        xs: list[float] = []

        def fun(x: float) -> float:
            xs.append(x)
            return math.exp(-c * (x / root) ** 2)
        return fun, xs

    kk = -2.0 * slope_error  # _root's coordinate: f = log(-log delta) - log(-log fun), slope -2 exactly
    fun, xs = make()
    _, _, r, _ = S._root(fun, delta, 0.0, 10.0, 1e-2, x0=1.05 * root, slope=kk, converge=True, straddle=S._STRADDLE)
    assert len(xs) == 2 and (xs[0] - root) * (xs[1] - root) < 0, xs
    assert r is not None and abs(r - root) <= 1e-9 * root
    fun, xs = make()
    S._root(fun, delta, 0.0, 10.0, 1e-2, x0=1.05 * root, slope=kk, converge=True)
    assert len(xs) >= (3 if slope_error > 1.0 else 2), xs


def test_report_lower_above_delta_spares_the_loose_pass_at_half_the_root(monkeypatch):
    """BMG(0.01568, 0.4185), n = 1e6, delta = 1e-6 (the calibrate_bmg pick at eps = 4): phase 2's lower end is a
    report whose lower value exceeds delta, which rules out the answer 0 (get_delta(0) >= D_up(0) >= that lower
    value); no loose Bracket pass (rel_tol 0.5) is then made. Independent check: a fresh accountant's report at
    one of the points evaluated has lower > delta. Catches: report lower values not recorded (the loose pass
    comes back), or recorded where they are not lower values (the answer 0 would need get_delta(0) <= delta)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    rnd = BlanketMixedGaussian(0.0156813351197499, 0.4185088411319987, 1)
    acc = ShuffleAccountant(rnd, 10**6)
    loose: list[float] = []
    seen: list[float] = []
    certify, report = S.certify, ShuffleAccountant._report

    def counted(law, gamma, n, rel, threads, mode=Bracket(), *a, **k):
        if isinstance(mode, Bracket) and rel == 0.5:
            loose.append(rel)
        return certify(law, gamma, n, rel, threads, mode, *a, **k)

    def rep(self, e, *a, **k):  # (every report: get_delta's and the look's of docs/accountant.md §8.4)
        seen.append(float(e))
        return report(self, e, *a, **k)

    # (**) session 31, eps31: the search from the Gaussian-limit guess (the single-big-jump first point off,
    # docs/accountant.md §8.11): with it this cell's phase 2 starts within 0.3 xtol of the root and its lower end's
    # report no longer has lower > delta (the loose pass is then made); the mechanism under test is unchanged
    first_point = S.first_point
    S.certify, ShuffleAccountant._report, S.first_point = counted, rep, lambda laws_at, n, delta, g0, hi: (g0, None)
    try:
        e = acc.get_epsilon(1e-6)
    finally:
        S.certify, ShuffleAccountant._report, S.first_point = certify, report, first_point
    assert loose == []
    assert 3.99 < e < 4.01
    fresh = ShuffleAccountant(rnd, 10**6)
    assert any(fresh.report(x).lower > 1e-6 for x in set(seen) if x < e)
    assert fresh.get_delta(e) <= 1e-6
