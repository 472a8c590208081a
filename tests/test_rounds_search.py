"""The k-round calibration's search pairs (docs/composition.md §4.2): explicit model-placed points, the
returned BMG re-checked by an independent full-accuracy composition, the progress output, K = 1 unchanged."""

import math

import numpy as np
import pytest

from sharpdp.shuffle import ComposedAccountant, ShuffleAccountant, calibrate_bmg_report, dominating_pair
from sharpdp.shuffle.calibration import rounds as CR
from sharpdp.shuffle.calibration.estimates import template_delta_estimate
from sharpdp.shuffle.randomizers import BlanketMixedGaussian


# the second case: four rounds of a 2-D BMG at delta = 1e-6 (n = 5000: the same search path, one pair top and two
# pair grids, as n = 20000, whose full-accuracy reference composition alone cost ~18 s of CPU)
@pytest.mark.parametrize("n,k,eps,delta,dim", [(1000, 3, 0.01, 1e-5, 1), (5000, 4, 0.05, 1e-6, 2)])
def test_returned_bmg_rechecked_by_a_full_accuracy_composition(n, k, eps, delta, dim):
    rep = calibrate_bmg_report(n, eps, delta, dim, rounds=k, progress=False)
    b = rep.randomizer
    lo, up = rep.delta_bounds
    assert lo <= up <= delta
    # independent: a fresh full-accuracy ComposedAccountant (the default adaptive pair at the accountant's
    # default rel_tol, cover_upper on) of k rounds of the returned BMG
    stored = FULL_REFERENCE.get((n, k, eps, dim))
    if stored is not None and stored[0] == (b.gamma, b.sigma0):  # this BMG's stored reference (below)
        full_lo, full_up = stored[1]
    else:  # another search result: its own reference, live
        full_lo, full_up = ComposedAccountant([(ShuffleAccountant(b, n), k)]).get_delta_bounds(eps)
    assert full_up <= delta
    # the search's coarser pair is certified too, so it cannot be far below the full-accuracy reference lower
    # value (both compose pairs of the same round), and it is only a little looser than the full-accuracy upper
    assert up >= full_lo * (1 - 1e-3)
    # (**) session 31, lead: 0.05 -> 0.06: the full-accuracy composition's pair caps its cover factor by the samples'
    # lower values (docs/composition.md §2.12 (a)), 1.6 % tighter here, while the search's coarser pair is uncapped
    # (measured 3.2 % and 5.5 % for the two cases)
    assert abs(up / full_up - 1.0) < 0.06, (up, full_up)


# test_returned_bmg_rechecked_by_a_full_accuracy_composition: per case (n, k, eps, dim), the search's BMG (gamma,
# sigma0) and the bounds of its k-fold composition (certified values of a fixed quantity; 1.4 s and 4.1 s of CPU),
# made by
#   ComposedAccountant([(ShuffleAccountant(BlanketMixedGaussian(gamma, sigma0, dim), n), k)]).get_delta_bounds(eps)
FULL_REFERENCE = {  # (**) session 31, lead: the searches' BMGs and the capped full composition (§2.12 (a))
    (1000, 3, 0.01, 1): ((0.8298734767983251, 2.635914887807949), (9.126076040554382e-06, 9.308123683937634e-06)),
    (5000, 4, 0.05, 2): ((0.5500316831503367, 1.3930048245902857), (8.164655853907144e-07, 8.389092357458731e-07)),
}


def test_pair_points_follow_the_template_model():
    b = BlanketMixedGaussian(0.48226355352271794, 1.1138945790416652, 4)
    n, k, eps = 327346, 5, 0.01
    floor, top = CR._pair_top(b, n, k, eps)
    dx, pts = CR._pair_points(top)
    pts = np.array(pts)
    assert pts[-1] == pytest.approx(top, rel=1e-12)
    assert pts[0] == 0.0 and len(pts) == CR._PAIR_POINTS and np.all(np.diff(pts) > 0)
    kf = pts / dx
    assert np.allclose(kf, np.round(kf), rtol=0, atol=1e-9 * kf.max())  # on the lattice
    assert round(kf[-1]) == CR._PAIR_STEPS
    # the top is where the model reaches the floor share of the modelled composed delta (to the bisection's
    # 1e-3 relative in eps)
    assert floor == pytest.approx(CR._FLOOR_SHARE * template_delta_estimate(b.chi_lo / math.sqrt(k), n, eps) / k,
                                  rel=1e-12)
    assert template_delta_estimate(b.chi_lo, n, pts[-1]) <= floor < template_delta_estimate(b.chi_lo, n,
                                                                                             pts[-1] * 0.998)


def test_explicit_pair_bar_has_an_exact_total(capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)  # the plain bar: one line per update
    from sharpdp._progress import _PlainBar

    monkeypatch.setattr(_PlainBar, "interval", 0.0)
    acc = ShuffleAccountant(BlanketMixedGaussian(0.9, 3.0, 1), 3000, rel_tol=0.05)
    dx = 1e-3
    eps = np.arange(0, 21) * dx
    dominating_pair(acc, dx, epsilons=eps, progress=True)
    err = capsys.readouterr().err.splitlines()
    assert err and all("privacy profile (explicit points)" in line for line in err)
    assert "8/21 values" in err[0] and "21/21 values (100%)" in err[-1] and err[-1].endswith("(done)")
    assert not any("budget" in line for line in err)


def test_rounds_progress_from_the_start_and_an_honest_end(capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)
    from sharpdp._progress import _PlainBar

    monkeypatch.setattr(_PlainBar, "quiet", 0.0)  # lines from the first update (a log's bar: silent for 2 s)
    rep = calibrate_bmg_report(1000, 0.01, 1e-5, 1, rounds=2, progress=True)
    err = capsys.readouterr().err.splitlines()
    outer = [line for line in err if line.startswith("calibrating BMG for 2 rounds")]
    # the first line is the search's detail (printed once), the second the candidates' bar at 0 (printed before
    # any certification), the last its end
    assert err[1] == outer[1] and "0/4 candidates (0%), 0 s" in err[1]
    m = rep.composed_certifications
    assert outer[-1].endswith("(done)") and f"{m}/{m} candidates" in outer[-1]
    assert "more only if none certifies" in outer[0]


def _key(rep):
    b = rep.randomizer
    return (b.gamma, b.sigma0, b.dim, rep.delta_bounds, rep.evaluations, rep.rounds, rep.composed_certifications)


def test_one_round_is_unchanged():
    a = calibrate_bmg_report(2000, 0.2, 1e-6, 3, progress=False)
    b = calibrate_bmg_report(2000, 0.2, 1e-6, 3, progress=False, rounds=1)
    assert _key(a) == _key(b) and b.composed_certifications == 0
    # the single round's figure is the single-round accountant's (no composition, no search pair)
    assert a.delta_bounds[1] <= 1e-6


def test_account_rounds_at_an_epsilon_takes_the_model_pair_and_stays_certified(capsys):
    import json

    from _cli import run as _run

    code, out, err = _run(capsys, "account", "--gamma", "0.9", "--sigma0", "3.0", "--n", "3000", "--rounds", "3",
                          "--epsilon", "0.003", "--json")
    assert code == 0, err
    assert "40 certified values at model-placed points" in err.splitlines()[0]
    r = json.loads(out)
    b = BlanketMixedGaussian(0.9, 3.0, 1)
    assert (r["delta_lower"], r["delta"]) == pytest.approx(CR.model_composition(b, 3000, "zero_out", 3, 0.003)
                                                           .get_delta_bounds(0.003), rel=1e-12)
    full_lo, full_up = ACCOUNT_FULL  # the full-accuracy composition of these rounds (stored, ~1.4 s of CPU; below)
    assert r["delta"] >= full_lo * (1 - 1e-3) and abs(r["delta"] / full_up - 1.0) < 0.05, (r["delta"], full_up)
    # an explicit lattice step keeps the default pair
    code, out, err = _run(capsys, "account", "--gamma", "0.9", "--sigma0", "3.0", "--n", "3000", "--rounds", "3",
                          "--epsilon", "0.003", "--discretization", "1e-4", "--json")
    assert code == 0 and "model-placed" not in err


# test_account_rounds_at_an_epsilon_takes_the_model_pair_and_stays_certified: the bounds of the 3-fold composition of
# BMG(0.9, 3.0, 1) at n = 3000, eps = 0.003 by the default adaptive pair (certified values of a fixed quantity), made by
#   ComposedAccountant([(ShuffleAccountant(BlanketMixedGaussian(0.9, 3.0, 1), 3000), 3)]).get_delta_bounds(0.003)
ACCOUNT_FULL = (1.608910186624892e-06, 1.6690229753962435e-06)


def test_a_model_that_misses_the_round_moves_the_top_by_certified_values(monkeypatch):
    """A model placing e_top far too low (here 1/4 of it) is caught by the certified value there: the top moves
    to a doubling point with a certified value <= the floor, so the infinity mass stays small."""
    b = BlanketMixedGaussian(0.9, 3.0, 1)
    n, k, eps = 3000, 3, 0.003
    floor, top = CR._pair_top(b, n, k, eps)
    good = CR.model_composition(b, n, "zero_out", k, eps).get_delta(eps)
    monkeypatch.setattr(CR, "_pair_top", lambda *a: (floor, top / 4))
    ca = CR.model_composition(b, n, "zero_out", k, eps)
    pair = ca.pairs()[0]
    assert pair.sample_epsilons[-1] >= top / 4 * 2 and pair.sample_deltas[-1] <= floor
    assert ca.get_delta(eps) <= 1.2 * good


@pytest.mark.parametrize("kw, exc, name", [
    ({"n": 0}, ValueError, "n"), ({"rounds": 0}, ValueError, "rounds"), ({"epsilon": float("nan")}, ValueError, "epsilon"),
    ({"epsilon": -1.0}, ValueError, "epsilon"), ({"delta": 1.0}, ValueError, "delta"), ({"delta": 0.0}, ValueError, "delta"),
    ({"adjacency": "swap"}, ValueError, "adjacency"), ({"bmg": 1.0}, TypeError, "bmg")])
def test_model_composition_refuses_bad_input_naming_it(kw, exc, name):
    args = {"bmg": BlanketMixedGaussian(0.9, 3.0, 1), "n": 3000, "adjacency": "zero_out", "rounds": 2, "epsilon": 0.1}
    args.update(kw)
    with pytest.raises(exc, match=rf"^{name}\b"):
        CR.model_composition(**args)
