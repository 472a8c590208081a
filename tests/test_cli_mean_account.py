"""`sharpdp account`: certified delta(epsilon) / epsilon(delta) of a shuffled BMG from the command line."""

import json

import pytest

from sharpdp.cli import main
from _cli import run as _run


@pytest.mark.parametrize("argv,needle", [
    (["--gamma", "1.0", "--sigma0", "1", "--n", "10", "--epsilon", "1"], "--gamma"),
    (["--gamma", "-0.1", "--sigma0", "1", "--n", "10", "--epsilon", "1"], "--gamma"),
    (["--gamma", "nan", "--sigma0", "1", "--n", "10", "--epsilon", "1"], "--gamma"),
    (["--gamma", "0.5", "--sigma0", "0", "--n", "10", "--epsilon", "1"], "--sigma0"),
    (["--gamma", "0.5", "--sigma0", "1", "--n", "0", "--epsilon", "1"], "--n"),
    (["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--dim", "0", "--epsilon", "1"], "--dim"),
    (["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--epsilon", "-1"], "--epsilon"),
    (["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--delta", "0"], "--delta"),
    (["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--delta", "1"], "--delta"),
    # negative numbers in exponent notation / inf parse as values, so the validator names the parameter
    (["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--delta", "-1e-6"], "--delta must be"),
    (["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--epsilon", "-2.5E+1"], "--epsilon"),
    (["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--epsilon", "-inf"], "--epsilon"),
    (["--gamma", "-1e-3", "--sigma0", "1", "--n", "10", "--epsilon", "1"], "--gamma"),
])
def test_account_bad_input(capsys, argv, needle):
    code, out, err = _run(capsys, "account", *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err, err


@pytest.mark.parametrize("argv", [
    ["--gamma", "0.5", "--sigma0", "1", "--n", "10"],  # neither --epsilon nor --delta
    ["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--epsilon", "1", "--delta", "1e-5"],
    ["--gamma", "0.5", "--sigma0", "1", "--n", "10", "--epsilon", "1", "--adjacency", "nope"],
    ["--sigma0", "1", "--n", "10", "--epsilon", "1"],
])
def test_account_bad_arguments_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as e:
        main(["account", *argv])
    assert e.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.fixture
def acc():
    return pytest.importorskip("sharpdp.shuffle.accountant")


def test_account_delta_and_epsilon_match_the_api(capsys, acc):
    from sharpdp.shuffle import BlanketMixedGaussian

    base = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--dim", "3"]
    code, out, err = _run(capsys, *base, "--epsilon", "0.0015", "--json")
    assert code == 0, err
    r = json.loads(out)
    a = acc.ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 3), 1000)
    assert r["delta"] == pytest.approx(a.get_delta(0.0015), rel=1e-12)
    assert r["delta_lower"] <= r["delta_upper"] and r["delta"] <= r["delta_upper"] * (1 + 1e-12)
    assert r["randomizer"]["chi_lo"] == pytest.approx(BlanketMixedGaussian(0.95, 4.6, 3).chi_lo)
    code, out, err = _run(capsys, *base, "--delta", "1e-6", "--json")
    assert code == 0, err
    r2 = json.loads(out)
    assert r2["epsilon"] == pytest.approx(a.get_epsilon(1e-6), rel=1e-12)
    assert a.get_delta(r2["epsilon"]) <= 1e-6
    code, out, _ = _run(capsys, *base, "--epsilon", "0.0015")
    assert code == 0 and "certified delta" in out and "bracket" in out
    code, out, _ = _run(capsys, *base, "--delta", "1e-6")
    assert code == 0 and "certified epsilon" in out
