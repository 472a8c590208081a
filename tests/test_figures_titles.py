"""A quick (reduced) figure run says so in every PNG title, the full run does not."""

from sharpdp.apps.shuffle_figures import figure_title


def test_quick_titles_are_marked_reduced_and_full_ones_are_not():
    quick, full = figure_title(2, "n = 1e3", quick=True), figure_title(2, "n = 1e3", quick=False)
    assert "REDUCED" in quick and "REDUCED" not in full
    assert "Figure 2: n = 1e3" in full and full.startswith("'Shuffling-Aware Optimization")
    assert all(len(line) <= 72 for line in quick.splitlines())

