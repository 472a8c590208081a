"""docs/sharp_krr.md §4.16 (b): class evaluations on mirror images of cached windows.

References: 40-digit enumeration of every class (tests/_krr_reference.py ``class_deltas_mp``), the
kernel on windows built directly (``class_bracket``), and a fresh process for the doubles of
``cached_window`` (which must never return a mirror image).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from sharpdp import _core
from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse
from sharpdp.shuffle.exact_krr import all_equal_delta_bounds

from _krr_reference import class_tables_mp, kernel_args

MIRROR = getattr(_core.exact_krr, "_class_bracket_mirror")


@pytest.mark.parametrize("e0,nats", [(0.3, 27.125), (3.0, 31.375), (9.0, 23.625)])
def test_every_class_on_mirror_windows_brackets_the_exact_delta(e0, nats):
    """n = 37: class j then class N - j on the mirror path, so the second one's windows are the mirror
    images of the first one's (the levels are unusual values: no window of another test is cached). Every
    bracket contains the 40-digit delta_j; and the mirror brackets are not all the doubles of the built
    windows' (the mirror path was taken)."""
    n = 37
    N = n - 1
    differ = 0
    for eps, exact in class_tables_mp(e0, (0.0, 0.37, 0.9), n):
        for j in range(0, n // 2 + 1):
            for c in (j, N - j):
                lo, up = MIRROR(*kernel_args(e0, eps, n, c, nats))[:2]
                assert lo <= exact[c] <= up, (eps, c, lo, float(exact[c]), up)
            if j == N - j:
                continue
            MIRROR(*kernel_args(e0, eps, n, j, nats + 0.5))
            mirrored = MIRROR(*kernel_args(e0, eps, n, N - j, nats + 0.5))[:2]  # on mirror images
            plain = _core.exact_krr.class_bracket(*kernel_args(e0, eps, n, N - j, nats + 0.5))[:2]  # built
            assert mirrored[0] <= exact[N - j] <= mirrored[1] and plain[0] <= exact[N - j] <= plain[1]
            differ += mirrored != plain
    if e0 < 5:  # (at eps0 = 9 the windows have a few entries and their mirror images gave the same doubles)
        assert differ > 0


# the child gets the kernel arguments formed here (repr: the same doubles) and imports only the core, not
# _krr_reference (scipy, mpmath: ~0.9 s of CPU per interpreter)
_PLAIN = ("from sharpdp import _core\n"
          f"print([_core.exact_krr.class_bracket(*a)[:2] for a in {[kernel_args(1.0, 0.1, 2001, j, 25.875) for j in (3, 1997)]!r}])\n")


def test_cached_window_never_returns_a_mirror_image():
    """After the mirror path has made mirror images of class 3's windows (class 1997 = N - 3), the
    plain kernel (cached_window) still gives the doubles of windows built directly: those of a fresh
    process."""
    n, N = 2001, 2000
    for j in (3, N - 3):
        MIRROR(*kernel_args(1.0, 0.1, n, j, 25.875))
    here = [_core.exact_krr.class_bracket(*kernel_args(1.0, 0.1, n, j, 25.875))[:2] for j in (3, N - 3)]
    fresh = subprocess.run([sys.executable, "-c", _PLAIN], capture_output=True, text=True, check=True).stdout
    assert repr(here) == fresh.strip()


def test_get_epsilon_with_mirror_pairs_at_n_3e8():
    """n = 3e8 (n p q >= 1e7: the decision sweeps in mirror pairs): the answer's delta is certified
    below the target, and the certified all-equal lower bound exceeds it a factor 1 + 3 xtol lower
    (so the answer is not loose by more than that)."""
    acc = ExactShuffleAccountant(RandomizedResponse(2, 1.0), 3 * 10**8)
    eps = acc.get_epsilon(1e-6)
    assert acc.get_delta(eps) <= 1e-6
    assert all_equal_delta_bounds(1.0, 3 * 10**8, eps)[0] <= 1e-6
    assert all_equal_delta_bounds(1.0, 3 * 10**8, eps / (1 + 3e-3))[0] > 1e-6
