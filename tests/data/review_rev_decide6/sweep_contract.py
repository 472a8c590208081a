"""Sweep: get_delta(get_epsilon(d)) <= d with a FRESH accountant, and tightness
get_delta(e (1 - 2 xtol)) > d, over randomizers, n, adjacency, delta (review rev-decide6).
Usage: python sweep_contract.py SEED COUNT > out.tsv"""
import random
import sys
import time

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, RandomizedResponse, ShuffleAccountant

seed, count = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
XTOL = 1e-3


def rand_config():
    kind = rng.choice(["rr2", "rr3", "rr10", "rr2", "rr3", "bmg", "gauss"])
    if kind.startswith("rr"):
        k = int(kind[2:])
        eps0 = rng.choice([0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0])
        rz, name = RandomizedResponse(k, eps0), f"RR(k={k},eps0={eps0})"
    elif kind == "bmg":
        g, s = rng.choice([0.1, 0.3, 0.5]), rng.choice([0.5, 1.0, 3.0])
        rz, name = BlanketMixedGaussian(g, s, 1), f"BMG({g},{s})"
    else:
        s = rng.choice([0.5, 1.0, 3.0, 10.0])
        rz, name = GaussianRandomizer(s, 1), f"Gauss({s})"
    n = rng.choice([2, 3, 10, 57, 100, 1000, 4096, 10_000, 99_991, 100_000, 1_000_000])
    adj = rng.choice(["replace", "zero_out"])
    if kind == "gauss":
        adj = "zero_out"  # (replace-one goes through bot: its own search, ~30 s at n = 1e5)
    d = rng.choice([1e-3, 1e-4, 1e-6, 1e-8, 1e-10, 1e-12])
    return rz, name, n, adj, d


for _ in range(count):
    rz, name, n, adj, d = rand_config()
    t0 = time.process_time()
    try:
        e = ShuffleAccountant(rz, n, adj).get_epsilon(d, xtol=XTOL)
    except ValueError as ex:
        print(f"{name}\t{n}\t{adj}\t{d}\tVALUEERROR\t{str(ex)[:60]}", flush=True)
        continue
    t1 = time.process_time()
    fresh = ShuffleAccountant(rz, n, adj)
    de = fresh.get_delta(e)
    dl = fresh.get_delta(e * (1 - 2 * XTOL)) if e > 0 else float("nan")
    t2 = time.process_time()
    ok = de <= d
    tight = (dl > d) if e > 0 else True
    print(f"{name}\t{n}\t{adj}\t{d}\t{e!r}\t{de!r}\t{dl!r}\t{'OK' if ok else 'VIOLATION'}\t"
          f"{'tight' if tight else 'LOOSE'}\t{t1 - t0:.2f}\t{t2 - t1:.2f}", flush=True)
