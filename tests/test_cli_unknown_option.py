"""An unknown option is reported by the subcommand it was given to (one line, exit 2)."""

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
