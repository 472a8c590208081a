"""`sharpdp account` after comp26 (docs/cli.md §2, docs/composition.md §4.4): --rounds answers name their route and
the epsilon their value is certified at, the smallest certified composed delta (one number, shared by the line and
the --delta refusal), the CLI's short floats in errors, and the single round's wording."""

from __future__ import annotations

import json
import re

import pytest

from sharpdp.cli import main
from sharpdp.cli.account_rounds import g_up
from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.calibration.rounds import model_composition

BMG_ARGS = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000"]
LONG_FLOAT = re.compile(r"\d\.\d{7,}")  # a repr such as 2.8869649277461074e-29


def _run(capsys, argv):
    code = main(argv)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _json(capsys, argv):
    code, out, err = _run(capsys, [*argv, "--json"])
    assert code == 0, err
    return json.loads(out)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_rounds_epsilon_25_headlines_the_smallest_certified_value(capsys):
    r = _json(capsys, [*BMG_ARGS, "--rounds", "3", "--epsilon", "25"])
    s = r["smallest_certified"]
    # the headline is the value certified at eps* < 25, the one the line and get_epsilon's refusal name
    assert r["delta"] == r["delta_upper"] == s["delta"] and r["certified_at_epsilon"] == s["epsilon"] < 25.0
    assert s["route"] == "basic composition" and r["composition_route"].startswith("basic composition at epsilon")
    # an independent reference: 3 x a fresh round's certified value at eps* / 3 (basic composition, §4.3)
    fresh = ShuffleAccountant(BlanketMixedGaussian(0.95, 4.6, 1), 10**6)
    assert s["delta"] == pytest.approx(3 * float(fresh.report(s["epsilon"] / 3).upper), rel=1e-6)
    code, out, _ = _run(capsys, [*BMG_ARGS, "--rounds", "3", "--epsilon", "25"])
    text = _flat(out)
    assert code == 0 and f"certified delta = {g_up(s['delta'])} (upper bound, certified at epsilon = " in text
    assert (f"smallest certified delta: {g_up(s['delta'])} at epsilon = {g_up(s['epsilon'], 4)} nats (basic composition); it "
            "also holds at every larger epsilon") in text
    # (caught: the envelope disabled: delta 2.73e-27 != the smallest value 8.66e-29; the line missing)


def test_rounds_epsilon_1_keeps_its_own_value_and_names_the_fallback(capsys):
    code, out, err = _run(capsys, [*BMG_ARGS, "--rounds", "3", "--epsilon", "1", "--json"])
    r = json.loads(out)
    assert code == 0 and r["certified_at_epsilon"] == 1.0 and r["smallest_certified"] is None  # (charge: 0.2 %)
    # the model's points reach no floor here: the default pair is built, and the progress says so before its bar
    assert "the model-placed points reach no floor" in err and r["pair"].startswith("model-placed route, fallen back to the full profile")
    # (caught: the smallest line shown without the charge trigger; the fallback labelled "model-placed")


def test_rounds_delta_refusal_names_the_smallest_value_in_the_cli_s_figures(capsys):
    ca = model_composition(BlanketMixedGaussian(0.95, 4.6, 1), 10**6, "zero_out", 3, 25.0, progress=None)
    v, at, _ = ca.smallest_certified_delta()  # (the same basic values: the round caches are per process)
    code, out, err = _run(capsys, [*BMG_ARGS, "--rounds", "3", "--delta", "3e-29"])
    assert code == 2 and "--delta: 3e-29 is below the smallest certified composed delta found" in err
    assert f"{g_up(v, 4)} at epsilon = {g_up(at, 4)}" in err and not LONG_FLOAT.search(err), err
    # (caught: short_floats not applied: 8.660894783238327e-29; the old message without the smallest value)


def test_rounds_delta_answer_names_its_route(capsys):
    r = _json(capsys, [*BMG_ARGS, "--rounds", "3", "--delta", "1e-20"])
    # 1e-20 is below the default pair's infinity mass (~1.1e-18): basic composition answers
    assert r["composition_route"].startswith("basic composition")
    code, out, _ = _run(capsys, [*BMG_ARGS, "--rounds", "3", "--delta", "1e-20"])
    assert code == 0 and "value by basic composition" in _flat(out)
    # (caught: --delta answers without composition_route: KeyError)


def test_single_round_headline_and_wording(capsys):
    r = _json(capsys, [*BMG_ARGS, "--epsilon", "25"])
    f = r["sampler_charge_floor"]
    code, out, _ = _run(capsys, [*BMG_ARGS, "--epsilon", "25"])
    head = _flat(out.split("\nbracket")[0])
    assert head.endswith(f"epsilon = 25 nats: certified delta = {g_up(f['smallest_certified_delta'])} (upper bound, "
                         f"certified at epsilon = {g_up(f['smallest_at_epsilon'], 4)} nats: delta is non-increasing in "
                         f"epsilon; the value computed at 25 nats itself, {g_up(r['delta'])}, is mostly the release "
                         "sampler's charge)")
    # "2 n sampler_tv" stays on one line of the wrapped text (no-break spaces)
    # (2 n sampler_tv = 2.2872e-29, a lower bound, printed rounded down: docs/cli.md §2)
    assert any("2\u00a0n\u00a0sampler_tv = 2.28e-29" in line for line in out.splitlines()), out
    assert "not a lower bound on delta" in _flat(out) and "lower value is of the accountant's bound" not in out
    # (caught: the headline 8.23434e-19; the expression wrapped after "2 n")


def test_single_round_errors_use_short_floats(capsys):
    code, _, err = _run(capsys, [*BMG_ARGS, "--delta", "2.5e-29"])
    assert code == 2 and "smallest value 2.887e-29" in err and not LONG_FLOAT.search(err), err
    code, _, err = _run(capsys, [*BMG_ARGS, "--epsilon", "1e400"])
    assert code == 2 and "the value given (beyond the double range, read as inf) is above 700" in err
    assert "inf nats" not in err
    # (caught: 2.8869649277461074e-29 in the error; "inf nats is above 700")


def test_replace_run_explains_chi_lo_per_adjacency(capsys):
    code, out, _ = _run(capsys, [*BMG_ARGS, "--adjacency", "replace", "--epsilon", "0.5"])
    text = _flat(out)
    assert code == 0 and "lower shuffle index of the zero-out relation" in text and "replace-one bound" in text
    code, out, _ = _run(capsys, [*BMG_ARGS, "--epsilon", "0.5"])
    assert "lower shuffle index (zero-out)" in _flat(out)
    # (caught: the zero-out note on a replace run)
