"""The closed form's Bennett tail bounds stay positive where exp underflows (docs/accountant_tail.md §18 (g)): an
upper value of a positive probability is never 0 (an underflow to 0 would under-report the deep tail)."""

import math

import numpy as np

from sharpdp.shuffle.accountant import concentrated
from sharpdp.shuffle.accountant.limits import TINY


def test_bennett_upper_value_positive_past_underflow():
    w = np.array([1.0, 50.0, 1e3, 1e5])
    e = concentrated._bennett_exp(1.0, 1.0, w)
    assert e[-1] > 800 and np.exp(-e[-1]) == 0.0  # the exponent is past exp's underflow
    up = concentrated._bennett_up(1.0, 1.0, w)
    assert np.all(up > 0) and np.all(up >= TINY)
    # where exp does not underflow, the same floats as exp(-e) (1 + 1e-12) (TINY is below half an ulp)
    assert up[0] == math.exp(-e[0]) * (1 + 1e-12)
