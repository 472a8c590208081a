"""The test suite's per-file CPU time and a replay of its two-worker ``--dist loadfile`` schedule.

Two uses:

1. A pytest plugin (no effect unless loaded): ``PYTHONPATH=bench python3 -m pytest tests -p suite_schedule
   --suite-cpu-out=FILE.json`` records, in every process (each xdist worker, or the single process of
   ``-n 0``), the CPU time (self + reaped children: CLI subprocesses) of every test's setup + call +
   teardown, and of the worker's start-up and collection, and appends one JSON line per process to FILE.
   CPU time, unlike wall time, is roughly independent of the other jobs on a shared machine.

2. ``python3 bench/suite_schedule.py FILE.json [FILE2.json ...]``: sums the CPU per test file (later files
   override earlier ones per test file, so single files re-measured with ``-n 0`` after a change replace
   their old figure), prints the table, and replays xdist's loadfile scheduler with the order of
   ``tests/conftest.py`` LONGEST_FIRST: each of the two workers takes the next file when it is free (the
   first two files go one to each; xdist actually pre-sends a couple of files per worker, which the
   replay ignores: the rule 'next file to the first free worker' is what LONGEST_FIRST is tuned for).
   The predicted wall time is the later worker's end plus its start-up/collection and a per-test
   overhead (``--per-test-ms``, xdist's reporting; 5 ms by default). A second replay follows xdist's own
   rule (xdist/scheduler/loadscope.py: a worker is sent the next file as soon as it has <= 2 tests pending).

The plugin also sums, per process, the noise-table builds (docs/sampling.md §4.1) and Numba's compilations.

Measured 2026-12-03 (two whole runs on the shared 2-core machine, load 4-7; CPU times move by ~13 % with the
load, so compare files only within one run or by alternating fresh single-file runs): 630 s (load ~4) and
712 s (load ~5) of CPU in 3,661 tests; a worker's start-up + collection 4.5-10.5 s; noise tables built: 106
(65 distinct scales, 9 s of CPU; the suite's cache directory is fresh per session); Numba compilations 26
(~23 s, mostly one per test density of GeneralRandomizer: tests/test_shuffle_randomizers_general.py 6.8 s,
tests/test_finite_randomizer.py 5.4 s). Under cProfile, the 70 slowest tests (outside the fuzz, rounds,
privunit, release4 and cli mean/account files) spend ~30 % (cumulative) in test-side helper functions, most of
it in library calls those helpers make (independent accountants, PrivateRLS runs); pure reference sums are a
few seconds in all (scipy class laws of test_review_krr_large, the mpmath cells of
test_lognormal_cells_native, the trinomial sums of test_binrr9_schedule).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import sys
import time
from typing import Any

import pytest

HERE = pathlib.Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"


def _cpu() -> float:
    own = time.process_time()
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + ch.ru_utime + ch.ru_stime


# ---------------------------------------------------------------------------------------------- plugin
_START = _cpu()
_state: dict[str, Any] = {"tests": {}, "collect": None}


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--suite-cpu-out", default=None, help="append per-test CPU times (JSON lines) here")


def pytest_collection_finish(session: Any) -> None:
    _state["collect"] = _cpu() - _START
    _time_table_builds()
    _time_numba_compiles()


def _time_numba_compiles() -> None:
    """Numba's compilations (wall time of the outermost "numba:compile" events) in this process."""
    from numba.core import event

    class Outer(event.Listener):
        depth = 0
        t0 = 0.0

        def on_start(self, ev: Any) -> None:
            if self.depth == 0:
                self.t0 = time.perf_counter()
            self.depth += 1

        def on_end(self, ev: Any) -> None:
            self.depth -= 1
            if self.depth == 0:
                _state["numba"] = _state.get("numba", 0.0) + time.perf_counter() - self.t0
                _state["numba_n"] = _state.get("numba_n", 0) + 1

    event.register("numba:compile", Outer())


def _time_table_builds() -> None:
    """Time spent building the samplers' noise tables (docs/sampling.md §4.1) in this process."""
    import importlib

    tables = importlib.import_module("sharpdp._tables")
    build = getattr(tables, "_build_table")
    _state["tables"] = []

    def timed(s: float, J: int) -> Any:
        t0 = _cpu()
        out = build(s, J)
        _state["tables"].append((s, J, _cpu() - t0))
        return out

    setattr(tables, "_build_table", timed)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> None:
    _state["t0"] = _cpu()
    _state["numba0"] = _state.get("numba", 0.0)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    t0 = _state.pop("t0", None)
    if t0 is not None:
        _state["tests"][nodeid] = _cpu() - t0
        compiled = _state.get("numba", 0.0) - _state.pop("numba0", 0.0)
        if compiled > 0:
            _state.setdefault("numba_tests", {})[nodeid] = compiled


def pytest_sessionfinish(session: Any) -> None:
    out = session.config.getoption("--suite-cpu-out")
    if not out or not _state["tests"]:
        return
    rec = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "collect": _state["collect"],
           "total": _cpu() - _START, "tests": _state["tests"],
           "tables": _state.get("tables", []), "numba": [_state.get("numba_n", 0), _state.get("numba", 0.0)],
           "numba_tests": _state.get("numba_tests", {})}
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")


# ------------------------------------------------------------------------------------------- replay
def longest_first() -> tuple[str, ...]:
    sys.path.insert(0, str(TESTS))
    try:
        import conftest  # the suite's own conftest: its ordering tuple only
        return tuple(conftest.LONGEST_FIRST)
    finally:
        sys.path.pop(0)


def per_test(paths: list[str]) -> dict[str, list[float]]:
    """Per file, the CPU of each of its tests in run (= file) order; later JSON files override earlier ones."""
    out: dict[str, list[float]] = {}
    for p in paths:
        these: dict[str, list[float]] = {}
        for line in pathlib.Path(p).read_text().splitlines():
            for nodeid, cpu in json.loads(line)["tests"].items():
                these.setdefault(nodeid.split("::")[0].rsplit("/", 1)[-1], []).append(cpu)
        out.update(these)
    return out


def per_file(paths: list[str]) -> tuple[dict[str, float], dict[str, int], float]:
    tests = per_test(paths)
    collect = 0.0
    for p in paths:
        for line in pathlib.Path(p).read_text().splitlines():
            rec = json.loads(line)
            if rec["worker"] != "main":
                collect = max(collect, rec["collect"] or 0.0)
    return {f: sum(v) for f, v in tests.items()}, {f: len(v) for f, v in tests.items()}, collect


def replay_xdist(tests: dict[str, list[float]], order: tuple[str, ...], per_test: float,
                 workers: int = 2) -> tuple[list[float], list[list[str]]]:
    """xdist's LoadScopeScheduling itself (xdist/scheduler/loadscope.py): each worker gets one file, then
    another while it has at most 2 tests pending; after each finished test, a worker with at most 2 pending
    tests gets the next file. Test times are the measured CPU plus ``per_test``."""
    from collections import deque

    rank = {name: i for i, name in enumerate(order)}
    queue = deque(sorted(sorted(tests), key=lambda f: rank.get(f, len(rank))))
    pending: list[deque] = [deque() for _ in range(workers)]
    clock = [0.0] * workers
    got: list[list[str]] = [[] for _ in range(workers)]

    def assign(w: int) -> None:
        f = queue.popleft()
        got[w].append(f)
        pending[w].extend(t + per_test for t in tests[f])

    for w in range(workers):
        if queue:
            assign(w)
    for w in range(workers):
        if queue and len(pending[w]) <= 2:
            assign(w)
    while any(pending):
        w = min((i for i in range(workers) if pending[i]), key=lambda i: clock[i] + pending[i][0])
        clock[w] += pending[w].popleft()
        if queue and len(pending[w]) <= 2:
            assign(w)
    return clock, got


def replay(files: dict[str, float], counts: dict[str, int], order: tuple[str, ...], per_test: float,
           workers: int = 2) -> tuple[list[float], list[list[str]]]:
    rank = {name: i for i, name in enumerate(order)}
    queue = sorted(sorted(files), key=lambda f: rank.get(f, len(rank)))  # unlisted: collection (name) order
    ends = [0.0] * workers
    got: list[list[str]] = [[] for _ in range(workers)]
    for f in queue:
        w = min(range(workers), key=lambda i: ends[i])
        ends[w] += files[f] + per_test * counts[f]
        got[w].append(f)
    return ends, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+")
    ap.add_argument("--per-test-ms", type=float, default=5.0)
    ap.add_argument("--top", type=int, default=45)
    args = ap.parse_args()
    files, counts, collect = per_file(args.json)
    total = sum(files.values())
    print(f"{len(files)} files, {sum(counts.values())} tests, {total:.1f} s CPU in tests; "
          f"worker start-up + collection {collect:.1f} s")
    for f in sorted(files, key=files.get, reverse=True)[: args.top]:  # type: ignore[arg-type]
        print(f"  {files[f]:7.1f} s  {counts[f]:5d}  {f}")
    for path in args.json:
        for line in pathlib.Path(path).read_text().splitlines():
            rec = json.loads(line)
            if rec.get("tables"):
                print(f"  {path} {rec['worker']}: {len(rec['tables'])} noise tables built, "
                      f"{sum(t[2] for t in rec['tables']):.1f} s CPU")
            if rec.get("numba"):
                print(f"  {path} {rec['worker']}: {rec['numba'][0]} numba compilations, {rec['numba'][1]:.1f} s")
    ends, got = replay(files, counts, longest_first(), args.per_test_ms / 1000)
    print("replay, next file to the first free worker (LONGEST_FIRST):", " / ".join(f"{e:.1f}" for e in ends),
          f"s -> predicted pytest wall {max(ends) + collect:.1f} s (incl. collection)")
    print("  last file per worker:", [g[-1] if g else None for g in got])
    ends, got = replay_xdist(per_test(args.json), longest_first(), args.per_test_ms / 1000)
    print("replay of xdist's loadscope rule (a file when <= 2 tests pending):", " / ".join(f"{e:.1f}" for e in ends),
          f"s -> predicted pytest wall {max(ends) + collect:.1f} s (incl. collection)")
    print("  last file per worker:", [g[-1] if g else None for g in got])


if __name__ == "__main__":
    main()
