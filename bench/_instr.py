"""Instruction counts of one Python call under callgrind (load-proof benchmark figures).

``perf stat -e instructions`` is not supported on this VM (no PMU passthrough), so the counts come
from valgrind's callgrind, which simulates the CPU and counts every instruction the process executes
("Ir"): the figure does not depend on the load, the clock or the other jobs on the machine (it moves
by < 0.1 % between runs: hash seeds and allocator addresses).

How the call is isolated: the child interpreter runs under
``valgrind --tool=callgrind --instr-atstart=no`` (imports at valgrind's translation speed, not
instrumented), then calls a 3-function C helper (compiled once with ``cc`` into a cache directory
from ``valgrind/callgrind.h``'s client requests) to start the instrumentation, zero the counters,
run the call and dump the counters under a name. Only that dump is read back.

No code of this file runs in sharpdp; it is a tool of ``bench/`` only.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

_C_SOURCE = r"""
#include <valgrind/callgrind.h>
int sharpdp_cg_running(void) { return RUNNING_ON_VALGRIND; }
void sharpdp_cg_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
void sharpdp_cg_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); CALLGRIND_STOP_INSTRUMENTATION; }
"""


def available() -> str | None:
    """None when callgrind counts can be taken here, else the reason (one line)."""
    if shutil.which("valgrind") is None:
        return "valgrind not found"
    if shutil.which("cc") is None:
        return "no C compiler (cc) for the callgrind client-request helper"
    if not os.path.exists("/usr/include/valgrind/callgrind.h"):
        return "valgrind/callgrind.h not found (install valgrind's development headers)"
    return None


def _helper_path() -> str:
    """Path of the compiled client-request helper (built on first use, cached by source hash)."""
    tag = hashlib.sha256(_C_SOURCE.encode()).hexdigest()[:12]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "sharpdp-bench")
    lib = os.path.join(folder, f"cg_helper_{tag}.so")
    if not os.path.exists(lib):
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "cg_helper.c")
            with open(src, "w") as fh:
                fh.write(_C_SOURCE)
            out = os.path.join(tmp, "cg_helper.so")
            subprocess.run(["cc", "-O1", "-shared", "-fPIC", src, "-o", out], check=True)
            shutil.move(out, lib)
    return lib


class Region:
    """Start/dump of the callgrind counters around a region, in the process being counted.

    Outside valgrind, ``start`` and ``dump`` do nothing (the client requests are no-ops)."""

    def __init__(self) -> None:
        self._lib = ctypes.CDLL(_helper_path())
        self._lib.sharpdp_cg_dump.argtypes = [ctypes.c_char_p]

    @property
    def running(self) -> bool:
        return bool(self._lib.sharpdp_cg_running())

    def start(self) -> None:
        self._lib.sharpdp_cg_start()

    def dump(self, name: str) -> None:
        self._lib.sharpdp_cg_dump(name.encode())


def parse_dumps(prefix: str) -> dict[str, int]:
    """{dump name: instructions executed (Ir)} from the callgrind output files ``prefix*``."""
    out: dict[str, int] = {}
    for path in sorted(glob.glob(prefix + "*")):
        name, total = None, None
        with open(path, errors="replace") as fh:
            for line in fh:
                if line.startswith("desc: Trigger: Client Request: "):
                    name = line[len("desc: Trigger: Client Request: "):].strip()
                elif line.startswith("summary:"):
                    total = int(line.split()[1])
        if name is not None and total is not None:
            out[name] = total
    return out


def count(argv: list[str], env: dict | None = None, timeout: float = 1800.0) -> tuple[dict[str, int], str]:
    """Run ``argv`` (a Python command whose code brackets its regions with :class:`Region`) under
    callgrind; returns ({region name: instructions}, the command's stdout). Raises RuntimeError
    (with valgrind's last lines) when the run fails."""
    reason = available()
    if reason:
        raise RuntimeError(reason)
    _helper_path()  # build outside valgrind
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "cg.out")
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}.%p",
               "--dump-instr=no", "--compress-strings=no", "--compress-pos=no", *argv]
        full_env = dict(os.environ, PYTHONHASHSEED="0", **(env or {}))
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, check=False)
        if p.returncode != 0:
            tail = " | ".join(p.stderr.strip().splitlines()[-3:])
            raise RuntimeError(f"callgrind run failed (exit {p.returncode}): {tail}")
        return parse_dumps(prefix), p.stdout


if __name__ == "__main__":  # smoke check: python bench/_instr.py
    print(available() or "callgrind available")
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path.insert(0, {here!r}); import _instr; r = _instr.Region(); r.start(); "
            "sum(range(100000)); r.dump('sum')")
    print(count([sys.executable, "-c", code])[0])
