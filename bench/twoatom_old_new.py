"""Binary RR on the 32 cells of bench/binrr_speed.py: get_epsilon(1e-6) and get_delta brackets of the exact
two-atom sum (docs/accountant_atoms.md §12) against the lattice/blocks engine (inside
``lattice_for_two_atoms()``): the new answer, the old one, and at the new answer both engines' brackets
(the new bracket must lie inside the old one). Prints the markdown table of docs/accountant_atoms.md §12.7.

Usage::

    python bench/twoatom_old_new.py [--ns 1e3,1e4,1e5,1e6] [--eps0 0.5,1,2,4]
"""

from __future__ import annotations

import argparse

from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant
from sharpdp.shuffle.accountant.driver import lattice_for_two_atoms

DELTA = 1e-6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns", default="1e3,1e4,1e5,1e6")
    ap.add_argument("--eps0", default="0.5,1,2,4")
    a = ap.parse_args()
    print("| A | eps0 | n | eps new | eps old | new/old - 1 | new [lo, up] at eps new | old [lo, up] there | inside |")
    print("|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for adj in ("replace", "zero_out"):
        for e0 in (float(x) for x in a.eps0.split(",")):
            for n in (int(float(x)) for x in a.ns.split(",")):
                rr = RandomizedResponse(2, e0)
                e_new = ShuffleAccountant(rr, n, adj).get_epsilon(DELTA)
                lo_n, up_n = ShuffleAccountant(rr, n, adj).get_delta_bounds(e_new)
                with lattice_for_two_atoms():
                    e_old = ShuffleAccountant(rr, n, adj).get_epsilon(DELTA)
                    lo_o, up_o = ShuffleAccountant(rr, n, adj).get_delta_bounds(e_new)
                inside = lo_o <= lo_n <= up_n <= up_o
                bad += not inside
                print(f"| {adj} | {e0:g} | {n:.0e} | {e_new:.7g} | {e_old:.7g} | {e_new / e_old - 1:+.2e} | "
                      f"[{lo_n:.10g}, {up_n:.10g}] | [{lo_o:.6g}, {up_o:.6g}] | {'yes' if inside else 'NO'} |",
                      flush=True)
    print(f"cells with the new bracket outside the old one: {bad}")


if __name__ == "__main__":
    main()
