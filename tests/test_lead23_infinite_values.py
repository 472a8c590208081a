"""A value of +-inf (or one beyond the float range, 1e400) is refused with one line naming the column, by both
engines' loaders: dropping the row as if missing let a record's content decide whether it takes part and change the
public n (newcomer finding); no data cell is quoted."""

import numpy as np
import pandas as pd
import pytest

from sharpdp.cli import main


@pytest.mark.parametrize("cell", ["inf", "-inf", "1e400"])
def test_mean_refuses_an_infinite_value(tmp_path, capsys, cell):
    f = tmp_path / "x.csv"
    f.write_text(f"a,b\n1,2\n2,3\n{cell},4\n")
    assert main(["mean", "--csv", str(f), "--bounds", "0:10,0:10", "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "column 'a' holds an infinite value" in err and "Traceback" not in err and f"'{cell}'" not in err


def test_missing_value_still_dropped(tmp_path, capsys):
    f = tmp_path / "x.csv"
    f.write_text("a,b\n1,2\n2,3\n,4\n")
    assert main(["mean", "--csv", str(f), "--bounds", "0:10,0:10", "--seed", "1", "--json"]) == 0


def test_dask_partition_loader_refuses_it():
    from sharpdp.distributed._mean import _complete

    ok = pd.DataFrame({"a": [1.0, np.nan], "b": [2.0, 3.0]})
    values, dropped = _complete(ok, 2)
    assert values.shape == (1, 2) and dropped == 1
    with pytest.raises(ValueError, match="column 'b' holds an infinite value"):
        _complete(pd.DataFrame({"a": [1.0, 2.0], "b": [2.0, -np.inf]}), 2)
