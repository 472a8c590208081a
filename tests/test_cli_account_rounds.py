"""`sharpdp account --rounds K`: the certified composed delta / epsilon of K shuffled BMG rounds."""

import json

import pytest

from _cli import run as _run


@pytest.mark.parametrize("argv,needle", [
    (["--rounds", "0"], "--rounds"),
    (["--rounds", "2", "--discretization", "0"], "--discretization"),
    (["--rounds", "2", "--discretization", "nan"], "--discretization"),
])
def test_rounds_bad_input(capsys, argv, needle):
    base = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--epsilon", "0.01"]
    code, out, err = _run(capsys, *base, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err, err


def test_rounds_match_the_api(capsys):
    from sharpdp.shuffle import BlanketMixedGaussian, ComposedAccountant, ShuffleAccountant

    base = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--rounds", "3",
            "--discretization", "1e-4"]
    code, out, err = _run(capsys, *base, "--epsilon", "0.002", "--json")
    assert code == 0, err
    r = json.loads(out)
    ca = ComposedAccountant([(ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 1000), 3)], 1e-4)
    assert r["rounds"] == 3 and r["discretization"] == 1e-4
    assert r["delta"] == pytest.approx(ca.get_delta(0.002), rel=1e-12)
    # composition is no better than one round at the same total epsilon and no worse than basic
    one = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 1000)
    assert 0.99 * one.get_delta(0.002) <= r["delta"] <= 3 * one.get_delta(0.002 / 3)
    code, out, _ = _run(capsys, *base, "--epsilon", "0.002")
    assert code == 0 and "3 rounds composed" in out and "certified delta" in out


def test_rounds_text_names_each_number():
    from sharpdp.cli.account import format_text

    r = {"randomizer": {"gamma": 0.95, "sigma0": 4.6, "dim": 1, "chi_lo": 0.5, "mse_single": 1.0},
         "n": 10**6, "adjacency": "add/remove", "rounds": 2, "discretization": 1e-4,
         "epsilon": 2e-5, "delta": 8.17704e-07, "delta_lower": 8.00456e-07, "delta_upper": 8.17704e-07}
    text = format_text(r)
    # (printed on the safe side, docs/cli.md §2: the doubles 8.17704e-07 and 8.00456e-07 lie just above and below
    # those decimals, so the upper figure prints 8.17705e-07 and the lower end 8.00455e-07)
    assert "certified delta = 8.17705e-07 (upper bound)" in text
    assert "[reference lower value, certified upper] = [8.00455e-07, 8.17705e-07]" in text
    assert "not a lower bound on delta" in text
    assert "upper [" not in text  # the old garbled "(reference lower value, upper [lo, up])"
