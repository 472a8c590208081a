"""Small CLI frictions of the newcomer pass: every printed epsilon says its unit (nats), `sharpdp mean` says that
its figures hold for one release (K releases of the same data: --rounds K), `sharpdp account`'s first progress
line follows the progress rule, `sharpdp crlb` refuses to overwrite its output without --overwrite."""

from __future__ import annotations

import json
import re

import pytest

from _cli import run

#: A printed epsilon: "epsilon = 0.01", "epsilon0 = 1", "epsilon <= 1", "epsilon above 1" and what follows it.
_EPS = re.compile(r"epsilon0? (?:=|<=|above) [-+0-9.e]+(?P<after>\S*\s*\S*)")


def _unlabelled(text: str) -> list[str]:
    """The printed epsilons of ``text`` (wrapping undone) not followed by their unit."""
    text = " ".join(text.split())
    found = list(_EPS.finditer(text))
    assert found, text  # (the test reads some epsilon)
    return [m.group(0) for m in found if not re.match(r"\s*\(?nats\b", m.group("after"))]


def _mean_result(rounds: int = 1) -> dict:
    return {"columns": ["a"], "source": "x.csv", "d": 1, "n": 2, "analyst_only_not_private": {},
            "bounds_source": "--bounds", "epsilon": 0.25, "delta_certified": 1e-6, "delta_target": 1e-5,
            "delta_bounds": [9e-7, 1e-6], "bmg": {"gamma": 0.5, "sigma0": 1.0, "chi_lo": 0.1, "mse_single": 1.0},
            "expected_rmse_per_coordinate": 0.1,
            "central_gaussian": {"rmse_per_coordinate": 0.05, "rmse_original_units": [0.05]},
            "rmse_ratio_bmg_over_central": 2.0, "private_mean": [1.0], "expected_rmse_original_units": [0.1],
            "warnings": [], "reproducible_seeded_mode": False, "rounds": rounds}


# ------------------------------------------------------------------------------------------ 1. epsilon in nats
def test_mean_prints_epsilon_in_nats():
    from sharpdp.cli.mean import format_text, large_epsilon_note

    text = format_text(_mean_result())
    assert "epsilon = 0.25 nats" in " ".join(text.split()) and not _unlabelled(text)
    assert large_epsilon_note(12.0).startswith("epsilon = 12 is large (in nats)")  # the note on stderr


def test_histogram_prints_epsilon_in_nats():
    from sharpdp.cli.histogram import format_text, small_groups_warning

    res = {"mode": "release", "source": "x.csv", "by": ["k"], "groups": 2, "key_domain": "the data's keys",
           "missing_key_policy": "dropped", "r": 0.5, "r0": 0, "c": 1.0, "sigma": 2.0, "integer": False,
           "delta": 1e-6, "epsilon_method": "exact", "largest_released": [{"group": "a", "released": 3.0}],
           "guarantee": {"n": [1, 10], "v_n": [1.0, 0.5], "epsilon": [7.5, 0.75], "expected_abs_error_bound": [1, 2]},
           "csv": "r.csv", "png": None, "diagnostics": None, "reproducible_seeded_mode": False}
    text = format_text(res)
    assert "epsilon = 0.75 nats" in text and not _unlabelled(text)
    assert not _unlabelled(small_groups_warning(1, 2, 5, 9.0, 1e-6))  # the warning on stderr


def test_account_prints_every_epsilon_in_nats(capsys):
    code, out, err = run(capsys, "account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--epsilon", "0.5")
    assert code == 0, err
    assert "epsilon0 = 1 nats" in " ".join(out.split()) and not _unlabelled(out)
    code, out, err = run(capsys, "account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000", "--epsilon", "2")
    assert code == 0, err
    assert "epsilon = 2 nats: certified delta" in out and not _unlabelled(out)


# ------------------------------------------------------------------------------- 3. one run, one release
@pytest.mark.parametrize("rounds", [1, 3])
def test_mean_says_its_figures_hold_for_the_releases_it_was_calibrated_for(rounds):
    from sharpdp.cli import release_scope
    from sharpdp.cli.mean import format_text

    scope = release_scope(rounds)
    text = " ".join(format_text(_mean_result(rounds)).split())
    assert f"releases : {scope}" in text
    if rounds == 1:
        assert "this one release" in scope and "--rounds K" in scope
    else:
        assert f"{rounds} releases" in scope and f"--rounds {rounds}" in scope and "this one release" not in scope


# ------------------------------------------------------------------- 2. account's wait follows the progress rule
def _slow(monkeypatch, seconds: float) -> None:
    """The accountant's answers take ``seconds`` more (a stand-in for a large n), the progress rule's times are
    shortened to 0.1 s (quiet period and interval)."""
    import time

    import sharpdp._progress as P
    from sharpdp.shuffle.accountant import ShuffleAccountant

    depth = [0]  # (get_epsilon calls get_delta_bounds: only the outermost call waits)
    for name in ("get_epsilon", "get_delta_bounds"):
        real = getattr(ShuffleAccountant, name)

        def slow(self, *a, _real=real, **k):
            if depth[0] == 0:
                time.sleep(seconds)
            depth[0] += 1
            try:
                return _real(self, *a, **k)
            finally:
                depth[0] -= 1

        monkeypatch.setattr(ShuffleAccountant, name, slow)
    monkeypatch.setattr(P._PlainBar, "quiet", 0.1)
    monkeypatch.setattr(P._PlainBar, "interval", 0.1)


_ACCOUNT = ("account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000")  # (answers in ~0.3 s of CPU)


@pytest.mark.parametrize("target,step", [(("--delta", "1e-6"), "account: certified epsilon at target delta = 1e-06"),
                                         (("--epsilon", "1"), "account: certified delta at epsilon = 1 nats")])
def test_account_wait_prints_its_step_lines_in_a_log_from_the_quiet_period(monkeypatch, capsys, target, step):
    _slow(monkeypatch, 0.45)
    code, out, err = run(capsys, *_ACCOUNT, *target)
    assert code == 0, err
    lines = err.splitlines()
    # the first line after the quiet period (not after the slow note's 5 s), then every interval, then (done)
    assert len(lines) >= 3 and all(re.fullmatch(re.escape(step) + r": \d+ s", x) for x in lines[:-1]), err
    assert lines[-1] == f"{lines[-2]} (done)" or re.fullmatch(re.escape(step) + r": \d+ s \(done\)", lines[-1]), err
    assert "note" not in err  # the explanation comes only after 5 s


def test_account_quick_answer_prints_nothing_in_a_log_and_one_line_at_the_start_on_a_terminal(monkeypatch, capsys):
    import sharpdp._progress as P

    code, out, err = run(capsys, *_ACCOUNT, "--delta", "1e-6")
    assert code == 0 and err == "", err  # a step that ends within the quiet period: nothing
    monkeypatch.setattr(P, "_is_terminal", lambda f: True)
    code, out, err = run(capsys, *_ACCOUNT, "--delta", "1e-6")
    assert code == 0 and err.startswith("sharpdp account: certified epsilon at target delta = 1e-06: a search on "
                                        "certified values, with no count to show progress on"), err
    assert len(err.splitlines()) == 1 and "Ctrl-C stops it" in err, err


# ---------------------------------------------------------------- 4. crlb does not replace an earlier run silently
@pytest.mark.parametrize("no_plot", [True, False])
def test_crlb_refuses_an_existing_output_without_overwrite(tmp_path, capsys, no_plot):
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    argv = ["crlb", "--experiment", "5.3", "--trials", "2", "--seed", "2", "--out", str(out_dir)] + (
        ["--no-plot"] if no_plot else [])
    existing = out_dir / ("crlb_5_3.csv" if no_plot else "crlb_5_3.png")
    existing.write_text("earlier run\n")
    for extra in ([], ["--json"]):
        code, out, err = run(capsys, *argv, *extra)
        assert code == 2 and f"--out: {existing} exists (an earlier run's output)" in err and "--overwrite" in err, err
        assert (json.loads(out)["parameter"] == "--out") if extra else out == ""
    assert existing.read_text() == "earlier run\n" and sorted(p.name for p in out_dir.iterdir()) == [existing.name]
    code, out, err = run(capsys, *argv, "--overwrite", "--json")
    assert code == 0, err
    written = json.loads(out)
    assert written["files"]["csv"] == str(out_dir / "crlb_5_3.csv") and existing.read_bytes() != b"earlier run\n"
    # another experiment's file is not in the way
    code, out, err = run(capsys, "crlb", "--experiment", "5.1", "--trials", "2", "--seed", "2", "--out", str(out_dir),
                         "--no-plot")
    assert code == 0, err


def test_mean_run_says_so_in_its_json_and_text(tmp_path, capsys):
    import numpy as np

    from sharpdp.cli import release_scope

    rng = np.random.default_rng(0)
    p = tmp_path / "rows.csv"
    p.write_text("a\n" + "\n".join(f"{v:.4f}" for v in rng.uniform(0, 1, 2000)) + "\n")
    argv = ["mean", "--csv", str(p), "--bounds", "0:1", "--epsilon", "1", "--delta", "1e-5"]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    assert json.loads(out)["release_scope"] == release_scope(1)
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    text = " ".join(out.split())
    assert f"releases : {release_scope(1)}" in text and "epsilon = 1 nats," in text and not _unlabelled(out)
