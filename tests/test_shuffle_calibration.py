"""optimal_bmg (chi-constrained Err_1 optimum) and calibrate_bmg (certified-delta calibration)."""

import math

import numpy as np
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from sharpdp.shuffle import BlanketMixedGaussian, calibrate_bmg, optimal_bmg, template_delta_estimate
from sharpdp.shuffle import calibration as C
from sharpdp.shuffle.calibration import estimates as CE
from sharpdp.shuffle.calibration import optimal as CO
from sharpdp.shuffle.calibration import search as CS


# ---------------------------------------------------------------- optimal_bmg
def _err_at_chi(a, chi, d):
    return d / (a * a * np.log1p((1 - a) / (a * a * chi * chi))) + (1 - a) / a


def test_optimal_bmg_exact_optimum_chi2_d1():
    b = optimal_bmg(2.0, 1)
    # docs/papers.md §1.2 item 6: the true optimum at chi = 2, d = 1 is ~10.75, not the asymptotic 7.78
    assert b.mse_single == pytest.approx(10.7497, abs=1e-3)
    assert b.mse_single > 4 * (1 + 1.5 * 2 ** (-2 / 3)) + 2.9


@pytest.mark.parametrize("chi,d", [(0.3, 1), (2.0, 1), (5.0, 3), (50.0, 10), (1e3, 2), (1e5, 1)])
def test_optimal_bmg_constraint_active_and_beats_dense_grid(chi, d):
    b = optimal_bmg(chi, d)
    assert isinstance(b, BlanketMixedGaussian) and b.dim == d and 0 < b.gamma < 1
    assert chi <= b.chi_lo <= chi * (1 + 1e-12)  # feasible, constraint active
    # brute force over A = 1 - gamma (constraint at equality), 2e5 log-spaced points
    a = np.exp(np.linspace(math.log(1 - b.gamma) - 3, min(math.log(1 - b.gamma) + 3, -1e-12), 200_001))
    assert b.mse_single <= _err_at_chi(a, chi, d).min() * (1 + 1e-9)


def test_optimal_bmg_beats_every_feasible_point_of_a_2d_grid():
    chi, d = 3.0, 2
    b = optimal_bmg(chi, d)
    g, s = np.meshgrid(np.linspace(0.01, 0.99, 400), np.linspace(0.2, 10.0, 400))
    chi_lo = np.sqrt(g / ((1 - g) ** 2 * np.expm1(1 / s**2)))
    err = d * s**2 / (1 - g) ** 2 + g / (1 - g)
    feasible = chi_lo >= chi
    assert feasible.any()
    assert b.mse_single <= err[feasible].min()
    assert err[feasible].min() <= b.mse_single * 1.02  # the grid gets close: same problem


def test_optimal_bmg_asymptotics():
    # Err_1 / (d chi^2) = 1 + 1.5 chi^(-2/3) + O(chi^(-4/3))
    # ("Shuffling-Aware Optimization for Private Vector Mean Estimation", Theorem 4.1)
    scaled = []
    for chi in (1e2, 1e3, 1e4, 1e5, 1e6):
        rem = optimal_bmg(chi, 1).mse_single / chi**2 - 1 - 1.5 * chi ** (-2 / 3)
        scaled.append(rem * chi ** (4 / 3))
        # the paper's choice A = chi^(-2/3) is feasible and never better than the optimum
        a = chi ** (-2 / 3)
        assert optimal_bmg(chi, 1).mse_single <= _err_at_chi(a, chi, 1) * (1 + 1e-12)
    scaled = np.array(scaled)
    assert np.all((scaled > 1.0) & (scaled < 3.0))  # remainder is Theta(chi^(-4/3))
    assert abs(scaled[-1] - scaled[-2]) < 0.01 * scaled[-1]  # and its constant has converged
    # for d > 1 the same leading behaviour holds
    rem = optimal_bmg(1e5, 5).mse_single / (5 * 1e10) - 1 - 1.5 * 1e5 ** (-2 / 3)
    assert 0 < rem * 1e5 ** (4 / 3) < 3.0


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 1e4), st.floats(1.001, 3.0), st.integers(1, 20))
def test_optimal_bmg_monotone_in_chi_and_dim(chi, factor, d):
    e = optimal_bmg(chi, d).mse_single
    assert optimal_bmg(chi * factor, d).mse_single >= e * (1 - 1e-9)
    assert optimal_bmg(chi, d + 1).mse_single >= e * (1 - 1e-9)


@pytest.mark.parametrize("chi,dim,name", [(0.0, 1, "chi"), (-1.0, 1, "chi"), (float("nan"), 1, "chi"),
                                          (float("inf"), 1, "chi"), (1.0, 0, "dim")])
def test_optimal_bmg_bad_input(chi, dim, name):
    with pytest.raises(ValueError, match=name):
        optimal_bmg(chi, dim)


def test_template_estimate_matches_seed_template_at_large_a():
    # (phi(a) - a Phi(-a))/(chi sqrt n) ~ f_{n,eps}(chi) = exp(-a^2/2)/(sqrt(2 pi) chi^3 eps^2 n^1.5)
    chi, n = 2.0, 10**6
    for a, tol in ((10.0, 0.03), (30.0, 0.004)):
        eps = a / (chi * math.sqrt(n))
        f = math.exp(-a * a / 2) / (math.sqrt(2 * math.pi) * chi**3 * eps**2 * n**1.5)
        assert template_delta_estimate(chi, n, eps) / f == pytest.approx(1.0, abs=tol)
    assert template_delta_estimate(1e-9, 1, 0.0) == 1.0  # capped
    chis = np.array([0.5, 1.0, 2.0])
    vals = template_delta_estimate(chis, 1000, 0.1)
    assert vals.shape == (3,) and np.all(np.diff(vals) < 0)


# ---------------------------------------------------------------- calibrate_bmg with a stand-in accountant
class _StandIn:
    """Deterministic stand-in with the ShuffleAccountant interface (not a privacy bound).

    delta depends on gamma beyond chi_lo, so the outer search over gamma matters. Every call is
    recorded as (gamma, sigma0, rel_tol, value).
    """

    calls: list = []

    def __init__(self, randomizer, n, adjacency="zero_out", rel_tol=1e-2):
        self.r, self.n, self.rel_tol = randomizer, n, rel_tol
        if adjacency not in ("zero_out", "replace"):
            raise ValueError(f"adjacency must be 'zero_out' or 'replace', got {adjacency!r}")

    def value(self, epsilon):
        return template_delta_estimate(self.r.chi_lo, self.n, epsilon) * (1.0 + 0.5 * (1.0 - self.r.gamma))

    def get_delta(self, epsilon):
        return self.value(epsilon)

    def get_delta_bounds(self, epsilon):
        d = self.value(epsilon)
        type(self).calls.append((self.r.gamma, self.r.sigma0, self.rel_tol, d))
        return d, d


def _patch(monkeypatch, cls):
    cls.calls = []
    monkeypatch.setattr(CS, "make_accountant",
                        lambda r, n, adjacency, rel_tol=CS.CERT_REL_TOL: cls(r, n, adjacency, rel_tol))
    return cls


@pytest.fixture
def stand_in(monkeypatch):
    return _patch(monkeypatch, _StandIn)


def _certified_at_full_accuracy(calls, b, delta, rel=CS.CERT_REL_TOL):
    """The returned parameters were evaluated at the certifying accuracy ``rel``, <= delta (the accountant's default,
    or the report's rel_tol 0.02 on the loose search: docs/calibration.md §12)."""
    return any(g == b.gamma and s == b.sigma0 and rt == rel and d <= delta for g, s, rt, d in calls)


def _brute_force_err(n, eps, delta, d, gammas):
    """The smallest Err_1 over ``gammas`` of the BMG at the smallest chi meeting the stand-in's delta <= delta.

    Per gamma, a bisection in log chi over [1e-10, 1e14] (all gammas at once, as arrays) on the stand-in's
    value at chi (_StandIn.value: the template estimate at chi_lo times 1 + (1 - gamma)/2; chi_lo of the BMG at
    _sigma0_for_chi(gamma, chi) is chi up to a few ulps), 120 steps (to adjacent floats after ~60); then
    Err_1 of the BMG at _sigma0_for_chi(gamma, hi), the feasible end."""
    g = np.asarray(gammas, dtype=float)
    lo, hi = np.full(g.shape, 1e-10), np.full(g.shape, 1e14)
    for _ in range(120):
        m = np.sqrt(lo * hi)
        ok = template_delta_estimate(m, n, eps) * (1.0 + 0.5 * (1.0 - g)) <= delta
        hi, lo = np.where(ok, m, hi), np.where(ok, lo, m)
    return min(BlanketMixedGaussian(float(gi), CO._sigma0_for_chi(float(gi), float(h)), d).mse_single
               for gi, h in zip(g, hi))


@pytest.mark.parametrize("n,eps,delta,d", [(1000, 1.0, 1e-5, 1), (10**5, 0.3, 1e-8, 4), (10, 2.0, 1e-3, 2),
                                           (10**4, 0.0, 1e-5, 1)])
def test_calibrate_is_feasible_rechecked_and_optimal(stand_in, n, eps, delta, d):
    b = calibrate_bmg(n, eps, delta, d, progress=False)
    assert isinstance(b, BlanketMixedGaussian) and b.dim == d
    assert _certified_at_full_accuracy(stand_in.calls, b, delta)
    assert len(stand_in.calls) <= 10  # the evaluation budget
    assert _StandIn(b, n).get_delta(eps) <= delta
    a = 1 - b.gamma
    gammas = 1 - np.exp(np.linspace(math.log(a) - 1.5, min(math.log(a) + 1.5, -1e-9), 300))
    brute = _brute_force_err(n, eps, delta, d, gammas)
    assert b.mse_single <= brute * (1 + 1e-3)
    # and it is not absurdly better either (it is the same problem)
    assert b.mse_single >= brute * (1 - 1e-3)


@seed(34)  # (a fixed stream: the derandomized one drew the known miss below in one environment and not in another)
@settings(max_examples=15, deadline=None)
@given(st.integers(2, 10**9), st.floats(0.0, 4.0), st.floats(1e-12, 1e-2), st.integers(1, 8))
def test_calibrate_property_certified_within_budget_near_optimal(n, eps, delta, d):
    calls = []

    class Rec(_StandIn):
        def get_delta_bounds(self, epsilon):
            dv = self.value(epsilon)
            calls.append((self.r.gamma, self.r.sigma0, self.rel_tol, dv))
            return dv, dv

    orig = CS.make_accountant
    CS.make_accountant = lambda r, n_, adjacency, rel_tol=CS.CERT_REL_TOL: Rec(r, n_, adjacency, rel_tol)
    try:
        rep = C.calibrate_bmg_report(n, eps, delta, d, progress=False)
    finally:
        CS.make_accountant = orig
    b = rep.randomizer
    assert rep.evaluations == len(calls) <= 10
    assert _certified_at_full_accuracy(calls, b, delta, rep.rel_tol) and rep.delta_bounds[1] <= delta
    # reference: the optimum over a gamma grid around the answer (exact bisection in chi)
    a = 1 - b.gamma
    gammas = 1 - np.exp(np.linspace(math.log(a) - 1.0, min(math.log(a) + 1.0, -1e-9), 25))
    # near-optimal: the model search trades <= 0.5 % of Err_1 for <= 10 certified evaluations
    assert b.mse_single <= _brute_force_err(n, eps, delta, d, gammas) * (1 + 5e-3)


def test_calibrate_near_optimal_two_users():
    """The property's example drawn in session 34's CI: with the stand-in, n = 2, eps = 1, delta = 5.96e-8, d = 1
    ended at Err_1 23.87, 1.048x the brute-force optimum 22.76 over gamma (stage 3's steps in gamma held to the trust
    region in x: 0.02 in gamma a step); with its growth after accurate steps (docs/calibration.md §13.2) 22.7615,
    1.0001x."""
    f = test_calibrate_property_certified_within_budget_near_optimal.hypothesis.inner_test
    f(2, 1.0, 5.960464477539063e-08, 1)


def test_calibrate_near_optimal_at_large_eps_tiny_delta(stand_in):
    """Found by the random search of the property above: with the stand-in, n = 5664, eps = 4, delta = 1e-12, d = 8
    ended at Err_1 4.297 after its 10 evaluations, 2.27x the brute-force optimum 1.889 over gamma (the stand-in's value
    0 at the start, -inf in the model, left stage 1 without a slope); with that value as log TINY in the model
    (docs/calibration.md §13.3) 1.8915, 1.0005x."""
    n, eps, delta, d = 5664, 4.0, 1.0000000000000002e-12, 8
    b = calibrate_bmg(n, eps, delta, d, progress=False)
    assert _StandIn(b, n).get_delta(eps) <= delta  # certified (holds)
    a = 1 - b.gamma
    gammas = 1 - np.exp(np.linspace(math.log(a) - 1.0, min(math.log(a) + 1.0, -1e-9), 25))
    assert b.mse_single <= _brute_force_err(n, eps, delta, d, gammas) * (1 + 5e-3)


def test_calibrate_progress_bar(stand_in, capsys, monkeypatch):
    monkeypatch.setattr(__import__("sharpdp._progress")._progress._PlainBar, "quiet", 0.0)  # lines from the 1st update, not after 2 s
    calibrate_bmg(1000, 1.0, 1e-5, 1, progress=False)
    assert capsys.readouterr().err == ""
    calibrate_bmg(1000, 1.0, 1e-5, 1, progress=None)  # fast: the delayed bar never shows
    assert capsys.readouterr().err == ""
    calibrate_bmg(1000, 1.0, 1e-5, 1, progress=True)
    out = capsys.readouterr().err
    assert "calibrating BMG" in out
    if __import__("importlib").util.find_spec("tqdm") is not None:  # tqdm: ends at 100 %, total the budget before
        assert "100%" in out and f"/{CS._MAX_EVALS} " in out
    # without tqdm: the plain fallback, its count over the budget, then over the evaluations made
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)
    stand_in.calls = []
    calibrate_bmg(1000, 1.0, 1e-5, 1, progress=True)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"calibrating BMG: 1/{CS._MAX_EVALS} ") and err[-1].endswith("(done)")
    assert all(f"/{CS._MAX_EVALS} " in line for line in err[:-1])  # the total does not move
    assert err[-1].startswith(f"calibrating BMG: {len(stand_in.calls)}/{len(stand_in.calls)} accountant evaluations")


def test_calibrate_recheck_failure_is_an_error(monkeypatch):
    class Refuses(_StandIn):
        """Certifies nothing at full accuracy (the search values look fine)."""

        def get_delta_bounds(self, epsilon):
            lo, up = super().get_delta_bounds(epsilon)
            return (lo, up) if self.rel_tol != CS.CERT_REL_TOL else (1.0, 1.0)

    _patch(monkeypatch, Refuses)
    monkeypatch.setattr(CS, "_SEARCH_REL_TOL", 0.1)  # a looser search accuracy than the certificate's
    with pytest.raises(RuntimeError, match="re-check"):
        calibrate_bmg(1000, 1.0, 1e-5, 1, progress=False)
    assert len(Refuses.calls) <= CS._MAX_EVALS + CS._FALLBACK_EVALS


def test_calibrate_failed_check_falls_back_to_the_safe_side(monkeypatch):
    class Optimistic(_StandIn):
        """The search values are 40 % below the full-accuracy ones: the first check fails."""

        def get_delta_bounds(self, epsilon):
            lo, up = super().get_delta_bounds(epsilon)
            return (lo, up) if self.rel_tol == CS.CERT_REL_TOL else (0.6 * lo, 0.6 * up)

    _patch(monkeypatch, Optimistic)
    monkeypatch.setattr(CS, "_SEARCH_REL_TOL", 0.1)  # a looser search accuracy than the certificate's
    n, eps, delta = 1000, 1.0, 1e-5
    rep = C.calibrate_bmg_report(n, eps, delta, 1, progress=False)
    fine = [c for c in Optimistic.calls if c[2] == CS.CERT_REL_TOL]
    assert fine[0][3] > delta  # the first certification failed ...
    assert _certified_at_full_accuracy(Optimistic.calls, rep.randomizer, delta)  # ... the answer is certified
    assert rep.evaluations <= 10
    assert _StandIn(rep.randomizer, n).value(eps) <= delta
    # and the fallback did not give much away: within 1 % of the exact stand-in optimum's Err_1
    a = 1 - rep.randomizer.gamma
    gammas = 1 - np.exp(np.linspace(math.log(a) - 0.5, min(math.log(a) + 0.5, -1e-9), 41))
    assert rep.randomizer.mse_single <= _brute_force_err(n, eps, delta, 1, gammas) * 1.01


@pytest.mark.parametrize("args,name", [
    ((0, 1.0, 1e-5, 1), "n"), ((10.5, 1.0, 1e-5, 1), "n"),
    ((10, -0.1, 1e-5, 1), "epsilon"), ((10, float("nan"), 1e-5, 1), "epsilon"),
    ((10, 1.0, 0.0, 1), "delta"), ((10, 1.0, 1.0, 1), "delta"), ((10, 1.0, float("nan"), 1), "delta"),
    ((10, 1.0, 1e-5, 0), "dim"),
])
def test_calibrate_bad_input(stand_in, args, name):
    with pytest.raises(ValueError, match=name):
        calibrate_bmg(*args, progress=False)


def test_calibrate_bad_adjacency(stand_in):
    with pytest.raises(ValueError, match="adjacency"):
        calibrate_bmg(100, 1.0, 1e-5, 1, adjacency="nope", progress=False)
    with pytest.raises(TypeError, match="adjacency"):
        calibrate_bmg(100, 1.0, 1e-5, 1, adjacency=1, progress=False)
    with pytest.raises(ValueError, match="adjacency"):
        C.calibrate_gaussian(100, 1.0, 1e-5, adjacency="nope")


# ---------------------------------------------------------------- with the certified accountant
def test_calibrate_with_certified_accountant():
    acc = pytest.importorskip("sharpdp.shuffle.accountant")
    n, eps, delta, d = 1000, 0.05, 1e-5, 2  # chi ~ 1.9: light enough tails for a quick accountant
    b = calibrate_bmg(n, eps, delta, d, progress=False)
    assert acc.ShuffleAccountant(b, n).get_delta(eps) <= delta
    # (nearly) smallest: 1% less noise at the same gamma is no longer certified
    worse = BlanketMixedGaussian(b.gamma, b.sigma0 * 0.99, d)
    assert acc.ShuffleAccountant(worse, n).get_delta(eps) > delta
    # better than the chi-optimal BMG at the template's chi guess whenever that one is certified
    guess = optimal_bmg(C.template_chi(n, eps, delta), d)
    if acc.ShuffleAccountant(guess, n).get_delta(eps) <= delta:
        assert b.mse_single <= guess.mse_single * (1 + 1e-3)


@pytest.fixture
def counted(monkeypatch):
    """Counts certified accountant evaluations (ShuffleAccountant.get_delta_bounds calls)."""
    from sharpdp.shuffle import accountant as A

    box = {"n": 0}
    orig = A.ShuffleAccountant.get_delta_bounds

    def wrapped(self, epsilon):
        box["n"] += 1
        return orig(self, epsilon)

    monkeypatch.setattr(A.ShuffleAccountant, "get_delta_bounds", wrapped)
    return box


# Answers of the calibration this one replaced (a rel_tol 0.1 certified search over gamma and chi,
# 19-67 evaluations), recorded on the same accountant: Err_1 (mse_single) and evaluation count.
# "No worse" allows the old search's own stated accuracy (a few 1e-4 relative in Err_1, from its
# chi bracket 2e-4 and its flat-bottom gamma resolution); most answers are strictly better
# (the certificate is now taken at rel_tol 1e-2 instead of 0.1).
_SAME = 5e-4
_PREVIOUS_BMG = [
    ((1000, 0.5, 1e-6, 1, "zero_out"), 1.6593355955773554, 57),  # heavy-tailed: sigma0 ~ 1.03, gamma ~ 0.15
    ((1000, 0.05, 1e-5, 2, "zero_out"), 19.001574346485903, 26),
    ((10**4, 0.02, 1e-6, 1, "zero_out"), 8.244950606042256, 23),
    ((10**5, 0.01, 1e-6, 4, "zero_out"), 14.929873984003493, 19),
    ((300, 0.2, 1e-5, 1, "zero_out"), 4.742867479255274, 42),
    ((1000, 0.05, 1e-5, 1, "replace"), 22.49205485850801, 67),
]


@pytest.mark.parametrize("case,previous_err,previous_evals", _PREVIOUS_BMG)
def test_calibrate_bmg_no_worse_than_before_in_at_most_10_evaluations(counted, case, previous_err, previous_evals):
    from sharpdp.shuffle import ShuffleAccountant

    n, eps, delta, d, adjacency = case
    rep = C.calibrate_bmg_report(n, eps, delta, d, adjacency=adjacency, progress=False)
    assert rep.evaluations == counted["n"] <= 10 < previous_evals
    b = rep.randomizer
    assert b.mse_single <= previous_err * (1 + _SAME)
    # independent re-check by a fresh accountant at its default accuracy, by the method the report names
    # (at n <= 500 possibly the closed-form bracket, docs/accountant.md §6.9)
    acc = ShuffleAccountant(b, n, adjacency)
    lo, up = (float(v) for v in getattr(acc, rep.certificate)(eps))
    assert up <= delta and (lo, up) == rep.delta_bounds
    assert acc.get_delta_bounds(eps)[1] <= delta


_PREVIOUS_GAUSS = [((1000, 0.3, 1e-5), 1.576171875, 13), ((10**4, 0.05, 1e-6), 1.7958984375, 13)]


@pytest.mark.parametrize("case,previous_sigma0,previous_evals", _PREVIOUS_GAUSS)
def test_calibrate_gaussian_no_worse_than_before_in_at_most_10_evaluations(counted, case, previous_sigma0,
                                                                           previous_evals):
    from sharpdp.shuffle import ShuffleAccountant

    n, eps, delta = case
    rep = C.calibrate_gaussian_report(n, eps, delta)
    assert rep.evaluations == counted["n"] <= 10 < previous_evals
    g = rep.randomizer
    assert g.mse_single <= previous_sigma0**2 * (1 + _SAME)
    assert ShuffleAccountant(g, n).get_delta(eps) <= delta
    if n > 1000:  # (one case is enough: each accountant call there takes seconds)
        return
    # nearly smallest: 0.5 % less noise is no longer certified
    assert ShuffleAccountant(type(g)(g.sigma0 * 0.995, 1), n).get_delta(eps) > delta


def test_calibrate_gaussian_certifies_near_the_bracketed_boundary():
    """Regression: the search brackets the boundary (sigma0 0.837 above, 0.871 below the target), but
    the first certification used to jump to the model's root 4 in log sigma0 away (sigma0 = 45.7) and
    return 21.6. The answer must be within 2 % of a plain bisection on the certified accountant."""
    from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

    n, eps, delta = 10**5, 2.0, 1e-6
    rep = C.calibrate_gaussian_report(n, eps, delta)
    g = rep.randomizer
    lo, up = ShuffleAccountant(g, n).get_delta_bounds(eps)  # independent re-check at the default accuracy
    assert up <= delta and (lo, up) == rep.delta_bounds
    assert rep.evaluations <= 10
    a, b = 0.80, 0.90  # plain bisection on sigma0 (the certified delta decreases in sigma0)
    for _ in range(4):
        m = math.sqrt(a * b)
        if ShuffleAccountant(GaussianRandomizer(m, 1), n).get_delta(eps) <= delta:
            b = m
        else:
            a = m
    assert 0.80 < a and b < 0.90  # both sides of the boundary were seen: [a, b] brackets it
    assert a < g.sigma0 <= b * 1.02  # certified, so above the last uncertified a; at most 2 % above b


# ---------------------------------------------------------------- the search's model (estimates only)
@pytest.mark.parametrize("gamma,sigma0,n,eps", [(0.007455, 0.4019, 10**8, 1.0), (0.0172, 0.431, 10**4, 8.0),
                                                (0.3, 1.3, 1000, 0.1), (0.9, 5.0, 100, 0.001), (0.5, 0.2, 10, 2.0)])
def test_big_jump_estimate_is_the_accountants_stop_loss_bmg(gamma, sigma0, n, eps):
    # reference: the accountant's own rigorous bracket of tau(T) = E[(L - T)_+] for the law of
    # l_eps (x vs bot), at T = (n - 1) gamma (e^eps - 1) = -(n - 1) gamma E[L]
    from sharpdp.shuffle.laws import laws_for

    gw, law = laws_for(BlanketMixedGaussian(gamma, sigma0, 1), eps, "zero_out")[0]
    lo, up = (float(v[0]) for v in law.stop_loss([-(n - 1) * gw * law.mean()]))
    est = CE.big_jump_estimate(gamma, sigma0, n, eps)
    assert lo * (1 - 1e-9) <= est <= up * (1 + 1e-9)
    assert est > 0.0


@pytest.mark.parametrize("sigma0,n,eps", [(0.5, 10**4, 1.0), (2.0, 1000, 0.5), (1.0, 10**8, 4.0), (5.0, 100, 0.01)])
def test_big_jump_estimate_is_the_accountants_stop_loss_gaussian(sigma0, n, eps):
    from sharpdp.shuffle import GaussianRandomizer
    from sharpdp.shuffle.laws import laws_for

    gw, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]  # x vs the infimum blanket
    lo, up = (float(v[0]) for v in law.stop_loss([-(n - 1) * gw * law.mean()]))
    est = CE.big_jump_estimate(0.0, sigma0, n, eps)
    assert lo * (1 - 1e-9) <= est <= up * (1 + 1e-9)


def test_big_jump_estimate_tracks_the_certified_delta_where_the_jump_dominates():
    # at n = 1e8 the accountant's delta is its far-tail term; the estimate (not a bound) is within 3 %
    from sharpdp.shuffle import ShuffleAccountant

    b = BlanketMixedGaussian(0.007455416487937456, 0.4019223132533896, 1)
    lo, up = ShuffleAccountant(b, 10**8, rel_tol=0.1).get_delta_bounds(1.0)
    assert CE.big_jump_estimate(b.gamma, b.sigma0, 10**8, 1.0) == pytest.approx(lo, rel=0.03)
    assert CE.jump_regime(10**8, b.gamma, 1.0) and not CE.jump_regime(72, 0.55, 0.03125)


def test_template_scalar_is_template_delta_estimate():
    for chi in (1e-3, 0.1, 1.0, 3.0, 10.0):
        for n in (1, 100, 10**4, 10**8):
            for eps in (0.0, 1e-3, 0.1, 1.0, 8.0):
                ref = template_delta_estimate(chi, n, eps)
                got = CE.template_scalar(chi, n, eps)
                if ref > 1e-300:
                    assert got == pytest.approx(ref, rel=1e-3)
                else:
                    assert got < 1e-290


# ---------------------------------------------------------------- certified answers vs the previous search
# (n, eps) at delta = 1e-6, dim 1: Err_1 and evaluation count of the search this one replaced (main at
# ce95e3c, its answers certified by the same accountant). "No worse": at most _SAME above.
_PREVIOUS_CELLS = [
    ((1000, 1.0, 1), 1.2000267258190673, 10),
    ((10**4, 1.0, 1), 0.679901415924512, 11),
    ((10**4, 2.0, 1), 0.528398893246517, 12),
    ((10**5, 1.0, 1), 0.44426862603633865, 11),
    ((327346, 1.0, 1), 0.35900698948414067, 10),
    ((327346, 1.0, 4), 1.311619558885585, 10),  # `sharpdp mean --epsilon 1` (certified 7.1e-7 before)
]


@pytest.mark.parametrize("cell,previous_err,previous_evals", _PREVIOUS_CELLS)
def test_calibrate_bmg_cells_certified_no_worse_at_most_10_evaluations(counted, cell, previous_err, previous_evals):
    from sharpdp.shuffle import ShuffleAccountant

    (n, eps, d), delta = cell, 1e-6
    rep = C.calibrate_bmg_report(n, eps, delta, d, progress=False)
    assert rep.evaluations == counted["n"] <= 10
    assert rep.randomizer.mse_single <= previous_err * (1 + _SAME)
    lo, up = ShuffleAccountant(rep.randomizer, n).get_delta_bounds(eps)  # independent re-check
    assert up <= delta and (lo, up) == rep.delta_bounds
    assert up >= 0.98 * delta  # the last step lands within 2 % of the target


@pytest.mark.parametrize("cell,previous_err,previous_evals", [((10**4, 1.0), 1.2264811874988115, 10),
                                                              ((1000, 4.0), 1.0168050051618422, 8)])
def test_calibrate_gaussian_cells_certified_no_worse_at_most_10_evaluations(counted, cell, previous_err,
                                                                            previous_evals):
    from sharpdp.shuffle import ShuffleAccountant

    (n, eps), delta = cell, 1e-6
    rep = C.calibrate_gaussian_report(n, eps, delta)
    assert rep.evaluations == counted["n"] <= min(previous_evals, 10)
    assert rep.randomizer.mse_single <= previous_err * (1 + _SAME)
    lo, up = ShuffleAccountant(rep.randomizer, n).get_delta_bounds(eps)
    assert up <= delta and (lo, up) == rep.delta_bounds
