"""The far-tail switch where the plain engine's first pass cannot see the one-jump point.

BMG(0.564, 1.52, 3) at n = 395: the x-vs-bot law's one-jump point (n - 1) gamma |E L| ~ 76 lies far beyond
the first round's clamp (~9). Counting the one-jump value there sent eps ~0.25-0.34 to the plain engine, whose
second round then clamped at ~570 and ran size-capped lattices: brackets 3 %, 16 % and 88 % wide (and 9-13 s
each) instead of within rel_tol. The switch (far_tail.applicable, docs/accountant_tail.md §8) counts that value
only where the first pass reaches it.
"""

import pytest

import sharpdp.shuffle as sh

# the plain engine's brackets of the same values at rel_tol 1e-2 (the former route, measured; wide but certified,
# an independent path; rounded outward)
_PLAIN = {0.25166: (1.1709e-14, 1.2056e-14), 0.28246: (2.0971e-15, 2.4405e-15), 0.33554: (1.4323e-16, 2.6948e-16)}


@pytest.mark.parametrize("eps", [0.25166, 0.28246, 0.33554])
def test_bracket_within_rel_tol_where_the_jump_is_out_of_the_first_clamp(eps):
    acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.564, 1.52, 3), 395)
    lo, up = acc.get_delta_bounds(eps)
    assert 0.0 < lo <= up <= lo * (1.0 + acc.rel_tol)
    if eps in _PLAIN:  # both certified: the brackets intersect
        plo, pup = _PLAIN[eps]
        assert lo <= pup and plo <= up
