"""With the short-cuts of docs/accountant.md §9.3-§9.4 against the plain split search of §9 (_old.py) on the same
randomizer, n and eps, each with its own fresh accountant (no shared caches). JSON lines: brackets and CPU seconds."""
import json
import sys
import time

from _old import accountant


def old_report(s, n, eps):
    return accountant(s, n, True).get_delta_bounds(eps)


def new_report(s, n, eps):
    return accountant(s, n, False).get_delta_bounds(eps)


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
