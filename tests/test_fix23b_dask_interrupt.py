"""Ctrl-C on ``sharpdp histogram --engine dask`` as a terminal sends it: SIGINT to the whole process group, the
local cluster's worker processes included. They keep SIGINT blocked (distributed._engine.sigint_held), so the
terminal shows no worker traceback; the command prints one line naming the step stopped (or, during the cluster's
start, a line saying it waits for the start) and exits with status 130 within seconds."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

CLI = [sys.executable, "-m", "sharpdp.cli"]


def _default_sigint() -> None:
    """In the child before it starts Python: SIGINT to its default action, so that Python installs its
    KeyboardInterrupt handler. A process started with SIGINT ignored (a background job of a non-interactive shell:
    ``pytest ... &``, nohup, some CI runners) passes the ignored disposition on to its children, and Python then
    leaves SIGINT ignored: the Ctrl-C these tests send did nothing and all three failed at once (the session-33
    failure "at load 15": a run started in the background, not a timing race)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def sigint_raises():
    """SIGINT raises KeyboardInterrupt in this process for the test's duration (Python's own handler), whatever
    disposition pytest was started with (see :func:`_default_sigint`); the previous one restored after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
#: the CLI with every progress step printing its first line at once (not after 2 s quiet): a step's start is seen
EAGER = [sys.executable, "-c", "import sys, sharpdp._progress as P; P._PlainBar.quiet = 0.0; "
         "from sharpdp.cli import main; sys.exit(main(sys.argv[1:]))"]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    from sharpdp.distributed.generate import keys_text, write

    root = tmp_path_factory.mktemp("dask_int")
    data = root / "flights.parquet"
    write(str(data), 1_000_000, rows_per_file=500_000, progress=False)
    (root / "keys.csv").write_text(keys_text())
    return root


def _interrupt(table, tmp_path, trigger: tuple[str, ...], wait: float, command: str = "histogram", cli=CLI):
    """Run ``sharpdp COMMAND --engine dask`` on one worker in its own session, send SIGINT to its group ``wait`` s
    after a stderr line containing one of ``trigger``; return (stderr lines, seconds from the signal to the exit,
    exit status)."""
    cmd = cli + [command, "--engine", "dask", "--workers", "1", "--data", str(table / "flights.parquet")]
    cmd += (["--by", "carrier", "--keys", str(table / "keys.csv"), "--out", str(tmp_path), "--no-plot"]
            if command == "histogram" else ["--columns", "dep_delay", "--bounds=-120:1440"])
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          start_new_session=True, preexec_fn=_default_sigint) as p:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(p.stderr), daemon=True)
        reader.start()
        t0 = time.monotonic()
        try:
            while (not any(t in ln for ln in lines for t in trigger) and p.poll() is None
                   and time.monotonic() - t0 < 60):
                time.sleep(0.02)
            if p.poll() is not None:  # (a fast machine: the step ended before its first progress line)
                pytest.skip(f"the command ended before {trigger!r} was printed")
            time.sleep(wait)
            sent = time.monotonic()
            os.killpg(p.pid, signal.SIGINT)
            rc = p.wait(timeout=30)
            took = time.monotonic() - sent
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            reader.join(5)
    return [ln.rstrip("\n") for ln in lines], took, rc


def test_ctrl_c_during_the_cluster_start_says_it_waits_for_it(table, tmp_path):
    lines, took, rc = _interrupt(table, tmp_path, ("--engine dask: starting",), 0.2)  # (the start takes seconds)
    text = "\n".join(lines)
    assert rc == 130 and lines[-1] == "sharpdp histogram: interrupted", text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert "interrupted: the local Dask cluster is still starting; stopping it once it is up" in text, text
    assert any(ln.startswith("starting a local Dask cluster of 1 worker") and ln.endswith("(interrupted)")
               for ln in lines), text
    assert took < 20, (took, text)  # (a few seconds on an idle machine; 3.1-4.1 s at load 12 on 2 cores)
    assert not (tmp_path / "histogram_release.csv").exists()


def test_ctrl_c_during_a_pass_names_the_step(table, tmp_path):
    """Once the cluster is up (sharpdp mean's first pass, the worker starting on its first partition): the step
    stopped is named, then the cluster's stop."""
    steps = ("data (pass 1: count rows): workers starting",)
    lines, took, rc = _interrupt(table, tmp_path, steps, 0.0, command="mean", cli=EAGER)
    text = "\n".join(lines)
    assert rc == 130 and lines[-1] == "sharpdp mean: interrupted", text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
    assert any(ln.startswith(steps) and ln.endswith("(interrupted)") for ln in lines), text
    assert "interrupted: stopping the local Dask cluster (a few seconds)" in text, text
    assert took < 20, (took, text)  # (0.8-4.4 s at load 3-12 on 2 cores)


def test_ctrl_c_while_the_cluster_closes_lets_the_close_finish(monkeypatch, sigint_raises):
    """A Ctrl-C that comes while the local cluster closes is held until it has closed, then raised: an interrupted
    close stayed "closing" and Dask's exit hook waited 10 s for it (silence before the process ended)."""
    import distributed
    from distributed.core import Status

    from sharpdp.distributed import cluster

    seen = []
    original = distributed.LocalCluster.close

    def close_with_ctrl_c(self, *a, **k):
        seen.append(self)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # (to this thread; held: the close ends)
        time.sleep(0.2)  # (without the hold, the KeyboardInterrupt comes here or in the close's wait)
        return original(self, *a, **k)

    monkeypatch.setattr(distributed.LocalCluster, "close", close_with_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        with cluster(workers=1, processes=False) as engine:
            assert engine.workers == 1
    assert seen and seen[0].status == Status.closed
