"""Review rev24d of session 24's certification-relevant changes: search.charge_end (docs/accountant.md §8.3), the
memos of jump.pair_integral_up and concentrated._m_range (docs/accountant_tail.md §17), far_tail.closed_at_clamp's
disjointness refusal (docs/accountant_tail.md §24) and the no-target model pair of rounds.model_composition
(docs/composition.md §4.2). References: fresh accountants on a fine epsilon grid, fresh law objects / cleared memos,
the full closed-form jump bracket (§18) against the fast one (§21/§22), basic composition and the single round."""

import math

import numpy as np
import pytest

from sharpdp.shuffle import ShuffleAccountant
from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.accountant.jump import JumpTerm, pair_integral_up
from sharpdp.shuffle.laws import laws_for
from sharpdp.shuffle.laws.lognormal import LognormalLaw
from sharpdp.shuffle.randomizers import BlanketMixedGaussian, GaussianRandomizer

_BMG = BlanketMixedGaussian(0.95, 4.6, 1)


def _fresh(b, n, e):
    """The certified upper value a fresh accountant reports at e (no monotone memo of another call)."""
    return float(ShuffleAccountant(b, n).report(float(e)).upper)


def _fine_min(b, n):
    """The smallest fresh value on an 81-point grid of [0, min(eps_tau, 8)] refined by 201 points around its best."""
    tau = ShuffleAccountant(b, n).eps_tau
    grid = np.linspace(0.0, min(tau, 8.0), 81)
    vals = [_fresh(b, n, e) for e in grid]
    i = int(np.argmin(vals))
    fine = np.linspace(grid[max(i - 1, 0)], grid[min(i + 1, 80)], 201)
    fv = [_fresh(b, n, e) for e in fine]
    j = int(np.argmin(fv))
    return fv[j], float(fine[j])


# ------------------------------------------------------------------------------------------- charge_end (§8.3)
@pytest.mark.parametrize("n", [10**4, 10**5, 10**6])
def test_charge_end_answers_certified_and_refusals_only_at_the_floor(n):
    # measured minima 2.9461e-31 (n = 1e4), 2.9161e-30 (1e5), 2.8870e-29 (1e6), near eps = 0.41-0.45
    m, _ = _fine_min(_BMG, n)
    for f in (1 + 1e-5, 1 + 1e-4, 1.01, 1.5, 10.0, 1e6):
        d = m * f
        e = ShuffleAccountant(_BMG, n).get_epsilon(d)  # a refusal here would be a delta a grid point certifies
        assert _fresh(_BMG, n, e) <= d, (n, f, e)
    # within the golden search's resolution of the minimum (2e-8 relative above it at n = 1e5: refused, see
    # the report; §8.3 states the minimum 'to the search's resolution'): either refused or certified
    for f in (1 - 1e-6, 1 + 1e-9, 1 + 1e-7):
        try:
            e = ShuffleAccountant(_BMG, n).get_epsilon(m * f)
        except ValueError as ex:
            assert "not certified at any epsilon tried" in str(ex)
        else:
            assert _fresh(_BMG, n, e) <= m * f
    tau2 = ShuffleAccountant(_BMG, n).sampler_term(0.0)
    with pytest.raises(ValueError, match="charge alone at eps = 0"):
        ShuffleAccountant(_BMG, n).get_epsilon(0.999 * tau2)
    # well below the fine minimum (1e-3 relative: beyond grid and search resolution): refused
    with pytest.raises(ValueError, match="not certified at any epsilon tried"):
        ShuffleAccountant(_BMG, n).get_epsilon(0.999 * m)


@pytest.mark.parametrize("pre", [(0.3,), (0.414, 5.0), (2.0, 0.01, 30.0)])
def test_charge_end_after_the_memo_holds_values(pre):
    # the memo's smallest key with a value <= delta is the upper end: its fresh value is checked, and the answer's
    n = 10**6
    for d in (2.9e-29, 5e-29, 1e-20, 1e-15):
        acc = ShuffleAccountant(_BMG, n)
        for e in pre:
            acc.get_delta(e)
        e = acc.get_epsilon(d)
        assert _fresh(_BMG, n, e) <= d, (pre, d, e)
        assert acc.get_delta(e) <= d


def test_charge_end_gaussian_randomizer():
    b, n = GaussianRandomizer(4.6, 1), 10**5
    if not math.isfinite(ShuffleAccountant(b, n).eps_tau):
        pytest.skip("no release-sampler charge for this randomizer")
    m, _ = _fine_min(b, n)
    for f in (1 + 1e-4, 1.1, 1e3):
        e = ShuffleAccountant(b, n).get_epsilon(m * f)
        assert _fresh(b, n, e) <= m * f


# ------------------------------------------------------------------------------------------- memos (§17)
def _law(a=-5.0, b=0.9, r=1.7):
    return LognormalLaw(a, b, r)


def test_pair_memo_keys_numpy_and_float_same_value():
    law = _law()
    v1 = pair_integral_up(law, np.float64(3.0))
    assert pair_integral_up(law, 3.0) == v1 == pair_integral_up(_law(), 3.0)
    assert pair_integral_up(law, np.float64(2.5)) == pair_integral_up(_law(), 2.5)
    # neighbouring clamps (one ulp, and 3.4) are other keys: each the fresh float, decreasing in T0
    near = [math.nextafter(3.0, 4.0), 3.4, np.float64(2.6)]
    got = [pair_integral_up(law, T) for T in near]
    assert got == [pair_integral_up(_law(), T) for T in near]
    assert got[2] > v1 > got[1]
    # two laws with different parameters never share a memo (a memo hit for the other law's value would show)
    other = _law(a=-4.0)
    assert pair_integral_up(other, 3.0) == pair_integral_up(_law(a=-4.0), 3.0) != v1
    # a law moved (far_tail's shifted(up=True)) gets its own memo, not its parent's
    law.value_error = 0.5
    moved = law.shifted(up=True)
    assert pair_integral_up(moved, 3.0) == pair_integral_up(_law().moved(0.5), 3.0) > v1


def test_m_range_memo_keys():
    for N, gamma in [(999, 0.3), (np.int64(999), np.float64(0.3)), (1000, 0.3), (999, 0.30000000000000004)]:
        got = concentrated._m_range(N, gamma)
        concentrated._M_MEMO.clear()
        ref = concentrated._m_range(int(N), float(gamma))
        concentrated._M_MEMO.clear()
        for x, y in zip(got, ref):
            assert np.array_equal(np.asarray(x), np.asarray(y)), (N, gamma)
    a = concentrated._m_range(999, 0.3)
    b = concentrated._m_range(1000, 0.3)
    assert a[0][-1] != b[0][-1] or a[3] != b[3]  # N is part of the key


# ------------------------------------------------------------------------------------------- closed_at_clamp (§24)
_CELLS = [(BlanketMixedGaussian(0.01424, 0.4049, 1), 0.1, 10**9), (BlanketMixedGaussian(0.3, 1.0, 1), 1.0, 10**5),
          (GaussianRandomizer(0.75, 1), 0.01, 10**6)]


@pytest.mark.parametrize("cell", _CELLS)
def test_closed_at_clamp_no_spurious_refusal(cell):
    r, eps, n = cell
    seen = 0
    for gamma, law in laws_for(r, eps, "zero_out"):
        law = law.shifted(up=True)
        if not concentrated.eligible(law, gamma, n):
            continue
        for target in (1e-12, 1e-9, 1e-6):
            T0 = far_tail.choose_T0(law, gamma, n, target)
            lo_f, up_f = concentrated.jump_bracket(law, gamma, n, T0, fast=True)
            lo_s, up_s = concentrated.jump_bracket(law, gamma, n, T0)  # §18's full bracket: the same quantity
            assert max(lo_f, lo_s) <= min(up_f, up_s), (T0, lo_f, up_f, lo_s, up_s)
            out = far_tail.closed_at_clamp(JumpTerm(up_s, lo_s, 0), law, gamma, n, T0)
            assert out.lo == max(lo_f, lo_s) and out.up == min(up_f, up_s)
            # touching brackets (lo == up) are kept; one ulp apart is refused
            t = far_tail.closed_at_clamp(JumpTerm(lo_f, lo_f, 0), law, gamma, n, T0)
            assert t.lo == t.up == lo_f
            with pytest.raises(RuntimeError, match="disjoint"):
                far_tail.closed_at_clamp(JumpTerm(math.nextafter(lo_f, 0.0), 0.0, 0), law, gamma, n, T0)
            seen += 1
    assert seen >= 3


# ------------------------------------------------------------------------------------------- model pair (§4.2)
@pytest.mark.slow
@pytest.mark.parametrize("case", [(BlanketMixedGaussian(0.19348830834198633, 1.0666491462962673, 1), 1275, 4, 2.0),
                                  (BlanketMixedGaussian(0.5, 1.0, 1), 500, 2, 0.5),
                                  (BlanketMixedGaussian(0.9, 0.5, 1), 300, 4, 4.0)])
def test_model_pair_between_single_round_lower_and_basic(case):
    from sharpdp.shuffle.calibration.rounds import model_composition

    b, n, k, eps = case
    up = float(model_composition(b, n, "zero_out", k, eps).get_delta_bounds(eps)[1])
    acc = ShuffleAccountant(b, n)
    # k rounds leak at least one round (post-processing): its certified lower value at eps is a lower bound
    assert up >= float(acc.get_delta_bounds(eps)[0]), up
    assert up <= k * float(acc.get_delta_bounds(eps / k)[1]) * 1.01 + 1e-17


def _pair_delta(pair, k, eps):
    """The k-fold composition of a stored dominating pair at eps, computed directly (numpy convolution of the P-loss
    masses on the lattice, the composed +inf mass 1 - (1 - p_inf)^k): E_P[(1 - e^{eps - L})_+]."""
    d = pair.value_discretization_interval
    L, p = np.asarray(pair.losses), np.asarray(pair.probs, dtype=float)
    full = np.zeros(L[-1] - L[0] + 1)
    full[L - L[0]] = p
    c = full
    for _ in range(k - 1):
        c = np.convolve(c, full)
    lk = (np.arange(c.size) + k * L[0]) * d
    return -math.expm1(k * math.log1p(-pair.infinity_mass)) + float(np.sum(c * -np.expm1(np.minimum(eps - lk, 0.0))))


@pytest.mark.parametrize("case", [(BlanketMixedGaussian(0.19348830834198633, 1.0666491462962673, 1), 1275, 4, 2.0),
                                  (BlanketMixedGaussian(0.9, 0.5, 1), 300, 4, 4.0)])
def test_model_pair_dominates_the_round_and_composes_above_its_direct_convolution(case):
    # measured: the composed upper value / direct convolution = 1 + (1e-15 .. 2.4e-9) at eps / 2, eps, 2 eps; the
    # pair's own curve above the round's certified lower values on the grid
    from sharpdp.shuffle.calibration.rounds import model_composition

    b, n, k, eps = case
    ca = model_composition(b, n, "zero_out", k, eps)
    pair = ca.pairs()[0]
    assert pair.certified
    for e in (0.5 * eps, eps, 2.0 * eps):
        ref = _pair_delta(pair, k, e)
        up = float(ca.get_delta_bounds(e)[1])
        assert ref <= up <= ref * (1 + 1e-6), (e, up, ref)
    acc = ShuffleAccountant(b, n)
    grid = np.linspace(0.0, float(pair.sample_epsilons[-1]) * 1.2, 30)
    lo = np.asarray(acc.get_delta_bounds(grid)[0])
    curve = np.array([_pair_delta(pair, 1, e) for e in grid])
    assert np.all(curve >= lo * (1 - 1e-12)), grid[np.argmin(curve - lo)]


# ------------------------------------------------------------------------------------------- §9.7 (idle target)
def test_idle_target_fires_and_leaves_the_bracket_unchanged(monkeypatch):
    # a cell not among the builder's (sigma0 = 1.1, n = 1e6, eps = 7: the rule fires twice); rule off = the reference
    from sharpdp.shuffle.accountant import via_bottom

    orig, fired = via_bottom.ViaBottom._idle_target, []

    def spy(self, e2, neg):
        fired.append(orig(self, e2, neg))
        return fired[-1]

    b, n, eps = GaussianRandomizer(1.1, 1), 10**6, 7.0
    monkeypatch.setattr(via_bottom.ViaBottom, "_idle_target", spy)
    on = ShuffleAccountant(b, n, adjacency="replace").get_delta_bounds(eps)
    assert any(fired)
    monkeypatch.setattr(via_bottom.ViaBottom, "_idle_target", lambda self, e2, neg: False)
    off = ShuffleAccountant(b, n, adjacency="replace").get_delta_bounds(eps)
    assert tuple(on) == tuple(off)  # measured (1.1919634060074691e-25, 1.446858769435988e-25) both
    assert 1.19e-25 < on[0] <= on[1] < 1.45e-25
