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
