"""Review rev46 (session 46): attack on docs/accountant_tail.md §69.1 (g45: the lognormal kernel's term of a zero
coefficient not computed; Lemma 69.1: the same doubles, signed zeros included).

tests/test_g45_same_doubles.py compares the kernel with a transcription of main's three-term form on moderate inputs
(|t| <= 1e4, r in [0.05, 6], G and S in e^[-8, 8] or exactly 0). Here the adversarial corners: thresholds at +-inf,
NaN, +-0, +-1e300, subnormal and at a (q = 0, and the next doubles); the other coefficient subnormal (5e-324,
-zero stays the skip's, a subnormal does not) or huge; r from 1e-8 to 40; v_lo / v_hi infinite, equal, signed zeros;
subnormal and huge weights. Claims: (1) the kernel's bracket is main's three-term form's, bit for bit (including NaN
positions and the signs of zeros), through g45's transcription ``stop_loss_main``; (2) soundness against an
independent 50-digit evaluation of the three-term closed form (tests/_rev46_lognormal_ref.py): lo <= E[(L - t)_+]
<= up wherever t is finite and the bracket is a number.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp import _core

from _rev46_lognormal_ref import exact
from test_g45_same_doubles import stop_loss_main

INF = math.inf
TINY = 5e-324
KERNEL = _core.accountant.lognormal_stop_loss


def _same(got, want) -> bool:
    return np.asarray(got, dtype=float).tobytes() == np.asarray(want, dtype=float).tobytes()


def _thresholds(a: float, extra: list) -> np.ndarray:
    near = [a, np.nextafter(a, INF), np.nextafter(a, -INF), a + 1e-9, a - 1e-9]
    return np.array(extra + near + [0.0, -0.0, TINY, -TINY, 1e-300, -1e-300, 1e300, -1e300, INF, -INF, math.nan], float)


COEF = [0.0, -0.0]
OTHER = [TINY, 1e-310, 1e-300, 1e-20, 0.31731050786291415, 1.0, 7.5, 1e20, 1e300]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(a=st.one_of(st.sampled_from([0.0, -0.0, TINY, -1.6487212707001173, 1e300, -1e300]), st.floats(-50.0, 50.0)),
       zero=st.sampled_from(COEF), other=st.sampled_from(OTHER), which=st.sampled_from(["G", "S"]),
       r=st.sampled_from([1e-8, 1e-3, 0.05, 1.0, 2.0, 6.0, 40.0]),
       ends=st.sampled_from([(-INF, INF), (-0.0, INF), (0.0, 0.0), (1.0, 1.0), (-40.0, 40.0), (-1.0, 2.0),
                             (3.0, INF), (-INF, -3.0)]),
       w=st.sampled_from([1.0, TINY, 1e-300, 3.15, 1e300]), ts=st.lists(st.floats(-1e6, 1e6), max_size=6))
def test_same_doubles_as_the_three_term_form_at_the_corners(a, zero, other, which, r, ends, w, ts):
    G, S = (zero, other) if which == "G" else (other, zero)
    law = (a, G, S, r, ends[0], ends[1], w)
    t = _thresholds(a, ts)
    got = KERNEL(*law, t)
    with np.errstate(all="ignore"):  # (the transcription's numpy scalars at inf / NaN)
        want = stop_loss_main(*law, t)
    assert _same(got[0], want[0]) and _same(got[1], want[1]), (law, t[~((got[0] == want[0]) | np.isnan(want[0]))])


@settings(max_examples=80, deadline=None, derandomize=True)
@given(a=st.floats(-5.0, 5.0), zero=st.sampled_from(COEF), lg=st.floats(-30.0, 30.0), which=st.sampled_from(["G", "S"]),
       r=st.sampled_from([1e-6, 1e-3, 0.1, 1.0, 2.0, 5.0, 20.0]),
       ends=st.sampled_from([(-INF, INF), (-0.0, INF), (-40.0, 40.0), (-1.0, 2.0), (3.0, INF), (-INF, -3.0)]),
       w=st.sampled_from([1.0, 3.15, 1e-200]), ts=st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=5))
def test_bracket_contains_the_independent_value(a, zero, lg, which, r, ends, w, ts):
    other = math.exp(lg)
    G, S = (zero, other) if which == "G" else (other, zero)
    law = (a, G, S, r, ends[0], ends[1], w)
    t = np.array(ts + [a, np.nextafter(a, INF), np.nextafter(a, -INF), a + 1e-9, a - 1e-9, a + other, a - other], float)
    lo, up = KERNEL(*law, t)
    for ti, l_, u_ in zip(t.tolist(), lo.tolist(), up.tolist()):
        ex = exact(a, abs(G), abs(S), r, ends[0], ends[1], w, ti)
        assert l_ <= ex <= u_, (law, ti, l_, float(ex), u_)
