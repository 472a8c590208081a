"""Adversarial review (rev48b) of docs/accountant_tail.md §76.1, Lemma 76.1 (cpp/kernels/lognormal_cells.hpp
``exp_small`` / ``expm1_small``, switch ``limits.GAUSS48_SMALL_EXP``): |exp_small(y) - e^y| <= 4u e^y and
|expm1_small(y) - expm1(y)| <= 4u |expm1(y)| for |y| <= 2^-7 (u = 2^-53).

Attack points: the tier thresholds 2^-7 and 2^-13 and 64 floats on each side of each (both signs), +-0, subnormals and
the normal/subnormal boundary, tiny normals where Horner's products are inexact, random arguments (uniform near the
thresholds, log-uniform down to 2^-1074). Reference: mpmath at 50 digits on the exact binary value of each argument.
Checked through the binding ``_core.lognormal_small_exp`` (the library's build) and, where g++ is present, through the
header compiled standalone in a no-FMA build (-ffp-contract=off, as .ci/run's kernels check) and an FMA build
(-mfma -ffp-contract=fast): the lemma claims both; the no-FMA build must equal the binding bit for bit (the library is
built for baseline x86-64, no FMA)."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

mpmath = pytest.importorskip("mpmath")
pytest.importorskip("sharpdp._core")
from sharpdp._core_loader import core  # noqa: E402

_core = core.accountant  # (the binding lives in the accountant submodule)

U = 2.0**-53
BOUND = 4.0  # (Lemma 76.1: 4u)
ROOT = Path(__file__).resolve().parents[1]


def _neighbours(t: float, k: int = 64) -> list[float]:
    out = [t]
    lo = hi = t
    for _ in range(k):
        lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
        out += [lo, hi]
    return out


def _args() -> np.ndarray:
    """The attack arguments, all within |y| <= 2^-7 (the binding refuses others)."""
    pts: list[float] = []
    for t in (2.0**-7, 2.0**-13):
        pts += [y for y in _neighbours(t) if abs(y) <= 2.0**-7]
        pts += [-y for y in _neighbours(t) if abs(y) <= 2.0**-7]
    sub = [5e-324, 1e-323, 2.0**-1074 * 12345, 2.0**-1023, 2.0**-1022, math.nextafter(2.0**-1022, 0.0),
           math.nextafter(2.0**-1022, 1.0), 1e-310, 2.0**-1000, 2.0**-600, 2.0**-300, 2.0**-60, 2.0**-54, 2.0**-53,
           math.nextafter(2.0**-53, 1.0), 2.0**-52, 2.0**-27, 3.0 * 2.0**-28, 2.0**-14, 1e-4, 0.0078]
    pts += sub + [-s for s in sub] + [0.0, -0.0]
    rng = np.random.default_rng(48)
    pts += list(rng.uniform(-2.0**-7, 2.0**-7, 1500))
    pts += list(rng.uniform(-2.0**-13, 2.0**-13, 1000))
    pts += list(rng.uniform(0.9 * 2.0**-7, 2.0**-7, 300) * rng.choice([-1.0, 1.0], 300))
    pts += list(np.exp2(rng.uniform(-1074.0, -7.0, 1000)) * rng.choice([-1.0, 1.0], 1000))
    return np.array(pts, dtype=np.float64)


ARGS = _args()


def _exact() -> tuple[list, list]:
    with mpmath.workdps(50):
        ex = [mpmath.exp(mpmath.mpf(float(y))) for y in ARGS]
        em = [mpmath.expm1(mpmath.mpf(float(y))) for y in ARGS]
    return ex, em


EXACT = _exact()


def _worst(got_exp: np.ndarray, got_m1: np.ndarray) -> tuple[float, float]:
    """The largest relative errors in units of u (expm1 at +-0: exact with its sign, else infinite)."""
    we = wm = 0.0
    with mpmath.workdps(50):
        for y, ge, gm, ex, em in zip(ARGS, got_exp, got_m1, EXACT[0], EXACT[1], strict=True):
            we = max(we, float(abs((mpmath.mpf(float(ge)) - ex) / ex)) / U)
            if y == 0.0:
                wm = max(wm, 0.0 if (gm == 0.0 and math.copysign(1.0, gm) == math.copysign(1.0, y)) else math.inf)
            else:
                wm = max(wm, float(abs((mpmath.mpf(float(gm)) - em) / em)) / U)
    return we, wm


def test_binding_within_4u_at_thresholds_zeros_subnormals():
    """The library's kernels (the binding): within 4u of mpmath at every attack argument (measured: exp <= ~1u,
    expm1 <= ~2u)."""
    ge = np.asarray(_core.lognormal_small_exp(ARGS, False))
    gm = np.asarray(_core.lognormal_small_exp(ARGS, True))
    we, wm = _worst(ge, gm)
    assert we <= BOUND and wm <= BOUND, (we, wm)
    # exp_small(y) <= 1 for y <= 0 and >= 1 for y >= 0 (a cell's weight never crosses 1 the wrong way); expm1 keeps the sign
    assert np.all(ge[ARGS < 0] <= 1.0) and np.all(ge[ARGS > 0] >= 1.0) and np.all(ge[ARGS == 0] == 1.0)
    assert np.all(np.sign(gm) == np.sign(ARGS)) and np.all(np.signbit(gm) == np.signbit(ARGS))


def test_binding_refuses_outside():
    """The binding's domain is |x| <= 2^-7 exactly: the first float beyond (either sign), NaN and inf are refused."""
    for bad in (math.nextafter(2.0**-7, 1.0), -math.nextafter(2.0**-7, 1.0), math.nan, math.inf):
        with pytest.raises(ValueError):
            _core.lognormal_small_exp(np.array([bad]), False)


def _build(tmp: Path, flags: list[str], name: str) -> Path:
    src = tmp / "h.cpp"
    src.write_text('#include <cstdio>\n#include <cstdlib>\n#include "lognormal_cells.hpp"\nint main() {\n'
                   '  char b[128];\n  while (std::scanf("%127s", b) == 1) {\n    double x = std::strtod(b, nullptr);\n'
                   '    std::printf("%a %a\\n", sharpdp::kernels::lognormal::exp_small(x), '
                   'sharpdp::kernels::lognormal::expm1_small(x));\n  }\n}\n')
    exe = tmp / name
    subprocess.run(["g++", "-std=c++17", *flags, f"-I{ROOT / 'cpp' / 'kernels'}", str(src), "-o", str(exe)],
                   check=True, capture_output=True, timeout=120)
    return exe


def _run(exe: Path) -> tuple[np.ndarray, np.ndarray]:
    out = subprocess.run([str(exe)], input="\n".join(float.hex(float(y)) for y in ARGS), capture_output=True,
                         text=True, check=True, timeout=60).stdout.split()
    return (np.array([float.fromhex(s) for s in out[0::2]]), np.array([float.fromhex(s) for s in out[1::2]]))


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not on PATH")
def test_standalone_builds_fma_and_no_fma(tmp_path):
    """The header built standalone: -O1 -ffp-contract=off (.ci/run's flags) equals the binding bit for bit; an FMA
    build (-O3 -mfma -ffp-contract=fast, run only where the CPU has FMA) is within 4u too (Lemma 76.1's contraction
    clause)."""
    ge_b = np.asarray(_core.lognormal_small_exp(ARGS, False))
    gm_b = np.asarray(_core.lognormal_small_exp(ARGS, True))
    e0, m0 = _run(_build(tmp_path, ["-O1", "-ffp-contract=off"], "h_off"))
    assert np.array_equal(e0.view(np.int64), ge_b.view(np.int64)) and np.array_equal(m0.view(np.int64), gm_b.view(np.int64))
    cpu = Path("/proc/cpuinfo")
    if not (cpu.exists() and " fma " in cpu.read_text()):
        pytest.skip("no FMA on this CPU")
    e1, m1 = _run(_build(tmp_path, ["-O3", "-mfma", "-ffp-contract=fast"], "h_fma"))
    we, wm = _worst(e1, m1)
    assert we <= BOUND and wm <= BOUND, (we, wm)


def test_the_check_can_fail():
    """The metric flags a violation: the binding's values moved by 6u relative (every argument) exceed the bound, and
    a wrong sign of expm1 at -0 is caught."""
    ge = np.asarray(_core.lognormal_small_exp(ARGS, False)) * (1.0 + 6.0 * U)
    gm = np.asarray(_core.lognormal_small_exp(ARGS, True))
    we, _ = _worst(ge, gm)
    assert we > BOUND
    gm = gm.copy()
    gm[ARGS == 0.0] = 0.0  # (+0 where the argument is -0)
    assert _worst(np.asarray(_core.lognormal_small_exp(ARGS, False)), gm)[1] == math.inf
