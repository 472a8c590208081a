"""Review rev-decide6: get_epsilon's decision mode (docs/accountant_atoms.md §8) attacked with
independent references.

* the contract get_delta(get_epsilon(d)) <= d with a FRESH accountant, over randomizers (k-RR k = 2, 3,
  10, BlanketMixedGaussian, GaussianRandomizer), n, both adjacencies and deltas; tightness: the fresh
  get_delta at answer (1 - xtol) exceeds d (the documented tolerance: the final bracket's lower end
  lo >= hi (1 - xtol) carries a certified value above d);
* exact roots of the k-RR blanket divergence (tests/data/review_rev_decide6: closed-form atoms,
  direct sums cross-checked with mpmath): the answer is never below the exact root, get_delta is never
  below the exact value, and the answer is within xtol plus the certified gap of the exact root;
* numpy.fft against scipy.fft bit for bit on every 5-smooth length the single-worker path can get,
  and next_fast_len_real against scipy.fft.next_fast_len;
* order dependence: answers and values after other calls (memos, process-wide caches warm or
  cleared) are bit-identical to a fresh accountant's; a probe decided through get_delta's running
  minimum is still certified for a fresh accountant.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
import scipy.fft as sfft

from sharpdp.shuffle import (BlanketMixedGaussian, FiniteRandomizer, GaussianRandomizer, PrivUnit,
                             RandomizedResponse, ShuffleAccountant, clear_caches)
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.fft import next_fast_len_real

DATA = os.path.join(os.path.dirname(__file__), "data", "review_rev_decide6")
sys.path.insert(0, DATA)
from exact_dup import dup_krr_any  # noqa: E402

XTOL = 1e-3


def _finite_table() -> FiniteRandomizer:
    """A 3-input, 5-output table (units of 2^-64), no structure (every row positive)."""
    rng = np.random.default_rng(1)
    rows = []
    for i in range(3):
        w = [int(x) for x in rng.integers(1, 20, size=5)]
        w[i] += 30
        row = [x * (2**64 // sum(w)) for x in w]
        row[-1] += 2**64 - sum(row)
        rows.append(row)
    return FiniteRandomizer(rows)


def _rz(spec: tuple) -> object:
    kind, *args = spec
    if kind == "finite":
        return _finite_table()
    return {"rr": RandomizedResponse, "bmg": BlanketMixedGaussian, "gauss": GaussianRandomizer,
            "privunit": PrivUnit}[kind](*args)


# (randomizer, n, adjacency, delta): a cheap sample of the sweep in make/sweep_contract.py (300 random
# configurations there, all certified and tight); here the ones that took < 0.1 s each
CONTRACT = [
    (("rr", 3, 0.3), 100, "replace", 1e-8), (("rr", 3, 0.1), 10_000, "zero_out", 1e-12),
    (("rr", 2, 6.0), 2, "zero_out", 1e-8), (("rr", 3, 1.0), 100_000, "replace", 1e-10),
    (("rr", 10, 4.0), 4096, "replace", 1e-10), (("rr", 3, 1.0), 57, "replace", 1e-4),
    (("rr", 10, 0.5), 10, "zero_out", 1e-10), (("rr", 3, 3.0), 100_000, "zero_out", 1e-6),
    (("rr", 3, 1.0), 1_000_000, "replace", 1e-10), (("rr", 2, 3.0), 100, "replace", 1e-4),
    (("rr", 10, 8.0), 1_000_000, "zero_out", 1e-4), (("rr", 2, 8.0), 1_000_000, "zero_out", 1e-8),
    (("rr", 10, 4.0), 1_000_000, "replace", 1e-12), (("rr", 2, 0.3), 1_000_000, "replace", 1e-4),
    (("rr", 10, 8.0), 100_000, "replace", 1e-8), (("rr", 2, 1.0), 4096, "zero_out", 1e-10),
    (("rr", 3, 6.0), 3, "zero_out", 1e-3), (("rr", 2, 8.0), 10_000, "replace", 1e-3),
    (("bmg", 0.3, 3.0, 1), 99_991, "zero_out", 1e-10), (("bmg", 0.1, 1.0, 1), 10, "zero_out", 1e-8),
    (("gauss", 10.0, 1), 10, "zero_out", 1e-12), (("gauss", 0.5, 1), 3, "zero_out", 1e-6),
    (("privunit", 0.7, 0.2, 4), 100_000, "replace", 1e-9), (("privunit", 0.7, 0.2, 4), 10, "zero_out", 1e-4),
    (("finite",), 100_000, "zero_out", 1e-9), (("finite",), 1000, "replace", 1e-6),
    # prime n: no blocks, the plain lattice path decides (sweep_prime_n.txt: 72 cases, all certified, tight)
    (("rr", 3, 4.0), 1009, "replace", 1e-7), (("rr", 3, 4.0), 1009, "zero_out", 1e-12),
]


@pytest.mark.parametrize("spec, n, adjacency, delta", CONTRACT)
def test_contract_fresh_accountant_and_xtol(spec: tuple, n: int, adjacency: str, delta: float) -> None:
    """Catches: a decision taken on a value below get_delta's (e.g. the blocks' current shift instead of
    the largest, a decided pass that is not a prefix of get_delta's, a missing surcharge or charge in
    the probe's reporting map), and a search that stops before xtol (answer loose beyond the doc)."""
    rz = _rz(spec)
    e = ShuffleAccountant(rz, n, adjacency).get_epsilon(delta, xtol=XTOL)
    fresh = ShuffleAccountant(rz, n, adjacency)
    assert fresh.get_delta(e) <= delta
    cap0 = getattr(rz, "epsilon0", None) if adjacency == "replace" else None
    if e > 0.0 and e != cap0:
        assert ShuffleAccountant(rz, n, adjacency).get_delta(e * (1.0 - XTOL) * (1 - 1e-9)) > delta


with open(os.path.join(DATA, "krr_roots.json")) as _fh:
    ROOTS = json.load(_fh)


@pytest.mark.parametrize("case", ROOTS, ids=[f"k{c['k']}-e{c['eps0']}-n{c['n']}-{c['adjacency']}-d{c['delta']}"
                                             for c in ROOTS])
def test_answer_against_exact_krr_root(case: dict) -> None:
    """The exact root r* of D_up = delta lies in (x_lo, x_hi] (exact_dup.py, independent atoms and sums).
    Catches an answer below r* (an under-reported delta: get_delta(answer) <= delta < D_up(answer)), a
    get_delta below the exact value, and answers looser than xtol plus the certified gap."""
    rr = RandomizedResponse(case["k"], case["eps0"])
    n, adj, d = case["n"], case["adjacency"], case["delta"]
    e = ShuffleAccountant(rr, n, adj).get_epsilon(d, xtol=XTOL)
    assert e > case["x_lo"]  # else the exact value at the answer exceeds delta
    if e < case["x_hi"]:  # (inside the 2e-7 bracket: decide with the exact value itself)
        assert dup_krr_any(case["k"], case["eps0"], e, n, adj) <= d
    # certified upper value >= exact value (exact at x_lo > delta, at x_hi the stored one)
    lo_hi, up_hi = ShuffleAccountant(rr, n, adj).get_delta_bounds(case["x_hi"])
    assert lo_hi <= case["exact_at_hi"] <= up_hi
    assert ShuffleAccountant(rr, n, adj).get_delta(case["x_lo"]) > d
    # a probe (decision mode) never answers <= delta where the exact value exceeds it
    cap0 = case["eps0"] if adj == "replace" else None
    for f in (1.0, 1.0 - 1e-4, 1.0 - 1e-3):
        assert S.probe(ShuffleAccountant(rr, n, adj), case["x_lo"] * f, d, cap0) > d
    # tight: xtol plus the gap between the certified and the exact root (at most 0.2 % on these cases,
    # measured 0.01 %-0.19 %)
    assert e <= case["x_hi"] * (1.0 + XTOL) * (1.0 + 2e-3)


def test_numpy_fft_equals_scipy_on_every_single_worker_length() -> None:
    """fft._rfft_pair uses numpy.fft below 2^16 points; lengths are 5-smooth (next_fast_len_real), odd
    ones included (3^a 5^b). Catches a numpy build whose pocketfft differs from scipy's (then the
    F1 assumption of docs/accountant.md §3.6.2 would be about another algorithm)."""
    sizes = sorted({2**a * 3**b * 5**c for a in range(17) for b in range(11) for c in range(7)
                    if 16 <= 2**a * 3**b * 5**c <= 1 << 16})
    rng = np.random.default_rng(11)
    for N in sizes:
        x = np.exp(-700.0 * rng.random(N)) if N % 2 else rng.random(N)  # (wide dynamic range on odd lengths)
        z = np.fft.rfft(x)
        assert np.array_equal(z, sfft.rfft(x)), N
        q = z * z * z
        assert np.array_equal(np.fft.irfft(q, N), sfft.irfft(q, n=N)), N


def test_next_fast_len_real_against_scipy() -> None:
    rng = np.random.default_rng(12)
    targets = list(range(1, 12_000)) + [int(t) for t in rng.integers(1, 1 << 30, 4000)]
    targets += [2**k + d for k in range(1, 31) for d in (-1, 0, 1)] + [3**k + 1 for k in range(1, 19)]
    assert [next_fast_len_real(t) for t in targets] == [sfft.next_fast_len(t, real=True) for t in targets]


def test_order_of_calls_and_caches_change_nothing() -> None:
    """get_epsilon for two deltas in either order, repeated, get_delta before or after, with the
    process-wide caches cleared or warm: bit-identical to fresh accountants. Catches a per-search memo
    (laws, beyond-60 caps, phase-1 lead law) leaking into another search, a cache keyed too coarsely,
    and a probe that reads get_delta's running minimum. Found here before the fix (the probe capped its
    reporting map by that minimum): 3-RR eps0 = 2, n = 2e4, replace-one, delta = 1e-6 gave 0.07428495
    fresh and 0.07429312 after get_delta(0.07428495) (within xtol, still certified)."""
    rr, n = RandomizedResponse(3, 2.0), 20_000
    for adj in ("replace", "zero_out"):
        clear_caches()
        f6 = ShuffleAccountant(rr, n, adj).get_epsilon(1e-6)
        f9 = ShuffleAccountant(rr, n, adj).get_epsilon(1e-9)
        g6 = ShuffleAccountant(rr, n, adj).get_delta(f6)
        a = ShuffleAccountant(rr, n, adj)
        assert (a.get_epsilon(1e-9), a.get_epsilon(1e-6), a.get_delta(f6)) == (f9, f6, g6)
        b = ShuffleAccountant(rr, n, adj)
        assert (b.get_delta(f6), b.get_epsilon(1e-6), b.get_epsilon(1e-9)) == (g6, f6, f9)
        c = ShuffleAccountant(rr, n, adj)
        assert (c.get_epsilon(1e-6), c.get_epsilon(1e-6), c.get_delta(f6)) == (f6, f6, g6)


def test_probe_ignores_the_running_minimum() -> None:
    """The probe decides on get_delta's value BEFORE its running minimum (docs/accountant_atoms.md §8):
    after get_delta(e1) <= v, a probe at e2 > e1 against v answers as on a fresh accountant. With the
    minimum in its reporting map (the code reviewed), the probe at e2 returned <= v from the memo alone,
    and 'get_delta(hi) <= delta for a fresh accountant' rested on the certified values being
    non-increasing in eps, which nothing guarantees (none was seen non-monotone: 1800 points, 14 laws)."""
    rr, n, adj, d = RandomizedResponse(2, 1.0), 10_000, "zero_out", 1e-6
    e = ShuffleAccountant(rr, n, adj).get_epsilon(d)
    for f1 in (1.0, 1.0005):
        acc = ShuffleAccountant(rr, n, adj)
        e1 = e * f1
        v1 = acc.get_delta(e1)
        assert v1 <= d
        for f2 in (1e-5, 1e-3):
            e2 = e1 * (1 + f2)
            u = S.probe(acc, e2, v1, None)
            assert u == S.probe(ShuffleAccountant(rr, n, adj), e2, v1, None)
            fresh = ShuffleAccountant(rr, n, adj).get_delta(e2)
            assert (u <= v1) == (fresh <= v1)
