"""`sharpdp account --delta D` refusals print D as typed (sharpdp.cli.rounding.short_floats' ``keep``): the CLI
rounds the library's long figures up (docs/cli.md §2), which showed a typed 1.23456789e-40 as 1.235e-40, a value
the user did not type; the figures it is compared with stay rounded up."""
from __future__ import annotations

import re

import pytest
from _cli import run

from sharpdp.cli.rounding import short_floats


def test_short_floats_keeps_the_typed_value_and_rounds_the_others_up():
    msg = "1.23456789e-40 is below the smallest certified delta found, 8.660894783238327e-29 at 1.2433260"
    assert short_floats(msg, keep=(1.23456789e-40,)) == ("1.23456789e-40 is below the smallest certified delta "
                                                         "found, 8.661e-29 at 1.244")
    assert short_floats(msg).startswith("1.235e-40 is below")  # (no keep: every long figure rounded up)


@pytest.mark.parametrize("extra", [[], ["--rounds", "3"]])
def test_account_refusal_prints_the_typed_delta(capsys, extra):
    # (caught, keep= dropped at either call site: '--delta: 1.235e-40 is ...')
    code, out, err = run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000", "--delta",
                         "1.23456789e-40", *extra)
    assert code == 2 and out == ""
    assert "--delta: 1.23456789e-40 is " in err
    figures = [float(x) for x in re.findall(r"\d\.\d+e-\d+", err)]
    assert any(f > 1e-30 for f in figures)  # (the value it is compared with is still named)
