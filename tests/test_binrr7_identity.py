"""The bit-identical rewrites of the binary-RR speed work (docs/accountant_atoms.md §9), each against
the formula it replaces, written out here: FiniteLaw's sorted fast path against np.unique and
bincount, PosMgf's memoised groups against the per-call linspace/unique/geomspace, the block choice
(t, M*) of `block` against the linear scan over divisors and M, and the probe's early stop against a
fresh get_delta."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sharpdp._core_loader import core
from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.blocks import block
from sharpdp.shuffle.accountant.lattice import PosMgf
from sharpdp.shuffle.accountant.limits import (BLOCK_ATOMS_MAX, BLOCK_ATOMS_MIN, EST_FLOOR, LOG_PW_MIN, MS_MAX, TRUNC,
                                               TRUNC_REL)
from sharpdp.shuffle.laws import FiniteLaw, laws_for


def test_finite_law_sorted_fast_path_is_bit_identical() -> None:
    rng = np.random.default_rng(7)
    for m in (2, 3, 17, 200):
        v = np.sort(rng.normal(size=m) * 10.0 ** rng.integers(-5, 5))
        v = np.unique(v)
        p = rng.random(v.size)
        p[rng.random(v.size) < 0.2] = 0.0
        p[0] += 1.0
        p /= p.sum()
        fast = FiniteLaw(v, p)  # sorted, distinct: the fast path
        perm = rng.permutation(v.size)
        ref_v, inv = np.unique(v[perm], return_inverse=True)  # the general path, written out
        ref_p = np.bincount(inv.ravel(), weights=p[perm], minlength=ref_v.size)
        assert fast.values.tobytes() == ref_v.tobytes()
        assert fast.probs.tobytes() == ref_p.tobytes()
        slow = FiniteLaw(v[perm], p[perm])
        assert slow.values.tobytes() == ref_v.tobytes() and slow.probs.tobytes() == ref_p.tobytes()
        assert fast.values is not v and fast.probs is not p  # (copies: the law owns its arrays)


def _pos_mgf_reference(g, eta, k0, h, c):
    kz = -k0
    x = (np.arange(kz + 1, g.size) + k0) * h
    w = g[kz + 1:] + eta[kz + 1:]
    w0 = float(np.sum(g[:kz + 1]) + np.sum(eta[:kz + 1]))
    starts = np.unique(np.linspace(0, x.size, min(256, x.size) + 1).astype(np.int64)[:-1])
    wg = np.add.reduceat(w, starts)
    xg = x[np.append(starts[1:], x.size) - 1]
    lams = np.geomspace(1e-4, 700.0, 24) / float(x[-1])
    with np.errstate(over="ignore"):
        m = w0 + np.exp(np.outer(lams, xg)) @ wg
    return lams, np.log(m * (1.0 + 1e-9)) + lams * c


@pytest.mark.parametrize("size, kB", [(5, 2), (300, 100), (1001, 0), (4096, 2000), (257, 3)])
def test_pos_mgf_memoised_groups_are_bit_identical(size: int, kB: int) -> None:
    rng = np.random.default_rng(size)
    g = rng.random(size)
    g /= g.sum()
    eta = rng.random(size) * 1e-17
    for h in (0.013, 1.0 / 3.0, 7.5):
        got = PosMgf.from_lattice(g, eta, -kB, h, 1e-12)
        lams, logm = _pos_mgf_reference(g, eta, -kB, h, 1e-12)
        assert got is not None
        assert got.lams.tobytes() == lams.tobytes() and got.logm.tobytes() == logm.tobytes()
    assert PosMgf.from_lattice(g, eta, -(size - 1), 0.1, 0.0) is None  # (no node above 0)


def _reference_choice(gamma: float, law: FiniteLaw, n: int) -> tuple[int, int] | None:
    """(t, M*) by the linear scans of _block_law before docs/accountant_atoms.md §9 (values above
    1e-34: the two-atom cap, every divisor of n, largest first)."""
    keep = law.probs > 0
    a, pa = law.values[keep], law.probs[keep]
    m1 = a.size
    amax = float(np.max(np.abs(a)))
    l_est = max(float(core.accountant.log_value_estimate(a, pa, float(gamma), float(n))), math.log(EST_FLOOR))
    lp_tau = min(math.log(TRUNC), math.log(TRUNC_REL) + l_est)
    assert not lp_tau < math.log(TRUNC)  # (the cases below: values above 1e-34)
    lp_tr = lp_tau + math.log(gamma / max(amax, 1e-300))
    cap = int(min(BLOCK_ATOMS_MAX, max(BLOCK_ATOMS_MIN, 20.0 * math.sqrt(n))))
    if m1 == 2:
        cap = min(cap, max(10_000, int(20.0 * math.sqrt(n))))
    lpmin = math.log(float(np.min(pa)))
    for d in sorted((d for d in range(2, n + 1) if n % d == 0), reverse=True):
        if d * gamma > MS_MAX or math.comb(int(math.ceil(d * gamma)) + m1, m1) > cap:
            continue
        M = int(math.ceil(d * gamma))
        while M < d:
            x = M / d
            if x >= 1:
                M = d
                break
            kl = x * math.log(x / gamma) + (1 - x) * (math.log1p(-x) - math.log1p(-gamma))
            if -d * kl <= lp_tr:
                break
            M += max(1, M // 50)
        ms = min(M, d)
        if ms <= MS_MAX and ms * lpmin >= LOG_PW_MIN and math.comb(ms + m1, m1) <= cap:
            return d, ms
    return None


@pytest.mark.parametrize("eps0, n, x, adjacency", [(0.5, 1000, 0.06, "replace"), (1.0, 10_000, 0.02, "zero_out"),
                                                   (2.0, 100_000, 0.016, "zero_out"), (4.0, 1_000_000, 0.034, "replace"),
                                                   (1.0, 999_983, 0.0016, "zero_out"), (2.0, 720_720, 0.0045, "replace")])
def test_block_choice_equals_the_linear_scan(eps0: float, n: int, x: float, adjacency: str) -> None:
    for g, law in laws_for(RandomizedResponse(2, eps0), x, adjacency):
        blk = block(float(g), law, n)
        ref = _reference_choice(float(g), law, n)
        if ref is None:  # (n prime: no block fits)
            assert blk is None
            continue
        t, ms = ref
        assert blk is not None and blk.t == t
        if t < n:  # two atoms, gamma < 1: the count vectors with sum <= M*, plus the atom of {M > M*}
            assert blk.law.values.size == (ms + 1) * (ms + 2) // 2 + 1


@pytest.mark.parametrize("eps0, n", [(1.0, 10_000), (2.0, 100_000)])
def test_probe_stopping_at_a_law_above_delta_agrees_with_get_delta(eps0: float, n: int) -> None:
    """Zero-out (two laws): below the answer the probe says "above" and so does a fresh get_delta;
    at the answer both say "below"."""
    rr, d = RandomizedResponse(2, eps0), 1e-6
    e = ShuffleAccountant(rr, n).get_epsilon(d)
    assert S.probe(ShuffleAccountant(rr, n), e, d, None) <= d
    assert ShuffleAccountant(rr, n).get_delta(e) <= d
    for f in (0.9995, 0.999, 0.99):
        assert S.probe(ShuffleAccountant(rr, n), e * f, d, None) > d
        assert ShuffleAccountant(rr, n).get_delta(e * f) > d


@pytest.mark.parametrize("eps0, n, x", [(1.0, 10_000, 0.043), (4.0, 100_000, 0.1)])
def test_block_law_thresholds_beyond_the_atoms(eps0: float, n: int, x: float) -> None:
    """prob_below / prob_above / tail_upper / tail_lower of a block law at thresholds beyond its
    extreme atoms equal the sums over the selected atoms, written out (none selected)."""
    g, law = laws_for(RandomizedResponse(2, eps0), x, "replace")[0]
    blk = block(float(g), law, n)
    assert blk is not None and blk.t < n
    bl = blk.law
    v, p, rel = bl.values, bl.probs, bl.rel_p
    lo, hi = float(np.min(v)), float(np.max(v))
    for t in (lo, lo - 1e-3, lo - 5.0, np.nextafter(lo, np.inf), 0.5 * (lo + hi)):
        sel = p[v < t]
        ref = (float(sel.sum()), (sel.size + 4.0) * 2.0 ** -53 * float(sel.sum()))
        got = bl.prob_below(float(t))
        assert got == (ref[0], ref[1] + rel * ref[0] + 1e-290)
        s = v < -(-t)  # tail_lower(B) with B = -t
        ref_tl = float(np.sum((t - v[s]) * p[s])) * (1.0 + 1e-12) * (1.0 + rel)
        assert bl.tail_lower(float(-t)) == ref_tl
    for t in (hi, hi + 1e-3, hi + 5.0, np.nextafter(hi, -np.inf), 0.5 * (lo + hi)):
        sel = p[v >= t]
        ref = (float(sel.sum()), (sel.size + 4.0) * 2.0 ** -53 * float(sel.sum()))
        assert bl.prob_above(float(t)) == (ref[0], ref[1] + rel * ref[0] + 1e-290)
        s = v > t
        ref_tu = float(np.sum((v[s] - t) * p[s])) * (1.0 + 1e-12) * (1.0 + rel)
        assert bl.tail_upper(float(t)) == ref_tu
