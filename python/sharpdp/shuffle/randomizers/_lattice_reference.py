"""Pure-Python reference sampler of LatticePrivUnit (docs/sampling.md §10.6).

The algorithm the proof of docs/sampling.md §10.6 is about, on Python integers: exact uniform bits and
Bernoulli coins from one ChaCha20 stream (64-bit words, most significant bits first), Canonne, Kamath and
Steinke's discrete Gaussian (*The Discrete Gaussian for Differential Privacy*, Algorithms 1-3, proposal scale
t = sigma), and the exact cone test. The compiled kernel ``sharpdp._core.samplers.lattice_privunit_sample``
implements the same steps with the same use of the words (tests/test_privunit_lattice_core.py checks bit
identity); :class:`~sharpdp.shuffle.randomizers.privunit_lattice.LatticePrivUnit` calls this module for the
rare rows the kernel leaves undone.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ExactBits", "ExactCone", "reference_message"]


class ExactBits:
    """Exact uniform integers and coins from one ChaCha20 stream (64-bit words, most significant bits first).

    ``bits`` keeps the unused low bits of its last word (fewer than 64) for the next call; ``bernoulli``
    consumes whole fresh words (docs/sampling.md §10.6, steps E1-E5).

    Parameters
    ----------
    key : bytes
        32-byte ChaCha20 key (``sharpdp._rng.core_key``).
    stream : int
        Stream number in [0, 2^64) (message i of LatticePrivUnit: LATTICE_STREAM + i).
    """

    def __init__(self, key: bytes, stream: int) -> None:
        from sharpdp._core_loader import core

        self._ks = core.samplers.keystream_words
        self.key, self.stream = key, stream
        self.words: list[int] = []
        self.used = 0
        self.acc, self.nbits = 0, 0

    def _word(self) -> int:
        if self.used == len(self.words):  # the core returns a stream's first `count` words: extend
            count = max(64, 2 * len(self.words))
            self.words.extend(self._ks(self.key, self.stream, count)[len(self.words):].tolist())
        w = self.words[self.used]
        self.used += 1
        return w

    def bits(self, k: int) -> int:
        """k fresh uniform bits as an integer in [0, 2^k)."""
        while self.nbits < k:
            self.acc = (self.acc << 64) | self._word()
            self.nbits += 64
        self.nbits -= k
        r = self.acc >> self.nbits
        self.acc &= (1 << self.nbits) - 1
        return r

    def below(self, n: int) -> int:
        """Uniform on {0, ..., n - 1} (n >= 1) by rejection: exact."""
        k = (n - 1).bit_length()
        while True:
            r = self.bits(k)
            if r < n:
                return r

    def bernoulli(self, num: int, den: int) -> bool:
        """Bernoulli(num / den), 0 <= num, 1 <= den: [U < num / den] for a uniform real U in [0, 1), exact.

        U's base-2^64 digits (fresh words) are compared lazily with those of num / den (long division):
        the first differing digit decides; if num / den's expansion ends with all digits equal, U >= num / den.
        """
        if num >= den:
            return True
        r = num
        while True:
            c, r = divmod(r << 64, den)
            w = self._word()  # a whole fresh word (each word is used once, by bits() or here)
            if w != c:
                return w < c
            if r == 0:
                return False

    def bernoulli_exp(self, num: int, den: int) -> bool:
        """Bernoulli(exp(-num / den)), num >= 0, den >= 1 (CKS Algorithm 1 and its extension to gamma > 1)."""
        while num > den:  # exp(-gamma) = exp(-1)^floor(gamma) exp(-(gamma - floor(gamma)))
            if not self._bernoulli_exp_le1(1, 1):
                return False
            num -= den
        return self._bernoulli_exp_le1(num, den)

    def _bernoulli_exp_le1(self, num: int, den: int) -> bool:
        k = 1  # K = first k with A_k = 0, A_k ~ Bernoulli(gamma / k); P(K odd) = exp(-gamma)
        while self.bernoulli(num, den * k):
            k += 1
        return k % 2 == 1

    def discrete_laplace(self, t: int) -> int:
        """P(Y = y) proportional to exp(-|y| / t), integer t >= 1 (CKS Algorithm 2 with s = 1)."""
        while True:
            u = self.below(t)
            if not self.bernoulli_exp(u, t):
                continue
            v = 0
            while self.bernoulli_exp(1, 1):
                v += 1
            x = u + t * v
            neg = self.bits(1)
            if neg and x == 0:
                continue
            return -x if neg else x

    def discrete_gaussian(self, sigma: int) -> int:
        """P(Y = y) proportional to exp(-y^2 / (2 sigma^2)), integer sigma >= 1 (CKS Algorithm 3 with t = sigma).

        A discrete-Laplace proposal of scale t, accepted with probability exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2)),
        gives the exact law for every t > 0 (target / proposal = exp(sigma^2 / (2 t^2)) times that probability);
        t = sigma (a power of two here) makes the proposal's uniform part a plain draw of bits.
        """
        while True:
            y = self.discrete_laplace(sigma)
            a = abs(y) - sigma
            if self.bernoulli_exp(a * a, 2 * sigma * sigma):
                return y


class ExactCone:
    """Exact membership in K_x = {z : <z, x> >= theta |z| |x|} for an integer vector z.

    Parameters
    ----------
    x_row : numpy.ndarray of float64, shape (dim,)
        A nonzero finite vector, read as its exact dyadic values (only its direction matters).
    theta : float
        Cap threshold in (-1, 1), read as its exact dyadic value (docs/sampling.md §10.6, step E6).
    """

    def __init__(self, x_row: np.ndarray, theta: float) -> None:
        ratios = [float(v).as_integer_ratio() for v in x_row]
        den = max(r[1] for r in ratios)  # powers of two: X = den x is an exact integer vector
        self.x = [n * (den // dd) for n, dd in ratios]
        a, b = float(theta).as_integer_ratio()
        self.nonneg = a >= 0
        self.a2, self.b2 = a * a, b * b
        self.xx = sum(v * v for v in self.x)

    def contains(self, z: list[int]) -> bool:
        s = sum(zi * xi for zi, xi in zip(z, self.x))
        far = s * s * self.b2 >= self.a2 * sum(zi * zi for zi in z) * self.xx  # s^2 >= theta^2 |z|^2 |X|^2
        if self.nonneg:
            return s >= 0 and far
        near = s * s * self.b2 <= self.a2 * sum(zi * zi for zi in z) * self.xx
        return s >= 0 or near


def reference_message(key: bytes, stream: int, cone: ExactCone, p: float, sigma: int, dim: int,
                      max_proposals: int = 0) -> list[int] | None:
    """One LatticePrivUnit message from ChaCha20 stream ``stream`` of ``key`` (the reference algorithm).

    An exact coin B ~ Bernoulli(p) (p's dyadic value), then vectors of ``dim`` independent discrete Gaussians
    N_Z(0, sigma^2) until ``cone.contains(z) == B``.

    Parameters
    ----------
    key : bytes
        32-byte ChaCha20 key.
    stream : int
        Stream number in [0, 2^64).
    cone : ExactCone
        The cone K_x of the user's input x.
    p : float
        Cap probability in (0, 1).
    sigma : int
        Discrete-Gaussian scale, a power of two >= 1.
    dim : int
        Dimension >= 1.
    max_proposals : int, optional
        Give up after this many proposed vectors (0, the default: never; the exact algorithm).

    Returns
    -------
    list of int or None
        The message z, ``dim`` Python integers; None when ``max_proposals`` vectors were proposed in vain.
    """
    rnd = ExactBits(key, stream)
    num, den = float(p).as_integer_ratio()
    inside = rnd.bernoulli(num, den)
    tries = 0
    while max_proposals == 0 or tries < max_proposals:
        tries += 1
        z = [rnd.discrete_gaussian(sigma) for _ in range(dim)]
        if cone.contains(z) == inside:
            return z
    return None
