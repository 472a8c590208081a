"""Regime map of the certified shuffle accountant and of the calibrations (CPU seconds).

Families (delta = 1e-6 throughout):

(a) ``bmg``:      the BMG that ``calibrate_bmg(n, eps, 1e-6, dim=1)`` picks (zero-out);
(b) ``gaussian``: ``GaussianRandomizer(sigma0, 1)``, sigma0 in {0.5, 1, 2, 4.6} (zero-out);
                  its calibration column is ``calibrate_gaussian(n, eps, 1e-6)``;
(c) ``krr``:      ``RandomizedResponse(k, eps0)``, k in {2, 10}, eps0 in {1, 4, 8} (replace);
(d) ``privunit``: ``PrivUnit(0.75, 0.2, 10)`` (replace);
(e) ``via-bot``:  ``GaussianRandomizer(sigma0, 1)`` under replace-one, bounded through bot (docs/accountant.md §9),
                  sigma0 in {0.46, 1, 2, 4.6}; each cell also times the zero-out ``get_delta_bounds`` at the same
                  (n, eps), the reference of the "replace through bot within 3 x zero-out" goal.

Per cell (n, eps) it reports the process CPU time (``time.process_time``, all threads) of
``get_delta_bounds(eps)``, of ``get_epsilon(1e-6)`` and of the calibration, the achieved
(Up - Lo)/Lo, and the number of accountant evaluations the calibration made (calls of
``ShuffleAccountant.get_delta_bounds``, which ``get_delta`` goes through). ``get_epsilon`` does
not depend on eps, so for (b)-(d) it is timed once per (randomizer, n), together with one
``get_delta_bounds`` at the epsilon it returns (the reference of the "get_epsilon <= 3 x one
get_delta" goal); ``calibrate_gaussian`` does not depend on sigma0 and is timed once per
(n, eps). Every timed call runs in its own process (``--isolate fork``, the default on POSIX: a
fork of this process after the imports (``_import_engine``: ``sharpdp.shuffle``, the accountant's lazily
imported modules and ``scipy.fft``, ~0.2-0.3 s CPU once per process, printed at the start; not charged to any
call: a library embedding the accountant pays it once), whose CPU clock starts at zero; or
``--isolate subprocess``: a fresh interpreter) under a CPU-time limit (``--timeout S``; shown as
``>S s``; enforced by a watchdog in the parent that reads the child's CPU time from /proc every
50 ms and stops it with SIGXCPU: no RLIMIT_CPU, whose armed CPU timer makes ``process_time``
advance in 4 ms scheduler ticks on this VM) and an address-space limit (``--mem-gb G``, default 3; shown as "out of memory"); its
peak RSS (``ru_maxrss``) is recorded. ``--eps-reps R`` (default 1) times the get_epsilon ratio's two calls best of R
forks while a call takes under 1 s CPU (family (a) then divides by its own best-of ``get_delta_bounds`` at the cell's
eps): a single fork sample of a millisecond call leaves the ratio at the mercy of the load. When the calibration of an (a) cell times out, the other
two calls of that cell use the optimal BMG at the asymptotic template's chi (``optimal_bmg``),
marked with a dagger.

Script mode (writes Markdown: a summary per randomizer against the goals, every cell, and every
cell that misses a goal; ``--quick``, the default, is a representative subset of the full map)::

    python bench/bench_regimes.py --quick --timeout 60 --out regimes.md
    python bench/bench_regimes.py --full --timeout 5 --json regimes.jsonl --resume --out regimes.md
    python bench/bench_regimes.py --full --families b --labels "Gauss s0=4.6" --ns 1e8,1e9 ...
    python bench/bench_regimes.py --full --render --json regimes.jsonl   # tables only, runs nothing
    python bench/bench_regimes.py --families e --ns 1e3 --eps 1 --isolate instr  # instructions (1e9), load-proof

Benchmark mode (pytest-benchmark, a few representative cells; not run in CI)::

    python -m pytest bench/bench_regimes.py --benchmark-only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time

DELTA = 1e-6
NS_FULL = (10**2, 10**3, 10**4, 10**5, 10**6, 10**8, 10**9)
EPS_FULL = (1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
GAUSS_SIGMAS = (0.5, 1.0, 2.0, 4.6)
VIA_BOT_SIGMAS = (0.46, 1.0, 2.0, 4.6)
NS_VIA_BOT = (10, 10**3, 10**5)  # (replace through bot at n >= 1e6: tens of seconds per cell)
KRR = ((2, 1.0), (2, 4.0), (2, 8.0), (10, 1.0), (10, 4.0), (10, 8.0))
PRIVUNIT = (0.75, 0.2, 10)


# ----------------------------------------------------------------------------- one timed call
def _randomizer(spec: dict):
    from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, PrivUnit, RandomizedResponse

    kind = spec["kind"]
    if kind == "bmg":
        return BlanketMixedGaussian(spec["gamma"], spec["sigma0"], 1)
    if kind == "gaussian":
        return GaussianRandomizer(spec["sigma0"], 1)
    if kind == "krr":
        return RandomizedResponse(spec["k"], spec["eps0"])
    if kind == "privunit":
        return PrivUnit(*spec["params"])
    raise ValueError(f"unknown randomizer kind {kind!r}")


def _adjacency(spec: dict) -> str:
    if "adjacency" in spec:  # (family e: replace through bot, and its zero-out reference)
        return spec["adjacency"]
    return "replace" if spec["kind"] in ("krr", "privunit") else "zero_out"


def run_call(task: dict) -> dict:
    """Run one timed call in this process: task = {"call", "n", "eps", "spec"}; returns a dict."""
    from sharpdp.shuffle import ShuffleAccountant
    from sharpdp.shuffle import accountant as A

    counter = {"evals": 0}
    orig = A.ShuffleAccountant.get_delta_bounds

    def counted(self, epsilon):
        counter["evals"] += 1
        return orig(self, epsilon)

    A.ShuffleAccountant.get_delta_bounds = counted
    n, eps, spec, call = task["n"], task["eps"], task.get("spec"), task["call"]
    out: dict = {}
    t0 = time.process_time()
    if call == "delta_bounds":
        lo, up = ShuffleAccountant(_randomizer(spec), n, _adjacency(spec)).get_delta_bounds(eps)
        out.update(lower=float(lo), upper=float(up))
    elif call == "epsilon":
        out["epsilon"] = float(ShuffleAccountant(_randomizer(spec), n, _adjacency(spec)).get_epsilon(DELTA))
    elif call == "calibrate_bmg":
        from sharpdp.shuffle import calibrate_bmg

        b = calibrate_bmg(n, eps, DELTA, 1, progress=False)
        out.update(gamma=b.gamma, sigma0=b.sigma0, mse_single=b.mse_single)
    elif call == "calibrate_gaussian":
        from sharpdp.shuffle.calibration import calibrate_gaussian

        g = calibrate_gaussian(n, eps, DELTA)
        out.update(sigma0=g.sigma0, mse_single=g.mse_single)
    else:
        raise ValueError(f"unknown call {call!r}")
    out["cpu"] = time.process_time() - t0
    out["evals"] = counter["evals"]
    return out


def _limit(mem_gb: float) -> None:
    """In the child: address space ``mem_gb`` GB, no core files. No CPU limit here: any armed
    process CPU timer (RLIMIT_CPU, ITIMER_PROF) makes ``process_time`` advance in scheduler ticks
    (4 ms on this VM); the parent's watchdog (:func:`_watch`) enforces the CPU limit instead."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if mem_gb > 0:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        soft = int(mem_gb * 2**30)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _guarded_call(task: dict) -> dict:
    """run_call with MemoryError turned into {"oom": True}; adds the peak RSS (MB) of this process."""
    import resource

    try:
        out = run_call(task)
    except MemoryError:
        out = {"oom": True}
    except Exception as exc:  # noqa: BLE001  (reported in the table, one line)
        text = f"{type(exc).__name__}: {exc}".splitlines()[0]
        out = {"oom": True} if "bad_alloc" in text or "Unable to allocate" in text else {"error": text}
    out["rss_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def _import_engine() -> float:
    """Import what a first accountant call would import lazily (the engine's modules, ``scipy.fft``); CPU seconds."""
    import importlib
    import pkgutil

    t0 = time.process_time()
    import sharpdp.shuffle  # noqa: F401

    for pkg in ("accountant", "laws", "calibration"):
        mod = importlib.import_module(f"sharpdp.shuffle.{pkg}")
        for info in pkgutil.iter_modules(mod.__path__):
            importlib.import_module(f"{mod.__name__}.{info.name}")
    importlib.import_module("scipy.fft")
    return time.process_time() - t0


_READY = "READY "  # first stdout line of a --child interpreter: "READY <CPU s spent on its imports>"


def _child(task_json: str) -> None:
    task = json.loads(task_json)
    _import_engine()  # (imports are not charged to the call)

    _limit(task.get("mem_gb", 0.0))
    print(f"{_READY}{time.process_time()!r}", flush=True)  # the watchdog's CPU budget starts here
    print(json.dumps(_guarded_call(task)))


def _classify_failure(code: int | None, sig: int | None, stderr: str) -> dict:
    import signal

    if sig == signal.SIGXCPU or code == 152 or "CPU time limit" in stderr:
        return {"timeout": True}
    if "MemoryError" in stderr or "bad_alloc" in stderr or "Unable to allocate" in stderr:
        return {"oom": True}
    if sig is not None:
        name = signal.Signals(sig).name
        tail = (stderr.strip().splitlines() or [""])[-1][:80]
        return {"error": f"killed by {name}" + (f" ({tail})" if tail else "")}
    return {"error": (stderr.strip().splitlines() or ["?"])[-1]}


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
WATCH_PERIOD = 0.05  # seconds between two reads of the child's CPU time


def _proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) of a live process from /proc; None where there is
    no /proc (then only the wall-clock safety net applies)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def _watch(pid: int, fd: int, timeout: float, base: float | None) -> tuple[bytes, str | None]:
    """Read ``fd`` to its end while a watchdog holds process ``pid`` to ``timeout`` CPU seconds.

    The budget starts at ``base`` CPU seconds of the child (0 for a fork, whose clock starts at
    zero), or, with ``base=None``, at the value of the child's first line ``READY <cpu>`` (a fresh
    interpreter after its imports). Past the budget the child gets SIGXCPU (what RLIMIT_CPU sent),
    which :func:`_classify_failure` reads as a timeout; the overshoot is at most ``WATCH_PERIOD``
    plus one /proc tick. A wall-clock safety net (20 x timeout + 120 s) sends SIGKILL. Returns the
    bytes read (without the READY line) and None, or "wall" when the safety net fired."""
    import select
    import signal

    chunks: list[bytes] = []
    deadline = time.time() + 20 * timeout + 120
    pending = b""
    while True:
        left = deadline - time.time()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)  # wall-clock safety net on a very loaded machine
            return b"".join(chunks), "wall"
        ready, _, _ = select.select([fd], [], [], min(left, WATCH_PERIOD))
        if ready:
            b = os.read(fd, 65536)
            if not b:
                break
            if base is None:
                pending += b
                if b"\n" in pending:
                    line, rest = pending.split(b"\n", 1)
                    base = float(line.decode()[len(_READY):]) if line.startswith(_READY.encode()) else 0.0
                    chunks.append(rest)
            else:
                chunks.append(b)
        cpu = _proc_cpu(pid)
        if base is not None and cpu is not None and cpu > base + timeout:
            try:
                os.kill(pid, signal.SIGXCPU)
            except ProcessLookupError:
                pass
    return b"".join(chunks), None


def _timed_instr(task: dict, timeout: float) -> dict:
    """``--isolate instr``: the call in a fresh interpreter under callgrind (bench/_instr.py, imports not counted);
    its "cpu" is the instructions executed divided by 1e9 (load-proof; the ratios of the map are then instruction
    ratios). ``timeout`` bounds the wall time at 100 x (callgrind runs ~50 x slower)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _instr

    try:
        counts, stdout = _instr.count([sys.executable, os.path.abspath(__file__), "--child-instr", json.dumps(task)],
                                      timeout=100.0 * timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    except RuntimeError as exc:
        return {"error": str(exc).splitlines()[0]}
    out = json.loads(stdout.strip().splitlines()[-1])
    if "call" in counts and "cpu" in out:
        out.update(cpu=counts["call"] * 1e-9, instructions=counts["call"])
    return out


def _child_instr(task_json: str) -> None:
    """The call between the callgrind client requests (bench/_instr.Region), its result as JSON on stdout."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _instr

    _import_engine()  # (imports are not counted)

    task = json.loads(task_json)
    region = _instr.Region()
    region.start()
    out = _guarded_call(task)
    region.dump("call")
    print(json.dumps(out))


def _timed_subprocess(task: dict, timeout: float) -> dict:
    import tempfile

    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", json.dumps(task)],
                             stdout=subprocess.PIPE, stderr=err)
        data, wall = _watch(p.pid, p.stdout.fileno(), timeout, None)
        p.stdout.close()
        code = p.wait()
        if wall:
            return {"timeout": True, "wall": True}
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    if code != 0:
        sig = -code if code < 0 else None
        return _classify_failure(code, sig, stderr)
    return json.loads(data.decode().strip().splitlines()[-1])


def _timed_fork(task: dict, timeout: float) -> dict:
    """Fork this process (sharpdp already imported, nothing run yet) and run the call in the child.

    The child's CPU clock starts at zero (POSIX ``fork``), so ``process_time`` counts the call
    only; its address-space limit is set in the child, its CPU limit by the parent's watchdog.
    Saves an interpreter start and an import per call, which dominate the small cells."""
    import tempfile

    err = tempfile.TemporaryFile()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            os.dup2(err.fileno(), 2)
            _limit(task.get("mem_gb", 0.0))
            data = json.dumps(_guarded_call(task)).encode()
            os.write(w, data)
        except BaseException:  # noqa: BLE001
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    data, wall = _watch(pid, r, timeout, 0.0)
    os.close(r)
    _, status, usage = os.wait4(pid, 0)
    if wall:
        err.close()
        return {"timeout": True, "wall": True}
    err.seek(0)
    stderr = err.read().decode(errors="replace")
    err.close()
    if os.WIFSIGNALED(status) or os.WEXITSTATUS(status) != 0 or not data:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        out = _classify_failure(code, sig, stderr)
        out["rss_peak_mb"] = usage.ru_maxrss / 1024.0  # up to the stop (a lower bound for a stopped call)
        return out
    return json.loads(data.decode())


_ISOLATION = {"mode": "subprocess", "mem_gb": 3.0, "eps_reps": 1}
#: ``--eps-reps R``: the get_epsilon ratio's two calls are repeated (best of R) only while one takes under this many CPU s
REPS_BELOW = 1.0


def timed(call: str, n: int, eps: float, spec: dict | None, timeout: float) -> dict:
    """Run one call isolated (fork or subprocess) under a CPU limit of ``timeout`` s (the parent's
    watchdog, :func:`_watch`) and an address-space limit; {"timeout": True} / {"oom": True} if it
    hit one."""
    task = dict(call=call, n=n, eps=eps, spec=spec, timeout=timeout, mem_gb=_ISOLATION["mem_gb"])
    if _ISOLATION["mode"] == "instr":
        return _timed_instr(task, timeout)
    if _ISOLATION["mode"] == "fork":
        return _timed_fork(task, timeout)
    return _timed_subprocess(task, timeout)


def timed_best(call: str, n: int, eps: float, spec: dict | None, timeout: float) -> dict:
    """:func:`timed`, repeated in fresh forks up to ``--eps-reps`` times while a call takes under ``REPS_BELOW`` CPU s:
    the run of least CPU (its "reps": how many ran). For the get_epsilon ratio's two calls, whose millisecond figures
    a single fork sample leaves at the mercy of the load on both sides of the ratio (bench/README.md, cause 4)."""
    best = timed(call, n, eps, spec, timeout)
    k = 1
    while k < _ISOLATION["eps_reps"] and "cpu" in best and best["cpu"] < REPS_BELOW:
        r = timed(call, n, eps, spec, timeout)
        k += 1
        if "cpu" in r and r["cpu"] < best["cpu"]:
            best = r
    return dict(best, reps=k) if k > 1 else best


# ----------------------------------------------------------------------------- cells
def _template_bmg(n: int, eps: float) -> dict:
    from sharpdp.shuffle import optimal_bmg
    from sharpdp.shuffle.calibration import template_chi

    b = optimal_bmg(template_chi(n, eps, DELTA), 1)
    return dict(kind="bmg", gamma=b.gamma, sigma0=b.sigma0)


def cells(mode: str) -> list[tuple]:
    """(family, label, spec or None, n, eps) in the order they are run."""
    out = []
    if mode == "quick":
        for n in (10**3, 10**4, 10**5, 10**6):
            for eps in (0.1, 0.5, 1.0, 2.0, 4.0):
                out.append(("a", "BMG", None, n, eps))
        for s in (0.5, 1.0, 4.6):
            for n, eps in ((10**3, 1.0), (10**6, 0.1)):
                out.append(("b", f"Gauss s0={s}", dict(kind="gaussian", sigma0=s), n, eps))
        for k, e0 in ((2, 1.0), (10, 8.0)):
            for n, eps in ((10**4, 0.1), (10**6, 0.01)):
                out.append(("c", f"{k}-RR e0={e0:g}", dict(kind="krr", k=k, eps0=e0), n, eps))
        for n, eps in ((10**4, 0.1), (10**6, 0.01)):
            out.append(("d", "PrivUnit", dict(kind="privunit", params=list(PRIVUNIT)), n, eps))
        for s in (0.46, 1.0, 4.6):
            for n, eps in ((10, 1.0), (10**3, 1.0), (10**5, 0.1)):
                out.append(("e", f"Gauss s0={s} via bot", dict(kind="gaussian", sigma0=s, adjacency="replace"), n, eps))
        return out
    for n in NS_FULL:
        for eps in EPS_FULL:
            out.append(("a", "BMG", None, n, eps))
    for s in GAUSS_SIGMAS:
        for n in NS_FULL:
            for eps in EPS_FULL:
                out.append(("b", f"Gauss s0={s}", dict(kind="gaussian", sigma0=s), n, eps))
    for k, e0 in KRR:
        for n in NS_FULL:
            for eps in EPS_FULL:
                out.append(("c", f"{k}-RR e0={e0:g}", dict(kind="krr", k=k, eps0=e0), n, eps))
    for n in NS_FULL:
        for eps in EPS_FULL:
            out.append(("d", "PrivUnit", dict(kind="privunit", params=list(PRIVUNIT)), n, eps))
    for s in VIA_BOT_SIGMAS:
        for n in NS_VIA_BOT:
            for eps in EPS_FULL:
                out.append(("e", f"Gauss s0={s} via bot", dict(kind="gaussian", sigma0=s, adjacency="replace"), n, eps))
    return out


def run_cell(family, label, spec, n, eps, timeout, eps_cache) -> dict:
    row = dict(family=family, label=label, n=n, eps=eps, timeout=timeout)
    if family == "a":
        cal = timed("calibrate_bmg", n, eps, None, timeout)
        row["calibration"] = cal
        if "gamma" in cal:
            spec = dict(kind="bmg", gamma=cal["gamma"], sigma0=cal["sigma0"])
            row["template_pick"] = False
        else:
            spec = _template_bmg(n, eps)
            row["template_pick"] = True
        row["params"] = f"g={spec['gamma']:.3g}, s0={spec['sigma0']:.3g}"
    elif family == "b":  # calibrate_gaussian does not depend on sigma0: once per (n, eps)
        ckey = ("calibrate_gaussian", n, eps)
        if ckey not in eps_cache:
            eps_cache[ckey] = timed("calibrate_gaussian", n, eps, None, timeout)
        row["calibration"] = eps_cache[ckey]
    row["spec"] = spec
    row["delta_bounds"] = timed("delta_bounds", n, eps, spec, timeout)
    if family == "e":  # the zero-out reference at the same (randomizer, n, eps)
        row["zero_out"] = timed("delta_bounds", n, eps, dict(spec, adjacency="zero_out"), timeout)
    key = (json.dumps(spec, sort_keys=True), n)
    if row["delta_bounds"].get("timeout") or row["delta_bounds"].get("oom"):
        # get_epsilon makes several such calls: not worth running
        row["epsilon"] = dict(row["delta_bounds"], skipped=True)
        return row
    if family == "a" or key not in eps_cache:
        eps_cache[key] = timed_best("epsilon", n, eps, spec, timeout)
        if family != "a" and "epsilon" in eps_cache[key]:  # one get_delta at the answer, for the ratio
            eps_cache[key]["delta_at"] = timed_best("delta_bounds", n, eps_cache[key]["epsilon"], spec, timeout)
        elif family == "a" and _ISOLATION["eps_reps"] > 1 and "epsilon" in eps_cache[key]:
            # (the ratio's reference at the cell's eps, best of as many runs as get_epsilon: --eps-reps)
            eps_cache[key]["delta_at"] = timed_best("delta_bounds", n, eps, spec, timeout)
    row["epsilon"] = eps_cache[key]
    return row


# ----------------------------------------------------------------------------- Markdown
def _t(r: dict | None, timeout: float) -> str:
    if r is None:
        return "-"
    if r.get("timeout"):
        return f">{timeout:g} s" + (" (not run)" if r.get("skipped") else "")
    if r.get("oom"):
        return "out of memory" + (" (not run)" if r.get("skipped") else "")
    if "error" in r:
        return "error: " + r["error"][:60]
    return f"{r['cpu']:.3g} s"


def _rss(r: dict) -> str:
    """Largest peak RSS (MB) over the calls of a row that report one."""
    vals = [c["rss_peak_mb"] for c in (r.get("calibration"), r.get("delta_bounds"), r.get("epsilon"))
            if c and "rss_peak_mb" in c and not c.get("skipped")]
    return f"{max(vals):.0f} MB" if vals else "-"


def markdown(rows: list[dict]) -> str:
    head = ("| family | n | eps | randomizer | get_delta_bounds | (Up-Lo)/Lo | get_epsilon(1e-6) "
            "| calibration | evals | calibrated | peak RSS |\n|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        timeout = r["timeout"]
        db = r["delta_bounds"]
        gap = "-"
        if "upper" in db:
            lo, up = db["lower"], db["upper"]
            gap = f"{(up - lo) / lo:.2g}" if lo > 0 else ("0 (both 0)" if up == 0 else "inf")
            gap += f" (Up {up:.3g})"
        cal = r.get("calibration")
        cal_t = _t(cal, timeout) if cal is not None else "n/a"
        evals = str(cal["evals"]) if cal and "evals" in cal else "-"
        if cal and "mse_single" in cal:
            what = (f"g={cal['gamma']:.4g}, s0={cal['sigma0']:.4g}, Err1={cal['mse_single']:.5g}" if "gamma" in cal
                    else f"s0={cal['sigma0']:.4g}")
        else:
            what = "-"
        label = r["label"]
        if r["family"] == "e" and "zero_out" in r:
            label += f" (zero-out {_t(r['zero_out'], timeout)})"
        if r["family"] == "a":
            label = f"BMG {r['params']}" + (" †" if r.get("template_pick") else "")
        e = r["epsilon"]
        e_t = _t(e, timeout) + (f" (ε {e['epsilon']:.3g})" if "epsilon" in e else "")
        lines.append(f"| {r['family']} | {r['n']:.0e} | {r['eps']:g} | {label} | {_t(db, timeout)} | {gap} "
                     f"| {e_t} | {cal_t} | {evals} | {what} | {_rss(r)} |")
    lines.append("")
    lines.append("CPU seconds per call (time.process_time of the call's own process, a fork or a fresh "
                 "interpreter, imports excluded); "
                 ">S s: stopped at the CPU limit S. †: calibrate_bmg timed out, so the optimal "
                 "BMG at the template's chi was timed instead. '(not run)': get_epsilon was skipped because one "
                 "get_delta_bounds already exceeded the limit. evals: accountant evaluations "
                 "(get_delta_bounds calls) made by the calibration. 'out of memory': the call hit the "
                 "address-space limit (RLIMIT_AS, --mem-gb). peak RSS: largest ru_maxrss of the row's "
                 "calls (includes the interpreter and sharpdp's imports, about 80-150 MB).")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- goals of the map
GOAL_DB_MEDIAN, GOAL_DB_WORST, GOAL_DB_1E9 = 0.05, 0.1, 1.0   # get_delta_bounds, CPU s
GOAL_GAP, GOAL_GAP_FLOOR = 1e-2, 1e-15                         # (Up-Lo)/Lo wherever delta >= floor
GOAL_EPS_RATIO = 3.0                                           # get_epsilon / one get_delta
GOAL_VIA_BOT = 3.0                                             # replace through bot / zero-out, same cell
GOAL_CAL, GOAL_CAL_EVALS = 1.0, 10                             # calibration, CPU s / evaluations
GOAL_RSS_MB = 1024.0                                           # peak memory per call


def _cpu(r: dict | None) -> float:
    """CPU seconds of a call; inf for a timeout or an out-of-memory stop, nan if absent/error."""
    if not r:
        return math.nan
    if r.get("timeout") or r.get("oom"):
        return math.inf
    return r.get("cpu", math.nan)


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "stopped"
    return f"{x * 1e3:.0f} ms" if x < 1 else f"{x:.3g} s"


def _groups(rows: list[dict]) -> list[tuple[str, str, list[dict]]]:
    out: dict = {}
    for r in rows:
        label = "BMG (calibrate_bmg's pick)" if r["family"] == "a" else r["label"]
        out.setdefault((r["family"], label), []).append(r)
    return [(f, lab, rs) for (f, lab), rs in out.items()]


def _eps_ratio(r: dict, rs: list[dict]) -> float:
    """get_epsilon CPU over one get_delta_bounds CPU at the epsilon it returns: the same cell's in
    (a) (calibrated at that epsilon); in (b)-(d) (get_epsilon timed once per (randomizer, n)) a
    separate get_delta_bounds call at the returned epsilon, or if that is missing, the slower of
    the two cells of that row whose eps bracket the returned epsilon."""
    e_call = r.get("epsilon") or {}
    e = _cpu(e_call)
    if r["family"] == "a" and "delta_at" not in e_call:
        d = _cpu(r["delta_bounds"])
    elif "delta_at" in e_call:
        d = _cpu(e_call["delta_at"])
    else:
        row = sorted((x for x in rs if x["n"] == r["n"]), key=lambda x: x["eps"])
        target = e_call.get("epsilon")
        if target is None or not row:
            return math.nan
        below = [x for x in row if x["eps"] <= target][-1:]
        above = [x for x in row if x["eps"] >= target][:1]
        ds = [_cpu(x["delta_bounds"]) for x in below + above]
        ds = [x for x in ds if not math.isnan(x)]
        d = max(ds) if ds else math.nan
    return e / d if d > 0 and not math.isinf(d) and not math.isnan(e) else math.nan


def _via_bot_ratio(r: dict) -> float:
    """Family (e): replace-through-bot get_delta_bounds CPU over the zero-out one at the same cell (inf when the
    replace call stopped, nan elsewhere)."""
    if r["family"] != "e" or "zero_out" not in r:
        return math.nan
    z, t = _cpu(r["zero_out"]), _cpu(r["delta_bounds"])
    return t / z if z > 0 and not math.isinf(z) else math.nan


def via_bot_summary(rows: list[dict]) -> str:
    """Family (e), one line per sigma0: replace through bot against zero-out at the same cells."""
    import statistics

    lines = ["| randomizer | cells | replace / zero-out median / worst | cells over 3 x |", "|---|---|---|---|"]
    for fam, label, rs in _groups(rows):
        if fam != "e":
            continue
        ratios = [x for x in (_via_bot_ratio(r) for r in rs) if not math.isnan(x)]
        if ratios:
            lines.append(f"| {label} | {len(rs)} | {statistics.median(ratios):.3g} / {max(ratios):.3g} "
                         f"| {sum(1 for x in ratios if x > GOAL_VIA_BOT)} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def summary(rows: list[dict]) -> str:
    """One line per randomizer: how its cells fare against the goals."""
    import statistics

    lines = ["| family | randomizer | cells | get_delta_bounds median / worst (n <= 1e8) | worst at n = 1e9 "
             "| cells over 100 ms (1 s at 1e9) | worst (Up-Lo)/Lo where Up >= 1e-15 | cells over 1e-2 "
             "| worst get_epsilon / get_delta | calibration median / worst (n <= 1e8) | max evals "
             "| peak RSS | stopped (CPU / memory) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for fam, label, rs in _groups(rows):
        db = [_cpu(r["delta_bounds"]) for r in rs if r["n"] <= 10**8]
        db9 = [_cpu(r["delta_bounds"]) for r in rs if r["n"] > 10**8]
        over = sum(1 for r in rs if _cpu(r["delta_bounds"]) > (GOAL_DB_1E9 if r["n"] > 10**8 else GOAL_DB_WORST))
        gaps = []
        for r in rs:
            d = r["delta_bounds"]
            if "upper" in d and d["upper"] >= GOAL_GAP_FLOOR:
                gaps.append((d["upper"] - d["lower"]) / d["lower"] if d["lower"] > 0 else math.inf)
        ratios = [x for x in (_eps_ratio(r, rs) for r in rs) if not math.isnan(x)]
        cal = [_cpu(r.get("calibration")) for r in rs if r.get("calibration") and r["n"] <= 10**8]
        evals = [r["calibration"].get("evals", 0) for r in rs if r.get("calibration") and "evals" in r["calibration"]]
        rss = [c["rss_peak_mb"] for r in rs for c in (r.get("calibration"), r["delta_bounds"], r.get("epsilon"))
               if c and "rss_peak_mb" in c]
        n_to = sum(1 for r in rs for c in (r.get("calibration"), r["delta_bounds"], r.get("epsilon"))
                   if c and c.get("timeout") and not c.get("skipped"))
        n_oom = sum(1 for r in rs for c in (r.get("calibration"), r["delta_bounds"], r.get("epsilon"))
                    if c and c.get("oom") and not c.get("skipped"))
        med = statistics.median(db) if db else math.nan
        lines.append(
            f"| {fam} | {label} | {len(rs)} | {_fmt(med)} / {_fmt(max(db, default=math.nan))} "
            f"| {_fmt(max(db9, default=math.nan))} | {over} "
            f"| {max(gaps, default=math.nan):.2g} | {sum(1 for g in gaps if g > GOAL_GAP)} "
            f"| {max(ratios, default=math.nan):.3g} "
            f"| {(_fmt(statistics.median(cal)) + ' / ' + _fmt(max(cal))) if cal else 'n/a'} "
            f"| {max(evals) if evals else '-'} | {max(rss, default=math.nan):.0f} MB | {n_to} / {n_oom} |")
    return "\n".join(lines)


def misses(rows: list[dict]) -> str:
    """Every cell that misses a goal, one line per (cell, goal), grouped by goal."""
    by_goal: dict = {}

    def add(goal, r, text, per_cell=True):
        where = f", n = {r['n']:.0e}" + (f", eps = {r['eps']:g}" if per_cell else "")
        by_goal.setdefault(goal, []).append(f"- {r['label'] if r['family'] != 'a' else 'BMG ' + r['params']}"
                                            f"{where}: {text}")

    groups = {id(r): rs for _, _, rs in _groups(rows) for r in rs}
    seen_eps = set()
    for r in rows:
        d = r["delta_bounds"]
        t = _cpu(d)
        lim = GOAL_DB_1E9 if r["n"] > 10**8 else GOAL_DB_WORST
        if t > lim:
            add("get_delta_bounds over its limit", r, _t(d, r["timeout"]))
        if "upper" in d and d["upper"] >= GOAL_GAP_FLOOR:
            g = (d["upper"] - d["lower"]) / d["lower"] if d["lower"] > 0 else math.inf
            if g > GOAL_GAP:
                add("(Up-Lo)/Lo over 1e-2", r, f"{g:.3g} (Lo {d['lower']:.4g}, Up {d['upper']:.4g})")
        key = (r["family"], r["label"], r["n"]) if r["family"] != "a" else id(r)
        if key not in seen_eps:
            seen_eps.add(key)
            e = r.get("epsilon")
            at = (e or {}).get("delta_at")
            if at and _cpu(at) > lim and r["family"] != "a":  # ((a): the cell's own eps, best of --eps-reps)
                add("get_delta_bounds over its limit at get_epsilon's answer (off the eps grid)", r,
                    f"{_t(at, r['timeout'])} at eps {e['epsilon']:.4g}", per_cell=False)
            ratio = _eps_ratio(r, groups[id(r)])
            if e and not e.get("skipped") and (math.isinf(_cpu(e)) or ratio > GOAL_EPS_RATIO):
                what = _t(e, r["timeout"])
                if not math.isinf(_cpu(e)):
                    what += f" = {ratio:.3g} x" + (f" (epsilon {e['epsilon']:.4g}, get_delta_bounds there "
                                                   f"{_t(e['delta_at'], r['timeout'])})" if "delta_at" in e else "")
                add(f"get_epsilon(1e-6) over {GOAL_EPS_RATIO:g} x get_delta", r, what, per_cell=r["family"] == "a")
        vb = _via_bot_ratio(r)
        if vb > GOAL_VIA_BOT:
            add(f"replace through bot over {GOAL_VIA_BOT:g} x zero-out", r,
                f"{_t(d, r['timeout'])} vs {_t(r['zero_out'], r['timeout'])} = {vb:.3g} x")
        c = r.get("calibration")
        if c is not None and r["n"] <= 10**8 and r["family"] in "ab":
            ckey = ("cal", r["family"], r["n"], r["eps"])
            if ckey not in seen_eps:
                seen_eps.add(ckey)
                if _cpu(c) > GOAL_CAL or c.get("evals", 0) > GOAL_CAL_EVALS:
                    name = "calibrate_bmg" if r["family"] == "a" else "calibrate_gaussian"
                    lab = f"{name}, n = {r['n']:.0e}, eps = {r['eps']:g}"
                    ev = f", {c['evals']} evals" if "evals" in c else ""
                    by_goal.setdefault("calibration over 1 s or 10 evaluations", []).append(
                        f"- {lab}: {_t(c, r['timeout'])}{ev}")
        calls = (("calibration", r.get("calibration")), ("get_delta_bounds", d), ("get_epsilon", r.get("epsilon")))
        for what, c2 in calls:
            if c2 and not c2.get("skipped") and (c2.get("oom") or c2.get("rss_peak_mb", 0) > GOAL_RSS_MB):
                txt = "out of memory" if c2.get("oom") else f"{c2['rss_peak_mb']:.0f} MB"
                add("memory over 1 GB", r, f"{what}: {txt}")
    out = []
    for goal, items in by_goal.items():
        out.append(f"**{goal}** ({len(items)}):\n")
        out.extend(items)
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="the representative subset (default)")
    g.add_argument("--full", action="store_true", help="every cell of the map")
    ap.add_argument("--timeout", type=float, default=60.0, help="CPU seconds per call (default 60)")
    ap.add_argument("--families", default="abcd", help="subset of families, e.g. 'ab' (default abcd)")
    ap.add_argument("--out", default=None, help="Markdown file to write (default: stdout only)")
    ap.add_argument("--json", default=None, help="also write the raw results as JSON lines here")
    ap.add_argument("--resume", action="store_true", help="keep the cells already in --json, run the others")
    ap.add_argument("--mem-gb", type=float, default=3.0,
                    help="address-space limit per call in GB (RLIMIT_AS; 0: none; default 3)")
    ap.add_argument("--isolate", choices=("fork", "subprocess", "instr"), default="fork" if hasattr(os, "fork") else
                    "subprocess", help="run each call in a fork of this process (default on POSIX), in a fresh "
                    "interpreter, or in a fresh interpreter under callgrind (instr: every 'CPU s' figure is then "
                    "1e9 instructions executed, load-proof; bench/_instr.py)")
    ap.add_argument("--child-instr", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--eps-reps", type=int, default=1,
                    help="get_epsilon and its ratio's get_delta_bounds: best of this many forks while a call takes "
                    "under 1 s CPU (family a then also times get_delta_bounds at the cell's eps apart; default 1: one "
                    "sample, the map's figures before session 36)")
    ap.add_argument("--ns", default=None, help="restrict to these n, comma separated (e.g. 1e8,1e9)")
    ap.add_argument("--eps", default=None, help="restrict to these epsilons, comma separated (e.g. 8)")
    ap.add_argument("--labels", default=None,
                    help="restrict to randomizers whose label is one of these, comma separated "
                    "(e.g. 'Gauss s0=2.0,Gauss s0=4.6')")
    ap.add_argument("--render", action="store_true",
                    help="run nothing: only write the tables of the cells already in --json")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        _child(args.child)
        return 0
    if args.child_instr is not None:
        _child_instr(args.child_instr)
        return 0
    _ISOLATION.update(mode=args.isolate, mem_gb=args.mem_gb, eps_reps=max(args.eps_reps, 1))
    if args.isolate == "fork" and not args.render:
        print(f"imports before the first fork (not charged to any call): {_import_engine():.2f} s CPU",
              file=sys.stderr)
    rows: list[dict] = []
    eps_cache: dict = {}
    ns = None if args.ns is None else {int(float(x)) for x in args.ns.split(",")}
    es = None if args.eps is None else {float(x) for x in args.eps.split(",")}
    todo = [c for c in cells("full" if args.full else "quick")
            if c[0] in args.families and (ns is None or c[3] in ns) and (es is None or float(c[4]) in es)
            and (args.labels is None or c[1] in args.labels.split(","))]
    done = {}
    if (args.resume or args.render) and args.json and os.path.exists(args.json):
        with open(args.json) as fh:
            for line in fh:
                r = json.loads(line)
                done[(r["family"], r["label"], r["n"], r["eps"])] = r
                if r["family"] == "b" and "calibration" in r:  # shared by every sigma0
                    eps_cache.setdefault(("calibrate_gaussian", r["n"], r["eps"]), r["calibration"])
                if r["family"] != "a" and r.get("spec") and not r["epsilon"].get("skipped"):
                    eps_cache.setdefault((json.dumps(r["spec"], sort_keys=True), r["n"]), r["epsilon"])
    t_start = time.time()
    for i, c in enumerate(todo):
        key = (c[0], c[1], c[3], c[4])
        if key in done:
            rows.append(done[key])
            continue
        if args.render:
            continue
        row = run_cell(*c, args.timeout, eps_cache)
        rows.append(row)
        print(f"[{i + 1}/{len(todo)}, {time.time() - t_start:.0f} s wall] {json.dumps(row)}", file=sys.stderr,
              flush=True)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    md = "\n\n".join([x for x in (summary(rows), via_bot_summary(rows), markdown(rows), "Cells that miss a goal:\n",
                                  misses(rows)) if x])
    print(md)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(md + "\n")
    return 0


# ----------------------------------------------------------------------------- pytest-benchmark
try:
    import pytest
except ImportError:  # pragma: no cover - script mode without pytest
    pytest = None

if pytest is not None:
    BENCH_CELLS = [(10**3, 1.0), (10**4, 0.5), (10**5, 0.1), (10**6, 0.1), (10**8, 0.01)]

    @pytest.mark.parametrize("n,eps", BENCH_CELLS)
    def test_calibrate_bmg(benchmark, n, eps):
        from sharpdp.shuffle import calibrate_bmg

        b = benchmark.pedantic(calibrate_bmg, args=(n, eps, DELTA, 1), kwargs={"progress": False},
                               rounds=1, iterations=1)
        benchmark.extra_info.update(gamma=b.gamma, sigma0=b.sigma0, mse_single=b.mse_single)

    @pytest.mark.parametrize("n,eps", BENCH_CELLS)
    def test_bmg_delta_bounds(benchmark, n, eps):
        from sharpdp.shuffle import ShuffleAccountant

        spec = _template_bmg(n, eps)
        acc = ShuffleAccountant(_randomizer(spec), n)
        lo, up = benchmark.pedantic(acc.get_delta_bounds, args=(eps,), rounds=1, iterations=1)
        benchmark.extra_info.update(lower=lo, upper=up, rel_gap=(up - lo) / lo if lo > 0 else math.inf)

    @pytest.mark.parametrize("sigma0", GAUSS_SIGMAS)
    @pytest.mark.parametrize("n,eps", [(10**3, 1.0), (10**6, 0.1)])
    def test_gaussian_delta_bounds(benchmark, sigma0, n, eps):
        from sharpdp.shuffle import GaussianRandomizer, ShuffleAccountant

        acc = ShuffleAccountant(GaussianRandomizer(sigma0, 1), n)
        lo, up = benchmark.pedantic(acc.get_delta_bounds, args=(eps,), rounds=1, iterations=1)
        benchmark.extra_info.update(lower=lo, upper=up)

    @pytest.mark.parametrize("k,eps0", KRR)
    def test_krr_epsilon(benchmark, k, eps0):
        from sharpdp.shuffle import RandomizedResponse, ShuffleAccountant

        acc = ShuffleAccountant(RandomizedResponse(k, eps0), 10**4, adjacency="replace")
        benchmark.extra_info["epsilon"] = benchmark.pedantic(acc.get_epsilon, args=(DELTA,), rounds=1,
                                                             iterations=1)


if __name__ == "__main__":
    sys.exit(main())
