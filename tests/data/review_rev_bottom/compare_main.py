"""Branch (docs/accountant.md §9.3 short-cuts) against main's split search (tests/data/review_rev_bottom/
via_bottom_main.py = `git show main:python/sharpdp/shuffle/accountant/via_bottom.py`) on the same randomizer,
n and eps, each with its own fresh accountant (no shared caches). JSON lines: brackets and CPU seconds."""
import importlib.util
import json
import pathlib
import sys
import time
from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

spec = importlib.util.spec_from_file_location("via_bottom_main", pathlib.Path(__file__).with_name("via_bottom_main.py"))
vbm = importlib.util.module_from_spec(spec)
sys.modules["via_bottom_main"] = vbm
spec.loader.exec_module(vbm)


def old_report(s, n, eps):
    acc = ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace")
    acc._bottom = vbm.ViaBottom(acc._bottom.bottom, acc._bottom.legs)
    return acc.get_delta_bounds(eps)


def new_report(s, n, eps):
    return ShuffleAccountant(GaussianRandomizer(s, 1), n, "replace").get_delta_bounds(eps)


cells = [tuple(float(x) if "." in x else int(x) for x in c.split(",")) for c in sys.argv[1:]]
for s, n, eps in cells:
    t = time.process_time()
    nl, nu = new_report(s, n, eps)
    tn = time.process_time() - t
    t = time.process_time()
    ol, ou = old_report(s, n, eps)
    to = time.process_time() - t
    print(json.dumps(dict(s=s, n=n, eps=eps, new=(float(nl), float(nu)), old=(float(ol), float(ou)), t_new=tn,
                          t_old=to)), flush=True)
