"""The far-tail rule of docs/accountant_tail.md §26 (a round certain to be redone with B x 4 stops its body passes;
``_settle`` refines it later only where bounds do not rule it out): the same floats as every round refined (the rule
off, ``doomed=False``), fewer engine passes, and the bracket against references independent of the far-tail path
(mpmath quadrature at n = 2, 3; the plain engine)."""

from __future__ import annotations

import dataclasses

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import far_tail
from sharpdp.shuffle.accountant.driver import Bracket
from sharpdp.shuffle.accountant.plain import certify_law_mode
from sharpdp.shuffle.laws import laws_for

from test_gauss23_count_clamp import _quad_bx
from _main_floats34 import main_floats

FIELDS = ("lower", "upper", "T0", "h", "B", "N", "multi", "body_up", "body_lo", "penalty_B")


def _bx(sigma0: float, e: float):
    """(gamma, raised law) of the bot-vs-x order (leg B of replace-one through bot, docs/accountant.md §9)."""
    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), e, "zero_out")[1]
    return float(gamma), law.shifted(up=True)


def _passes(monkeypatch) -> list:
    seen: list = []
    orig = far_tail.lattice_pass

    def spy(*a, **k):
        seen.append(a[3:6])  # (h, T0, B)
        return orig(*a, **k)

    monkeypatch.setattr(far_tail, "lattice_pass", spy)
    return seen


# (sigma0, n, e2, rel_tol, negligible): leg B of the split search at a balanced optimum (n = 1e5, eps = 0.1), at a
# cliff (n = 1000, eps = 8: every round's body alike, the cut rounds refined in the end; n = 1e6 probes), loose legs
# (saves: whether the rule saves passes there; at the cliff of n = 1000 every cut round is refined in the end)
CELLS = [(1.0, 10**5, 0.065, 1e-2, 9.07e-7, True), (1.0, 10**5, 0.045, 0.1, 2.6e-6, True),
         (1.0, 1000, 0.759627, 1e-2, 0.0, False), (1.0, 1000, 0.746998, 0.1, 1.03e-15, False),
         (2.0, 1000, 0.2, 1e-2, 0.0, True), (1.0, 10**6, 0.050021, 0.1, 6.6e-20, True)]


@pytest.mark.parametrize("sigma0,n,e,rel_tol,neg,saves", CELLS)
def test_same_floats_fewer_passes(monkeypatch, sigma0, n, e, rel_tol, neg, saves):
    """Every field of the result is the one with the rule off (Claims 26.1-26.2), and the rule saved passes or
    their size (the passes it ran are a sub-multiset of those of before, the lattice sizes summed smaller)."""
    gamma, law = _bx(sigma0, e)
    seen = _passes(monkeypatch)
    off = far_tail.certify_bigjump(law, gamma, n, rel_tol, 1, negligible=neg, doomed=False)
    p_off = list(seen)
    seen.clear()
    on = far_tail.certify_bigjump(law, gamma, n, rel_tol, 1, negligible=neg)
    for f in FIELDS:
        assert getattr(on, f) == getattr(off, f), f
    assert on.jump == off.jump
    rest = list(p_off)
    for p in seen:  # (each pass of the rule's run is one of before: the same state, the same steps)
        rest.remove(p)
    assert bool(rest) == saves  # (fewer passes where it saves: caught with the rule disabled in _body_passes)


def test_cut_rounds_are_refined_where_they_decide(monkeypatch):
    """At a cliff (leg B at e2 = 0.7596, n = 1000: the rounds' bodies agree to round-off, the first round's upper value
    the least, the last one's lower value the largest) _settle must refine cut rounds: reporting the rounds as cut
    (no settling) gives other floats (the mutation caught: _settle without its refinement loop)."""
    gamma, law = _bx(1.0, 0.759627)
    ref = far_tail.certify_bigjump(law, gamma, 1000, 1e-2, 1, doomed=False)

    def unsettled(rounds, *a):
        best = rounds[0][1]
        for _, r in rounds[1:]:
            best = r if r.upper < best.upper else best
        return dataclasses.replace(best, lower=max(r.lower for _, r in rounds))

    monkeypatch.setattr(far_tail, "_settle", unsettled)
    cut = far_tail.certify_bigjump(law, gamma, 1000, 1e-2, 1)
    assert (cut.lower, cut.upper) != (ref.lower, ref.upper)
    assert cut.upper >= ref.upper and cut.lower <= ref.lower  # (coarser rounds: never tighter)


@pytest.mark.parametrize("n", [2, 3])
def test_against_quadrature(n):
    """D_up of the bot-vs-x law at n = 2, 3 by mpmath (independent of the lattice) inside the bracket with the
    rule on, at rel_tol 1e-4 (tests/test_gauss23_count_clamp.py's reference)."""
    gamma, law = laws_for(GaussianRandomizer(0.5, 1), 0.01, "zero_out")[1]
    ref = _quad_bx(0.5, 0.01, n)
    r = far_tail.try_certify(law, float(gamma), n, 1e-4, 1)
    assert r is not None and r.lower <= ref <= r.upper and r.upper - r.lower <= 1e-5 * ref


@pytest.mark.parametrize("sigma0,n,e", [(1.0, 1000, 0.2), (2.0, 1000, 0.2)])
def test_against_the_plain_engine(monkeypatch, sigma0, n, e):
    """Where the rule cuts rounds, the far-tail bracket (rule on) overlaps the plain engine's (the clamp paid in full,
    docs/accountant.md §3-§4; independent of the far-tail path) at rel_tol 1e-4 and is within 2 % of it."""
    gamma, law = laws_for(GaussianRandomizer(sigma0, 1), e, "zero_out")[1]
    gamma = float(gamma)
    orig, cuts = far_tail._body_passes, []

    def spy(*a):
        st = orig(*a)
        cuts.append(st.cut)
        return st

    monkeypatch.setattr(far_tail, "_body_passes", spy)
    ft = far_tail.try_certify(law, gamma, n, 1e-2, 1)
    pl = certify_law_mode(law, gamma, n, 1e-4, 1, Bracket())
    assert ft is not None and any(cuts)
    assert ft.lower <= pl.upper and pl.lower <= ft.upper
    assert ft.upper <= pl.upper * 1.02


def test_replace_through_bottom_same_floats():
    """get_delta_bounds through bot (GaussianRandomizer(2), n = 1000, eps = 0.5: leg B of every split on the far-tail
    path, the rule firing) gives the floats of the rule off."""
    d = far_tail.certify_bigjump.__defaults__
    try:
        far_tail.certify_bigjump.__defaults__ = d[:-1] + (False,)
        off = ShuffleAccountant(GaussianRandomizer(2.0, 1), 1000, "replace").get_delta_bounds(0.5)
    finally:
        far_tail.certify_bigjump.__defaults__ = d
    on = ShuffleAccountant(GaussianRandomizer(2.0, 1), 1000, "replace").get_delta_bounds(0.5)
    assert (float(on[0]), float(on[1])) == (float(off[0]), float(off[1]))


def _on_off(monkeypatch, pens, neg: float = 0.0):
    """certify_bigjump on the n = 1e5 leg B (e2 = 0.065, rel_tol 1e-2) with the rule on and off, the penalty of the
    k-th round replaced by pens[k] (a test device: the values are then not certified, only compared)."""
    gamma, law = _bx(1.0, 0.065)
    out = []
    for doomed in (False, True):
        calls = iter(pens)
        monkeypatch.setattr(far_tail, "lower_tail_penalty", lambda *a: next(calls))
        r = far_tail.certify_bigjump(law, gamma, 10**5, 1e-2, 1, negligible=neg, doomed=doomed)
        out.append(tuple(getattr(r, f) for f in FIELDS))
    return out


@pytest.mark.parametrize("x", [2.2e-6, 2.26e-6, 2.3e-6, 2.34e-6, 2.38e-6, 2.42e-6, 2.5e-6])
def test_premise_penalty(monkeypatch, x):
    """A penalty near 0.05 rel_tol of the first round's value (between its coarse and its refined value): the rule
    must not cut where the redo is not certain (caught: the cut without its penalty test, at x = 2.3e-6 ... 2.38e-6,
    where the coarse value asks for a redo that the refined one does not)."""
    off, on = _on_off(monkeypatch, [0.05 * 1e-2 * x] * 4)
    assert on == off


@pytest.mark.parametrize("neg", [2.405e-6, 2.41e-6, 2.42e-6, 2.43e-6])
def test_premise_floor(monkeypatch, neg):
    """The caller's negligible level between the first round's refined and coarse upper values (its body in
    [2.40694e-6, 2.4077e-6] refined, [2.26995e-6, 2.43173e-6] after one pass) with a large penalty: the refined round
    stops below it without a redo (caught: the cut without its floor test)."""
    off, on = _on_off(monkeypatch, [1e-3] * 4, neg)
    assert on == off


def test_settle_lower_bound(monkeypatch):
    """A cut first round whose refined lower value is the largest of all (the later rounds' penalties 1): _settle
    must refine it (caught: the lower bound of Claim 26.2 taken with the body's lower value, not its upper one)."""
    main_floats(monkeypatch)  # (**) session 34, tail34: un-nested, §26's device on main's body passes (§44's switches off)
    off, on = _on_off(monkeypatch, [0.06 * 1e-2 * 2.44e-6, 1.0, 1.0, 1.0])
    assert on == off and off[0] > 2.4e-6
