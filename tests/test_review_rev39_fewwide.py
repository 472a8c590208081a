"""Review rev39 (session 39) of session 38's few-user bracket beyond n = 500 (docs/accountant.md §8.16,
``limits.FEW_WIDE``, ``closed_forms._wide_weights``): the 40-sd binomial window, the log-gamma weights rounded down, the
cost gate and the dropped tails, at the Gaussian randomizer's cells where the rule moves the report (n = 600 - 5000;
sigma0 = 0.46 at eps 15, 20, 26.5: main's engine gave (0, 2.7e-4) and (0, 5.2e-7) at n = 600, 1000; sigma0 = 0.3 at
eps 0.5 - 4: main's (0.52, 0.97) became brackets 0.02 - 0.8 % wide), zero-out (the x-vs-bot law).

Reference (independent of the accountant): the Asmussen-Kroese conditional Monte Carlo of tests/_review28_ak_reference.py
(``d_up_ak``: for each M ~ Bin(n, gamma) with P(M) >= 1e-13, M - 1 users sampled from the law's own densities, the last
user's part E[(L + s)_+; L > max(m, -s)] in closed form, times M; unbiased; 20,000 samples per M, seeds n + 10 eps),
computed offline by rev39 (~2 min; the values and standard errors below). Measured (rev39, main 72b04806): every
bracket holds its reference, the tightest margins 3.5e-8 relative (sigma0 0.46, n = 5000, eps 26.5, lower value; the
reference's standard error 1e-13 relative) and 9.8e-5 relative (sigma0 0.3, n = 600, eps 4, lower value, 100
standard errors). Main's engine brackets (switch off) hold them too. Tolerance: 6 standard errors + 1e-12 relative.
At sigma0 = 0.3 the bot-vs-x law has a positive top too: its D_up (AK_BOT, by Lemma 9.15.1 of docs/accountant.md from the
x-vs-bot law at -eps) lies below the x-vs-bot one at every cell, so the report's maximum is AK's value.
Found (no under-report; an accuracy miss, pinned by a non-strict xfail): at rel_tol 1e-3 the gate declines at sigma0 =
0.3, n = 5000, eps 0.5 and 1, and the engine's (0.553, 0.978) / (0.524, 0.974) is returned, far looser than the
default request's [0.95753, 0.96539] / [0.95287, 0.95890]; at n = 600-2000, eps 0.5-2 the rel_tol-1e-3 brackets miss
1e-3 (0.10-0.43 % wide, ~7 s each).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant.closed_forms import small_n_bracket
from sharpdp.shuffle.laws import laws_for

# (sigma0, n, eps): (AK estimate of D_up of the x-vs-bot law, its standard error)
AK = {
    (0.46, 600, 15.0): (0.0017249272418453972, 2.54e-11),
    (0.46, 600, 20.0): (2.4567689440497795e-05, 2.17e-15),
    (0.46, 600, 26.5): (1.5247461566535673e-08, 1.46e-21),
    (0.46, 1000, 15.0): (0.0011846431369206534, 1.3e-11),
    (0.46, 1000, 20.0): (1.4855896015887072e-05, 1.26e-15),
    (0.46, 1000, 26.5): (7.760919885468448e-09, 3.71e-21),
    (0.46, 2000, 15.0): (0.000695841429953523, 2.75e-12),
    (0.46, 2000, 20.0): (7.344128118727208e-06, 5.72e-16),
    (0.46, 2000, 26.5): (3.0440348216691937e-09, 4.2e-22),
    (0.46, 5000, 15.0): (0.00033168804932483275, 2.1e-12),
    (0.46, 5000, 20.0): (2.7869080253365988e-06, 1.34e-16),
    (0.46, 5000, 26.5): (8.521712815270424e-10, 9.28e-23),
    (0.3, 600, 0.5): (0.9757161003728583, 2.91e-06),
    (0.3, 600, 1.0): (0.9711854071607802, 2.06e-06),
    (0.3, 600, 2.0): (0.9600260967272327, 9.64e-07),
    (0.3, 600, 4.0): (0.9272903300879476, 8.41e-07),
    (0.3, 1000, 0.5): (0.9740941704976175, 2.7e-06),
    (0.3, 1000, 1.0): (0.9693158601995663, 2.47e-06),
    (0.3, 1000, 2.0): (0.9575786490092463, 1.81e-06),
    (0.3, 1000, 4.0): (0.923383876539532, 1.23e-06),
    (0.3, 2000, 0.5): (0.9706158783246082, 2.95e-06),
    (0.3, 2000, 1.0): (0.9653075259299102, 2.6e-06),
    (0.3, 2000, 2.0): (0.9523507055176454, 2.27e-06),
    (0.3, 2000, 4.0): (0.9151131195948976, 1.35e-06),
    (0.3, 5000, 0.5): (0.9631663153828781, 3.53e-06),
    (0.3, 5000, 1.0): (0.9567545417134471, 3.89e-06),
    (0.3, 5000, 2.0): (0.9413189796252179, 2.98e-06),
    (0.3, 5000, 4.0): (0.8979896035607347, 1.92e-06),
}

# sigma0 = 0.3: D_up of the bot-vs-x law by the identity of docs/accountant.md Lemma 9.15.1 from the AK estimate of the
# x-vs-bot law at -eps (GaussXBot(0.3, -eps), 20,000 samples per M, seed n + 7): 1 - e^eps (1 - D_up^A(-eps)), its
# standard error e^eps times that one's
AK_BOT = {
    (0.3, 600, 0.5): (0.9719750916866468, 3.64e-06),
    (0.3, 600, 1.0): (0.9616341366967216, 6.26e-06),
    (0.3, 600, 2.0): (0.9292265615226072, 1.83e-05),
    (0.3, 600, 4.0): (0.775595553532027, 0.000151),
    (0.3, 1000, 0.5): (0.9700048108854655, 5.03e-06),
    (0.3, 1000, 1.0): (0.9588789499349124, 8.75e-06),
    (0.3, 1000, 2.0): (0.9239794843707355, 2.59e-05),
    (0.3, 1000, 4.0): (0.7593982841212987, 0.000215),
    (0.3, 2000, 0.5): (0.9657844865962237, 5.24e-06),
    (0.3, 2000, 1.0): (0.952977000731459, 9.16e-06),
    (0.3, 2000, 2.0): (0.9127579841017199, 2.74e-05),
    (0.3, 2000, 4.0): (0.725161615818278, 0.000232),
    (0.3, 5000, 0.5): (0.9566350469433742, 7.7e-06),
    (0.3, 5000, 1.0): (0.9401216815732558, 1.35e-05),
    (0.3, 5000, 2.0): (0.8881403657923963, 4.03e-05),
    (0.3, 5000, 4.0): (0.6510094910089399, 0.000342),
}


def _holds(br, cell):
    ref, se = AK[cell]
    tol = 6.0 * se + 1e-12 * ref
    return br[0] <= ref + tol and br[1] >= ref - tol


@pytest.mark.parametrize("cell", sorted(AK), ids=str)
def test_report_holds_the_ak_reference(cell):
    """get_delta_bounds (rel_tol 1e-2) holds D_up and meets rel_tol. (At rel_tol 1e-3, measured offline, ~7 s a cell
    where the gate declines: every bracket holds D_up too, see test_finer_request_no_looser.)"""
    s, n, eps = cell
    clear_caches()
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n)
    lo, up = acc.get_delta_bounds(eps)
    assert _holds((lo, up), cell), (cell, lo, up, AK[cell])
    assert up - lo <= acc.rel_tol * lo, (cell, lo, up)


@pytest.mark.parametrize("cell", sorted(AK), ids=str)
def test_few_user_bracket_without_gate_holds_it(cell):
    """The few-user bracket itself, formed with no rel_tol (no estimate, every window term), holds D_up."""
    s, n, eps = cell
    clear_caches()
    pairs = laws_for(GaussianRandomizer(s, 1), eps, "zero_out")  # ((gamma, x vs bot), (gamma, bot vs x))
    br = small_n_bracket(pairs[0][1], float(pairs[0][0]), n)
    assert br is not None and _holds(br, cell), (cell, br, AK[cell])
    if cell in AK_BOT:  # (bot vs x: its top 1 - e^eps g > 0 at sigma0 0.3; its D_up below x vs bot's)
        ref, se = AK_BOT[cell]
        assert ref + 6 * se < AK[cell][0]
        bb = small_n_bracket(pairs[1][1], float(pairs[1][0]), n)
        assert bb is None or (bb[0] <= ref + 6 * se and bb[1] >= ref - 6 * se), (cell, bb, ref, se)


# (session 40, eps40: docs/accountant.md §8.18 forms the few-user bracket at the finer request too; the xfail removed)
def test_finer_request_no_looser():
    """GaussianRandomizer(0.3), n = 5000, eps = 0.5: a finer request's bracket is no looser than the default's (~8 s)."""
    cell = (0.3, 5000, 0.5)
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(0.3, 1), 5000).get_delta_bounds(0.5)
    clear_caches()
    lo3, up3 = ShuffleAccountant(GaussianRandomizer(0.3, 1), 5000, rel_tol=1e-3).get_delta_bounds(0.5)
    assert _holds((lo3, up3), cell)
    assert up3 - lo3 <= up - lo, ((lo, up), (lo3, up3))
