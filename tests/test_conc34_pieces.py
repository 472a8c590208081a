"""Session 34 (body34): the closed form's stage 6, the upper value's part below the mean by chords of log p over
several pieces and the numerical mgf of -V (``concentrated_minus``, docs/accountant_tail.md §43.1), against
independent references: the chord slopes by mpmath, E e^{tY} and E[(Y - W)_+^3] (Y = mh - X_m) by an FFT convolution
whose cells sit at their upper ends (a lower value of both), E phi(X_m) by a converged convolution, and the stage's
bracket at GaussianRandomizer(1), n = 1e8, eps = 0.01 (forced past the pre-check) against main's FFT treatment's
bracket at rel_tol 1e-4."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from _main_floats34 import switch

from sharpdp.shuffle.accountant import concentrated as C
from sharpdp.shuffle.accountant import concentrated_minus as CM
from sharpdp.shuffle.accountant import concentrated_tilted as CT
from sharpdp.shuffle.accountant import far_tail as F
from sharpdp.shuffle.accountant import limits

from test_conc32_local import _case, _conv
from test_pair21_curvature import _exact_phi
from test_pair23_chords import _chord


def _minus_inputs(law, mu_lo, mu_hi, mm, mh):
    b_minus = float(C._up(mu_hi - law.heavy_form().a))
    d_mu = C._up(mh - C._dn(mm * mu_lo))
    return b_minus, d_mu


@pytest.mark.parametrize("T0", [40.0, 200.0])
def test_piece_rates_below_the_exact_chords(T0):
    mp.mp.dps = 40
    law, mu_lo, mu_hi, b, mm, mh, Q = _case(T0, 150)
    k, W = CM.piece_rates(law, T0, mh, Q)
    s = -float(mh[0])
    ends = [s] + [float(C._up(s + w)) for w in W[:, 0]]
    exact = [float(_chord(law, ends[j], ends[j + 1])) for j in range(len(ends) - 1)]
    assert all(0 <= k[j, 0] <= exact[j] for j in range(len(exact))), (k[:, 0], exact)
    assert k[0, 0] >= exact[0] * (1 - 1e-8)  # (the first piece: the chord itself, rounded down)
    assert np.all(np.diff(k[:, 0]) <= 0)  # (non-increasing: the decomposition of §43.1 needs it)


@pytest.mark.parametrize("T0", [40.0, 200.0])
def test_minus_mgf_and_cube_tails_above_a_convolution(T0):
    # cells at their upper ends move X_m up, so Y = mh - X_m down: the convolution's E e^{tY} and E[(Y - W)_+^3] are
    # lower values of the true ones; the bounds must lie above them, and within a few times
    law, mu_lo, mu_hi, b, mm, mh, Q = _case(T0, 150)
    b_minus, d_mu = _minus_inputs(law, mu_lo, mu_hi, mm, mh)
    x, pm = _conv(law, T0, 150, 0.01)
    y = float(mh[0]) - x
    sd = math.sqrt(float(Q[0]))
    ts = [1.0 / sd, 1.7 / sd, 2.5 / sd]
    got = CM.minus_mgf_up(law, T0, ts, mm, d_mu, Q, b_minus, mu_lo)[:, 0]
    for t, g in zip(ts, got):
        ref = float(np.dot(pm, np.exp(t * y)))
        assert ref <= g <= 1.1 * ref, (t, ref, g)  # (measured: 1.03-1.09)
    ws = np.array([[0.0], [0.5 * sd], [1.0 * sd], [2.0 * sd]])
    c3 = CM.cube_tail_up(law, T0, ws, mm, d_mu, Q, b_minus, mu_lo)[:, 0]
    for w, c, most in zip(ws[:, 0], c3, (2.0, 3.0, 7.0, math.inf)):
        ref = float(np.dot(pm, np.maximum(y - w, 0.0) ** 3))
        # (measured: 1.65, 2.5, 5.8 and 600 times: Chernoff's bound of a cube is 1.45 times a normal mean, and at
        # m = 150 the sum's left tail ends at m (mh / m - a), about 2.5 sd below the mean)
        assert 0 < ref <= c <= most * ref, (w, ref, c)


@pytest.mark.parametrize("m", [150, 300])
def test_pieces_upper_value_against_a_converged_convolution(m):
    # E phi(X_m) <= f(mh) + the curvature term with §43.1 + tau(T0) P(X > -T0), and that value at most §41.4's
    T0 = 40.0
    law, mu_lo, mu_hi, b, mm, mh, Q = _case(T0, m)
    rest = (law.stop_loss(-mh)[1]  # f(mh) and tau(T0) times Bennett's P(X_m > -T0)
            + law.tail_upper_bracket(T0)[1] * (1 + 1e-12)
            * np.exp(-C._bennett_exp(Q, b, np.maximum(C._dn(-T0 - mh), 1e-300))))

    def value(**kw):
        return float((rest + CT.tilted_curv(law, T0, mm, mh, Q, mu_lo, mu_hi, True, local=True, **kw))[0])

    exact = _exact_phi(law, T0, m, 4e-3)
    new, old = value(split=True, pieces=True), value(split=True)
    assert exact * (1 + 1e-5) <= new <= old, (exact, new, old)
    assert value(pieces=True) <= value()


def test_stage6_accepts_the_gaussian_cell_n1e8(monkeypatch):
    # GaussianRandomizer(1), n = 1e8, eps = 0.01 forced past the pre-check: stages 0-5 refuse (gap 0.178 rel_tol), stage 6
    # accepts within 0.12 rel_tol; the bracket contains main's FFT treatment's at rel_tol 1e-4 (closed form off), and
    # its upper value is below main's reported one at rel_tol 1e-2 (4.3140914909097695e-10)
    from sharpdp.shuffle import GaussianRandomizer
    from sharpdp.shuffle.laws import laws_for

    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37: pins the closed form's stages (§51.4 off)
    ref = (4.3085159626639675e-10, 4.3112379820517666e-10)  # (main 81992f2, rel_tol 1e-4, CLOSED_PRECHECK = 0)
    gamma, law = laws_for(GaussianRandomizer(1.0, 1), 0.01, "zero_out")[0]
    monkeypatch.setattr(limits, "CLOSED_PRECHECK", math.inf)
    got = {}
    for on in (True, False):
        monkeypatch.setattr(limits, "CLOSED_PIECES_STAGE", on)
        C._MEMO.clear()
        got[on] = C.certify(law, float(gamma), 10 ** 8, 1e-2, F.choose_T0)
    C._MEMO.clear()
    new, off = got[True], got[False]
    assert off is None and new is not None
    assert new.lower <= ref[0] and ref[1] <= new.upper
    assert new.upper - new.lower <= limits.CLOSED_ACCEPT_TILTED * 1e-2 * new.lower
    assert new.upper < 4.3140914909097695e-10
