"""Review rev39 (session 39): two jump-dominated cells at n = 1e8 that hat39's §55 (docs/accountant_tail.md,
``limits.HAT_DENSITY``: the jump term's rounding cost from L's tail density) and session 38's §53 move, against a
reference independent of the accountant: GaussianRandomizer(1), zero-out, eps = 0.01 (§55's first example: main's
lower value 4.30852e-10 is the centroid window's) and BlanketMixedGaussian(0.020104, 0.456590), eps = 0.1 (§55's
second; its rev31_conc pin now runs with the switch off).

Reference (tests/_rev39_jump_reference.py, offline): users with L > T are jumps; with at most one jump,
D_up = E[S_+] / (n gamma) = (1 - gamma P(L > T))^(n - 1) E[psi(L); L > T] + E[S'_+] (1 - gamma P(L > T))^n / (n gamma),
psi(l) = E[(l + S')_+], S' the thinned sum of the other users with L conditioned on L <= T (an FFT of the truncated law
in long double, the cell split of tests/_rev29_fft_reference.py), the outer integral by composite Gauss-Legendre over
the law's normal variable. The plain FFT (long double) of the whole sum drifts by +-3e-13 (5e-4) at the Gaussian cell
(the node values at x > 0 sit ~1e-16 of the sum's peak); here psi reads the body only.
* Gaussian, T = 1e5 (P(S' > -T) = 1.4e-11: E[S'_+] negligible; two jumps left out, at most ~2e-5 of the value):
  h = 1, 0.5, 0.25: 4.311113e-10, 4.309768e-10, 4.309429e-10 (second order: differences 1.345e-13, 3.39e-14),
  Richardson 4.309320e-10 (1 / 0.5) and 4.309316e-10 (0.5 / 0.25). T = 2e5 at h = 0.5 without E[S'_+]: 4.309974e-10
  (+4.8e-5: the pairs of jumps above 1e5 it counts).
* BMG, T = 4e5 (two jumps: ~5e-7 of the value): h = 1, 0.5: 9.940259e-7, 9.940159e-7, Richardson 9.940125e-7; at
  T = 1.5e5: 9.938182e-7 (h = 0.5; two jumps left out ~1.3e-4, as measured).
Measured (rev39): main 72b04806 [4.308518e-10, 4.314091e-10] and [9.934731e-7, 9.944717e-7]; hat39 (54a81cee)
[4.302679e-10, 4.321119e-10] and [9.932880e-7, 9.948104e-7]: all hold the references (main's Gaussian lower value
1.9e-4 below).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches

# cell: (reference interval: Richardson value -+ its uncertainty; upper end + the two-jump allowance)
REF = {("G", 1.0, 0.0, 10**8, 0.01): (4.30931e-10 - 2e-15, 4.30932e-10 + 2e-14),
       ("B", 0.020104468458158786, 0.45659017565152327, 10**8, 0.1): (9.9401e-7 - 3e-11, 9.9401e-7 + 3e-11)}


@pytest.mark.parametrize("cell", sorted(REF), ids=str)
def test_bracket_holds_the_one_jump_reference(cell):
    kind, a, b, n, eps = cell
    r = GaussianRandomizer(a, 1) if kind == "G" else BlanketMixedGaussian(a, b, 1)
    clear_caches()
    acc = ShuffleAccountant(r, n, "zero_out")
    lo, up = acc.get_delta_bounds(eps)
    ref_lo, ref_up = REF[cell]
    assert lo <= ref_up and up >= ref_lo, (cell, lo, up, REF[cell])
    assert up - lo <= acc.rel_tol * lo
