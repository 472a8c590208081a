"""cli25's message findings: a --delta that underflows to 0 is named as such (before: "got 0.0"), and
--json's sampler_refusal says what a CLI user can do (before: it advised the API parameter grid_bits)."""

from __future__ import annotations

import json

import pytest
from _cli import run  # noqa: E402

from sharpdp.cli.errors import real_number


@pytest.mark.parametrize("argv", [
    ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000"],
    ["account", "--k", "2", "--epsilon0", "1", "--n", "1000"],
    ["mean"],
    ["histogram", "--no-plot"],
])
def test_a_delta_that_underflows_is_named(capsys, argv):
    from sharpdp.cli import main

    with pytest.raises(SystemExit) as exc:  # (argparse's usage error: exit status 2)
        main([*argv, "--delta", "1e-400", "--json"])
    out, err = capsys.readouterr()
    obj = json.loads(out)
    assert exc.value.code == 2 and obj["parameter"] == "--delta" and obj["exit_status"] == 2
    assert obj["error"] == ("argument --delta: 1e-400 underflows to 0 as a double (the smallest positive double is "
                            "4.9e-324): give a value of at least that size")  # (caught: type=float: "got 0.0")
    assert "got 0.0" not in err


def test_real_number_parses_as_float_and_refuses_underflow_only():
    import argparse

    for text in ("0", "0.0", "-0", "0e-400", "1e-6", "5e-324", "-1.5", "inf", "nan", "1_000"):
        got, want = real_number(text), float(text)
        assert got == want or (got != got and want != want)
    for text in ("1e-400", "-2.5e-330", " 1e-999 "):
        with pytest.raises(argparse.ArgumentTypeError, match="underflows to 0"):
            real_number(text)
    with pytest.raises(ValueError):
        real_number("x")  # argparse: "invalid float value: 'x'" (the function's __name__ is "float")
    assert real_number.__name__ == "float"


@pytest.mark.parametrize("extra, advice", [
    (["--sigma0", "3e4"], "a smaller --sigma0 can be sampled"),
    (["--sigma0", "1e5", "--dim", "4"], "try a smaller --sigma0, or a smaller --dim"),
    (["--sigma0", "1e-25"], "a larger --sigma0 can be sampled"),
])
def test_json_sampler_refusal_names_what_a_cli_user_can_do(capsys, extra, advice):
    from sharpdp.shuffle import BlanketMixedGaussian

    code, out, err = run(capsys, "account", "--gamma", "0.5", *extra, "--n", "1000", "--epsilon", "1", "--json")
    r = json.loads(out)
    assert code == 0 and r["can_sample"] is False
    assert "grid_bits" not in r["sampler_refusal"] and advice in r["sampler_refusal"], r["sampler_refusal"]
    # (caught: the randomizer's own text in _sampler_status, "... or pass fewer grid_bits)")
    dim = int(extra[3]) if len(extra) > 2 else 1
    api = BlanketMixedGaussian(0.5, float(extra[1]), dim).sampler_refusal
    assert "grid_bits" in api  # the Python property keeps the API's wording
    code, text, err = run(capsys, "account", "--gamma", "0.5", *extra, "--n", "1000", "--epsilon", "1")
    assert r["sampler_refusal"] in " ".join(text.split())  # the text line says the same
