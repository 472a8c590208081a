"""Pure-Python parts of the benchmark runners in bench/ (no benchmark is run here)."""

from __future__ import annotations

import math
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench"))

import _instr  # noqa: E402
import bench_regimes  # noqa: E402
import peers  # noqa: E402
import smoke  # noqa: E402


@pytest.mark.parametrize("upper,eps_ref", [(1.0, 0.148), (8.0, 7.03), (8.0, 0.0254), (0.9, 1e-4)])
def test_matched_iterations_reach_sharpdp_precision(upper, eps_ref):
    T = peers.matched_iterations(upper, eps_ref)
    # the bisection bracket after T halvings is within 1e-3 eps_ref, and T - 1 halvings are not enough
    assert upper * 2.0**-T <= peers.REL_XTOL * eps_ref < upper * 2.0 ** -(T - 1)


def test_matched_iterations_default_without_reference():
    assert peers.matched_iterations(8.0, None) == 12
    assert peers.matched_iterations(8.0, math.nan, default=7) == 7


def test_absent_peers_are_named_not_quoted(tmp_path):
    class A:
        wang, clones = None, str(tmp_path)

    assert peers.peer_status("wang", A).startswith("absent (--wang PATH")
    assert peers.peer_status("clones", A) == f"absent (computeamplification.py not in {tmp_path})"
    (tmp_path / "computeamplification.py").write_text("")
    assert peers.peer_status("clones", A) is None
    row = dict(cell="2-RR", peer="wang", sharpdp=dict(min=0.01, median=0.02, eps=0.1, runs=[]),
               peer_absent="absent (--wang PATH not given)", load=(1.0, 2.0))
    line = peers.markdown_row(row, 60.0)
    assert "absent (--wang PATH not given)" in line and "x" not in line.split("|")[5]


def test_markdown_row_ratio_of_medians_and_minima():
    row = dict(cell="c", peer="wang", load=(1.0, 1.5),
               sharpdp=dict(min=0.01, median=0.02, eps=0.1, runs=[]),
               peer_result=dict(min=0.5, median=0.6, eps=0.1, runs=[dict(T=13)]))
    cols = [c.strip() for c in peers.markdown_row(row, 60.0).split("|")]
    assert cols[5] == "30x (50x)" and cols[7] == "0.1 (T=13)" and cols[8] == "1.00-1.50"


def test_summarize_failures():
    assert peers.summarize([{"timeout": True}, {"cpu": 1.0, "eps": 0.1}])["failed"] == "timeout"
    s = peers.summarize([{"cpu": 3.0, "eps": 0.2}, {"cpu": 1.0, "eps": 0.2}, {"cpu": 2.0, "eps": 0.2}])
    assert (s["min"], s["median"]) == (1.0, 2.0)


def test_parse_dumps_reads_named_regions(tmp_path):
    (tmp_path / "cg.out.1").write_text("desc: Timerange: Basic block 0 - 9\n"
                                       "desc: Trigger: Client Request: cold\nsummary: 123456\ntotals: 123456\n")
    (tmp_path / "cg.out.2").write_text("desc: Trigger: Client Request: warm\nsummary: 789\n")
    (tmp_path / "cg.out").write_text("desc: Trigger: Program termination\nsummary: 5\n")
    assert _instr.parse_dumps(str(tmp_path / "cg.out")) == {"cold": 123456, "warm": 789}


def _file(commit, cells, load=1.0):
    return dict(commit=commit, date="2026-12-02", load=[load, load, load], cells=cells)


def test_compare_flags_instruction_regressions_only_above_threshold():
    base = _file("a", {"x": dict(instr_cold=100e6, instr_warm=50e6, cpu_median=0.01, cpu_min=0.01),
                       "y": dict(instr_cold=100e6, instr_warm=50e6)})
    new = _file("b", {"x": dict(instr_cold=119e6, instr_warm=50e6, cpu_median=0.05, cpu_min=0.05),
                      "y": dict(instr_cold=100e6, instr_warm=61e6)})
    table, bad = smoke.compare(base, new, 0.2)
    # x: +19 % instructions (under), CPU 5x slower but CPU does not decide where counts exist
    assert bad == ["y instr_warm: 1.220x"]
    assert table.count("SLOWER") == 1


def test_compare_falls_back_to_cpu_median():
    base = _file("a", {"x": dict(cpu_median=0.010, cpu_min=0.009)})
    new = _file("b", {"x": dict(cpu_median=0.013, cpu_min=0.0095)})
    _, bad = smoke.compare(base, new, 0.2)
    assert bad == ["x cpu_median: 1.300x"]


def test_proc_cpu_tracks_this_process():
    c0 = bench_regimes._proc_cpu(os.getpid())
    if c0 is None:
        pytest.skip("no /proc")
    t0 = time.process_time()
    while time.process_time() - t0 < 0.15:
        pass
    c1 = bench_regimes._proc_cpu(os.getpid())
    assert 0.15 - 0.03 <= c1 - c0 <= 0.15 + 0.5  # /proc counts in 10 ms ticks


def test_watchdog_stops_a_runaway_fork_as_timeout():
    if not hasattr(os, "fork") or bench_regimes._proc_cpu(os.getpid()) is None:
        pytest.skip("needs fork and /proc")
    import signal

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # spin without writing
        os.close(r)
        while True:
            pass
    os.close(w)
    data, wall = bench_regimes._watch(pid, r, 0.2, 0.0)
    os.close(r)
    _, status, _ = os.wait4(pid, 0)
    assert wall is None and data == b""
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU
    assert bench_regimes._classify_failure(None, os.WTERMSIG(status), "") == {"timeout": True}
