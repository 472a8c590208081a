"""`sharpdp account --bound`: the sharp k-RR bound where it applies, the blanket bound on request, and the blanket
one by default for --rounds > 1 at large n (composing the sharp round there costs tens of seconds and more)."""

import json

import pytest
from _cli import run as _run

import sharpdp.cli.account as account_cli
from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse, ShuffleAccountant

KRR = ("account", "--k", "2", "--epsilon0", "1", "--n", "1000", "--adjacency", "replace", "--delta", "1e-6", "--json")


def test_auto_is_sharp_and_blanket_is_the_blanket_accountant(capsys):
    code, out, _ = _run(capsys, *KRR)
    auto = json.loads(out)
    code_b, out_b, _ = _run(capsys, *KRR, "--bound", "blanket")
    blanket = json.loads(out_b)
    assert code == code_b == 0
    assert auto["bound"] == "sharp" and blanket["bound"] == "blanket"
    assert blanket["bound_why_not_sharp"] == "--bound blanket"
    rr = RandomizedResponse(2, 1.0)
    assert blanket["epsilon"] == ShuffleAccountant(rr, 1000, adjacency="replace").get_epsilon(1e-6)
    assert auto["epsilon"] == ExactShuffleAccountant(rr, 1000, "replace").get_epsilon(1e-6)
    assert 0.12 < auto["epsilon"] < 0.13 < 0.14 < blanket["epsilon"] < 0.15  # README: 0.1267 and 0.1487


@pytest.mark.parametrize("argv, why", [
    (("account", "--k", "3", "--epsilon0", "1", "--n", "100", "--adjacency", "replace"), "k = 3"),
    (("account", "--k", "2", "--epsilon0", "1", "--n", "100"), "--adjacency replace only"),
    (("account", "--gamma", "0.5", "--sigma0", "1", "--n", "100"), "k-ary randomized response"),
])
def test_sharp_is_refused_where_it_does_not_apply(capsys, argv, why):
    code, out, err = _run(capsys, *argv, "--delta", "1e-6", "--bound", "sharp")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("sharpdp account: error: --bound sharp:") and why in err, err


def test_rounds_at_large_n_default_to_the_blanket_bound(capsys, monkeypatch):
    # n = 300 counts as large: a fast composition (0.2 s of CPU for the sharp one, 1.7 s at n = 1000)
    monkeypatch.setattr(account_cli, "SHARP_ROUNDS_N", 100)
    krr = [("300" if a == "1000" else a) for a in KRR]
    code, out, err = _run(capsys, *krr, "--rounds", "2")
    r = json.loads(out)
    assert code == 0 and r["bound"] == "blanket" and "--bound sharp composes the sharp one anyway" in \
        r["bound_why_not_sharp"]
    code, out, err = _run(capsys, *krr, "--rounds", "2", "--bound", "sharp")
    assert code == 0 and json.loads(out)["bound"] == "sharp"
    assert "warning: composing the sharp bound at n = 300" in err
    # the sharp composition is the tighter one (0.355 against 0.411 here)
    assert json.loads(out)["epsilon"] < r["epsilon"]
