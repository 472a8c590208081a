"""Output files of the ``sharpdp`` commands: written whole or not at all, never over an input, an earlier
release only with ``--overwrite`` (``sharpdp.cli`` re-exports every public name)."""

from __future__ import annotations

import contextlib
import os
from typing import Iterator, Sequence

from sharpdp.cli.errors import CliError


def check_diagnostics_path(path: str | None, inputs: Sequence[str | None], outputs: Sequence[str] = ()) -> None:
    """Refuse a ``--diagnostics FILE`` that would overwrite an input or a release file, or cannot be written.

    Checked before any work is done (the diagnostics are written last, after the release).

    Raises
    ------
    CliError
        One line naming ``--diagnostics``: an empty name or a directory; the same file as one of
        ``inputs`` (the data, key files) or ``outputs`` (the release files); a parent directory
        that cannot be created (a missing one is created when the file is written, with its missing
        parents, as ``--out`` is: :func:`make_out_dir`), or in which an empty temporary file cannot be
        created (a trial, :func:`check_out_dir`, as for ``--out``; not a permission test).
    """
    if path is None:
        return
    if not path.strip() or os.path.isdir(path):
        raise CliError(f"--diagnostics: needs a file name, got {path!r}")
    other = _clash(path, [*inputs, *outputs])
    if other is not None:
        raise CliError(f"--diagnostics: {path} is (or is inside) an input or release file ({other}); it "
                       "would overwrite or corrupt it: name another file")
    # a trial, as for --out (os.access says yes to root on /proc): a missing directory is created and removed
    # again, then an empty temporary file beside FILE, which is how the file is written (release_file: a
    # temporary file in that directory, then renamed over FILE)
    check_out_dir(os.path.dirname(path) or os.curdir, "--diagnostics")


WRITTEN: list[str] = []  # files this command has completed so far (named on Ctrl-C)


@contextlib.contextmanager
def release_file(path: str, mode: int | None = None) -> Iterator[str]:
    """Write a file all at once: the caller writes the temporary path yielded (same directory), which
    replaces ``path`` only when the block ends without an exception, and is then recorded in
    :data:`WRITTEN`; on an exception (Ctrl-C included) the temporary file is removed and ``path`` is left
    as it was. So an interrupted command leaves no half-written release, and its "interrupted" line can
    name the files that are complete (a release in them is out). ``mode``: permissions set before the
    file appears under ``path`` (0o600 for diagnostics)."""
    head, tail = os.path.split(path)
    tmp = os.path.join(head, f".{tail}.partial-{os.getpid()}")
    try:
        if mode is not None:  # created with its mode before anything is written (writers keep an inode's mode)
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode))
            os.chmod(tmp, mode)  # (the umask may have cleared bits of ``mode``)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    WRITTEN.append(path)


def open_private(path: str):
    """Open ``path`` for writing (text, newline="") readable by its owner only (mode 0600): the
    diagnostics files hold true values and possibly the seed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.chmod(path, 0o600)  # (an existing file keeps its mode under O_CREAT)
    return os.fdopen(fd, "w", newline="")


def _clash(path: str, given: Sequence[str | None], inside: bool = True) -> str | None:
    """The first of ``given`` (paths or globs; None skipped) that ``path`` is, or (``inside``) is inside;
    else None."""
    import glob

    full = os.path.realpath(path)
    for g in given:
        if g is None:
            continue
        for other in (glob.glob(g) if glob.has_magic(g) else [g]):
            real = os.path.realpath(other)
            if real == full or (inside and os.path.isdir(real) and full.startswith(real + os.sep)):
                return other
    return None


def check_releases_not_inputs(releases: Sequence[str], inputs: Sequence[str | None], datasets: Sequence[str | None] = (),
                              flag: str = "--out") -> None:
    """Refuse, before any work, release files that would overwrite an input file (the data, key files)
    or land inside a dataset directory (a Parquet directory would read them as data).

    Raises
    ------
    CliError
        One line naming ``flag``: one of ``releases`` is one of ``inputs`` or ``datasets``, or is
        inside one of ``datasets``.
    """
    for release in releases:
        other = _clash(release, inputs, inside=False) or _clash(release, datasets)
        if other is not None:
            raise CliError(f"{flag}: the release file {release} would overwrite the input {other}: choose another "
                           f"{flag} directory")


def check_not_written(paths: Sequence[str], overwrite: bool, why: str, flag: str = "--out") -> None:
    """Refuse, before the work, output files that exist unless ``--overwrite`` was given (``overwrite``): a
    :class:`CliError` naming ``flag`` and the first existing file, ``why`` (what it holds) after it."""
    existing = [] if overwrite else [p for p in paths if os.path.exists(p)]
    if existing:
        raise CliError(f"{flag}: {existing[0]} exists {why}; pass --overwrite to replace it, or choose another "
                       f"{flag} directory")


def remove_earlier_outputs(outputs: Sequence[str], written: Sequence[str], command: str) -> list[str]:
    """The second half of the output-file rule (docs/cli.md §4), called once the run's checks passed, just before
    it writes: remove every file of ``outputs`` (all the files the command can write there, whatever its options)
    that exists and that this run does not write (``written``), and say so on stderr (one
    ``sharpdp COMMAND: note:`` line per file). The first half, :func:`check_not_written` over all of ``outputs``,
    refused an existing one without ``--overwrite``; with it, the directory then holds this run's outputs only,
    never a file of an earlier run beside them (an earlier release's figure beside a new release's table would
    publish two releases).

    Returns
    -------
    list of str
        The files removed (the commands' ``--json`` key ``removed``).

    Raises
    ------
    CliError
        A file that cannot be removed (the run stops before writing).
    """
    import sys

    keep = {os.path.realpath(p) for p in written}
    removed = []
    for p in outputs:
        if os.path.realpath(p) in keep or not os.path.lexists(p):
            continue
        try:
            os.remove(p)
        except OSError as exc:
            raise CliError(f"--overwrite: cannot remove {p} (an earlier run's output this run does not write, which "
                           f"must not stay beside the new one): {exc.strerror or exc}") from None
        print(f"sharpdp {command}: note: --overwrite: removed {p} (an earlier run's output that this run does not "
              "write)", file=sys.stderr, flush=True)
        removed.append(p)
    return removed


def check_out_dir(path: str, flag: str = "--out") -> None:
    """Fail early (before any long computation) if ``path`` cannot become an output directory.

    The check is a trial, not a permission test (``os.access`` says yes to root on ``/proc``): a missing directory
    is created (with its missing parents) and removed again, an existing one gets an empty temporary file.

    Raises
    ------
    CliError
        One line naming ``flag``: ``path`` is an existing file, or it cannot be created or written in.
    """
    import tempfile

    full = os.path.abspath(path)
    if os.path.exists(full) and not os.path.isdir(full):
        raise CliError(f"{flag}: {path} is a file, not a directory")
    created = []  # the directories this trial made, deepest last
    top = full
    while not os.path.exists(top):
        created.insert(0, top)
        top = os.path.dirname(top)
    if not os.path.isdir(top):
        raise CliError(f"{flag}: cannot create directory {path}: {top} is a file, not a directory")
    try:
        for d in created:
            os.mkdir(d)
        fd, probe = tempfile.mkstemp(prefix=".sharpdp-probe-", dir=full)
        os.close(fd)
        os.remove(probe)
    except OSError as exc:
        what = f"cannot create directory {path}" if created else f"directory {path} is not writable"
        raise CliError(f"{flag}: {what}: {exc.strerror or exc}") from None
    finally:
        for d in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(d)


def make_out_dir(path: str, flag: str = "--out") -> str:
    """Create the output directory ``path`` (parents too; an existing directory is fine).

    Raises
    ------
    CliError
        One line naming ``flag`` when ``path`` is a file or cannot be created.
    """
    check_out_dir(path, flag)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{flag}: cannot create directory {path}: {exc.strerror or exc}") from None
    return path
