"""The kept range of active users of the closed-form deep tail (concentrated._m_range, docs/accountant_tail.md §17):
per (N, gamma) the arrays a fresh computation gives, read-only, and still brackets of the binomial pmf (scipy)."""

import numpy as np
import pytest
from scipy import stats

from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant.memo import clear_result_memos


@pytest.mark.parametrize("N", [99, 10**5 - 1])
def test_kept_range_is_the_fresh_one_per_gamma(N):
    clear_result_memos()
    first = {g: C._m_range(N, g) for g in (0.3, 0.05, 0.3)}  # (0.3 twice: the second from the memo)
    again = {g: C._m_range(N, g) for g in (0.05, 0.3)}
    clear_result_memos()
    for g in (0.3, 0.05):
        fresh = C._m_range(N, g)
        for x, y, z in zip(first[g][:3], again[g][:3], fresh[:3]):
            assert np.array_equal(x, z) and np.array_equal(y, z)
            assert not x.flags.writeable
        assert first[g][3] == again[g][3] == fresh[3]
        m, p_up, p_lo, outside = fresh
        pmf = stats.binom.pmf(m, N, g)
        assert np.all(p_lo <= pmf * (1 + 1e-9)) and np.all(pmf <= p_up * (1 + 1e-9))
        sd = (N * g * (1 - g)) ** 0.5  # the range holds the mean and spans at most 2 _SDS sd (a wrong gamma shows)
        assert m[0] <= N * g <= m[-1] and m[-1] - m[0] <= 2 * C._SDS * sd + 5
        assert 0.0 <= outside < 1e-12
