"""Identical accountant calls in one process give the same doubles (the product's "seeded results are reproducible").

Session 43 (fix43) looked for a same-process last-bit difference reported for
tests/test_shuffle_api_edges.py::test_refine_stops_when_the_capped_clamp_dominates (its live first pass vs the value
stored in tests/data/capped_clamp_reference.json, 8.9e-16 relative: 0x1.0d0c3b22c0675p-60 live on this AVX2 machine,
0x1.0d0c3b22c0671p-60 stored on 2026-12-04 by tests/data/make_capped_clamp_reference.py in another process) and found
none in one process: this machine gives its own value in every process tried (fresh processes with OpenBLAS's core
type and thread count varied), so the stored one was made on another CPU (numpy's float64 exp/log and OpenBLAS pick
their kernels by CPU). These tests pin the in-process claim: the same call repeated, on the same and on
fresh objects, with 1 or 2 threads, with the heap shifted between calls, with the process-wide caches cleared, and
after another eps, returns the same float.hex (exact equality is the claim here, not a recorded value).
"""

import numpy as np

import sharpdp.shuffle as SH
import sharpdp.shuffle.accountant.plain as P
from _main_floats34 import switch
from sharpdp.shuffle.round_cache import clear_caches

CASE = (1.0, 18.0, 1000, 1e-2)  # (sigma0, eps, n, rel_tol): test_shuffle_api_edges's CAPPED_CLAMP_CASE


def _law():
    sigma0, eps, _, _ = CASE
    return SH.GaussianRandomizer(sigma0, 1).privacy_amplification_laws(eps)[0]


def test_plain_pass_repeats_bit_for_bit(monkeypatch):
    switch(monkeypatch, "END_ATOM_SNAP", False)  # the conditions of test_shuffle_api_edges' capped-clamp test
    _, _, n, rel_tol = CASE
    gam, law = _law()
    first = P.certify_law(law, gam, n, rel_tol, 1, max_rounds=1).upper
    assert P.certify_law(law, gam, n, rel_tol, 1, max_rounds=1).upper.hex() == first.hex()  # same law object
    junk = [np.empty(int(s)) for s in np.random.default_rng(0).integers(1, 5000, 50)]  # shift the heap
    gam2, law2 = _law()
    assert P.certify_law(law2, gam2, n, rel_tol, 2, max_rounds=1).upper.hex() == first.hex()  # fresh law, 2 threads
    assert len(junk) == 50


def test_accountant_repeats_bit_for_bit():
    def hx(v):
        return tuple(x.hex() for x in v)

    def acc(**kw):
        return SH.ShuffleAccountant(SH.GaussianRandomizer(1.0, 1), 1000, **kw)

    a = acc()
    want = hx(a.get_delta_bounds(2.0))
    clear_caches()
    assert hx(a.get_delta_bounds(2.0)) == want
    clear_caches()
    assert hx(acc(threads=1).get_delta_bounds(2.0)) == want
    clear_caches()
    assert hx(acc(threads=2).get_delta_bounds(2.0)) == want
    clear_caches()
    b = acc()
    b.get_delta_bounds(1.5)  # another eps first: warm state along the process
    assert hx(b.get_delta_bounds(2.0)) == want
    assert float.fromhex(want[0]) < float.fromhex(want[1])  # a real bracket (not a cached constant)
