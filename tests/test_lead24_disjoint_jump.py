"""docs/accountant_tail.md §24: the closed form's and the FFT treatment's brackets of the same jump term are both
certified, so they cannot be disjoint; if they ever were (a defect), the round refuses instead of reporting a lower
value above its upper value (a reviewer found no check)."""

import pytest

from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.accountant.jump import JumpTerm


def test_disjoint_brackets_refuse(monkeypatch):
    monkeypatch.setattr(concentrated, "jump_bracket", lambda law, g, n, T0, fast: (5.0, 5.5))
    with pytest.raises(RuntimeError, match="disjoint"):
        far_tail.closed_at_clamp(JumpTerm(up=4.5, lo=4.2, N=16), None, 0.1, 10, 7.5)
    o = far_tail.closed_at_clamp(JumpTerm(up=5.0, lo=4.2, N=16), None, 0.1, 10, 7.5)  # touching: one point
    assert (o.lo, o.up) == (5.0, 5.0)
