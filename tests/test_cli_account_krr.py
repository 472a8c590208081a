"""`sharpdp account --k K --epsilon0 E0`: k-RR rounds, the sharp route where it applies, and --n 1e6."""

import json

import pytest
from _cli import run as _run


def _json(capsys, *argv):
    code, out, err = _run(capsys, "account", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_sharp_route_matches_the_api(capsys):
    from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse

    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 1000)
    r = _json(capsys, "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace", "--epsilon", "0.12")
    assert r["bound"] == "sharp" and "own delta" in r["bound_meaning"]
    lo, up = acc.get_delta_bounds(0.12)
    assert r["delta"] == up and r["delta_lower"] == lo and "lower bound on the mechanism" in r["delta_lower_meaning"]
    r = _json(capsys, "--k", "2", "--epsilon0", "1", "--n", "1e3", "--adjacency", "replace", "--delta", "1e-6")
    assert r["bound"] == "sharp" and r["n"] == 1000 and r["epsilon"] == acc.get_epsilon(1e-6)
    code, out, _ = _run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace",
                        "--delta", "1e-6")
    assert code == 0 and "sharp" in out and f"certified epsilon = {acc.get_epsilon(1e-6):.6g}" in out
    # the sharp epsilon 0.126615 (docs/sharp_krr.md §6) at the default xtol 1e-3 (certified end)
    assert 0.126615 <= r["epsilon"] <= 0.126615 * 1.001


@pytest.mark.parametrize("argv,why", [
    (["--k", "3", "--adjacency", "replace"], "k = 3"),
    (["--k", "2"], "replace only"),
    (["--k", "3", "--adjacency", "replace", "--rounds", "2", "--discretization", "1e-2"], "k = 3"),  # (1e-2: 1/5 of the CPU of 1e-3)
])
def test_blanket_route_says_why(capsys, argv, why):
    from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant

    r = _json(capsys, *argv, "--epsilon0", "1", "--n", "200", "--epsilon", "0.3")
    assert r["bound"] == "blanket" and why in r["bound_why_not_sharp"]
    if "--rounds" not in argv:
        k = int(argv[1])
        adj = "replace" if "replace" in argv else "zero_out"
        assert r["delta"] == ShuffleAccountant(RandomizedResponse(k, 1.0), 200, adjacency=adj).get_delta(0.3)


def test_n_1e8_is_sharp_since_n_max_is_1e9(capsys):
    """N_MAX = 1e9 (docs/sharp_krr.md §5): n = 1e8 takes the sharp route, between the certified lower
    bound of the all-equal datasets and the blanket accountant."""
    from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
    from sharpdp.shuffle.exact_krr import all_equal_delta_bounds

    r = _json(capsys, "--k", "2", "--epsilon0", "4", "--n", "1e8", "--adjacency", "replace", "--delta", "1e-6")
    assert r["bound"] == "sharp" and "bound_why_not_sharp" not in r and r["n"] == 10**8
    assert all_equal_delta_bounds(4.0, 10**8, r["epsilon"] * (1 - 2e-3))[0] > 1e-6  # not below the truth
    assert r["epsilon"] < ShuffleAccountant(RandomizedResponse(2, 4.0), 10**8, adjacency="replace").get_epsilon(1e-6)


def test_n_above_the_tables_is_sharp(capsys):
    """n = 1e5 > N_EXACT: the sharp route (branch and bound, docs/sharp_krr.md §4.11), below the blanket."""
    from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant

    r = _json(capsys, "--k", "2", "--epsilon0", "4", "--n", "1e5", "--adjacency", "replace", "--delta", "1e-6")
    assert r["bound"] == "sharp" and r["n"] == 100000
    blanket = ShuffleAccountant(RandomizedResponse(2, 4.0), 10**5, adjacency="replace").get_epsilon(1e-6)
    assert 0.0 < r["epsilon"] < blanket


def test_n_as_float_accepted_consistently_with_the_api(capsys):
    """--n 1e6 is the integer 10**6, as for the API (V.integer); 1.5 is refused naming --n."""
    r = _json(capsys, "--gamma", "0.95", "--sigma0", "4.6", "--n", "1e6", "--epsilon", "1e-5")
    assert r["n"] == 10**6 and isinstance(r["n"], int)
    code, out, err = _run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1.5", "--epsilon", "0.1")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--n must be an integer" in err


@pytest.mark.parametrize("argv,needle", [
    (["--k", "2", "--n", "100", "--epsilon", "0.1"], "required: --epsilon0"),
    (["--epsilon0", "1", "--n", "100", "--epsilon", "0.1"], "required: --k"),
    (["--n", "100", "--epsilon", "0.1"], "required: --gamma"),
    (["--gamma", "0.9", "--n", "100", "--epsilon", "0.1"], "required: --sigma0"),
    (["--k", "2", "--epsilon0", "1", "--gamma", "0.5", "--n", "100", "--epsilon", "0.1"], "not both"),
    (["--k", "2", "--epsilon0", "1", "--dim", "3", "--n", "100", "--epsilon", "0.1"], "--dim is a BMG option"),
])
def test_option_groups_are_usage_errors(capsys, argv, needle):
    """The randomizer options are required as a group: argparse's usage error (SystemExit 2, one line)."""
    with pytest.raises(SystemExit) as exc:
        _run(capsys, "account", *argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("argv,needle", [
    (["--k", "2.5", "--epsilon0", "1", "--n", "100", "--epsilon", "0.1"], "--k must be an integer"),
    (["--k", "1", "--epsilon0", "1", "--n", "100", "--epsilon", "0.1"], "--k must be >= 2"),
    (["--k", "2", "--epsilon0", "0", "--n", "100", "--epsilon", "0.1"], "--epsilon0"),
    (["--k", "2", "--epsilon0", "1", "--n", "0", "--epsilon", "0.1"], "--n must be >= 1"),
])
def test_krr_bad_input_one_line(capsys, argv, needle):
    code, out, err = _run(capsys, "account", *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err, err


def test_n_not_a_number_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        _run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "abc", "--epsilon", "0.1")
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--n: invalid number value: 'abc'" in err and len(err.strip().splitlines()) == 1
