"""`sharpdp account --rounds K` (the model-placed pair, docs/composition.md §4.2): one bar, shown from the start,
counts every certified value the round's pair needs (its steps' own bars, each shorter than the progress rule's
delays, count into it: ``sharpdp._progress.progress_gather``), with an honest total (an estimate, grown where the
work is more, and said so in the final line)."""

import io
import json
import re
import sys

import pytest

from sharpdp import _progress as P
from test_cli22_newcomer import _Tty, _frames  # the terminal stand-in and its frames, shared


def test_gathered_bars_count_their_leaves_once_and_grow_the_total(monkeypatch):
    t = [0.0]
    monkeypatch.setattr(P, "clock", lambda: t[0])
    log = io.StringIO()  # (a log: plain lines)
    outer = P.progress_bar(total=10, desc="pair", unit=" values", file=log, estimated=True)
    with P.progress_gather(outer):
        for _ in range(2):  # single values, each its own short bar
            with P.progress_bar(total=1, desc="one", unit=" values", file=log) as b:
                t[0] += 3.0
                b.update(1)
        parent = P.progress_bar(total=6, desc="secant", unit=" values", file=log)
        for _ in range(3):  # a bar made inside another: only the inner one counts (no double count)
            with P.progress_bar(total=1, desc="one", unit=" values", file=log) as b:
                b.update(1)
            parent.update(1)
        parent.close()
        other = P.progress_bar(total=5, desc="candidates", unit=" candidates", file=log)  # another unit: not counted
        other.update(5)
        other.close()
        assert (outer.n, outer.total) == (5, 10)
        inner = P.progress_bar(total=8, desc="points", unit=" values", file=log)  # 5 + 8 > 10: the total grows
        assert outer.total == 13
        for _ in range(8):
            t[0] += 3.0
            inner.update(1)
        inner.close()
    assert P._GATHER.get() is None  # (the block is left)
    outer.total = outer.n
    outer.close()
    lines = log.getvalue().splitlines()
    assert lines and all(line.startswith("pair: ") for line in lines), lines  # the inner bars draw nothing
    assert lines[-1].startswith("pair: 13/13 values (100%) (10 estimated at the start)") and "(done)" in lines[-1]


def test_account_rounds_shows_one_bar_of_the_pairs_values_from_the_start(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    from sharpdp.cli import main
    from sharpdp.cli.account_rounds import _MODEL_VALUES

    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    # (a round no other test accounts: the accountants' values are cached per process, and a cached value costs
    # nothing to count; a round whose values are all cached ends its bar at 0/0)
    code = main(["account", "--gamma", "0.9", "--sigma0", "3.0", "--n", "2999", "--rounds", "3", "--epsilon",
                 "0.003", "--json"])
    out = capsys.readouterr().out
    assert code == 0, tty.getvalue()
    frames = _frames(tty.getvalue())
    assert frames[0].startswith("sharpdp account: composing 3 rounds") and "40 certified values" in frames[0]
    bar = [f for f in frames if f.startswith("round's dominating pair")]
    assert bar and bar[0].startswith("round's dominating pair: ") and f"0/{_MODEL_VALUES}" in bar[0], bar[:2]
    n = int(re.search(r" (\d+)/\1 ", bar[-1]).group(1))  # the final frame: count = total (finished)
    assert n >= 39, bar[-1]  # (the 40 points, one perhaps computed by the steps that placed them)
    # the steps' own bars drew nothing (their values are in this one)
    assert not any("explicit points" in f or "pair's top" in f for f in frames), frames
    assert json.loads(out)["rounds"] == 3
