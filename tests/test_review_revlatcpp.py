"""LatticePrivUnit's compiled sampler against independent references (docs/sampling.md §10.6, "The compiled sampler").

References: the pure-Python reference sampler on adversarial parameters (rows mixing 1.0 with subnormals and
negative zeros, theta = -0.0 / subnormal / near +-1, p with long dyadic expansions, scale_bits at the limb
boundaries); Python big integers for the kernel's fixed-width arithmetic and its overflow detection; a build of the
unmodified kernel source with a scripted word prefix (tests/data/review_revlatcpp/lattice_harness.cpp) that forces
ties of the lazy Bernoulli comparison on every digit, the portable (non-asm) division, and an 8-limb integer width
whose overflowing rows go through the "undone" path; the exact law of the messages by enumeration of the lattice box
(50-digit weights, exact rational cone test) with a chi-square test; an independent ChaCha20 (``cryptography``).
"""

from __future__ import annotations

import ctypes as C
import hashlib
import math
import os
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
from scipy.stats import chi2
from sharpdp._core_loader import core
from sharpdp._rng import core_key
from sharpdp.shuffle import LatticePrivUnit
from sharpdp.shuffle.randomizers._lattice_reference import ExactBits, ExactCone, reference_message
from sharpdp.shuffle.randomizers.privunit_lattice import LATTICE_STREAM

ROOT = Path(__file__).resolve().parents[1]
HARNESS = Path(__file__).parent / "data" / "review_revlatcpp" / "lattice_harness.cpp"
M64 = 2**64 - 1


# ---------------------------------------------------------------- helpers
def _core_raw(key, x, p, theta, bits, stream0=LATTICE_STREAM, threads=1, width=None):
    num, den = float(p).as_integer_ratio()
    w = bits // 64 + 2 if width is None else width
    limbs, rb = core.samplers.lattice_privunit_sample(np.ascontiguousarray(x, dtype=np.float64), num,
                                                      den.bit_length() - 1, theta, bits, key, stream0, threads, w)
    return _decode(limbs), rb


def _decode(limbs):
    n, d, _ = limbs.shape
    return [[int.from_bytes(limbs[i, j].astype("<u8").tobytes(), "little", signed=True) for j in range(d)]
            for i in range(n)]


def _ref(key, x, p, theta, bits, stream0=LATTICE_STREAM):
    return [reference_message(key, stream0 + i, ExactCone(row, theta), p, 1 << bits, x.shape[1])
            for i, row in enumerate(x)]


TINY = [2.0**-1074, -(2.0**-1074), 2.0**-1073, 2.0**-1022, 3 * 2.0**-1023, -0.0, 0.0, 12345 * 2.0**-1074,
        (2**52 - 1) * 2.0**-1074, 2.0**-600, -(2.0**-1000)]
BIG = [1.0, -1.0, math.sqrt(0.5), -math.sqrt(0.5), math.nextafter(1.0, 0.0), 0.6, -0.8]


def _row(rng, d):
    kind = int(rng.integers(0, 4))
    if kind == 0:  # one coordinate of order 1, the others subnormal, tiny, zero or negative zero
        x = np.array([TINY[i] for i in rng.integers(0, len(TINY), size=d)])
        x[rng.integers(0, d)] = BIG[rng.integers(0, len(BIG))]
    elif kind == 1:  # exponents spread over the whole double range
        x = rng.normal(size=d) * 2.0 ** rng.integers(-1074, 1, size=d).astype(float)
    elif kind == 2:
        x = np.array([BIG[i] for i in rng.integers(0, len(BIG), size=d)])
        x[rng.integers(0, d)] = TINY[rng.integers(0, len(TINY))]
    else:
        x = rng.uniform(-1, 1, size=d)
        x[rng.random(d) < 0.25] = -0.0
    if not np.any(x):
        x[0] = -1.0
    return x


PS = [0.5, math.nextafter(0.5, 1.0), math.nextafter(0.5, 0.0), 5e-324, 3 * 2.0**-1074, 1e-300, 2.0**-60,
      1 - 2.0**-53, 0.7, 0.999999, 1 / 3]
BITS = [0, 1, 2, 63, 64, 65, 127, 128, 129, 479, 480]


def _theta(rng, d, bits):
    c = int(rng.integers(0, 6))
    if c == 0:
        return float(rng.choice([0.0, -0.0, 5e-324, -5e-324, -(2.0**-600)]))
    if c == 1 and d == 1:  # d = 1: the cone is a half-line for every theta, so +-(1 - ulp) is cheap
        return float(rng.choice([1 - 2.0**-53, -(1 - 2.0**-53), math.nextafter(1.0, 0.0), -0.999999]))
    if c == 1 and bits <= 2 and d <= 3:  # a thin cap that contains 0, of large lattice mass at sigma <= 4
        return float(rng.choice([1 - 2.0**-53, 0.999999]))
    if c == 2 and d <= 3:
        return float(rng.choice([0.9, -0.9, 0.95, -0.95]))
    return float(rng.uniform(-0.3, 0.3)) / max(1, d // 4)


# ---------------------------------------------------------------- (a) differential: core against the reference
def test_core_equals_reference_on_adversarial_parameters():
    rng = np.random.default_rng(20261204)
    rows = 0
    for _ in range(250):
        d = int(rng.integers(1, 21)) if rng.random() < 0.4 else int(rng.integers(1, 5))
        bits = int(rng.choice(BITS))
        if d > 8 and bits > 200:
            bits = int(rng.choice([0, 1, 63, 64, 65, 128]))
        p, theta = float(rng.choice(PS)), _theta(rng, d, bits)
        x = np.array([_row(rng, d) for _ in range(int(rng.integers(1, 5)))])
        key, stream0 = rng.bytes(32), LATTICE_STREAM + int(rng.integers(0, 2**40))
        got, rb = _core_raw(key, x, p, theta, bits, stream0, threads=int(rng.choice([1, 2, 5])))
        assert np.all(rb >= 0)
        ref = _ref(key, x, p, theta, bits, stream0)
        assert got == ref, (d, bits, p, theta, x.tolist())
        assert rb.tolist() == [max(abs(v) for v in r).bit_length() for r in ref]
        rows += len(x)
    assert rows > 500


@pytest.mark.parametrize("bits", [1, 96])
def test_threads_and_row_splits_across_blocks(bits):
    # more rows than one 16-row block, so threads 2 and 5 really split the work
    rng = np.random.default_rng(bits)
    x = np.array([_row(rng, 3) for _ in range(70)])
    key = core_key(77 + bits)
    ref = _ref(key, x, 0.7, -0.0 if bits == 1 else 0.2, bits)
    for threads in (1, 2, 5):
        got, _ = _core_raw(key, x, 0.7, -0.0 if bits == 1 else 0.2, bits, threads=threads)
        assert got == ref
    for cut in (1, 15, 16, 17, 33):
        got, _ = _core_raw(key, x[cut:], 0.7, -0.0 if bits == 1 else 0.2, bits, LATTICE_STREAM + cut, threads=2)
        assert got == ref[cut:]


@pytest.mark.parametrize("bits", [0, 1, 63, 64, 65, 127, 128, 129, 479, 480])
def test_public_sample_equals_reference_at_limb_boundaries(bits):
    # unit rows mixing 1-ish values with subnormals and negative zeros; Fortran order and strided views
    x = np.array([[1.0, -(2.0**-1074)], [-0.0, -1.0], [math.sqrt(0.5), -math.sqrt(0.5)],
                  [math.nextafter(1.0, 0.0), 2.0**-1022], [-1.0, 0.0], [0.6, -0.8]])
    p, theta = math.nextafter(0.5, 1.0) + 0.25, -0.0 if bits % 2 else 5e-324
    r = LatticePrivUnit(p, theta, 2, scale_bits=bits)
    z = r.sample(np.asfortranarray(x), rng=bits, threads=2)
    assert z.tolist() == _ref(core_key(bits), x, p, theta, bits)
    assert all(type(v) is int for v in z.flat)
    z2 = r.sample(np.vstack([x, x])[::2], rng=bits)
    assert z2.tolist() == _ref(core_key(bits), np.ascontiguousarray(np.vstack([x, x])[::2]), p, theta, bits)


# ---------------------------------------------------------------- (b), (c) the kernel source in a harness
def _build_key(gxx: str, argv: list) -> str:
    """sha256 of everything a harness build reads: the compiler (path and --version), the command line, the
    harness source and every file of cpp/kernels (the kernel source it includes)."""
    h = hashlib.sha256()
    h.update(gxx.encode() + b"\0" + subprocess.run([gxx, "--version"], capture_output=True, check=True).stdout)
    h.update("\0".join(argv).encode())
    for f in [HARNESS, *sorted((ROOT / "cpp" / "kernels").iterdir())]:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def harness(tmp_path_factory, request):
    """The three builds of the harness (~1 s of g++ CPU each). A build is kept in pytest's cache directory under
    the sha256 of its inputs (_build_key) and reused by later runs while none of them changed."""
    gxx = shutil.which("g++") or shutil.which("c++")
    if gxx is None:
        pytest.skip("no C++ compiler")
    out = tmp_path_factory.mktemp("lattice_harness")
    cache = request.config.cache.mkdir("lattice_harness") if getattr(request.config, "cache", None) else None
    libs = {}
    for name, flags in (("asm96", []), ("port8", ["-DHARNESS_PORTABLE", "-DHARNESS_LIMBS=8"]),
                        ("port96", ["-DHARNESS_PORTABLE"])):
        so = out / f"{name}.so"
        argv = ["-std=c++17", "-O1", "-fPIC", "-shared", "-pthread", f"-I{ROOT / 'cpp' / 'kernels'}", *flags,
                str(HARNESS)]
        kept = None if cache is None else Path(cache) / f"{name}-{_build_key(gxx, argv)}.so"
        if kept is not None and kept.exists():
            shutil.copyfile(kept, so)
        else:
            subprocess.run([gxx, *argv, "-o", str(so)], check=True)
            if kept is not None:  # (written under another name first: xdist workers may build at once)
                part = kept.with_suffix(f".{os.getpid()}.part")
                shutil.copyfile(so, part)
                os.replace(part, kept)
        libs[name] = _bind(C.CDLL(str(so)))
    assert libs["asm96"].h_limbs() == 96 and libs["port8"].h_limbs() == 8
    return libs


def _bind(L):
    u64p = np.ctypeslib.ndpointer(np.uint64, flags="C")
    i32p = np.ctypeslib.ndpointer(np.int32, flags="C")
    L.h_arith.argtypes = [C.c_int, u64p, C.c_int, u64p, C.c_int, C.c_int, u64p]
    L.h_window128.argtypes = [u64p, C.c_int, C.c_int, u64p]
    L.h_div128.argtypes = [C.c_uint64] * 3
    L.h_div128.restype = C.c_uint64
    L.h_set_script.argtypes = [u64p, C.c_size_t]
    L.h_bernoulli.argtypes = [C.c_char_p, C.c_uint64, u64p, C.c_int, C.c_uint64, C.c_int, C.POINTER(C.c_size_t)]
    L.h_bernoulli_exp.argtypes = [C.c_char_p, C.c_uint64, u64p, C.c_int, C.c_int, C.POINTER(C.c_size_t)]
    L.h_dgauss.argtypes = [C.c_char_p, C.c_uint64, C.c_int, C.c_int, u64p, i32p, C.POINTER(C.c_size_t)]
    L.h_sample.argtypes = [np.ctypeslib.ndpointer(np.float64, flags="C"), C.c_size_t, C.c_size_t, C.c_uint64, C.c_int,
                           C.c_double, C.c_int, C.c_char_p, C.c_uint64, C.c_int, C.c_size_t, u64p, i32p]
    L.limbs = L.h_limbs()
    return L


def _limbs(v):
    out = []
    while v:
        out.append(v & M64)
        v >>= 64
    return np.array([int(w) for w in out] or [0], dtype=object).astype(np.uint64), len(out)


def _int(a, n=None):
    return sum(int(w) << (64 * i) for i, w in enumerate(a if n is None else a[:n]))


def _rand_big(rng, maxbits):
    b = int(rng.integers(0, max(maxbits, 0) + 1))
    if b == 0:
        return 0
    kind = int(rng.integers(0, 4))
    if kind == 0:
        return int.from_bytes(rng.bytes((b + 7) // 8), "little") % (1 << b) | (1 << (b - 1))
    return [0, (1 << b) - 1, 1 << (b - 1), ((1 << b) - 1) ^ (1 << int(rng.integers(0, b)))][kind]


class _Scripted(ExactBits):
    """The reference's coins with the same scripted word prefix as the harness."""

    def __init__(self, key, stream, script):
        super().__init__(key, stream)
        self.script, self.pos = list(script), 0

    def _word(self):
        self.pos += 1
        return self.script[self.pos - 1] if self.pos <= len(self.script) else super()._word()


def _script(L, words):
    arr = np.array([int(w) & M64 for w in (words or [0])], dtype=object).astype(np.uint64)
    _script.keep = arr
    L.h_set_script(arr, len(words))


@pytest.mark.parametrize("name", ["asm96", "port8"])
def test_fixed_width_arithmetic_and_overflow_detection_against_python_ints(harness, name):
    L, rng = harness[name], np.random.default_rng(3)
    M = L.limbs
    out = np.zeros(M + 2, dtype=np.uint64)
    overflows = 0
    for _ in range(1500):
        op = int(rng.integers(0, 10))  # add, sub, mul, shl, shr, low_bits; 6-9 with the result aliasing a
        a, b, k = _rand_big(rng, 64 * M), _rand_big(rng, 64 * M), int(rng.integers(0, 64 * M + 70))
        if op == 2:
            ab = int(rng.integers(1, 64 * M))
            a, b = _rand_big(rng, ab), _rand_big(rng, 64 * M + (64 if rng.random() < 0.5 else 0) - ab)
        if op == 2 and rng.random() < 0.5:  # la + lb = M + 1 limbs: the product needs M or M + 1 limbs
            la = int(rng.integers(1, M + 1))
            a = _rand_big(rng, 64 * la) | (1 << (64 * la - 1 - int(rng.integers(0, 64))))
            b = _rand_big(rng, 64 * (M + 1 - la)) | (1 << (64 * (M + 1 - la) - 1 - int(rng.integers(0, 64))))
        if op in (0, 6) and rng.random() < 0.5:  # a sum at the edge of the width
            a = (1 << 64 * M) - 1 - _rand_big(rng, 70)
        if op in (1, 9) and a < b:
            a, b = b, a
        if op == 3:
            a = _rand_big(rng, 64 * M - min(k, 64 * M - 1) + int(rng.integers(-64, 65)))
        exp = {0: a + b, 1: a - b, 2: a * b, 3: a << k, 4: a >> k, 5: a % (1 << k), 6: a + b, 7: a >> k,
               8: a % (1 << k), 9: a - b}[op]
        (al, an), (bl, bn) = _limbs(a), _limbs(b)
        r = L.h_arith(op, al, an, bl, bn, k, out)
        if exp.bit_length() > 64 * M:  # the value does not fit: must be flagged, never truncated
            assert r == -2, (op, a, b, k)
            overflows += 1
        else:
            assert r >= 0 and _int(out, r) == exp and (r == 0 or out[r - 1] != 0), (op, a, b, k)
    assert overflows > 20
    w2 = np.zeros(2, dtype=np.uint64)
    for _ in range(1500):
        k = max(1, _rand_big(rng, 64))
        h = [k * 2**64 - 1, k * 2**64 - k, (k - 1) * 2**64, _rand_big(rng, 64 + k.bit_length()) % (k << 64),
             _rand_big(rng, 64)][int(rng.integers(0, 5))]
        assert L.h_div128(h >> 64, h & M64, k) == h // k  # divq (asm96) or the portable division (port8)
        shift = int(rng.integers(-127, 64 * M))
        a = _rand_big(rng, min(128 + shift, 64 * M)) if shift > -128 else 0
        al, an = _limbs(a)
        L.h_window128(al, an, shift, w2)
        assert _int(w2) == (a >> shift if shift >= 0 else a << -shift)


def _digits(num, den, count):
    out, r = [], num
    for _ in range(count):
        c, r = divmod(r << 64, den)
        out.append(c)
        if r == 0:
            break
    return out


@pytest.mark.parametrize("name", ["asm96", "port8", "port96"])
def test_lazy_bernoulli_ties_on_every_digit(harness, name):
    # The words are scripted to equal a / b's base-2^64 digits for J digits (a tie each time), then to tie,
    # fall one below or one above the next digit, or be random; the reference reads the same words.
    L, rng, key = harness[name], np.random.default_rng(4), bytes(range(32))
    words, ties = C.c_size_t(), 0
    for _ in range(1500):
        k = [1, 3, M64, 2**63, int(rng.integers(1, 2**63)), int(rng.integers(1, 100))][int(rng.integers(0, 6))]
        e = int(rng.choice([0, 1, 63, 64, 65, 127, 128, 129, 961, 1074, int(rng.integers(0, 1200))]))
        if L.limbs < 96:
            e = min(e, 300)
        den = k << e
        num = [_rand_big(rng, den.bit_length()) % den, den - 1, den, den + 1, 1, 0, den // 3][int(rng.integers(0, 7))]
        dg = _digits(num, den, 6)
        J = int(rng.integers(0, len(dg) + 1))
        script = dg[:J]
        if J < len(dg):
            c = dg[J]
            script.append([c, max(c - 1, 0), min(c + 1, M64), int(rng.integers(0, 2**63)) * 2][int(rng.integers(0, 4))])
        script = [w & M64 for w in script]
        ties += J
        _script(L, script)
        nl, nn = _limbs(num)
        res = L.h_bernoulli(key, 7, nl, nn, k, e, C.byref(words))
        py = _Scripted(key, 7, script)
        assert (bool(res), words.value) == (py.bernoulli(num, den), py.pos), (num, k, e, script)
        # Bernoulli(exp(-g / 2^e)), g up to 8 * 2^e, with the first coin's digits scripted
        g = _rand_big(rng, e + 3)
        script2 = _digits(g % (1 << e), 1 << e, 3)[:int(rng.integers(0, 4))] + [int(w) for w in rng.integers(0, 2**63, size=2)]
        _script(L, script2)
        gl, gn = _limbs(g)
        res = L.h_bernoulli_exp(key, 9, gl, gn, e, C.byref(words))
        py = _Scripted(key, 9, script2)
        assert (bool(res), words.value) == (py.bernoulli_exp(g, 1 << e), py.pos), (g, e, script2)
    _script(L, [])
    assert ties > 1500


@pytest.mark.parametrize("name", ["asm96", "port96"])
def test_discrete_gaussian_on_extreme_words(harness, name):
    # words 0, 1, 2^62, 2^63 - 1, 2^63, 2^64 - 1 drive the geometric count, the signs and the acceptance coins
    L, rng, words = harness[name], np.random.default_rng(5), C.c_size_t()
    W = [0, 1, 2**62, 2**63 - 1, 2**63, M64]
    out, neg = np.zeros(50, dtype=np.uint64), np.zeros(5, dtype=np.int32)
    for it in range(300):
        s = int(rng.choice([0, 1, 2, 63, 64, 65, 127, 128, 129, 479, 480]))
        script = [W[i] for i in rng.integers(0, len(W), size=int(rng.integers(0, 40)))]
        key = rng.bytes(32)
        _script(L, script)
        assert L.h_dgauss(key, 3, s, 5, out, neg, C.byref(words)) == 0
        py = _Scripted(key, 3, script)
        want = [py.discrete_gaussian(1 << s) for _ in range(5)]
        assert [(-1 if neg[i] else 1) * _int(out[10 * i:10 * i + 10]) for i in range(5)] == want
        assert words.value == py.pos
    _script(L, [])


def _hsample(L, x, p, theta, bits, key, stream0, threads, width):
    num, den = float(p).as_integer_ratio()
    n, d = x.shape
    limbs, rb = np.zeros(n * d * width, dtype=np.uint64), np.zeros(n, dtype=np.int32)
    assert L.h_sample(np.ascontiguousarray(x, dtype=np.float64), n, d, num, den.bit_length() - 1, theta, bits, key,
                      stream0, threads, width, limbs, rb) == 0
    return limbs.reshape(n, d, width), rb


def test_small_limb_build_flags_rows_and_sample_redraws_them_with_the_reference(harness, monkeypatch):
    # 8 limbs (512 bits): rows with subnormal coordinates, long theta mantissas or large scale_bits overflow
    # the cone test or the Gaussian; they must be flagged (zeroed), never released with a truncated value.
    L, rng = harness["port8"], np.random.default_rng(6)
    done = undone = 0
    for _ in range(120):
        d, bits = int(rng.integers(1, 5)), int(rng.choice([0, 2, 63, 64, 96, 128, 200]))
        p, theta = float(rng.choice(PS)), _theta(rng, d, bits)
        x = np.array([_row(rng, d) for _ in range(4)])
        key, stream0 = rng.bytes(32), LATTICE_STREAM + int(rng.integers(0, 2**40))
        limbs, rb = _hsample(L, x, p, theta, bits, key, stream0, 2, min(bits // 64 + 2, 8))
        ref = _ref(key, x, p, theta, bits, stream0)
        got = _decode(limbs)
        for i in range(len(x)):
            if rb[i] < 0:
                undone += 1
                assert not np.any(limbs[i])
            else:
                done += 1
                assert got[i] == ref[i]
    assert done > 100 and undone > 100

    def small_core(x, num, p_exp, theta, bits, key, stream0, threads, width, max_proposals=0):
        # the harness has no proposal cap: these rows need a handful of proposals, far below any cap
        return _hsample(L, x, num / 2.0**p_exp, theta, bits, key, stream0, threads, min(width, 8))

    monkeypatch.setattr(core.samplers, "lattice_privunit_sample", small_core)
    x = np.array([[1.0, -(2.0**-1074), 0.0], [0.6, 0.8, -0.0], [-0.0, 2.0**-1022, -1.0], [0.0, 1.0, 0.0]])
    for bits, theta in ((96, 0.1 + 2.0**-40), (2, 5e-324), (200, -0.2)):
        r = LatticePrivUnit(0.7, theta, 3, scale_bits=bits)
        assert r.sample(x, rng=bits).tolist() == _ref(core_key(bits), x, 0.7, theta, bits)
        assert np.any(_hsample(L, x, 0.7, theta, bits, core_key(bits), LATTICE_STREAM, 1, 8)[1] < 0)


# ---------------------------------------------------------------- (d) the law, independently of the reference
def _exact_law(x, theta, p, bits, tail=12):
    """p nu(z) / nu(A_x) inside, (1 - p) nu(z) / nu(A_x^c) outside, on the box |z_i| <= tail sigma (50 digits)."""
    sigma = 2**bits
    xf, th = [Fraction(float(v)) for v in x], Fraction(float(theta))
    nx2 = xf[0] ** 2 + xf[1] ** 2
    with mpmath.workdps(50):
        w = {k: mpmath.exp(-mpmath.mpf(k * k) / (2 * sigma * sigma)) for k in range(-tail * sigma, tail * sigma + 1)}
        inside, outside = {}, {}
        for a in w:
            for b in w:
                dot, r2 = a * xf[0] + b * xf[1], th * th * (a * a + b * b) * nx2  # <z,x> >= th |z||x|, exactly
                inn = (dot >= 0 and dot * dot >= r2) if th >= 0 else (dot >= 0 or dot * dot <= r2)
                (inside if inn else outside)[(a, b)] = w[a] * w[b]
        mi, mo = mpmath.fsum(inside.values()), mpmath.fsum(outside.values())
        law = {z: float(p * m / mi) for z, m in inside.items()}
        law.update({z: float((1 - p) * m / mo) for z, m in outside.items()})
    return law


def _chi2_pvalue(counts, law, n):
    stat, df, rest_e, rest_o = 0.0, 0, 0.0, n - sum(counts.get(z, 0) for z in law)
    for z, q in law.items():
        e = q * n
        if e >= 5:
            stat += (counts.get(z, 0) - e) ** 2 / e
            df += 1
        else:
            rest_e, rest_o = rest_e + e, rest_o + counts.get(z, 0)
    stat += (rest_o - rest_e) ** 2 / rest_e
    return chi2.sf(stat, df)


@pytest.mark.parametrize("x,theta,p,bits,other", [
    ((0.6, 0.8), 0.3, 0.7, 1, (0.8, 0.6)),
    ((0.28, -0.96), 0.55, 0.9, 2, (0.96, -0.28)),
    ((1.0, -0.0), -0.0, 0.25, 1, (0.0, 1.0)),
])
def test_message_law_against_exact_enumeration(x, theta, p, bits, other):
    n = 200_000
    z = LatticePrivUnit(p, theta, 2, scale_bits=bits).sample(np.tile(x, (n, 1)), rng=bits + 11, threads=1)
    u, c = np.unique(np.array(z, dtype=np.int64), axis=0, return_counts=True)
    counts = {(int(a), int(b)): int(k) for (a, b), k in zip(u, c)}
    assert _chi2_pvalue(counts, _exact_law(x, theta, p, bits), n) > 1e-4
    assert _chi2_pvalue(counts, _exact_law(other, theta, p, bits), n) < 1e-12  # the test has power


# ---------------------------------------------------------------- (e) release hygiene
def test_rng_none_uses_fresh_os_entropy_and_keeps_no_key(monkeypatch):
    import sharpdp._rng as rng_mod

    r = LatticePrivUnit(0.7, 0.2, 3)
    x = np.tile([0.0, 0.6, 0.8], (4, 1))
    before = dict(vars(r))
    assert r.sample(x).tolist() != r.sample(x).tolist()  # two releases, two keys
    calls = []
    secret = bytes(range(100, 132))
    monkeypatch.setattr(rng_mod.os, "urandom", lambda k: calls.append(k) or secret)
    z = r.sample(x)
    assert calls == [32] and z.tolist() == _ref(secret, x, 0.7, 0.2, 96)
    assert vars(r).keys() == before.keys() and all(vars(r)[k] is before[k] or np.all(vars(r)[k] == before[k])
                                                     for k in before)  # nothing of the key kept on the object
    # a seeded Generator is research mode: the key is four of its words, and the generator advances by four
    g, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert r.sample(x, rng=g).tolist() == _ref(g2.integers(0, 2**64, size=4, dtype=np.uint64).astype("<u8").tobytes(),
                                               x, 0.7, 0.2, 96)
    assert g.integers(0, 2**64, dtype=np.uint64) == g2.integers(0, 2**64, dtype=np.uint64)


def test_lattice_streams_are_chacha20():
    cryptography = pytest.importorskip("cryptography.hazmat.primitives.ciphers")
    from cryptography.hazmat.primitives.ciphers import algorithms

    key = os.urandom(32)
    for i in (0, 1, 2**40 + 3):
        stream = LATTICE_STREAM + i
        nonce = (0).to_bytes(8, "little") + stream.to_bytes(8, "little")
        ks = cryptography.Cipher(algorithms.ChaCha20(key, nonce), mode=None).encryptor().update(bytes(8 * 40))
        assert core.samplers.keystream_words(key, stream, 40).astype("<u8").tobytes() == ks
