"""The exact two-atom engine (docs/accountant_atoms.md §12): the kernel's bracket against independent
references (mpmath enumeration of every dataset term at n <= 60, scipy's binomial sums up to n = 1e6),
its argument errors, and the law interface it reads."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from _krr_reference import exact_two_atom
from hypothesis import given, settings
from hypothesis import strategies as st

from sharpdp import _core
from sharpdp.shuffle import RandomizedResponse
from sharpdp.shuffle.accountant import two_atom
from sharpdp.shuffle.laws import FiniteLaw, laws_for

KERNEL = _core.accountant.two_atom_bracket


def mp_enumeration(a1: float, a2: float, p2: float, gamma: float, n: int) -> mp.mpf:
    """E[(sum_i B_i L_i)_+] / (n gamma) by enumeration of the trinomial counts (c1 users at a1, c2 at a2,
    the rest inactive), every term at 60 digits from the exact doubles (P(L = a1) = 1 - p2 exactly)."""
    with mp.workdps(60):
        A1, A2, P2, G = mp.mpf(a1), mp.mpf(a2), mp.mpf(p2), mp.mpf(gamma)
        q1, q2, q0 = G * (1 - P2), G * P2, 1 - G
        tot = mp.mpf(0)
        for c1 in range(n + 1):
            for c2 in range(n - c1 + 1):
                s = c1 * A1 + c2 * A2
                if s > 0:
                    w = mp.factorial(n) / (mp.factorial(c1) * mp.factorial(c2) * mp.factorial(n - c1 - c2))
                    tot += w * q1**c1 * q2**c2 * q0 ** (n - c1 - c2) * s
        return tot / (n * G)


def rr_law(e0: float, eps: float, adj: str, i: int = 0) -> tuple[float, FiniteLaw]:
    g, law = laws_for(RandomizedResponse(2, e0), eps, adj)[i]
    return float(g), law


@pytest.mark.parametrize("a1, a2, p2, gamma, n", [
    (-1.4357688818, 0.7360512628, 0.5, 0.5378828427399903, 1),
    (-1.4357688818, 0.7360512628, 0.5, 0.5378828427399903, 7),
    (-0.3, 2.5, 0.2, 0.9, 40),
    (-2.0, 0.1, 0.7, 0.3, 60),  # E[L] > 0: the crude truncation charge
    (-1e-3, 4.0, 1e-3, 1.0, 50),  # gamma = 1: N = n
    (-0.5, 0.5, 0.5, 0.05, 60),
])
def test_bracket_holds_the_mpmath_enumeration(a1, a2, p2, gamma, n):
    lo, up, *_, ok = KERNEL(a1, a2, p2, gamma, n)
    ref = mp_enumeration(a1, a2, p2, gamma, n)
    assert ok
    assert mp.mpf(lo) <= ref <= mp.mpf(up)
    assert up - lo <= 1e-8 * up  # (so the enclosure is a test of the value)


@settings(max_examples=40, deadline=None)
@given(a1=st.floats(-5.0, -1e-3), a2=st.floats(1e-3, 5.0), p2=st.floats(0.01, 0.99), gamma=st.floats(0.01, 1.0),
       n=st.integers(1, 40))
def test_property_bracket_holds_the_enumeration(a1, a2, p2, gamma, n):
    lo, up, *_, ok = KERNEL(a1, a2, p2, gamma, n)
    assert ok
    ref = mp_enumeration(a1, a2, p2, gamma, n)
    assert mp.mpf(lo) <= ref <= mp.mpf(up)
    if ref > 1e-30:  # (deep tails widen it: the k steps subtract, docs/accountant_atoms.md §12.3)
        assert up - lo <= 1e-4 * up


@settings(max_examples=25, deadline=None)
@given(a1=st.floats(-3.0, -0.05), a2=st.floats(0.05, 3.0), p2=st.floats(0.05, 0.95), gamma=st.floats(0.05, 1.0),
       n=st.integers(100, 100_000))
def test_property_bracket_holds_the_scipy_sum(a1, a2, p2, gamma, n):
    lo, up, *_, ok = KERNEL(a1, a2, p2, gamma, n)
    assert ok
    ref = exact_two_atom(gamma, np.array([a1, a2]), np.array([1 - p2, p2]), n)
    if ref > 1e-250:  # (scipy's reference is itself accurate to ~1e-12 relative there, not certified)
        assert lo * (1 - 1e-9) <= ref <= up * (1 + 1e-9)


#: get_epsilon(1e-6) of binary RR (eps0, n) -> (replace, zero-out) answers, about (docs/accountant_atoms.md §12.7)
ANSWERS = {(0.5, 1000): (0.0627, 0.0302), (0.5, 100_000): (0.00515, 0.0024), (0.5, 1_000_000): (0.00143, 0.00065),
           (1.0, 1000): (0.149, 0.0735), (1.0, 100_000): (0.0124, 0.00584), (1.0, 1_000_000): (0.00351, 0.00162),
           (2.0, 1000): (0.397, 0.208), (2.0, 100_000): (0.0332, 0.0158), (2.0, 1_000_000): (0.00952, 0.00446),
           (4.0, 1000): (1.85, 1.21), (4.0, 100_000): (0.118, 0.0579), (4.0, 1_000_000): (0.0343, 0.0163)}


@pytest.mark.parametrize("e0, n", sorted(ANSWERS))
@pytest.mark.parametrize("adj", ["replace", "zero_out"])
def test_binary_rr_against_scipy_up_to_1e6(e0, n, adj):
    """The stored laws of binary RR at get_epsilon(1e-6)'s answer and at half of it: the bracket holds
    scipy's binomial sum and is at most 1e-6 wide (relative; about 1e-8 at these values)."""
    e = ANSWERS[e0, n][adj == "zero_out"]
    for eps in (e, 0.5 * e):
        for g, law in laws_for(RandomizedResponse(2, e0), eps, adj):
            if law.support()[1] <= 0.0:  # (L <= 0: value 0, no kernel)
                continue
            (a1, a2), (_, p2) = law.values, law.probs
            lo, up, *_, ok = KERNEL(a1, a2, p2, float(g), n)
            ref = exact_two_atom(float(g), law.values, law.probs, n)
            assert ok and ref > 1e-12
            assert lo * (1 - 1e-11) <= ref <= up * (1 + 1e-11)
            assert up - lo <= 1e-6 * lo


def test_krr_zero_out_is_a_two_atom_law():
    for k in (3, 5, 10):
        for g, law in laws_for(RandomizedResponse(k, 1.0), 0.05, "zero_out"):
            if law.support()[1] <= 0.0:  # (L <= 0: value 0, no kernel)
                continue
            assert two_atom.is_two_atom(law)
            (a1, a2), (_, p2) = law.values, law.probs
            lo, up, *_ = KERNEL(a1, a2, p2, float(g), 2000)
            ref = exact_two_atom(float(g), law.values, law.probs, 2000)
            assert ref > 1e-20  # (scipy's reference is accurate to ~1e-12 relative there)
            assert lo * (1 - 1e-11) <= ref <= up * (1 + 1e-11)
    # k-RR replace has three atoms: not a two-atom law
    assert not any(two_atom.is_two_atom(law) for _, law in laws_for(RandomizedResponse(3, 1.0), 0.2, "replace"))


def test_atoms_of_brackets_probabilities_that_do_not_sum_to_one():
    law = FiniteLaw([-1.0, 0.5], [2 / 3, 1 / 3])  # 2/3 + 1/3 = 1 in doubles, not exactly
    a1, a2, lo, hi = two_atom.atoms_of(law)
    assert (a1, a2) == (-1.0, 0.5)
    assert lo <= 1 / 3 <= hi and lo <= 1 - 2 / 3 <= hi and lo < hi
    exact = FiniteLaw([-1.0, 0.5], [0.25, 0.75])
    assert two_atom.atoms_of(exact) == (-1.0, 0.5, 0.75, 0.75)
    assert two_atom.atoms_of(FiniteLaw([0.5, 1.0], [0.5, 0.5])) is None  # both atoms above 0
    assert two_atom.atoms_of(FiniteLaw([-1.0, 0.0, 1.0], [0.2, 0.3, 0.5])) is None


def test_bracket_of_a_law_with_value_error_uses_both_shifts():
    g, law = rr_law(1.0, 0.05, "replace")
    assert law.value_error > 0
    r = two_atom.bracket(law, g, 10_000)
    (a1, a2), (_, p2) = law.values, law.probs
    lo0, up0, *_ = KERNEL(a1, a2, p2, g, 10_000)
    assert r is not None and r.lower <= lo0 and up0 <= r.upper  # the stored law's bracket inside
    assert r.upper - r.lower <= 1e-6 * r.lower


@pytest.mark.parametrize("args, name", [
    ((0.0, 1.0, 0.5, 0.5, 10), "a1"), ((math.nan, 1.0, 0.5, 0.5, 10), "a1"), ((-1.0, 0.0, 0.5, 0.5, 10), "a2"),
    ((-1.0, math.inf, 0.5, 0.5, 10), "a2"), ((-1.0, 1.0, 0.0, 0.5, 10), "p2"), ((-1.0, 1.0, 1.0, 0.5, 10), "p2"),
    ((-1.0, 1.0, math.nan, 0.5, 10), "p2"), ((-1.0, 1.0, 0.5, 0.0, 10), "gamma"),
    ((-1.0, 1.0, 0.5, 1.5, 10), "gamma"), ((-1.0, 1.0, 0.5, 0.5, 0), "n"),
])
def test_kernel_errors_name_the_parameter(args, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        KERNEL(*args)
