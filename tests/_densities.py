"""Numba densities shared by the tests of ``GeneralRandomizer`` (and ``bench/accountant_values.py``).

Binary randomized response with local epsilon ``EPS0`` = 1 nat, lifted to a density on the
message space [-1, 1]: the sign of y is the RR output, its magnitude uniform. For inputs
x in {-1, +1},

    lifted_rr(y, x) = (1 + T x sign(y)) / 2,   T = tanh(EPS0 / 2),

so the likelihood ratio of the two inputs is e^EPS0 on each half-line and the randomizer has
the privacy of ``RandomizedResponse(2, EPS0)``. Its privacy blanket is the uniform density
``half`` on [-1, 1] with weight gamma = 1 - T (the pointwise minimum over x of lifted_rr is
(1 - T) / 2 = gamma * half). Pass ``breakpoints=[0.0]``: the density jumps at y = 0.
"""

from __future__ import annotations

import math

from numba import njit

#: Local epsilon of the lifted binary RR (nats).
EPS0 = 1.0
#: tanh(EPS0 / 2): the RR's bias; the blanket weight is gamma = 1 - T.
T = math.tanh(EPS0 / 2)


@njit(cache=True)
def lifted_rr(y, x):
    """Density at y in [-1, 1] of the lifted binary RR for input x in [-1, 1]."""
    return 0.5 * (1 + T * x * (1.0 if y >= 0 else -1.0))


@njit(cache=True)
def half(y):
    """The blanket of ``lifted_rr``: the uniform density 1/2 on [-1, 1]."""
    return 0.5
