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
        that does not exist or is not writable.
    """
    if path is None:
        return
    if not path.strip() or os.path.isdir(path):
        raise CliError(f"--diagnostics: needs a file name, got {path!r}")
    other = _clash(path, [*inputs, *outputs])
    if other is not None:
        raise CliError(f"--diagnostics: {path} is (or is inside) an input or release file ({other}); it "
                       "would overwrite or corrupt it: name another file")
    full = os.path.realpath(path)
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        raise CliError(f"--diagnostics: directory {os.path.dirname(path) or parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (os.path.exists(full) and not os.access(full, os.W_OK)):
        raise CliError(f"--diagnostics: {path} is not writable")


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


def check_out_dir(path: str, flag: str = "--out") -> None:
    """Fail early (before any long computation) if ``path`` cannot become an output directory.

    Raises
    ------
    CliError
        One line naming ``flag``: ``path`` is an existing file, or its nearest existing parent
        is not a writable directory.
    """
    full = os.path.abspath(path)
    if os.path.exists(full):
        if not os.path.isdir(full):
            raise CliError(f"{flag}: {path} is a file, not a directory")
        if not os.access(full, os.W_OK | os.X_OK):
            raise CliError(f"{flag}: directory {path} is not writable")
        return
    parent = os.path.dirname(full)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise CliError(f"{flag}: cannot create directory {path}: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CliError(f"{flag}: cannot create directory {path}: {parent} is not writable")


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
