"""sharpdp histogram --table2 reads no data: the data and release options are refused with it, naming them."""

import json

import pytest

from _cli import run


@pytest.mark.parametrize("extra, first", [(["--by", "carrier"], "--by"), (["--seed", "3", "--csv", "x.csv"], "--csv"),
                                          (["--diagnostics", "d.json"], "--diagnostics")])
def test_table2_refuses_the_release_options(capsys, tmp_path, extra, first):
    code, out, err = run(capsys, "histogram", "--table2", "--no-plot", "--json", "--out", str(tmp_path), *extra)
    assert code == 2
    obj = json.loads(out or err)
    assert obj["parameter"] == first and "--table2" in obj["error"]
    assert not any(tmp_path.iterdir())  # nothing written


def test_table2_alone_still_prints_the_table(capsys, tmp_path):
    code, out, _ = run(capsys, "histogram", "--table2", "--no-plot", "--out", str(tmp_path))
    assert code == 0 and "Table 2" in out
