"""The ``sharpdp`` command-line program.

Each subcommand lives in its own module exposing ``register(subparsers,
parent)``, ``run(args) -> dict`` and ``format_text(result) -> str``. Domain
code is imported inside ``run`` so ``sharpdp --help`` stays fast; ``sharpdp --version`` imports
no subcommand (nor numpy) at all.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import re
import sys
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Iterator, NoReturn, Sequence

if TYPE_CHECKING:
    import numpy as np

from sharpdp.cli.errors import CliError, install_hint, option_error  # noqa: F401  (re-exported)
from sharpdp.cli.files import (WRITTEN, check_diagnostics_path, check_not_written, check_out_dir,  # noqa: F401
                               check_releases_not_inputs, make_out_dir, open_private, release_file,
                               remove_earlier_outputs)
from sharpdp.cli.notes import (BMG_FIELD_HELP, MEAN_RMSE_NOTE, bracket_note, delta_bounds_meaning,  # noqa: F401
                               UNITS, evaluations_meaning, release_scope)

# Module names under sharpdp.cli, in the order shown by --help.
_COMMANDS = ("mean", "account", "histogram", "crlb", "figures")


#: Width of the commands' text output: every line fits an 80-column terminal (a long data path or column
#: name excepted: words are never cut).
TEXT_WIDTH = 80


def wrap_entry(label: str | None, text: str, indent: int = 13) -> list[str]:
    """``label`` padded to ``indent - 2`` columns and ``": "``, then ``text``, wrapped at :data:`TEXT_WIDTH`
    under a hanging indent of ``indent``; ``label`` "": the first line indented too (a continuation of the
    entry above), None: the first line starts at column 0 (``sharpdp mean``'s layout)."""
    head = "" if label is None else f"{label:<{indent - 2}}: " if label else " " * indent
    return _wrap_glued(text, head, " " * indent)


def _wrap_glued(text: str, initial_indent: str, subsequent_indent: str) -> list[str]:
    """``text`` wrapped at :data:`TEXT_WIDTH` (textwrap, with these indents), never inside a word nor inside
    ``name = value`` or a short interval ``[a, b]`` (kept on one line, where a reader or a search of the output expects
    it)."""
    import re
    import textwrap

    glued = text.replace(" = ", "\xa0=\xa0")  # (textwrap breaks at ASCII whitespace only)
    glued = re.sub(r"\[[^\[\]\s]{1,24}, [^\[\]\s]{1,24}\]", lambda m: m.group(0).replace(", ", ",\xa0"), glued)
    return [part.replace("\xa0=\xa0", " = ").replace(",\xa0", ", ") for part in
            textwrap.wrap(glued, TEXT_WIDTH, initial_indent=initial_indent, subsequent_indent=subsequent_indent,
                          break_long_words=False, break_on_hyphens=False)]


def plain_notes(labels: tuple[str, ...]) -> list[str]:
    """The lines of the ``--explain`` notes for ``labels`` (keys of :data:`sharpdp.cli.notes.PLAIN_NOTES`, in order): a blank line,
    :data:`sharpdp.cli.notes.PLAIN_HEADING`, then one wrapped entry per label (80 columns, as the outputs).

    Raises
    ------
    ValueError
        If a label has no note.
    """
    from sharpdp.cli.notes import PLAIN_HEADING, PLAIN_NOTES

    unknown = [k for k in labels if k not in PLAIN_NOTES]
    if unknown:
        raise ValueError(f"labels: no plain note for {unknown}")
    return ["", PLAIN_HEADING, *(line for k in labels for line in wrap_entry(k, PLAIN_NOTES[k]))]


def wrap_text(text: str) -> str:
    """Every line of ``text`` longer than :data:`TEXT_WIDTH` wrapped (``sharpdp histogram`` and ``sharpdp
    account``): the continuation lines hang under the text after a short ``"label: "`` (within the first 16
    columns), else 2 columns right of the line's own indent. Words are never cut (a long path stays whole), nor
    is ``name = value`` (kept on one line, where a search of the output expects it)."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= TEXT_WIDTH:
            out.append(line)
            continue
        colon = line.find(": ")
        hang = colon + 2 if 0 < colon < 16 else len(line) - len(line.lstrip(" ")) + 2
        out += _wrap_glued(line, "", " " * hang)
    return "\n".join(out)


#: What ``sharpdp mean`` / ``sharpdp histogram`` say (stderr, and under ``warnings``) when ``--seed`` is given.
SEEDED_MODE_WARNING = ("--seed: seeded, reproducible mode: anyone who knows the seed can regenerate the noise and "
                       "undo it, so this release is NOT private unless the seed is kept secret (it is never "
                       "printed). Without --seed the noise comes from a cryptographically secure generator keyed "
                       "by fresh OS entropy")


def warn_seeded(command: str, seed: int | None) -> None:
    """Print :data:`SEEDED_MODE_WARNING` on stderr when ``seed`` is given: once the input is known to be valid
    and before the wait (calibration bars), so that it is not lost after them."""
    if seed is not None:
        print(f"sharpdp {command}: warning: {SEEDED_MODE_WARNING}", file=sys.stderr, flush=True)


def refuse_parquet_csv(path: str | None, flag: str) -> None:
    """Refuse a Parquet file given where a CSV is read (``--csv``, ``--keys``): its bytes are not UTF-8, so the CSV
    check would say "save it as UTF-8", and histogram's header read named its bytes as columns. ``--csv`` also
    names the Dask engine's ``--data``, which reads Parquet.

    Raises
    ------
    CliError
        One line naming ``flag`` and the file, when it starts with Parquet's magic bytes ``PAR1``; an unreadable
        or missing file passes (the reader reports it).
    """
    if path is None or not os.path.isfile(path):
        return
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        return
    if magic == b"PAR1":
        other = f"read it with --data {path} --engine dask, or " if flag == "--csv" else ""
        raise CliError(f"{flag}: {path} is a Parquet file, not CSV: {other}save it as CSV")


def release_rng(seed: int | None) -> np.random.Generator | None:
    """The ``rng`` a CLI release hands to the library: None (the library's secure generator, keyed by
    fresh OS entropy; no seed exists) without ``--seed``, a seeded numpy Generator with it.

    The seed itself is never printed nor written to a release file or stdout (only to a
    ``--diagnostics`` file); a seeded run says it is not private unless the seed stays secret
    (:data:`SEEDED_MODE_WARNING`).
    """
    if seed is None:
        return None
    import numpy as np

    return np.random.default_rng(int(seed))


def bounds_choice(args: argparse.Namespace, columns) -> str:
    """``sharpdp mean`` (both engines): where the clipping bounds come from; data-derived ones only when asked.

    As ``sharpdp histogram`` does for its key domain: ``--bounds`` gives public bounds; without
    it, the built-in public bounds of the flights table are used when the input is that table
    and they cover every one of ``columns``; bounds taken from the data's min/max are used only
    when asked for with ``--bounds-from-data`` (which also takes precedence over the built-in
    bounds), since the privacy guarantee does not cover them.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of ``sharpdp mean`` (``bounds``, ``bounds_from_data``, ``csv``, ``data``).
    columns : sequence of str
        The columns the mean is taken over, in order.

    Returns
    -------
    str
        ``"public"`` (``--bounds``), ``"data"`` (``--bounds-from-data``) or ``"builtin"``.

    Raises
    ------
    CliError
        One line naming ``--bounds`` when there are no public bounds and ``--bounds-from-data``
        is not given.
    """
    from sharpdp.apps import datasets

    if args.bounds is not None:
        return "public"
    if args.bounds_from_data:
        return "data"
    custom = args.csv is not None or getattr(args, "data", None) is not None
    missing = [c for c in columns if c not in datasets.FLIGHTS_BOUNDS]
    if not custom and not missing:
        return "builtin"
    if getattr(args, "data", None) is not None:
        which = "the --data dataset"
    elif args.csv is not None:
        which = "a custom CSV (--csv)"
    else:
        which = f"--columns {','.join(missing)} (no built-in public bounds)"
    shown = ",".join(columns[:12]) + (f",... ({len(columns)} columns)" if len(columns) > 12 else "")
    raise CliError(f"--bounds: {which} needs public clipping bounds fixed without looking at the data "
                   f"(--bounds lo:hi,... one pair per column: {shown}); or pass --bounds-from-data to accept "
                   "bounds taken from the data's min/max, which the privacy guarantee does not cover")


# argparse alone takes only "-1" and "-.5" for negative numbers, so "--delta -1e-6" failed with
# "expected one argument"; this also accepts exponents, "-1.", "-inf" and "-nan" as values, so the
# validators can name the parameter ("--delta must be > 0"). No option of ours looks like a number.
_NEGATIVE_NUMBER = re.compile(r"^-(?:(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|inf(?:inity)?|nan)$", re.IGNORECASE)


#: True while ``main`` runs with ``--json`` among its arguments: errors are then also a JSON object on stdout.
_JSON_ERRORS: ContextVar[bool] = ContextVar("sharpdp_cli_json_errors", default=False)


def _wants_json(argv: Sequence[str]) -> bool:
    """True when ``argv`` asks for ``--json`` (or an abbreviation argparse takes for it, ``--js``), before
    ``--`` ends the options; known before parsing, so that a parse error can be reported as JSON too."""
    for a in argv:
        if a == "--":
            return False
        if len(a) > 3 and "--json".startswith(a):
            return True
    return False


_ARGPARSE_PARAMETER = re.compile(r"^argument ([^:/ ]+)(?:/[^: ]+)*: ")
_FLAG = re.compile(r"^(--?[A-Za-z][\w-]*)")


def error_parameter(message: str) -> str | None:
    """The option (``--epsilon``) or argument (``COMMAND``) an error message of the CLI names first, or None.

    Reads argparse's forms ("argument --epsilon: invalid float value", "unrecognized arguments: --foo",
    "the following arguments are required: --n", "one of the arguments --epsilon --delta is required",
    "unrecognized option --json: ...") and the validators' ("--delta must be > 0", "--csv: file not found").
    """
    m = _ARGPARSE_PARAMETER.match(message)
    if m:
        return m.group(1)
    for head in ("unrecognized arguments: ", "the following arguments are required: ", "unrecognized option ",
                 "one of the arguments "):
        if message.startswith(head):
            rest = [w for w in message[len(head):].split() if w != "--"]  # ("--" ends the options: not one)
            return rest[0].rstrip(",:") if rest else None
    m = _FLAG.match(message)
    return m.group(1) if m else None


def usage_error(command: str, message: str, parameter: str | None = None) -> NoReturn:
    """Report a usage error of ``sharpdp COMMAND`` found after parsing as argparse reports its own: one line
    on stderr, with ``--json`` also the JSON object on stdout (``parameter`` given, else read from
    ``message``), exit status 2 through SystemExit."""
    if _JSON_ERRORS.get():
        _emit_json_error(f"sharpdp {command}", message, 2,
                         **({} if parameter is None else {"parameter": parameter}))
    print(f"sharpdp {command}: error: {message} (see --help)", file=sys.stderr)
    raise SystemExit(2)


def json_error(prog: str, message: str, status: int, **extra: Any) -> str:
    """The JSON object that ``--json`` prints on stdout for an error (and for Ctrl-C), one line.

    Keys: ``error`` (the message of the stderr line, without its ``sharpdp COMMAND: error:`` prefix),
    ``parameter`` (the option or argument it names, :func:`error_parameter`; null when none is at fault),
    ``command`` (``"mean"``; null for an error before the subcommand), ``exit_status`` (2; 130 for Ctrl-C)
    and any ``extra`` keys.
    """
    command = prog.split(" ", 1)[1] if " " in prog else None
    return json.dumps({"error": message, "parameter": error_parameter(message), "command": command,
                       "exit_status": status, **extra})  # (an ``extra`` parameter replaces the one read)


def _emit_json_error(prog: str, message: str, status: int, **extra: Any) -> None:
    try:
        print(json_error(prog, message, status, **extra), flush=True)
    except BrokenPipeError:  # (a reader that went away: the stderr line and the exit status remain)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:  # one line, no usage dump (with --json: also a JSON object)
        from sharpdp.cli.errors import underflow_wording

        message = underflow_wording(self, message)
        if _JSON_ERRORS.get():
            _emit_json_error(self.prog, message, 2)
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_bounds_option(args: argparse.Namespace, columns, skipped_notes=()) -> Any:
    """``--bounds`` as an array of shape (d, 2); a count that does not match names the columns in use.

    With a CSV (``--csv`` or ``--data``) and no ``--columns`` the mean is over the file's numeric columns
    only, so a newcomer who counts every column of the file gets told which ones were taken, and why the
    others were skipped (``skipped_notes``: the readers' warnings naming them). Both engines use it.
    """
    from sharpdp.apps import datasets

    given = len(str(args.bounds).split(","))
    if given != len(columns):
        shown = ", ".join(columns[:12]) + (f", ... ({len(columns)} columns)" if len(columns) > 12 else "")
        from_csv = getattr(args, "csv", None) is not None or getattr(args, "data", None) is not None
        skipped = ("; without --columns a CSV's numeric columns are used, its other columns are skipped"
                   if from_csv and args.columns is None else "")
        if skipped and skipped_notes:
            skipped += " (" + "; ".join(skipped_notes) + ")"
        raise CliError(f"--bounds: expected {len(columns)} lo:hi pair{'' if len(columns) == 1 else 's'}, one per column of the mean in "
                       f"order ({shown}){skipped}; got {given}")
    try:
        return datasets.parse_bounds(args.bounds, len(columns))
    except ValueError as exc:
        raise option_error(exc, {"csv": "--csv", "columns": "--columns", "bounds": "--bounds"}) from None


def _jsonable(obj: Any) -> Any:
    np = sys.modules.get("numpy")  # (no numpy object exists unless numpy was imported)
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if np is not None and isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if np is not None and isinstance(obj, np.generic):
        return obj.item()
    return obj


#: The first line of ``sharpdp --help``'s epilog, and what ``sharpdp`` alone prints with the help.
START_HINT = ("Start with 'sharpdp mean' (the main job: a private mean of a built-in real table); "
              "'sharpdp COMMAND --help' shows a command's options.")


#: The end of every subcommand's ``--help``: where the progress rule is (said once, in ``sharpdp --help``: it was
#: repeated in full at the end of every command's help; docs/cli.md §8).
SUBCOMMAND_EPILOG = ("Results go to stdout, progress and warnings to stderr ('sharpdp --help' says how progress is "
                     "shown).")


def _add_version(parser: argparse.ArgumentParser) -> None:
    from sharpdp import __version__

    parser.add_argument("--version", action="version", version=f"sharpdp {__version__}")


def build_parser() -> argparse.ArgumentParser:
    from sharpdp._progress import PROGRESS_RULE

    parser = _Parser(prog="sharpdp", description="Sharp, certified differential-privacy tools.",
                     epilog=f"{START_HINT} {PROGRESS_RULE}")
    _add_version(parser)
    parent = _Parser(add_help=False)
    parent.add_argument("--json", action="store_true", help="print the result as one JSON object")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in _COMMANDS:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub, parent)
    for p in sub.choices.values():  # the rule itself once, in `sharpdp --help`; here a one-line pointer to it
        p.epilog = SUBCOMMAND_EPILOG if not p.epilog else f"{p.epilog} {SUBCOMMAND_EPILOG}"
    return parser


def _as_option(parser: argparse.ArgumentParser, command: str, msg: str) -> str:
    """``msg`` with a library parameter that starts it ("n must be ...", "delta: ...") written as the
    subcommand's option of that name (``--n``, ``--delta``) when it has one; otherwise unchanged."""
    head = msg.split(":", 1)[0].split(" ", 1)[0]
    if not head.isidentifier():
        return msg
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flag = "--" + head.replace("_", "-")
    return flag + msg[len(head):] if flag in sub.choices[command]._option_string_actions else msg


@contextlib.contextmanager
def slow_note(command: str, text: str, after: float = 5.0) -> Iterator[None]:
    """Print ``sharpdp COMMAND: note: TEXT`` on stderr once if the block is still running after ``after``
    seconds: a step with nothing to count (one certified value) says why it takes long instead of a bar."""
    import threading

    timer = threading.Timer(after, lambda: print(f"sharpdp {command}: note: {text}", file=sys.stderr, flush=True))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    token = _JSON_ERRORS.set(_wants_json(given))
    try:
        return _main(given)
    finally:
        _JSON_ERRORS.reset(token)


def _fail(command: str, message: str, status: int = 2, **extra: Any) -> int:
    """Report an error of ``sharpdp COMMAND``: one line on stderr and, with --json, a JSON object on stdout."""
    if _JSON_ERRORS.get():
        _emit_json_error(f"sharpdp {command}", message, status, **extra)
    print(f"sharpdp {command}: {'' if status == 130 else 'error: '}{message}", file=sys.stderr)
    return status


def _main(given: list[str]) -> int:
    if given[:1] == ["--version"]:  # the full parser's own answer (argparse acts on its first option at once),
        version_only = _Parser(prog="sharpdp", add_help=False)  # without importing the subcommands
        _add_version(version_only)
        version_only.parse_known_args(given[:1])
    parser = build_parser()
    if not given:  # `sharpdp` alone: the commands and where to start (on stderr: stdout holds results only)
        parser.print_help(sys.stderr)
        return 2
    if given and given[0].startswith("-") and given[0] not in ("-h", "--help", "--version"):
        parser.error(f"unrecognized option {given[0]}: options go after the subcommand (sharpdp COMMAND --help)")
    args, extra = parser.parse_known_args(given)
    if extra:  # reported by the subcommand's parser, so the message names the subcommand
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    _JSON_ERRORS.set(bool(args.json))  # (the parsed flag decides from here on)
    module = importlib.import_module(f"{__name__}.{args.command}")
    WRITTEN.clear()
    try:
        result = module.run(args)
    except ImportError as exc:  # an optional dependency of the [cli] extra is not installed
        missing = exc.name or str(exc)
        return _fail(args.command, f"{missing} is not installed; the command-line tool needs the "
                                   f"[cli] extra: {install_hint('cli')}")
    except (CliError, ValueError, TypeError, OSError, KeyError, RuntimeError) as exc:  # (RuntimeError: a search
        # that found no answer, e.g. the calibration at a delta below what the release sampler's charge allows)
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return _fail(args.command, _as_option(parser, args.command, msg))
    except ArithmeticError as exc:  # overflow / division by zero inside a computation: one line, no traceback
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else "no message"
        return _fail(args.command, f"numerical failure ({type(exc).__name__}: {msg}); "
                                   "no value is reported for these arguments")
    except KeyboardInterrupt:
        from sharpdp._progress import close_interrupted

        close_interrupted()  # bars their callers close only on success: at their true count, before the line
        done = ""
        if WRITTEN:  # a release already on disk is out: running the command again releases the data again
            one = len(WRITTEN) == 1
            done = (f" after writing {', '.join(WRITTEN)}: "
                    + ("that file is complete (the release in it is out" if one else
                       "those files are complete (the releases in them are out")
                    + ": running the command again releases the data again)")
        return _fail(args.command, f"interrupted{done}", 130, files_written=list(WRITTEN))
    text = json.dumps(_jsonable(result), indent=2, allow_nan=False) if args.json else module.format_text(result)
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. `sharpdp ... | head`: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
