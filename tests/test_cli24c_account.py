"""sharpdp account: the charge-floor search is a progress step bounded by wall time too (README's progress rule);
its texts name what a CLI user can do, not API parameters; the Gaussian randomizer is named; --epsilon has the
cap of sharpdp mean (700 nats, docs/cli.md §6)."""

import json
import time

import sharpdp.cli.account as account
from _cli import run
from sharpdp.shuffle.accountant import ShuffleAccountant

# the docs/cli.md §2 example: at 25 nats the certified delta is the sampler's charge (the floor search runs)
BMG = ["account", "--gamma", "0.95", "--sigma0", "4.6", "--n", "1000000"]


def _slow_report(monkeypatch, seconds):
    """ShuffleAccountant.report sleeping ``seconds`` of wall time (no CPU): the charge-floor search's values."""
    report = ShuffleAccountant.report

    def slow(self, epsilon):
        time.sleep(seconds)
        return report(self, epsilon)

    monkeypatch.setattr(ShuffleAccountant, "report", slow)


def test_floor_search_is_bounded_by_wall_time(capsys, monkeypatch):
    code, out, err = run(capsys, *BMG, "--epsilon", "25", "--json")
    free = json.loads(out)["sampler_charge_floor"]["values_searched"]
    assert code == 0 and free >= 10  # (unhindered: the golden-section steps, ~26 values)
    _slow_report(monkeypatch, 0.25)  # a loaded machine: wall time passes, CPU time does not
    monkeypatch.setattr(account, "FLOOR_WALL", 0.6)
    t0 = time.monotonic()
    code, out, err = run(capsys, *BMG, "--epsilon", "25", "--json")
    r = json.loads(out)
    assert code == 0 and r["sampler_charge_floor"]["values_searched"] <= 4  # (caught: the CPU budget alone: 26)
    assert time.monotonic() - t0 < 0.6 + 4 * 0.25 + 3.0
    # every value seen is certified: the reported delta is the fresh one, the floor's value no larger
    assert r["sampler_charge_floor"]["smallest_certified_delta"] <= r["delta"]


def test_floor_search_says_itself_on_a_terminal_and_in_a_log(capsys, monkeypatch):
    monkeypatch.setattr("sharpdp._progress.is_terminal", lambda stream: True)
    code, out, err = run(capsys, *BMG, "--epsilon", "25")
    assert code == 0
    # (caught: golden_min outside _wait: no line at all)
    assert "sharpdp account: smallest certified delta at epsilon <= 25 nats: the certified delta at 25 nats is " \
           "mostly the release sampler's charge" in err, err
    monkeypatch.undo()
    _slow_report(monkeypatch, 0.5)
    monkeypatch.setattr(account, "FLOOR_WALL", 2.2)
    code, out, err = run(capsys, *BMG, "--epsilon", "25")  # stderr is not a terminal under capsys: a log
    assert code == 0
    assert "account: smallest certified delta at epsilon <= 25 nats: 2 s" in err, err
    assert err.rstrip().endswith("(done)")


def test_cli_texts_name_cli_options_not_api_parameters(capsys):
    code, out, err = run(capsys, *BMG, "--delta", "1e-300")
    assert code == 2 and "--delta: 1e-300 is not above the charge alone" in err
    assert "sampler_charge" not in err and "pass a larger --delta" in err  # (caught: no cli_wording in _certified)
    code, out, err = run(capsys, "account", "--gamma", "0.95", "--sigma0", "1e5", "--n", "1000", "--epsilon", "1")
    text = " ".join(out.split())
    assert code == 0 and "release sampler: cannot sample this randomizer (sigma0: the noise table" in text
    assert "grid_bits" not in out  # (caught: no cli_wording in _sampler_text)
    code, out, err = run(capsys, "account", "--gamma", "0.95", "--sigma0", "1e5", "--n", "1000", "--epsilon", "1",
                         "--json")
    # (cli25: the --json copy is in the CLI's wording too, docs/cli.md §5; it was the API's property)
    assert "grid_bits" not in json.loads(out)["sampler_refusal"]


def test_gamma_zero_is_named_the_gaussian_randomizer(capsys):
    code, out, err = run(capsys, "account", "--gamma", "0", "--sigma0", "1", "--n", "1000", "--epsilon", "1")
    assert code == 0 and out.startswith("Gaussian randomizer (gamma = 0), sigma0 = 1,")  # (caught: "BMG gamma = 0")
    assert "BMG" not in out.splitlines()[0]


def test_epsilon_cap_is_the_same_in_account_and_mean(capsys):
    code_a, _, err_a = run(capsys, *BMG, "--epsilon", "1e300")
    code_m, _, err_m = run(capsys, "mean", "--epsilon", "1e300")
    assert code_a == code_m == 2  # (caught: account accepting 1e300, as on s24)
    assert "--epsilon: 1e+300 nats is above 700" in err_a and "--epsilon: 1e+300 nats is above 700" in err_m
    code, out, err = run(capsys, *BMG, "--epsilon", "700.0000001")
    assert code == 2 and "above 700" in err
