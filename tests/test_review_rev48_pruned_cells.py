"""Review rev48 (session 48): the pruned spectrum on Lemma 72.1's DFT (``limits.DFT47_TAYLOR_PRUNED``, on since
session 47's merge; docs/accountant_tail.md §72.3) at GaussianRandomizer(1)'s body-dominated cells, n = 1e8 and 1e9
(rev47's test covered the BMG cells 2 and 5): the END brackets with the rule on (a spy asserts the Taylor path ran
and was kept) against the rule off and against the rule off at rel_tol 1e-5: the certified upper value is never
below a reference's lower value, nor the lower value above a reference's upper value."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import fft

from _main_floats34 import switch


def _bracket(monkeypatch, n: int, eps: float, rel_tol: float, on: bool) -> tuple[float, float, int]:
    used = [0]
    real = fft.pruned_spectrum

    def spy(*args):
        r = real(*args)
        used[0] += args[-1] is not None and r is not None
        return r

    with monkeypatch.context() as m:
        switch(m, "DFT47_TAYLOR_PRUNED", on)
        m.setattr(fft, "pruned_spectrum", spy)
        clear_caches()
        lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), n, "zero_out", rel_tol=rel_tol).get_delta_bounds(eps)
        clear_caches()
    return float(lo), float(up), used[0]


@pytest.mark.parametrize("n, eps", [(10 ** 8, 1e-3), (10 ** 9, 3e-4)])
def test_taylor_pruned_gaussian_cells_hold_the_references(monkeypatch, n, eps):
    lo1, up1, used = _bracket(monkeypatch, n, eps, 1e-2, True)
    assert used > 0, "the Taylor path did not run: the test is idle"
    lo0, up0, used0 = _bracket(monkeypatch, n, eps, 1e-2, False)
    assert used0 == 0
    lor, upr, _ = _bracket(monkeypatch, n, eps, 1e-5, False)
    assert 0 < lo1 <= up1
    assert lo1 <= up0 and lo0 <= up1, (lo0, up0, lo1, up1)
    assert lo1 <= upr and lor <= up1, (lo1, up1, lor, upr)
    assert (lo1, up1) != (lo0, up0)  # (the rule moved the bracket: the comparison is live)
