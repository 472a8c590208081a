"""`sharpdp account --k 2 --adjacency replace --rounds K`: the K rounds compose the sharp accountant
(docs/sharp_krr.md §5 "Composition"), the output says so, and the composed value is checked against an
exact two-round reference (every class's count laws, the same neighbouring pair in both rounds)."""

import json

import numpy as np
import pytest
from _cli import run as _run
from scipy.stats import binom


def _json(capsys, *argv):
    code, out, err = _run(capsys, "account", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def _two_round_same_pair_delta(n: int, eps0: float, eps: float) -> float:
    """max over the classes j of H_{e^eps}(P_j x P_j || Q_j x Q_j): both rounds on one neighbouring pair
    (docs/sharp_krr.md §2 Proposition 1's pairs), a lower bound on the composed mechanism's delta."""
    p = np.exp(eps0) / (1 + np.exp(eps0))
    q = 1 - p
    N = n - 1
    c = np.arange(n + 1)
    best = 0.0
    for j in range(N + 1):
        u = np.convolve(binom.pmf(np.arange(j + 1), j, p), binom.pmf(np.arange(N - j + 1), N - j, q))
        um1 = np.concatenate([[0.0], u])
        u0 = np.concatenate([u, [0.0]])
        P = p * um1 + q * u0
        Q = q * um1 + p * u0
        assert P.shape == c.shape
        d = np.maximum(np.outer(P, P) - np.exp(eps) * np.outer(Q, Q), 0.0).sum()
        best = max(best, float(d))
    return best


def test_rounds_compose_the_sharp_round(capsys):
    from sharpdp.shuffle import ComposedAccountant, ExactShuffleAccountant, RandomizedResponse, ShuffleAccountant

    argv = ["--k", "2", "--epsilon0", "1", "--n", "200", "--adjacency", "replace", "--rounds", "2",
            "--discretization", "1e-3"]
    r = _json(capsys, *argv, "--epsilon", "0.3")
    assert r["bound"] == "sharp" and "bound_why_not_sharp" not in r and r["rounds"] == 2
    assert "2 rounds" in r["bound_meaning"] and "ExactShuffleAccountant" in r["bound_meaning"]
    assert "not a lower bound" in r["delta_lower_meaning"]
    ca = ComposedAccountant([(ExactShuffleAccountant(RandomizedResponse(2, 1.0), 200), 2)], 1e-3)
    lo, up = ca.get_delta_bounds(0.3)
    assert r["delta"] == float(up) and r["delta_lower"] == float(lo)
    # certified: not below the exact delta of one pair run twice (a valid pair for the two rounds) ...
    ref = _two_round_same_pair_delta(200, 1.0, 0.3)
    assert ref <= r["delta"] <= 1.02 * ref
    # ... and below the composed blanket rounds
    blanket = ComposedAccountant([(ShuffleAccountant(RandomizedResponse(2, 1.0), 200, adjacency="replace"), 2)],
                                 1e-3).get_delta(0.3)
    assert r["delta"] < blanket
    code, out, _ = _run(capsys, "account", *argv, "--epsilon", "0.3")
    assert code == 0 and "each of the 2 rounds" in out and "(upper bound, sharp)" in out


def test_rounds_epsilon_is_sharp_and_below_blanket(capsys):
    from sharpdp.shuffle import ComposedAccountant, RandomizedResponse, ShuffleAccountant

    argv = ["--k", "2", "--epsilon0", "1", "--n", "200", "--adjacency", "replace", "--rounds", "2",
            "--discretization", "1e-3", "--delta", "1e-6"]
    r = _json(capsys, *argv)
    assert r["bound"] == "sharp" and r["rounds"] == 2
    blanket = ComposedAccountant([(ShuffleAccountant(RandomizedResponse(2, 1.0), 200, adjacency="replace"), 2)],
                                 1e-3).get_epsilon(1e-6)
    assert 0 < r["epsilon"] < blanket
    # the exact same-pair delta at the certified epsilon is at most the target (certified epsilon)
    assert _two_round_same_pair_delta(200, 1.0, r["epsilon"]) <= 1e-6


@pytest.mark.parametrize("argv,why", [
    (["--k", "3", "--adjacency", "replace"], "k = 3"),
])
def test_rounds_blanket_where_sharp_does_not_apply(capsys, argv, why):
    r = _json(capsys, *argv, "--epsilon0", "1", "--n", "200", "--rounds", "2", "--discretization", "1e-3",
              "--epsilon", "0.3")
    assert r["bound"] == "blanket" and why in r["bound_why_not_sharp"] and "blanket" in r["bound_meaning"]


def test_rounds_bad_value_is_one_line_exit_2(capsys):
    code, out, err = _run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "200", "--adjacency",
                          "replace", "--rounds", "0", "--delta", "1e-6")
    assert code == 2 and "--rounds" in err and len(err.strip().splitlines()) == 1
