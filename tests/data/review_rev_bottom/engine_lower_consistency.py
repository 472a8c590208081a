"""The engine's legs at target 0.1 (the cover's engine tier, docs/accountant.md §9.3) against the same legs
at target 1e-3 from a fresh zero-out accountant: the loose lower value must be <= the tight upper value
(both bracket the same D_up). sigma0 = 0.46, n = 1000 (no closed forms above n = 500: the engine carries
the cover) and n = 50. JSON lines."""
import json
import sys

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

n = int(sys.argv[1])
loose = ShuffleAccountant(GaussianRandomizer(0.46, 1), n)
tight = ShuffleAccountant(GaussianRandomizer(0.46, 1), n)
for j, es in ((0, (0.0, 0.0625, 0.125, 0.25, 0.5, 0.75, 1.0, 2.0)), (1, (0.25, 0.5, 1.0, 2.0))):
    for e in es:
        a = loose._report(e, 0.1, only=(j,))
        b = tight._report(e, 1e-3, only=(j,))
        print(json.dumps(dict(n=n, j=j, e=e, loose=(float(a.lower), float(a.upper)),
                              tight=(float(b.lower), float(b.upper)), ok=bool(a.lower <= b.upper))), flush=True)
