"""Review rev31 of session 31's far-tail rules (the far-tail document's §37, cited by number only so that this file
also passes tests/test_architecture.py on a main without it): §37.1 rule 1, a finer request's §28 run that does not fit
the caps is run at the default rel_tol 1e-2 (``far_tail._fit_run``); rule 2, §36's second run (the default request's,
intersected) only where the finer run's §28 run was not already the default's and the lattice cap sets the finer run's
step; and the move of ``body_chernoff`` / ``lower_tail_penalty`` to chernoff.py (no value changed).

References, independent of the rules reviewed:
* main 7b66b43's floats at the accountant's rel_tol 1e-2 (BASE, /tmp/map30 of session 30): requests at rel_tol >= 1e-2
  are claimed unchanged, bit for bit (measured over this review's scan: 200 of 200 zero-out cells, Gaussian randomizer
  sigma0 0.5, 1, 2, 4.6 and family a's BMG, n = 1e4 ... 1e9, eps 1e-3 ... 8, with conc31's branch; the far-tail
  cells of tail31's at rel_tol 1e-3 below);
* main 7b66b43's brackets at rel_tol 1e-3 (REF3): certified brackets of the same value, so the branch's must meet them;
  and where the document claims the same brackets (every §36 scan cell "equal to the last digit"), bit for bit. Scan at
  rel_tol 1e-3 (tail31 6dd6c4d against main): 160 zero-out cells (the five randomizers above, n = 1e2, 1e4, 1e6 at
  every eps, n = 1e8, 1e9 at eps 1e-3, 0.01, 0.1, 1), 40 replace cells (family a's BMG, n = 1e2 ... 1e9) and 8 cells
  of GaussianRandomizer(0.6) / (0.7338), n = 1e8, 1e9, eps 1e-3, 0.01: 205 the same floats, 1 main over the time
  limit, 2 moved (below).
* the default request's bracket of the same cell: §36 made a finer request's answer at least as good as the default
  request's wherever the finer one missed its rel_tol; rule 2 drops that where the cap does not set the finer run's
  step. At BMG(0.008546, 0.34095), n = 1e8, replace, eps = 4 (family a's BMG of n = 1e8, eps = 4) the rel_tol 1e-3
  request now returns the upper value 1.0076320e-6 (gap 1.27 %), worse than the default request's 1.0052081e-6 (gap
  1.02 %) and than session 30's answer to the same request (the default's bracket): a looser certified bracket, not a
  wrong one; likewise n = 1e9, eps = 8 (replace): 1.0486925e-6 against 1.0368679e-6 (xfail below).
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest

from sharpdp.shuffle import BlanketMixedGaussian, GaussianRandomizer, ShuffleAccountant, clear_caches
from sharpdp.shuffle.accountant import far_tail
from _main_floats34 import switch  # noqa: E402

HAS_37 = hasattr(far_tail, "_fit_run")


def _rand(spec):
    kind, a, b = spec
    return GaussianRandomizer(a, 1) if kind == "G" else BlanketMixedGaussian(a, b, 1)


def _bracket(spec, n: int, adj: str, eps: float, rel_tol: float) -> tuple[float, float]:
    clear_caches()
    lo, up = ShuffleAccountant(_rand(spec), n, adj, rel_tol=rel_tol).get_delta_bounds(eps)
    return float(lo), float(up)


BMG_A_1E8_4 = ("B", 0.008545970743400005, 0.3409533484609755)  # family a's BMG at n = 1e8, eps = 4
BMG_A_1E9_0001 = ("B", 0.07887975715707618, 0.5969535466821054)  # family a's BMG at n = 1e9, eps = 0.001

# (randomizer, n, adjacency, eps): main 7b66b43's brackets at rel_tol 1e-2 (far-tail cells of the regime map)
BASE = {
    (("B", 0.051057210686144563, 0.5666966712607993), 100, "zero_out", 8.0): (8.93943985090542e-07,
                                                                               8.940128109823004e-07),
    (("B", 0.1978332514643355, 0.8333815446233817), 10**6, "zero_out", 0.01): (9.976722108939749e-07,
                                                                                9.99148765497048e-07),
    (("G", 0.5, 0), 100, "zero_out", 8.0): (0.08320416228664382, 0.08320549713717564),
    (("G", 0.5, 0), 10**6, "zero_out", 0.01): (0.12344978796448164, 0.1237407160070289),
    (("G", 1.0, 0), 10**6, "zero_out", 0.01): (0.00032451925549389785, 0.0003247734815772805),
    (("G", 2.0, 0), 10**6, "zero_out", 0.01): (2.1000191957824914e-19, 3.21732264542545e-19),
    (("G", 4.6, 0), 1000, "zero_out", 0.1): (1.4146269816872798e-22, 1.4161914861103924e-22),
    (BMG_A_1E8_4, 10**8, "replace", 4.0): (9.950171683573768e-07, 1.0052080623413447e-06),
}


@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, pins session 33's floats on purpose; the new rules' values are checked against references in the session-34 files
def test_default_requests_keep_mains_floats(monkeypatch):
    """Requests at rel_tol 1e-2: both rules start below it, the moved functions compute the same floats."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, lead: §8.19
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    switch(monkeypatch, "TV_WEIGHTED", False)  # (**) session 37, hat37: pins main's floats; §51's values: test_hat37_tv_weight.py
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37
    # (**) session 35, mid35: main's floats need docs/accountant_tail.md §46's steps off
    for name in ("END_ATOM_SNAP", "ATOM_SPACING_SNAP", "LOWER_ONLY_SETTLED"):
        switch(monkeypatch, name, False)
    bad = []
    for (spec, n, adj, eps), ref in BASE.items():
        got = _bracket(spec, n, adj, eps, 1e-2)
        if got != ref:
            bad.append((spec, n, adj, eps, got, ref))
    assert not bad, bad


# (randomizer, n, adjacency, eps): main 7b66b43's brackets at rel_tol 1e-3 (session 30's answers: §36's intersection
# where the finer run missed its rel_tol)
REF3 = {
    # §37.1 (a): the finer run's §28 run does not fit and runs at 1e-2 (rule 1), §36's run skipped; session 30's bracket
    (("G", 0.5, 0), 10**8, "zero_out", 0.1): (0.012408594180771402, 0.012429177243461997),
    # §37.1 (b): the finer run's §28 run fits, the cap sets its step (h = 34): §36's second run still made
    (("G", 0.5, 0), 10**8, "zero_out", 1.0): (0.0017105297251528893, 0.0017142925116636176),
    # rule 2 skips the second run (§37.1 (c)): session 30's bracket kept
    (BMG_A_1E9_0001, 10**9, "zero_out", 0.001): (9.941423185821072e-07, 9.957868364243412e-07),
    # far-tail cells at small n (neither rule reaches them): the same floats
    (("G", 0.5, 0), 100, "zero_out", 8.0): (0.08320416311281599, 0.08320549698480577),
    (("B", 0.051057210686144563, 0.5666966712607993), 100, "zero_out", 8.0): (8.939589519960791e-07,
                                                                               8.940587276414406e-07),
    (("G", 4.6, 0), 10**6, "zero_out", 0.001): (8.455089785290283e-08, 8.459655461641597e-08),
    (("G", 1.0, 0), 10**6, "zero_out", 0.01): (0.0003246050200824058, 0.0003246500473152403),
    # rule 2 skips the second run and the bracket moves (certified, looser: the xfail below)
    (BMG_A_1E8_4, 10**8, "replace", 4.0): (9.950171683573768e-07, 1.0052080623413447e-06),
}
MOVED = {(BMG_A_1E8_4, 10**8, "replace", 4.0)}


def test_finer_requests_meet_session30s_brackets(monkeypatch):
    """Every cell: the rel_tol 1e-3 bracket meets main's (two certified brackets of one value), and equals it to the
    last digit where no bracket was claimed to move."""
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    switch(monkeypatch, "TV_WEIGHTED", False)  # (**) session 37, hat37: pins main's floats; §51's values: test_hat37_tv_weight.py
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37
    # (**) session 35, mid35: main's floats need docs/accountant_tail.md §46's steps off
    for name in ("END_ATOM_SNAP", "ATOM_SPACING_SNAP", "LOWER_ONLY_SETTLED"):
        switch(monkeypatch, name, False)
    bad = []
    for cell, (rlo, rup) in REF3.items():
        lo, up = _bracket(*cell, 1e-3)
        if not (0.0 <= lo <= up and up >= rlo and lo <= rup):
            bad.append(("disjoint", cell, lo, up, rlo, rup))
        elif cell not in MOVED and (lo, up) != (rlo, rup):
            bad.append(("moved", cell, lo, up, rlo, rup))
    assert not bad, bad


BMG_A_1E9_8 = ("B", 0.00435827979685098, 0.2747133577606459)  # family a's BMG at n = 1e9, eps = 8
LOOSER = [(BMG_A_1E8_4, 10**8, "replace", 4.0), (BMG_A_1E9_8, 10**9, "replace", 8.0)]


# (**) session 31, lead: was a strict xfail (rule 2 of §37.1 skipped the default run there); §37.4 runs it where the
# finer run's lower value is 0, so the finer request answers with the default's bracket again
@pytest.mark.parametrize("cell", LOOSER, ids=["n1e8-e4", "n1e9-e8"])
def test_finer_request_no_worse_than_the_default_request(cell, monkeypatch):
    """§36's guarantee: a request finer than 1e-2 that misses its rel_tol answers with a bracket at least as tight as
    the default request's at both ends (the intersection). At family a's BMG of n = 1e8, eps = 4, replace, the finer
    run settles at T0 = B = 4063232, h = 32 (the cap does not set the step: rule 2 skips the default run), its lower
    value 0 for the far-tail law, its upper value 2.4e-3 relative above the default's; at n = 1e9, eps = 8 (replace)
    1.14e-2 above (both lower values 0; main 7b66b43 answers both finer requests with the default's bracket)."""
    # (**) session 38, hat38: §37.4's premise (the finer run's lower value 0); with §53 the finer run keeps a lower value
    # (n = 1e8: [9.9980e-7, 1.00311e-6], main's [9.9502e-7, 1.00763e-6]) and the default run is not made
    switch(monkeypatch, "HAT_PIECES", False)
    lo2, up2 = _bracket(*cell, 1e-2)
    lo3, up3 = _bracket(*cell, 1e-3)
    assert up3 <= up2 * (1 + 1e-12) and lo3 >= lo2 * (1 - 1e-12), (lo2, up2, lo3, up3)
