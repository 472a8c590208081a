"""The heavy round's privacy profile with the per-law memos of prof25 (closed_forms.tail_bracket, mgf.v_cells) filled
by a sweep, against fresh accountants at a tighter tolerance (rel_tol 1e-3, one new accountant per eps: no memo
shared with the profile): every profile value lies at or above the fresh certified lower value and within the
profile accountant's rel_tol (1e-2) of it, on the FFT treatment's eps (< 1.1) and the closed form's (§18)."""

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, clear_caches, privacy_profile

HEAVY = BlanketMixedGaussian(0.04089409561900239, 0.5960134902126553, 1)
N = 10**5
CHECK = [0.25, 0.9, 1.3, 2.0, 3.5]


@pytest.fixture(scope="module")
def profile():
    clear_caches()
    acc = ShuffleAccountant(HEAVY, N)
    eps = np.unique(np.concatenate([np.linspace(0.0, 4.0, 41), CHECK]))  # (one sweep: the memos filled in order)
    return dict(zip(eps.tolist(), privacy_profile(acc, eps).tolist()))


@pytest.mark.parametrize("e", CHECK)
def test_profile_value_against_a_fresh_tighter_bracket(profile, e):
    lo, up = ShuffleAccountant(HEAVY, N, rel_tol=1e-3).get_delta_bounds(e)
    v = profile[e]
    assert lo <= v  # certified: never below a certified lower value
    assert v <= (1 + 1e-2) * lo * (1 + 1e-9)  # and within the accountant's rel_tol of it
    assert lo <= up <= (1 + 1.5e-3) * lo
