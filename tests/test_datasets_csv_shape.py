"""A user's CSV whose header has an unnamed field, or whose numeric column holds a stray text value, is refused with
a message naming the problem (before: an "Unnamed: 2" column with no complete rows, or the column skipped silently)."""

import pytest

from sharpdp.apps.datasets import load_table


def _write(tmp_path, text):
    p = tmp_path / "data.csv"
    p.write_text(text)
    return str(p)


def test_header_with_trailing_comma_is_refused(tmp_path):
    path = _write(tmp_path, "a,b,\n1,2,\n3,4,\n")
    with pytest.raises(ValueError, match=r"header field 3 of 3 has no name"):
        load_table(path)


def test_stray_text_in_a_numeric_column_is_named(tmp_path):
    path = _write(tmp_path, "a,b,name\n1,2,x\n3,oops,y\n5,6,z\n")
    with pytest.raises(ValueError, match=r"column 'b' .* mostly numeric: 1 of its 3 rows holds a value that is not a "
                                         r"number \(not shown") as err:
        load_table(path)
    assert "oops" not in str(err.value)  # an error line names the column and the count, never a cell


def test_text_columns_are_still_skipped(tmp_path):
    path = _write(tmp_path, "a,name,code\n1,x,12\n3,y,ab\n5,z,cd\n")
    table = load_table(path)  # "code" is mostly text: a text column, skipped as before
    assert table.columns == ("a",)
    assert table.data[:, 0].tolist() == [1.0, 3.0, 5.0]


def test_skipped_text_columns_are_named_without_their_values(tmp_path):
    path = _write(tmp_path, 'a,b,name\n"5,250",2,x\n"6,125",3,y\n')
    table = load_table(path)
    assert table.columns == ("b",)
    (note,) = table.warnings
    assert "'a', 'name' skipped" in note and "'a' holds numbers with thousands separators" in note
    assert "5,250" not in note and "6,125" not in note
    assert load_table(_write(tmp_path, "a,b\n1,2\n")).warnings == ()


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from sharpdp.apps.datasets import csv_block_shape  # noqa: E402

_field = st.text(alphabet="ab1 .-\r", max_size=4)  # a CR alone ends a line too (csv module path)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.lists(_field, min_size=0, max_size=5), min_size=1, max_size=30),
       trailing_newline=st.booleans(), crlf=st.booleans())
def test_numpy_field_count_matches_the_csv_module(rows, trailing_newline, crlf):
    """The quote-free fast path of csv_block_shape against the csv module on the same lines (reference)."""
    import csv

    end = "\r\n" if crlf else "\n"
    text = end.join(",".join(r) for r in rows) + (end if trailing_newline else "")
    ref_rows = list(csv.reader(text.splitlines()))
    header = ref_rows[0] if ref_rows else []
    width, data = len(header), ref_rows[1:]
    bad = next(((i, len(r)) for i, r in enumerate(data) if len(r) > width), None)
    got_header, got_n, got_bad = csv_block_shape(text.encode(), None)
    assert (got_header, got_n, got_bad) == (header, len(data), bad)
    assert csv_block_shape(text.encode(), width)[1:] == (len(ref_rows), next(
        ((i, len(r)) for i, r in enumerate(ref_rows) if len(r) > width), None))


def test_block_shape_refuses_bad_arguments():
    with pytest.raises(TypeError, match="block must be bytes"):
        csv_block_shape("a,b\n", None)
    for width in (-1, 1.5, True):
        with pytest.raises(ValueError, match="width must be None or an integer >= 0"):
            csv_block_shape(b"a,b\n", width)
