"""docs/sharp_krr.md §4.16 (b): mirror images read in place (reverse order), not copied.

References: 40-digit enumeration of every class (tests/_krr_reference.py ``class_deltas_mp``); the
mirror path with every mirror image copied (the test hook ``_class_bracket_mirror_copy``: the code
before the in-place reading, which must give the same doubles); the kernel on windows built directly.
"""

from __future__ import annotations

import mpmath as mp
import pytest

from sharpdp import _core
from sharpdp.shuffle import ExactShuffleAccountant, RandomizedResponse

from _krr_reference import class_tables_mp, class_deltas_mp, kernel_args

MIRROR = getattr(_core.exact_krr, "_class_bracket_mirror")
MIRROR_COPY = getattr(_core.exact_krr, "_class_bracket_mirror_copy")


@pytest.mark.parametrize("e0,nats", [(0.3, 26.3125), (1.0, 24.6875), (3.0, 30.4375)])
def test_in_place_mirror_is_certified_and_equals_the_copies(e0, nats):
    """n = 37: class j (windows built), then class N - j on the mirror path (both windows are mirror
    images of class j's: read in place), then the same class with the mirror images copied. The
    in-place bracket contains the 40-digit delta_{N-j}, equals the copied one to the last bit, and
    differs from the built windows' for some j (so the mirror images were used)."""
    n = 37
    N = n - 1
    differ = 0
    for eps, exact in class_tables_mp(e0, (0.0, 0.41, 0.85), n):
        for j in range(0, n // 2):
            lvl = nats + 0.0625 * j  # a level of its own per class: nothing else cached there
            built_j = MIRROR(*kernel_args(e0, eps, n, j, lvl))
            assert built_j[0] <= exact[j] <= built_j[1]
            in_place = MIRROR(*kernel_args(e0, eps, n, N - j, lvl))
            copied = MIRROR_COPY(*kernel_args(e0, eps, n, N - j, lvl))
            plain = _core.exact_krr.class_bracket(*kernel_args(e0, eps, n, N - j, lvl))
            assert in_place[0] <= exact[N - j] <= in_place[1], (eps, j, in_place[:2], float(exact[N - j]))
            assert in_place == copied
            assert plain[0] <= exact[N - j] <= plain[1]
            differ += in_place[:2] != plain[:2]
    assert differ > 0


def test_one_mirror_image_alone_is_copied_and_certified():
    """Class j of n = 37 builds Bin(j, p) and Bin(36 - j, q); class 36 - j of n' = 41 needs Bin(36 - j, p)
    (the mirror image of a cached window) and Bin(4 + j, q) (not cached): the mixed case, where the
    mirror image is copied. Its bracket contains the 40-digit delta of n' = 41."""
    e0, eps, nats = 1.0, 0.3, 27.6875
    with mp.workdps(40):
        exact = class_deltas_mp(e0, eps, 41)
    for j in range(0, 18, 3):
        lvl = nats + 0.0625 * j
        MIRROR(*kernel_args(e0, eps, 37, j, lvl))
        lo, up = MIRROR(*kernel_args(e0, eps, 41, 36 - j, lvl))[:2]
        assert lo <= exact[36 - j] <= up, (j, lo, float(exact[36 - j]), up)


def test_in_place_equals_copies_on_large_windows():
    """n = 2e6 (windows of a few thousand entries, the vectorised passes and their tails): a middle
    class and its mirror image at three eps around the delta = 1e-6 point; in place and copied give
    the same doubles, and the in-place bracket is a certified bracket: it overlaps the built one."""
    e0, n, nats = 1.0, 2 * 10**6, 28.8125
    N = n - 1
    for eps, j in [(0.0018, 601_234), (0.0021, 400_001), (0.003, 999_000)]:
        MIRROR(*kernel_args(e0, eps, n, j, nats))
        in_place = MIRROR(*kernel_args(e0, eps, n, N - j, nats))
        copied = MIRROR_COPY(*kernel_args(e0, eps, n, N - j, nats))
        plain = _core.exact_krr.class_bracket(*kernel_args(e0, eps, n, N - j, nats))
        assert in_place == copied
        assert in_place[0] <= plain[1] and plain[0] <= in_place[1]
        assert in_place[1] > 0
        assert abs(in_place[1] - plain[1]) <= 1e-9 * plain[1]


# get_epsilon(1e-6) at n = 1e9, default xtol, as returned by the code with copied mirror images (krr21,
# 3eb21c3, in a fresh process): the in-place reading must give the same doubles.
_BEFORE = {0.5: "0x1.3383f53333333p-16", 1.0: "0x1.9ae284d916872p-15", 2.0: "0x1.1c880f78129acp-13"}


@pytest.mark.parametrize("e0", [0.5, 1.0, 2.0])
def test_get_epsilon_at_1e9_unchanged(e0):
    eps = ExactShuffleAccountant(RandomizedResponse(2, e0), 10**9).get_epsilon(1e-6)
    assert eps.hex() == _BEFORE[e0]
