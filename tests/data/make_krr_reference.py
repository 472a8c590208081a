"""Generate tests/data/krr_replace_reference.json: exact blanket divergences of k-ary randomized response.

For k-RR with local epsilon eps0 under replace-one adjacency, the blanket (mass gamma = k / Z,
Z = e^eps0 + k - 1, uniform) and the worst-case pair (x1, x1') give the privacy-amplification
variable L = l_eps(Y), Y uniform on the k symbols, with atoms (closed form, independent of
sharpdp)

    k (e^eps0 - e^eps) / Z       with probability 1/k   (Y = x1),
    k (1 - e^eps e^eps0) / Z     with probability 1/k   (Y = x1'),
    k (1 - e^eps) / Z            with probability (k - 2)/k.

The value is the blanket divergence D_up(eps) = E[(sum_{i<=n} B_i L_i)_+] / (n gamma),
B_i ~ Bernoulli(gamma), computed exactly by summing over the multinomial counts of the three
atoms and the blanket-free 0 atom (float64 binomial pmfs; relative error far below the 7
significant digits stored). Run from the repository root:

    python tests/data/make_krr_reference.py
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
from scipy import stats

CASES = [(3, 1.0, 0.3, 200), (5, 1.0, 0.25, 300), (10, 2.0, 0.4, 300)]  # (k, eps0, eps, n)


def krr_replace_law(k: int, eps0: float, eps: float) -> tuple[list[float], list[float], float]:
    e0, ee = math.exp(eps0), math.exp(eps)
    Z = e0 + k - 1
    return [k * (e0 - ee) / Z, k * (1 - ee * e0) / Z, k * (1 - ee) / Z], [1 / k, 1 / k, (k - 2) / k], k / Z


def exact_dup(values: list[float], probs: list[float], gamma: float, n: int) -> float:
    """(1/(n gamma)) E[(sum_i B_i L_i)_+] for a law with 3 atoms, by summing multinomial counts."""
    a, b, c = values
    pa, pb, pc = (gamma * p for p in probs)
    p0 = 1.0 - gamma
    total = 0.0
    for n1 in range(n + 1):
        w1 = stats.binom.pmf(n1, n, pa)
        if w1 < 1e-300:
            continue
        n2 = np.arange(n - n1 + 1)
        w2 = stats.binom.pmf(n2, n - n1, pb / (1 - pa))
        for j, m in enumerate(n - n1 - n2):
            n3 = np.arange(m + 1)
            w3 = stats.binom.pmf(n3, m, pc / (pc + p0)) if pc + p0 > 0 else np.ones(1)
            total += w1 * w2[j] * np.sum(w3 * np.maximum(n1 * a + n2[j] * b + n3 * c, 0.0))
    return total / (n * gamma)


def main() -> None:
    rows = []
    for k, eps0, eps, n in CASES:
        vals, probs, gamma = krr_replace_law(k, eps0, eps)
        rows.append({"k": k, "epsilon0": eps0, "epsilon": eps, "n": n,
                     "delta": float(f"{exact_dup(vals, probs, gamma, n):.6e}")})
    out = {"source": "tests/data/make_krr_reference.py: exact multinomial sums (replace-one, 7 significant digits)",
           "rows": rows}
    path = pathlib.Path(__file__).with_name("krr_replace_reference.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
