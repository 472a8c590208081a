"""krr7 changes of the compiled class kernel (docs/sharp_krr.md §4.12): window ratios formed in
vectorised blocks with 1/rho = exp(-log_odds) as a product, unnormalised windows with one scale per
window (applied once per value), the four-value pass with sixteen partial sums, the first band of
half-width 1 and the AVX2 clones. Every bracket must still contain the class's delta: here against
40-digit enumeration at small n (every class, guesses far off at large eps0) and against the
independent numpy path (summed logarithms, normalised windows) at n = 1e7 + 1 and 1e9."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from sharpdp import _core
from sharpdp.shuffle.exact_krr.branch_bound import OneClass

from _krr_reference import class_deltas_mp, kernel_args


@pytest.mark.parametrize("e0", [0.3, 3.0, 9.0])
def test_every_class_small_n_against_enumeration(e0):
    """n = 37, every class, eps from 0 to near eps0 (the normal-approximation guess of the band is far
    off at eps0 = 9 and at the end classes): lower <= delta_j <= upper at 6, 30 and 80 nats."""
    n = 37
    bad = []
    for frac in (0.0, 0.05, 0.3, 0.7, 0.97):
        eps = frac * e0
        with mp.workdps(40):
            exact = class_deltas_mp(e0, eps, n)
        for j in range(n):
            for nats in (6.0, 30.0, 80.0):
                lo, up = _core.exact_krr.class_bracket(*kernel_args(e0, eps, n, j, nats))[:2]
                if not (lo <= exact[j] <= up):
                    bad.append((eps, j, nats, lo, float(exact[j]), up))
    assert not bad, bad[:5]


@pytest.mark.parametrize("e0, eps9, eps7", [(0.5, 1.833e-5, 1.85e-4), (1.0, 4.898e-5, 4.9e-4),
                                            (2.0, 1.357e-4, 1.36e-3)])
def test_compiled_against_numpy_path_at_large_n(e0, eps9, eps7):
    """The classes 0, N/3, N/2 and N at n = 1e7 + 1 and 1e9, at the delta ~ 1e-6 point, by the compiled
    kernel and by the numpy path (its own windows by summed logarithms, normalised, §4.2-§4.10): the
    certified brackets overlap and the upper values agree to 1e-6, at the decision level 30 and at 40."""
    one = OneClass(e0)
    for n, eps in ((10**7 + 1, eps7), (10**9, eps9)):
        for j in (0, (n - 1) // 3, (n - 1) // 2, n - 1):
            for nats in (30.0, 40.0):
                one.compiled = True
                lo_c, up_c, _ = one._at(eps, n, j, nats)
                one.compiled = False
                lo_p, up_p, _ = one._at(eps, n, j, nats)
                assert lo_c <= up_p and lo_p <= up_c, (n, j, nats, lo_c, up_c, lo_p, up_p)
                assert up_c == pytest.approx(up_p, rel=1e-6), (n, j, nats, up_c, up_p)
                assert 1e-8 < up_c < 1e-4  # near the delta ~ 1e-6 point, not a degenerate value


def test_window_hook_is_normalised():
    """The test hook returns the window's entries times its scale: a pmf whose sum lies within the
    left-out mass and the entries' error bound of 1 (m = 1e9, both sides, 30 nats)."""
    e0 = 1.0
    p = 1.0 / (1.0 + math.exp(-e0))
    for m, pi, pic, lodds in ((10**9, p, 1 - p, e0), (10**9 - 7, 1 - p, p, -e0)):
        lo, pmf, rel = _core.exact_krr._binom_window(m, pi, pic, lodds, 30.0)
        s = math.fsum(pmf)
        assert abs(s - 1.0) <= rel + 4 * math.exp(-31.0) + len(pmf) * 2.0**-52
        assert max(pmf) == pytest.approx(1.0 / math.sqrt(2 * math.pi * m * p * (1 - p)), rel=1e-3)
