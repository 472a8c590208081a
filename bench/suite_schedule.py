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
   overhead (``--per-test-ms``, xdist's reporting; 5 ms by default).
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


def per_file(paths: list[str]) -> tuple[dict[str, float], dict[str, int], float]:
    files: dict[str, float] = {}
    counts: dict[str, int] = {}
    collect = 0.0
    for p in paths:
        these: dict[str, float] = {}
        these_n: dict[str, int] = {}
        for line in pathlib.Path(p).read_text().splitlines():
            rec = json.loads(line)
            if rec["worker"] != "main":
                collect = max(collect, rec["collect"] or 0.0)
            for nodeid, cpu in rec["tests"].items():
                f = nodeid.split("::")[0].rsplit("/", 1)[-1]
                these[f] = these.get(f, 0.0) + cpu
                these_n[f] = these_n.get(f, 0) + 1
        files.update(these)
        counts.update(these_n)
    return files, counts, collect


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
    print("replay of loadfile (LONGEST_FIRST):", " / ".join(f"{e:.1f}" for e in ends),
          f"s -> predicted pytest wall {max(ends) + collect:.1f} s (incl. collection)")
    print("  last file per worker:", [g[-1] if g else None for g in got])


if __name__ == "__main__":
    main()
