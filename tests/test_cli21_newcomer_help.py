"""A newcomer's first commands: `sharpdp` alone lists the commands and says where to start; `sharpdp account
--help` shows examples that run and give the figures README.md quotes."""

import json
import re
import shlex

import pytest

from sharpdp.cli import START_HINT, build_parser, main


def test_bare_sharpdp_prints_the_commands_and_where_to_start(capsys):
    assert main([]) == 2  # (as the former "the following arguments are required: COMMAND")
    out, err = capsys.readouterr()
    assert out == ""  # stdout holds results only
    assert err.startswith("usage: sharpdp") and " ".join(START_HINT.split()) in " ".join(err.split())
    for command in ("mean", "account", "histogram", "crlb", "figures"):
        assert re.search(rf"^\s+{command}\b", err, re.M), command
    assert "blanket-mixed Gaussian (BMG)" in " ".join(err.split())  # no unexplained acronym in the list


def test_help_says_where_to_start(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert " ".join(START_HINT.split()) in " ".join(capsys.readouterr().out.split())


def test_account_help_examples_run_and_match_the_readme(capsys):
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices)
    epilog = sub.choices["account"].epilog
    examples = re.findall(r"sharpdp (account [^()]+?) \(", epilog)
    assert len(examples) == 2, epilog
    figures = []
    for example in examples:
        assert main([*shlex.split(example), "--json"]) == 0
        figures.append(json.loads(capsys.readouterr().out))
    assert figures[0]["delta"] == pytest.approx(1.17e-6, rel=5e-3)  # README.md: "(delta ~ 1.17e-6)"
    assert figures[1]["bound"] == "sharp" and figures[1]["epsilon"] == pytest.approx(0.1267, rel=1e-3)
