"""calibrate_bmg(..., rounds=k): the BMG whose certified k-fold composition meets (epsilon, delta)."""

import math

import pytest

from sharpdp.shuffle import ComposedAccountant, ShuffleAccountant, calibrate_bmg, calibrate_bmg_report
from sharpdp.shuffle.calibration import rounds as CR
from sharpdp.shuffle.calibration import search as CS
from sharpdp.shuffle import template_delta_estimate


# ---------------------------------------------------------------- the certified accountant (slow-ish)
@pytest.mark.parametrize("n,k,eps,delta", [(1000, 2, 0.01, 1e-5)])  # light-tailed: a few s per composition
def test_rounds_certified_by_an_independent_composition_and_beats_the_naive_split(n, k, eps, delta):
    rep = calibrate_bmg_report(n, eps, delta, 1, rounds=k, progress=False)
    b = rep.randomizer
    assert rep.rounds == k and 1 <= rep.composed_certifications <= CR._ROUNDS_CERTS + CR._ROUNDS_FALLBACK
    # independent re-check: a fresh ComposedAccountant of k rounds of the returned BMG (stored for this BMG below)
    stored = FULL_REFERENCE.get((n, k, eps))
    if stored is not None and stored[0] == (b.gamma, b.sigma0):
        up = stored[1][1]
    else:  # another search result: its own reference, live
        up = ComposedAccountant([(ShuffleAccountant(b, n), k)]).get_delta(eps)
    # (the search certifies each candidate with a coarser pair, docs/composition.md §4.2: its figure is a
    # certified upper bound too, a little above this full-accuracy one, not equal to it)
    assert up <= delta and rep.delta_bounds[1] <= delta and up <= rep.delta_bounds[1] * 1.05
    # the naive split (basic composition: each round at (eps/k, delta/k)) needs more noise
    naive = calibrate_bmg(n, eps / k, delta / k, 1, progress=False)
    assert b.mse_single < naive.mse_single
    # and the budget is used: one round alone at (eps, delta) is the floor, and the answer is
    # not over-noised beyond the composed target (within the search's stop rule)
    single = calibrate_bmg(n, eps, delta, 1, progress=False)
    assert single.mse_single < b.mse_single
    assert rep.delta_bounds[1] >= delta * math.exp(CR._ROUNDS_CLOSE) or rep.composed_certifications >= CR._ROUNDS_CERTS


# test_rounds_certified_by_an_independent_composition_and_beats_the_naive_split: per case (n, k, eps), the search's
# BMG (gamma, sigma0) and the bounds of its k-fold composition (certified values of a fixed quantity; ~1.6 s of CPU),
# made by
#   ComposedAccountant([(ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, 1), n), k)]).get_delta_bounds(eps)
FULL_REFERENCE = {
    (1000, 2, 0.01): ((0.808229729784994, 2.473188459696052), (9.25232099343758e-06, 9.498170883276596e-06)),
}


def _key(rep):
    b = rep.randomizer
    return (b.gamma, b.sigma0, b.dim, rep.delta_bounds, rep.evaluations)


def test_rounds_one_is_the_single_round_calibration():
    a = calibrate_bmg_report(1000, 0.1, 1e-5, 2, progress=False)
    for r in (1, 1.0):
        b = calibrate_bmg_report(1000, 0.1, 1e-5, 2, progress=False, rounds=r)
        assert _key(b) == _key(a) and b.rounds == 1 and b.composed_certifications == 0  # bit-identical
    b = calibrate_bmg(1000, 0.1, 1e-5, 2, progress=False, rounds=1)
    assert (b.gamma, b.sigma0) == (a.randomizer.gamma, a.randomizer.sigma0)


@pytest.mark.parametrize("rounds,exc", [(0, ValueError), (-3, ValueError), (2.5, ValueError),
                                        (float("nan"), ValueError), (float("inf"), ValueError),
                                        (True, TypeError), ("3", TypeError), (None, TypeError)])
def test_rounds_bad_input(rounds, exc):
    with pytest.raises(exc, match="rounds"):
        calibrate_bmg(1000, 0.1, 1e-5, 1, rounds=rounds)
    with pytest.raises(exc, match="rounds"):
        calibrate_bmg_report(1000, 0.1, 1e-5, 1, rounds=rounds)


# ---------------------------------------------------------------- the search logic, on stand-ins (fast)
class _StandIn:
    """Single-round stand-in accountant (the template; not a privacy bound)."""

    def __init__(self, randomizer, n, adjacency="zero_out", rel_tol=1e-2):
        self.r, self.n = randomizer, n

    def get_delta_bounds(self, epsilon):
        d = template_delta_estimate(self.r.chi_lo, self.n, epsilon)
        return d, d


def _composed_stand_in(factor, log):
    """Stand-in composition: k rounds as the template at chi_lo / sqrt(k), times ``factor``."""
    def bounds(bmg, n, adjacency, rounds, epsilon, progress=False, delta=None):
        d = 1.0 if math.isinf(factor) else \
            min(factor * template_delta_estimate(bmg.chi_lo / math.sqrt(rounds), n, epsilon), 1.0)
        log.append((bmg, d))
        return d, d
    return bounds


@pytest.fixture
def stand_ins(monkeypatch):
    monkeypatch.setattr(CS, "make_accountant", lambda r, n, adjacency, rel_tol=CS.CERT_REL_TOL: _StandIn(r, n))
    log = []
    return lambda factor: (monkeypatch.setattr(CR, "_composed_bounds", _composed_stand_in(factor, log)), log)[1]


@pytest.mark.parametrize("factor", [1.0, 30.0, 1e-3])
def test_rounds_returns_only_certified_candidates_and_the_best(stand_ins, factor):
    # factor 30: the Gaussian start fails, safe-side steps follow; 1e-3: the start is far too noisy
    log = stand_ins(factor)
    n, k, eps, delta = 5000, 4, 0.1, 1e-6
    rep = calibrate_bmg_report(n, eps, delta, 1, rounds=k, progress=False)
    assert rep.composed_certifications == len(log) <= CR._ROUNDS_CERTS + CR._ROUNDS_FALLBACK
    ok = [(b.mse_single, d) for b, d in log if d <= delta]
    assert ok and (rep.randomizer.mse_single, rep.delta_bounds[1]) == min(ok)
    assert rep.delta_bounds[1] <= delta


def test_rounds_refuses_when_nothing_certifies(stand_ins):
    log = stand_ins(math.inf)  # every composed value is 1
    with pytest.raises(RuntimeError, match="4-round delta"):
        calibrate_bmg(5000, 0.1, 1e-6, 1, rounds=4, progress=False)
    assert len(log) == CR._ROUNDS_CERTS + CR._ROUNDS_FALLBACK
    # the fallback stepped to the safe side (more noise) after each failure
    chis = [b.chi_lo for b, _ in log]
    assert all(b > a for a, b in zip(chis, chis[1:]))


def test_rounds_progress_bar(stand_ins, capsys, monkeypatch):
    stand_ins(1.0)
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)
    monkeypatch.setattr(__import__("sharpdp._progress")._progress._PlainBar, "quiet", 0.0)  # lines from the 1st update
    rep = calibrate_bmg_report(5000, 0.1, 1e-6, 1, rounds=4, progress=True)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("calibrating BMG for 4 rounds") and err[-1].endswith("(done)")
    m = rep.composed_certifications
    assert f"{m}/{m} candidates" in err[-1]


@pytest.mark.parametrize("progress, inner", [(None, None), (True, None), (False, False)])
def test_rounds_show_each_candidates_profile_bar(monkeypatch, progress, inner):
    """A composed certification builds a privacy profile (tens of seconds): its bar is on unless progress=False."""
    seen = []
    monkeypatch.setattr(CS, "make_accountant", lambda r, n, adjacency, rel_tol=CS.CERT_REL_TOL: _StandIn(r, n))
    monkeypatch.setattr(CR, "_composed_bounds",
                        lambda bmg, n, adjacency, rounds, epsilon, progress=False, delta=None: seen.append(progress) or (1e-7, 1e-7))
    calibrate_bmg_report(5000, 0.1, 1e-6, 1, rounds=4, progress=progress)
    assert seen and all(p is inner for p in seen), seen
