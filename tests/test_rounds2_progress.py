"""Progress of the k-round calibration (docs/composition.md §4.1): no silent phase, bars labelled by candidate,
no "about 0 s left" line before "(done)". Time is a fake clock (the progress service's test hook
``sharpdp._progress.clock``) advanced by a fixed cost per certified value, so nothing depends on the load."""

import functools
import sys

import numpy as np
import pytest

import sharpdp._progress as P
from sharpdp.shuffle import ShuffleAccountant, calibrate_bmg_report, clear_caches

_COST = 0.2  # fake seconds per certified value (ShuffleAccountant.get_delta_bounds, per epsilon)


class _Stamped:
    """A stderr stand-in recording each line with the fake time it was written at."""

    def __init__(self, now):
        self.now, self.lines = now, []

    def write(self, s):
        for line in s.splitlines():
            if line.strip():
                self.lines.append((self.now(), line))
        return len(s)

    def flush(self):
        pass


@pytest.fixture
def fake_time(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # the plain bars
    clear_caches()  # (values cached by an earlier test of the same case would cost no fake time)
    t = [0.0]
    monkeypatch.setattr(P, "clock", lambda: t[0])
    monkeypatch.setattr(P._PlainBar, "interval", 0.0)  # a line at every update (after the bar's delay)
    orig = ShuffleAccountant.get_delta_bounds

    @functools.wraps(orig)
    def costly(self, epsilon, *a, **k):
        t[0] += _COST * np.size(epsilon)
        return orig(self, epsilon, *a, **k)

    monkeypatch.setattr(ShuffleAccountant, "get_delta_bounds", costly)
    return t


def test_no_silent_phase_and_candidate_labels(fake_time, monkeypatch):
    t = fake_time
    out = _Stamped(lambda: t[0])
    monkeypatch.setattr(sys, "stderr", out)  # (here: pytest sets its own capture between setup and call)
    # n = 2000, 2 rounds at eps = 1: two candidates, each a single-round calibration, a pair's top placed by
    # the secant (the model misses the round) and 40 profile values
    rep = calibrate_bmg_report(2000, 1.0, 1e-6, 1, rounds=2, progress=True)
    end = t[0]
    times = [0.0] + [s for s, _ in out.lines] + [end]
    gaps = np.diff(times)
    assert end > 10.0 and gaps.max() <= 2.0, [(s, line[:60]) for s, line in out.lines]
    text = [line for _, line in out.lines]
    m = rep.composed_certifications
    for j in range(1, m + 1):  # every candidate's phases are labelled with it
        assert any(line.startswith(f"candidate {j}: calibrating BMG") for line in text)
        assert any(line.startswith(f"candidate {j}: privacy profile (explicit points)") for line in text)
    assert text[0].startswith("calibrating BMG for 2 rounds") and text[-1].endswith("(done)")
    # a finished bar says "(done)" once, no "about 0 s left" line before it
    assert not any("/40 values (100%)" in line and "left" in line for line in text)


def test_plain_bar_prints_no_line_at_its_total_before_done(monkeypatch):
    import io

    t = [0.0]
    monkeypatch.setattr(P, "clock", lambda: t[0])
    buf = io.StringIO()
    bar = P._PlainBar(total=4, desc="work", unit=" items", file=buf, delay=1.0)
    for _ in range(4):
        t[0] += 2.0
        bar.update(1)
    bar.close()
    lines = buf.getvalue().splitlines()
    assert lines[0] == "work: 1/4 items (25%), 2 s, about 6 s left (estimate)"
    assert lines[-1] == "work: 4/4 items (100%), 8 s (done)" and not any("0 s left" in x for x in lines)
    # a bar that reaches its total only after its delay, with no line before, still says "(done)"
    buf = io.StringIO()
    bar = P._PlainBar(total=2, desc="late", unit=" items", file=buf, delay=1.0)
    t[0] += 3.0
    bar.update(2)
    bar.close()
    assert buf.getvalue().splitlines() == ["late: 2/2 items (100%), 3 s (done)"]


def test_progress_label_prefixes_and_nests(monkeypatch):
    import io

    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    buf = io.StringIO()
    with P.progress_label("candidate 2: "):
        with P.progress_label("(fallback) "):
            bar = P.progress_bar(total=1, desc="x", unit=" v", file=buf)
        outside = P.progress_bar(total=1, desc="y", unit=" v", file=buf)
    after = P.progress_bar(total=1, desc="z", unit=" v", file=buf)
    assert (bar.desc, outside.desc, after.desc) == ("candidate 2: (fallback) x", "candidate 2: y", "z")
