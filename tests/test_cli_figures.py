"""`sharpdp figures shuffle`: the progress bar's weights and steps (no figure is computed here)."""

import pytest

from sharpdp.apps import shuffle_figures as F


@pytest.mark.parametrize("quick", [True, False])
def test_bar_steps_end_exactly_at_the_total(quick):
    jobs, _ = F._figure_jobs(quick)
    steps = F._bar_steps(jobs)
    assert len(steps) == len(jobs) and all(isinstance(s, int) and s >= 1 for s in steps)
    # the bar's total is sum(steps): the last update lands on 100 %, never beyond (was 2.51/2.5)
    assert steps == [max(1, round(100 * w)) for *_, w in jobs]
    assert all(abs(s - 100 * w) <= 0.5 for s, (*_, w) in zip(steps, jobs) if w >= 0.01)


def test_cost_weights_match_the_far_tail_engine():
    # measured 2026-12-01 (process CPU s, after warm-up): every Figure 1 point 0.4-2.5 s, the whole
    # job 8.8 s; the pre-far-tail table said 161 s at epsilon = 1 and 280 s in all
    jobs, _ = F._figure_jobs(False)
    fig1 = [w for f, _, w in jobs if f == 1]
    assert all(0.2 <= w <= 3.0 for w in fig1), fig1
    assert 4.0 <= sum(w for *_, w in jobs) <= 20.0
    assert max(fig1) / min(fig1) < 10  # no ~100x heavy tail at high epsilon any more
