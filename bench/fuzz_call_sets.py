"""Which sharpdp functions a replace-one accountant call reaches (a call-event trace, compared as sets).

Used to choose the cheaper extreme inputs of tests/test_fuzz_public_api.py's huge cases: a candidate
must call every function the former input called. ``gauss``: ShuffleAccountant(GaussianRandomizer(
sigma0, 1), n, adjacency="replace").get_epsilon(delta); ``bmg``: calibrate_bmg(..., adjacency="replace").

    python bench/fuzz_call_sets.py gauss '{"sigma0": 1.0, "n": 1000, "delta": 1e-6}' /tmp/base.pkl
    python bench/fuzz_call_sets.py gauss '{"sigma0": 1.0, "n": 100, "delta": 1e-6}' /tmp/base.pkl

The first call (no file yet) saves the set; later calls print the functions missing from it and the
extra ones. Run each input in a fresh process (lru caches hide repeated calls).
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import time

import sharpdp.shuffle as SH


def _calls(f):
    seen = set()

    def tracer(frame, event, arg):
        if event == "call" and "sharpdp" in frame.f_code.co_filename:
            seen.add((frame.f_code.co_filename.split("sharpdp/")[-1], frame.f_code.co_name))

    t = time.process_time()
    sys.settrace(tracer)
    try:
        out = repr(f())[:80]
    except Exception as exc:  # noqa: BLE001 - reported
        out = f"{type(exc).__name__}: {str(exc)[:80]}"
    finally:
        sys.settrace(None)
    return seen, out, time.process_time() - t


def main() -> None:
    kind, kw, path = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    SH.calibrate_gaussian(n=100, epsilon=1.0, delta=1e-6)  # compiles the kernels outside the trace
    if kind == "bmg":
        args = dict(dict(n=100, epsilon=1.0, delta=1e-6, dim=1, adjacency="replace"), **kw)
        seen, out, cpu = _calls(lambda: SH.calibrate_bmg(**args))
    elif kind == "calg":
        args = dict(dict(n=100, epsilon=1.0, delta=1e-6, adjacency="replace"), **kw)
        seen, out, cpu = _calls(lambda: SH.calibrate_gaussian(**args))
    else:
        d = dict(dict(sigma0=4.0, n=2, delta=1e-3), **kw)
        acc = SH.ShuffleAccountant(SH.GaussianRandomizer(d["sigma0"], 1), d["n"], adjacency="replace")
        seen, out, cpu = _calls(lambda: acc.get_epsilon(d["delta"]))
    print(kw, out, f"{cpu:.2f} s CPU,", len(seen), "functions")
    if not os.path.exists(path):
        with open(path, "wb") as fh:
            pickle.dump(seen, fh)
        return
    with open(path, "rb") as fh:
        base = pickle.load(fh)
    print("missing:", sorted(base - seen))
    print("extra:", sorted(seen - base))


if __name__ == "__main__":
    main()
