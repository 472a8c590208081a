"""docs/accountant_tail.md §39.1 and §39.3 on the regime map's BMG cell n = 1e8, eps = 0.01 (zero-out; the far-tail
body's passes at h = 0.7734, 0.3867, 0.1934 make most of the call, §37.2).

Independent reference: the same law and clamps (T0, B) at the step h/8 (rel_tol 1e-4), a certified bracket of the
same body value E[(A)_+]/(n gamma). Checked: (1) every body pass's certified bracket meets the reference's (both
certified: disjoint brackets would be a bug in one of them); (2) Lemma 39.1: the hat values do not increase as the
step halves (D(h) >= 0; the engine's error terms are 1e-13 of the differences); (3) the measured ratio of §39.3:
a Richardson step with the Gaussian-noise ratio 1/3 from the two coarsest hat values lands above the reference's
certified upper value (so it cannot be used as a lower value without a proven ratio), and the hat's excess at the
first step exceeds the body's share 0.3 rel_tol (Body_lo + J_lo) (§39.2: no lower value makes that step enough)."""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail, limits
from sharpdp.shuffle.accountant.lattice import Coarsen
from sharpdp.shuffle.round_cache import clear_caches
from _main_floats34 import DIRTY  # noqa: E402

GAMMA, SIGMA0, N, EPS = 0.039943127470521624, 0.5276147158804813, 10**8, 0.01


@pytest.fixture(scope="module")
def passes():
    clear_caches()
    orig, rec = far_tail.lattice_pass, []

    def spy(law, gamma, n, h, T, B, *a, **k):
        r = orig(law, gamma, n, h, T, B, *a, **k)
        rec.append((law, gamma, h, T, B, r))
        return r

    far_tail.lattice_pass = spy
    # (**) session 34, tail34: un-nested, §39's three body passes are main's: docs/accountant_tail.md §44.1's stop off
    # (it ends this cell's passes after two, the round's whole bracket within 0.8 rel_tol)
    whole, limits.BODY_WHOLE_STOP = limits.BODY_WHOLE_STOP, False
    DIRTY[0] = True  # (the caches are cleared after this test: tests/conftest.py)
    mp = pytest.MonkeyPatch()
    session43_floats(mp)  # (**) session 44, lead: the switch-on (§66.1's first pass at half the step)
    try:
        lo, up = ShuffleAccountant(BlanketMixedGaussian(GAMMA, SIGMA0, 1), N, "zero_out").get_delta_bounds(EPS)
    finally:
        limits.BODY_WHOLE_STOP = whole
        far_tail.lattice_pass = orig
        mp.undo()
    law, gamma, h0, T, B, _ = rec[0]
    body = [(h, r) for (lw, _, h, _, _, r) in rec if lw is law and not isinstance(r, Coarsen)]
    ref = orig(law, gamma, N, h0 / 8, T, B, 1e-4, 1)
    assert not isinstance(ref, Coarsen)
    return (lo, up), body, ref


def test_every_body_pass_meets_the_finer_reference(passes):
    _, body, ref = passes
    assert [h for h, _ in body] == [0.7734375, 0.38671875, 0.193359375]  # (the cell of §39.1)
    r_lo, r_up = far_tail._body_lower(ref), ref.main
    assert 0 < r_lo < r_up <= r_lo * (1 + 2e-3)
    for _, r in body:
        assert far_tail._body_lower(r) <= r_up and r_lo <= r.main


def test_hat_values_decrease_as_the_step_halves(passes):
    _, body, ref = passes
    ups = [r.main for _, r in body] + [ref.main]
    for a, b in zip(ups, ups[1:]):
        assert a > b  # Lemma 39.1: Up_hat(h) - Up_hat(h/2) = D(h) >= 0, here >= 6e-11 against errors ~1e-19


def test_richardson_with_ratio_one_third_is_not_a_lower_value(passes):
    (lo, up), body, ref = passes
    u1, u2 = body[0][1].main, body[1][1].main
    guess = u2 - (u1 - u2) / 3.0
    assert guess > ref.main * (1 + 5e-4)  # above a certified upper value of the same body: not a lower value
    # §39.2: the first step's hat excess alone exceeds the body's share of the bracket
    # (Body_lo + J_lo is the cell's lower value up to the factor 1 - 1e-9 and the penalty, 0 for this law bounded below)
    share = 0.3 * 1e-2 * lo
    assert u1 - ref.main > 1.5 * share
