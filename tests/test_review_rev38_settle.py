"""Review rev38 (session 38) of the lead's §7.5 (docs/accountant.md, ``limits.SWEEP_LAW_SETTLE``,
accountant/law_settle.py): inside a privacy profile's sweep a law whose certified upper value at a smaller eps is at or
below the report's maximum at eps is not certified again (D_up of each pair non-increasing in eps, §1.6).

Read line by line (rev38): ``settled`` compares with the maximum of the laws certified at eps (not the caller's
floor), over recorded eps' <= eps only; records are per accountant and per law index, and ``bmg_laws`` lists
(x vs bot, bot vs x) in that order at every eps (its one eps-independent branch, sigma0 below ~0.028, returns two
unit-bound laws). Checked here: with the rule on, the laws it skipped change no reported value -- 100-eps profiles
(upper values) and privacy_profile_bounds (both ends) equal the switch-off values bit for bit for GaussianRandomizer(1),
n = 1e4, BMG(0.3, 1.0), n = 1e4 and GaussianRandomizer(0.5), n = 1e3 (zero-out), and the rule did skip laws there."""

from __future__ import annotations

import numpy as np
import pytest

from _main_floats34 import switch
from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle import privacy_profile, privacy_profile_bounds

law_settle = pytest.importorskip("sharpdp.shuffle.accountant.law_settle")

ROUNDS = {"gauss1": (lambda: GaussianRandomizer(1.0, 1), 10**4, 3.0),
          "bmg": (lambda: BlanketMixedGaussian(0.3, 1.0, 1), 10**4, 3.0),
          "gauss05": (lambda: GaussianRandomizer(0.5, 1), 10**3, 6.0)}


def _values(name):
    make, n, top = ROUNDS[name]
    eps = np.linspace(0.0, top, 100)
    clear_caches()
    v = np.asarray(privacy_profile(ShuffleAccountant(make(), n), eps, progress=False))
    clear_caches()
    lo, up = privacy_profile_bounds(ShuffleAccountant(make(), n), eps, progress=False)
    return v, np.asarray(lo), np.asarray(up)


@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_settled_laws_change_no_reported_value(name, monkeypatch):
    skipped = []
    real = law_settle.LawSettle.settled

    def spy(self, i, eps, up_max):
        out = real(self, i, eps, up_max)
        skipped.append(out)
        return out

    monkeypatch.setattr(law_settle.LawSettle, "settled", spy)
    on = _values(name)
    assert sum(skipped) >= 10, sum(skipped)  # (the rule skipped laws)
    switch(monkeypatch, "SWEEP_LAW_SETTLE", False)
    off = _values(name)
    for a, b in zip(on, off):
        assert np.array_equal(a, b), (name, np.max(np.abs(a - b)))
