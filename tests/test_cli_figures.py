"""`sharpdp figures shuffle`: the progress bar's weights and steps; titles and tick labels of the figures
(shuffle figures and the histogram plot) drawn inside the figure."""

import pytest

from sharpdp.apps import shuffle_figures as F


@pytest.mark.parametrize("quick", [True, False])
def test_bar_steps_end_exactly_at_the_total(quick):
    jobs, _ = F.figure_jobs(quick)
    steps = F._bar_steps(jobs)
    assert len(steps) == len(jobs) and all(isinstance(s, int) and s >= 1 for s in steps)
    # the bar's total is sum(steps): the last update lands on 100 %, never beyond (was 2.51/2.5)
    assert steps == [max(1, round(100 * w)) for *_, w in jobs]
    assert all(abs(s - 100 * w) <= 0.5 for s, (*_, w) in zip(steps, jobs) if w >= 0.01)


def test_cost_weights_match_the_far_tail_engine():
    # measured 2026-12-01 (process CPU s, after warm-up): every Figure 1 point 0.4-2.5 s, the whole
    # job 8.8 s; the pre-far-tail table said 161 s at epsilon = 1 and 280 s in all
    jobs, _ = F.figure_jobs(False)
    fig1 = [w for f, _, w in jobs if f == 1]
    assert all(0.2 <= w <= 3.0 for w in fig1), fig1
    assert 4.0 <= sum(w for *_, w in jobs) <= 20.0
    assert max(fig1) / min(fig1) < 10  # no ~100x heavy tail at high epsilon any more


def _titles_inside(monkeypatch):
    """Check, at every savefig, that each title and tick label lies inside the figure (nothing cut off).

    Before the real savefig, with no draw of its own: the figure's tight_layout has placed the texts, and the
    extents are computed on demand at the figure's dpi (a draw here cost a third of the test; a title at twice
    its font size still fails)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    checked = []
    real = Figure.savefig

    def savefig(self, *args, **kwargs):
        box = self.bbox
        for ax in self.axes:
            lo, hi = sorted(ax.get_ylim())
            shown = [t for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi]  # the drawn ones
            texts = [ax.title, *shown]
            for t in texts:
                if t.get_text():
                    e = t.get_window_extent()
                    assert box.x0 - 1 <= e.x0 and e.x1 <= box.x1 + 1 and e.y1 <= box.y1 + 1, t.get_text()
            checked.append(ax.get_title())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return checked


def test_shuffle_figure_titles_are_not_cut_off(tmp_path, monkeypatch):
    checked = _titles_inside(monkeypatch)
    F.write_figures(tmp_path, quick=True, progress=False)
    assert len(checked) == 3 and all("Figure" in t for t in checked)


def test_histogram_plot_has_y_labels_under_a_decade(tmp_path, monkeypatch, capsys):
    """Released values within one decade: the left panel still gets y tick labels (it had none). The
    release and --diagnostics figures are written (the default-dataset test runs with --no-plot), their
    titles and tick labels inside the figure."""
    import os

    import pandas as pd

    from sharpdp.cli import main

    checked = _titles_inside(monkeypatch)
    labels = []
    from matplotlib.figure import Figure

    inner = Figure.savefig

    def record(self, *args, **kwargs):
        result = inner(self, *args, **kwargs)  # (the title check, then the real savefig, which draws it)
        lo, hi = sorted(self.axes[0].get_ylim())
        labels.append([t.get_text() for t in self.axes[0].get_yticklabels()
                       if t.get_text() and lo <= t.get_position()[1] <= hi])
        return result

    monkeypatch.setattr(Figure, "savefig", record)
    data, keys = tmp_path / "d.csv", tmp_path / "k.csv"
    pd.DataFrame({"g": ["a"] * 200 + ["b"] * 300 + ["c"] * 250}).to_csv(data, index=False)
    pd.DataFrame({"g": ["a", "b", "c"]}).to_csv(keys, index=False)
    (tmp_path / "p").mkdir()
    assert main(["histogram", "--csv", str(data), "--by", "g", "--keys", str(keys), "--seed", "1",
                 "--out", str(tmp_path / "o"), "--diagnostics", str(tmp_path / "p" / "diag.csv")]) == 0
    assert len(checked) == 5 and len(labels) == 2 and len(labels[0]) >= 2, labels  # release (3 axes), diagnostics (2)
    assert (tmp_path / "o" / "histogram_release.png").stat().st_size > 10_000
    diag_png = tmp_path / "p" / "diag.png"
    assert diag_png.stat().st_size > 10_000 and os.stat(diag_png).st_mode & 0o777 == 0o600  # true counts: private
    err = capsys.readouterr().err
    assert f"{tmp_path / 'p' / 'diag.csv'} and {diag_png} (readable by you only) hold the TRUE counts" in err
