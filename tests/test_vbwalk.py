"""Replace-one through bot at a cliff of leg B (docs/accountant.md §9.5): the full split search against
independent exhaustive scans of the splits, the exact Gaussian mechanism at n = 1, and the reported split
recomputed on a fresh object."""

import math

import pytest
from scipy.stats import norm

import sharpdp.shuffle as sh
from sharpdp.shuffle.accountant.via_bottom import ViaBottom


def _bottom(sigma: float, n: int) -> ViaBottom:
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(sigma, 1), n, "replace")
    assert acc.via_bottom
    return acc._bottom


def exact_gauss_delta(eps: float, sigma: float, sens: float = 2.0) -> float:
    """delta(eps) of the Gaussian mechanism N(x, sigma^2), |x - x'| <= sens (Balle and Wang 2018, Theorem 8)."""
    a, b = sens / (2.0 * sigma), eps * sigma / sens
    return float(norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b))


@pytest.mark.parametrize("n,eps,lo,hi", [(2, 7.1168, 0.92, 0.945), (3, 7.0, 0.92, 0.945)])
def test_full_search_reaches_the_cliff_vertex(n, eps, lo, hi):
    """GaussianRandomizer(2): at delta ~ 1e-12 the optimum is the largest e1 before leg B's cliff; the full
    search is within 5 % of a scan of 51 splits in [lo, hi] eps (step 0.0005 eps; the previous search
    reported 1.85e-12 and 1.48e-12, twice the scan's minimum)."""
    up = sh.ShuffleAccountant(sh.GaussianRandomizer(2.0, 1), n, "replace").get_delta_bounds(eps)[1]
    ref = _bottom(2.0, n)
    scan = min(ref.split(eps, lo + (hi - lo) * i / 50, 0.01).upper for i in range(51))
    assert scan < 1.0e-12  # the scan's reference point: the cliff vertex is inside [lo, hi]
    assert up <= 1.05 * scan


def test_reported_split_recomputed_on_a_fresh_object():
    """The reported value is the certified value of its own split (nothing else is certified): the split at the
    report's epsilon_split, recomputed on a fresh object, has the same upper value."""
    eps = 7.1168
    acc = sh.ShuffleAccountant(sh.GaussianRandomizer(2.0, 1), 2, "replace")
    rep = acc._bottom.report(eps, acc.rel_tol)
    e1 = rep.terms["epsilon_split"]
    s = _bottom(2.0, 2).split(eps, e1 / eps, acc.rel_tol)
    assert s.e1 == pytest.approx(e1, rel=1e-15, abs=0.0)
    assert rep.upper == pytest.approx(s.upper, rel=1e-12)
    assert rep.upper < 1e-12


def test_n1_bound_against_the_exact_gaussian_mechanism():
    """n = 1 (the Gaussian mechanism, sensitivity 2): the bound is certified (>= the exact delta) and the full
    search is as good as a scan of 199 splits, at eps where leg B's cliff is the vertex."""
    eps = 7.585173509967613
    vb = _bottom(1.0, 1)
    up = vb.report(eps, 0.01).upper
    assert exact_gauss_delta(eps, 1.0) <= up
    scan = min(_bottom(1.0, 1).split(eps, i / 200, 0.01).upper for i in range(1, 200))
    assert up <= scan


def test_probe_lower_value_below_the_certified_value():
    """_probe's loose first pass is a lower value: at splits on both sides of the cliff (n = 2) the PROBE_TOL
    split's lower value is <= the rel_tol 0.1 split's upper value, and a probe decided worse is worse."""
    eps = 7.1168
    vb = _bottom(2.0, 2)
    for f in (0.925, 0.9310, 0.9320, 0.94):
        loose, tight = vb.split(eps, f, vb.PROBE_TOL, absolute=False), vb.split(eps, f, 0.1)
        assert loose.lower <= tight.upper
        bar = 0.5 * tight.upper
        assert vb._probe(eps, f, 0.1, bar) is None  # above the bar: never returned
        c = vb._probe(eps, f, 0.1, 2.0 * tight.upper + 1e-300)
        assert c is not None and c.upper == tight.upper
