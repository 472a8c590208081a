"""rev43 (not collected by pytest): the mpmath precision of a test file's references, set per test (a module-level
``mpmath.mp.dps`` is undone by tests/conftest.py's ``_no_values_across_switches`` and by other files' settings in a
full run)."""

from __future__ import annotations

import mpmath
import pytest


def digits_fixture(d: int):
    """An autouse fixture running each test of the module that assigns it under ``mpmath.workdps(d)``."""

    @pytest.fixture(autouse=True)
    def _digits():
        with mpmath.workdps(d):
            yield

    return _digits
