"""cpp/kernels/dft_taylor.hpp's lanes without the GCC / Clang vector types (the plain-array fallback that MSVC and
other compilers take, forced here by -DSHARPDP_NO_VECTOR_EXT) give the same doubles as the vector build
(docs/accountant_tail.md §75.1: each lane is one accumulator's IEEE operations in order, nothing fused)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def _run(tmp_path: Path, *defines: str) -> str:
    exe = tmp_path / ("dft" + "".join(d.strip("-") for d in defines))
    subprocess.run([CXX, "-std=c++17", "-O1", "-ffp-contract=off", *defines, f"-I{ROOT / 'cpp' / 'kernels'}",
                    str(ROOT / "tests" / "cpp" / "dft_portable_check.cpp"), "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(CXX is None, reason="no C++ compiler")
def test_plain_array_lanes_give_the_vector_builds_doubles(tmp_path):
    vec = _run(tmp_path)
    plain = _run(tmp_path, "-DSHARPDP_NO_VECTOR_EXT")
    assert len(vec) == 16 and vec == plain
    # (the hash itself depends on the C++ library's random distributions and libm's cos / sin: not pinned; on
    # 2026-12-07 with libstdc++ / glibc it was bd6596fdf8840c70, also under session 47's one-frequency-at-a-time code)
