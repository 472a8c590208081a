"""Review rev48 (session 48): attack on the kept C heap over whole calls (docs/accountant.md §8.27.1,
``limits.EPS47_CALL_HEAP``, on; ``limits.BODY45_KEPT_HEAP_N`` = 1e4 since docs/accountant_tail.md §73.7) and the
closed form's entry points inside it (§73.1): "the same floats".

(i) float.hex of ``get_delta_bounds``, ``get_epsilon`` and ``privacy_profile`` with every kept-heap switch off
(``BODY45_KEPT_HEAP``, ``EPS47_CALL_HEAP``: malloc never touched) against main's defaults, each in its own fresh
process (a process that once ran the scope keeps fixed thresholds afterwards, so one process cannot give the "off"
reference), over n = 1e4-1e8, RandomizedResponse / GaussianRandomizer, zero-out and replace-one, threads 1 and 2.
On this machine numpy has AVX-512 loops, so an alignment-dependent kernel would show here (heap vs mmap placement).
(ii) malloc's state after the scope: observed through glibc's ``mallinfo2().hblkhd`` (bytes in mmapped chunks), a
40 MiB array is served by mmap outside the scope (threshold back at 32 MiB) and from the heap inside it; restored after
a ValueError raised by the public call (bad eps), a KeyboardInterrupt raised inside a pass, an exception in a worker
thread, and while two threads' scopes overlap (the last one out restores)."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant
from sharpdp.shuffle.accountant import heap_keep, lattice, limits

_WORKER = r"""
import json, sys
import numpy as np
from sharpdp.shuffle import GaussianRandomizer, RandomizedResponse, ShuffleAccountant, privacy_profile
from sharpdp.shuffle.accountant import limits, heap_keep
off = sys.argv[1] == "off"
if off:
    limits.BODY45_KEPT_HEAP = False
    limits.EPS47_CALL_HEAP = False
out = []
for r, n, adj, th, what, arg in json.loads(sys.argv[2]):
    R = RandomizedResponse(*r) if len(r) == 2 else GaussianRandomizer(r[0], 1)
    acc = ShuffleAccountant(R, int(n), adj, threads=th)
    if what == "bounds":
        lo, up = acc.get_delta_bounds(np.asarray(arg))
        out.append([float(v).hex() for v in np.concatenate([np.ravel(lo), np.ravel(up)])])
    elif what == "epsilon":
        out.append([float(acc.get_epsilon(arg)).hex()])
    else:
        out.append([float(v).hex() for v in np.ravel(privacy_profile(acc, np.asarray(arg), progress=False))])
out.append([heap_keep.depth(), heap_keep._glibc() is not None])
print(json.dumps(out))
"""


def _run(setting: str, cells: list) -> list:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    res = subprocess.run([sys.executable, "-c", _WORKER, setting, json.dumps(cells)], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _same(cells: list) -> None:
    off, on = _run("off", cells), _run("on", cells)
    assert off[-1][0] == 0 and on[-1][0] == 0
    for c, a, b in zip(cells, off[:-1], on[:-1]):
        assert a == b, (c, a, b)
        assert all(0.0 <= float.fromhex(h) for h in a), (c, a)


def test_same_floats_bounds_and_profiles():
    _same([
        [[10, 1.0], 10 ** 4, "zero_out", 1, "bounds", [0.01, 0.1, 0.5]],
        [[10, 1.0], 10 ** 5, "replace", 2, "bounds", [0.02, 0.2]],
        [[1.0], 10 ** 4, "zero_out", 2, "bounds", [0.05, 0.3]],
        [[2.0], 10 ** 6, "zero_out", 1, "bounds", [0.001, 0.01]],
        [[1.0], 10 ** 8, "zero_out", 1, "bounds", [0.1, 1.0]],  # (the closed form's entry points, §73.1)
        [[2, 1.0], 10 ** 4, "replace", 1, "profile", [0.0, 0.05, 0.1, 0.2]],
        [[4, 2.0], 10 ** 5, "zero_out", 2, "profile", [0.01, 0.05]],
    ])


def test_same_floats_epsilon():
    _same([
        [[10, 1.0], 10 ** 4, "zero_out", 1, "epsilon", 1e-6],
        [[2, 1.0], 10 ** 5, "replace", 2, "epsilon", 1e-8],
        [[2.0], 10 ** 6, "zero_out", 1, "epsilon", 1e-6],
    ])


# (ii) malloc's state, observed ------------------------------------------------------------------------------------

class _MI2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]


def _mallinfo():
    lib = heap_keep._glibc()
    if lib is None or not hasattr(lib, "mallinfo2"):
        pytest.skip("glibc >= 2.33 (mallinfo2) with untuned malloc needed")
    lib.mallinfo2.restype = _MI2
    return lib.mallinfo2


def _mmapped_40mib(mi) -> bool:
    """Whether a fresh array 40 MiB larger than the arena's free bytes (so not served from a free chunk or the heap's
    top) is served by mmap: the mmap threshold below its size."""
    info = mi()
    size = info.fordblks + (40 << 20)
    if size > (600 << 20):
        pytest.skip("the arena keeps too much free memory for the observation")
    a = np.empty(size, dtype=np.uint8)
    grew = mi().hblkhd - info.hblkhd >= size
    del a
    return grew


def _state_ok(mi) -> None:
    assert heap_keep.depth() == 0
    assert _mmapped_40mib(mi)  # outside: the threshold is 32 MiB again


def test_scope_changes_and_restores_the_threshold(monkeypatch):
    mi = _mallinfo()
    monkeypatch.setattr(limits, "BODY45_KEPT_HEAP", True)
    with heap_keep.kept_heap():
        assert not _mmapped_40mib(mi)  # inside: from the heap (the observation is live)
    _state_ok(mi)
    with pytest.raises(ZeroDivisionError):
        with heap_keep.kept_heap():
            1 / 0
    _state_ok(mi)


def test_restored_after_errors_in_public_calls(monkeypatch):
    mi = _mallinfo()
    monkeypatch.setattr(limits, "BODY45_KEPT_HEAP", True)
    monkeypatch.setattr(limits, "EPS47_CALL_HEAP", True)
    acc = ShuffleAccountant(GaussianRandomizer(1.0, 1), 10 ** 7, "zero_out")
    for bad in (float("nan"), "x"):
        with pytest.raises((ValueError, TypeError)):
            acc.get_delta_bounds(bad)
        _state_ok(mi)
    with pytest.raises(ValueError):
        acc.get_epsilon(2.0)
    _state_ok(mi)
    seen = []

    def interrupt(*a, **k):
        seen.append(heap_keep.depth())
        assert not _mmapped_40mib(mi)  # inside the call's scope
        raise KeyboardInterrupt

    monkeypatch.setattr(lattice, "_pass", interrupt)
    with pytest.raises(KeyboardInterrupt):
        ShuffleAccountant(GaussianRandomizer(1.0, 1), 10 ** 7, "zero_out").get_delta_bounds(0.01)
    assert seen and min(seen) >= 1
    _state_ok(mi)


def test_restored_with_threads(monkeypatch):
    mi = _mallinfo()
    monkeypatch.setattr(limits, "BODY45_KEPT_HEAP", True)
    entered, release = threading.Event(), threading.Event()
    errors: list = []

    def holder():
        with heap_keep.kept_heap():
            entered.set()
            release.wait(30)

    def failing():
        try:
            with heap_keep.kept_heap():
                raise RuntimeError("in a thread")
        except RuntimeError as exc:
            errors.append(exc)

    t = threading.Thread(target=holder)
    t.start()
    assert entered.wait(30)
    with heap_keep.kept_heap():
        pass  # this scope's exit is not the last: the holder's scope stays in force
    f = threading.Thread(target=failing)
    f.start()
    f.join()
    assert errors and heap_keep.depth() == 1
    assert not _mmapped_40mib(mi)
    release.set()
    t.join()
    _state_ok(mi)
