"""A randomizer says whether its release sampler can draw it (``can_sample``, ``sampler_refusal``), and
``sharpdp account`` says so next to a certificate of a release the sampler refuses (docs/cli.md §5). The
reference is the sampler itself: ``sample`` raises exactly when ``can_sample`` is False, with that message."""

import json

import numpy as np
import pytest

from sharpdp.cli import main
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse
from sharpdp.shuffle.accountant import ShuffleAccountant

X = np.array([[0.25]])


@pytest.mark.parametrize("make", [
    lambda: BlanketMixedGaussian(0.5, 3e4, 1),  # noise table of 13.2 * 3e4 + 1 > 2^18 entries
    lambda: GaussianRandomizer(2.5e4, 1),
    lambda: BlanketMixedGaussian(0.5, 1.0, 4, grid_bits=0),  # h sqrt(dim) = 2 >= 1/2
    lambda: BlanketMixedGaussian(0.5, 1e-300, 1),  # s = sigma0 / h < 2^-10 on the finest grid
    lambda: BlanketMixedGaussian(0.5, 1.0, 1),
    lambda: BlanketMixedGaussian(0.1, 300.0, 2),
    lambda: RandomizedResponse(3, 1.0),
])
def test_can_sample_agrees_with_the_sampler(make):
    rnd = make()
    x = np.zeros((1, rnd.dim)) if isinstance(rnd, BlanketMixedGaussian) else np.array([0])
    if rnd.can_sample:
        assert rnd.sampler_refusal is None
        assert rnd.sample(x, rng=1).shape[0] == 1
    else:
        with pytest.raises(ValueError) as err:
            rnd.sample(x, rng=1)
        assert str(err.value) == rnd.sampler_refusal


def test_the_table_cap_sits_where_the_sampler_puts_it():
    # dim 1 with sigma0 >= 512: h = 1, s = sigma0; the cap 13.2 s + 1 <= 2^18 ends between these two
    assert BlanketMixedGaussian(0.5, 19_859.0, 1).can_sample
    assert not BlanketMixedGaussian(0.5, 19_860.0, 1).can_sample


def _account(capsys, *args):
    assert main(["account", *args]) == 0
    return capsys.readouterr().out


def test_account_says_the_sampler_refuses_and_keeps_the_certificate(capsys):
    args = ["--gamma", "0.5", "--sigma0", "3e4", "--n", "1000", "--epsilon", "1"]
    r = json.loads(_account(capsys, *args, "--json"))
    rnd = BlanketMixedGaussian(0.5, 3e4, 1)
    from sharpdp.cli.errors import cli_wording

    # (cli25: --json's sampler_refusal is in the CLI's wording, docs/cli.md §5; it was the property's text)
    assert r["can_sample"] is False and r["sampler_refusal"] == cli_wording(rnd.sampler_refusal)
    assert "262144 entries" in r["sampler_refusal"]
    assert r["delta"] == float(ShuffleAccountant(rnd, 1000).get_delta_bounds(1.0)[1])  # the same certificate
    text = _account(capsys, *args)
    assert "release sampler: cannot sample this randomizer" in " ".join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 80


def test_account_of_a_release_the_sampler_can_draw(capsys):
    args = ["--gamma", "0.5", "--sigma0", "3", "--n", "1000", "--epsilon", "1"]
    r = json.loads(_account(capsys, *args, "--json"))
    assert r["can_sample"] is True and r["sampler_refusal"] is None
    assert "release sampler:" not in _account(capsys, *args)
    k = json.loads(_account(capsys, "--k", "2", "--epsilon0", "1", "--n", "100", "--epsilon", "1", "--json"))
    assert k["can_sample"] is True and k["sampler_refusal"] is None


def test_krr_json_with_no_sampler_charge(capsys):
    # k-RR has eps_tau = inf (JSON refused it: a traceback) and no charge; its certified delta here is the least
    # subnormal, whose half rounds to 0, so "a charge of 0 makes most of this value" was printed
    args = ["--k", "2", "--epsilon0", "1", "--n", "100", "--epsilon", "1"]
    r = json.loads(_account(capsys, *args, "--json"))
    assert 0.0 < r["delta"] <= 5e-324 and r["sampler_charge_floor"] is None
    assert "charge" not in r["bracket_note"] and "charge" not in _account(capsys, *args)
