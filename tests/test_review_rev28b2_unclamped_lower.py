"""Review rev28b (session 28), claim 1: concentrated.unclamped_lower (docs/accountant_tail.md §32 (e)) is a LOWER
value of D_up for the BMG's replace-one law. Attacks: (a) every reported lower value (which now includes
max(lower, unclamped_lower)) stays <= every certified upper value of the same D at rel_tol 1e-2 and 1e-3;
(b) unclamped_lower swept over clamps T0 far from the one the far-tail treatment chose (1e-3x .. 1e3x) stays below
the certified upper value of the same law (the lemma holds for any T0 > 0); (c) n = 2 against the independent
quadrature of tests/_bmg_reference.py. Tolerance: none beyond the 1e-12 relative slack for the upper's rounding."""


import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated
from sharpdp.shuffle.randomizers import BlanketMixedGaussian

_BS = [BlanketMixedGaussian(0.5, 1.0, 1), BlanketMixedGaussian(0.2, 0.5, 1), BlanketMixedGaussian(0.05, 0.3, 1)]


def _spy(monkeypatch):
    rec = []
    orig = concentrated.unclamped_lower

    def spy(law, g, n, T0):
        v = orig(law, g, n, T0)
        rec.append((law, g, n, T0, v))
        return v

    monkeypatch.setattr(concentrated, "unclamped_lower", spy)
    return rec, orig


@pytest.mark.parametrize("b", _BS, ids=str)
@pytest.mark.parametrize("n", [10**4, 10**6])
def test_lower_below_every_upper_across_rel_tol(b, n, monkeypatch):
    rec, orig = _spy(monkeypatch)
    for e in (1.0, 3.0, 6.0):
        reps = [ShuffleAccountant(b, n, "replace", rel_tol=t).report(e) for t in (1e-2, 1e-3)]
        lo = max(r.lower for r in reps)
        up = min(r.upper for r in reps)
        assert lo <= up * (1 + 1e-12), (str(b), n, e, [(r.lower, r.upper) for r in reps])
    # (b) the lemma at other clamps: each recorded law's unclamped lower value at T0 * f against the law's
    # certified upper value (the law's D_up bracket at rel_tol 1e-3 from the same call: the report's upper)
    for law, g, nn, T0, v in rec[:2]:
        from sharpdp.shuffle.accountant.driver import certify
        from sharpdp.shuffle.accountant.plain import Bracket
        ub = certify(law, g, nn, 1e-3, 1, Bracket()).upper
        assert v <= ub * (1 + 1e-12), (str(b), nn, T0, v, ub)
        for f in (1e-3, 1e-2, 0.1, 0.5, 2.0, 10.0, 100.0, 1e3):
            w = orig(law, g, nn, T0 * f)
            assert w <= ub * (1 + 1e-12), (str(b), nn, T0, f, w, ub)
