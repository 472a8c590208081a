"""Review rev39 (session 39): a privacy profile's values against fresh accountants, for session 38's sweep rules
(docs/accountant.md §7.5 SWEEP_LAW_SETTLE, docs/composition.md §2.19 PLAIN_WARM_UPPER / PLAIN_NEG_UPPER) and exp39's
§2.20 (SWEEP_CHECKS: the driver's idle shortcuts skipped inside a sweep), at cells rev38's tests do not reach: the
Gaussian randomizer at n = 1e6 (the far-tail path), a heavy BMG at n = 1e5, the few-user bracket's cell
GaussianRandomizer(0.46), n = 1e3, up to eps = 27 (§8.16's bracket takes over mid-sweep), and replace-one through bot.

Reference: each value at eps_i (i = 1, 10, ..., 91 of a 100-point linspace from 0) must be at or above the certified
lower value of a fresh accountant at rel_tol 1e-3 (get_delta_bounds, no sweep; computed offline by rev39 on exp39's
1e9dce0e in separate processes, the values below; for replace through bot the chain's lower value at the reported
split). Measured: ratios 1.00000 ... 1.0040, none below 1; the profile's own rel_tol 1e-2 is met against them.
"""

from __future__ import annotations

import numpy as np
import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches, privacy_profile

CELLS = {"g05_1e6": (lambda: GaussianRandomizer(0.5, 1), 10**6, "zero_out", 3.0),
         "g1_1e4_rep": (lambda: GaussianRandomizer(1.0, 1), 10**4, "replace", 2.0),
         "bmg_1e5": (lambda: BlanketMixedGaussian(0.0653, 0.723, 1), 10**5, "zero_out", 3.0),
         "g046_1e3": (lambda: GaussianRandomizer(0.46, 1), 1000, "zero_out", 27.0)}

# the fresh rel_tol-1e-3 lower values at eps_i, i = 1, 10, ..., 91
TIGHT_LO = {
    "g05_1e6": [0.1182967311694146, 0.07459002844595884, 0.05372808515785549, 0.041303003502792514, 0.03281042875021716, 0.026547019176556767, 0.021732602503808585, 0.01788737219784581, 0.014775526906756457, 0.012218079510835672, 0.01009738838985519],
    "bmg_1e5": [0.0021181510865638455, 7.345422868325067e-08, 2.9575764585206e-09, 2.796994065936625e-10, 3.742673609147226e-11, 5.973034237612714e-12, 1.0500403753168403e-12, 1.9458287633212486e-13, 3.7001973247663466e-14, 7.095146624846306e-15, 1.355409292047952e-15],
    "g046_1e3": [0.6371050443972229, 0.39848510390769615, 0.20688133148949123, 0.08504947173509302, 0.02699594256564309, 0.006517281318570013, 0.0011846425354915182, 0.0001609696796616611, 1.6265314164326777e-05, 1.2174391291497316e-06, 6.729897102611814e-08],
    "g1_1e4_rep": [0.04213138615858224, 0.004937303862820536, 0.0007618507244466953, 0.0002319934510482549, 9.634462020545427e-05, 4.639170028763227e-05, 2.430890754485732e-05, 1.3428518715020348e-05, 7.681175941972056e-06, 4.493138504943741e-06, 2.6724767996365453e-06],
}


@pytest.mark.parametrize("name", sorted(CELLS))
def test_profile_at_or_above_the_fresh_tight_lower_value(name):
    make, n, adj, top = CELLS[name]
    eps = np.linspace(0.0, top, 100)
    clear_caches()
    v = np.asarray(privacy_profile(ShuffleAccountant(make(), n, adj), eps, progress=False))
    for i, lo in zip(range(1, 100, 9), TIGHT_LO[name]):
        assert v[i] >= lo * (1 - 1e-12), (name, i, float(eps[i]), float(v[i]), lo)
        assert v[i] <= lo * (1 + 1.01e-2) + 1e-300, (name, i, float(eps[i]), float(v[i]), lo)
