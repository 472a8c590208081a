"""CLI messages: an unknown option named by its subcommand (one line, exit 2); what the account output says."""

import pytest

from sharpdp.cli import main


@pytest.mark.parametrize("argv, prog, extra", [
    (["mean", "--bogus", "1"], "sharpdp mean", "--bogus 1"),
    (["account", "--n", "1000", "--epsilon", "1", "--bogus"], "sharpdp account", "--bogus"),
    (["histogram", "--nope"], "sharpdp histogram", "--nope")])
def test_unknown_option_names_the_subcommand(argv, prog, extra, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"{prog}: error: unrecognized arguments: {extra} ")


@pytest.mark.parametrize("argv", [["--bogus"], ["--bogus", "mean"], ["--json", "mean"]])
def test_option_before_the_subcommand_is_named(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"sharpdp: error: unrecognized option {argv[0]}: ")


def test_account_says_when_replace_goes_through_bot(capsys):
    # (sigma0 = 8: the same route as sigma0 = 4 at 1/40 of the accountant's CPU)
    main(["account", "--gamma", "0", "--sigma0", "8", "--n", "100", "--adjacency", "replace", "--epsilon", "1"])
    assert "bounded through bot" in capsys.readouterr().out
    main(["account", "--gamma", "0.5", "--sigma0", "4", "--n", "100", "--epsilon", "1", "--json"])
    assert '"via_bottom": false' in capsys.readouterr().out
