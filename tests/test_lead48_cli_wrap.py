"""The CLI's wrapped entries keep a short interval ``[a, b]`` on one line (newcomer48: ``sharpdp mean``'s bounds line
broke ``dep_delay [-120,`` / ``1440]``), and the text is otherwise unchanged."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.cli import TEXT_WIDTH, wrap_entry


def test_the_flights_bounds_line_keeps_each_interval_whole():
    text = ("built-in public bounds for the flights table: dep_delay [-120, 1440], arr_delay [-120, 1440], "
            "air_time [0, 720], distance [0, 5000]")
    lines = wrap_entry("bounds", text)
    assert len(lines) > 1 and all(len(ln) <= TEXT_WIDTH for ln in lines)
    for ln in lines:  # (caught on session 47's wrapping: "dep_delay [-120," then "1440]")
        assert ln.count("[") == ln.count("]"), lines
    assert " ".join(" ".join(lines).split()) == "bounds : " + text


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.sampled_from(["alpha", "be", "[1, 2]", "[-120, 1440]", "x = 3", "[9.97709e-07, 9.99e-07]",
                                       "long-word-without-spaces", "(a, b)"]), min_size=1, max_size=40),
       indent=st.integers(4, 20))
def test_wrapping_only_moves_spaces_and_never_splits_an_interval(words, indent):
    text = " ".join(words)
    lines = wrap_entry("", text, indent=indent)
    joined = " ".join(" ".join(lines).split())
    assert joined == " ".join(text.split())  # the same words in the same order, no stray non-breaking space
    assert "\xa0" not in "".join(lines)
    for ln in lines:
        assert not re.search(r"\[[^\]]*$", ln), lines  # no "[" left open at a line's end
