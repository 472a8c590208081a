"""Package-level contracts: lazy import, no JIT at import, CLI basics."""

import subprocess
import sys

import pytest


def _run_py(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


def test_import_compiles_nothing():
    out = _run_py("import sys, sharpdp; print('numba' in sys.modules, 'sharpdp._core' in sys.modules)")
    assert out.split() == ["False", "False"]


def test_core_extension_loads():
    from sharpdp import _core

    assert {"accountant", "samplers", "histogram", "crlb"} <= set(dir(_core))


def test_cli_help_and_one_line_errors(capsys):
    """--help in a fresh interpreter; the unknown command in-process through the same main() (argparse's
    SystemExit carries the status; an exception escaping main would fail the test)."""
    from sharpdp.cli import main

    ok = subprocess.run([sys.executable, "-m", "sharpdp.cli", "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "mean" in ok.stdout
    capsys.readouterr()
    with pytest.raises(SystemExit) as bad:
        main(["no-such-command"])
    out, err = capsys.readouterr()
    assert bad.value.code == 2 and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "no-such-command" in err
