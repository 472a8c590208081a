"""Session 34: the OpenDP route shows its certified values on one bar per search, named after the public call, with
an estimate of their number that matches OpenDP's own bisection (docs/embedding.md §2.3); the dp_accounting route's
pair bars are named after the public call too. The bars change no value."""

from __future__ import annotations

import math
import time

import pytest

pytest.importorskip("opendp")
dp_accounting = pytest.importorskip("dp_accounting")

import opendp.prelude as dp  # noqa: E402

import sharpdp.interop.curve_progress as CP  # noqa: E402
import sharpdp.interop.opendp as O  # noqa: E402
from sharpdp import _progress  # noqa: E402
from sharpdp.interop.curve_progress import values_left  # noqa: E402
from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant  # noqa: E402


@pytest.fixture
def log_lines(monkeypatch):
    """Plain lines from the first update (a fake clock 6 s further at each reading; no quiet period)."""
    t = [0.0]

    def clock():
        t[0] += 6.0
        return t[0]

    monkeypatch.setattr(_progress, "clock", clock)
    monkeypatch.setattr(_progress._PlainBar, "quiet", 0.0)


def _bisection_calls(curve, delta):
    calls = []
    with O._features():
        profile = dp.new_privacy_profile(lambda e: calls.append(e) or curve(e))
    return profile.epsilon(delta), calls


@pytest.mark.parametrize("rate, delta", [(3.0, 1e-6), (3.0, 1e-3), (3.0, 0.3), (0.01, 1e-6), (300.0, 1e-6)])
def test_values_left_predicts_opendps_own_bisection(rate, delta):
    # the reference: OpenDP's own bisection on a closed-form curve, its calls counted
    eps, calls = _bisection_calls(lambda e: min(1.0, math.exp(-rate * e)), delta)
    assert math.isclose(eps, math.log(1.0 / delta) / rate, rel_tol=1e-12)
    for k in range(1, len(calls) - 3):  # within 10 values (~15 %) from the 2nd call, exact once the step < eps/2
        predicted = k + 1 + values_left(calls[k - 1], calls[k])
        assert abs(predicted - len(calls)) <= (0 if abs(calls[k] - calls[k - 1]) < calls[k] / 2 else 10), (k, calls)
    assert 57 <= len(calls) <= 65 and abs(len(calls) - CP.SEARCH_VALUES) <= 5
    assert values_left(1.0, 1.0) is None and values_left(1.0, math.inf) is None


def _round():
    return ShuffleAccountant(RandomizedResponse(k=2, epsilon0=2.0), 500, "replace")


def test_epsilon_search_is_one_bar_named_after_the_call(capsys, monkeypatch, log_lines):
    acc = _round()
    counted = []
    real = O.privacy_profile
    monkeypatch.setattr(O, "privacy_profile", lambda a, e, **kw: counted.append(kw) or real(a, e, **kw))
    prof = O.make_shuffled_round(acc, progress=True).map(1)
    eps = prof.epsilon(1e-6)
    lines = capsys.readouterr().err.splitlines()
    head = "make_shuffled_round: profile.epsilon(delta=1e-06) by OpenDP's bisection of RR(2, 2) n=500 replace: "
    # caught on main: TypeError (no progress keyword); a bar per value ("privacy profile of ...: 1/1 values")
    assert lines and all(line.startswith(head) for line in lines), lines
    assert lines[0].startswith(head + f"1/{CP.SEARCH_VALUES} certified values")
    n = len(counted)
    assert lines[-1].startswith(head + f"{n}/{n} certified values (100%)") and lines[-1].endswith("(done)")
    assert "estimated at the start" in lines[-1] or n == CP.SEARCH_VALUES
    assert all(kw == {"progress": False} for kw in counted)  # (no bar per value inside the search's bar)
    # the bar changes nothing: the same epsilon without it, and it is certified
    assert O.make_shuffled_round(acc, progress=False).map(1).epsilon(1e-6) == eps
    assert capsys.readouterr().err == ""
    assert O.privacy_profile(acc, eps) <= 1e-6


def test_delta_is_one_value_and_make_fix_delta_gets_its_own_bar(capsys, monkeypatch, log_lines):
    monkeypatch.setattr(CP, "IDLE", 0.05)
    meas = O.make_shuffled_round(_round(), progress=True)
    d = meas.map(1).delta(0.5)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("make_shuffled_round: profile.delta(epsilon=0.5) of RR(2, 2) n=500 replace: 1/1 "
                                "certified values (100%)"), lines
    assert d == O.privacy_profile(_round(), 0.5)
    dp.enable_features("contrib")
    fixed = dp.c.make_fix_delta(meas, 1e-6)
    eps, delta = fixed.map(1)  # OpenDP's search from inside OpenDP: a bar closed once the calls stop
    time.sleep(0.5)
    lines = capsys.readouterr().err.splitlines()
    head = "make_shuffled_round: OpenDP's epsilon search (make_fix_delta, a combinator) of RR(2, 2) n=500 replace: "
    assert lines and all(line.startswith(head) for line in lines) and lines[-1].endswith("(done)"), lines
    assert eps == meas.map(1).epsilon(1e-6) and delta == 1e-6


def test_progress_must_be_a_bool_or_none():
    with pytest.raises(TypeError, match="progress must be None, True or False"):
        O.make_shuffled_round(_round(), progress="yes")


def test_to_pld_bars_name_the_public_call(capsys, log_lines):
    from sharpdp.interop.dp_accounting import to_pld
    from sharpdp.shuffle import clear_caches

    clear_caches()
    to_pld(ShuffleAccountant(RandomizedResponse(k=3, epsilon0=1.0), 100), progress=True)
    lines = capsys.readouterr().err.splitlines()
    # caught on main: the pair's bars said "privacy profile of ..." with nothing naming to_pld
    assert lines and all(line.startswith("to_pld: ") for line in lines), lines
