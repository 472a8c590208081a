"""Random probe (review rev-krr6, not run by pytest): the C++ class kernel against refs.class_delta at
random (eps0, n, j, eps, nats). `python tests/data/review_rev_krr6/random_probe.py SEED SECONDS`; seed 1,
360 s: 6 581 cases, none outside its bracket (smallest relative margins 1.3e-14 on both sides)."""

from __future__ import annotations

import math
import os
import random
import sys
import time

import mpmath as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refs  # noqa: E402

from sharpdp import _core  # noqa: E402

U = 2.0**-53
ULP = 8 * U


def kernel(e0: float, eps: float, n: int, j: int, nats: float) -> tuple[float, float]:
    lp = -math.log1p(math.exp(-e0))
    p, q = math.exp(lp), math.exp(lp - e0)

    def rel(z: float) -> float:
        return 0.0 if z == 0.0 else ULP + (e0 + 1) * (2 * ULP + U) + ULP + U * (1 + abs(z)) * 1.01 + 2 * U

    a, b, e = -p * math.expm1(eps - e0), q * math.expm1(eps + e0), math.expm1(eps)
    r = _core.exact_krr.class_bracket(e0, p, q, a, b, e, rel(eps - e0), rel(eps + e0), ULP + 2 * U, n, j, nats)
    return r[0], r[1]


def main(seed: int, seconds: float) -> None:
    random.seed(seed)
    t = time.time()
    bad = cnt = 0
    m_lo = m_up = 1e9
    while time.time() - t < seconds:
        e0 = math.exp(random.uniform(math.log(1e-3), math.log(12)))
        n = int(math.exp(random.uniform(math.log(2), math.log(20000))))
        j = random.randrange(n)
        eps = random.choice([0.0, random.uniform(0, e0), e0 * (1 - 10 ** random.uniform(-12, -1)),
                             e0 * 10 ** random.uniform(-8, -1)])
        nats = random.choice([20.0, 25.0, 31.0, 40.0, 80.0, 300.0, random.uniform(1, 300)])
        d = refs.class_delta(e0, eps, n, j, deep=False)
        if d == refs.TINY:
            continue
        lo, up = kernel(e0, eps, n, j, nats)
        cnt += 1
        if not (lo <= d <= up):
            bad += 1
            print("VIOL", e0, eps, n, j, nats, lo, mp.nstr(d, 20), up, flush=True)
        if d > 1e-290:
            if lo > 0:
                m_lo = min(m_lo, float((d - lo) / d))
            m_up = min(m_up, float((up - d) / d))
    print("cases", cnt, "bad", bad, "min rel margin lower", m_lo, "upper", m_up)


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]))
