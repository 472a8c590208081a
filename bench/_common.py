"""Helpers shared by the bench/ runners (peers.py, smoke.py): which sharpdp code was measured."""

from __future__ import annotations

import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
CODE_PATHS = (":/python", ":/cpp", ":/CMakeLists.txt", ":/pyproject.toml")  # (from the top of the repository)


def git(*args: str, where: str = HERE) -> str:
    """Output of ``git -C where ARGS`` (stripped), "unknown" when git or the repository is missing."""
    try:
        return subprocess.run(["git", "-C", where, *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def code_commit() -> str:
    """Short hash of the last commit that changed the measured code (python/, cpp/, build files) in
    the checkout this interpreter imports sharpdp from (an older commit's work tree and venv can
    run the current bench/), with "+dirty" when that work tree changes them: bench/ edits do not
    move it."""
    import importlib.util

    spec = importlib.util.find_spec("sharpdp")
    where = os.path.dirname(spec.origin) if spec and spec.origin else HERE
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS, where=where)
    return git("log", "-1", "--format=%h", "--", *CODE_PATHS, where=where) + ("+dirty" if dirty else "")


# cells shared by peers.py and smoke.py
BMG_HEAVY = (0.0462579752243591, 0.7578495751181393)  # calibrate_bmg's pick at n = 1e4, eps = 1, delta = 1e-6
COMPOSE = {"gamma": 0.95, "sigma0": 4.6, "n": 10**6, "dx": 1e-6, "rounds": 10}  # composition cell


def build_pair(folder: str) -> str:
    """The composition cell's dominating pair (certified, lattice COMPOSE["dx"]), built once by a
    parent process (not timed) and pickled into ``folder`` for its children; returns the path."""
    import pickle

    from sharpdp.shuffle import BlanketMixedGaussian, ShuffleAccountant, dominating_pair

    acc = ShuffleAccountant(BlanketMixedGaussian(COMPOSE["gamma"], COMPOSE["sigma0"], 1), COMPOSE["n"])
    pair = dominating_pair(acc, COMPOSE["dx"], max_evaluations=80, progress=False)
    path = os.path.join(folder, "pair.pkl")
    with open(path, "wb") as fh:
        pickle.dump(pair, fh)
    return path
