"""The plain progress line says why its denominator changed: a caller that stops before its budget
(or goes past it) lowers (raises) the total, and the (done) line names the budget announced at the start."""

import io

from sharpdp._progress import progress_bar


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
