"""Session 34's bracket-moving speed rules off (docs/accountant_tail.md §44): main's (session 33's) floats, for the
tests that pin an older rule's floats on purpose (each call marked `# (**) session 34, tail34`)."""

from __future__ import annotations

#: set while a test runs with the switches off: tests/conftest.py clears the process caches after it, so no value
#: computed under the other rule is reused by a later test (the memos' keys do not carry the switches)
DIRTY = [False]


def main_floats(monkeypatch) -> None:
    """The switches of docs/accountant_tail.md §44.1-§44.4 off for the test (monkeypatch undoes them)."""
    for name in ("BODY_WHOLE_STOP", "JUMP_TV_STOP", "ATOM_AIM_SLOW"):
        switch(monkeypatch, name, False)


#: A float recorded on one machine is reproduced on another to a few ulps, not always to the bit: numpy's float64
#: exp/log run AVX-512 kernels on CPUs that have them and libm elsewhere (they differ in the last bit for a few % of
#: arguments, docs/accountant_tail.md §60.4), and OpenBLAS picks its reduction kernels by CPU; a last bit that moves a
#: certified choice (a Chernoff lambda, a clamp) moves the reported float further, within its certified bracket. The
#: tests that pin recorded floats compare to this relative tolerance (session 42: recorded on AVX-512 machines, checked
#: on an AVX2 one: the differences seen were 1e-16 ... 1.9e-11).
MACHINE_REL = 1e-10


def machine_same(got, want, rel: float = MACHINE_REL) -> bool:
    """``got == want`` up to :data:`MACHINE_REL` relative, element by element (numbers, float.hex strings, or nested
    tuples / lists of them; the same length)."""
    if isinstance(got, (tuple, list)):
        return isinstance(want, (tuple, list)) and len(got) == len(want) and all(
            machine_same(g, w, rel) for g, w in zip(got, want))
    g = float.fromhex(got) if isinstance(got, str) else float(got)
    w = float.fromhex(want) if isinstance(want, str) else float(want)
    return g == w or abs(g - w) <= rel * max(abs(g), abs(w))


def switch(monkeypatch, name: str, value) -> None:
    """``limits.<name> = value`` for one test (monkeypatch undoes it), the process caches cleared now and after it."""
    from sharpdp.shuffle import clear_caches
    from sharpdp.shuffle.accountant import limits

    clear_caches()
    DIRTY[0] = True
    monkeypatch.setattr(limits, name, value)


#: every switch of session 34's speed rules and its session-33 value (docs/accountant_tail.md §43-§44,
#: docs/accountant.md §9.11, docs/composition.md §2.16, docs/calibration.md §12)
SESSION33 = {"BODY_WHOLE_STOP": False, "JUMP_TV_STOP": False, "ATOM_AIM_SLOW": False, "VIA_BOTTOM_LOOSE_SEARCH": False,
             "PAIR_STEEP_STEPS": False, "CLOSED_PIECES_STAGE": False, "CAL_CERT_REL_TOL_LOOSE": 1e-2,
             "CAL_LOOSE_SKIP_PROBES": False}


def session33_floats(monkeypatch) -> None:
    """Every session-34 switch at its session-33 value for one test: session 33's floats, for the tests that pin
    them on purpose (their new values are checked against references in the session-34 test files)."""
    for name, value in SESSION33.items():
        switch(monkeypatch, name, value)


#: every switch of session 35's rules and its session-34 value (docs/accountant_tail.md §45-§47, docs/accountant.md
#: §9.12, docs/composition.md §2.17 and §4.7, docs/calibration.md §13)
SESSION34 = {"HAT_LOWER": False, "LOWER_ONLY_SETTLED": False, "ATOM_SPACING_SNAP": False, "END_ATOM_SNAP": False,
             "CLOSED_CHEAP_FFT": False, "VIA_BOTTOM_BUDGET": False, "VIA_BOTTOM_SEARCH_B": False,
             "PAIR_GAP_BUDGET": False, "EXPORT_RELATTICE": False, "CAL_LOOSE_REL_TOL": 0.1,
             "CAL_LOOSE_JENSEN_GAUSS": False, "CAL_TRUST_GROW": False, "CAL_ZERO_AS_TINY": False}


def session34_floats(monkeypatch) -> None:
    """Every session-35 switch at its session-34 value for one test: session 34's floats, for the tests that pin
    them (or a mechanism of them) on purpose; the new rules' values are checked in the session-35 test files."""
    for name, value in SESSION34.items():
        switch(monkeypatch, name, value)


#: every switch of session 36's rules and its session-35 value (docs/accountant_tail.md §46.5, §48, §49,
#: docs/accountant.md §8.14 and §9.13, docs/composition.md §2.18, §4.8 and §4.9)
SESSION35 = {"SNAP_COARSE": False, "EPS_LOOK_REL_LARGE": 0.1, "EPS_TIE_LEAD": 0.0, "EXPORT_PICKS_STEP": False,
             "EXPORT_STEP_CURVATURE": False, "VIA_BOTTOM_SETTLE_GAIN": 0.0, "VIA_BOTTOM_FLOOR_STOP": False,
             "PLAIN_WARM_START": False, "JUMP_HAT_FIRST": False, "JUMP_HAT_BODY": False, "STOP_LOSS_OCTAVES": False,
             "CHERNOFF_KEEP": False, "BODY_END_SNAP": False, "CAP_COARSE": 1.0}


def session35_floats(monkeypatch) -> None:
    """Every session-36 to -42 switch at its session-35 value for one test: session 35's floats (and passes),
    for the tests that pin them on purpose; the new rules' values are checked in the session-36 to -42 test files."""
    for name, value in _since(35).items():
        switch(monkeypatch, name, value)


#: every switch of session 37's rules and its session-36 value (docs/accountant_tail.md §50, §51, docs/accountant.md
#: §8.15 and §9.14, docs/composition.md §4.10)
SESSION36 = {"FIRST_COARSE": False, "PAIR_REDO_ACCEPT": False, "TV_WEIGHTED": False, "CLOSED_WHOLE_ACCEPT": 0.0,
             "EPS_FEW_USERS": False, "VIA_BOTTOM_CLOSED_EDGE": False, "EXPORT_UPPER_FIRST_CHECK": False}


def session36_floats(monkeypatch) -> None:
    """Every session-37 to -42 switch at its session-36 value for one test: session 36's floats (and passes)."""
    for name, value in _since(36).items():
        switch(monkeypatch, name, value)


#: every switch of session 38's rules and its session-37 value (docs/accountant_tail.md §52, §53, docs/accountant.md
#: §7.5, §8.16 and §9.15, docs/composition.md §2.19)
SESSION37 = {"SCALED_PAIR_KEEP": False, "TOP_COARSE": 1.0, "BODY_JUMP_STOP": False, "HAT_PIECES": False,
             "BODY_END_SNAP": False, "VIA_BOTTOM_MIRROR": False, "PLAIN_WARM_UPPER": False, "PLAIN_NEG_UPPER": False,
             "SWEEP_LAW_SETTLE": False, "FEW_WIDE": False}


def session37_floats(monkeypatch) -> None:
    """Every session-38 to -42 switch at its session-37 value for one test: session 37's floats (and passes)."""
    for name, value in _since(37).items():
        switch(monkeypatch, name, value)


#: every switch of session 39's rules and its session-38 value (docs/accountant_tail.md §54, §55, docs/accountant.md
#: §8.17, §9.16 and §9.17, docs/composition.md §2.20, §2.21)
SESSION38 = {"COARSE_KEEP": False, "FINER_DEFAULT_RUN": False, "TOP_FIT": False, "COARSE_FAR": False,
             "HAT_DENSITY": False, "FEW_PAIR_SPLIT": False, "FEW_OPEN_JUMP": False, "VIA_BOTTOM_COVER_TARGET": False,
             "VIA_BOTTOM_MIRROR_BUDGET": False, "SWEEP_CHECKS": False, "SWEEP_UPPER_LONG": False}


def session38_floats(monkeypatch) -> None:
    """Every session-39 to -42 switch at its session-38 value for one test: session 38's floats (and passes)."""
    for name, value in _since(38).items():
        switch(monkeypatch, name, value)


# Every session-40 switch at its session-39 value (docs/accountant_tail.md §56-§58, docs/accountant.md §8.18-§8.19,
# §9.18, docs/composition.md §2.22-§2.23)
SESSION39 = {"TOP_CLAMP_REDO": False, "BODY_LOWER_ONLY": False, "FLOOR_TARGET": 0.0, "FEW_FINER": False,
             "FEW_MULTI_JUMP": False, "VIA_BOTTOM_END_FIRST": 0.0, "VIA_BOTTOM_CAP_REFUTE": False,
             "VIA_BOTTOM_FLOOR_FIRST": False, "PAIR_BRACKET_AHEAD": False, "PAIR_WARM_START": False,
             "BODY_LOWER_POSITION": False}


def session39_floats(monkeypatch) -> None:
    """Every session-40 to -42 switch at its session-39 value for one test: session 39's floats (and passes)."""
    for name, value in _since(39).items():
        switch(monkeypatch, name, value)


# Every session-41 switch at its session-40 value (each builder adds its switches on its own line below)
SESSION40: dict = {
    "EPS41_WALK_SHAPE": False,  # eps41
    "EPS41_WALK_NEAR": 5.0,  # eps41
    "EPS41_SHAPE_STEP": False,  # eps41
    "VIA_BOTTOM_CHORD": False,  # rep41
    "VIA_BOTTOM_CHORD_SEARCH": False,  # rep41
    "VIA_BOTTOM_CHORD_B": False,  # rep41
    "PROFILE_CHORDS": False,  # exp41
    "EPS41B_ZERO_MOMENTS": False,  # eps41b
    "EPS41B_ZERO_LOWER": False,  # eps41b
    "BODY_LEAP_EIGHT": False,  # body41
}


def session40_floats(monkeypatch) -> None:
    """Every session-41 and -42 switch at its session-40 value for one test: session 40's floats (and passes)."""
    for name, value in _since(40).items():
        switch(monkeypatch, name, value)


# Every session-42 switch at its session-41 value (each builder adds its switches on its own line below)
SESSION41: dict = {
    "VIA_BOTTOM_PENALTY_KEEP": False,  # rep42
    "PAIR42_WARM_SETTLED": False,  # pair42
    "CHERNOFF_LOG_STEP": False,  # g05
    "CELLS_TWO_NODE": False,  # g05
    "EPS42_MIRROR": False,  # eps42
    "EPS42_ZERO_FIRST": False,  # eps42
    "FT42_T0_WARM": False,  # ft42
}


def session41_floats(monkeypatch) -> None:
    """Every session-42 switch at its session-41 value for one test: session 41's floats (and passes)."""
    for name, value in _since(41).items():
        switch(monkeypatch, name, value)


# Every session-43 switch at its session-42 value (each builder adds its switches on its own line below)
SESSION42: dict = {
    "CAL43_CHEAP_CERT": False,  # eps43
    "CELLS_FEW_NODES": False,  # g43
    "PAIR43_SETTLED_COVER": False,  # pair43
    "PAIR43_SETTLED_MARGIN": 1e-3,  # pair43
    "VIA_BOTTOM_LEG_SERVE": False,  # rep43
    "PRIVUNIT_COPLANAR_CHECKED": False,  # fix43
    "BODY43_SPECTRAL_SUM": False,  # body43
}


def session42_floats(monkeypatch) -> None:
    """Every session-43 and -44 switch at its session-42 value for one test: session 42's floats (and passes)."""
    for name, value in _since(42).items():
        switch(monkeypatch, name, value)


# Every session-44 switch at its session-43 value (each builder adds its switches on its own line below)
SESSION43: dict = {
    "CHERNOFF_LOG_STEP": False,  # lead (switched on in session 44)
    "CELLS_FEW_NODES": False,  # lead (switched on in session 44)
    "PAIR43_SETTLED_COVER": False,  # lead (switched on in session 44)
    "BODY43_SPECTRAL_SUM": False,  # lead (switched on in session 44)
    "BODY44_FIRST_SKIP": False,  # body44
    "SPHERE44_KINK_CUT": False,  # g44
    "PAIR44_SETTLED_START": False,  # pair44
    "EPS44_SHAPE_START": False,  # eps44
    "EPS44_SHAPE_ONE": False,  # eps44
    "EPS44_REFIT_STOP": 0.05,  # eps44
    "CAL44_SHAPE_START": False,  # eps44
    "CLOSED44_REACH": 0.0,  # eps44
    "VIA_BOTTOM_GOLDEN_PROBE": False,  # rep44
    "VIA_BOTTOM_EDGE_FIRST": False,  # rep44
    "VIA_BOTTOM_TRIVIAL_REFUTE": False,  # rep44
}


def session43_floats(monkeypatch) -> None:
    """Every session-44 switch at its session-43 value for one test: session 43's floats (and passes)."""
    for name, value in _since(43).items():
        switch(monkeypatch, name, value)


#: every session-45 switch at its session-44 value (appended by session 45's builders)
SESSION44: dict = {
    "SPHERE45_KINK_BAND": 1e-12,  # lead (rev45)
    "PAIR45_SETTLED_BMG": False,  # pair45
    "BODY45_KEPT_HEAP": False,  # body45
    "EPS45_START_PROBE": 0.0,  # eps45
}


def session44_floats(monkeypatch) -> None:
    """Every session-45 switch at its session-44 value for one test: session 44's floats (and passes)."""
    for name, value in _since(44).items():
        switch(monkeypatch, name, value)


#: every session-46 switch at its session-45 value (appended by session 46's builders)
SESSION45: dict = {
    "CAL46_START_MAX": False,  # eps46
    "EPS46_START_LOOK": 0,  # eps46
    "EPS46_START_LOOK_SHARE": 1e-12,  # eps46
    "G46_STOP_LOSS_CHORDS": 0,  # g46
    "REP46_PROBE_GATE": 0.0,  # rep46
    "REP46_LOOSE_CAP": False,  # rep46
    "BODY46_PRUNED_FORWARD": False,  # body46
    "PROFILE46_STRIDE": False,  # pair46
}


def session45_floats(monkeypatch) -> None:
    """Every session-46 switch at its session-45 value for one test: session 45's floats (and passes)."""
    for name, value in _since(45).items():
        switch(monkeypatch, name, value)


#: every session-47 switch at its session-46 value
SESSION46: dict = {
    "REP47_END_SPLITS": False,  # rep47
    "EPS47_CALL_HEAP": False,  # eps47
    "DFT47_TAYLOR_PRUNED": False,  # dft47
    "LEAD47_NORM_Q_UP": False,  # lead
    "BODY45_KEPT_HEAP_N": 10**7,  # lead (gauss47's suggestion; the same floats)
}


def session46_floats(monkeypatch) -> None:
    """Every session-47 switch at its session-46 value for one test: session 46's floats (and passes)."""
    for name, value in _since(46).items():
        switch(monkeypatch, name, value)


#: every session-48 switch at its session-47 value
SESSION47: dict = {
    "GAUSS48_SMALL_EXP": False,  # gauss48
    "EPS48_BODY_START": 0.0,  # eps48
    "REP48_END_SEARCH": False,  # rep48
    "REP48_END_PROBE": False,  # rep48
    "TAIL48_UPPER_B": False,  # tail48
    "TAIL48_BRACKET_SKIP": False,  # tail48
    "CAL48_SAFE_STEP": False,  # cal48
    "REP47_END_SPLITS": False,  # lead (rep47's rule, on since session 48's merge)
}


def session47_floats(monkeypatch) -> None:
    """Every session-48 switch at its session-47 value for one test: session 47's floats (and passes)."""
    for name, value in _since(47).items():
        switch(monkeypatch, name, value)


#: every session-49 switch at its session-48 value
SESSION48: dict = {
    "LEAD49_NORM_DOT": False,  # lead
    "EPS49_LOOK_SPARED_N": 10**7,  # eps49
    "EPS49_JUMP_PROBE": 0.0,  # eps49
    "EPS49_BODY_SMALL": 0.0,  # eps49
    "CAL49_FIRST_RHO": False,  # cal49
    "CAL49_ONE_LOOSE": 0.0,  # cal49
    "CAL49_CHEAP_STEP": False,  # cal49
    "CAL49_LOOSE_REL": 0.0,  # cal49
    "ENG49_SPECTRAL_SUM": False,  # eng49
    "REP49_LOOSE_B": False,  # rep49
    "REP49_SHRINK_STOP": False,  # rep49
    "PAIR49_SETTLED_REPLACE": False,  # pair49
    "JGAP49": False,  # jgap49
}


def session48_floats(monkeypatch) -> None:
    """Every session-49 switch at its session-48 value for one test: session 48's floats (and passes)."""
    for name, value in _since(48).items():
        switch(monkeypatch, name, value)


def _since(first: int) -> dict:
    """The dicts SESSION<first> to the last one merged in that order (a switch listed twice takes the later entry)."""
    last = max(int(k[7:]) for k in globals() if k.startswith("SESSION") and k[7:].isdigit())
    merged: dict = {}
    for number in range(first, last + 1):
        merged.update(globals()[f"SESSION{number}"])
    return merged
