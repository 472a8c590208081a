"""The standalone C++ kernel check (tests/cpp/kernels_check.cpp) built and run from the test suite.

The build command is read from ``.ci/run`` (its ``"$cxx" ...`` lines), so that this test builds exactly what CI
builds (one definition of the sources and flags): a plain C++17 compiler, no Python headers, no pybind11. The check
prints ``ok`` when every closed-form comparison passes. Skipped, saying why, where no C++ compiler is on PATH.
"""

from __future__ import annotations

import pathlib
import shlex
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CI = ROOT / ".ci" / "run"
SOURCE = ROOT / "tests" / "cpp" / "kernels_check.cpp"


def _compiler() -> str | None:
    """The compiler ``.ci/run`` picks: the first of c++, g++, clang++ on PATH."""
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


def build_command(cxx: str, out_dir: pathlib.Path) -> list[str]:
    """The kernel check's build command of ``.ci/run`` (its line starting ``"$cxx"`` and the continuation lines),
    with ``$cxx`` and ``$tmp`` replaced by ``cxx`` and ``out_dir``."""
    lines = CI.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith('"$cxx"'))
    text = ""
    for line in lines[start:]:
        text += line.rstrip().removesuffix("\\") + " "
        if not line.rstrip().endswith("\\"):
            break
    text = text.replace('"$cxx"', shlex.quote(cxx)).replace('"$tmp/', shlex.quote(str(out_dir)) + '/"')
    return shlex.split(text)


def test_the_ci_build_command_is_the_kernel_check():
    cmd = build_command("CXX", pathlib.Path("/TMP"))
    assert cmd[0] == "CXX" and "tests/cpp/kernels_check.cpp" in cmd and cmd[-2:] == ["-o", "/TMP/kernels_check"]
    assert "-std=c++17" in cmd
    # every kernel source the check's headers declare is linked (a missing one fails at link time, below)
    assert {"cpp/kernels/samplers.cpp", "cpp/kernels/histogram.cpp", "cpp/kernels/accountant.cpp"} <= set(cmd)
    # the check's header names this test as the one that builds it
    assert "tests/test_misc34_kernels_check.py" in SOURCE.read_text().split("#include", 1)[0]


def test_kernel_check_builds_and_prints_ok(tmp_path):
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler (c++, g++ or clang++) on PATH: the standalone kernel check needs one "
                    "(CI has one; .ci/run builds it too)")
    build = subprocess.run(build_command(cxx, tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, f"kernel check did not build:\n{build.stderr[-4000:]}"
    run = subprocess.run([str(tmp_path / "kernels_check")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout[-4000:] + run.stderr[-4000:]
