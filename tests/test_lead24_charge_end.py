"""get_epsilon below the release sampler's charge plateau (docs/accountant.md §8.3): the search's upper end and
the refusal's "smallest value" come from a golden-section search of [0, eps_tau], not only the ladder of points
where the charge alone is below delta (there D_up may still exceed delta: a newcomer's --delta 2.5e-29 was told
"smallest value 7.4e-28" while 2.9e-29 is certified at eps 0.41)."""

import re

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches


def _acc():
    return ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**6)


def test_refusal_names_the_smallest_value_against_a_brute_force_grid():
    acc = _acc()
    with pytest.raises(ValueError, match="smallest value") as info:
        acc.get_epsilon(2.5e-29)
    u, e = (float(x) for x in re.search(r"smallest value ([0-9.e+-]+), at eps = ([0-9.e+-]+)", str(info.value)).groups())
    clear_caches()
    grid = np.linspace(0.0, min(acc.eps_tau, 2.0), 41)[1:]
    best = min(_acc().get_delta_bounds(float(x))[1] for x in grid)  # fresh accountants' certified values
    assert 2.5e-29 < best  # the target is unreachable on the grid too
    assert u <= best * 1.01  # the reported minimum is (close to) the grid's
    assert _acc().get_delta_bounds(e)[1] == pytest.approx(u, rel=1e-9)


def test_a_target_just_above_the_minimum_is_certified():
    """(certification of the answer near the plateau's minimum; the search found it before the golden step too)"""
    eps = _acc().get_epsilon(2.9e-29)
    clear_caches()
    assert _acc().get_delta_bounds(eps)[1] <= 2.9e-29


def test_cli_delta_route_names_the_charge(capsys):
    """sharpdp account --delta: where the sampler's charge makes most of the target, the output says so (it said
    nothing, newcomer finding); the JSON's charge is the accountant's at the answer; a large delta has no line."""
    import json

    from _cli import run

    bmg = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000"]
    code, out, _ = run(capsys, *bmg, "--delta", "3e-29", "--json")
    r = json.loads(out)
    assert code == 0 and r["sampler_charge"]["charge"] == pytest.approx(_acc().sampler_term(r["epsilon"]), rel=1e-12)
    assert 0.5 * 3e-29 <= r["sampler_charge"]["charge"] <= 3e-29
    code, out, _ = run(capsys, *bmg, "--delta", "3e-29")
    assert code == 0 and "sampler's charge:" in out and "95%" in out
    code, out, _ = run(capsys, *bmg, "--delta", "1e-6")
    assert code == 0 and "sampler's charge:" not in out
