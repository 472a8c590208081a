"""Review rev39 (session 39) of eps39's pairs' form (§8.17 of docs/accountant.md, ``limits.FEW_PAIR_SPLIT``,
``closed_forms.pair_split_upper``): the few-user bracket's terms j >= 2 (k = j + 1 users) bounded above by
(floor(k / 2) E[(L_1 + L_2)_+] + (k mod 2) E[L_+]) / k (subadditivity of x -> x_+ over disjoint pairs), from the two-user
term's upper value, and the two-user quadrature's gate read through that form.

Attacked with a reference the rule does not use: D_up = sum_j P(Bin(n - 1, gamma) = j) E[(S_{j+1})_+] / (j + 1) of
finite laws by exact convolution of the law's atoms in mpmath (50 digits, ``mp.workdps``), every term summed (n <= 40):
laws chosen so that the pairs' form binds (one rare large positive atom: E[(L_1 + L_2)_+] well below 2 E[L_+]; three
atoms with a positive middle one; a law with E[L] > 0). Checked: the form itself is at or above every exact term
(j = 2 .. n - 1, given the exact two-user and one-user values); ``small_n_bracket`` (no rel_tol, and rel_tol 1e-2, 1e-3,
the quadrature's gate both ways) holds the exact D_up; with the switch off the bracket is main's and also holds it.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from _main_floats34 import switch
from sharpdp.shuffle.accountant import closed_forms as cf
from sharpdp.shuffle.laws.finite import FiniteLaw

if not hasattr(cf, "pair_split_upper"):  # (eps39's rule: the file reviews its branch)
    pytest.skip("no pairs' form (§8.17 of docs/accountant.md) in this tree", allow_module_level=True)

LAWS = {"jump": ([-1.0, 40.0], [0.99, 0.01]),
        "jump3": ([-2.0, 0.5, 30.0], [0.7, 0.29, 0.01]),
        "steep": ([-8.0, 1024.0], [1 - 2 ** -10, 2 ** -10]),
        "posmean": ([-1.0, 3.0], [0.6, 0.4]),
        "spread": ([-3.0, -0.25, 1.5, 6.0], [0.4, 0.3, 0.25, 0.05])}


def _exact_terms(vals, probs, kmax):
    """[E[(S_k)_+] / k for k = 1 .. kmax] by exact convolution (mpmath, 50 digits)."""
    with mp.workdps(50):
        law = {mp.mpf(v): mp.mpf(p) for v, p in zip(vals, probs)}
        dist = {mp.mpf(0): mp.mpf(1)}
        out = []
        for k in range(1, kmax + 1):
            new: dict = {}
            for s, p in dist.items():
                for v, q in law.items():
                    new[s + v] = new.get(s + v, 0) + p * q
            dist = new
            out.append(sum(p * s for s, p in dist.items() if s > 0) / k)
        return out


def _exact_dup(vals, probs, gamma, n):
    t = _exact_terms(vals, probs, n)
    with mp.workdps(50):
        g = mp.mpf(gamma)
        return sum(mp.binomial(n - 1, j) * g ** j * (1 - g) ** (n - 1 - j) * t[j] for j in range(n))


@pytest.mark.parametrize("name", sorted(LAWS))
def test_pair_form_above_every_exact_term(name):
    vals, probs = LAWS[name]
    t = _exact_terms(vals, probs, 30)
    j = np.arange(2, 30)
    up = cf.pair_split_upper(j, float(t[1]), float(t[0]))
    with mp.workdps(50):
        for jj, u in zip(j, up):
            assert mp.mpf(float(u)) >= t[jj] * (1 - mp.mpf("1e-14")), (name, jj, u, t[jj])


CELLS = [(name, gamma, n) for name in sorted(LAWS) for gamma, n in ((0.05, 5), (0.3, 5), (0.3, 12), (0.9, 8),
                                                                  (1.0, 6), (0.5, 40))]


@pytest.mark.parametrize("name, gamma, n", CELLS)
def test_bracket_holds_exact_dup(name, gamma, n, monkeypatch):
    vals, probs = LAWS[name]
    law = FiniteLaw(np.array(vals), np.array(probs))
    ref = _exact_dup(vals, probs, gamma, n)
    got = []
    for rt in (None, 1e-2, 1e-3):
        br = cf.small_n_bracket(law, gamma, n, rt)
        if br is None:
            continue
        got.append(br)
        with mp.workdps(50):
            assert mp.mpf(float(br[0])) <= ref * (1 + mp.mpf("1e-13")), (name, gamma, n, rt, br, ref)
            assert mp.mpf(float(br[1])) >= ref * (1 - mp.mpf("1e-13")), (name, gamma, n, rt, br, ref)
    assert got
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)
    br0 = cf.small_n_bracket(law, gamma, n)
    with mp.workdps(50):
        assert mp.mpf(float(br0[0])) <= ref * (1 + mp.mpf("1e-13")) <= mp.mpf(float(br0[1])) * (1 + mp.mpf("2e-13"))
    assert got[0][1] <= br0[1] * (1 + 1e-15)  # (the form only lowers upper values)
