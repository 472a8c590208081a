"""E[(L - T)_+] kept per law object (python/sharpdp/shuffle/accountant/closed_forms.py, tail_bracket; the helper
memo.object_memo): the kept bracket at T is the float a fresh law gives, in any order of the requests, it contains
the lognormal closed form E[(a + G e^{r N - r^2/2} - T)_+] = G Phi(r - z) - (T - a) Phi(-z), z = (log((T - a)/G) +
r^2/2)/r, computed here in mpmath (an independent reference), and stop_loss_bracket / trivial_cap /
single_user_lower give the floats of an unmemoised law."""

import math

import mpmath as mp
import pytest

from sharpdp.shuffle.accountant import closed_forms as CF
from sharpdp.shuffle.accountant.memo import object_memo
from sharpdp.shuffle.laws.lognormal import LognormalLaw
from test_prof24_pair_memo import slotted_view

PARAMS = [(-0.9591059043809976, 0.9591059043809976, 1.6778143723612764), (-2.677, 0.959, 1.678), (-0.2, 1.5, 2.5)]


def _law(p, err=0.0):
    law = LognormalLaw(*p)
    law.value_error = err
    return law


def _stop_loss_mp(p, T):
    a, G, r = (mp.mpf(x) for x in p)
    if T <= a:
        return a + G - T  # (E L - T: the whole law lies above T)
    z = (mp.log((T - a) / G) + r * r / 2) / r
    return G * mp.ncdf(r - z) - (T - a) * mp.ncdf(-z)


@pytest.mark.parametrize("p", PARAMS)
def test_kept_bracket_is_the_fresh_float_in_any_order(p):
    law = _law(p)
    Ts = [0.0, 3.5, 0.0, 40.0, 3.5, 1e-3, 40.0, 0.0]
    got = [CF.tail_bracket(law, T) for T in Ts]
    assert len(law._tail_memo) == 4  # the repeated thresholds were answered from the memo
    for T, v in zip(Ts, got):
        assert v == _law(p).tail_upper_bracket(T)  # a fresh law: no memo
    assert got[0][1] > got[5][1] > got[1][1] > got[3][1] > 0.0  # (decreasing in T: a wrong key shows)


@pytest.mark.parametrize("p", PARAMS)
def test_kept_bracket_contains_the_closed_form(p):
    mp.mp.dps = 40
    law = _law(p)
    for T in (0.0, 0.7, 5.0, 60.0, 0.7, 0.0):
        lo, up = CF.tail_bracket(law, T)
        ref = float(_stop_loss_mp(p, T))
        assert lo <= ref <= up
        assert up - lo <= 1e-10 * ref + 1e-300


@pytest.mark.parametrize("p", PARAMS)
def test_closed_forms_unchanged_by_the_memo(p):
    # trivial_cap and single_user_lower ask for E[L_+] of one law twice, with the law's rounding bound (value_error
    # > 0: thresholds moved outwards); the floats are those of a law without the memo
    law = _law(p, 3e-16)
    got = (CF.trivial_cap(law), CF.single_user_lower(law, 0.04, 10**5), CF.stop_loss_bracket(law, 2.0),
           CF.stop_loss_bracket(law, 0.0))
    fresh = (CF.trivial_cap(_law(p, 3e-16)), CF.single_user_lower(_law(p, 3e-16), 0.04, 10**5),
             CF.stop_loss_bracket(_law(p, 3e-16), 2.0), CF.stop_loss_bracket(_law(p, 3e-16), 0.0))
    assert got == fresh
    ref = float(_stop_loss_mp(p, 0.0))
    assert got[3][0] <= ref <= got[3][1] and got[0] == got[3][1]
    assert 0 < len(law._tail_memo) <= 256


def test_object_memo_bounded_and_absent_without_storage():
    class Plain:
        pass

    class Slots:
        __slots__ = ()

    o = Plain()
    m = object_memo(o, "_m", limit=3)
    m.update({1: 1, 2: 2, 3: 3})
    assert object_memo(o, "_m", limit=3) == {}  # emptied once full: at most `limit` entries are kept
    assert object_memo(Slots(), "_m") is None

    law = slotted_view(_law(PARAMS[0]), "tail_upper_bracket")
    assert CF.tail_bracket(law, 1.0) == _law(PARAMS[0]).tail_upper_bracket(1.0)
    assert math.isfinite(CF.tail_bracket(law, 1.0)[1])
