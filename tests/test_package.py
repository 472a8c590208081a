"""Package-level contracts: lazy import, no JIT at import, CLI basics."""

import subprocess
import sys



def _run_py(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout


def test_import_compiles_nothing():
    out = _run_py("import sys, sharpdp; print('numba' in sys.modules, 'sharpdp._core' in sys.modules)")
    assert out.split() == ["False", "False"]


def test_core_extension_loads():
    from sharpdp import _core

    assert {"accountant", "samplers", "histogram", "crlb"} <= set(dir(_core))


def test_cli_help_and_one_line_errors():
    ok = subprocess.run([sys.executable, "-m", "sharpdp.cli", "--help"], capture_output=True, text=True)
    assert ok.returncode == 0 and "mean" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "sharpdp.cli", "no-such-command"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
