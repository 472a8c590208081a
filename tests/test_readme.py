"""The README's Python example runs and its claims hold."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs():
    code = re.search(r"```python\n(.*?)```", README.read_text(), flags=re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    acc = ns["acc"]
    lo, up = acc.get_delta_bounds(1e-5)
    assert 0 < lo <= up <= 1.01 * lo
    eps = acc.get_epsilon(1e-6)
    assert acc.get_delta(eps) <= 1e-6
    rr = ns["rr"]
    e = rr.get_epsilon(1e-6)
    assert 0.0065 < e < 0.0068  # reference bracket [0.006592, 0.006836] for 10-RR, eps0 = 1, n = 1e5
    # (the fastest public k-RR accountant's lower and upper values)
    assert rr.get_delta_lower_form(e) <= rr.get_delta(e) <= 1e-6


def test_ci_runs_exactly_the_readme_test_command():
    """`.ci/run` runs README's command 2 ("Run the test suite") verbatim, so the two cannot drift."""
    block = re.search(r"Run the test suite.*?```bash\n(.*?)```", README.read_text(), flags=re.S)
    assert block is not None, "README lost its 'Run the test suite' command block"
    readme_cmds = [ln.strip() for ln in block.group(1).splitlines() if ln.strip()]
    assert readme_cmds and all("pytest" in c or "pip" in c for c in readme_cmds), readme_cmds
    ci = (README.parent / ".ci" / "run").read_text().splitlines()
    ci_cmds = [ln.strip() for ln in ci
               if ln.strip() and not ln.lstrip().startswith("#") and not ln.startswith(("set ", "cd "))]
    assert ci_cmds[:len(readme_cmds)] == readme_cmds  # then the non-test steps (lint, types, C++)


def test_readme_output_streams_and_quick_figures_match_the_cli():
    """README's stdout/stderr paragraph and its `figures --quick` row say what the CLI does."""
    from sharpdp import _progress
    from sharpdp.cli import figures

    text = " ".join(README.read_text().split())
    m = re.search(r"one plain line at most every (\d+(?:\.\d+)?) s", text)
    assert m is not None and float(m.group(1)) == _progress._PlainBar.interval
    assert f"every {m.group(1)} s" in _progress.PROGRESS_RULE  # the --help epilog says the same
    assert f"written to `./{figures._OUT_QUICK}/`" in text and f"`./{figures._OUT}/`" in text
