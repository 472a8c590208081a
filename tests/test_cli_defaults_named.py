"""Output names a newcomer sees: quick figures marked REDUCED, output directories named sharpdp_*_out."""

from sharpdp.apps.shuffle_figures import figure_title


def test_quick_titles_are_marked_reduced_and_full_ones_are_not():
    quick, full = figure_title(2, "n = 1e3", quick=True), figure_title(2, "n = 1e3", quick=False)
    assert "REDUCED" in quick and "REDUCED" not in full
    assert "Figure 2: n = 1e3" in full and full.startswith("'Shuffling-Aware Optimization")
    assert all(len(line) <= 72 for line in quick.splitlines())



def test_every_output_directory_default_is_named_sharpdp_and_documented():
    import pathlib

    from sharpdp.cli import crlb, figures, histogram

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    for out in (crlb.DEFAULT_OUT, figures._OUT, figures._OUT_QUICK, histogram.DEFAULT_OUT):
        assert out.startswith("sharpdp_") and out.endswith("_out")
        assert f"./{out}/" in readme, out


def test_library_parameter_errors_name_the_cli_option(capsys):
    """A library error that starts with a parameter name ("n must be ...") is printed with the option
    of that name (--n), as the other one-line errors are; a message starting otherwise is unchanged."""
    from sharpdp.cli import main

    code = main(["account", "--gamma", "0.9", "--sigma0", "4", "--n", "1e20", "--epsilon", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("sharpdp account: error: --n must be <= 1000000000"), err
    code = main(["account", "--gamma", "0.9", "--sigma0", "4", "--n", "1000", "--epsilon", "-1"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("sharpdp account: error: --epsilon"), err
