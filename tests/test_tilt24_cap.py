"""The tilt's cap theta x_K <= TILT_EXP_MAX (docs/accountant.md §3.4.1).

BMG(0.95, 1e5) at n = 1e6 was refused at eps ~ 1.92e-8 (reached by ``sharpdp account --epsilon 1e-5``'s
search of a smaller certified delta): one pass tilted by theta x_K ~ 2490 overflowed e^{theta x_k}.
"""
from __future__ import annotations

import math

import pytest

import sharpdp.shuffle.accountant.lattice as lattice
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant.memo import clear_result_memos

EPS_FAIL = 1.91937872549963e-08  # the eps at which the golden search of `sharpdp account` hit the refusal


@pytest.fixture(autouse=True)
def _fresh_memos():
    clear_result_memos()
    yield
    clear_result_memos()


def _bounds(rnd, n: int, eps: float) -> tuple[float, float]:
    clear_result_memos()
    lo, up = ShuffleAccountant(rnd, n).get_delta_bounds(eps)
    return float(lo), float(up)


def test_failing_cell_certifies_and_brackets_against_neighbour():
    """The refused cell returns a finite bracket. References: its upper value holds the release sampler's
    charge (computed independently by sampler_term) plus a laws' part far below it; its lower value is at
    most the certified upper laws' value at sigma0 = 7e4 (a cell that always worked): adding independent
    N(0, s^2) noise to every message is post-processing, so the true delta is non-increasing in sigma0."""
    acc = ShuffleAccountant(BlanketMixedGaussian(0.95, 1e5, 1), 10**6)
    r = acc.report(EPS_FAIL)
    charge = acc.sampler_term(EPS_FAIL)
    assert math.isfinite(r.upper) and 0.0 <= r.lower <= r.upper
    laws_up = r.upper - r.terms["sampler"]
    assert r.terms["sampler"] == charge
    assert r.lower <= laws_up < 0.1 * charge  # a useful bound: the charge dominates, as at neighbouring eps
    assert charge <= r.upper <= 1.1 * charge
    clear_result_memos()
    acc7 = ShuffleAccountant(BlanketMixedGaussian(0.95, 7e4, 1), 10**6)
    r7 = acc7.report(EPS_FAIL)
    assert r.lower <= r7.upper - r7.terms["sampler"]


@pytest.mark.parametrize("cap", [0.5, 0.2])
@pytest.mark.parametrize("sigma0, n, eps", [(1.0, 1000, 1.0), (2.0, 100, 0.1)])
def test_forced_cap_keeps_a_valid_bracket(monkeypatch, cap, sigma0, n, eps):
    """Any theta > 0 is valid (3.4): with the cap forced far below the root (theta x_K ~ 5.6 there) the
    bracket must still overlap the uncapped engine's and agree with it to the accountant's accuracy."""
    ref_lo, ref_up = _bounds(GaussianRandomizer(sigma0, 1), n, eps)
    seen = []
    engine = lattice.engine

    def spy(g, eta, k0, h, n_, rel_tol, threads):
        out = engine(g, eta, k0, h, n_, rel_tol, threads)
        seen.append(out.theta * (max(k0 + g.size - 1, 1) * h + h))
        return out

    monkeypatch.setattr(lattice, "TILT_EXP_MAX", cap)
    monkeypatch.setattr(lattice, "engine", spy)
    lo, up = _bounds(GaussianRandomizer(sigma0, 1), n, eps)
    assert all(t <= cap * (1 + 1e-12) for t in seen)
    assert any(abs(t - cap) <= 1e-12 * cap for t in seen)  # the cap engaged (in the main passes)
    assert 0.0 < lo <= ref_up and ref_lo <= up
    assert abs(up - ref_up) <= 1e-4 * ref_up and abs(lo - ref_lo) <= 1e-4 * ref_lo


def test_cap_not_engaged_is_bit_identical(monkeypatch):
    """Where the root's theta x_K is below the cap the values equal the uncapped tilt's bit for bit."""
    cells = [(GaussianRandomizer(0.5, 1), 10**5, 1.0), (BlanketMixedGaussian(0.5, 1.0, 1), 1000, 0.1)]
    ref = [_bounds(*c) for c in cells]
    monkeypatch.setattr(lattice, "TILT_EXP_MAX", math.inf)
    assert [_bounds(*c) for c in cells] == ref
