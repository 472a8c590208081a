"""Review rev48 (session 48): attack on Lemma 2.30.7 (docs/composition.md §2.30.7; ``spacing.spacing_of`` decides "no
spacing" from the first ``PROBE_ATOMS`` = 8 atoms where a positive atom of positive probability lies below
``PROBE_GAP`` = 0.98 times their largest). The lemma's proof assumes nothing of the law's shape (any s >= m makes
the whole test fail at that atom), so it must hold for every array the engine could pass: adversarial arrays with
the spaced atoms first and one far atom after the probe, atoms just at fl(0.98 m) and its neighbours, m at 1e-300
and below, subnormals, zero probabilities in the probe, NaN / inf / -inf after the probe, negative atoms near -k s.
Reference: tests/test_prof47_spacing_probe.py's atom-by-atom definition (Python floats), and main's test with the
probe off. And what a wrong answer would cost: the spacing is a choice of steps only (docs/accountant_tail.md
§46.2); a deliberately wrong spacing in ``plain.refine`` still gives a bracket that meets a tight reference."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import plain, spacing

from test_prof47_spacing_probe import _reference, _same

_SPECIAL = [0.0, -0.0, 5e-324, 1e-310, 1e-300, 9.9e-301, 1.0, -1.0, math.inf, -math.inf, math.nan]


@st.composite
def _arrays(draw):
    s = draw(st.sampled_from([1.0, 1e-300, 2e-300, 1e-299, 3.7, 1e300, 1e-308]))
    head = []
    for _ in range(draw(st.integers(2, 8))):
        kind = draw(st.integers(0, 6))
        if kind == 0:  # near a (negative) multiple of s, within the 1 % band below it
            head.append(-draw(st.integers(0, 5)) * s - draw(st.floats(0, 0.0105)) * s)
        elif kind == 1:  # the probe's boundary: fl(0.98 m) and its neighbours (m = s)
            g = spacing.PROBE_GAP * s
            head.append(float(np.nextafter(g, draw(st.sampled_from([0.0, math.inf])))) if draw(st.booleans()) else g)
        elif kind == 2:
            head.append(draw(st.sampled_from(_SPECIAL)))
        elif kind == 3:
            head.append(s)
        elif kind == 4:
            head.append(s * draw(st.floats(0.97, 1.0)))
        else:
            head.append(draw(st.floats(-3.0, 1.0)) * s)
    tail = [draw(st.sampled_from([s * draw(st.floats(1.0, 1e6)), s, 0.99 * s, -2 * s] + _SPECIAL))
            for _ in range(draw(st.integers(0, 6)))]
    vals = np.array(head + tail, dtype=float)
    probs = np.array([draw(st.sampled_from([0.0, 1e-300, 0.5, 1.0])) for _ in vals], dtype=float)
    return vals, probs


@settings(max_examples=600, deadline=None, derandomize=True)
@given(_arrays())
def test_probe_matches_the_definition_on_adversarial_arrays(arr):
    with np.errstate(all="ignore"):
        v, p = arr
        got = spacing.spacing_of(v, p)
        assert _same(got, _reference(v, p)), (v.tolist(), p.tolist(), got)


def test_far_atom_after_the_probe():
    """The brief's law: eight atoms on a spacing (0, -a, -2a, ..., and a), one far atom beyond the probe. The probe
    cannot decide (no positive atom below 0.98 a among the first 8), and the whole test says None (the far atom is s;
    a lies below 0.98 s); with the "far" atom at a itself, the answer is a (spaced); 0.5 % above a it is None again
    (the negative atoms -k a then lie above -k s, beyond the band below it)."""
    a = 0.5  # (multiples exact in binary)
    head = [0.0, -a, -2 * a, -3 * a, -4 * a, -5 * a, -6 * a, a]
    p = np.full(9, 0.1)
    for far, want in ((1000 * a, None), (a, a), (a * 1.005, None)):
        v = np.array(head + [far])
        assert not spacing._probe_unspaced(v[:8], p[:8])
        got = spacing.spacing_of(v, p)
        assert _same(got, _reference(v, p)) and _same(got, want), (far, got)


def test_a_wrong_spacing_keeps_the_bracket_certified(monkeypatch):
    """A wrong answer of the spacing test would only change refine's steps: with every spacing replaced by 0.61 of
    itself (steps that divide no cluster), 10-RR (eps0 = 4) replace-one at n = 1e5, eps 0.001 (its user law spaced
    at s = 8.43) still gives a bracket that meets the rel_tol-1e-4 reference, and the steps did move."""
    R, n, eps = RandomizedResponse(10, 4.0), 10 ** 5, 0.001
    clear_caches()
    ref = ShuffleAccountant(R, n, "replace", rel_tol=1e-4).get_delta_bounds(eps)
    clear_caches()
    base = ShuffleAccountant(R, n, "replace").get_delta_bounds(eps)
    clear_caches()
    real, used = plain.atom_spacing, []

    def wrong(law):
        s = real(law)
        if s is not None:
            used.append(s)
            return 0.61 * s
        return s

    monkeypatch.setattr(plain, "atom_spacing", wrong)
    lo, up = ShuffleAccountant(R, n, "replace").get_delta_bounds(eps)
    clear_caches()
    assert used, "the cell never asked for a spacing: the test is idle"
    assert float(lo) <= float(ref[1]) and float(ref[0]) <= float(up), (lo, up, ref)
    assert float(lo) <= float(base[1]) and float(base[0]) <= float(up)
    assert (float(lo), float(up)) != (float(base[0]), float(base[1]))
