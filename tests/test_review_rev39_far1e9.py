"""Review rev39 (session 39): an independent reference for rev38's open item (c), GaussianRandomizer(1), n = 1e9,
zero-out, eps = 0.001 (the bracket moved by session 38's §52-§53, docs/accountant_tail.md, and the cell session 39's
far39 / hat39 work on), where main's own tight bracket cannot help (rel_tol 1e-4 with every session-38 switch off,
tests/_main_floats34.SESSION37: [9.657912e-10, 9.855217e-10], 2 % wide: the size caps bind) and the double-precision
FFT of tests/_rev29_fft_reference.py does not converge (h = 0.5, 0.25, 0.125: 6.70e-10, 8.98e-10, 1.25e-9: the
transform's round-off at n gamma = 3.2e8 users against a value 1e-6 of the sum's spread).

Reference: the same FFT (tests/_rev29_fft_reference.py's grid and cell split, node values x > 0) in 80-bit long double
(scipy.fft's pocketfft on np.longdouble; the law's cell masses in double: their relative errors 1e-16 only perturb the
law, not the transform), window [-1.6e6, 2^N h - 1.6e6) (the mean -3.17e5, sd 7.2e4; the law's mass beyond the window
E[L; L > 6.8e6] = 5.06e-14, added to the value: a user beyond the window adds E[(L + S')_+] = E[L; L > W] + O(P(L > W)
|E S'|)), offline (~37 s at h = 0.25 / 2^25, 79 s at
h = 0.125 / 2^26, 3 GB): h = 0.5, 0.25, 0.125 give 9.897932e-10, 9.815663e-10, 9.794398e-10 (differences 8.23e-12,
2.13e-12: second order), Richardson 9.788239e-10 (0.5 / 0.25) and 9.787309e-10 (0.25 / 0.125). The value below:
the latter plus that 5.06e-14; tolerance 3 times the two extrapolations' difference plus 1e-4 relative (3.8e-13, 0.04 %).
Check of the long-double code at n = 1e8 (h = 0.5 / 1): 2.76885e-5 against rev38's double FFT 2.76960e-5 (h = 0.25).
Measured (rev39, main 72b04806): [9.738570e-10, 9.831834e-10] holds it (lower value 0.50 % below, upper 0.45 % above).
"""

from __future__ import annotations

import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant, clear_caches

REF = 9.787309499755873e-10 + 5.0604150326656015e-14
TOL = 3.0 * 9.3e-14 + 1e-4 * REF


@pytest.mark.parametrize("rel_tol", [1e-2])
def test_gauss1_n1e9_eps0001_holds_the_long_double_fft(rel_tol):
    clear_caches()
    lo, up = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10**9, rel_tol=rel_tol).get_delta_bounds(0.001)
    assert lo <= REF + TOL and up >= REF - TOL, (lo, up, REF, TOL)
