"""`sharpdp account --rounds K` says at once what it is doing (the pair costs seconds to minutes) and
shows the pair's progress from the start, on stderr: stdout (text or JSON) is unchanged."""

import json

from _cli import run as _run


def test_status_line_first_and_json_unchanged(capsys):
    base = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--rounds", "2",
            "--discretization", "1e-4", "--epsilon", "0.002"]
    code, out, err = _run(capsys, *base, "--json")
    assert code == 0, err
    first = err.strip().splitlines()[0]
    assert first.startswith("sharpdp account: composing 2 rounds") and "dominating pair" in first
    r = json.loads(out)  # stdout is the JSON document alone
    assert r["rounds"] == 2 and 0.0 < r["delta"] < 1.0
