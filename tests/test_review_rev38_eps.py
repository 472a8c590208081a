"""Review rev38 (session 38) of eps38's few-user bracket beyond n = 500 (docs/accountant.md §8.16, ``limits.FEW_WIDE``:
§6.8's bracket at n > 500 with log-gamma weights on a 40-sd window and a cost gate) and the get_epsilon answers that
follow from it (§8.15 at n > 500).

Reference the builder did not use: the Asmussen-Kroese conditional Monte Carlo of the blanket divergence
(tests/_review28_ak_reference.py: the largest of M i.i.d. terms integrated out in closed form, every M of Bin(n, g)
with mass >= 1e-13; from the mechanism's densities, no accountant object). In the one-jump regime of these cells its
standard error is 1e-13 ... 1e-6 relative, so it pins D_up far inside the brackets' widths. Measured (rev38, eps38
c187d6c): every few-user lower value is below the estimate by 1e-10 ... 2e-8 relative, every upper value above it (e.g.
GaussianRandomizer(0.46), n = 1e4, eps = 26.5: [3.16353072e-10, 3.16401322e-10], AK 3.163530720e-10 +- 2e-23), and
every get_epsilon answer's D_up is 0.991-0.993 delta (GaussianRandomizer(0.46), n = 1e3, delta = 1e-6: 22.5452458, AK
9.92964e-7; the bot-vs-x law is 0 there: its top 1 - e^eps g < 0). The tests also pass on main (no rule: the
engine's brackets and answers satisfy the same contract)."""

from __future__ import annotations

import math

import pytest

from _review28_ak_reference import GaussXBot, OneTerm, d_up_ak
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches

# (sigma0, n, eps) GaussianRandomizer(sigma0, 1); (sigma0, n, eps, gamma) BMG(gamma, sigma0, 1); zero-out
CELLS = [(0.46, 1000, 26.5), (0.46, 1000, 22.5452), (0.46, 2000, 22.0), (0.46, 5000, 20.0), (0.5, 1000, 19.45675),
         (0.5, 3000, 18.0), (0.456, 2000, 12.0, 0.0202), (0.6, 1000, 10.0, 0.1), (0.582, 1000, 15.11, 0.0222)]


def _ak(cell, N=300):
    s, n, e = cell[:3]
    if len(cell) == 3:
        law = GaussXBot(s, e)
        gam = law.g
    else:
        gam = cell[3]
        law = OneTerm(gam - math.exp(e), 1.0 - gam, 1.0 / s)  # BMG's x vs bot: gamma + (1 - gamma) e^{rZ - r^2/2} - e^eps
    m, se = d_up_ak(law, gam, n, N, seed=38)
    return m, 4.5 * se + 1e-12 * m  # (the estimate's floating-point error ~1e-14 relative)


def _randomizer(cell):
    return GaussianRandomizer(cell[0], 1) if len(cell) == 3 else BlanketMixedGaussian(cell[3], cell[0], 1)


@pytest.mark.parametrize("cell", CELLS, ids=str)
def test_bracket_holds_the_conditional_monte_carlo(cell):
    """Lo <= D_up <= Up against the conditional Monte Carlo (the x-vs-bot law sets D_up at these eps)."""
    m, tol = _ak(cell)
    clear_caches()
    lo, up = ShuffleAccountant(_randomizer(cell), cell[1]).get_delta_bounds(cell[2])
    assert lo <= m + tol and up >= m - tol, (cell, lo, up, m, tol)


@pytest.mark.parametrize("s, n, delta", [(0.46, 1000, 1e-6), (0.46, 1000, 5e-7), (0.5, 1000, 1e-6),
                                         (0.46, 2000, 1e-6), (0.5, 5000, 1e-8)])
def test_get_epsilon_answer_holds_the_conditional_monte_carlo(s, n, delta):
    """The answer eps: a fresh default accountant's upper value <= delta and the Monte Carlo's D_up + 4.5 se <= delta
    (the bot-vs-x law is 0 there: its top is below 0)."""
    clear_caches()
    e = ShuffleAccountant(GaussianRandomizer(s, 1), n).get_epsilon(delta)
    g = 2.0 * (0.5 * math.erfc(1.0 / s / math.sqrt(2.0)))
    assert 1.0 - math.exp(e) * g < 0.0
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(s, 1), n).get_delta_bounds(e)
    assert up <= delta, (e, lo, up)
    m, tol = _ak((s, n, e))
    assert m + tol <= delta, (e, m, tol)
