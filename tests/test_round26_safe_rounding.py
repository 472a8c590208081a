"""`sharpdp account`'s text prints certified figures rounded on the safe side (docs/cli.md §2, "Rounding"): g_up / g_down
against the exact decimal value of the double (decimal.Decimal(v), an independent reference), and the CLI's text
figures against its --json doubles."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sharpdp.cli import main
from sharpdp.cli.account_rounds import g_down, g_up, short_floats

BMG_ARGS = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000"]
KRR_ARGS = ["account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace"]
NUM = r"([0-9.]+(?:e[-+]\d+)?)"

positive = st.one_of(st.floats(min_value=5e-324, max_value=2.2250738585072014e-308),  # subnormals
                     st.floats(min_value=5e-324, exclude_min=False, allow_infinity=False, allow_nan=False),
                     st.floats(min_value=1e300, allow_infinity=False, allow_nan=False))  # huge


@settings(max_examples=400, deadline=None)
@given(v=positive, sig=st.sampled_from([3, 4, 6]))
@example(v=8.660894783238327e-29, sig=6)
@example(v=5e-324, sig=6)
@example(v=1.7976931348623157e308, sig=6)
@example(v=999999.5, sig=6)
def test_directed_rounding_brackets_the_double(v, sig):
    up, down = g_up(v, sig), g_down(v, sig)
    exact = Decimal(v)
    unit = Decimal(10) ** (exact.adjusted() - sig + 1)  # one unit of v's sig-th digit
    assert float(up) >= v and float(down) <= v, (v, up, down)
    assert exact <= Decimal(up) < exact + unit and exact - unit < Decimal(down) <= exact, (v, up, down)
    assert len(re.sub(r"e.*|[-.]|^0\.0*", "", up)) <= sig and len(re.sub(r"e.*|[-.]|^0\.0*", "", down)) <= sig
    # the style of :g: where round to nearest lands on the same side, the same text
    near = f"{v:.{sig}g}"
    if Decimal(near) >= exact:
        assert up == near, (v, up, near)
    if Decimal(near) <= exact:
        assert down == near, (v, down, near)


def test_specials_and_the_rev26a_figure():
    assert g_up(8.660894783238327e-29) == "8.6609e-29" and f"{8.660894783238327e-29:.6g}" == "8.66089e-29"
    assert g_down(8.660894783238327e-29) == "8.66089e-29"
    for v in (math.inf, 0.0, math.nan):
        assert g_up(v) == g_down(v) == f"{v:.6g}"
    # short_floats (errors): 4 digits, rounded up
    msg = short_floats("below the smallest certified composed delta found, 8.660894783238327e-29 at epsilon = "
                       "1.2430000000000001 nats")
    assert "8.661e-29 at epsilon = 1.244 nats" in msg, msg
    assert short_floats("found, 2.2863999999999999e-29 at") == "found, 2.287e-29 at"  # (nearest: 2.286e-29)
    # (caught: short_floats back to :.4g: 2.286e-29, below the value)


def _run(capsys, argv):
    code = main(argv)
    cap = capsys.readouterr()
    return code, " ".join(cap.out.split()), cap.err


def _both(capsys, argv):
    code = main([*argv, "--json"])
    r = json.loads(capsys.readouterr().out)
    assert code == 0
    code, out, err = _run(capsys, argv)
    assert code == 0, err
    return r, out


def _fig(pattern: str, text: str) -> list[float]:
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return [float(g) for g in m.groups()]


def test_single_round_text_figures_on_the_safe_side_and_accepted_back(capsys):
    r, out = _both(capsys, [*BMG_ARGS, "--epsilon", "25"])
    f = r["sampler_charge_floor"]
    head, at, own = _fig(rf"certified delta = {NUM} \(upper bound, certified at epsilon = {NUM} nats: .*? itself, "
                         rf"{NUM}, is mostly", out)
    lo, up = _fig(rf"nats \[{NUM}, {NUM}\]", out)
    assert head >= f["smallest_certified_delta"] and at >= f["smallest_at_epsilon"] and own >= r["delta"]
    assert up >= r["delta_upper"] and lo <= r["delta_lower"]
    floor = _fig(rf"2 n sampler_tv = {NUM}", out)[0]
    assert floor <= f["floor_at_any_epsilon"]
    # the headline passed back as --delta is certified (v* = 2.8869649e-29: :.6g printed 2.88696e-29, refused)
    code, out2, err = _run(capsys, [*BMG_ARGS, "--delta", repr(head)])
    assert code == 0, err
    # (caught: the headline back to :.6g: --delta 2.88696e-29 refused with exit status 2)


def test_delta_route_epsilon_rounded_up(capsys):
    r, out = _both(capsys, [*BMG_ARGS, "--delta", "3e-29"])
    eps = _fig(rf"certified epsilon = {NUM} \(nats\)", out)[0]
    sc = r["sampler_charge"]
    smallest, at = _fig(rf"the smallest certified delta is {NUM} at epsilon = {NUM} nats", out)
    assert eps >= r["epsilon"] and smallest >= sc["smallest_certified_delta"] and at >= sc["smallest_at_epsilon"]
    assert _fig(rf"sampler_tv = {NUM}, a lower", out)[0] <= sc["floor_at_any_epsilon"]
    # (caught: the epsilon back to :.6g: 0.396151 < 0.3961512...)


@pytest.mark.parametrize("target", [["--epsilon", "0.3"], ["--delta", "1e-6"]])
def test_krr_text_figures_on_the_safe_side(capsys, target):
    r, out = _both(capsys, [*KRR_ARGS, *target])
    if target[0] == "--epsilon":
        head = _fig(rf"certified delta = {NUM} \(upper bound", out)[0]
        lo, up = _fig(rf"bracket \[{NUM}, {NUM}\]", out)
        assert head >= r["delta"] and up >= r["delta_upper"] and lo <= r["delta_lower"], (out, r)
    else:
        assert _fig(rf"certified epsilon = {NUM} \(nats", out)[0] >= r["epsilon"], (out, r)


UP = 8.660894783238327e-29  # :.6g rounds it down (8.66089e-29): an upper figure printed so is below the value
LOW = 8.660895783238327e-29  # :.6g rounds it up (8.6609e-29): a lower end printed so is above the value
EPS = 0.4144123456  # :.3g, :.4g and :.6g round it down (0.414, 0.4144, 0.414412)


def _text_of(r):
    from sharpdp.cli.account import format_text

    return " ".join(format_text(r).split())


@pytest.mark.parametrize("rounds", [1, 3])
def test_format_text_every_certified_figure_on_its_safe_side(capsys, rounds):
    """format_text on real results whose figures are replaced by values :g rounds the wrong way (independent of the
    accountant's values, which may round either way): each upper figure parsed back is >= its value, each lower end
    <= it. Mutations caught: the k-RR headline, bracket ends and epsilon, the rounds headline/bracket/smallest line
    back to :.6g / :.4g (one at a time), a lower end printed with g_up."""
    krr, _ = _both(capsys, [*KRR_ARGS, "--epsilon", "0.3"])
    krr.update(delta=UP, delta_upper=UP, delta_lower=LOW)
    t = _text_of(krr)
    head = _fig(rf"certified delta = {NUM} \(upper bound", t)[0]
    lo, up = _fig(rf"bracket \[{NUM}, {NUM}\]", t)
    assert head >= UP and up >= UP and lo <= LOW, t
    krr_d, _ = _both(capsys, [*KRR_ARGS, "--delta", "1e-6"])
    krr_d.update(epsilon=EPS)
    assert _fig(rf"certified epsilon = {NUM} \(nats", _text_of(krr_d))[0] >= EPS
    bmg, _ = _both(capsys, [*BMG_ARGS, "--epsilon", "25"])
    bmg.update(delta=UP * 1e10, delta_upper=UP * 1e10, delta_lower=LOW)
    bmg["sampler_charge_floor"].update(smallest_certified_delta=UP, smallest_at_epsilon=EPS)
    if rounds > 1:  # a composed answer's keys (compose_rounds), the basic route at a smaller epsilon
        from sharpdp.cli.account_rounds import BASIC_LOWER

        bmg.update(rounds=rounds, discretization=0.01, delta=UP, delta_upper=UP, certified_at_epsilon=EPS,
                   delta_lower_meaning=BASIC_LOWER, composition_route="basic composition", pair="model-placed",
                   smallest_certified={"delta": UP, "epsilon": EPS, "route": "basic composition"})
        t = _text_of(bmg)
        head, at = _fig(rf"certified delta = {NUM} \(upper bound, certified at epsilon = {NUM} nats", t)
        lo, up = _fig(rf"bracket \[{NUM}, {NUM}\]", t)
        small, s_at = _fig(rf"smallest certified delta: {NUM} at epsilon = {NUM} nats", t)
        assert min(head, up, small) >= UP and min(at, s_at) >= EPS and lo <= LOW, t
        return
    t = _text_of(bmg)
    head, at = _fig(rf"certified delta = {NUM} \(upper bound, certified at epsilon = {NUM} nats", t)
    lo, up = _fig(rf"nats \[{NUM}, {NUM}\]", t)
    small, s_at = _fig(rf"a smaller certified delta, {NUM} at epsilon = {NUM} nats", t)
    assert min(head, small) >= UP and up >= UP * 1e10 and min(at, s_at) >= EPS and lo <= LOW, t


def test_route_text_names_the_certified_epsilon_rounded_up():
    """The --rounds route string names the epsilon where the value is certified (eps* = 1.2433260 on README's
    example): printed >= eps* (the value holds at every larger epsilon), as the 'certified at' line prints it (final
    newcomer pass: the route said 1.243 beside 1.244). Mutation caught: the figure back to :.4g."""
    from decimal import Decimal

    from sharpdp.cli.account_rounds import _route_text

    at = 1.2433260224
    text = _route_text("basic", at, 25.0)
    shown = re.search(r"basic composition at epsilon = ([0-9.e+-]+) nats", text).group(1)
    assert shown == "1.244" and Decimal(shown) >= Decimal(at)
