"""get_epsilon's decision mode and the import-free helpers of the binary-RR speed work
(docs/accountant_atoms.md §8): every answer certified (get_delta at the answer, from a fresh
accountant, at most delta; the exact blanket divergence at most delta there) and tight (the exact
value exceeds delta 0.3 % below it); a decided probe agrees with get_delta's own comparison; a
decided refinement is a prefix of get_delta's (its upper value at least get_delta's); the pure
Python FFT length equals scipy's and numpy's FFT equals scipy's bit for bit (what fft.py relies on).
"""

from __future__ import annotations


import numpy as np
import pytest
import scipy.fft as sfft

from _krr_reference import exact_two_atom
from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant import search as S
from sharpdp.shuffle.accountant.driver import certify, lattice_for_two_atoms
from sharpdp.shuffle.accountant.fft import next_fast_len_real
from sharpdp.shuffle.accountant.plain import Bracket
from sharpdp.shuffle.laws import laws_for

DELTA = 1e-6




def exact(rr: RandomizedResponse, x: float, n: int, adjacency: str) -> float:
    """The exact blanket divergence (max over the laws) at x."""
    return max(exact_two_atom(float(g), law.values, law.probs, n) for g, law in laws_for(rr, x, adjacency))


@pytest.mark.parametrize("eps0, n, adjacency", [(0.5, 1000, "replace"), (4.0, 1000, "zero_out"),
                                                (1.0, 100_000, "zero_out"), (4.0, 100_000, "replace")])
def test_answer_certified_and_tight_against_binomial_sums(eps0: float, n: int, adjacency: str) -> None:
    rr = RandomizedResponse(2, eps0)
    e = ShuffleAccountant(rr, n, adjacency=adjacency).get_epsilon(DELTA)
    fresh = ShuffleAccountant(rr, n, adjacency=adjacency)  # (no memo of the search: get_delta's own value)
    assert fresh.get_delta(e) <= DELTA
    assert exact(rr, e, n, adjacency) <= DELTA < exact(rr, e * (1.0 - 3e-3), n, adjacency)


@pytest.mark.parametrize("adjacency", ["replace", "zero_out"])
def test_decided_probes_agree_with_get_delta(adjacency: str) -> None:
    """Around the answer (within +-0.4 %), a probe <= delta implies get_delta <= delta there, and a
    probe > delta comes with get_delta > delta."""
    rr, n = RandomizedResponse(2, 1.0), 10_000
    e = ShuffleAccountant(rr, n, adjacency=adjacency).get_epsilon(DELTA)
    cap0 = 1.0 if adjacency == "replace" else None
    seen = set()
    for f in (0.996, 0.998, 0.999, 1.0, 1.001, 1.002, 1.004):
        x = e * f
        u = S.probe(ShuffleAccountant(rr, n, adjacency=adjacency), x, DELTA, cap0)
        d = ShuffleAccountant(rr, n, adjacency=adjacency).get_delta(x)
        assert (u <= DELTA) == (d <= DELTA), (f, u, d)
        seen.add(u <= DELTA)
    assert seen == {True, False}  # both sides probed


def test_decided_refinement_is_a_prefix_of_get_deltas() -> None:
    """certify with a decision stops early; its bracket holds the exact value, its upper value is at
    least the full refinement's (the minimum over more passes of the same sequence), and the value
    the decision saw (blocks: with the largest unblocking shift) is at least both."""
    rr, n = RandomizedResponse(2, 1.0), 10_000
    with lattice_for_two_atoms():  # (the lattice engine's passes: binary RR takes the exact sum otherwise)
        _decided_prefix(rr, n)


def _decided_prefix(rr: RandomizedResponse, n: int) -> None:
    for x in (0.0204, 0.0207, 0.021):  # (values near 1e-6: the answer at delta = 1e-6 is ~0.02068)
        for g, law in laws_for(rr, x, "zero_out"):
            full = certify(law, float(g), n, 1e-2, 1, Bracket())
            calls: list[tuple[float, float]] = []

            def decide(lo: float, up: float) -> bool:
                calls.append((lo, up))
                return up <= 1.05 * full.upper

            dec = certify(law, float(g), n, 1e-2, 1, Bracket(decide=decide))
            ex = exact_two_atom(float(g), law.values, law.probs, n)
            assert dec.lower <= ex <= dec.upper
            assert full.lower <= ex <= full.upper
            assert full.upper <= dec.upper <= calls[-1][1] <= 1.05 * full.upper
            assert calls[-1][1] <= dec.upper * (1 + 1e-6)  # (the largest shift: ~1e-8 relative here)


def test_next_fast_len_real_matches_scipy() -> None:
    rng = np.random.default_rng(7)
    targets = list(range(1, 5000)) + [int(t) for t in rng.integers(5000, 1 << 25, 3000)]
    assert [next_fast_len_real(t) for t in targets] == [sfft.next_fast_len(t, real=True) for t in targets]


def test_numpy_fft_is_scipy_fft_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    for N in (16, 90, 1000, 1536, 4050, 30000, 65536):
        x = rng.random(N)
        z = sfft.rfft(x)
        assert np.array_equal(np.fft.rfft(x), z)
        assert np.array_equal(np.fft.irfft(z, n=N), sfft.irfft(z, n=N))
