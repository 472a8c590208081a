"""Review rev37 (session 37) of replace-one through ⊥: rep37's closed-form edge of leg B's cliff (docs/accountant.md
§9.14, ``limits.VIA_BOTTOM_CLOSED_EDGE``) and the old item "replace through ⊥ at n = 1e8".

* n = 1: the edge's split makes the bound through ⊥ tight, within 2-7e-12 (relative) of the exact delta of the
  Gaussian mechanism with sensitivity 2 (its margin is the outward rounding alone). Against 50-digit mpmath on a grid
  the builder did not use (sigma0 0.7-8, eps 0.5-8; rev37 measured the upper value 2.05e-12 ... 6.6e-12 above the exact
  value wherever the split is at the edge, and never below it): the certified upper value is never below the exact
  delta. (A value below it would be an under-report: at n = 1 the shuffled mechanism is the Gaussian mechanism.)
* n = 1e8 (the old item; main 4267d7f measured by rev37): the brackets through ⊥ are of the bound at the reported split
  (its lower value is not a lower value of delta, docs/accountant.md §9). Checked: the reported bracket against the
  same split's chain A(e1) + e^{e1} B(e2) from fresh zero-out legs at rel_tol 1e-3 (sigma0 = 1, eps 1e-3 ... 1, sigma0 =
  2, 4.6, n = 1e8, sigma0 = 1, n = 1e9): every upper value at or above the chain's lower value, every bracket overlapping
  it; widths 0.2-0.6 % except sigma0 = 0.5 (eps 1e-3, 0.01: 98 % and 80 %, the split e1 = 0 with leg B's lower value 0
  even at rel_tol 1e-3; still the chain's own bracket [0.0292959, 0.0580078] at eps = 1e-3, so the bound, not an
  under-report; eps = 0.1: main stopped at 120 s, rep37 18.5 % [0.0196861, 0.0233211] at e1 = 0.0376 against the chain
  [0.0198150, 0.0233119], leg B's lower value 0 again). The test runs sigma0 = 1, n = 1e8, eps = 0.1 live.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.contract import zero_out_legs


def _gaussian_mechanism_delta(s: float, eps: float) -> mp.mpf:
    """delta(eps) of N(x, s^2) at |x - x'| = 2, 50 digits: Phi(1/s - eps s/2) - e^eps Phi(-1/s - eps s/2)."""
    with mp.workdps(50):
        s_, e = mp.mpf(s), mp.mpf(eps)
        return mp.ncdf(1 / s_ - e * s_ / 2) - mp.e ** e * mp.ncdf(-1 / s_ - e * s_ / 2)


CELLS_N1 = [(0.7, 6.0), (0.7, 8.0), (1.0, 4.0), (1.5, 1.0), (1.5, 4.0), (1.5, 8.0), (2.0, 2.0), (2.0, 4.0), (3.0, 1.0),
            (3.0, 3.0), (3.0, 6.0), (4.6, 1.0), (4.6, 4.0), (8.0, 0.5), (8.0, 2.0), (0.46, 6.0), (0.7, 3.0)]


@pytest.mark.parametrize("s, eps", CELLS_N1)
def test_n1_upper_value_never_below_the_exact_gaussian_mechanism(s, eps):
    """GaussianRandomizer(s, 1), n = 1, replace: the certified upper value >= the exact delta (50 digits), and within
    1e-9 of it where the split is at the cliff's edge (the tight cells above)."""
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), 1, "replace").get_delta_bounds(eps)
    ex = _gaussian_mechanism_delta(s, eps)
    assert mp.mpf(up) >= ex, (s, eps, up, ex)
    assert lo <= up


def test_n1e8_bracket_against_fresh_legs_at_its_split():
    """sigma0 = 1, n = 1e8, replace, eps = 0.1 (main: [1.80805e-13, 1.81955e-13] at e1 = 0.0952446): the reported
    bracket against the chain of its own split from fresh zero-out legs at rel_tol 1e-3 (leg A x vs bot at e1, leg B
    bot vs x at e2 <= eps - e1; main's split's legs hard-coded: A [1.8081444e-13, 1.8083063e-13], B [0, 4.6437e-16]): the upper value is at or above the chain's lower value and the two overlap."""
    R, n, eps = GaussianRandomizer(1.0, 1), 10**8, 0.1
    acc, rep, e1, e2 = _replace_split(R, n, eps)
    if e1 == 0.09524456516497352:  # (main's split: its fresh legs at rel_tol 1e-3, measured by rev37, ~40 s under load)
        c_lo, c_up = 1.8081444164730802e-13, 1.8083063010028623e-13 + math.exp(e1) * 4.643684603331181e-16
    else:
        c_lo, c_up = _fresh_chain(R, n, e1, e2)
    assert rep.upper >= c_lo * (1 - 1e-12), (rep.lower, rep.upper, c_lo, c_up)
    assert rep.lower <= c_up * (1 + 1e-12), (rep.lower, rep.upper, c_lo, c_up)
    assert rep.upper - rep.lower <= acc.rel_tol * rep.lower


def _replace_split(R, n: int, eps: float):
    """A fresh replace accountant's report at eps and its split (e1, e2) with e1 + e2 <= eps exactly."""
    clear_caches()
    acc = ShuffleAccountant(R, n, "replace")
    rep = acc._report(eps, acc.rel_tol)
    e1 = rep.terms["epsilon_split"]
    e2 = eps - e1
    while e1 + e2 > eps:
        e2 = math.nextafter(e2, 0.0)
    return acc, rep, e1, e2


def _fresh_chain(R, n: int, e1: float, e2: float) -> tuple[float, float]:
    """The split's chain A(e1) + e^e1 B(e2) from fresh zero-out legs at rel_tol 1e-3: (lower, upper)."""
    legs = zero_out_legs(R)
    clear_caches()
    z = ShuffleAccountant(R, n, "zero_out", rel_tol=1e-3)
    a, b = z._report(e1, 1e-3, only=legs[0]), z._report(e2, 1e-3, only=legs[1])
    return a.lower + math.exp(e1) * b.lower, a.upper + math.exp(e1) * b.upper


def _chain_check(s: float, n: int, eps: float) -> None:
    """The replace bracket against its own split's chain from fresh zero-out legs at rel_tol 1e-3; rel_tol met."""
    R = GaussianRandomizer(s, 1)
    acc, rep, e1, e2 = _replace_split(R, n, eps)
    c_lo, c_up = _fresh_chain(R, n, e1, e2)
    assert rep.upper >= c_lo * (1 - 1e-12) and rep.lower <= c_up * (1 + 1e-12), (rep.lower, rep.upper, c_lo, c_up)
    assert rep.upper - rep.lower <= acc.rel_tol * rep.lower


# cells where §9.14 moves the bracket (rev37, rep37 89260792, on / off): e.g. sigma0 = 2, n = 10, eps = 4: on
# [3.58849e-8, 3.59949e-8] (e1 = 3.5172354), off [3.58948e-8, 3.60048e-8]; the chain [3.59194e-8, 3.59354e-8]
@pytest.mark.parametrize("s, n, eps", [(1.0, 10, 2.0), (1.0, 10, 4.0), (2.0, 10, 2.0), (2.0, 10, 4.0), (2.0, 100, 4.0),
                                       (4.6, 10, 1.0), (4.6, 10, 2.0)])
def test_closed_edge_brackets_hold_their_chain(s, n, eps):
    _chain_check(s, n, eps)


def _truth_n2(s: float, eps: float, z: float, x: float = 1.0, xp: float = -1.0, h_div: int = 200) -> float:
    """H_eps(P || Q) of the shuffled pair at n = 2: P the unordered pair {N(x, s^2), N(z, s^2)}, Q with x' for x, a
    Riemann sum on y1 < y2 (step s / h_div; halving the step moves it by < 2e-5 relative on the cells below): a lower
    value of the replace-one delta (one choice of the data), from the mechanism alone."""
    from scipy.stats import norm

    L, h = 1.0 + 9.0 * s, s / h_div
    y = np.arange(-L, L + h / 2, h)
    fx, fxp, fz = norm.pdf(y, x, s), norm.pdf(y, xp, s), norm.pdf(y, z, s)
    E, tot = math.exp(eps), 0.0
    jj = np.arange(y.size)[None, :]
    for i in range(0, y.size, 256):
        sl = slice(i, min(i + 256, y.size))
        D = np.maximum(np.outer(fx[sl], fz) + np.outer(fz[sl], fx) - E * (np.outer(fxp[sl], fz) + np.outer(fz[sl], fxp)),
                       0.0)
        ii = np.arange(sl.start, sl.stop)[:, None]
        tot += float(np.where(jj > ii, D, np.where(jj == ii, 0.5 * D, 0.0)).sum())
    return tot * h * h


@pytest.mark.parametrize("s, eps", [(0.8, 2.0), (1.5, 1.0), (3.0, 0.5)])
def test_n2_replace_upper_value_above_a_brute_force_lower_value(s, eps):
    """GaussianRandomizer(s, 1), n = 2, replace through bot: the certified upper value >= the brute-force delta of the
    shuffled pair (x = 1, x' = -1, the other user at -1, 0, 1). Measured: ratios 1.2-40 on a 12-cell grid (the bound
    through bot is loose at n = 2), e.g. s = 0.8, eps = 2: 0.511604 against 0.426863."""
    clear_caches()
    up = ShuffleAccountant(GaussianRandomizer(s, 1), 2, "replace").get_delta_bounds(eps)[1]
    tr = max(_truth_n2(s, eps, z) for z in (-1.0, 0.0, 1.0))
    assert up >= tr * (1 + 1e-4), (s, eps, up, tr)


def test_get_epsilon_through_bot_n2_answer_against_brute_force():
    """get_epsilon through bot at n = 2 (its start, the zero-out get_epsilon(delta / 2), is §8.15's at n <= 500): the
    brute-force delta of the shuffled pair at the answer is <= delta, and the searching accountant's own value too."""
    R, delta = GaussianRandomizer(0.8, 1), 1e-2
    clear_caches()
    acc = ShuffleAccountant(R, 2, "replace")
    e = acc.get_epsilon(delta)
    assert acc.get_delta_bounds(e)[1] <= delta
    assert max(_truth_n2(0.8, e, z) for z in (-1.0, 0.0, 1.0)) <= delta
