"""Session 42 (g05): the narrowest lognormal cells by the 2-point Gauss-Legendre rule (docs/accountant_tail.md §62.2,
switch limits.CELLS_TWO_NODE, OFF by default, cpp/kernels/lognormal_cells.hpp kNarrow2). The rule's error is not proven
within kGlRel (§62.2); these checks are empirical: the cells' total bounds against 80-digit values.

Checked: every cell's mass and hat weight with their bounds enclose the 80-digit mpmath values (the closed forms of
tests/test_lognormal_cells_native.py) on grids whose cells are mostly below kNarrow2; the 2-point rule ran there
(other floats than the 8-point rule's) and its intervals meet the 8-point rule's; the switch off is the 8-point
kernel bit for bit; the law's kept cells follow the switch.
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp import _core
from sharpdp.shuffle.accountant import limits
from sharpdp.shuffle.laws import LognormalLaw
from test_lognormal_cells_native import _L, _check_encloses, laws, oriented

ACC = _core.accountant


def _kernel(law, x0, h, K, two):
    G, S, vlo, vhi = oriented(law)
    return ACC.lognormal_cells(law.a, G, S, law.r, vlo, vhi, law.weight, x0, h, K, two)


def _grid_at(law, v0: float, dv: float, K: int):
    """(x0, h, K) of K cells from L(v0) of step L(v0 + dv) - L(v0), or None outside the kernel's range."""
    try:
        x0, h = _L(law, v0), _L(law, v0 + dv) - _L(law, v0)
    except OverflowError:
        return None
    ok = math.isfinite(x0) and 1e-150 < h < math.inf and math.isfinite(x0 + h * K)
    return (x0, h, K) if ok else None


@st.composite
def narrow_grids(draw, law):
    """A grid anchored at L(v0) whose cells span dv in V with dv (|v0| + r + 2) below 1/500 (the 2-point rule's
    range, kNarrow2), K in [4, 40]."""
    v0 = draw(st.floats(-12.0, 12.0))
    dv = draw(st.floats(1e-3, 0.9)) / (500.0 * (abs(v0) + law.r + 2.0)) / 40.0
    grid = _grid_at(law, v0, dv, draw(st.integers(4, 40)))
    assume(grid is not None)
    return grid


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_two_point_cells_enclose_the_exact_cells(data):
    """With the 2-point rule on: masses and hat weights with their bounds enclose the 80-digit values, and each
    interval meets the 8-point rule's (both contain the exact value)."""
    law = data.draw(laws())
    assume(law.r <= 10.0)
    x0, h, K = data.draw(narrow_grids(law))
    old = limits.CELLS_TWO_NODE
    limits.CELLS_TWO_NODE = True  # (hypothesis: no function-scoped monkeypatch; restored below)
    try:
        law._cells_memo = None
        m, w, em, ew = _check_encloses(law, x0, h, K)
    finally:
        limits.CELLS_TWO_NODE = old
    m8, w8, em8, ew8 = _kernel(law, x0, h, K, False)
    assert np.all(np.abs(m - m8) <= em + em8)
    assert np.all(np.abs(w - w8) <= ew + ew8)


def test_two_point_rule_runs_and_is_exact_to_its_bound():
    """A one-term and a two-term law on fine grids: the 2-point rule gives other floats in most cells (it ran), its
    masses agree with the 8-point rule's to 1e-14 relative, and the mpmath values lie within its bounds."""
    for law in (LognormalLaw(-1.1, 0.05, 4.0, z_lo=2.0, weight=22.0),
                LognormalLaw(0.3, 0.7, 1.0, weight=1.0, b_minus=-0.4)):
        G, S, _, _ = oriented(law)
        x0 = _L(law, 2.5)
        h = (_L(law, 2.5 + 1e-5) - x0)
        K = 30
        m, w, em, ew = _kernel(law, x0, h, K, True)
        m8, w8, _, _ = _kernel(law, x0, h, K, False)
        assert np.count_nonzero(m != m8) + np.count_nonzero(w != w8) >= K // 3
        assert np.all(np.abs(m - m8) <= 1e-14 * m8)
        law._cells_memo = None
        _check_encloses(law, x0, h, K)


def test_switch_off_is_the_eight_point_kernel(monkeypatch):
    """CELLS_TWO_NODE = False: LognormalLaw.cells is the 8-point kernel's (10-argument call) bit for bit, and the law's
    kept cells follow the switch (no stale copy)."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    law = LognormalLaw(-1.1, 0.05, 4.0, z_lo=2.0, weight=22.0)
    G, S, vlo, vhi = oriented(law)
    x0, h, K = -3.0, 1e-3, 20000
    old = ACC.lognormal_cells(law.a, G, S, law.r, vlo, vhi, law.weight, x0, h, K)
    new = _kernel(law, x0, h, K, True)
    assert any(not np.array_equal(a, b) for a, b in zip(old, new))
    switch(monkeypatch, "CELLS_TWO_NODE", True)
    got = law.cells(x0, h, K)
    assert all(np.array_equal(a, b) for a, b in zip(got, new))
    switch(monkeypatch, "CELLS_TWO_NODE", False)
    got = law.cells(x0, h, K)
    assert all(np.array_equal(a, b) for a, b in zip(got, old))


def test_switch_default_off():
    """Off by default: the 2-point rule's error is not proven within kGlRel (docs/accountant_tail.md §62.2)."""
    assert limits.CELLS_TWO_NODE is False
    from sharpdp.shuffle.laws import lognormal

    assert lognormal._two_node_default() is False
