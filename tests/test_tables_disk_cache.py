"""The disk cache of the rounded-Gaussian tables (sharpdp._tables, docs/sampling.md §4.1).

A table loaded from disk must be the table built with mpmath, bit for bit; any damaged, foreign or
unreadable file, an unwritable directory or a disabled cache must fall back to building it, silently.
The uncached function (``rounded_gaussian_cdt.__wrapped__``) is called so that the process-wide
lru_cache plays no part.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import subprocess
import sys
import threading

import mpmath
import numpy as np
import pytest

from sharpdp import _tables
from sharpdp._tables import GUIDE_BITS, rounded_gaussian_cdt

S = 40.0  # J = 525: builds in ~25 ms
uncached = rounded_gaussian_cdt.__wrapped__


def _same(a: _tables.CdtTable, b: _tables.CdtTable) -> bool:
    arrays = [(a.hi, b.hi), (a.lo, b.lo), (a.guide, b.guide)]
    return (a.s == b.s and a.size == b.size and a.tail == b.tail and a.tv_bound == b.tv_bound
            and all(x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y) for x, y in arrays))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SHARPDP_CACHE_DIR", str(d))
    return d


@pytest.fixture(scope="module")
def built() -> _tables.CdtTable:
    return _tables._build_table(S, _tables._search_J(S))


def _no_build(monkeypatch):
    def fail(s, J):
        raise AssertionError("the table was built instead of loaded")
    monkeypatch.setattr(_tables, "_build_table", fail)


def _files(d):
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_a_table_loaded_from_disk_is_the_built_table_bit_for_bit(cache, built, monkeypatch):
    first = uncached(S)
    assert _same(first, built)
    (name,) = _files(cache)
    assert name.startswith(f"rounded_gaussian_cdt-{S.hex()}-") and name.endswith(".bin")
    _no_build(monkeypatch)
    second = uncached(S)
    assert _same(second, built)
    # and against mpmath directly (60 digits, independent of the module's low-level evaluation)
    with mpmath.workdps(60):
        scale = mpmath.mpf(S) * mpmath.sqrt(2)
        for j in (0, 1, 17, 260, built.size - 2):
            ref = int(mpmath.nint(mpmath.erf((j + mpmath.mpf(0.5)) / scale) * mpmath.mpf(2) ** 128))
            assert abs(second.entries()[j] - ref) <= 1
        assert second.tail == math.nextafter(float(mpmath.erfc((built.size - 1 + mpmath.mpf(0.5)) / scale)),
                                             math.inf)


def test_another_process_loads_the_table_instead_of_building_it(cache, built):
    uncached(S)
    code = ("import sys; from sharpdp import _tables\n"
            "def fail(s, J): raise SystemExit('built instead of loaded')\n"
            "_tables._build_table = fail\n"
            f"t = _tables.rounded_gaussian_cdt({S!r})\n"
            "print(t.size, t.tail.hex(), t.hi.tobytes().hex()[-32:], int(t.lo.sum(dtype='uint64')), int(t.guide.sum()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy(),
                         timeout=120)
    assert out.returncode == 0, out.stderr
    expected = (f"{built.size} {built.tail.hex()} {built.hi.tobytes().hex()[-32:]} "
                f"{int(built.lo.sum(dtype='uint64'))} {int(built.guide.sum())}")
    assert out.stdout.strip() == expected


def _rewrite(path, edit_meta=None, edit_words=None, rehash=True, digest=None):
    """Rewrite a cache file after editing its header and/or its uint64 words (hi then lo)."""
    data = path.read_bytes()
    old_digest, header, payload = data[len(_tables._MAGIC):].split(b"\n", 2)
    meta = json.loads(header)
    words = np.frombuffer(payload, dtype="<u8").copy()
    if edit_meta:
        edit_meta(meta)
        header = json.dumps(meta, sort_keys=True).encode()
    if edit_words:
        edit_words(words, meta["size"])
        payload = words.tobytes()
    new = hashlib.sha256(header + b"\n" + payload).hexdigest().encode() if rehash else old_digest
    path.write_bytes(_tables._MAGIC + new + b"\n" + header + b"\n" + payload)


def _flip_payload_bit(words, size):
    words[size // 2] ^= np.uint64(1 << 7)


def _bump_last_entry(words, size):  # entry J - 1, kept below the sentinel and monotone
    words[size + size - 2] += np.uint64(1)


def _swap_entries(words, size):  # two high words: no longer monotone
    words[[3, 4]] = words[[4, 3]]


def _bump_sentinel(words, size):
    words[size - 1] -= np.uint64(1)


def _set_tail(meta):
    meta["tail"] = (float.fromhex(meta["tail"]) * 2).hex()


def _set_size(meta):
    meta["size"] += 1


def _set_s(meta):
    meta["s"] = (2 * S).hex()


def _set_format(meta):
    meta["format"] += 1


DAMAGE = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:-5]),
    "truncated_in_header": lambda p: p.write_bytes(p.read_bytes()[:70]),
    "empty": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(os.urandom(4000)),
    "bad_magic": lambda p: p.write_bytes(b"X" + p.read_bytes()[1:]),
    "payload_changed_hash_kept": lambda p: _rewrite(p, edit_words=_flip_payload_bit, rehash=False),
    "header_changed_hash_kept": lambda p: _rewrite(p, edit_meta=_set_tail, rehash=False),
    "last_entry_changed_rehashed": lambda p: _rewrite(p, edit_words=_bump_last_entry),
    "not_monotone_rehashed": lambda p: _rewrite(p, edit_words=_swap_entries),
    "sentinel_changed_rehashed": lambda p: _rewrite(p, edit_words=_bump_sentinel),
    "tail_changed_rehashed": lambda p: _rewrite(p, edit_meta=_set_tail),
    "size_changed_rehashed": lambda p: _rewrite(p, edit_meta=_set_size),
    "other_s_rehashed": lambda p: _rewrite(p, edit_meta=_set_s),
    "other_format_rehashed": lambda p: _rewrite(p, edit_meta=_set_format),
    "not_json_rehashed": lambda p: _rewrite(p, edit_meta=lambda m: m.clear()),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_file_is_detected_and_the_table_rebuilt(cache, built, damage):
    uncached(S)
    path = _tables._cache_path(S)
    DAMAGE[damage](path)
    assert _tables._load_table(path, S, built.size - 1) is None
    assert _same(uncached(S), built)  # rebuilt ...
    assert _same(_tables._load_table(path, S, built.size - 1), built)  # ... and the file rewritten


def test_a_wrong_table_with_a_valid_hash_fails_the_spot_checks(cache, built):
    # a table of another law (s' = 1.001 s) stored under s, with a valid hash, size and tail: only the
    # entries are wrong, and the first and last entries are always among the spot checks
    other = _tables._build_table(S * 1.001, built.size - 1)
    fake = _tables.CdtTable(s=S, hi=other.hi, lo=other.lo, guide=other.guide, size=built.size, tail=built.tail,
                            tv_bound=built.tv_bound)
    path = _tables._cache_path(S)
    assert _tables._store_table(path, fake)
    assert _tables._load_table(path, S, built.size - 1) is None
    assert _same(uncached(S), built)


def test_a_file_of_another_entry_count_is_refused(cache, built):
    # a valid file for s whose size disagrees with the J searched afresh at load time
    path = _tables._cache_path(S)
    assert _tables._store_table(path, built)
    assert _tables._load_table(path, S, built.size - 2) is None
    assert _tables._load_table(path, S, built.size) is None
    assert _same(_tables._load_table(path, S, built.size - 1), built)


def test_an_unwritable_directory_falls_back_silently(tmp_path, monkeypatch, built):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SHARPDP_CACHE_DIR", str(blocker / "cache"))  # mkdir fails (even as root)
    assert _same(uncached(S), built)
    assert not _tables._store_table(_tables._cache_path(S), built)
    assert blocker.read_text() == "not a directory"


def test_an_unreadable_cache_entry_falls_back_silently(cache, built):
    path = _tables._cache_path(S)
    path.mkdir(parents=True)  # a directory where the file should be: neither readable nor replaceable
    assert _tables._load_table(path, S, built.size - 1) is None
    assert _same(uncached(S), built)
    assert _files(cache) == [path.name] and path.is_dir()  # no temporary file left behind


@pytest.mark.parametrize("value", ["", "off", "OFF", " off "])
def test_the_cache_is_disabled_by_the_environment(tmp_path, monkeypatch, built, value):
    monkeypatch.setenv("SHARPDP_CACHE_DIR", value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _tables._cache_path(S) is None
    assert _same(uncached(S), built)
    assert _files(tmp_path) == []


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG layout")
def test_the_default_directory_is_the_user_cache_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("SHARPDP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _tables._cache_dir() == tmp_path / "xdg" / "sharpdp"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _tables._cache_dir() == tmp_path / "home" / ".cache" / "sharpdp"
    monkeypatch.setenv("SHARPDP_CACHE_DIR", str(tmp_path / "mine"))
    assert _tables._cache_dir() == tmp_path / "mine"


def test_the_key_is_the_exact_float(cache):
    near = math.nextafter(S, math.inf)
    assert _tables._cache_path(S) != _tables._cache_path(near)
    assert S.hex() in _tables._cache_path(S).name and near.hex() in _tables._cache_path(near).name


def test_concurrent_writers_and_readers_see_whole_files_only(cache, built):
    path = _tables._cache_path(S)
    J = built.size - 1
    seen, errors = [], []
    start = threading.Barrier(8)

    def writer():
        start.wait()
        for _ in range(15):
            if not _tables._store_table(path, built):
                errors.append("store failed")

    def reader():
        start.wait()
        for _ in range(15):
            t = _tables._load_table(path, S, J)
            if t is not None and not _same(t, built):
                errors.append("a partial or wrong table was loaded")
            seen.append(t is not None)

    threads = [threading.Thread(target=writer) for _ in range(4)] + [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _files(cache) == [path.name]  # no temporary file left
    assert _same(_tables._load_table(path, S, J), built)


def test_the_guide_matches_bisect_on_ties_with_the_bounds():
    step = 1 << (128 - GUIDE_BITS)
    # entries equal to a bound b 2^116 (low word 0), just above and below it, repeated values
    entries = sorted([0, 0, 5, step - 1, step, step, step + 1, 3 * step, (3 << 64) + 1, 7 * step - 1,
                      (1 << 127) + step, (1 << 128) - 2])
    full = entries + [(1 << 128) - 1]
    hi = np.array([t >> 64 for t in full], dtype=np.uint64)
    lo = np.array([t & ((1 << 64) - 1) for t in full], dtype=np.uint64)
    expected = [bisect.bisect_right(entries, b * step) for b in range(1 << GUIDE_BITS)]
    assert _tables._guide(hi, lo).tolist() == expected
