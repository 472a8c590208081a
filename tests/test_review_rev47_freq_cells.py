"""Review rev47 (session 47): docs/accountant_tail.md §70.3 (``limits.BODY46_PRUNED_FORWARD``) at the heavy cells, the
END brackets: with the rule on (zero-out, rel_tol 1e-2) the bracket overlaps the rule-off bracket and contains
(overlaps) a tighter certified reference, the rule off at rel_tol 1e-5. At BMG (0.171, 0.781) and (0.0389, 0.529),
n = 1e8, no FFT is long enough for the rule at its own ``BODY46_PRUNED_MIN_N`` = 2^20 (docs/accountant_tail.md §70.4):
there the rule is forced onto every spectrum from N = 64 or 4096 on, and the chain's ratio pushed to 1.001 and 3
(its work/tightness parameter), so the pruned spectra reach these brackets; the test asserts the rule served."""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import fft, limits

from _main_floats34 import switch

pytestmark = pytest.mark.skipif(not hasattr(limits, "BODY46_PRUNED_FORWARD"), reason="rule of session 46 absent")


def _mk(g, s):
    return GaussianRandomizer(s, 1) if g == 0 else BlanketMixedGaussian(g, s, 1)


def _bracket(monkeypatch, g, s, n, eps, rt, on, min_n=None, ratio=None):
    served = [0]
    orig = fft.pruned_spectrum

    def spy(*a, **k):
        out = orig(*a, **k)
        served[0] += out is not None
        return out

    with monkeypatch.context() as m:
        switch(m, "BODY46_PRUNED_FORWARD", on)
        if min_n is not None:
            switch(m, "BODY46_PRUNED_MIN_N", min_n)
        if ratio is not None:
            switch(m, "BODY46_PRUNED_RATIO", ratio)
        m.setattr(fft, "pruned_spectrum", spy)
        clear_caches()
        lo, up = ShuffleAccountant(_mk(g, s), n, "zero_out", rel_tol=rt).get_delta_bounds(eps)
        clear_caches()
    return float(lo), float(up), served[0]


@pytest.mark.parametrize("g, s, n, eps, min_n, ratio", [
    (0.171, 0.781, 10**8, 1e-3, 4096, None), (0.0389, 0.529, 10**8, 1e-2, 64, 1.001),
    (0.0389, 0.529, 10**8, 1e-2, 4096, 3.0), (0.0786, 0.597, 10**9, 1e-3, None, None),
    (0.0, 1.0, 10**8, 1e-3, None, 3.0)])
def test_on_bracket_holds_the_tight_reference(monkeypatch, g, s, n, eps, min_n, ratio):
    lo1, up1, served = _bracket(monkeypatch, g, s, n, eps, 1e-2, True, min_n, ratio)
    assert served > 0  # (pruned spectra entered the bracket)
    lo0, up0, _ = _bracket(monkeypatch, g, s, n, eps, 1e-2, False)
    lor, upr, _ = _bracket(monkeypatch, g, s, n, eps, 1e-5, False)
    assert 0 <= lo1 <= up1 and lo1 <= up0 and lo0 <= up1, (lo0, up0, lo1, up1)
    assert lo1 <= upr and lor <= up1, ("the rule's bracket misses the tight reference", lo1, up1, lor, upr)
