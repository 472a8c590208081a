"""The merged closed form (docs/accountant_tail.md §18-§22 on the law of §23) on the Gaussian randomizer's x vs bot law
at the lower boundary of its acceptance (eps on a step of 0.05), where §22's stages (the chord slopes and the
numerical mgf's tail bounds, carried over by §23 (S1)-(S2)) decide the bracket, against the FFT treatment
(``concentrated.certify`` switched off: docs/accountant_tail.md §2-§8, an independent pipeline) at rel_tol 1e-4.

Measured (closed form's bracket, curvature lower value included; FFT treatment's): sigma0 = 0.5, n = 1e3, eps = 6.9:
[4.84057e-2, 4.84610e-2] vs [4.840797e-2, 4.840868e-2]; sigma0 = 1, n = 1e5, eps = 0.5: [8.21217e-7, 8.22194e-7] vs
[8.214424e-7, 8.216277e-7]. At n = 1e6 (sigma0 = 0.5, 1) the FFT treatment stops at its size caps above rel_tol 1e-4
(its bracket 0.6-1.4 % wide, the closed form's inside it). sigma0 = 2 at n = 1e5, 1e6: the boundary values (eps 0.5,
0.2) are below 1e-26, where the FFT treatment answers [0, its floor]: no reference at this tolerance, not tested here.
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer
from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.laws import laws_for

# (sigma0, n, eps): the smallest accepted eps on a step of 0.05 (eps - 0.05 refused); each is decided by §22's
# sharp upper value (stage 2 of concentrated._certify), sigma0 = 1, n = 1e3 by its stage 3 (docs/accountant_tail.md
# §38.3)
CELLS = [(0.5, 10**3, 6.65), (1.0, 10**3, 2.2), (2.0, 10**3, 1.7), (1.0, 10**5, 0.5),  # (**) session 31, conc31: 2.25 -> 2.2, the closed form's stage 3 accepts it (§38.3)
         # (**) session 32, conc32: sigma0 = 0.5, n = 1e3: 6.9 -> 6.8, stage 4 accepts 6.85 and 6.8 (accountant_tail.md §40.3)
         # (**) session 34, body34: sigma0 = 0.5, n = 1e3: 6.8 -> 6.65, stage 6 accepts 6.75, 6.7, 6.65 (accountant_tail.md
         # §43.2; each bracket inside the FFT treatment's at rel_tol 1e-2 and around its bracket at rel_tol 1e-4)
         pytest.param(0.5, 10**5, 4.55, marks=pytest.mark.slow), pytest.param(0.5, 10**6, 3.5, marks=pytest.mark.slow),
         (1.0, 10**6, 0.25)]


def _run_law(sigma0: float, eps: float):
    g, law = laws_for(GaussianRandomizer(sigma0, 1), eps, "zero_out")[0]
    return float(g), law.shifted(up=True)


@pytest.mark.parametrize("sigma0,n,eps", CELLS)
def test_boundary_cell_meets_the_fft_treatments_bracket(sigma0, n, eps, monkeypatch):
    g, run = _run_law(sigma0, eps)
    assert run.heavy_form() is not None and run.one_term() is None  # (the atom plus truncated part of §23)
    sharp = []
    orig = concentrated._jump_upper

    def spy(*a, **k):
        sharp.append(bool(k.get("sharp")))
        return orig(*a, **k)

    monkeypatch.setattr(concentrated, "_jump_upper", spy)
    concentrated._MEMO.clear()
    cb = concentrated.certify(run, g, n, 1e-2, far_tail.choose_T0)
    assert cb is not None and any(sharp)  # accepted, §22's sharp upper value computed
    cc = concentrated.with_curvature(cb, run, g, n)
    monkeypatch.setattr(concentrated, "certify", lambda *a, **k: None)  # the FFT treatment alone
    fft = far_tail.certify_bigjump(run, g, n, 1e-4)
    assert fft.N > 0 and 0 < fft.lower <= fft.upper
    assert cb.lower <= cc.lower <= fft.upper
    assert cb.upper >= fft.lower
    if fft.upper - fft.lower <= 2e-4 * fft.lower:  # (the FFT treatment reached its tolerance)
        assert cb.upper - cb.lower <= 0.12 * 1e-2 * cb.lower  # (the tilted stages' acceptance: a tight bracket)


@pytest.mark.parametrize("sigma0,n,eps", [(0.5, 10**3, 6.6), (1.0, 10**3, 2.15), (2.0, 10**3, 1.65),  # (**) session 31,
                                         (1.0, 10**5, 0.45)])  # conc31: 2.2 -> 2.15 (2.2 accepted by §38.3's stage)
# (**) session 32, conc32: sigma0 = 0.5, n = 1e3: 6.85 -> 6.75 (6.85, 6.8 accepted by §40.3's stage)
# (**) session 34, body34: sigma0 = 0.5, n = 1e3: 6.75 -> 6.6 (6.75, 6.7, 6.65 accepted by §43.2's stage 6)
def test_just_below_the_boundary_is_refused(sigma0, n, eps):
    """The cells above are the boundary: one step of 0.05 lower the closed form refuses (the FFT treatment answers)."""
    g, run = _run_law(sigma0, eps)
    concentrated._MEMO.clear()
    assert concentrated.certify(run, g, n, 1e-2, far_tail.choose_T0) is None
