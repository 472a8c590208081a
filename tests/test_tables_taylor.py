"""The Taylor evaluation of the rounded-Gaussian table entries (sharpdp._tables._erf_entries_range).

Reference: the direct evaluation, one mpmath erf at 190 bits per entry (``_erf_entries``), integer
for integer. The fast path must return exactly the same entries, including the last partial block
and the entries it recomputes directly near a rounding boundary.
"""

from __future__ import annotations

import pytest

from sharpdp import _tables


def _both(s: float) -> tuple[list[int], list[int]]:
    J = _tables._search_J(s)
    sc = _tables._scale(_tables._context(), s)
    return _tables._erf_entries_range(J, sc), _tables._erf_entries(range(J), sc)


# J = 521, 1266, 3332: several blocks, a partial last one; the last scale is the float just above 256
@pytest.mark.parametrize("s", [40.0, 97.3, float.fromhex("0x1.0000000000001p+8")])
def test_taylor_entries_equal_the_direct_ones(s):
    fast, direct = _both(s)
    assert len(fast) == len(direct) > 4 * _tables._TAYLOR_BLOCK
    assert fast == direct


def test_entries_near_a_boundary_are_recomputed_directly(monkeypatch):
    """A guard of 1 bit sends every entry (each is within 1/2 of a half-integer) to the direct
    evaluation (the test below shows that the comparison can fail)."""
    s = 40.0
    calls = []
    orig = _tables._erf_entries
    monkeypatch.setattr(_tables, "_erf_entries", lambda idx, sc: calls.append(len(list(idx))) or orig(idx, sc))
    monkeypatch.setattr(_tables, "_TAYLOR_GUARD", 1)
    fast, direct = _both(s)
    assert fast == direct and sum(calls[:-1]) == len(direct)


def test_a_too_short_series_would_differ(monkeypatch):
    """The comparison above can fail: with the series cut far too early and no guard, the entries move."""
    monkeypatch.setattr(_tables, "_TAYLOR_SLACK", -40)
    monkeypatch.setattr(_tables, "_TAYLOR_GUARD", 200)
    fast, direct = _both(40.0)
    assert fast != direct
