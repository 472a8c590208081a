"""The switches of docs/calibration.md §12 (session 34) turned off: the certifying evaluations of the loose search at
rel_tol 1e-2 and calibrate_bmg's stage-2 probes made, as in session 33. For test files that pin the earlier rules of
docs/calibration.md §6-§8 on purpose (``pytestmark = pytest.mark.usefixtures("session33_calibration")``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sharpdp.shuffle.accountant import limits


@pytest.fixture
def session33_calibration(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """limits.CAL_CERT_REL_TOL_LOOSE = 1e-2 and limits.CAL_LOOSE_SKIP_PROBES = False for one test."""
    monkeypatch.setattr(limits, "CAL_CERT_REL_TOL_LOOSE", 1e-2)
    monkeypatch.setattr(limits, "CAL_LOOSE_SKIP_PROBES", False)
    yield
