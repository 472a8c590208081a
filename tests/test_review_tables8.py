"""Review of the Taylor evaluation of the rounded-Gaussian table (sharpdp._tables._erf_entries_range).

Claim under test (docstring of ``_erf_entries_range``, docs/sampling.md §4 and §4.1): for every
scale, the Taylor blocks on exact integers return, integer for integer, the entries of the direct
evaluation ``_erf_entries(range(J), scale)`` (one 190-bit mpmath erf per entry), because the series
length K makes the Cramer remainder bound <= 2^-(128 + 64), the coefficients are rounded to 2^-W
with W covering |m|^k, and any value within 2^-40 of a rounding boundary is recomputed directly.

Independent references: the SHA-256 of the direct entries over a sweep of 63 scales (switch at
J = 128 / 129, last blocks of one entry, float neighbours, CRLB scales 2^k, BMG defaults, up to
s = 19 859; ``tests/data/review_tables8/make_reference.py``), mpmath erf at 400 bits for the
error of each Taylor value before its rounding, exact Cramer bounds in mpmath, and the normalized
Hermite functions by their stable recurrence. Each test names the mutation it catches.
"""

from __future__ import annotations

import hashlib
import json
import math
import pathlib

import mpmath
import numpy as np
import pytest

from sharpdp import _tables

DATA = pathlib.Path(__file__).parent / "data" / "review_tables8"
ROWS = {float.fromhex(r["s"]): r for r in json.loads((DATA / "sweep.json").read_text())["rows"]}


def _digest(entries: list[int]) -> str:
    return hashlib.sha256(b"".join(e.to_bytes(16, "little") for e in entries)).hexdigest()


def _scale(s: float):
    return _tables._scale(_tables._context(), s)


def _worst_error(rec, sc, J: int, every: int, prec: int):
    """(ctx, largest |value before rounding - true value|) over every ``every``-th entry and the last,
    the true value at ``prec`` bits."""
    ctx = mpmath.mp.clone()
    ctx.prec = prec
    scx = ctx.mpf(sc)
    worst = ctx.mpf(0)
    for j in [*range(0, J, every), J - 1]:
        a, b = rec[j]
        worst = max(worst, abs(ctx.mpf(a - b // 2) / b - _true_value(ctx, scx, j)))
    return ctx, worst


def _run_recording(monkeypatch, J: int, sc) -> tuple[list[int], list[tuple[int, int]]]:
    """_erf_entries_range(J, sc) with every (acc + half, 2^shift) pair it rounds recorded (the module's
    own divmod is shadowed by a recording one: the code under test runs unchanged)."""
    rec: list[tuple[int, int]] = []

    def recording_divmod(a, b):
        rec.append((a, b))
        return divmod(a, b)

    monkeypatch.setattr(_tables, "divmod", recording_divmod, raising=False)
    out = _tables._erf_entries_range(J, sc)
    monkeypatch.delattr(_tables, "divmod")
    return out, rec


_RECORDED: dict = {}


def _recorded(s: float) -> tuple[list[int], list[tuple[int, int]]]:
    """_run_recording at scale s with J = _search_J(s) and the module's own settings, run once per scale
    (a deterministic function of s: the digest test and the error-budget test share the run)."""
    if s not in _RECORDED:
        with pytest.MonkeyPatch.context() as mp_:
            _RECORDED[s] = _run_recording(mp_, _tables._search_J(s), _scale(s))
        assert not hasattr(_tables, "divmod")
    return _RECORDED[s]


def _true_value(ctx, scx, j: int):
    """2^128 erf((j + 1/2) / scale) at ctx's precision (400 or 600 bits)."""
    return ctx.ldexp(ctx.erf((2 * j + 1) / (2 * scx)), 128)


def test_the_sweep_found_no_difference():
    """The stored sweep (63 scales, ~940 000 entries, direct vs Taylor) is all equal."""
    assert len(ROWS) == 63 and sum(r["J"] for r in ROWS.values()) > 940_000
    assert all(r["equal"] for r in ROWS.values())


# J = 128 / 129 (the switch), 129 / 130, 192 / 193 (a last block of 1 entry), float neighbours of
# 1000, non-nice scales, CRLB scales 2^k, the BMG default range [256, 512), and s = 4096.
_FAST_SCALES = [s for s, r in ROWS.items() if r["J"] <= 14_000] + [4096.0]


@pytest.mark.parametrize("s", _FAST_SCALES, ids=float.hex)
def test_taylor_entries_equal_the_stored_direct_digest(s):
    """Catches any change in the block bookkeeping (anchor c, the range of m, the last partial block,
    the switch at 2 _TAYLOR_BLOCK), in the series or in the rounding that moves one entry by one unit."""
    row = ROWS[s]
    J = _tables._search_J(s)
    assert J == row["J"]
    if s in _BUDGET_SCALES:  # the same entries as _erf_entries_range(J, scale) (the recording only observes)
        assert _digest(_recorded(s)[0]) == row["digest"]
    else:
        assert _digest(_tables._erf_entries_range(J, _scale(s))) == row["digest"]


_BUDGET = [(9.872909814593655, 1), (40.0, 1), (300.0, 9), (4096.0, 211)]
_BUDGET_SCALES = {s for s, _ in _BUDGET}


@pytest.mark.parametrize(("s", "every"), _BUDGET)
def test_each_taylor_value_is_within_2_to_minus_64_before_rounding(s, every):
    """The error budget itself, not only its outcome: acc / 2^shift (the Taylor value times 2^128,
    before rounding) against erf at 400 bits must be within 2^-64 (the remainder bound 2^-(128 + 64)
    in erf units) + 2^-80 (coefficient rounding, <= 2^-81). Measured: 2^-72.7, -67.5, -67.8, -74.1.
    s = 9.87... is the smallest scale on the Taylor path (J = 129, |m h| up to 2.29, K = 153).
    Catches a series shortened by two terms (_TAYLOR_SLACK = 60 gives 2^-62.4 at s = 300), a W
    without the |m|^k allowance, or a coefficient precision below W, long before an entry moves."""
    J = _tables._search_J(s)
    sc = _scale(s)
    fast, rec = _recorded(s)
    assert len(rec) == J and fast == [(a >> (b.bit_length() - 1)) for a, b in rec]  # no redo happened
    ctx, worst = _worst_error(rec, sc, J, every, 400)
    assert worst <= ctx.ldexp(1, -64) + ctx.ldexp(1, -80), float(ctx.log(worst, 2))


@pytest.mark.parametrize(("s", "every"), [(9.872909814593655, 1), (300.0, 97)])
def test_coefficients_are_evaluated_far_beyond_the_budget(monkeypatch, s, every):
    """The budget above charges the rounding of the c_k to 2^-W but not their evaluation at W + 128
    bits (erf, exp, the Hermite recurrence, which cancels for x < sqrt(2k)). With the slack raised
    to 200 bits (K and W grow with it) the values must be within 2^-200 + 2^-216: the evaluation
    error is then below 2^-200, 136 bits under the 2^-64 budget. Measured: 2^-208.2 (s = 9.87) and 2^-207.2 (s = 300).
    Catches a working precision tied to a constant (prec = 200 gives 2^-72 here) or a recurrence
    that loses more than ~100 bits to cancellation."""
    monkeypatch.setattr(_tables, "_TAYLOR_SLACK", 200)
    J = 2 * _tables._TAYLOR_BLOCK + 1 if s < 10 else _tables._search_J(s)
    sc = _scale(s)
    _, rec = _run_recording(monkeypatch, J, sc)
    ctx, worst = _worst_error(rec, sc, J, every, 600)
    assert worst <= ctx.ldexp(1, -200) + ctx.ldexp(1, -216), float(ctx.log(worst, 2))


def _series_length(monkeypatch, s: float) -> int:
    """K as chosen by _erf_entries_range for scale s, read off its rounding shift = W - 128 =
    _TAYLOR_SLACK + 16 + ceil(K log2 32) (a 3-block run, J = 129)."""
    _, rec = _run_recording(monkeypatch, 2 * _tables._TAYLOR_BLOCK + 1, _scale(s))
    shift = rec[0][1].bit_length() - 1
    assert rec[0][1] == 1 << shift and (shift - _tables._TAYLOR_SLACK - 16) % 5 == 0
    return (shift - _tables._TAYLOR_SLACK - 16) // 5


_K_SCALES = [float(v) for v in np.geomspace(9.872909814593655, 19859.0, 24)] + [
    9.9, 10.25, 11.1, 12.7, 14.3, 17.9, 21.3, 26.7, 31.4, 37.7, 2.0**-20 + 64.0, 1000.0 / 3.0]


def test_series_length_meets_the_cramer_remainder_bound(monkeypatch):
    """For the K the code picks (floats: log2, lgamma), the Lagrange remainder bound
    (2/sqrt(pi)) 1.0865 2^(K/2) sqrt(K!) (32 h)^(K+1) / (K+1)!, h = 1/(s sqrt 2), evaluated in mpmath
    at 300 bits, is <= 2^-(128 + 64). Worst of 1 800 scales (data/review_tables8/README.md):
    2^-192.009. Catches a float evaluation of K that rounds it too small, a remainder taken with
    |m| < 32 (half a block) or with h = 1/s instead of 1/(s sqrt 2)."""
    ctx = mpmath.mp.clone()
    ctx.prec = 300
    c = 2 / ctx.sqrt(ctx.pi) * ctx.mpf("1.0865")
    target = ctx.ldexp(1, -(128 + _tables._TAYLOR_SLACK))
    for s in _K_SCALES:
        K = _series_length(monkeypatch, s)
        mh = _tables._TAYLOR_BLOCK // 2 / (ctx.mpf(s) * ctx.sqrt(2))
        bound = c * ctx.power(2, ctx.mpf(K) / 2) * ctx.sqrt(ctx.factorial(K)) * mh ** (K + 1) / ctx.factorial(K + 1)
        assert bound <= target, (s, K, float(ctx.log(bound, 2)))


def test_cramer_inequality_constant():
    """|H_n(x)| e^(-x^2/2) <= k 2^(n/2) sqrt(n!) with k = 1.0865 (the docstring's constant; the sharp
    one is 1, attained at n = 0), checked for n < 400 on x in [0, 40] with the normalized Hermite
    functions' stable recurrence, and 2/sqrt(pi) k <= 1.23. Catches a constant below the true sup
    (e.g. 0.9) or a 1.23 that does not cover 2/sqrt(pi) 1.0865 = 1.22598."""
    x = np.linspace(0.0, 40.0, 40_001)
    prev, cur = np.zeros_like(x), np.exp(-x * x / 2)
    sup = 0.0
    for n in range(400):
        sup = max(sup, float(np.abs(cur).max()))
        prev, cur = cur, math.sqrt(2 / (n + 1)) * x * cur - math.sqrt(n / (n + 1)) * prev
    assert 0.999 < sup <= 1.0 + 1e-12 < 1.0865
    assert 2 / math.sqrt(math.pi) * 1.0865 <= 1.23


def test_guard_redoes_exactly_the_entries_near_a_boundary(monkeypatch):
    """With the guard widened to 2^-4 (one entry in 8), the entries sent to the direct evaluation must
    be exactly those whose value (mpmath, 400 bits) lies within 2^-4 of a half-integer, on either side,
    and the result still equals the direct one. Catches a guard that tests one side only, a
    wrong index mapping of the recomputed entries, or an r measured from the wrong boundary."""
    s = 40.0
    J = _tables._search_J(s)
    sc = _scale(s)
    redone: list[int] = []
    orig = _tables._erf_entries

    def spy(idx, scale):
        idx = list(idx)
        redone.extend(idx)
        return orig(idx, scale)

    monkeypatch.setattr(_tables, "_erf_entries", spy)
    monkeypatch.setattr(_tables, "_TAYLOR_GUARD", 4)
    fast = _tables._erf_entries_range(J, sc)
    monkeypatch.undo()
    assert fast == _tables._erf_entries(range(J), sc)
    ctx = mpmath.mp.clone()
    ctx.prec = 400
    scx = ctx.mpf(sc)
    expect = []
    for j in range(J):
        v = _true_value(ctx, scx, j)
        d = abs(v - ctx.floor(v) - ctx.mpf(0.5))  # distance to the nearest rounding boundary
        assert abs(d - ctx.ldexp(1, -4)) > ctx.ldexp(1, -50)  # the test is not itself at a boundary
        if d < ctx.ldexp(1, -4):
            expect.append(j)
    assert 30 < len(expect) < 110
    assert redone == expect


def test_the_sampler_table_goes_through_the_taylor_path_and_reloads_equal(monkeypatch, tmp_path):
    """docs/sampling.md §4.1: the table the samplers use (rounded_gaussian_cdt) is built by
    _erf_entries_range, written to disk, and a later load spot-checks it against _erf_entries (the
    direct path) and returns the same entries; both equal the stored direct digest. Catches a build
    that bypasses the Taylor path or a load that checks against another function."""
    s = float.fromhex("0x1.d0f089de8d586p+8")  # 464.94 (the BMG default range [256, 512)), J = 6051
    monkeypatch.setenv("SHARPDP_CACHE_DIR", str(tmp_path))
    calls = {"range": 0, "direct": []}
    orig_range, orig_direct = _tables._erf_entries_range, _tables._erf_entries

    def spy_range(J, scale):
        calls["range"] += 1
        return orig_range(J, scale)

    def spy_direct(idx, scale):
        idx = list(idx)
        calls["direct"].append(idx)
        return orig_direct(idx, scale)

    monkeypatch.setattr(_tables, "_erf_entries_range", spy_range)
    monkeypatch.setattr(_tables, "_erf_entries", spy_direct)
    built = _tables.rounded_gaussian_cdt.__wrapped__(s)
    assert calls["range"] == 1 and calls["direct"] == []
    assert _digest(built.entries()) == ROWS[s]["digest"]
    loaded = _tables.rounded_gaussian_cdt.__wrapped__(s)
    assert calls["range"] == 1 and len(calls["direct"]) == 1
    picks = calls["direct"][0]
    assert picks[0] == 0 and picks[-1] == built.size - 2 and len(picks) >= 3
    assert loaded.entries() == built.entries() and loaded.tv_bound == built.tv_bound
