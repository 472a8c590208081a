"""`sharpdp account --epsilon 1e400` / `inf`: the same above-700 refusal as `sharpdp mean` (docs/cli.md §6), not the
validator's "must be finite". Mutation caught: without the inf branch in cli/account.py `_epsilon` both cases fail."""
import subprocess
import sys

import pytest


@pytest.mark.parametrize("value", ["1e400", "inf"])
def test_account_epsilon_beyond_double_range_names_the_cap(value):
    proc = subprocess.run([sys.executable, "-m", "sharpdp", "account", "--gamma", "0.95", "--sigma0", "4.6", "--n",
                           "1000000", "--epsilon", value], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "above 700" in proc.stderr and "got inf" not in proc.stderr
    assert "Traceback" not in proc.stderr
