"""The closed form's curvature term by blocks of consecutive numbers of active users (docs/accountant_tail.md §35.1)
and §18 (c)'s terms kept on the law (§35.2): the blocked lower values against an exact convolution (valid), against
the per-m term (never above it, within 1e-6 of it at n = 1e8), the same floats where the m fit one a block, and the
kept terms' floats equal to a fresh law's."""

from __future__ import annotations

import numpy as np

from sharpdp.shuffle.accountant import concentrated, far_tail
from sharpdp.shuffle.laws.bmg import bmg_laws

from test_pair21_curvature import _exact_phi


def _pieces(law, T0, m):
    mu_lo, mu_hi, sig2, b = concentrated._moments(law, T0)
    mh = concentrated._up(m * mu_hi)
    Q = concentrated._up(m * sig2 + (m * (mu_hi - mu_lo)) ** 2)
    return mu_lo, mu_hi, mh, Q, b


def test_blocked_lower_values_below_an_exact_convolution(monkeypatch):
    # BMG(0.3, 0.7), eps 1.5, T0 = 40 (tests/test_pair21_curvature.py): m = 150 ... 159 in blocks of 5
    _, law = bmg_laws(0.3, 0.7, 1.5, "zero_out")[0]
    T0, m = 40.0, np.arange(150.0, 160.0)
    mu_lo, mu_hi, mh, Q, b = _pieces(law, T0, m)
    per_m = concentrated._lower_m(law, T0, m, mu_lo, mu_hi, mh, Q, b)
    monkeypatch.setattr(concentrated, "_CURV_M", 2)
    blocked = concentrated._lower_m(law, T0, m, mu_lo, mu_hi, mh, Q, b)
    monkeypatch.setattr(concentrated, "_curvature_lo", lambda law, T0, m, *a: np.zeros(m.shape))
    jensen = concentrated._lower_m(law, T0, m, mu_lo, mu_hi, mh, Q, b)
    assert np.all(blocked <= per_m) and np.all(blocked > jensen)  # below the per-m term, still above Jensen's
    assert np.any(blocked < per_m)  # (the blocks are used: the first and last m of a block differ)
    for i in (0, 4, 9):  # a block's first and last member, and the last block's last
        exact = _exact_phi(law, T0, int(m[i]), 1.6e-2)
        assert blocked[i] <= exact * (1 - 1e-4)  # valid, with room for the reference's error (2e-5 at this cell)
        assert exact - blocked[i] <= 0.85 * (exact - jensen[i])  # and most of the curvature term kept


def test_blocks_at_n_1e8_within_1e6_of_the_per_m_term(monkeypatch):
    # the law of the regime map's GaussianRandomizer(1, 1), n = 1e8, eps = 0.1 at the closed form's clamp (~89 000 m)
    gamma, law = bmg_laws(0.0, 1.0, 0.1, "zero_out")[0]
    gamma, n = float(gamma), 10**8
    concentrated._MEMO.clear()
    cb = concentrated.certify(law, gamma, n, 1e-2, far_tail.choose_T0)
    concentrated._MEMO.clear()
    assert cb is not None
    m, _, p_lo, _ = concentrated._m_range(n - 1, gamma)
    sel = p_lo >= 1e-20 * float(np.max(p_lo))
    m = m[sel]
    assert m.size > 10 * concentrated._CURV_M
    mu_lo, mu_hi, mh, Q, _ = _pieces(law, cb.T0, m)
    nu = concentrated._dn(m * mu_lo)
    blocked = concentrated._curvature_lo(law, cb.T0, m, nu, mh, Q, mu_hi)
    monkeypatch.setattr(concentrated, "_CURV_M", 10**9)  # one m a block: the term of §19 as before
    per_m = concentrated._curvature_lo(law, cb.T0, m, nu, mh, Q, mu_hi)
    assert np.all(per_m > 0) and np.all(blocked <= per_m) and np.all(blocked >= per_m * (1 - 1e-5))
    w = p_lo[sel]
    assert 0 < float(np.sum(w * (per_m - blocked))) <= 1e-5 * float(np.sum(w * per_m))
    # (the term is 3.5e-4 of the lower value there: the value moves by about 1e-9 relative)


def test_one_m_a_block_gives_the_same_floats(monkeypatch):
    _, law = bmg_laws(0.3, 0.7, 1.5, "zero_out")[0]
    T0, m = 40.0, np.arange(150.0, 160.0)
    mu_lo, mu_hi, mh, Q, _ = _pieces(law, T0, m)
    nu = concentrated._dn(m * mu_lo)
    first = concentrated._curvature_lo(law, T0, m, nu, mh, Q, mu_hi)
    monkeypatch.setattr(concentrated, "_CURV_M", m.size)  # (k = 1)
    assert np.array_equal(first, concentrated._curvature_lo(law, T0, m, nu, mh, Q, mu_hi))


def test_kept_terms_give_a_fresh_laws_floats():
    gamma, law = bmg_laws(0.0, 1.0, 0.5, "zero_out")[0]
    gamma, n, T0 = float(gamma), 10**6, 33643.59799740355  # (the closed form's clamp there: the term adds 6e-4)
    for tilted in (False, True):
        a = concentrated._jump_lower(law, gamma, n, T0, curvature=False, tilted=tilted)
        b = concentrated._jump_lower(law, gamma, n, T0, curvature=True, tilted=tilted)  # (reads the kept terms)
        assert (gamma, n, T0, tilted) in law._conc_lower_memo
        _, fresh = bmg_laws(0.0, 1.0, 0.5, "zero_out")[0]
        assert b == concentrated._jump_lower(fresh, gamma, n, T0, curvature=True, tilted=tilted)
        assert a == concentrated._jump_lower(fresh, gamma, n, T0, curvature=False, tilted=tilted)
        assert 0 < a < b if not tilted else 0 < a <= b  # (with §21: the larger of the two terms)
