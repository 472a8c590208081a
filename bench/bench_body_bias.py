"""The far-tail body's gap split into the hat law's excess and the centroid law's deficit (docs/accountant_tail.md §39).

For each cell (a regime-map cell at n = 1e8 whose body passes dominate the call, §37.2) one ``get_delta_bounds`` runs
with ``far_tail.lattice_pass`` wrapped, so that every body pass of the largest law (its law, clamps T0 and B, step h)
is recorded with its certified values (``main``: the hat law's upper value without the clamp term; the centroid law's
lower value as ``far_tail`` reads it). The first body pass's law and clamps are then run again at the steps h/d,
d in ``--divs`` (the same clamps, rel_tol 1e-4): the finest of those passes gives a certified reference bracket of the
body's value. Per pass it prints the hat's excess over the reference's upper end and the centroid's deficit below
its lower end (both relative, so both are lower bounds on the true excess and deficit), with the engine's tilt theta
and the Gaussian-noise prediction theta^2 n gamma h^2 / 12 of the hat's excess (a per-user rounding variance h^2 / 6
seen at the tilted sum's kink: an estimate, not a bound), and ``pred. v``: e^{theta^2 n vbar / 2} - 1 with the exact
tilted rounding variance vbar = E[B v(L) e^{theta L}] / M(theta), v(l) = (l - x_j)(x_j + h - l), summed over the hat
law at a step 16 times finer than the last pass (its clamp cut where that lattice must fit the size cap; an estimate
too). CPU seconds are ``time.process_time`` of each pass.

    python bench/bench_body_bias.py                      # the three cells of §39.1
    python bench/bench_body_bias.py --cells bmg01 --divs 8,16
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

CELLS = {
    # (randomizer kind, gamma or None, sigma0, n, eps): bench/bench_regimes.py's families a and b, zero-out
    "bmg01": ("bmg", 0.039943127470521624, 0.5276147158804813, 10**8, 0.01),
    "bmg001": ("bmg", 0.17072156412461156, 0.7801442377557667, 10**8, 0.001),
    "gauss1": ("gauss", None, 1.0, 10**8, 0.001),
}
DIVS = {"bmg01": (8, 16), "bmg001": (2, 4, 16), "gauss1": (4, 8)}


def run(cell: str, divs: tuple[int, ...]) -> None:
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant
    from sharpdp.shuffle.accountant import far_tail
    from sharpdp.shuffle.accountant.lattice import J_LO, K_MAX, Coarsen, lattice_laws

    kind, g, s, n, eps = CELLS[cell]
    rnd = BlanketMixedGaussian(g, s, 1) if kind == "bmg" else GaussianRandomizer(s, 1)
    orig, rec = far_tail.lattice_pass, []

    def spy(law, gamma, nn, h, T, B, *a, **k):
        t = time.process_time()
        r = orig(law, gamma, nn, h, T, B, *a, **k)
        rec.append((law, gamma, h, T, B, r, time.process_time() - t))
        return r

    far_tail.lattice_pass = spy
    try:
        t0 = time.process_time()
        lo, up = ShuffleAccountant(rnd, n, "zero_out").get_delta_bounds(eps)
        cpu = time.process_time() - t0
    finally:
        far_tail.lattice_pass = orig
    print(f"== {cell}: n = {n:g}, eps = {eps}: [{lo!r}, {up!r}] in {cpu:.3f} s CPU")
    law, gamma, h0, T, B = rec[0][:5]
    passes = [(h, r, dt) for (lw, _, h, _, _, r, dt) in rec if lw is law and not isinstance(r, Coarsen)]
    refs = []
    for d in divs:
        t = time.process_time()
        r = orig(law, gamma, n, h0 / d, T, B, 1e-4, 1)
        if not isinstance(r, Coarsen):
            refs.append((h0 / d, r, time.process_time() - t))
    ref_up = min(r.main for _, r, _ in refs + passes)
    ref_lo = max(far_tail._body_lower(r) for _, r, _ in refs + passes)
    print(f"   clamps T0 = {T:g}, B = {B:g}; reference bracket [{ref_lo:.8e}, {ref_up:.8e}] "
          f"({(ref_up - ref_lo) / ref_lo:.3%})")
    h_last = min(h for h, _, _ in passes + refs)
    hf = h_last / 16
    Tm = min(T, math.floor(0.9 * K_MAX / J_LO * hf / h0 - B / h0) * h0)
    fine = lattice_laws(law, gamma, hf, Tm, B, lower=False)
    xf = (fine.k0 + np.arange(fine.g.size)) * hf

    def pred_v(h: float, th: float) -> float:
        w = fine.g * np.exp(th * xf)
        off = np.mod(xf, h)
        return math.expm1(th * th * n * float(np.sum(w * off * (h - off)) / np.sum(w)) / 2)

    print(f"   {'step h':>10} {'N':>8} {'theta':>10} {'hat up':>14} {'excess':>8} {'pred.':>8} {'pred. v':>8} "
          f"{'centroid lo':>14} {'deficit':>8} {'CPU s':>6}")
    for tag, rows in (("pass", passes), ("ref", refs)):
        for h, r, dt in rows:
            th = r.grid.theta
            pred = th * th * n * gamma * h * h / 12
            blo = far_tail._body_lower(r)
            print(f"{tag:>4} {h:>10.6g} {r.grid.N:>8} {th:>10.4g} {r.main:>14.8e} {r.main / ref_up - 1:>8.3%} "
                  f"{pred:>8.3%} {pred_v(h, th):>8.3%} {blo:>14.8e} {1 - blo / ref_lo:>8.3%} {dt:>6.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default=",".join(CELLS), help="comma-separated among " + ", ".join(CELLS))
    ap.add_argument("--divs", default="", help="the reference steps' divisors of the first body step (default: per cell)")
    a = ap.parse_args()
    for c in a.cells.split(","):
        run(c, tuple(int(x) for x in a.divs.split(",")) if a.divs else DIVS[c])


if __name__ == "__main__":
    main()
