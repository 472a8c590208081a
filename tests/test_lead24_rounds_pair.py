"""sharpdp account --rounds K: the output names the pair it composed (the model-placed pair is about 1-6 % looser than
the full profile's, which --discretization builds: a newcomer saw 9.50e-7 vs 9.23e-7 with nothing saying why)."""

import json

from _cli import run

BMG = ["account", "--gamma", "0.5", "--sigma0", "1.5", "--n", "1000", "--epsilon", "1", "--rounds", "2"]


def test_rounds_output_names_the_pair(capsys):
    code, out, _ = run(capsys, *BMG, "--json")
    model = json.loads(out)
    assert code == 0 and model["pair"].startswith("model-placed")
    code, out, _ = run(capsys, *BMG, "--discretization", str(model["discretization"]), "--json")
    full = json.loads(out)
    assert code == 0 and full["pair"].startswith("full profile")
    assert full["delta"] <= model["delta"] * 1.06  # (the full profile's pair is the tighter one, up to its lattice)
    code, out, _ = run(capsys, *BMG)
    assert code == 0 and "pair: model-placed" in out
