"""Review rev42 (session 42): attack on docs/accountant_tail.md §59.2 (session 41's ``BODY_LEAP_EIGHT``: a far-tail body
pass whose gap exceeds 16 times its share divides the step by 8). The claim: a choice of which certified passes run,
so every bracket, with the rule at its default, forced after every pass (``BODY_LEAP`` = 0, ratio 0) or off, holds the
true D_up.

Independent references (tests/_rev42_zero_ref.py, the laws written from the mechanisms, not the library's):
- n = 2: D_up(eps) = (2 gamma (1 - gamma) E L_+ + gamma^2 E (L_1 + L_2)_+) / (2 gamma) by scipy quadrature (relative
  accuracy ~1e-10; the smallest margin measured is 6e-7 relative, at the upper ends);
- n = 10 ... 1000: Monte Carlo with the blanket's Y drawn directly (seeded, 6 standard errors; a gross check).
The brackets are the far-tail treatment's own (``far_tail.certify_bigjump`` on the accountant's law moved up by its
value_error), as the accountant runs them."""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.laws import laws_for

import _rev42_zero_ref as ref
from test_body41_leap import _spy  # (the body passes' steps, recorded)


def _laws(kind: str, par: tuple, adjacency: str, eps: float):
    R = BlanketMixedGaussian(par[0], par[1], 1) if kind == "bmg" else GaussianRandomizer(par[0], 1)
    _, mine = ref.bmg_laws(*par, adjacency, eps) if kind == "bmg" else ref.gauss_laws(*par, eps)
    return laws_for(R, eps, adjacency), mine


@functools.lru_cache(maxsize=None)
def _exact2(kind: str, par: tuple, adjacency: str, eps: float, idx: int) -> float:
    lib, mine = _laws(kind, par, adjacency, eps)
    return ref.dup0_quad(mine[idx], float(lib[idx][0]), 2)


def _bracket(lib, idx: int, n: int, rel_tol: float = 1e-2):
    gamma, law = lib[idx]
    return far_tail.certify_bigjump(law.shifted(up=True), float(gamma), n, rel_tol, 1)


def _mode(monkeypatch, mode: str) -> None:
    if mode == "forced":
        monkeypatch.setattr(far_tail, "BODY_LEAP", 0.0)
        switch(monkeypatch, "BODY_LEAP_EIGHT_RATIO", 0.0)
    elif mode == "off":
        switch(monkeypatch, "BODY_LEAP_EIGHT", False)


def _eighth(steps: list[float]) -> bool:
    return any(a == 8.0 * b for a, b in zip(steps, steps[1:]))


# (cells where the forced rule, or the default one, runs an eighth step at n = 2: measured)
N2 = [("bmg", (0.171, 0.78), "zero_out", 0.5, 0), ("bmg", (0.171, 0.78), "replace", 1.5, 0),
      ("bmg", (0.0389, 0.529), "zero_out", 1.5, 1),
      ("bmg", (0.5, 1.2), "replace", 1.5, 0), ("bmg", (0.9, 0.6), "replace", 0.5, 0),
      ("bmg", (0.02, 0.4), "replace", 0.5, 0), ("bmg", (0.02, 0.4), "replace", 3.0, 0),
      ("bmg", (0.02, 0.4), "zero_out", 3.0, 1), ("g", (1.0,), "zero_out", 0.1, 1), ("g", (2.0,), "zero_out", 0.5, 0)]


@pytest.mark.parametrize("kind, par, adjacency, eps, idx", N2)
@pytest.mark.parametrize("mode", ["default", "forced"])
def test_n2_brackets_hold_the_quadrature(monkeypatch, kind, par, adjacency, eps, idx, mode):
    """n = 2: the far-tail bracket with the rule (default and forced) holds the quadrature's D_up(eps) (relative
    slack 1e-9: the law moved up by its value_error, ~1e-16, and the reference's ~1e-10) and meets the switch-off
    bracket."""
    lib, _ = _laws(kind, par, adjacency, eps)
    exact = _exact2(kind, par, adjacency, eps, idx)
    _mode(monkeypatch, mode)
    steps = _spy(monkeypatch)
    r = _bracket(lib, idx, 2)
    if mode == "forced":
        assert _eighth(steps), steps
    assert r.lower <= exact * (1 + 1e-9) and r.upper >= exact * (1 - 1e-9), (r.lower, exact, r.upper, steps)
    switch(monkeypatch, "BODY_LEAP_EIGHT", False)
    monkeypatch.setattr(far_tail, "BODY_LEAP", 4.0)
    off = _bracket(lib, idx, 2)
    assert max(r.lower, off.lower) <= min(r.upper, off.upper)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(g=st.sampled_from([0.05, 0.171, 0.4, 0.8]), s=st.sampled_from([0.45, 0.6, 0.9, 1.3]),
       eps=st.sampled_from([0.05, 0.3, 1.0, 2.0]), adjacency=st.sampled_from(["zero_out", "replace"]))
def test_n2_forced_property(monkeypatch, g, s, eps, adjacency):
    """Any BMG (gamma, sigma0), eps and adjacency, every listed law at n = 2 with the rule forced after every pass:
    the bracket holds the quadrature's D_up(eps)."""
    lib, mine = _laws("bmg", (g, s), adjacency, eps)
    _mode(monkeypatch, "forced")
    for idx in range(len(lib)):
        exact = ref.dup0_quad(mine[idx], g, 2)
        if not exact > 1e-12:
            continue
        r = _bracket(lib, idx, 2)
        assert r.lower <= exact * (1 + 1e-9) and r.upper >= exact * (1 - 1e-9), (idx, r.lower, exact, r.upper)


MC = [("bmg", (0.171, 0.78), "zero_out", 0.5, 0, 10, 200_000), ("bmg", (0.171, 0.78), "zero_out", 0.3, 0, 100, 40_000),
      ("bmg", (0.171, 0.78), "replace", 0.2, 0, 1000, 6_000), ("g", (1.0,), "zero_out", 0.2, 1, 1000, 6_000),
      ("bmg", (0.9, 0.6), "replace", 0.5, 0, 10, 200_000)]


@pytest.mark.parametrize("kind, par, adjacency, eps, idx, n, reps", MC)
def test_forced_brackets_against_monte_carlo(monkeypatch, kind, par, adjacency, eps, idx, n, reps):
    """n = 10 ... 1000, the rule forced: the bracket holds the Monte Carlo D_up(eps) within 6 standard errors."""
    lib, mine = _laws(kind, par, adjacency, eps)
    _mode(monkeypatch, "forced")
    r = _bracket(lib, idx, n)
    m, se = ref.dup0_mc(mine[idx], float(lib[idx][0]), n, reps, seed=4200 + n)
    assert r.lower <= m + 6 * se and r.upper >= m - 6 * se, (r.lower, m, se, r.upper)
