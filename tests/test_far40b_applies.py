"""far_tail_applies.applicable where the first target underflows to 0 (session 40, far40b)."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.far_tail_applies import applicable


@pytest.mark.parametrize("n", [2, 1000, 10**8])
def test_underflowing_target_is_not_applicable(n):
    # GaussianRandomizer(6), eps = 16: P[L > 0] ~ 4e-323, so 1e-6 of it is 0 and no finite clamp meets it
    # (choose_T doubled T to inf and raised with gamma given): not applicable, the plain engine takes the law
    for gamma, law in GaussianRandomizer(6.0, 1).privacy_amplification_laws(16.0, "zero_out"):
        assert law.tail_upper(0.0) < 1e-300
        assert applicable(law, n, 1e-2, float(gamma)) is False
        assert applicable(law, n, 1e-2) is False


def test_underflowing_target_end_to_end():
    # the accountant's bracket there stays finite, ordered and tiny (the plain engine's, as before the fix)
    for n in (2, 1000, 10**8):
        lo, up = ShuffleAccountant(GaussianRandomizer(6.0, 1), n).get_delta_bounds(16.0)
        assert 0.0 <= lo <= up < 1e-15
