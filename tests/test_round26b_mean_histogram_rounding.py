"""`sharpdp mean` and `sharpdp histogram` print their certified figures rounded on the safe side (docs/cli.md §2,
"Rounding"): on README's default runs, every certified upper figure of the text (mean's certified delta and its
bracket's upper end, histogram's per-member epsilons) is >= the --json double as a real number (decimal.Decimal of
the printed text against Decimal of the double: an exact, independent reference), a bracket's lower end is <= it, and
the epsilon / target delta the user gave is printed as given."""

from __future__ import annotations

import contextlib
import io
import json
import re
from decimal import Decimal

import pytest

from sharpdp.cli import main
from sharpdp.cli.histogram import small_groups_warning

NUM = r"([0-9.]+(?:e[-+]\d+)?)"


def _cli(argv):
    """stdout and stderr (whitespace-joined) of one CLI run (module-scoped fixtures: no capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    return out.getvalue(), " ".join(err.getvalue().split())


@pytest.fixture(scope="module")
def mean_runs():
    text, json_out = (_cli(["mean", "--seed", "1", *extra])[0] for extra in ([], ["--json"]))
    return " ".join(text.split()), json.loads(json_out)


def test_mean_default_certified_delta_and_bracket_on_the_safe_side(mean_runs):
    text, r = mean_runs
    m = re.search(rf"certified delta = {NUM} \(target delta = {NUM};", text)  # (session 30: one --delta wording)
    assert m, text
    assert Decimal(m.group(1)) >= Decimal(r["delta_certified"]), (m.group(1), r["delta_certified"])
    # (the default run's 9.993373945e-07 prints as 9.99337e-07 with :.6g, below the certified value)
    assert Decimal(m.group(1)) - Decimal(r["delta_certified"]) < Decimal("1e-12")
    assert m.group(2) == f"{r['delta_target']:.3g}"  # the target delta as the user gave it (default 1e-6)
    b = re.search(rf"bracket \[{NUM}, {NUM}\]", text)
    assert b, text
    lo, up = r["delta_bounds"]
    assert Decimal(b.group(1)) <= Decimal(lo) and Decimal(b.group(2)) >= Decimal(up), (b.groups(), lo, up)
    assert Decimal(lo) - Decimal(b.group(1)) < Decimal("1e-9") and Decimal(b.group(2)) - Decimal(up) < Decimal("1e-9")


def test_mean_default_epsilon_printed_as_given(mean_runs):
    text, r = mean_runs
    assert r["epsilon"] == 0.01
    assert "epsilon = 0.01 nats, certified delta" in text  # (rounded up it would read 0.0100001)


@pytest.fixture(scope="module")
def histogram_runs(tmp_path_factory):
    runs = [_cli(["histogram", "--seed", "3", "--no-plot", "--out", str(tmp_path_factory.mktemp(f"h{k}")), *extra])
            for k, extra in enumerate(([], ["--json"]))]
    return runs[0], json.loads(runs[1][0])


def test_histogram_default_guarantee_epsilons_rounded_up(histogram_runs):
    (text, err), r = histogram_runs
    g = r["guarantee"]
    rows = re.findall(rf"n = +(\d+): v\(n\) = \S+ +epsilon = {NUM} nats", text)
    assert [int(n) for n, _ in rows] == g["n"], text
    for (n, shown), eps in zip(rows, g["epsilon"]):
        assert Decimal(shown) >= Decimal(eps), (n, shown, eps)
        assert Decimal(shown) - Decimal(eps) < Decimal(eps) * Decimal("0.01") + Decimal("1e-300"), (n, shown, eps)
    # (e.g. n = 2: 144.35... prints as 145, where :.3g gave 144, below the certified epsilon)
    assert any(Decimal(f"{e:.3g}") < Decimal(e) for e in g["epsilon"])
    assert f"at target delta = {r['delta']:g}" in err  # the delta the user gave (default 1e-6), as given
    top = re.search(rf"up to {NUM} for a count of 0 or 1", err)
    assert top, err
    assert Decimal(top.group(1)) >= Decimal(max(g["epsilon"][:2])), (top.group(1), g["epsilon"][:2])


@pytest.mark.parametrize("eps_top, shown", [(144.35295576968744, "145"), (43.84996633121241, "43.9"),
                                            (1.3736147181516571, "1.38"), (348.8455260753716, "349")])
def test_small_groups_warning_epsilon_rounded_up(eps_top, shown):
    # (the default run's certified epsilons at n = 2, 10, 1000 and 0-1; :.3g prints the first three below them)
    # (session 30: "at target delta", the one --delta wording of docs/cli.md §8)
    assert f"(up to {shown} for a count of 0 or 1) at target delta = 1e-06" in small_groups_warning(1, 2, 16, eps_top,
                                                                                                    1e-6)


def test_histogram_default_error_bound_rounded_up(histogram_runs):
    """The guarantee table's E|error| figure is an upper bound: printed >= the --json double (final newcomer pass:
    `E|error| <= 25` for 25.025 at n = 1000 with :.3g). Mutation caught: the figure back to :.3g."""
    (text, _), r = histogram_runs
    shown = re.findall(rf"E\|error\| <= {NUM}", text)
    bounds = r["guarantee"]["expected_abs_error_bound"]
    assert len(shown) == len(bounds), text
    for s, b in zip(shown, bounds):
        assert Decimal(s) >= Decimal(b), (s, b)
    assert any(Decimal(f"{b:.3g}") < Decimal(b) for b in bounds)  # (the case the rounding matters for)
