"""Operator frictions: `sharpdp mean` progress for K = 1, short bar descriptions, honest bars on Ctrl-C, the
round cache of LatticePrivUnit, the OpenDP unit-row domain and the K-round pair's wording (docs/composition.md
§2.3, §4.1-4.2, docs/embedding.md §2). Time is a fake clock (``sharpdp._progress.clock``); the K-round runs use
stand-in accountants (the template, not a privacy bound), so every test here costs well under a second."""

from __future__ import annotations

import io
import math
import pathlib
import re
import sys

import numpy as np
import pytest

import sharpdp._progress as P
from sharpdp.shuffle import LatticePrivUnit, PrivUnit, ShuffleAccountant, clear_caches, template_delta_estimate
from sharpdp.shuffle import round_cache as RC
from sharpdp.shuffle.calibration import rounds as CR
from sharpdp.shuffle.calibration import search as CS
from sharpdp.shuffle.profile import privacy_profile

from _cli import run as _run

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


class _Tty(io.StringIO):
    """A terminal stand-in (isatty, no file descriptor: 80 columns by the progress service's rule)."""

    def isatty(self):
        return True


class _StandIn:
    """Single-round stand-in accountant: the template's value as both ends (NOT a privacy bound); ``calls``
    counts the evaluations, ``stop_at`` raises KeyboardInterrupt at that call (an injected Ctrl-C)."""

    calls = 0
    stop_at = math.inf

    def __init__(self, randomizer, n, adjacency="zero_out", rel_tol=1e-2):
        self.r, self.n = randomizer, n

    def get_delta_bounds(self, epsilon):
        cls = type(self)
        cls.calls += 1
        P_clock[0] += 2.0  # two fake seconds per evaluation: bars pass their delay and print
        if cls.calls >= cls.stop_at:
            raise KeyboardInterrupt
        d = template_delta_estimate(self.r.chi_lo, self.n, epsilon)
        return d, d


P_clock = [0.0]


@pytest.fixture
def plain(monkeypatch):
    """Plain bars (on a stream that is not a terminal) on a fake clock that stands still unless a stand-in
    evaluation advances it."""
    P_clock[0] = 0.0
    monkeypatch.setattr(P, "clock", lambda: P_clock[0])


@pytest.fixture
def stand_ins(monkeypatch):
    monkeypatch.setattr(CS, "make_accountant", lambda r, n, adjacency, rel_tol=CS.CERT_REL_TOL: _StandIn(r, n))
    monkeypatch.setattr(_StandIn, "calls", 0)
    monkeypatch.setattr(_StandIn, "stop_at", math.inf)
    cands = []

    def composed(bmg, n, adjacency, rounds, epsilon, progress=False, delta=None):  # 4x the model: a failure
        cands.append(bmg)
        d = min(4.0 * template_delta_estimate(bmg.chi_lo / math.sqrt(rounds), n, epsilon), 1.0)
        return d, d

    monkeypatch.setattr(CR, "_composed_bounds", composed)
    return cands


@pytest.fixture
def table(tmp_path):
    p = tmp_path / "t.csv"
    x = np.random.default_rng(0).uniform(0.0, 1.0, size=800)
    p.write_text("a\n" + "\n".join(f"{v:.6f}" for v in x) + "\n")
    return p


# ------------------------------------------------------------------------------------------ 1. K = 1 progress
def test_mean_k1_quick_calibration_prints_no_bar_in_a_log(capsys, plain, table):
    # the clock stands still at 0 s: in a log a step that ends within 2 s prints nothing (the progress rule)
    code, out, err = _run(capsys, "mean", "--csv", str(table), "--bounds", "0:1", "--epsilon", "1", "--seed", "1")
    assert code == 0, err
    assert not [x for x in err.splitlines() if x.startswith("calibrating BMG")], err
    assert "loading the data" not in err  # (a log: no terminal-only line)


def test_mean_k1_on_a_terminal_says_what_comes_then_draws_the_bar(capsys, monkeypatch, table):
    pytest.importorskip("tqdm")
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    code, out, _ = _run(capsys, "mean", "--csv", str(table), "--bounds", "0:1", "--epsilon", "1", "--seed", "1")
    err = tty.getvalue()
    assert code == 0, err
    assert err.startswith("sharpdp mean: loading the data, then calibrating the randomizer\n"), err[:200]
    # a live bar drawn from its start; its time left is an upper value (the budget may not all be used)
    assert "\rcalibrating BMG:   0%|" in err and "0/10 [00:00<=?" in err


# ------------------------------------------------------------------------ 2. short descriptions on a terminal
def test_long_descriptions_leave_the_count_and_estimate_visible_at_80_columns(monkeypatch):
    tqdm = pytest.importorskip("tqdm")
    tty = _Tty()
    bar = P.progress_bar(total=4, desc="calibrating BMG for 5 rounds, " + "detail " * 20, unit=" candidates",
                         file=tty, ncols=80, mininterval=0.0)
    assert isinstance(bar, tqdm.std.tqdm) and len(bar.desc) <= 80 - P._ROOM and bar.desc.endswith("...")
    bar.update(1)
    bar.close()
    last = [x.rstrip("\n") for x in tty.getvalue().split("\r") if "1/4" in x][-1]
    assert len(last) <= 80 and " 25%|" in last and "1/4 [" in last and "<" in last, repr(last)
    assert P._fit("calibrating BMG for 5 rounds", 80) == "calibrating BMG for 5 rounds"  # a short one is kept whole
    assert P._fit("candidate 2: privacy profile (explicit points)", 80) == "candidate 2: privacy profile"
    assert P._fit("x" * 100, 200) == "x" * 100 and len(P._fit("x" * 100, 30)) == 20  # at least 20 characters


def test_rounds_bar_is_short_and_its_detail_is_printed_once(capsys, plain, stand_ins):
    from sharpdp.shuffle import calibrate_bmg_report

    calibrate_bmg_report(5000, 0.1, 1e-6, 1, rounds=4, progress=True)
    err = capsys.readouterr().err.splitlines()
    detail = [x for x in err if "candidates budgeted" in x]
    assert len(detail) == 1 and detail[0] == err[0] and "more only if none certifies" in detail[0]
    outer = [x for x in err[1:] if x.startswith("calibrating BMG for 4 rounds")]
    assert outer and all(x.startswith("calibrating BMG for 4 rounds: ") for x in outer)
    assert len("calibrating BMG for 4 rounds") <= 40 and outer[-1].endswith("(done)")
    assert all(len(x.split(": ")[0]) <= 40 for x in err[1:] if "pair's top" in x)


# ------------------------------------------------------------------------------------------ 3. Ctrl-C
def test_ctrl_c_leaves_the_bars_at_their_true_count_and_says_interrupted(capsys, plain, stand_ins, table):
    _StandIn.stop_at = 12  # inside the second candidate's single-round calibration
    code, out, err = _run(capsys, "mean", "--csv", str(table), "--bounds", "0:1", "--epsilon", "1",
                          "--rounds", "2", "--seed", "1")
    lines = err.splitlines()
    assert code == 130 and out == "" and lines[-1] == "sharpdp mean: interrupted" and "Traceback" not in err
    assert len(stand_ins) == 1  # one candidate certified before the Ctrl-C
    outer = [x for x in lines if x.startswith("calibrating BMG for 2 rounds: ") and "budgeted" not in x]
    assert outer[-1].startswith("calibrating BMG for 2 rounds: 1/4 candidates (25%), ")
    assert outer[-1].endswith(" (interrupted)") and not any(x.endswith("(done)") for x in outer)
    inner = [x for x in lines if x.startswith("candidate 2: calibrating BMG: ")]
    done = _StandIn.calls - 1  # evaluations finished before the injected one
    first = int(re.search(r"candidate 1: calibrating BMG: (\d+)/\1 .*\(done\)",
                          "\n".join(lines)).group(1))  # candidate 1 finished its evaluations
    assert inner[-1].startswith(f"candidate 2: calibrating BMG: {done - first}/10 accountant evaluations")
    assert inner[-1].endswith("(interrupted)") and not any("100%" in x for x in inner)


def test_tqdm_bar_keeps_its_count_when_interrupted():
    pytest.importorskip("tqdm")
    tty = _Tty()
    bar = P.progress_bar(total=10, desc="work", unit=" v", file=tty, leave=True, mininterval=0.0)
    bar.update(3)
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        finally:  # what a caller's cleanup does: "finished", total = count, redraw, close
            bar.total = bar.n
            bar.refresh()
            bar.close()
    text = tty.getvalue()
    assert bar.total == 10 and "100%" not in text and "10/10" not in text
    assert text.rstrip("\n").split("\r")[-1].startswith("work:  30%|") and "3/10" in text and "interrupted" in text
    bar = P.progress_bar(total=10, desc="work", file=tty, disable=True)
    bar.total = 4  # outside an interrupt the total follows the caller
    assert bar.total == 4


def test_bars_left_open_are_closed_as_interrupted_before_the_clis_line(plain):
    pytest.importorskip("tqdm")
    tty, log = _Tty(), io.StringIO()
    live = P.progress_bar(total=40, desc="values", unit=" values", file=tty, leave=True, mininterval=0.0)
    flat = P.progress_bar(total=40, desc="values", unit=" values", file=log)  # a plain bar (tqdm.auto hidden)
    live.update(33)
    flat.update(33)  # (shown at once: its first update, no delay)
    P.close_interrupted()  # what `sharpdp` does on Ctrl-C for bars a caller closes only on success
    last = tty.getvalue().rstrip("\n").split("\r")[-1].rstrip()  # (tqdm pads over the longer line before)
    assert last.endswith("33/40 [00:00] interrupted") and " 82%|" in last and len(last) <= 80, repr(last)
    assert log.getvalue().splitlines()[-1] == "values: 33/40 values (82%), 0 s (interrupted)"
    assert not list(P._OPEN)


# ------------------------------------------------------------------------------------ 4. LatticePrivUnit cache
def test_lattice_rounds_are_cached_and_never_share_a_privunit_entry(monkeypatch):
    clear_caches()
    calls = []
    orig = ShuffleAccountant.get_delta_bounds

    def counted(self, epsilon, *a, **k):
        calls.append(type(self.randomizer).__name__)
        return orig(self, epsilon, *a, **k)

    monkeypatch.setattr(ShuffleAccountant, "get_delta_bounds", counted)
    n, eps = 1000, 0.5
    lat = LatticePrivUnit(0.7, 0.2, 3, scale_bits=40)
    v1 = privacy_profile(ShuffleAccountant(lat, n), eps)
    assert calls == ["LatticePrivUnit"]
    # a new accountant of an equal round (a new randomizer object): a cache hit, no evaluation
    v2 = privacy_profile(ShuffleAccountant(LatticePrivUnit(0.7, 0.2, 3, scale_bits=40), n), eps)
    assert v2 == v1 and calls == ["LatticePrivUnit"]
    # PrivUnit of equal (p, theta, d): its own entry, its own (charge-free) value
    vp = privacy_profile(ShuffleAccountant(PrivUnit(0.7, 0.2, 3), n), eps)
    assert calls == ["LatticePrivUnit", "PrivUnit"] and vp < 1e-50
    # the lattice value is PrivUnit's plus the sampler charge (1 + e^eps) n eta (docs/sampling.md §4, §10.6)
    charge = (1.0 + math.exp(eps)) * n * lat.sampler_tv
    assert v1 >= vp + charge and v1 == pytest.approx(vp + charge, rel=1e-6)
    # another scale_bits is another round (another charge)
    v3 = privacy_profile(ShuffleAccountant(LatticePrivUnit(0.7, 0.2, 3, scale_bits=48), n), eps)
    assert calls[-1] == "LatticePrivUnit" and len(calls) == 3 and v3 < v1 / 100
    keys = {RC.round_key(ShuffleAccountant(r, n)) for r in (lat, PrivUnit(0.7, 0.2, 3),
                                                           LatticePrivUnit(0.7, 0.2, 3, scale_bits=48))}
    assert len(keys) == 3 and all(k is not None and k[1][0] == "params" for k in keys)


# --------------------------------------------------------------------------------------------- 5. OpenDP
def test_opendp_domain_of_privunits_release_is_unit_rows():
    pytest.importorskip("opendp.prelude")
    import opendp.prelude as dp
    from opendp import mod as odp_mod

    from sharpdp.interop import opendp as O
    from sharpdp.shuffle import BlanketMixedGaussian

    lat = LatticePrivUnit(0.7, 0.2, 3)
    acc = ShuffleAccountant(lat, 4)
    dom = O.default_input_domain(acc)
    x = np.eye(3)[[0, 1, 2, 0]]
    assert dom.member(x) and not dom.member(0.5 * x) and not dom.member(x[:3]) and not dom.member(x.astype(np.float32))
    assert dom.descriptor == O.UnitRowsDescriptor(4, 3)
    m = O.make_shuffled_round(acc, rng=1)
    assert str(m.input_domain) == "UnitRows(size=4, num_columns=3, p=2, tol=1e-09, T=f64)"
    assert m(x).shape == (4, 3)
    with pytest.raises(odp_mod.OpenDPException, match="unit-norm rows"):  # (OpenDP checks no membership at
        m(0.5 * x)  # invocation: the sampler still refuses rows off the sphere)
    ball = O.default_input_domain(ShuffleAccountant(BlanketMixedGaussian(0.5, 1.0, 3), 4))
    assert "norm=1.0" in str(ball)  # the BMG keeps the unit ball
    with pytest.raises(ValueError, match="^input_domain: LatticePrivUnit needs unit rows"):
        O.make_shuffled_round(acc, ball)  # refused at construction, naming the parameter
    assert isinstance(dom, dp.Domain)


# ------------------------------------------------------------------------------- 6. K-round range (refusal)
def test_rounds_refuse_at_once_beyond_the_per_round_epsilon_they_support(capsys, monkeypatch, table):
    from sharpdp.shuffle import calibrate_bmg_report

    def no_evaluation(*a, **k):
        raise AssertionError("an accountant was built before the refusal")

    monkeypatch.setattr(CS, "make_accountant", no_evaluation)
    with pytest.raises(ValueError, match=r"^epsilon: 50 nats over 5 rounds is 22\.4 nats per round \(epsilon / "
                                         r"sqrt\(rounds\)\), above 5,.*basic composition"):
        calibrate_bmg_report(327346, 50.0, 1e-6, 4, rounds=5)
    code, out, err = _run(capsys, "mean", "--csv", str(table), "--bounds", "0:1", "--epsilon", "50", "--rounds", "5")
    assert code == 2 and out == "" and "Traceback" not in err and len(err.splitlines()) == 1  # before the load
    assert err.splitlines()[-1].startswith("sharpdp mean: error: --epsilon: 50 nats over 5 rounds is 22.4 nats per")
    assert CR.ROUNDS_EPS_PER_ROUND_MAX == 5.0


def test_rounds_at_the_per_round_bound_are_calibrated(stand_ins):
    from sharpdp.shuffle import calibrate_bmg_report

    # epsilon / sqrt(rounds) = 5 exactly: searched as before (stand-in accountants: the search, no certificate)
    rep = calibrate_bmg_report(5000, 10.0, 1e-6, 1, rounds=4, progress=False)
    assert rep.rounds == 4 and rep.composed_certifications == len(stand_ins) >= 1 and rep.delta_bounds[1] <= 1e-6


# ------------------------------------------------------------------------------ 7. the K-round pair's wording
def test_pair_points_are_spread_evenly_about_ten_lattice_steps_apart():
    dx, pts = CR._pair_points(4.0)
    ks = np.array(pts) / dx
    assert dx == pytest.approx(0.01) and len(pts) == 40 and pts[0] == 0.0 and ks[-1] == pytest.approx(400.0)
    assert np.allclose(ks, np.round(ks)) and set(np.diff(np.round(ks)).astype(int)) <= {10, 11}
    text = (DOCS / "composition.md").read_text()
    sec41 = text[text.index("### 4.1"):text.index("### 4.2")]
    sec42 = text[text.index("### 4.2"):text.index("## 5.")]
    assert "40 even lattice points" not in sec42 and "about 10 Delta" in sec42
    assert 'Dong, Roth & Su, "Gaussian Differential Privacy"' in sec41 and "Corollary 3.3" in sec41


def test_terminal_bar_with_a_long_unit_fits_80_columns(monkeypatch):
    # the calibration's unit " accountant evaluations" made the rate run past column 80; on a terminal a
    # long unit keeps its last word and the description leaves room for it
    monkeypatch.setattr(P, "_is_terminal", lambda f: True)
    buf = io.StringIO()
    bar = P.progress_bar(total=10, desc="candidate 1: calibrating BMG", unit=" accountant evaluations",
                                 file=buf, mininterval=0, ncols=80)
    bar.update(5)
    bar.close()
    lines = [ln for ln in buf.getvalue().replace("\r", "\n").split("\n") if ln.strip()]
    assert lines and all(len(ln) <= 80 for ln in lines), lines
    assert "candidate 1: calibrating BMG" in lines[-1] and "5/10" in lines[-1] and "evaluations/s" in lines[-1]
