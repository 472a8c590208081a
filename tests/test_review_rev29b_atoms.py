"""Review rev29b of docs/accountant_atoms.md §14 (upper values first on atom laws stop once the upper value has
"settled": rule (a) in the profile's and the pair's sweeps, rule (b) inside ``no_lower_values``).

The claim under review is that every value returned stays a certified upper value (the least upper value of passes
that ran). References, independent of the accountant:
* the blanket divergence of k-RR under replace-one by brute force over the multinomial counts of the active users at
  the three outputs (x, x', other) (``_krr_replace_dup`` below: derived from the mechanism, L = gamma (e^eps0 - e^eps,
  1 - e^eps e^eps0, 1 - e^eps) with probabilities 1/k, 1/k, (k - 2)/k, B ~ Bern(gamma), gamma = k / (e^eps0 + k - 1);
  no lattice, no FFT, no library law), at n = 50 and 300 (n >= 256 = ``_MANY``, where the rule may apply);
* lower values of the base accountant (main f2cee38, without §14) at rel_tol 1e-3, pinned below, at n = 1e4 ... 1e6:
  certified lower values of the same blanket bound, so a certified upper value is never below them.
Negative eps through the swap identity (k-RR's replace pair is symmetric): delta(-e) = 1 - e^-e + e^-e delta(e).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln

import sharpdp.shuffle as sh
from sharpdp.shuffle import clear_caches

try:
    from sharpdp.shuffle.accountant import plain as _PL
except ImportError:  # pragma: no cover
    _PL = None
HAS_14 = _PL is not None and hasattr(_PL, "_upper_settled")


def _krr_replace_dup(k: int, e0: float, n: int, eps: float) -> float:
    """E[(sum_i B_i L_i)_+] / (n gamma) by summation over the counts (c1, c2, c3, c0) ~ Multinomial(n; gamma/k,
    gamma/k, gamma (k-2)/k, 1 - gamma) (log-gamma weights, double precision: ~1e-12 relative)."""
    E0, E = math.exp(e0), math.exp(eps)
    g = k / (E0 + k - 1)
    a = np.array([E0 - E, 1 - E * E0, 1 - E]) * g
    lp = np.log([g / k, g / k, g * (k - 2) / k, 1 - g])
    c2 = np.arange(n + 1)[:, None]
    c3 = np.arange(n + 1)[None, :]
    tot = 0.0
    for c1 in range(n + 1):
        c0 = n - c1 - c2 - c3
        s = c1 * a[0] + c2 * a[1] + c3 * a[2]
        m = (c0 >= 0) & (s > 0)
        if not m.any():
            continue
        c0m = np.where(c0 >= 0, c0, 0)
        lw = (gammaln(n + 1) - gammaln(c1 + 1) - gammaln(c2 + 1) - gammaln(c3 + 1) - gammaln(c0m + 1)
              + c1 * lp[0] + c2 * lp[1] + c3 * lp[2] + c0m * lp[3])
        tot += float(np.sum(np.exp(lw[m]) * s[m]))
    return tot / (n * g)


@pytest.fixture
def settled_spy(monkeypatch):
    """Counts the settled stops of §14 (rule a or b) where the build has them."""
    hits = []
    if HAS_14:
        orig = _PL._upper_settled

        def spy(*a, **kw):
            r = orig(*a, **kw)
            hits.append(bool(r))
            return r

        monkeypatch.setattr(_PL, "_upper_settled", spy)
    return hits


def test_reference_against_the_base_bracket_and_n1():
    """The reference itself: at n = 1 it is k-RR's local delta (e^eps0 - e^eps)_+ / (e^eps0 + k - 1)."""
    for k, e0, eps in ((3, 1.0, 0.5), (10, 4.0, 1.0), (6, 3.0, 0.0)):
        assert _krr_replace_dup(k, e0, 1, eps) == pytest.approx(max(math.exp(e0) - math.exp(eps), 0.0)
                                                                / (math.exp(e0) + k - 1), rel=1e-12)


@pytest.mark.parametrize("k, e0, n", [(3, 1.0, 50), (10, 4.0, 50), (6, 3.0, 300), (10, 4.0, 300)])
def test_profile_at_or_above_the_brute_force(k, e0, n, settled_spy):
    """privacy_profile (inside no_lower_values: rule b) and the sweep of the pair (rule a) at eps of either sign."""
    eps = np.array([0.02, 0.1, 0.3, 0.6, 1.0, 0.5 * e0]) if n > 100 else np.geomspace(0.01, e0, 10)
    ref = np.array([_krr_replace_dup(k, e0, n, float(e)) for e in eps])
    clear_caches()
    acc = sh.ShuffleAccountant(sh.RandomizedResponse(k, e0), n, "replace")
    both = np.concatenate([eps, -eps])
    prof = np.asarray(acc.privacy_profile(both), dtype=float)
    ref_neg = 1.0 - np.exp(-eps) + np.exp(-eps) * ref
    assert np.all(prof[: eps.size] >= ref * (1 - 1e-11)), (prof[: eps.size] / ref)
    assert np.all(prof[eps.size:] >= ref_neg * (1 - 1e-12)), (prof[eps.size:] - ref_neg)
    # not absurdly loose either (rel_tol 1e-2 requested; upper values first may stop within 0.1 rel_tol, §14)
    assert np.all(prof[: eps.size] <= ref * 1.02 + 1e-300)


# base lower values (main f2cee38, rel_tol 1e-3, get_delta_bounds) at EPS_GRID(top), replace
def _eps_grid(top: float) -> np.ndarray:
    return np.geomspace(1e-3, top, 25)


BASE_LO = {
    (('RR', 3, 1.0), 100000): [0.000967174354036685, 0.0008434559447547464, 0.0006970549392592405, 0.0005315519418689292, 0.0003595785988100872, 0.00020215931202178651, 8.449932581476172e-05, 2.1746319098233532e-05, 2.4729391508734307e-06, 6.89515485067998e-08, 1.6523928309027484e-10, 5.222988163445094e-15, 7.709387502342126e-23, 7.875565418869077e-37, 2.821185601025464e-61, 1.976549116206185e-104, 5.300326749025329e-181, 3.7805977e-317, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    (('RR', 4, 2.0), 1000000): [0.0006886749566901352, 0.0005635259959057829, 0.0004199873651682191, 0.0002703672638477069, 0.00013730945189101927, 4.681799065931972e-05, 7.990924146709985e-06, 3.948632249777082e-07, 2.0122734981192825e-09, 1.50118555094319e-13, 4.0915731948479405e-21, 5.0844133902963e-36, 1.6717740877439227e-62, 3.8846732199671836e-112, 2.4064413229153544e-205, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    (('RR', 10, 4.0), 100000): [0.011494687607643071, 0.01129997624582806, 0.011024767411764827, 0.010641188043640785, 0.010115023390950122, 0.009405455985781753, 0.008461468335468358, 0.007238103308949779, 0.005730674077859591, 0.004010894685772067, 0.0022911191489944052, 0.0009230736974374225, 0.0001987769068738335, 1.3312456409896182e-05, 9.491837350719056e-08, 8.550395750943648e-12, 1.4564554544140916e-19, 5.694307008692796e-35, 5.7536790865275914e-68, 8.99898670069383e-123, 0.0, 0.0, 0.0, 0.0, 0.0],
    (('RR', 10, 4.0), 1000000): [0.0033118206227265245, 0.0031278265650212843, 0.002878070026832344, 0.002548793499567422, 0.0021316548599974667, 0.0016268732875738857, 0.0010742985098748875, 0.0005559039686477018, 0.000188269937786299, 2.950839856647317e-05, 1.0822999022886551e-06, 2.3770954284112906e-09, 2.0459527686165385e-14, 2.9597134520482746e-24, 1.719078961589442e-45, 2.3981599754322214e-88, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    (('RR', 10, 1.0), 1000000): [2.5522551370521045e-05, 8.296311142536489e-06, 1.4015081954651117e-06, 7.747018421624776e-08, 6.153380951146311e-10, 1.6160759194628444e-13, 1.0203228979637664e-19, 2.0806180471410194e-31, 4.632215752973944e-51, 2.102008884033889e-86, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    (('RR', 8, 5.0), 1000000): [0.0061816959652474706, 0.005981409458324559, 0.005706133167728848, 0.005324718510946625, 0.004812168904575385, 0.004144892519659472, 0.0033055610679793815, 0.0023331767042198003, 0.0013452141083827155, 0.0005451265065755682, 0.00011647244820480817, 7.420664093990777e-06, 4.432258557530508e-08, 2.3610873911812475e-12, 9.476964674252934e-21, 6.466189558482811e-39, 2.1653050371035811e-72, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    (('PU', 0.75, 0.2), 100000): [0.003283780903434613, 0.0031062446522923935, 0.002869479348748157, 0.002559798816436387, 0.0021681375137903055, 0.0016955094481819462, 0.0011688640072332677, 0.0006564274729609693, 0.00026024243307705826, 5.596337240848847e-05, 3.923721311894795e-06, 3.34747149820824e-08, 5.055084493689917e-12, 3.1281650500007527e-19, 1.8608404870322584e-33, 4.641633661416955e-60, 1.5214318876904102e-111, 7.581558490830911e-211, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    (('PU', 0.75, 0.2), 1000000): [0.000755814874528396, 0.000619896223199233, 0.0004610079965617021, 0.0002932409298393587, 0.00014394387010208882, 4.516582839156587e-05, 6.354792049119333e-06, 2.0223079965181098e-07, 3.828795587939672e-10, 3.1606003614048178e-15, 6.8772181283891835e-25, 3.9471477020089454e-44, 1.53571044369486e-80, 2.403480386939699e-151, 1.1181638119453324e-286, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
}


def _rand(spec):
    return sh.RandomizedResponse(spec[1], spec[2]) if spec[0] == "RR" else sh.PrivUnit(0.75, 0.2, 10)


def test_profiles_at_or_above_the_base_lower_values(settled_spy):
    """k-RR (k = 3, 4, 8, 10) and PrivUnit(0.75, 0.2, 10) at n = 1e5, 1e6 (where §14's stops fire: 2-11 per
    profile in this review's scan): every profile value at or above the base accountant's certified lower value
    (measured margins 1.1e-4 ... 3.6e-4 relative at the least)."""
    bad = []
    for (spec, n), lo in BASE_LO.items():
        top = spec[2] if spec[0] == "RR" else 3.0
        clear_caches()
        prof = np.asarray(sh.ShuffleAccountant(_rand(spec), n, "replace").privacy_profile(_eps_grid(top)), float)
        lo = np.array(lo)
        if not np.all(prof >= lo):
            bad.append((spec, n, np.flatnonzero(prof < lo).tolist()))
    assert not bad, bad
    if HAS_14:
        assert sum(settled_spy) > 0  # (the rule under review ran)


def test_pair_at_or_above_the_base_lower_values(settled_spy):
    """The pair's sweep (rule a): 10-RR eps0 = 4, n = 1e5, replace, Delta = 1e-3 (37 settled stops in this review's
    run): the pair's delta at or above the base lower values (measured margin 2.8e-3 relative at the least)."""
    clear_caches()
    pair = sh.dominating_pair(sh.ShuffleAccountant(sh.RandomizedResponse(10, 4.0), 10**5, "replace"), 1e-3,
                              progress=False)
    clear_caches()
    d = np.asarray(pair.get_delta(_eps_grid(4.0)), float)
    lo = np.array(BASE_LO[(("RR", 10, 4.0), 100000)])
    assert np.all(d >= lo), (d / lo)
    assert pair.certified
    if HAS_14:
        assert sum(settled_spy) > 0
