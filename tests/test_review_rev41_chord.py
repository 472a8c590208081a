"""Review rev41 (session 41) of rep41's docs/accountant.md §9.19 (``VIA_BOTTOM_CHORD``, ``VIA_BOTTOM_CHORD_SEARCH``,
``VIA_BOTTOM_CHORD_B``: replace-one through bot, a leg between two certified legs of its order bracketed by the chord of
their upper values in t = e^eps (upper) and the secants beyond them (lower), from the convexity of D_up in t).

Claim attacked: every chord bracket contains the true leg. References independent of the accountant:
* leg A (x vs bot, zero-out) at n = 2: D_up from its definition in mpmath at 40 digits (tests/test_smalln_jump.py's
  ``gaussian_n2_reference``: one quadrature over Z1 with the integrand's kinks as breakpoints, ~1e-12 relative;
  tolerance 1e-9 relative), the chord's anchors certified at rel_tol 0.1 and spaced 0.25 - 0.5 nats (wide: the
  chord's curvature gap is large, the secants reach far);
* the chord reports a real search makes (the rule's own calls, recorded; the rule runs at n >= VIA_BOTTOM_CHORD_N =
  1000 since rep41 6d162cdd): legs A and B at n = 1000 against a fresh zero-out accountant's legs at rel_tol 1e-4
  (certified brackets by the engine: the two brackets must overlap); 6d162cdd records 6, 14 (5 of leg B), 3 chords there.
Measured on rep41 13a6a600 (the rule then also at n = 2: 61 chords of leg A recorded at eps 0.5 - 4, lower / mpmath
<= 0.9944, upper / mpmath >= 1.0146) and 6d162cdd (23 chords at the three n = 1000 cells: chord lower / tight upper <= 0.99983, chord upper / tight lower
>= 1.000122, both at GaussianRandomizer(0.46), eps = 4)."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import limits

pytestmark = pytest.mark.skipif(not hasattr(limits, "VIA_BOTTOM_CHORD"), reason="rule of a branch not merged")


def _truth_a(s, e):
    from test_smalln_jump import gaussian_n2_reference
    with mp.workdps(40):
        return float(gaussian_n2_reference(s, e))


@pytest.mark.parametrize("s, e0, h", [(1.0, 1.0, 0.25), (1.0, 0.3, 0.5), (2.0, 0.5, 0.25)])
def test_wide_chords_hold_the_mpmath_leg_at_n2(s, e0, h):
    from sharpdp.shuffle.accountant.via_bottom_chord import chord_bracket
    from tests.test_rep41_chord import four_anchors
    clear_caches()
    pts = four_anchors(ShuffleAccountant(GaussianRandomizer(s, 1), 2, "replace")._bottom, 0, e0, h)
    for x in (0.5, 1.5, 2.5, 1.02, 1.98):
        e = e0 + x * h
        b = chord_bracket(pts, e)
        assert b is not None
        t = _truth_a(s, e)
        assert b[0] <= t * (1 + 1e-9) and b[1] >= t * (1 - 1e-9), (s, e, b, t)


def _recorded(monkeypatch, run):
    from sharpdp.shuffle.accountant import via_bottom, via_bottom_chord
    got = []
    real = via_bottom_chord.chord_leg

    def spy(vb, e, rel_tol, leg=0, negligible=0.0):
        r = real(vb, e, rel_tol, leg, negligible)
        if r is not None:
            got.append((leg, e, r.lower, r.upper))
        return r

    monkeypatch.setattr(via_bottom_chord, "chord_leg", spy)
    monkeypatch.setattr(via_bottom, "chord_leg", spy, raising=False)
    run()
    monkeypatch.undo()
    return got


@pytest.mark.parametrize("s, n, eps", [(2.0, 1000, 1.0), (0.46, 1000, 4.0), (1.0, 1000, 8.0)])
def test_search_chords_overlap_fresh_tight_legs(s, n, eps, monkeypatch):
    def run():
        clear_caches()
        ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(eps)
    got = _recorded(monkeypatch, run)
    if not got:
        pytest.skip("no chord in this search")
    zo = ShuffleAccountant(GaussianRandomizer(s, 1), n, "zero_out", rel_tol=1e-4)
    step = max(1, len(got) // 10)
    for leg, e, lo, up in got[::step]:
        r = zo._report(e, 1e-4, only=(leg,))
        assert lo <= r.upper * (1 + 1e-12) and up >= r.lower * (1 - 1e-12), (s, n, eps, leg, e, lo, up, r.lower, r.upper)
    assert math.isfinite(got[0][3])
