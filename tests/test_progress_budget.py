"""The plain progress line says why its denominator changed: a caller that stops before its budget
(or goes past it) lowers (raises) the total, and the (done) line names the budget announced at the start."""

import io

import pytest

from sharpdp._progress import _PlainBar, progress_bar


@pytest.fixture(autouse=True)
def _lines_from_the_first_update(monkeypatch):
    monkeypatch.setattr(_PlainBar, "quiet", 0.0)  # (a log's bar is otherwise silent for its first 2 s)


def _run(total, steps, final_total, file):
    bar = progress_bar(total=total, desc="calibrating", unit=" evaluations", file=file, delay=0.0)
    for _ in range(steps):
        bar.update(1)
    bar.total = final_total
    bar.close()
    return file.getvalue().splitlines()


def test_done_line_names_the_budget_when_the_total_moved():
    lines = _run(10, 7, 7, io.StringIO())  # stopped early: 7 of a budget of 10
    assert lines[0].startswith("calibrating: 1/10 evaluations (10%)")
    assert lines[-1].startswith("calibrating: 7/7 evaluations (100%) (10 budgeted at the start), ")
    assert lines[-1].endswith("(done)")


def test_done_line_is_plain_when_the_total_held():
    lines = _run(10, 10, 10, io.StringIO())
    assert "budgeted" not in lines[-1] and lines[-1].startswith("calibrating: 10/10 evaluations (100%), ")


def test_a_budget_bar_says_its_time_left_is_an_upper_value(monkeypatch):
    # the calibrations' bars count a budget the search usually stops short of: "about N s left" would promise
    # the whole budget's time
    import sharpdp._progress as P

    t = [0.0]
    monkeypatch.setattr(P, "clock", lambda: t[0])
    for budget, want in ((True, "up to about 18 s left (estimate; may stop sooner)"), (False, ", about 18 s left (estimate)")):
        f = io.StringIO()
        t[0] = 0.0
        bar = progress_bar(total=4, desc="work", unit=" items", file=f, delay=0.0, budget=budget)
        t[0] = 6.0
        bar.update(1)
        line = f.getvalue().splitlines()[0]
        assert line.endswith(want) and (("up to" in line) == budget), line
        bar.close()
