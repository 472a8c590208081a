"""Review rev35 (session 35) of exp35's relattice rule (docs/composition.md §4.7: a round's export pair moved onto
another lattice without new certified values) and prof35's budgeted sampling (docs/composition.md §2.17).

References the builders did not use: the moved pair's hockey-stick curve in *both* orders, H_t(P'||Q') and
H_t(Q'||P'), computed here from the stored masses by compensated sums (math.fsum; no sharpdp or dp_accounting code),
against the original pair's, at t = e^eps on a dense grid of either sign (Blackwell domination of the pairs, the
property composition needs), on rounds with an infinity mass and on steps coarser and finer than the export's, not
multiples of it; k-fold self-composition of the moved and original PLDs (dp_accounting); the certified lower value of
a tighter accountant (rel_tol 1e-3) between the samples of the default pair. On main the module pair_relattice does
not exist: those tests are skipped.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import sharpdp.shuffle as sh

try:
    from sharpdp.shuffle.pair_relattice import relattice
except ImportError:  # main
    relattice = None

needs_relattice = pytest.mark.skipif(relattice is None, reason="docs/composition.md §4.7 not on this branch")


def _curves(pair, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(H_{e^eps}(P||Q), H_{e^eps}(Q||P)) of a DominatingPair, from its stored masses: P = probs on the losses l_i
    (+ infinity_mass at +inf), Q = probs e^{-l_i} (+ 1 - sum at -inf). Float sums with exp evaluated in float64,
    a 1e-12 relative allowance is left to the comparison."""
    l = pair.losses.astype(float) * pair.value_discretization_interval
    p = pair.probs.astype(float)
    q = p * np.exp(-l)
    q_rest = max(1.0 - float(math.fsum(q.tolist())), 0.0)
    out1, out2 = [], []
    for e in eps.tolist():
        t = math.exp(e)
        out1.append(math.fsum(np.maximum(p - t * q, 0.0).tolist()) + pair.infinity_mass)
        out2.append(math.fsum(np.maximum(q - t * p, 0.0).tolist()) + q_rest)
    return np.array(out1), np.array(out2)


@pytest.fixture(scope="module")
def pairs():
    sh.clear_caches()
    out = {
        "krr-zero_out": sh.dominating_pair(sh.ShuffleAccountant(sh.RandomizedResponse(4, 3.0), 300), 2.7e-3,
                                           progress=False),
        "rr-replace": sh.dominating_pair(sh.ShuffleAccountant(sh.RandomizedResponse(2, 2.0), 40, "replace"), 4.1e-3,
                                         progress=False),
    }
    yield out
    sh.clear_caches()


@needs_relattice
@pytest.mark.parametrize("name", ["krr-zero_out", "rr-replace"])
@pytest.mark.parametrize("step", [1e-4, 9.1e-3, 0.9])
def test_moved_pair_dominates_in_both_orders(pairs, name, step):
    pair = pairs[name]
    moved = relattice(pair, step)
    assert moved.certified == pair.certified and moved.value_discretization_interval == step
    lmax = float(max(abs(pair.losses[0]), abs(pair.losses[-1])) * pair.value_discretization_interval)
    eps = np.concatenate([np.linspace(-lmax - 0.5, lmax + 0.5, 301), np.linspace(-0.05, 0.05, 41)])
    a1, a2 = _curves(pair, eps)
    b1, b2 = _curves(moved, eps)
    tol = 1e-12
    assert np.all(b1 >= a1 * (1 - tol) - 1e-300), float(np.min(b1 - a1))
    assert np.all(b2 >= a2 * (1 - tol) - 1e-15), float(np.min(b2 - a2))
    # the masses form a pair of probability laws
    assert np.all(moved.probs >= 0) and math.fsum(moved.probs.tolist()) + moved.infinity_mass >= 1.0 - 1e-15
    assert float(np.sum(moved.probs * np.exp(-moved.losses * step))) <= 1.0 + 1e-12


@needs_relattice
@pytest.mark.parametrize("name", ["rr-replace"])
def test_moved_pld_dominates_after_composition(pairs, name):
    """Blackwell domination survives composition: the k-fold composed PLD of the moved pair (dp_accounting, on 1e-4)
    is at least the original pair's composed on its own lattice, where delta >= 1e-9 (dp_accounting's own
    pessimistic arithmetic on both sides; a 1e-6 relative allowance)."""
    pytest.importorskip("dp_accounting")
    from sharpdp.interop.dp_accounting import pld_from_pair
    pair = pairs[name]
    moved = relattice(pair, 1e-4)
    k = 3
    a = pld_from_pair(pair).self_compose(k)
    b = pld_from_pair(moved).self_compose(k)
    for e in np.linspace(0.0, 3.0, 31).tolist():
        da, db = a.get_delta_for_epsilon(e), b.get_delta_for_epsilon(e)
        if da >= 1e-9:
            assert db >= da * (1 - 1e-6), (e, da, db)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gauss-zero_out", "bmg-zero_out"])
def test_default_pair_within_one_percent_between_its_samples(name):
    """The export goal (docs/embedding.md §5, issue-level): the default pair's delta within 1 % above get_delta where
    delta >= 1e-12, checked at the quarter points of every segment between the pair's samples (where the chord in
    t = e^eps is furthest from the curve) and on a grid of 2001 points, and never below the certified lower value.
    Measured on prof35 (§2.17 on): GaussianRandomizer(2), n = 1e3: max 1.0082; BMG(0.5, 1.5), n = 1e3: 1.0044."""
    make = {"gauss-zero_out": lambda: sh.ShuffleAccountant(sh.GaussianRandomizer(2.0, 1.0), 1000),
            "bmg-zero_out": lambda: sh.ShuffleAccountant(sh.BlanketMixedGaussian(0.5, 1.5, 1), 1000)}[name]
    sh.clear_caches()
    pair = sh.dominating_pair(make(), progress=False)
    dx = pair.value_discretization_interval
    se = pair.sample_epsilons
    mids = np.concatenate([se[:-1] + f * np.diff(se) for f in (0.25, 0.5, 0.75)])
    eps = np.unique(np.concatenate([np.linspace(0, 1000 * dx, 2001), mids[mids <= 1000 * dx]]))
    pd = pair.get_delta(eps)
    lo, up = make().get_delta_bounds(eps)
    assert np.all(pd >= lo)
    sel = up >= 1e-12
    assert sel.sum() > 500
    r = pd[sel] / up[sel]
    assert r.max() <= 1.01, (float(r.max()), float(eps[sel][np.argmax(r)]))
