"""Review rev33 of session 33's speed-only change to the C++ power step and log-mgf kernel (tail33,
the far-tail document's §42: glibc's complex log on its branch 1/2 <= |z| < 1 without its qsort calls, checked once
per process; ``log_mgf_logs`` reading its positive terms from arrays built once per call). The claim attacked: the
same floats as main 617886d.

Reference: main 617886d's certified brackets (computed with /work/venv/main, a fresh accountant per call, caches
cleared) at 43 random zero-out cells (BMG, Gaussian randomizer, k-RR; n = 2 ... 1e7; eps 0.003 ... 6.3; seed 7 of this
review's sweep) at the default rel_tol 1e-2, and at rel_tol 1e-4 for a subset (where the FFT treatment and its power
step run). Review sweep (tail33 at 1199913): the 55 cells of both adjacencies at rel_tol 1e-2 and the 43 zero-out cells
at 1e-4 (see the report) were equal to main's floats bit for bit. Replace-one cells are not pinned here (rep33 changes
their split search in the same session).
"""

from __future__ import annotations

from _main_floats34 import session43_floats

import pytest

from sharpdp.shuffle import (BlanketMixedGaussian, GaussianRandomizer, PrivUnit, RandomizedResponse, ShuffleAccountant,
                             clear_caches)
from _main_floats34 import switch  # noqa: E402


def _make(cell):
    kind = cell[0]
    if kind == "bmg":
        return BlanketMixedGaussian(cell[1], cell[2], 1)
    if kind == "gauss":
        return GaussianRandomizer(cell[1], 1)
    if kind == "privunit":
        return PrivUnit(0.75, 0.2, 10)
    return RandomizedResponse(int(cell[1]), cell[2])


# (cell, n, eps, main's lower, main's upper) at rel_tol 1e-2, zero-out
PINS = [
    (('bmg', 0.028959826000099578, 0.9497901003429676), 100000, 0.20818811717771013, 1.2450667559234463e-09, 1.251234535079004e-09),
    (('bmg', 0.4776769790862203, 2.0026899724756904), 5, 0.26539319614875506, 0.008334605398983468, 0.008387671712809417),
    (('bmg', 0.004112021917204619, 0.8969209233356505), 100000, 0.21726719785076476, 0.00017092389756766444, 0.00017123261369534102),
    (('bmg', 0.02910849825570657, 1.7598518909367848), 1000, 0.2421113647805122, 0.0007959628082000846, 0.0008008604032157101),
    (('krr', 2, 1.0), 30, 0.2030283741656518, 0.0032647357313319784, 0.003264735731333363),
    (('bmg', 0.08389229286758068, 1.640319136806428), 2, 0.1797532758257415, 0.15128731388738464, 0.15170254052464968),
    (('bmg', 0.12814073112108532, 0.9590605789498128), 30, 0.24865559964595843, 0.12259049076255343, 0.12298209667579353),
    (('krr', 3, 6.0), 1000000, 5.427214627089642, 0.0, 5e-324),
    (('bmg', 0.028952261326190307, 2.344280509826173), 10000000, 0.010035729902559359, 0.0, 1.2177963530832848e-27),
    (('krr', 3, 3.0), 10000, 0.25921144562309484, 5.431233666748641e-15, 5.431233666840942e-15),
    (('bmg', 0.006273104332245433, 0.9685600509816685), 1000, 0.06167853082706776, 0.1646878120878728, 0.16519083729641906),
    (('gauss', 0.5), 5, 0.20566088492736898, 0.8038653531047556, 0.8103475342179663),
    (('bmg', 0.30701831250486816, 1.0517368741875224), 100000, 0.07421274689971621, 2.704769031527144e-17, 2.7119129017157175e-17),
    (('gauss', 0.5), 100000, 0.012064754914955053, 0.22761409097180077, 0.22810142053119978),
    (('bmg', 0.0033708935465837243, 2.543952616234373), 100, 0.012639546271827552, 0.1356140429757146, 0.1367918078662112),
    (('gauss', 0.5), 2, 0.05230422729832027, 0.8225762715578957, 0.8244033994040022),
    (('krr', 2, 0.5), 10000, 2.367185837367956, 0.0, 5e-324),
    (('krr', 3, 6.0), 10000000, 0.006945002545367084, 0.00021613058906040075, 0.00021613059025674578),
    (('krr', 2, 1.0), 100000, 0.015449645258297768, 1.811668054815722e-18, 1.811668123654193e-18),
    (('bmg', 0.019147999176598166, 0.44195413050372073), 5, 0.003167888083693364, 0.720688367335893, 0.7232333336210303),
    (('bmg', 0.005412127839065049, 1.2817467894933416), 10000000, 0.003838423822447934, 0.00033933065857832446, 0.0003394213453852827),
    (('bmg', 0.00694490191211414, 0.9810959427041086), 100000, 0.0442981410835592, 0.005651516259432732, 0.005662755363966309),
    (('gauss', 2.0), 1000000, 0.009453393104459517, 3.9167075059418105e-19, 5.591005287173557e-19),
    (('krr', 10, 3.0), 10000, 0.6078372861456491, 1.3411184714125245e-57, 1.3411184714555234e-57),
    (('krr', 2, 3.0), 2, 0.1960961221231726, 0.4213231583620813, 0.4213231583620951),
    (('bmg', 0.015332263972117295, 2.0358761178774953), 10000000, 0.0063144397843383614, 1.962078081968509e-10, 1.975410251682907e-10),
    (('bmg', 0.05566784154732745, 1.6572819627083502), 10000000, 0.39834406747924583, 0.0, 1.3995870783371327e-27),
    (('gauss', 1.0), 10000, 0.006872560734750187, 0.022912825418441963, 0.022938381364108234),
    (('gauss', 1.0), 100, 0.3625927461313324, 0.08857788468465234, 0.0887449024073832),
    (('krr', 3, 1.0), 5, 0.012277831546713051, 0.1106954607495814, 0.11069546074959681),
    (('krr', 2, 6.0), 10000, 0.89756094192336, 1.3702936226311166e-06, 1.3702936226324517e-06),
    (('bmg', 0.007780516318781325, 0.6430035917042337), 30, 0.009972345377884282, 0.5366111112520875, 0.5372851288017919),
    (('krr', 2, 1.0), 10000, 1.373656478087714, 0.0, 5e-324),
    (('krr', 10, 1.0), 5, 2.380957604333656, 0.0, 5e-324),
    (('bmg', 0.012001072686748345, 1.0910099622095912), 2, 0.019668896518753354, 0.3416129106431846, 0.3417808008057204),
    (('bmg', 0.007066814375228078, 1.6784769330211218), 10000000, 2.4002610384994636, 0.0, 2.997648270589922e-27),
    (('bmg', 0.19270350806436615, 0.7044667092363248), 2, 0.009271384758661842, 0.40363789526764693, 0.4066172636708963),
    (('krr', 10, 0.5), 5, 0.16238681056194343, 0.002202554017448656, 0.0022025540174496878),
    (('krr', 2, 0.5), 1000000, 0.025931421983769076, 0.0, 1e-323),
    (('bmg', 0.03467405484738741, 0.3752375472484638), 10000000, 2.819939931541445, 1.1521648008188343e-06, 1.1524156905225572e-06),
    (('bmg', 0.017738274279712335, 2.928072679527055), 1000000, 0.3164130230702135, 0.0, 9.760246561401265e-28),
    (('bmg', 0.03470526158802599, 1.7398706814637617), 1000, 0.11954181612230065, 0.006662642133492348, 0.006702144442453369),
    (('bmg', 0.3281191728655398, 2.8438875884196544), 10000000, 0.02273288581837996, 0.0, 1.2608712419348133e-27),
]


@pytest.mark.parametrize("cell, n, eps, lo, up", PINS)
@pytest.mark.usefixtures("session33_floats")  # (**) session 34, lead: un-nested rules off, pins session 33's floats on purpose; the new rules' values are checked against references in the session-34 files
def test_same_floats_as_main_at_default_rel_tol(cell, n, eps, lo, up, monkeypatch):
    session43_floats(monkeypatch)  # (**) session 44, lead: the switch-on
    switch(monkeypatch, "CHERNOFF_LOG_STEP", False)  # (**) session 42, g05: docs/accountant_tail.md §62.1
    switch(monkeypatch, "BODY_LOWER_POSITION", False)  # (**) session 40, lead: §57.4
    switch(monkeypatch, "HAT_LOWER", False)  # (**) session 35, big35: pins main's floats; §45's values: test_big35_hat_lower.py
    switch(monkeypatch, "JUMP_HAT_FIRST", False)  # (**) session 36, jump36: pins main's floats; §49's values: test_jump36_hat_first.py
    switch(monkeypatch, "STOP_LOSS_OCTAVES", False)  # (**) session 36, jump36
    switch(monkeypatch, "TV_WEIGHTED", False)  # (**) session 37, hat37: pins main's floats; §51's values: test_hat37_tv_weight.py
    switch(monkeypatch, "CLOSED_WHOLE_ACCEPT", 0.0)  # (**) session 37, hat37
    switch(monkeypatch, "FEW_PAIR_SPLIT", False)  # (**) session 39, lead: §8.17 skips the two-user quadrature where the bracket meets 0.9 rel_tol: the n = 2 cell 0.05 % -> 0.15 % wide
    switch(monkeypatch, "FEW_MULTI_JUMP", False)  # (**) session 40, eps40: §8.19 lowers the n = 5 cells' upper values (nested)
    clear_caches()
    got = ShuffleAccountant(_make(cell), n, "zero_out").get_delta_bounds(eps)
    assert (float(got[0]), float(got[1])) == (lo, up)
