"""docs/composition.md §2.30.7: ``spacing_of`` tests its first PROBE_ATOMS atoms first (a bit-identical saving in a
profile's per-value work). The answer is compared with a brute-force reference of the definition (Python floats, atom
by atom), and whole profiles and block laws with the probe off (PROBE_ATOMS beyond any law's size) by float.hex."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _rev44_spy import spy
from hypothesis import given, settings
from hypothesis import strategies as st
from sharpdp.shuffle import PrivUnit, RandomizedResponse, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import blocks, spacing
from sharpdp.shuffle.laws import laws_for


def _reference(values, probs):
    """The definition (docs/accountant_tail.md §46.2), atom by atom: s the largest atom of positive probability, > 0
    and finite, every such atom within SPACING_REL s at or below the multiple of s at or above it; else None."""
    v = [float(x) for x, p in zip(values, probs) if p > 0]
    if len(v) < 2:
        return None
    s = max(v)
    if not (s > 0 and math.isfinite(s)):
        return None
    for x in v:
        q = x / s
        if not math.isfinite(q):
            return None
        r = x - float(math.ceil(q)) * s
        if not (-spacing.SPACING_REL * s <= r <= 0.0):
            return None
    return s


def _same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and float(a).hex() == float(b).hex())


def test_three_atom_laws_and_block_laws_match_reference():
    """10-RR's user laws (spaced: the probe passes, the whole test runs) and their block laws (not spaced: the probe
    fails at once) at a few eps: the same answer as the reference; and a block law's answer is None (the probe's
    case), the user law's a float (so neither branch is idle)."""
    rnd = RandomizedResponse(10, 4.0)
    seen = set()
    for eps in (0.0, 0.01, 0.05, 0.2):
        for gamma, law in laws_for(rnd, eps, "replace"):
            v, p = law.atoms()
            got = spacing.spacing_of(np.asarray(v, float), np.asarray(p, float))
            assert _same(got, _reference(v, p))
            seen.add(got is None)
            blk = blocks.block(float(gamma), law, 10**5)
            assert blk is not None and blk.law.values.size > spacing.PROBE_ATOMS
            bv, bp = blk.law.values, blk.law.probs
            got_b = spacing.spacing_of(bv, bp)
            assert _same(got_b, _reference(bv, bp))
            seen.add(got_b is None)
    assert seen == {True, False}


_CASES: set = set()  # (answer None, probe read): filled by the property test, checked by the next test
_atoms = st.floats(min_value=-50.0, max_value=50.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(s=st.floats(min_value=1e-3, max_value=1e3), ks=st.lists(st.integers(-3, 1), min_size=2, max_size=40),
       offs=st.lists(st.floats(min_value=0.0, max_value=0.0105), min_size=40, max_size=40),
       noise=st.lists(_atoms, max_size=3), where=st.lists(st.integers(0, 45), max_size=3),
       fracs=st.lists(st.floats(min_value=0.9, max_value=1.0), max_size=3),
       zeros=st.lists(st.booleans(), min_size=48, max_size=48))
def test_property_matches_reference(s, ks, offs, noise, where, fracs, zeros):
    """Atoms k s - o s (k <= 1, o in [0, 0.0105]: near the test's edge SPACING_REL = 0.01), a few arbitrary atoms and a
    few atoms f s (f in [0.9, 1]: near the probe's edge PROBE_GAP = 0.98) put anywhere (before, inside or after the
    probed prefix), some probabilities 0: ``spacing_of`` equals the reference, and equals itself with the probe off."""
    v = [k * s - o * s for k, o in zip(ks, offs)]
    for x, i in zip(noise + [f * s for f in fracs], where + where):
        v.insert(min(i, len(v)), x)
    v = np.asarray(v, dtype=float)
    p = np.asarray([0.0 if z else 1.0 for z in zeros[:v.size]], dtype=float)
    with np.errstate(over="ignore"):  # (a subnormal largest atom: v / s overflows, main's test as well)
        got = spacing.spacing_of(v, p)
        assert _same(got, _reference(v, p))
        _CASES.add((got is None, v.size > spacing.PROBE_ATOMS))
        old = spacing.PROBE_ATOMS
        try:
            spacing.PROBE_ATOMS = 10**9
            assert _same(got, spacing.spacing_of(v, p))
        finally:
            spacing.PROBE_ATOMS = old


def test_property_saw_every_case():
    """The property test above generated spaced and unspaced atom sets, with and without the probe."""
    assert _CASES >= {(True, True), (False, True), (True, False), (False, False)}


@pytest.mark.parametrize("rnd,n,top", [(RandomizedResponse(10, 4.0), 10**5, 0.2),
                                       (PrivUnit(0.75, 0.2, 10), 10**5, 0.06)])
def test_profile_same_floats_with_probe_off(monkeypatch, rnd, n, top):
    """A 30-point replace-one privacy profile on a round whose block laws the probe decides (counted: the comparison
    is not idle): the same doubles (float.hex) with the probe on and off."""
    eps = np.linspace(0.0, top, 30)
    calls = spy(monkeypatch, "_probe_unspaced", spacing)
    clear_caches()
    on = np.asarray(ShuffleAccountant(rnd, n, "replace").privacy_profile(eps), dtype=float)
    assert sum(out for _, out in calls) >= 10
    clear_caches()
    monkeypatch.setattr(spacing, "PROBE_ATOMS", 10**9)
    off = np.asarray(ShuffleAccountant(rnd, n, "replace").privacy_profile(eps), dtype=float)
    clear_caches()
    assert [x.hex() for x in on] == [x.hex() for x in off]
    assert np.all(np.isfinite(on)) and on[0] > on[-1] > 0.0
