"""Brute-force sweep for tests/test_review_tables8.py (review of _tables._erf_entries_range).

For every scale s below: J = _search_J(s), the direct entries _erf_entries(range(J), scale) (one
190-bit mpmath erf per entry) and the Taylor entries _erf_entries_range(J, scale); records J, the
SHA-256 of the direct entries (16 bytes little-endian each), whether the two lists are equal, and
the number of entries the Taylor path sent back to the direct evaluation. The test re-runs only the
cheap Taylor path for a few of the scales and compares its digest with the stored direct one.

Scales: the switch J = 128 / 129 (both float neighbours of the crossing), J = 129 .. 140 and
J = 64 q + 1 (a last block of one entry), non-nice floats, the CRLB scales 2^k, the BMG default
range [256, 512), and large scales (4096, 12800, 10^4 + random, near MAX_TABLE_SIZE).

Run: python tests/data/review_tables8/make_reference.py (loads the worktree's _tables.py by path)
(about 3 minutes of CPU). Writes sweep.json next to this file.
"""
from __future__ import annotations

import hashlib
import json
import math
import pathlib
import random
import sys
import time

import importlib.util

# the worktree's _tables.py itself (numpy and mpmath only; no need for the compiled core)
_SRC = pathlib.Path(__file__).resolve().parents[3] / "python" / "sharpdp" / "_tables.py"
_spec = importlib.util.spec_from_file_location("sharpdp_tables_under_review", _SRC)
T = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = T
_spec.loader.exec_module(T)


def digest(entries):
    return hashlib.sha256(b"".join(e.to_bytes(16, "little") for e in entries)).hexdigest()


def crossing(Jt):
    """The largest float s with _search_J(s) <= Jt (bisection on floats)."""
    lo, hi = Jt / 13.2, (Jt + 2) / 12.9
    assert T._search_J(lo) <= Jt < T._search_J(hi)
    while math.nextafter(lo, math.inf) < hi:
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if T._search_J(mid) <= Jt:
            lo = mid
        else:
            hi = mid
    return lo


def scales():
    rnd = random.Random(20261203)
    out = []
    for Jt in (128, 129, 191, 192, 255, 256, 320):
        c = crossing(Jt)
        out += [c, math.nextafter(c, math.inf)]
    out += [0.3, 1.0, 2.5, 9.0, 9.8, 10.0, 10.5, 11.0, 13.0, 15.5, 20.0, 25.0, 33.3, 40.0, 64.0, 97.3]
    out += [0.1 + 255.9, 128.0, 256.0, 300.0, 384.1, 511.99, 1024.0, 2048.0, 1000.0 / 3.0]
    out += [rnd.uniform(9.8, 60.0) for _ in range(12)]
    out += [rnd.uniform(60.0, 600.0) for _ in range(6)]
    out += [math.nextafter(1000.0, 0.0), math.nextafter(1000.0, math.inf)]
    out += [4096.0, 12800.0, 1e4 + rnd.random(), rnd.uniform(2000, 19800), 19859.0]
    return out


def main():
    rows = []
    for s in scales():
        J = T._search_J(s)
        sc = T._scale(T._context(), s)
        calls = []
        orig = T._erf_entries
        T._erf_entries = lambda idx, scale, _o=orig: (calls.append(len(list(idx))), _o(idx, scale))[1]
        t0 = time.process_time()
        fast = T._erf_entries_range(J, sc)
        t1 = time.process_time()
        T._erf_entries = orig
        direct = T._erf_entries(range(J), sc)
        t2 = time.process_time()
        redo = 0 if J <= 2 * T._TAYLOR_BLOCK else sum(calls)
        row = {"s": s.hex(), "J": J, "digest": digest(direct), "equal": fast == direct, "redo": redo,
               "t_fast": round(t1 - t0, 3), "t_direct": round(t2 - t1, 3)}
        if fast != direct:
            row["first_diff"] = next(i for i, (a, b) in enumerate(zip(fast, direct)) if a != b)
        print(s, row, flush=True)
        rows.append(row)
    path = pathlib.Path(__file__).with_name("sweep.json")
    path.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    bad = [r for r in rows if not r["equal"]]
    print(f"{len(rows)} scales, {sum(r['J'] for r in rows)} entries, {len(bad)} unequal")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
