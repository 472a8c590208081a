"""Session 40, body40 (docs/accountant_tail.md §56): §52.2's upper-only run of a law bounded above is redone with its
lower clamp B x 4 where its upper value is at or above the maximum so far by less than its pass's clamp charge
(TOP_CLAMP_REDO, far_tail_top.clamp_redo). References: an independent numpy-FFT lower reference of the bot-vs-x law's
D_up (tests/_body40_botx_fft.py: no law object, lattice or certified FFT of the accountant), the same law's certified
lower value from the run of before (the switch off), and main's reported floats (the switch off), bit for bit."""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest

from _body40_botx_fft import d_up_lower
from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail, limits
from sharpdp.shuffle.accountant.far_tail_top import clamp_redo
from sharpdp.shuffle.laws import laws_for


class _Pass:
    def __init__(self, tail_B: float):
        self.tail_B = tail_B


def _spy_passes(monkeypatch) -> list:
    """The passes that follow of far_tail.lattice_pass: (h, B, lower asked, upper, tail_B)."""
    seen: list = []
    orig = far_tail.lattice_pass

    def spy(law, gamma, n, h, T, B, *a, **k):
        r = orig(law, gamma, n, h, T, B, *a, **k)
        lower = a[2] if len(a) > 2 else k.get("lower", True)
        if hasattr(r, "tail_B"):
            seen.append((h, B, lower, r.upper, r.tail_B))
        return r
    monkeypatch.setattr(far_tail, "lattice_pass", spy)
    return seen


def test_clamp_redo_reads_the_clamp_charge(monkeypatch):
    """The redo's test: at or above the maximum by less than tail_B, a pass run, the wider clamp fitting; off: never."""
    p = _Pass(1e-4)
    assert clamp_redo(p, 3.0e-4, 2.5e-4, True)
    assert not clamp_redo(p, 3.6e-4, 2.5e-4, True)  # (the clamp's whole charge would not bring it below)
    assert not clamp_redo(p, 2.4e-4, 2.5e-4, True)  # (already below: returned)
    assert not clamp_redo(p, 3.0e-4, 2.5e-4, False)  # (4B does not fit the caps)
    assert not clamp_redo(None, 3.0e-4, 2.5e-4, True)  # (the Chernoff value: no pass)
    assert not clamp_redo(p, 3.0e-4, 0.0, True)  # (no maximum so far)
    switch(monkeypatch, "TOP_CLAMP_REDO", False)
    assert not clamp_redo(p, 3.0e-4, 2.5e-4, True)


def test_redo_rounds_hold_the_fft_reference(monkeypatch):
    """GaussianRandomizer(1), zero-out, ε = 0.001, n = 1e5, the ⊥ vs x law asked below a maximum just under its 4H
    upper value: the upper-only run redoes its round at B x 4 (twice); every round's upper value is at or above the independent
    FFT lower reference (and within rel_tol of it); both miss the maximum, so the run of before follows and the law's
    bracket is the switch-off one, bit for bit."""
    switch(monkeypatch, "TOP_COARSE_N", 2)  # (the rule at n = 1e5; by default §52.2 runs from n = 1e7)
    gamma, law = laws_for(GaussianRandomizer(1.0, 1), 0.001, "zero_out")[1]
    gamma, n = float(gamma), 10**5
    _, _, ref = d_up_lower(1.0, 0.001, n, gamma, 0.5, 2.5e4, -1.0e5, 2**18)  # (h^2 extrapolation from h = 0.5, 1)
    seen = _spy_passes(monkeypatch)
    clear_caches()
    r = far_tail.try_certify(law, gamma, n, 1e-2, 1, negligible=0.00819)
    top = [s for s in seen if s[2] is False]
    assert len(top) >= 2 and top[0][4] > top[0][3] - 0.00819 > 0.0, top  # (n = 1e5: 2069 -> 8276 -> 33104)
    assert all(b[1] >= 4.0 * a[1] and a[4] > a[3] - 0.00819 for a, b in zip(top, top[1:])), top
    for s in top:
        assert ref * (1 - 1e-9) <= s[3] <= 1.01 * ref, (s, ref)
    assert r is not None and r.lower * (1 - 1e-9) <= ref <= r.upper * (1 + 1e-9), (r, ref)
    switch(monkeypatch, "TOP_CLAMP_REDO", False)
    clear_caches()
    assert far_tail.try_certify(law, gamma, n, 1e-2, 1, negligible=0.00819) == r


# main c6d2e6a1 at rel_tol 1e-2 (/work/venv/main, session 40)
MAIN_CELLS = {("gauss", 10**8, 0.001): (2.7656066832250086e-05, 2.7715615092156938e-05),
              ("bmg", 10**8, 0.001): (9.660772946816235e-07, 9.707977255758075e-07)}


def _randomizer(kind: str):
    return GaussianRandomizer(1.0, 1) if kind == "gauss" else BlanketMixedGaussian(0.171, 0.781, 1)


@pytest.mark.slow
@pytest.mark.parametrize("cell", sorted(MAIN_CELLS), ids=str)
def test_cells_keep_mains_floats_and_the_law_below(cell, monkeypatch):
    """GaussianRandomizer(1) and the BMG (0.171, 0.781), n = 1e8, ε = 0.001: the ⊥ vs x law's upper-only run ends
    below the maximum after a redo at B x 4 (no pass with the centroid law for it), its upper value at or above that
    law's certified lower value from the run of before (the switch off), and the reported bracket is main's."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    kind, n, eps = cell
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4 lowers these lower values
    seen = _spy_passes(monkeypatch)
    clear_caches()
    on = ShuffleAccountant(_randomizer(kind), n).get_delta_bounds(eps)
    assert on == MAIN_CELLS[cell]
    top = [s for s in seen if s[2] is False]
    assert len(top) >= 2 and top[-1][1] >= 4.0 * top[0][1] and top[-1][3] < on[1] <= top[0][3], top
    gamma, law = laws_for(_randomizer(kind), eps, "zero_out")[1]
    switch(monkeypatch, "TOP_CLAMP_REDO", False)
    clear_caches()
    off = far_tail.try_certify(law, float(gamma), n, 1e-2, 1, negligible=on[1])
    assert off is not None and 0.0 <= off.lower <= top[-1][3] < on[1], (off, top)
    assert limits.TOP_CLAMP_REDO is False
    clear_caches()
    assert ShuffleAccountant(_randomizer(kind), n).get_delta_bounds(eps) == on
