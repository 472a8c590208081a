"""A missing --columns name on the built-in table lists the columns ``sharpdp mean`` can use, and names the text
ones as unusable (they were listed as available, then refused)."""

from __future__ import annotations

import pytest

pytest.importorskip("pandas")


def test_text_columns_constant_matches_the_table():
    import pandas as pd

    from sharpdp.apps import datasets

    frame = datasets.flights_frame(datasets.flights_columns())
    text = tuple(c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c]))
    assert text == datasets.FLIGHTS_TEXT_COLUMNS


def test_missing_column_message_lists_numeric_ones():
    from sharpdp.apps import datasets

    with pytest.raises(ValueError, match="columns: no column 'nope'") as exc:
        datasets.load_table(None, ["nope"])
    msg = str(exc.value)
    numeric, text = msg.split("numeric columns: ")[1].split("; text columns ")
    assert "dep_delay" in numeric and "carrier" not in numeric and "time_hour" not in numeric
    assert text.startswith("carrier, tailnum, origin, dest, time_hour are not usable here")
