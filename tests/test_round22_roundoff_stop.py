"""The plain refinement stops once a pass's FFT round-off alone exceeds the rel_tol budget
(docs/accountant.md §6.3, ``refine`` in shuffle/accountant/plain.py).

Cell: GaussianRandomizer(4.6), n = 10, replace-one through bot, leg x-vs-bot at eps = 2.6. Its value
~2.4e-18 carries round-off terms ~5e-20 each (upper and lower): rel_tol 0.01 cannot be met, and the
refinement used to enlarge the lattice to the size caps (over 10^6 FFT points, seconds) for worse values.
The bracket must still contain the value of independent references: the same leg at rel_tol 0.1 and 0.3
(other grids and clamps, each certified): the certified brackets must intersect (both contain the true value).
The values before the stop (same grids up to the round-off pass) are kept as constants: the stop may only
skip passes whose values were worse.
"""

from __future__ import annotations

import pytest

import sharpdp.shuffle.accountant.plain as plain
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from _main_floats34 import switch

# the leg's certified bracket at rel_tol 0.01 measured with the refinement run to the size caps
# (before the round-off stop): the stop skips only passes whose values were worse
# (**) re-measured after the compiled cells' exact empty intervals (docs/accountant_tail.md §29), the refinement again
# run to the caps (the round-off stop switched off in plain.refine): was (2.3724893809106003e-18,
# 2.4482941418373492e-18); the caps' last pass moved its clamp T and step h, so the new bracket is not nested in the old
_BEFORE = (2.3945497470666383e-18, 2.448294266713606e-18)


def _leg(rel_tol: float, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[float, float, list[int]]:
    sizes: list[int] = []
    if monkeypatch is not None:
        orig = plain.lattice_pass

        def counted(*args, **kw):  # type: ignore[no-untyped-def]
            out = orig(*args, **kw)
            grid = getattr(out, "grid", None)
            sizes.append(grid.N if grid is not None else -1)
            return out

        monkeypatch.setattr(plain, "lattice_pass", counted)
    acc = ShuffleAccountant(GaussianRandomizer(4.6, 1), 10, adjacency="replace")
    rep = acc._bottom.leg(0, 2.6, rel_tol)
    return rep.lower, rep.upper, sizes


def test_roundoff_stop_keeps_small_lattices_and_contains_references(monkeypatch: pytest.MonkeyPatch) -> None:
    switch(monkeypatch, "LEAD47_NORM_Q_UP", False)  # (**) session 47, lead: docs/accountant_tail.md §74
    # (**) session 35, mid35: main's steps on the Gaussian randomizer's sum law (the pin _BEFORE is their bracket;
    # docs/accountant_tail.md §46.2's end-atom steps end on another certified bracket)
    switch(monkeypatch, "END_ATOM_SNAP", False)
    lo, up, sizes = _leg(0.01, monkeypatch)
    # few, small passes (before: 12 passes up to N = 1.2e6; the count is deterministic, not a timing)
    assert 0 < len(sizes) <= 8
    assert max(sizes) <= 1 << 14
    # the bracket of before, not worse (every returned value one pass's certified value)
    assert lo >= _BEFORE[0] and up <= _BEFORE[1]
    # wider than rel_tol (round-off bound, allowed as for the size caps) but useful
    assert 0.0 < lo < up <= 1.05 * lo
    monkeypatch.undo()
    for ref_tol in (0.1, 0.3):
        rlo, rup, _ = _leg(ref_tol)
        assert 0.0 < rlo < rup
        assert lo <= rup and rlo <= up  # certified brackets of one value intersect
        assert abs(rup / up - 1.0) < 0.02  # same value to the brackets' accuracy


def test_roundoff_stop_full_cell_value() -> None:
    # the cell of the bench, get_delta_bounds(4.0), against the rel_tol 0.1 evaluation (its own accountant)
    lo, up = ShuffleAccountant(GaussianRandomizer(4.6, 1), 10, adjacency="replace").get_delta_bounds(4.0)
    rlo, rup = ShuffleAccountant(GaussianRandomizer(4.6, 1), 10, adjacency="replace", rel_tol=0.1).get_delta_bounds(4.0)
    assert 0.0 < lo <= up and 0.0 < rlo <= rup
    assert lo <= rup and rlo <= up
    assert up - lo <= 0.01 * lo  # the reported delta still meets rel_tol here
    assert 1.4e-26 < lo and up < 1.6e-26
